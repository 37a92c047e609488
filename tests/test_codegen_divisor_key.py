"""A constant divisor and a value divisor of the same dividend in one block keep their own
reciprocals (fuzz36, sm_90a seed 48200369: `rem.u32 .., 96` after a `rem.u32` by
`%cluster_nctarank`, SSA value 96, took the latter's reciprocal). isel/intdiv.py keyed its
per-block reciprocal and quotient caches by a constant's value or a value's id alike; here the
divisor `%r1` is SSA value 5 (the fourth value after `p_a`), and the constant is 5."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target sm_89
.address_size 64

.visible .entry k(.param .u64 p_out, .param .u32 p_a, .param .u32 p_b)
{
    .reg .b32 %r<8>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [p_out];
    ld.param.u32 %r0, [p_a];
    add.u32 %r4, %r0, 1;
    add.u32 %r5, %r0, 2;
    add.u32 %r6, %r0, 3;
    ld.param.u32 %r1, [p_b];
    rem.u32 %r2, %r0, %r1;
    rem.u32 %r3, %r0, 5;
    st.global.u32 [%d0], %r2;
    st.global.u32 [%d0+4], %r3;
    st.global.u32 [%d0+8], %r4;
    st.global.u32 [%d0+12], %r5;
    st.global.u32 [%d0+16], %r6;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
@pytest.mark.parametrize("a,b", [(1000, 7), (123457, 96), (4, 9)])
def test_rem_by_a_constant_after_rem_by_a_value_numbered_alike(arch, a, b):
    text = PTX.replace(".target sm_89", f".target {arch}")
    out = np.zeros(5, np.uint32)
    res = run(ptx2sass.compile(text, arch), "k", (1,), (1,), [out, np.uint32(a), np.uint32(b)], hazard_check=True)
    assert list(out[:2]) == [a % b, a % 5]          # the manual's remainders
    assert not res.hazards
