"""Static instruction counts of guarded 256-bit loads (sm_100+), ours and ptxas's: ptxas
branches around most of them, we predicate them (docs/STATUS.md, branch isa14).

    python -m bench.guarded_wide_loads [--arch sm_100 --arch sm_120]

Counts every instruction through the last EXIT (NOPs and the closing self-branch left out).
"""
from __future__ import annotations

import argparse
import re

from ptx2sass import codegen, oracle

R8 = "{%r2,%r3,%r4,%r5,%r6,%r7,%r8,%r9}"
SHAPES = {
    "load, result read": f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32]; add.s32 %r2, %r2, %r9; "
                         "st.global.u32 [%rd1], %r2;",
    "load with an else-value": "mov.b64 %rd8, 1234; @%p1 ld.global.v4.u64 {%rd8,%rd9,%rd10,%rd11}, "
                               "[%rd2+32]; st.global.v4.u64 [%rd1], {%rd8,%rd9,%rd10,%rd11};",
    "load with sinks": "@%p1 ld.global.v8.b32 {%r2,_,_,_,_,_,_,%r9}, [%rd2+32]; "
                       "add.s32 %r2, %r2, %r9; st.global.u32 [%rd1], %r2;",
    "load + store, one guard": f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32]; "
                               f"@%p1 st.global.v8.b32 [%rd1], {R8};",
    "every element an else-value": "".join(f"mov.b32 %r{k}, {k + 5}; " for k in range(2, 10))
    + f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32]; st.global.v8.b32 [%rd1], {R8};",
    "loop of 8 guarded loads": f"mov.b32 %r10, 0; mov.b32 %r11, 0; L: setp.lt.u32 %p1, %r10, %r1; "
                               f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32]; add.s32 %r11, %r11, %r2; "
                               "add.s32 %r11, %r11, %r9; add.s32 %r10, %r10, 1; add.s64 %rd2, %rd2, 32; "
                               "setp.lt.u32 %p0, %r10, 8; @%p0 bra L; st.global.u32 [%rd1], %r11;",
}


def kernel(arch: str, body: str) -> str:
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<16>; .reg .b32 %r<12>; .reg .pred %p<2>;
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
ld.global.u32 %r1, [%rd2]; setp.ne.u32 %p1, %r1, 0;
{body}
ret;
}}"""


def count(cubin: bytes) -> tuple[int, int]:
    """(instructions through the last EXIT, BRA instructions among them)."""
    text = oracle.cuobjdump_sass(cubin)
    body = [i.strip() for i in re.findall(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", text)
            if not i.strip().startswith("NOP")]
    last = max(k for k, i in enumerate(body) if re.search(r"\bEXIT\b", i))
    return last + 1, sum(1 for i in body[:last + 1] if re.search(r"\bBRA\b", i))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append")
    for arch in ap.parse_args().arch or ["sm_100", "sm_120"]:
        for name, body in SHAPES.items():
            ptx = kernel(arch, body)
            ours, theirs = count(codegen.compile_ptx(ptx, arch)), count(oracle.ptxas(ptx, arch).output)
            print(f"{arch}  {name:30s} ours {ours[0]:3d} ({ours[1]} BRA)  ptxas {theirs[0]:3d} ({theirs[1]} BRA)")


if __name__ == "__main__":
    main()
