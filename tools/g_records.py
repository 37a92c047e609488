"""Our -g cubins against ptxas -g's (sm_89).

    python -m tools.g_records FILE.ptx ...
    python -m tools.g_records --structure CORPUS ...      (cuda, triton, llvm, zluda, ...)

FILEs: for every kernel both compilers build, whether `.nv.info.<kernel>` has
CRS_STACK_SIZE; prints the kernels that differ and the agreement over the kernels our
cubin has (functions ptxas -g keeps out of line, which we inline, are left out).
--structure: per corpus, the files whose debug sections, relocations and section symbols
(`tools.line_tables.debug_structure`) equal ptxas -g's, and why the others differ.
"""
from __future__ import annotations

import re
import sys

from ptx2sass import codegen, oracle


def crs_records(cubin: bytes) -> dict[str, bool]:
    text = oracle.cuobjdump_elf(cubin)
    return {m.group(1): "CRS_STACK_SIZE" in m.group(2)
            for m in re.finditer(r"\n\.nv\.info\.(\S+)\n(.*?)(?=\n\.|\Z)", text, re.S)}


def structures(corpora: list[str]) -> int:
    from tools.corpora import ptx_files
    from tools.line_tables import debug_structure
    for corpus in corpora:
        same = total = 0
        for path in ptx_files(corpus):
            text = path.read_text(encoding="latin-1")
            try:
                theirs = oracle.ptxas(text, "sm_89", ("-g",), name=path.name)
            except oracle.OracleFailed as e:      # ptxas -g crashes on a few files
                print(f"  ptxas fails on {path.name}: {e}")
                continue
            if not theirs.ok:
                continue
            total += 1
            try:
                ours = debug_structure(codegen.compile_ptx(text, "sm_89", path.name, debug=True, opt_level=0))
            except codegen.CompileError as e:
                print(f"  we refuse {path.name}: {e}")
                continue
            want = debug_structure(theirs.output)
            same += ours == want
            if ours != want:
                print(f"  differs {path.name}: {', '.join(k for k in want if want[k] != ours.get(k))}")
        print(f"{corpus}: -g debug structure as ptxas's for {same}/{total} files")
    return 0


def main(paths: list[str]) -> int:
    if paths[:1] == ["--structure"]:
        return structures(paths[1:])
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
