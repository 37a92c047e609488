"""`cvt.s64.s32` + `add.s64` (a pointer plus a signed 32-bit index, every `v[i]` with `int i`)
on every code-generating Blackwell and Turing arch. Ours folded it into IADD3 +
`LEA.HI.X.SX32 d.hi, x, b.hi, 0x1, P` everywhere, but sm_120 has no such form (ptxas writes
SHF.R.S32.HI + IADD.64 there): "cannot encode" on sm_120 (the cuda corpus's calls.G at -g,
triton's matmul_int8). Ours = ptxas's cubin = the index arithmetic, in the emulator."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

PTX = """.version 9.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u32 n)
{{
 .reg .b32 %r<6>; .reg .b64 %rd<8>;
 ld.param.u64 %rd7, [p];
 add.s64 %rd1, %rd7, 64;
 ld.param.u64 %rd4, [q];
 ld.param.u32 %r1, [n];
 mov.u32 %r2, %tid.x;
 sub.s32 %r3, %r1, %r2;
 cvt.s64.s32 %rd2, %r3;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.u8 %r4, [%rd3];
 add.s32 %r4, %r4, 1;
 st.global.u8 [%rd3], %r4;
 cvt.s64.s32 %rd5, %r2;
 add.s64 %rd6, %rd4, %rd5;
 ld.global.u8 %r5, [%rd6];
 add.s32 %r5, %r5, %r4;
 st.global.u8 [%rd6], %r5;
 ret;
}}
"""
THREADS = 64


@pytest.mark.parametrize("arch", ["sm_75", "sm_100", "sm_110", "sm_120", "sm_121"])
def test_sign_extended_index_add(arch):
    ptx = PTX.format(arch=arch)
    n = THREADS // 2                       # n - tid runs from 32 down to -31: both signs
    outs = []
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        a = np.arange(128, dtype=np.uint8)
        b = np.arange(128, 256, dtype=np.uint8)
        # the kernel adds 64 to p, so p + 64 + (n - tid) stays inside a
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [a, b, np.uint32(n)])
        assert not res.hazards, res.hazards[:3]
        outs.append((a, b))
    want_a = np.arange(128, dtype=np.uint8)
    want_b = np.arange(128, 256, dtype=np.uint8)
    for t in range(THREADS):
        want_a[64 + n - t] += 1
    for t in range(THREADS):
        want_b[t] += want_a[64 + n - t]
    for a, b in outs:
        assert (a == want_a).all() and (b == want_b).all()
