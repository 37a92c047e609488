"""IMAD.HI with a negated 64-bit addend pair (`IMAD.HI R4, R7, R0, -R4`, R4:R5 = 0x80 << 32:
how ptxas 13.5 writes `mad.hi.s32 d, a, b, -128` for sm_90). The emulator negated the pair
for IMAD.WIDE but read it unnegated for .HI, so ptxas's cubin computed hi + 128 (fuzz seed
910022, sm_90: reported as a mismatch of ours). Expected values: exact integer arithmetic."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.5
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
    theirs = oracle.ptxas(PTX, "sm_90")
    assert theirs.ok, theirs.stderr
    assert "-R" in oracle.nvdisasm(theirs.output, ())      # the negated-pair form
    for name, cubin in (("ptxas", theirs.output), ("ours", codegen.compile_ptx(PTX, "sm_90"))):
        out = np.zeros(n, np.uint64)
        run(cubin, "k", 1, n, [out, inp.copy()])
        np.testing.assert_array_equal(out, want, err_msg=name)
