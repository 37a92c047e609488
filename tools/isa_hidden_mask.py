"""Mark the component-mask operand (bits 72-75) of an arch's own texture forms as hidden at
0xf where that arch's nvdisasm prints the form's base word with mask 0xf without it.

Why: `tools/isa_probe` learns that nvdisasm leaves an operand out at its default only from a
seed that shows it left out; sm_100's TEX/TLD/TLD4/TXD forms were probed from seeds with mask
0x1 (visible), so their neighbours with mask 0xf (every TEX.LB, TEX.SCR.LL of another form
whose word it ranks first for) read with a `, 0xf` nvdisasm does not print (branch sound31).

    py -m tools.isa_hidden_mask --arch sm_100 --opcode TEX --opcode TLD --opcode TLD4 --opcode TXD
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ptx2sass.encoder import codec
from tools.isa_probe import disassemble, table_json

MASK_BITS = [72, 73, 74, 75]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True)
    ap.add_argument("--opcode", action="append", required=True)
    args = ap.parse_args(argv)
    family = codec.family_of(args.arch)
    path = Path(codec.TABLES) / f"{family}.json"
    table = json.loads(path.read_text())
    done = []
    for f in table["forms"]:
        if f.get("arch") != args.arch or f["opcode"] not in args.opcode:
            continue
        for s in f["slots"]:
            bits = [b for fl in s["fields"] for b in fl["bits"]]
            if s["shape"] != "{i}" or bits != MASK_BITS or s.get("optional"):
                continue
            [text] = disassemble([int(f["base"], 16) | 0xF << 72], args.arch)
            if text is not None and not text.rstrip().endswith("0xf"):
                s.update(optional=True, hidden_shape="{i}", default=[15])
                done.append(f["text"])
    path.write_text(table_json(family, table["probed_with"], table["nvdisasm"], table["forms"]))
    print(f"{len(done)} forms: " + "; ".join(done))
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
