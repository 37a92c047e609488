"""IMAD.WIDE's carry out with a negated 64-bit addend (`IMAD.WIDE.U32 R4, P0, R9, R0, -R4`:
ptxas's sm_89 fold of `mul.wide.u32` then `sub.cc.u64` by c, whose P0 the following
`IADD3.X .., ~R, .., P0` of `subc.u64` reads as "no borrow"). `-c` adds ~c + 1, as IADD3's
`-x` does, so c = 0 carries out; the emulator negated c modulo 2^64 and gave no carry for
c = 0, so ptxas's cubin subtracted one borrow too many (fuzz seed 29101552). Expected
values: exact integer arithmetic of the PTX."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p_out, .param .u64 p_in)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<8>;
    mov.u32 %r2, %tid.x;
    ld.param.u64 %d5, [p_in];
    mul.wide.u32 %d6, %r2, 24;
    add.s64 %d5, %d5, %d6;
    ld.param.u64 %d7, [p_out];
    mul.wide.u32 %d6, %r2, 8;
    add.s64 %d7, %d7, %d6;
    ld.global.u32 %r0, [%d5];
    ld.global.u32 %r1, [%d5+4];
    ld.global.u64 %d0, [%d5+8];
    ld.global.u64 %d1, [%d5+16];
    mul.wide.u32 %d2, %r1, %r0;
    sub.cc.u64 %d2, %d2, %d0;
    subc.u64 %d1, %d1, %d2;
    st.global.u64 [%d7], %d1;
    ret;
}
"""

M64 = (1 << 64) - 1
CASES = [  # (a, b, c, x): x - (a*b - c) - borrow(a*b < c)
    (0x7E071A6F, 0x9BEBB7A3, 0, 0x10),
    (0, 0, 0, 5),
    (3, 4, 12, 7),
    (3, 4, 13, 7),
    (0xFFFFFFFF, 0xFFFFFFFF, 0, M64),
    (0xFFFFFFFF, 0xFFFFFFFF, M64, 0),
    (1, 1, M64, 0),
    (12345, 678, 1 << 40, 99),
]


@pytest.mark.parametrize("a, b, c, x", CASES)
def test_subc_after_a_wide_product_minus_c(a, b, c, x):
    build = oracle.ptxas(PTX, "sm_89")
    assert build.ok
    words = np.array([a, b, c & 0xFFFFFFFF, c >> 32, x & 0xFFFFFFFF, x >> 32], dtype=np.uint32)
    out = np.zeros(1, np.uint64)
    run(build.output, "k", (1, 1, 1), (1, 1, 1), [out, words])
    prod = a * b
    want = (x - ((prod - c) & M64) - (prod < c)) & M64
    assert int(out[0]) == want


def test_ptxas_folds_the_subtraction_into_the_wide_multiply():
    """The test above reaches the IMAD.WIDE form only while ptxas folds it so."""
    from ptx2sass.fuzz.diff import listing
    build = oracle.ptxas(PTX, "sm_89")
    text = "\n".join(listing(build.output, "k"))
    assert "IMAD.WIDE.U32" in text and ", P0, " in text and ", -R" in text
