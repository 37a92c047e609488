"""Every inventory `mma.sp` form with tf32, s4/u4 or fp8 (e4m3/e5m2) A and B, on each target:
the per-form checker's value kernel (tools/inventory_coverage.py `mma_kernel`: fragments
loaded, D stored, so neither compiler drops the mma) compiled by ptxas and by us, and the
MMA lines compared (opcode, modifiers, operand kinds and suffixes, selector; register
numbers and reuse flags aside). Statuses: match, differ, refused (ptxas takes it, we do
not), ptxas-refused (and whether we refuse it too).

    py -m tools.mma_sparse_narrow_forms [--arch 80,86,89,90,100,120] [--show]
"""
from __future__ import annotations

import argparse
import re
from collections import Counter

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.frontend import inventory
from tools.inventory_coverage import mma_kernel
from tools.inventory_kernels import version_for

TYPES = (".tf32.", ".s4.", ".u4.", ".e4m3.", ".e5m2.")


def mma_lines(cubin: bytes) -> list[str]:
    out = []
    for line in oracle.nvdisasm(cubin).splitlines():
        if "MMA" in line and "*/" in line:
            text = " ".join(line.split("*/")[1].split(";")[0].split()).replace(".reuse", "")
            out.append(re.sub(r"\bR\d+", "R", text))
    return out


def forms():
    return [f for f in inventory.forms() if f.opcode == "mma" and f.name.startswith("mma.sp")
            and "kind::" not in f.name and any(t in f.name.split()[0] + "." for t in TYPES)]


def check(form, sm: int) -> tuple[str, str]:
    text = mma_kernel(form, version_for(form, sm), sm)[0]
    theirs = oracle.ptxas(text, f"sm_{sm}")
    try:
        ours = codegen.compile_ptx(text, f"sm_{sm}", "k.ptx")
    except CompileError as e:
        first = str(e).splitlines()[0]
        return ("ptxas-refused, ours too" if not theirs.ok else "refused"), first
    if not theirs.ok:
        return "ptxas-refused, ours compiled", ""
    a, b = mma_lines(ours), mma_lines(theirs.output)
    return ("match", a[0] if a else "") if a == b else ("differ", f"ours {a} ptxas {b}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="80,86,89,90,100,120")
    ap.add_argument("--show", action="store_true", help="print every form's status")
    args = ap.parse_args(argv)
    bad = 0
    for sm in (int(a) for a in args.arch.split(",")):
        fs = [f for f in forms() if f.valid_on(sm, version_for(f, sm), False)]
        counts: Counter = Counter()
        for f in fs:
            status, detail = check(f, sm)
            counts[status] += 1
            bad += status in ("differ", "ptxas-refused, ours compiled")
            if args.show or status in ("differ", "ptxas-refused, ours compiled"):
                print(f"  sm_{sm} {status:10s} {f.name}  {detail}")
        print(f"sm_{sm}: {len(fs)} forms: {dict(sorted(counts.items()))}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
