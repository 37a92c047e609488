"""The emulator on ptxas's sm_100/sm_120 64-bit forms (found by the sm_120 fuzz campaign,
branch archfuzz): `ISETP.*.U64/.S64` compares register and uniform pairs (it compared the
low words as 32-bit values), `MOV.64`/`UMOV.64 R, imm` take a 64-bit immediate whole (they
kept the low word sign-extended, or the low word alone). Expected values: Python's integers
on the PTX's semantics, never our output."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

WIDE = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q){{
 .reg .b32 %r<12>; .reg .b64 %rd<12>; .reg .pred %p<8>;
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; ld.param.u64 %rd6, [q];
 mov.u32 %r10, %tid.x; mul.wide.u32 %rd7, %r10, 64; add.s64 %rd2, %rd2, %rd7;
 ld.global.u64 %rd3,[%rd2]; ld.global.u64 %rd4,[%rd2+8];
 setp.lt.u64 %p1, %rd3, 0xffffffff; setp.lt.s64 %p2, %rd3, -5; setp.gt.u64 %p3, %rd3, %rd4;
 setp.le.s64 %p4, %rd3, %rd4; setp.ne.s64 %p5, %rd3, %rd6; setp.lt.u64 %p6, %rd3, 0x80000000;
 selp.u32 %r1,1,0,%p1; selp.u32 %r2,1,0,%p2; selp.u32 %r3,1,0,%p3; selp.u32 %r4,1,0,%p4;
 selp.u32 %r5,1,0,%p5; selp.u32 %r6,1,0,%p6;
 st.global.v4.u32 [%rd2+16],{{%r1,%r2,%r3,%r4}}; st.global.v2.u32 [%rd2+32],{{%r5,%r6}};
 mul.lo.u64 %rd8, %rd3, 0xaf759ab1da0a440a; st.global.u64 [%rd2+40], %rd8;
 selp.b64 %rd9, 0x8000000000000001, 0x00000001fffffffe, %p3; st.global.u64 [%rd2+48], %rd9;
 ret;}}
"""

VALUES = [0, 1, 5, 0xFFFFFFFF, 0x80000000, 0x100000000, 0xFFFFFFFFFFFFFFFB, 0xFFFFFFFFFFFFFFFA,
          0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0x123456789, 0xFFFFFFFF00000000]
Q = 0x123456789


def _s64(v):
    return v - (1 << 64) if v >> 63 else v


def _expected(a, b):
    m = (1 << 64) - 1
    return [int(a < 0xFFFFFFFF), int(_s64(a) < -5), int(a > b), int(_s64(a) <= _s64(b)),
            int(a != Q), int(a < 0x80000000), (a * 0xAF759AB1DA0A440A) & m,
            0x8000000000000001 if a > b else 0x00000001FFFFFFFE]


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_ptxas_wide_compares_and_moves(arch):
    n = len(VALUES) * len(VALUES)
    pairs = [(a, b) for a in VALUES for b in VALUES]
    buf = np.zeros((n, 8), dtype=np.uint64)
    buf[:, 0] = [a for a, _ in pairs]
    buf[:, 1] = [b for _, b in pairs]
    cubin = oracle.ptxas(WIDE.format(arch=arch), arch).output
    res = run(cubin, "k", (1, 1, 1), (n, 1, 1), [buf, np.uint64(Q)])
    assert not res.hazards, res.hazards[:3]
    words = buf.view(np.uint32)
    for i, (a, b) in enumerate(pairs):
        want = _expected(a, b)
        got = [int(words[i, 4 + k]) for k in range(6)] + [int(buf[i, 5]), int(buf[i, 6])]
        assert got == want, (hex(a), hex(b), got, want)


SUB64 = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 %r<4>; .reg .b64 %rd<12>;
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3,%r1,32; add.s64 %rd4,%rd2,%rd3;
 ld.global.v2.u64 {{%rd5, %rd6}},[%rd4]; ld.global.v2.u64 {{%rd7, %rd8}},[%rd4+16];
 sub.cc.u64 %rd9, %rd5, %rd7; subc.u64 %rd10, %rd6, %rd8;
 st.global.v2.u64 [%rd4], {{%rd9, %rd10}}; ret;}}
"""


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_ptxas_128bit_subtraction(arch):
    """sub.cc.u64/subc.u64 (a 128-bit difference): sm_120's ptxas writes `IADD.64 RZ, P, -b, a`
    then `IADD.64.X d, ah, ~bh, P`; the emulator took `-b`'s carry as 0 - b's (held-out
    fuzz seeds 12010027, 12010077, 12010079 mismatched)."""
    vals = [0, 1, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000, 0x123456789ABCDEF0]
    quads = [(a, b, c, d) for a in vals for b in vals[:3] for c in vals for d in vals[:3]]
    buf = np.array(quads, dtype=np.uint64)
    cubin = oracle.ptxas(SUB64.format(arch=arch), arch).output
    res = run(cubin, "k", (1, 1, 1), (len(quads), 1, 1), [buf])
    assert not res.hazards, res.hazards[:3]
    for i, (lo1, hi1, lo2, hi2) in enumerate(quads):
        diff = (((hi1 << 64) | lo1) - ((hi2 << 64) | lo2)) & ((1 << 128) - 1)
        assert (int(buf[i, 0]), int(buf[i, 1])) == (diff & ((1 << 64) - 1), diff >> 64), i
