"""The emulator's operand caches must not mix up operands that a handler makes on the fly.

`LaneView.r` keeps the value of each immediate (per decoded program) and of each constant
(per run) by the operand's id. PLOP3 in a partial warp (its generic handler) reads a `c[0x2][..].SIGN` source through a
copy of the operand made for the read; the copies of two constants can share an id once the first is
freed, and the second read got the first constant (campaign 7 seed 841324: ptxas's
add.sat/sub.sat.s32, whose overflow tests are PLOP3s on sign bits against constants in
bank 2, saturated on some runs and not on others). Expected values: exact saturating
arithmetic."""
import numpy as np
import pytest

from ptx2sass import oracle

SATURATING = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<8>;
    .reg .b64 %d<2>;
    .reg .pred %p0;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %r6, %tid.x;
    setp.lt.u32 %p0, %r6, 40;
    @!%p0 bra $done;
    mov.u32 %r7, 0;
$again:
    ld.volatile.global.u32 %r0, [%d1];
    ld.volatile.global.u32 %r1, [%d1+4];
    sub.sat.s32 %r2, %r0, -1515870811;
    sub.sat.s32 %r3, %r1, 1515870811;
    add.sat.s32 %r4, %r0, 1234567890;
    add.sat.s32 %r5, %r1, -1234567890;
    st.global.u32 [%d0], %r2;
    st.global.u32 [%d0+4], %r3;
    st.global.u32 [%d0+8], %r4;
    st.global.u32 [%d0+12], %r5;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p0, %r7, 150;
    @%p0 bra $again;
$done:
    ret;
}
"""


def _sat(v):
    return max(-2**31, min(2**31 - 1, v)) & 0xFFFFFFFF


def test_saturating_add_sub_of_constants_in_ptxas_cubin():
    from ptx2sass.emu.launch import run
    rng = np.random.default_rng(5)
    n = 64
    a = np.concatenate([rng.integers(-2**31, 2**31, n // 2), 2**31 - rng.integers(1, 2**30, n // 2)])
    b = np.concatenate([-(2**31) + rng.integers(0, 2**30, n // 2), rng.integers(-2**31, 2**31, n // 2)])
    want = [[_sat(int(x) + 1515870811), _sat(int(y) - 1515870811), _sat(int(x) + 1234567890),
             _sat(int(y) - 1234567890)] for x, y in zip(a, b)]
    src = SATURATING.replace("ld.param.u64 %d1, [in];",
                             "ld.param.u64 %d1, [in];\n    .reg .b32 %t;\n    .reg .b64 %o;\n"
                             "    mov.u32 %t, %tid.x;\n    mul.wide.u32 %o, %t, 8;\n    add.s64 %d1, %d1, %o;\n"
                             "    mul.wide.u32 %o, %t, 16;\n    add.s64 %d0, %d0, %o;")
    inp = np.stack([a, b], axis=1).astype(np.int64).astype(np.uint32).reshape(-1)
    cubin = oracle.ptxas(src).output
    for _ in range(2):          # (the loop makes 150 x 4 copies per launch: ids get reused)
        out = np.zeros(4 * n, np.uint32)
        run(cubin, "k", (1,), (n,), [out, inp.copy()], hazard_check=True)
        got = [[int(v) for v in out[4 * t:4 * t + 4]] for t in range(n)]
        assert got[:40] == want[:40]           # the lanes of the branch (partial warp 1)
        assert not out[4 * 40:].any()
