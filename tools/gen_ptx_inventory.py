"""Expand the PTX ISA spec (`frontend/ptx_isa.spec`) into the inventory data file
(`frontend/ptx_inventory.json`) that `ptx2sass.frontend.inventory` loads.

    py -m tools.gen_ptx_inventory            # rewrite the JSON
    py -m tools.gen_ptx_inventory --check    # exit 1 when the committed JSON is stale

The spec is a compact, hand-written description in our own notation (its header explains
it); the JSON is derived, one concrete spelling per form, so tools can iterate forms without
knowing the notation. tests/test_inventory.py checks that the committed JSON equals this
generator's output.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "frontend" / "ptx_isa.spec"
OUT = ROOT / "frontend" / "ptx_inventory.json"

# Every fundamental type spelling: a modifier that is one of these is a type of the form.
TYPES = frozenset("""
    .pred .b8 .b16 .b32 .b64 .b128 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .f16 .f16x2 .f32 .f64
    .bf16 .bf16x2 .tf32 .e4m3 .e5m2 .e4m3x2 .e5m2x2 .e2m1x2 .e2m3x2 .e3m2x2 .ue8m0x2 .u16x2 .s16x2
    .f32x2 .u4 .s4 .b1 .e2m1 .e2m3 .e3m2 .ue8m0 .ue4m3
""".split())
SPACES = frozenset("""
    .global .shared .shared::cta .shared::cluster .local .const .param .param::entry
    .param::func .tex
""".split())
CHAPTERS = ("integer", "float", "half", "comparison", "logic", "data movement",
            "texture/surface", "control flow", "parallel sync", "warp-level matrix", "video",
            "misc")
OPERAND_KINDS = frozenset("d a r i p q dp pp m l L V W v g n t T S U M f x".split())
_TYPE_WIDTH = {".b8": 8, ".u8": 8, ".s8": 8, ".b16": 16, ".u16": 16, ".s16": 16, ".f16": 16,
               ".bf16": 16, ".b32": 32, ".u32": 32, ".s32": 32, ".f32": 32, ".b64": 64,
               ".u64": 64, ".s64": 64, ".f64": 64}


class SpecError(ValueError):
    pass


# ---------------------------------------------------------------- templates
# A template is a sequence of literal modifier text and groups:
#   {A|B|C}   exactly one alternative (expanded: every alternative)
#   [A|B]     none or one alternative (expanded: absent and every alternative)
#   ~[A|B]    an orthogonal option: each alternative appears in one form only (with every
#             other orthogonal option absent), attached round-robin to the base forms, so
#             independent options add forms instead of multiplying them
#   ~{A|B}    an orthogonal choice: the base forms take A; B.. appear once each, likewise
# Alternatives are templates themselves (nesting allowed); `@name` inserts a macro.

def _parse(text: str, pos: int = 0, stop: str = "") -> tuple[list, int]:
    items: list = []
    lit = []
    while pos < len(text):
        ch = text[pos]
        if ch in stop:
            break
        if ch in "{[" or text.startswith("~[", pos) or text.startswith("~{", pos):
            if lit:
                items.append("".join(lit))
                lit = []
            ortho = ch == "~"
            if ortho:
                pos += 1
            opener = text[pos]
            close = "}" if opener == "{" else "]"
            alts = []
            pos += 1
            while True:
                alt, pos = _parse(text, pos, "|" + close)
                alts.append(alt)
                if pos >= len(text):
                    raise SpecError(f"unclosed group in {text!r}")
                if text[pos] == close:
                    pos += 1
                    break
                pos += 1     # '|'
            kind = ("one", "opt")[opener == "["]
            if ortho:
                kind = ("ortho1", "ortho")[opener == "["]
            items.append((kind, alts))
            continue
        lit.append(ch)
        pos += 1
    if lit:
        items.append("".join(lit))
    return items, pos


def _expand(items: list, with_ortho: bool) -> list[str]:
    """Every spelling of `items` (orthogonal groups absent unless `with_ortho`)."""
    out = [""]
    for it in items:
        if isinstance(it, str):
            out = [o + it for o in out]
            continue
        kind, alts = it
        if kind == "ortho" and not with_ortho:
            continue
        choices = [s for alt in alts for s in _expand(alt, with_ortho)]
        if kind == "ortho1":
            choices = choices[:1]
        if kind == "opt":
            choices = [""] + choices
        out = [o + c for o in out for c in choices]
    return out


def _regex(items: list) -> str:
    out = []
    for it in items:
        if isinstance(it, str):
            out.append(re.escape(it))
            continue
        kind, alts = it
        body = "|".join(_regex(a) for a in alts)
        out.append(f"(?:{body})" + ("?" if kind in ("opt", "ortho") else ""))
    return "".join(out)


def template_regex(template: str) -> str:
    """A regular expression matching every spelling of a template (orthogonal groups taken
    in every combination, as PTX allows)."""
    items, _ = _parse(template)
    return _regex(items)


def expand_template(template: str) -> list[str]:
    """The spellings of one template: the base forms, then one form per orthogonal choice."""
    items, _ = _parse(template)
    base = _expand(items, False)
    ortho_idx = [k for k, it in enumerate(items)
                 if isinstance(it, tuple) and it[0] in ("ortho", "ortho1")]
    out = list(base)
    n = 0
    for k in ortho_idx:
        kind, alts = items[k]
        choices = [c for alt in alts for c in _expand(alt, False)]
        for choice in choices[1:] if kind == "ortho1" else choices:
            # this choice with the base form number n (round-robin over the base forms)
            fixed = [("one", [[choice]]) if j == k else it for j, it in enumerate(items)]
            spellings = _expand(fixed, False)
            out.append(spellings[n % len(spellings)])
            n += 1
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------- spec lines
def _tokens(spelling: str) -> list[str]:
    """`ld.global.L1::evict_last.u32` -> ['ld', '.global', '.L1::evict_last', '.u32']."""
    head, *rest = re.split(r"(?=\.)", spelling)
    return [head] + [r for r in rest if r]


def _resolve_type(ref: str, types: list[str]) -> str:
    if not ref.startswith("$"):
        return "." + ref if not ref.startswith(".") else ref
    if not types:
        raise SpecError(f"type reference {ref} in a form without types")
    if ref == "$":
        return types[-1]
    if ref == "$w":
        base = types[-1]
        return base[:2] + str(2 * _TYPE_WIDTH[base])
    if ref == "$h":
        base = types[-1]
        return base[:2] + str(_TYPE_WIDTH[base] // 2)
    return types[int(ref[1:]) - 1]


def _operands(text: str, types: list[str]) -> list[list]:
    out = []
    for tok in text.split():
        optional = tok.endswith("?")
        tok = tok.rstrip("?")
        kind, _, ty = tok.partition(":")
        count = None
        m = re.fullmatch(r"([A-Za-z]+)(\d+)", kind)
        if m and m.group(1) in ("v", "t", "S", "M", "c", "L"):
            kind, count = m.group(1), int(m.group(2))
        if kind not in OPERAND_KINDS:
            raise SpecError(f"unknown operand kind {kind!r}")
        if kind == "x":
            out.append(["x", ty, optional])
            continue
        resolved = _resolve_type(ty or "$", types) if (ty or types) else None
        if kind in ("p", "q", "pp"):
            resolved = ".pred"
        out.append([kind if count is None else f"{kind}{count}", resolved, optional])
    return out


def _version(text: str) -> list[int]:
    major, minor = text.split(".")
    return [int(major), int(minor)]


def parse_spec(text: str) -> list[dict]:
    macros: dict[str, str] = {}
    chapter = None
    forms: list[dict] = []
    patterns: list[dict] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        try:
            if line.startswith("chapter "):
                chapter = line.split(None, 1)[1].strip()
                if chapter not in CHAPTERS:
                    raise SpecError(f"unknown chapter {chapter!r}")
                continue
            m = re.fullmatch(r"@(\w+)\s*=\s*(.+)", line.strip())
            if m:
                macros[m.group(1)] = _substitute(m.group(2).strip(), macros)
                continue
            cols = [c.strip() for c in line.split(";")]
            if len(cols) != 3:
                raise SpecError("want `template ; operands ; ptx X.Y sm N [...]`")
            template, operands, req = cols
            template = _substitute(template.replace(" ", ""), macros)
            alts = []
            for alt in req.split(" or "):
                attrs = alt.split()
                info = dict(zip(attrs[::2], attrs[1::2]))
                if set(info) - {"ptx", "sm", "below_sm", "arch_specific"} or "ptx" not in info:
                    raise SpecError(f"bad requirements {req!r}")
                alts.append([_version(info["ptx"]), int(info.get("sm", "10"))])
            alts.sort(key=lambda a: (a[1], a[0]))
            patterns.append({"regex": template_regex(template), "requires": alts,
                             "below_sm": int(info["below_sm"]) if "below_sm" in info else None,
                             "arch_specific": info.get("arch_specific") == "yes",
                             "line": lineno})
            for spelling in expand_template(template):
                toks = _tokens(spelling)
                mods = toks[1:]
                types = [t for t in mods if t in TYPES]
                ops = _operands(operands, types)
                shape = ",".join(f"x:{o[1]}" if o[0] == "x" else o[0] for o in ops)
                forms.append({
                    "name": f"{spelling} {shape}".rstrip(),
                    "chapter": chapter,
                    "opcode": toks[0],
                    "spelling": spelling,
                    "modifiers": [t for t in mods if t not in TYPES],
                    "types": types,
                    "spaces": [t for t in mods if t in SPACES],
                    "operands": ops,
                    "ptx": alts[0][0],
                    "sm": alts[0][1],
                    "requires": alts,
                    "below_sm": int(info["below_sm"]) if "below_sm" in info else None,
                    "arch_specific": info.get("arch_specific") == "yes",
                    "line": lineno,
                })
        except (SpecError, KeyError, ValueError, IndexError) as e:
            raise SpecError(f"ptx_isa.spec, line {lineno}: {e}") from None
    return forms, patterns


def _substitute(text: str, macros: dict[str, str]) -> str:
    def repl(m):
        if m.group(1) not in macros:
            raise SpecError(f"unknown macro @{m.group(1)}")
        return macros[m.group(1)]
    return re.sub(r"@(\w+)", repl, text)


def generate(spec_text: str | None = None) -> str:
    """The inventory JSON text: one form per line, in spec order, duplicates removed (the
    first line that spells a form wins)."""
    forms, patterns = parse_spec(spec_text if spec_text is not None else SPEC.read_text())
    seen: dict[str, dict] = {}
    for f in forms:
        seen.setdefault(f["name"], f)
    lines = [json.dumps(f, separators=(",", ":")) for f in seen.values()]
    plines = [json.dumps(p, separators=(",", ":")) for p in patterns]
    return ('{"forms": [\n' + ",\n".join(lines) + '\n],\n"patterns": [\n'
            + ",\n".join(plines) + "\n]}\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare with the committed file")
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        if not OUT.is_file() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run `python -m tools.gen_ptx_inventory`")
            return 1
        return 0
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10)) - 2} forms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
