"""Where ptxas -g writes a kernel's CRS_STACK_SIZE record, against ours.

    python -m tools.g_records FILE.ptx ...

For every kernel both compilers build with -g (sm_89), whether `.nv.info.<kernel>` has
CRS_STACK_SIZE; prints the kernels that differ and the agreement over the kernels our
cubin has (functions ptxas -g keeps out of line, which we inline, are left out).
"""
from __future__ import annotations

import re
import sys

from ptx2sass import codegen, oracle


def crs_records(cubin: bytes) -> dict[str, bool]:
    text = oracle.cuobjdump_elf(cubin)
    return {m.group(1): "CRS_STACK_SIZE" in m.group(2)
            for m in re.finditer(r"\n\.nv\.info\.(\S+)\n(.*?)(?=\n\.|\Z)", text, re.S)}


def main(paths: list[str]) -> int:
    agree = total = 0
    for path in paths:
        ptx = open(path, encoding="latin-1").read()
        theirs = oracle.ptxas(ptx, "sm_89", ("-g",), name="x.ptx")
        if not theirs.ok:
            print("ptxas refuses", path)
            continue
        try:
            ours = crs_records(codegen.compile_ptx(ptx, "sm_89", "x.ptx", debug=True, opt_level=0))
        except codegen.CompileError as e:
            print("we refuse", path, e)
            continue
        for kernel, has in crs_records(theirs.output).items():
            if kernel in ours:
                total += 1
                agree += ours[kernel] == has
                if ours[kernel] != has:
                    print(f"  differs {path}: {kernel} ptxas {has} ours {ours[kernel]}")
    print(f"CRS_STACK_SIZE as ptxas -g writes it: {agree}/{total} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
