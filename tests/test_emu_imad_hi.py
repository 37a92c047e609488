"""IMAD.HI with a negated 64-bit addend pair (`IMAD.HI R7, R3, R0, -R6`: ptxas's sm_90 form of
`mad.hi.s32 d, a, -2^31, c`, the pair R6:R7 holding c << 32): the whole pair is negated. The
emulator negated it on the .WIDE path only, so ptxas's cubin computed hi(a*b) - c in it and
three sm_90 fuzz programs (seeds 9500258, 9500443, 9500573) were blamed on ours; with a
register multiplier and `-128` (`IMAD.HI R4, R7, R0, -R4`, R4:R5 = 0x80 << 32) it computed
hi + 128 (seed 910022). Expected values: exact integer arithmetic."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
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


PTX_REGISTER_B = """.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u64 p_in)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<5>;
    mov.u32 %r2, %tid.x;
    ld.param.u64 %d1, [p_in];
    mul.wide.u32 %d2, %r2, 8;
    add.s64 %d1, %d1, %d2;
    ld.param.u64 %d3, [p_out];
    add.s64 %d3, %d3, %d2;
    ld.global.b32 %r0, [%d1];
    ld.global.b32 %r1, [%d1+4];
    mad.hi.s32 %r2, %r0, %r1, -128;
    mad.wide.s32 %d0, %r2, -8, -2;
    st.global.b64 [%d3], %d0;
    ret;
}
"""


def test_imad_hi_with_negated_pair_sm90():
    rng = np.random.default_rng(910022)
    n = 64
    inp = rng.integers(0, 2**32, size=(n, 2), dtype=np.uint64).astype(np.uint32)
    a, b = inp[:, 0].view(np.int32).astype(object), inp[:, 1].view(np.int32).astype(object)
    hi = [((int(x) * int(y)) >> 32) - 128 for x, y in zip(a, b)]
    hi = [((h + 2**31) % 2**32) - 2**31 for h in hi]
    want = np.array([(h * -8 - 2) % 2**64 for h in hi], dtype=np.uint64)
    theirs = oracle.ptxas(PTX_REGISTER_B, "sm_90")
    assert theirs.ok, theirs.stderr
    assert "-R" in oracle.nvdisasm(theirs.output, ())      # the negated-pair form
    for name, cubin in (("ptxas", theirs.output), ("ours", codegen.compile_ptx(PTX_REGISTER_B, "sm_90"))):
        out = np.zeros(n, np.uint64)
        run(cubin, "k", 1, n, [out, inp.copy()])
        np.testing.assert_array_equal(out, want, err_msg=name)
