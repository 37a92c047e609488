"""What a campaign's generator emitted, against the PTX instruction inventory.

Every statement carries a key: its instruction's spelling (`add.rn.ftz.sat.f32`,
`setp.lt.and.u32`), plus a few of the generator's own tags (`.contended`, `.generic_local`,
`mov.special.tid`, `call.uni`). A key is read as (opcode, modifiers, types) and matched to
the inventory's instruction forms: a form is covered when some key has its opcode, one
spelling of each of its required modifier groups, types its type slots accept, and no
modifier the form does not know.

The inventory is `frontend/instructions.py`'s form table until the PTX ISA inventory
(`ptx2sass.frontend.inventory`, issue 15) lands; `inventory_forms()` prefers that one.
"""
from __future__ import annotations

import itertools
from collections import Counter

# the generator's own tags in keys: not PTX modifiers
PSEUDO = {"contended", "generic_local", "generic_shared", "generic_global", "counter", "pack", "unpack",
          "dsel", "p", "1"}
REG_BUCKETS = ((16, "<=16"), (32, "17-32"), (64, "33-64"), (128, "65-128"), (255, "129-255"))


def parse_key(key: str) -> tuple[str, tuple, tuple]:
    """(opcode, modifiers, types) of a key; types in order."""
    from ptx2sass.frontend.instructions import TYPE_MODIFIERS
    parts = key.split(".")
    opcode = parts[0]
    if opcode == "mov" and len(parts) > 1 and parts[1] == "special":
        return "mov", (f"%{parts[2]}",), ()
    mods, types = [], []
    for p in parts[1:]:
        if p in PSEUDO:
            continue
        tok = "." + p
        (types if tok in TYPE_MODIFIERS else mods).append(tok)
    return opcode, tuple(mods), tuple(types)


def inventory_forms(draw: bool = False) -> tuple[str, list]:
    """(source name, forms): the ISA inventory when present, else the frontend's table.
    `draw`: only the forms the generator may draw (`forms.drawable`)."""
    from ptx2sass.fuzz.forms import drawable, isa_inventory
    inv = isa_inventory()                 # issue 15's data + loader, when merged
    if inv is not None:
        by_spelling: dict[str, dict] = {}
        for f in inv.forms_for(89, (8, 5)):
            if not getattr(f, "arch_specific", False) and (not draw or drawable(f)):
                by_spelling.setdefault(f.spelling, {"opcode": f.opcode, "spelling": f.spelling,
                                                    "chapter": f.chapter, "types": f.types})
        return "PTX ISA inventory, sm_89 forms", list(by_spelling.values())
    from ptx2sass.frontend.instructions import FORMS
    out = []
    for opcode, forms in FORMS.items():
        for f in forms:
            required = [sorted(g) for g, req in f.groups if req]
            optional = set().union(*[g for g, req in f.groups if not req]) if f.groups else set()
            for choice in itertools.product(*required, *[sorted(s) for s in f.type_slots]):
                req, types = choice[:len(required)], choice[len(required):]
                out.append({"opcode": opcode, "required": tuple(req), "types": tuple(types),
                            "optional": frozenset(optional) | frozenset(req)})
    return "frontend/instructions.py form table (interim)", out


def _form_id(f: dict) -> str:
    if "spelling" in f:
        return f["spelling"]
    return ".".join([f["opcode"], *[m.lstrip(".") for m in f["required"]], *[t.lstrip(".") for t in f["types"]]])


def match(key: str, forms_by_opcode: dict) -> list[str]:
    opcode, mods, types = parse_key(key)
    hits = []
    for f in forms_by_opcode.get(opcode, ()):
        if "spelling" in f:                 # an exact spelling (the ISA inventory's forms)
            if f["spelling"] == ".".join([opcode, *[m.lstrip(".") for m in mods + types]]) or \
                    f["spelling"] == key:
                hits.append(f["spelling"])
            continue
        if f["types"] != types[:len(f["types"])] or len(types) != len(f["types"]):
            continue
        if not set(f["required"]) <= set(mods):
            continue
        if not set(mods) <= f["optional"]:
            continue
        hits.append(_form_id(f))
    return hits


def inventory_coverage(keys: Counter, valid_only: bool = False) -> dict:
    """Covered inventory forms. `valid_only`: leave out the forms ptxas refuses for sm_89
    (asked once per form, for the opcodes forms.py can write; slow the first time)."""
    source, forms = inventory_forms()
    if valid_only and not any("spelling" in f for f in forms):
        from ptx2sass.fuzz.forms import instance_valid
        forms = [f for f in forms if instance_valid(f) is not False]
        source += ", forms ptxas accepts for sm_89"
    by_opcode: dict[str, list] = {}
    for f in forms:
        by_opcode.setdefault(f["opcode"], []).append(f)
    all_ids = {_form_id(f) for f in forms}
    covered: set[str] = set()
    unmatched = Counter()
    for key, n in keys.items():
        hits = match(key, by_opcode)
        covered.update(hits)
        if not hits:
            unmatched[key] += n
    per_opcode = {}
    for op, fs in sorted(by_opcode.items()):
        ids = {_form_id(f) for f in fs}
        per_opcode[op] = [len(ids & covered), len(ids)]
    per_chapter: dict[str, list] = {}
    for f in forms:
        if "chapter" in f:
            row = per_chapter.setdefault(f["chapter"], [0, 0])
            row[1] += 1
            row[0] += _form_id(f) in covered
    return {"source": source, "covered": len(covered), "total": len(all_ids),
            "percent": round(100 * len(covered) / max(1, len(all_ids)), 1),
            "per_opcode": per_opcode, "per_chapter": per_chapter, "keys_outside_inventory": dict(unmatched.most_common(40)),
            "uncovered_sample": sorted(all_ids - covered)[:60]}


def coverage_summary(results: list[dict], valid_only: bool = False) -> dict:
    keys, spaces, shapes, launches, pressure, regs, features = (Counter() for _ in range(7))
    mods, types, opcodes = Counter(), Counter(), Counter()
    for r in results:
        cov = r.get("coverage")
        if not cov:
            continue
        for k in cov.get("keys", ()):
            keys[k] += 1
            op, m, t = parse_key(k)
            opcodes[op] += 1
            mods.update(m)
            types.update(t)
        spaces.update(cov.get("spaces", ()))
        shapes.update(cov.get("shapes", ()))
        features.update(cov.get("features", ()))
        g, b = cov.get("launch", [[1, 1, 1], [1, 1, 1]])
        launches[f"{'x'.join(map(str, g))} / {'x'.join(map(str, b))}"] += 1
        pressure[cov.get("pressure", "?")] += 1
        nreg = (r.get("theirs") or {}).get("registers")
        if nreg:
            regs[next(label for bound, label in REG_BUCKETS if nreg <= bound)] += 1
    out = {"keys": dict(keys.most_common()), "opcodes": dict(opcodes.most_common()),
           "modifiers": dict(mods.most_common()), "types": dict(types.most_common()),
           "spaces": dict(spaces.most_common()), "shapes": dict(shapes.most_common()),
           "launches": dict(launches.most_common()), "pressure": dict(pressure.most_common()),
           "ptxas_registers": dict(regs.most_common()), "features": dict(features.most_common())}
    if keys:
        out["inventory"] = inventory_coverage(keys, valid_only)
    return out


# ------------------------------------------------------------------------------ the figure

def _bars(title: str, items: list[tuple[str, float, float]], y: int, width: int = 900) -> tuple[list[str], int]:
    """Horizontal bars: (label, value, total) -> covered share of total (or counts when total 0)."""
    out = [f'<text x="10" y="{y + 16}" font-size="15" font-weight="bold">{_esc(title)}</text>']
    y += 26
    peak = max((v for _, v, t in items if not t), default=1) or 1
    for label, value, total in items:
        frac = value / total if total else value / peak
        w = int((width - 320) * frac)
        out.append(f'<text x="10" y="{y + 11}" font-size="11">{_esc(label[:38])}</text>')
        if total:
            out.append(f'<rect x="250" y="{y}" width="{width - 320}" height="12" fill="#ddd"/>')
        out.append(f'<rect x="250" y="{y}" width="{w}" height="12" fill="#3a7"/>')
        text = f"{int(value)}/{int(total)}" if total else f"{int(value)}"
        out.append(f'<text x="{width - 65}" y="{y + 11}" font-size="11">{text}</text>')
        y += 15
    return out, y + 10


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def coverage_svg(cov: dict) -> str:
    """A picture of the coverage: inventory forms per opcode, then what else was emitted."""
    parts: list[str] = []
    y = 10
    inv = cov.get("inventory")
    if inv:
        head = f"Inventory forms covered: {inv['covered']}/{inv['total']} ({inv['percent']}%), {inv['source']}"
        if inv.get("per_chapter"):
            p, y = _bars(head + ", by chapter", [(ch, c, t) for ch, (c, t) in inv["per_chapter"].items()], y)
            parts += p
            gaps = sorted(inv["per_opcode"].items(), key=lambda kv: kv[1][0] - kv[1][1])[:30]
            p, y = _bars("Opcodes with the most forms not emitted", [(op, c, t) for op, (c, t) in gaps], y)
        else:
            items = [(op, c, t) for op, (c, t) in sorted(inv["per_opcode"].items(), key=lambda kv: -kv[1][1])]
            p, y = _bars(head, items, y)
        parts += p
    for name, key in (("State spaces (programs)", "spaces"), ("Control-flow shapes (programs)", "shapes"),
                      ("Launch shapes, grid / block (programs)", "launches"),
                      ("Register pressure, generator level (programs)", "pressure"),
                      ("Registers ptxas used (programs)", "ptxas_registers"),
                      ("Types (statements)", "types"), ("Modifiers (statements)", "modifiers")):
        data = cov.get(key, {})
        if data:
            p, y = _bars(name, [(k, v, 0) for k, v in list(data.items())[:60]], y)
            parts += p
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="900" height="{y + 10}" '
            f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(parts) + "\n</svg>\n")
