"""Make some form bits of an arch's own forms a one-value group, so that a word with other
values there is refused ("an encoding the table does not know") instead of falling through
to another arch's form that reads it as some other instruction.

Why: the probe keeps a bit whose flip nvdisasm prints as an unknown value (`UF2FP.???13`)
as a form bit; such a word then matches no form of the member arch and the primary arch's
form (sm_120's UF2FP, whose bits 75/76/84 select an FP8 type) reads it. sm_100's nvdisasm
knows only one value of those bits, so sm_100's UF2FP forms hold them as a group of that one
value, and `isa_soundness --arch sm_100 --opcode UF2FP` counts the rest as refusals.

    py -m tools.isa_refuse_bits --arch sm_100 --opcode UF2FP --bits 75,76,84

The value kept is the form's own (its `value` at those bits); the table is rewritten in
`isa_probe`'s layout.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ptx2sass.encoder import codec
from tools.isa_probe import table_json


def refuse_bits(form: dict, bits: list[int]) -> bool:
    """Turn `bits` (all form bits of `form`) into a one-value group; False when they are not."""
    mask, value = int(form["mask"], 16), int(form["value"], 16)
    if any(not mask >> b & 1 for b in bits) or any(b in g["bits"] for g in form["groups"] for b in bits):
        return False
    keep = sum((value >> b & 1) << i for i, b in enumerate(bits))
    for b in bits:
        mask &= ~(1 << b)
        value &= ~(1 << b)
    form["mask"], form["value"] = hex(mask), hex(value)
    form["groups"].append({"bits": bits, "seed": keep, "values": {str(keep): {}}})
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True)
    ap.add_argument("--opcode", required=True)
    ap.add_argument("--bits", required=True, help="comma-separated bit numbers")
    args = ap.parse_args(argv)
    bits = [int(b) for b in args.bits.split(",")]
    family = codec.family_of(args.arch)
    path = Path(codec.TABLES) / f"{family}.json"
    table = json.loads(path.read_text())
    done = [f["text"] for f in table["forms"]
            if f["opcode"] == args.opcode and f.get("arch") == args.arch and refuse_bits(f, bits)]
    path.write_text(table_json(family, table["probed_with"], table["nvdisasm"], table["forms"]))
    print(f"{len(done)} forms: " + "; ".join(done))
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
