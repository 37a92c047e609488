"""Probe every operand kind in every source slot of every opcode a table knows, not only the
forms some corpus made ptxas write.

Why: the tables were seeded with ptxas's words for our corpora, so an opcode holds only the
operand kinds those programs happened to use (FFMA with a uniform-register c, I2FP from a
uniform register … were missing until a program outside the corpora showed them).

How: every form's base word is varied in the bits that choose a form — bits 9..11 (which
source is a register, an immediate, a constant `c[b][o]`, a uniform register, `c[b][UR]`)
crossed with bit 91, and every other bit of the form's match mask flipped alone — and the
variants are disassembled by nvdisasm in batches. Each variant nvdisasm accepts and the table
does not already read back is a seed for `tools.isa_probe.build_table`, which derives its
fields, groups (negation, |abs|, modifiers, every value enumerated) and reuse flags by the
ordinary bit flips. The result is written to the family's table (`--extend` semantics: the
forms already there are kept).

    py -m tools.isa_cross --arch sm_89                 # ampere.json, sm_89's nvdisasm
    py -m tools.isa_cross --arch sm_75 --dry-run       # count new forms, write nothing
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

KIND_BITS = (9, 10, 11)
UNIFORM_BIT = 91
OPCODE_BITS = frozenset(range(9))


def candidates(forms: list[dict]) -> list[int]:
    """Variants of every form's base word in its form-selecting bits, deduplicated, in a
    fixed order (so nvdisasm's cached answers are reused between runs)."""
    out: dict[int, None] = {}
    for f in forms:
        base = int(f["base"], 16)
        mask = int(f["mask"], 16)
        for kind in range(8):
            for u in (0, 1):
                w = base & ~(0b111 << 9) | kind << 9
                w = w & ~(1 << UNIFORM_BIT) | u << UNIFORM_BIT
                out.setdefault(w)
        for b in range(128):
            if mask >> b & 1 and b not in OPCODE_BITS and b not in KIND_BITS:
                out.setdefault(base ^ (1 << b))
    return list(out)


def new_seeds(forms: list[dict], arch: str, primary: str, opcodes: set[str] | None = None) -> dict[int, str]:
    """Variants nvdisasm reads that the table does not already read back as nvdisasm does."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.fields import parse_view
    from tools.isa_probe import _decodes, disassemble
    if opcodes:
        forms = [f for f in forms if f["opcode"] in opcodes]
    words = candidates(forms)
    texts = disassemble(words, arch)
    table = codec.Table("cross", [codec.Form.from_json(f) for f in forms], primary,
                        codec.arch_numbering(arch))
    seeds: dict[int, str] = {}
    for w, t in zip(words, texts):
        if t is None or "`(" in t:          # rejected, or a branch (targets need a listing)
            continue
        if "INVALID" in t or "???" in t:    # nvdisasm's marks of an illegal field value
            continue
        try:
            parse_view(t)
        except Exception:
            continue
        if not _decodes(table, w, t, arch):
            seeds[w] = t
    return seeds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True, help="arch whose nvdisasm is the oracle")
    ap.add_argument("--family", default=None, help="table name (default from the arch)")
    ap.add_argument("--opcode", action="append", default=None, help="only these opcodes")
    ap.add_argument("--limit", type=int, default=0, help="probe at most this many new seeds")
    ap.add_argument("--dry-run", action="store_true", help="list the new seeds, write nothing")
    args = ap.parse_args(argv)
    from ptx2sass import oracle
    from ptx2sass.encoder import codec
    from tools.isa_probe import build_table, table_json
    family = args.family or codec.ARCH_FAMILY.get(args.arch) or args.arch
    out = Path(codec.TABLES) / f"{family}.json"
    old = json.loads(out.read_text())
    forms, primary = old["forms"], old.get("probed_with", args.arch)
    seeds = new_seeds(forms, args.arch, primary, set(args.opcode) if args.opcode else None)
    seeds = dict(sorted(seeds.items(), key=lambda kv: (kv[0] & 0xfff, kv[0])))
    if args.limit:
        seeds = dict(list(seeds.items())[: args.limit])
    print(f"{len(seeds)} variants nvdisasm reads that the table does not", flush=True)
    if args.dry_run:
        for w, t in seeds.items():
            print(f"  {w:032x}  {t}")
        return 0

    def save(fs):
        tmp = out.with_suffix(".tmp")
        tmp.write_text(table_json(family, primary, oracle.tool_version("nvdisasm"), fs))
        tmp.replace(out)
    forms = build_table(args.arch, seeds, forms, save=save, primary=primary)
    save(forms)
    print(f"wrote {len(forms)} forms to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
