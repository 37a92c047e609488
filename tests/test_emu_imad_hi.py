"""IMAD.HI with a negated 64-bit addend pair (`IMAD.HI R7, R3, R0, -R6`: ptxas's sm_90 form of
`mad.hi.s32 d, a, -2^31, c`, the pair R6:R7 holding c << 32): the whole pair is negated. The
emulator negated it on the .WIDE path only, so ptxas's cubin computed hi(a*b) - c in it and
three sm_90 fuzz programs (seeds 9500258, 9500443, 9500573) were blamed on ours. Expected
values: exact integer arithmetic."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>;
  .reg .u32 %t;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %rd3, %t, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.s64 %rd5, %rd1, %rd3;
  ld.global.u32 %r0, [%rd4];
  mad.hi.s32 %r1, %r0, -2147483648, -292853945;
  st.global.u32 [%rd5], %r1;
  ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_mad_hi_s32_with_a_negated_pair_addend(arch):
    build = oracle.ptxas(PTX.replace("ARCH", arch), arch)
    assert build.ok
    values = np.array([0x12345677, 0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xDEADBEEF, 12345] * 4,
                      dtype=np.uint32)
    out = np.zeros_like(values)
    run(build.output, "k", (1, 1, 1), (len(values), 1, 1), [out, values])
    want = [((int(np.int32(v)) * -2**31 >> 32) - 292853945) & 0xFFFFFFFF for v in values.view(np.int32)]
    assert [int(x) for x in out] == want
