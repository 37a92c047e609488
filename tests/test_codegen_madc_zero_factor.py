"""`mad[c].lo` with a factor known to be zero (fuzz37, sm_100a seed 49300048: a `set.hi.f32.u16`
of one value with itself, always false, multiplied into a `madc.lo.cc.u32`). isel/carry.py
wrote the product as `IMAD R, R, RZ, RZ`, which has no plain IMAD encoding (nvdisasm reads
those bits as `IMAD.MOV`): the encoder refused it and the compile crashed on every arch (here
`%tid.x` keeps the factor in a vector register; a uniform one takes UIMAD on sm_90+).
Expected values are the manual's carry arithmetic: d = a * b + c + CC.CF, CC.CF the carry-out."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass.emu.launch import run

PTX = """.version 9.1
.target sm_89
.address_size 64

.visible .entry k(.param .u64 p_out, .param .u32 p_a, .param .u32 p_b, .param .u32 p_x)
{
    .reg .b32 %r<10>;
    .reg .b64 %d0;
    ld.param.u64 %d0, [p_out];
    ld.param.u32 %r0, [p_a];
    ld.param.u32 %r2, [p_b];
    ld.param.u32 %r3, [p_x];
    mov.u32 %r9, %tid.x;
    add.u32 %r3, %r3, %r9;
    mov.b32 %r1, 0;
    add.cc.u32 %r4, %r0, %r2;
    madc.lo.cc.u32 %r5, %r3, %r1, 0xffffffff;
    addc.cc.u32 %r6, %r3, %r1;
    madc.lo.cc.u32 %r7, %r1, %r3, %r0;
    mad.lo.cc.u32 %r8, %r3, %r1, %r2;
    addc.u32 %r9, %r1, %r1;
    st.global.u32 [%d0], %r4;
    st.global.u32 [%d0+4], %r5;
    st.global.u32 [%d0+8], %r6;
    st.global.u32 [%d0+12], %r7;
    st.global.u32 [%d0+16], %r8;
    st.global.u32 [%d0+20], %r9;
    ret;
}
"""


def expected(a: int, b: int, x: int) -> list[int]:
    m = 0xFFFFFFFF
    s = a + b
    r4, cf = s & m, s >> 32
    s = x * 0 + m + cf
    r5, cf = s & m, s >> 32
    s = x + 0 + cf
    r6, cf = s & m, s >> 32
    s = 0 * x + a + cf
    r7, cf = s & m, s >> 32
    s = x * 0 + b                     # mad.lo.cc: no carry in
    r8, cf = s & m, s >> 32
    r9 = 0 + 0 + cf
    return [r4, r5, r6, r7, r8, r9]


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90a", "sm_100a", "sm_120a"])
@pytest.mark.parametrize("a,b,x", [(0xFFFFFFFF, 1, 0xFFFFFFFF), (5, 7, 3), (0x80000000, 0x80000000, 0xFFFFFFFE)])
def test_madc_lo_of_a_zero_factor(arch, a, b, x):
    text = PTX.replace(".target sm_89", f".target {arch}")
    out = np.zeros(6, np.uint32)
    res = run(ptx2sass.compile(text, arch), "k", (1,), (1,),
              [out, np.uint32(a), np.uint32(b), np.uint32(x)], hazard_check=True)
    assert [int(v) for v in out] == expected(a, b, x)
    assert not res.hazards
