"""Make tests/corpus/invalid/: mutated copies of real corpus PTX, each with ptxas's verdict.

Every variant is a real file with one deliberate defect (a deleted token, a wrong type, an
unknown modifier, an undeclared name, a truncation, binary garbage, a huge literal, deep
nesting, ...). The pinned ptxas is run on each and its verdict, error lines and messages are
recorded in manifest.json; tests compare the frontend against that record. Some mutations
happen to leave valid PTX (ptxas accepts them): they stay, as checks that we accept too.

    python -m tools.make_invalid_corpus [--count 240] [--seed 5]

The mutation functions are also used by the frontend's fuzz test.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "corpus" / "invalid"

_TOKEN = re.compile(r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[%$.\w:]+|\S")
_INSTRUCTION_LINE = re.compile(r"^\s*(@!?%?\w+\s+)?[a-z][\w.:]*\s.*;\s*$")
_REG_DECL = re.compile(r"^\s*\.reg\s+(\.v\d\s+)?\.(\w+)\s", re.M)
_TYPES = ["u32", "s32", "b32", "f32", "u64", "b64", "f64", "u16", "f16", "pred", "b8"]
_OPERAND_NAME = re.compile(r"(?<=[ ,\[{(])(%?[A-Za-z_$][\w$]*)(?=[\],;}+)\s])")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _instruction_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if _INSTRUCTION_LINE.match(line)]


def delete_token(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    tokens = list(_TOKEN.finditer(lines[idx]))
    if tokens:
        m = rng.choice(tokens)
        lines[idx] = lines[idx][:m.start()] + lines[idx][m.end():]
    return "\n".join(lines)


def wrong_type(text: str, rng: random.Random) -> str:
    """Change one register declaration's type or one instruction's type suffix."""
    decls = list(_REG_DECL.finditer(text))
    if decls and rng.random() < 0.5:
        m = rng.choice(decls)
        new = rng.choice([t for t in _TYPES if t != m.group(2)])
        return text[:m.start(2)] + new + text[m.end(2):]
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    found = list(re.finditer(r"\.(u|s|b|f)(8|16|32|64)\b", lines[idx]))
    if found:
        m = rng.choice(found)
        lines[idx] = lines[idx][:m.start()] + "." + rng.choice(_TYPES) + lines[idx][m.end():]
    return "\n".join(lines)


def unknown_modifier(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    m = re.search(r"([a-z][\w]*)((\.[\w:]+)*)", lines[idx].split("@")[-1])
    if m:
        start = lines[idx].index(m.group(0))
        mod = rng.choice([".bogus", ".rn", ".ftz", ".sat", ".wide", ".v4", ".shared", ".cta"])
        cut = start + len(m.group(1))
        lines[idx] = lines[idx][:cut] + mod + lines[idx][cut:]
    return "\n".join(lines)


def undeclared_name(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    names = list(_OPERAND_NAME.finditer(lines[idx]))
    if names:
        m = rng.choice(names)
        lines[idx] = lines[idx][:m.start()] + m.group(1) + "_undeclared" + lines[idx][m.end():]
    return "\n".join(lines)


def duplicate_declaration(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    decls = [i for i, line in enumerate(lines) if line.strip().startswith((".reg", ".shared",
                                                                            ".local"))]
    if decls:
        i = rng.choice(decls)
        lines.insert(i + 1, lines[i])
    return "\n".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) // 4, max(len(text) // 4 + 1, len(text) - 1))]


def binary_garbage(text: str, rng: random.Random) -> str:
    pos = rng.randrange(len(text))
    junk = "".join(chr(rng.randrange(1, 256)) for _ in range(rng.randrange(1, 12)))
    return text[:pos] + junk + text[pos:]


def huge_literal(text: str, rng: random.Random) -> str:
    found = list(re.finditer(r"(?<=[ ,+\[-])\d+(?=[;,\]\s])", text))
    if not found:
        return text
    m = rng.choice(found)
    big = rng.choice(["99999999999999999999999", "18446744073709551616",
                      "0x1234567890abcdef1234", "4294967296", "-99999999999999999999999"])
    return text[:m.start()] + big + text[m.end():]


def deep_nesting(text: str, rng: random.Random) -> str:
    """Wrap the first function body's contents in many nested scopes (ptxas's parser gives
    up past ~1665 levels)."""
    depth = rng.choice([50, 500, 1700, 3000])
    start = text.find("{", text.find(".entry"))
    end = text.rfind("}")
    if start < 0 or end <= start:
        return text
    return (text[:start + 1] + "\n" + "{\n" * depth + text[start + 1:end] + "}\n" * depth
            + text[end:])


def drop_semicolon(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    lines[idx] = lines[idx].replace(";", "", 1)
    return "\n".join(lines)


def remove_label(text: str, rng: random.Random) -> str:
    labels = list(re.finditer(r"^\s*([$\w]+):", text, re.M))
    if not labels:
        return undeclared_name(text, rng)
    m = rng.choice(labels)
    return text[:m.start()] + "\n" + text[m.end():]


def swap_operands(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    idx = rng.choice(_instruction_lines(lines) or [0])
    line = lines[idx]
    head, sep, ops = line.partition("\t") if "\t" in line.strip() else line.partition(" ")
    parts = ops.rstrip().rstrip(";").split(",")
    if len(parts) >= 2:
        i, j = rng.sample(range(len(parts)), 2)
        parts[i], parts[j] = parts[j], parts[i]
        lines[idx] = head + sep + ",".join(parts) + ";"
    return "\n".join(lines)


def drop_call_argument(text: str, rng: random.Random) -> str:
    """Remove one argument from a call's argument list (or a whole call's results)."""
    calls = list(re.finditer(r"call(?:\.uni)?[^;]*?\(([^()]*)\)\s*;", text, re.S))
    if not calls:
        return misspell_directive(text, rng)
    m = rng.choice(calls)
    args = [a for a in m.group(1).split(",")]
    if len(args) > 1:
        del args[rng.randrange(len(args))]
    else:
        args = []
    return text[:m.start(1)] + ",".join(args) + text[m.end(1):]


def duplicate_label(text: str, rng: random.Random) -> str:
    labels = list(re.finditer(r"^\s*([$\w]+):[^\n]*\n", text, re.M))
    if not labels:
        return misspell_directive(text, rng)
    m = rng.choice(labels)
    return text[:m.end()] + m.group(0) + text[m.end():]


def misspell_directive(text: str, rng: random.Random) -> str:
    found = list(re.finditer(r"\.(reg|param|shared|global|entry|func|align|target|version|"
                             r"address_size|maxntid|visible)\b", text))
    if not found:
        return text
    m = rng.choice(found)
    return text[:m.end()] + rng.choice(["x", "_", "s", "0"]) + text[m.end():]


def bad_directive_value(text: str, rng: random.Random) -> str:
    """A kernel-level directive with a value ptxas refuses (0, 4 dimensions, conflicts)."""
    m = re.search(r"\.entry\s+[\w$]+\s*\([^)]*\)|\.entry\s+[\w$]+", text)
    if not m:
        return text
    extra = rng.choice(["\n.maxntid 0", "\n.maxntid 1, 2, 3, 4", "\n.maxntid 128\n.reqntid 64",
                        "\n.minnctapersm 0", "\n.maxnreg 0", "\n.reqntid 32, 0"])
    return text[:m.end()] + extra + text[m.end():]


MUTATIONS = {f.__name__: f for f in (
    delete_token, wrong_type, unknown_modifier, undeclared_name, duplicate_declaration,
    truncate, binary_garbage, huge_literal, deep_nesting, drop_semicolon, remove_label,
    swap_operands, drop_call_argument, duplicate_label, misspell_directive,
    bad_directive_value)}


def seed_files() -> list[Path]:
    """Small real kernels that ptxas accepts at sm_89 (zluda, tinygrad)."""
    sys.path.insert(0, str(REPO))
    from tools.corpora import ptx_files
    picked = []
    for corpus in ("zluda", "tinygrad", "cuda"):
        for path in ptx_files(corpus):
            text = path.read_text()
            if len(text) < 6000 and ".target sm_9" not in text and ".target sm_1" not in text:
                picked.append(path)
    return picked


_PTXAS_LINE = re.compile(r"^ptxas (?:(?P<file>.+?), line (?P<line>\d+); )?"
                         r"(?P<sev>error|fatal|warning)\s*: (?P<msg>.*)$")


def ptxas_record(data: bytes, name: str) -> dict:
    from ptx2sass import oracle
    run = oracle.ptxas(data, "sm_89", name=name)
    diags = []
    for line in run.stderr.splitlines():
        m = _PTXAS_LINE.match(line.strip())
        if m and "Ptx assembly aborted" not in m.group("msg"):
            diags.append({"line": int(m.group("line")) if m.group("line") else None,
                          "severity": m.group("sev"), "message": m.group("msg")})
    return {"ptxas_ok": run.ok, "ptxas_diagnostics": diags}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    seeds = seed_files()
    if not seeds:
        print("no seed corpus found", file=sys.stderr)
        return 1
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    names = sorted(MUTATIONS)
    entries = []
    seen = set()
    i = 0
    while len(entries) < args.count and i < args.count * 5:
        mutation = names[i % len(names)]
        i += 1
        seed = rng.choice(seeds)
        original = seed.read_text()
        mutated = MUTATIONS[mutation](original, rng)
        if mutated == original or mutated in seen:
            continue
        seen.add(mutated)
        data = mutated.encode("latin-1", errors="replace")
        fname = f"{len(entries):03d}_{mutation}.ptx"
        (args.out / fname).write_bytes(data)
        entry = {"file": fname, "mutation": mutation,
                 "seed": str(seed.relative_to(seed.parents[1]))}
        entry.update(ptxas_record(data, fname))
        entries.append(entry)
    manifest = {"generator": "python -m tools.make_invalid_corpus "
                             f"--count {args.count} --seed {args.seed}",
                "arch": "sm_89", "encoding": "latin-1",
                "note": "ptxas_* fields are the pinned ptxas's verdict on each file",
                "variants": entries}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    rejected = sum(not e["ptxas_ok"] for e in entries)
    print(f"{len(entries)} variants ({rejected} rejected by ptxas) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
