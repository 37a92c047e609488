"""CPU microseconds per `codec.encode` of instructions that differ only in an integer
immediate (`IMAD R1, R1, imm, R2`: lineops' `mad.lo` chain, where every instruction is a new
text), after the first one; for before/after checks of the codec's per-template plans.

    .venv/bin/python bench/encode_immediates.py [--count 20000] [--arch sm_89]

(Run with another checkout's interpreter, e.g. /work/main/.venv/bin/python, for its figure.)
"""
from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--arch", default="sm_89")
    args = ap.parse_args(argv)
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.model import Imm, Instruction, Reg
    r1, r2 = Reg("R", 1), Reg("R", 2)
    ins = [Instruction("IMAD", (), (r1, r1, Imm(2 * i + 3), r2)) for i in range(args.count)]
    codec.encode(ins[0], args.arch, 0, [])
    start = time.process_time()
    for x in ins[1:]:
        codec.encode(x, args.arch, 0, [])
    spent = time.process_time() - start
    print(f"{codec.__file__}: {spent / (len(ins) - 1) * 1e6:.1f} us an instruction")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
