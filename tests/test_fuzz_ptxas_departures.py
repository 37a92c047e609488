"""ptxas 13.5.37 departures from the PTX ISA manual that fuzz campaign 7 found (sm_89).

Each test runs ptx2sass's cubin, which must give the manual's value (worked out by hand in
the test), and ptxas's cubin, whose different value is pinned so that a ptxas update that
fixes it shows up here. Both run in the emulator; each program is small enough to read the
two SASS listings and see the departure (`ptx2sass diff`)."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle

ROOT = Path(__file__).resolve().parents[1]


def _fuzz_out(text: str, by: str, arch: str | None = None) -> np.ndarray:
    """The `out` words of a fuzz case's kernel as `by` ("ours" or "ptxas") compiles it, run
    in the emulator (hazards checked on ours)."""
    from ptx2sass.fuzz import runner
    from ptx2sass.fuzz.inputs import read_case
    case = read_case(text)
    if arch:
        case.arch = arch
    cubin = runner.compile_ptxas(case)[0] if by == "ptxas" else runner._ours(case, {})[0]
    assert cubin is not None
    out = runner.execute(runner.load(cubin, case.kernel), case, by == "ours").buffers["out"]
    return np.frombuffer(bytes(out), np.uint32)


def _reduced(name: str) -> str:
    return (ROOT / "tests/fuzz_departures" / name).read_text()

HEAD = ".version 8.5\n.target sm_89\n.address_size 64\n"


def _run_both(src, inputs, params=(), out_words=1, dtype=np.uint32, arch=None):
    import ptx2sass
    from ptx2sass.emu.launch import run
    results = []
    on = {"arch": arch} if arch else {}
    for cubin, check in ((ptx2sass.compile(src, **on), True), (oracle.ptxas(src, **on).output, False)):
        out = np.zeros(out_words, dtype)
        run(cubin, "k", (1,), (1,), [out, np.array(inputs, np.uint32), *params], hazard_check=check)
        results.append([int(v) for v in out])
    return results


def _lop3(lut, a, b, c):
    """PTX lop3: bit i of the result is bit (a_i << 2 | b_i << 1 | c_i) of the table."""
    return sum(((lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) & 1) << i for i in range(32))


LOP3_AND_THEN_ZERO_TEST = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<8>;
    .reg .pred %p<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r1, [%d1];
    ld.global.u32 %r2, [%d1+4];
    ld.global.u32 %r3, [%d1+8];
    ld.global.u32 %r4, [%d1+12];
    setp.ne.u32 %p2, %r4, %r4;
    lop3.and.b32 %r5|%p1, %r1, %r2, %r3, 0xa6, %p2;
    setp.eq.s32 %p3, %r5, 0;
    selp.u32 %r6, 7, %r5, %p3;
    st.global.u32 [%d0], %r6;
    ret;
}
"""


def test_lop3_and_predicate_result_is_not_a_zero_test():
    """`lop3.and d|p, a, b, c, lut, q` with q false, then `setp.eq d, 0`: d is 2, so the
    selp keeps d. ptxas 13.5.37 answers the setp with LOP3's own predicate result, which it
    writes as `LOP3.LUT.PAND P0, ..., !PT` (d != 0 AND false: always false), so it stores 7;
    for the same instruction with the predicate stored (`lop3.and` + `selp p`) it reads P0
    as the manual's p = false. Seed 845583 (`div.s32` by the selp). An H200 ran ptxas's
    sm_90 cubin of this program on 2026-11-27 and stored 7 too: the departure is ptxas's,
    the emulator reads PAND right."""
    a, b, c = 0x1, 0x3, 0x0
    d = _lop3(0xA6, a, b, c)
    assert d == 2
    ours, theirs = _run_both(LOP3_AND_THEN_ZERO_TEST, [a, b, c, 5])
    assert ours == [d]
    assert theirs == [7]


UNPACK_HIGH_HALF_OF_BYTE = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u8 %r0, [%d1];
    mov.b32 {%h1, %h0}, %r0;
    st.global.b16 [%d0], %h0;
    ret;
}
"""


def test_unpack_high_half_of_a_zero_extended_byte_is_zero():
    """`mov.b32 {lo, hi}, r` of a register loaded by `ld.u8`: hi is 0 (the byte is
    zero-extended). ptxas 13.5.37 stores the loaded byte itself as hi (LDG.U8 then STG.U16
    of it; with `ld.u32` it loads the upper half at +2). Seed 845662 (`mov.b32.unpack`)."""
    ours, theirs = _run_both(UNPACK_HIGH_HALF_OF_BYTE, [0x1C], out_words=1, dtype=np.uint16)
    assert ours == [0]
    assert theirs == [0x1C]


def test_unpack_high_half_of_a_zero_extended_half_is_zero():
    """The same with `ld.u16`: hi is 0, ptxas 13.5.37 stores the loaded half (campaign 9,
    seed 20006847, `mov.b32 {%h1, %h2}, %r14` of an `ld.global.u16`)."""
    src = UNPACK_HIGH_HALF_OF_BYTE.replace("ld.global.u8 %r0", "ld.global.u16 %r0")
    ours, theirs = _run_both(src, [0x44EC], out_words=1, dtype=np.uint16)
    assert ours == [0]
    assert theirs == [0x44EC]


HIGH_LANE_OF_U16_LOAD = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u16 %r2, [%d1];
    ld.global.b32 %r1, [%d1+4];
    setp.lt.f16x2 %p0|%p1, %r2, %r1;
    selp.u32 %r3, 1, 0, %p1;
    st.global.u32 [%d0], %r3;
    ret;
}
"""


def test_f16x2_compare_reads_the_zero_upper_lane_of_a_u16_load():
    """`setp.lt.f16x2 p|q, a, b` with a from `ld.u16` (2.0 in the low lane, +0.0 above):
    q compares the upper lanes, 0.0 < 1.5, true. ptxas 13.5.37 compares a's low lane with
    b's upper one (`HSETP2 P0, PT, Ra.H0_H0, Rb_hi.H0_H0`): 2.0 < 1.5, false. The same
    narrowing as the unpack above. Seed 843385 (`vadd2` guarded by q)."""
    ours, theirs = _run_both(HIGH_LANE_OF_U16_LOAD, [0x4000, 0x3E000000])
    assert ours == [1]
    assert theirs == [0]


VECTOR_BYTE_STORE_OF_HALF = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.f32 %r0, [%d1];
    cvt.rn.f16.f32 %h0, %r0;
    st.global.v2.u8 [%d0], {%h0, %h0};
    st.global.u8 [%d0+2], %h0;
    ret;
}
"""


def test_vector_byte_store_of_a_half_register_stores_its_low_byte():
    """`st.v2.u8` of a .b16 register holding an f16 (44.0 = 0x5180) stores its low byte
    0x80 twice (a store narrower than the register keeps the low bits), as the scalar
    `st.u8` does. ptxas 13.5.37 converts the f16 to an integer first for the vector form
    (F2I.U8.F16.TRUNC: 44 = 0x2c), the scalar store it leaves alone (`.b8` too). Seeds
    840665, 844661 (`private vector store word`), 840646 (`st.local.v2.u8`)."""
    ours, theirs = _run_both(VECTOR_BYTE_STORE_OF_HALF, [0x42300000], dtype=np.uint8, out_words=4)
    assert ours == [0x80, 0x80, 0x80, 0]
    assert theirs == [0x2C, 0x2C, 0x80, 0]


SAD_S16_OF_SIGNED_BYTE = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .s8 c)
{
    .reg .b16 %h<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    ld.global.b16 %h1, [%d1+2];
    ld.param.s8 %h2, [c];
    sad.s16 %h3, %h0, %h1, %h2;
    st.global.b16 [%d0], %h3;
    ret;
}
"""


def test_sad_s16_adds_the_sign_extended_byte():
    """`ld.param.s8` into a .b16 register sign-extends (-1 is 0xffff); `sad.s16 d, 5, 2, c`
    is c + |5 - 2| = 2. ptxas 13.5.37 masks the parameter word to its low byte for the
    VABSDIFF (0xff + 3 = 0x102), though it sign-extends the same load for `add.s16` or a
    store. Seed 843656 (`sad.s16`)."""
    ours, theirs = _run_both(SAD_S16_OF_SIGNED_BYTE, [5 | 2 << 16], params=(np.int8(-1),),
                             dtype=np.uint16)
    assert ours == [2]
    assert theirs == [0x102]


SHIFT16_OF_HALF_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<3>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    ld.global.b16 %h1, [%d1+2];
    ld.global.u32 %r0, [%d1+4];
    set.nan.f16.f16 %h2, %h0, %h1;
    shr.b16 %h2, %h2, %r0;
    st.global.b16 [%d0], %h2;
    ret;
}
"""


def test_16bit_shift_of_a_half_set_result_by_20_is_zero():
    """`set.nan.f16.f16` of a NaN gives 1.0 (0x3c00); `shr.b16` of it by a register
    holding 20 clamps to 16 and gives 0. ptxas 13.5.37 clamps the amount to 0xffff and
    shifts the whole 32-bit register, whose upper half its `HSET2.BF ... .H0_H0` also set
    to 0x3c00, by 20: 0x03c0. (The upper lane as the emulator models HSET2 from the
    swizzle: both lanes compare the low halves.) Seed 843354 (`shr.b16`)."""
    ours, theirs = _run_both(SHIFT16_OF_HALF_SET, [0x7E00 | 0x3C00 << 16, 20], dtype=np.uint16)
    assert ours == [0]
    assert theirs == [0x03C0]


SATURATE_ABS_OF_MOST_NEGATIVE = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r1, [%d1];
    abs.s32 %r2, %r1;
    cvt.sat.s8.s32 %r3, %r2;
    st.global.u32 [%d0], %r2;
    st.global.u32 [%d0+4], %r3;
    ret;
}
"""


def test_saturating_narrow_of_abs_of_the_most_negative_s32_is_minus_128():
    """`abs.s32` is `d = |a|` into an `.s32` register: for -2^31 the only 32-bit value is
    -2^31 itself (0x80000000), which this program also stores. `cvt.sat.s8.s32` of that
    register clamps -2^31 to -128, sign-extended into the 32-bit destination (0xffffff80).
    ptxas 13.5.37 assumes `abs` is non-negative and clamps with an unsigned `IMNMX.U32 ...,
    0x7f`, so the same register reads as +2^31 there and saturates to 127, while the plain
    store of it writes 0x80000000: two values for one register. Seed 870469
    (`cvt.sat.s8.s32`)."""
    a = -(1 << 31) & 0xFFFFFFFF
    d = abs(-(1 << 31)) & 0xFFFFFFFF                  # |a| wrapped to 32 bits
    assert d == 0x80000000
    narrowed = max(-128, min(127, d - (1 << 32) if d >> 31 else d)) & 0xFFFFFFFF
    ours, theirs = _run_both(SATURATE_ABS_OF_MOST_NEGATIVE, [a], out_words=2)
    assert ours == [d, narrowed] == [0x80000000, 0xFFFFFF80]
    assert theirs == [0x80000000, 0x7F]


HALF_SET_NARROWED_IN_A_FUNC = HEAD + """
.func (.reg .b32 %fn2_r0) fn2(.reg .b32 %fn2_a0, .reg .b64 %fn2_a1)
{
    .reg .b16 %h<1>;
    .reg .b32 %r<2>;
    .reg .b64 %d<1>;
    mov.b32 %r0, %fn2_a0;
    mov.b64 %d0, %fn2_a1;
    xor.b32 %r1, %r0, 482784071;
    mov.b16 %h0, 9352;
    set.le.f16.f32 %h0, %r0, %r1;
    cvt.u8.u8 %r1, %h0;
    mov.b32 %fn2_r0, %r1;
    ret;
}

.func (.reg .b64 %fn1_r0, .reg .b32 %fn1_r1) fn1(.reg .b64 %fn1_a0, .reg .b32 %fn1_a1, .reg .b32 %fn1_a2)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    mov.b64 %d0, %fn1_a0;
    mov.b32 %r0, %fn1_a1;
    mov.b32 %r1, %fn1_a2;
    xor.b64 %d1, %d0, 100859615668;
    xor.b32 %r2, %r0, 1520468001;
    mad.lo.s32 %r2, %r2, %r1, %r1;
    mov.b64 %fn1_r0, %d1;
    mov.b32 %fn1_r1, %r2;
    ret;
}

.visible .entry k(.param .u64 p_out, .param .u64 p_in)
{
    .reg .b32 %r<5>;
    .reg .b64 %d<2>;
    .reg .b32 %g_tid;
    .reg .b32 %g_gtid;
    .reg .b64 %g_inb;
    .reg .b64 %g_inp;
    .reg .b64 %g_t64;
    .reg .b64 %g_outp;
    mov.u32 %g_tid, %tid.x;
    mov.u32 %g_gtid, %g_tid;
    ld.param.u64 %g_inb, [p_in];
    cvta.to.global.u64 %g_inb, %g_inb;
    mul.wide.u32 %g_inp, %g_gtid, 32;
    add.s64 %g_inp, %g_inb, %g_inp;
    ld.param.u64 %g_outp, [p_out];
    cvta.to.global.u64 %g_outp, %g_outp;
    mul.wide.u32 %g_t64, %g_gtid, 8;
    add.s64 %g_outp, %g_outp, %g_t64;
    ld.global.b32 %r0, [%g_inp+0];
    ld.global.s32 %d0, [%g_inp+4];
    ld.global.u32 %r1, [%g_inp+8];
    ld.global.b64 %d1, [%g_inp+16];
    ld.global.s32 %r2, [%g_inp+24];
    ld.global.f32 %r3, [%g_inp+28];
    mov.u32 %r4, %ctaid.x;
    call (%r1), fn2, (%r0, %d0);
    call.uni (%d1, %r0), fn1, (%d0, %r0, %r1);
    neg.s32 %r2, %r0;
    div.rz.f32 %r4, %r3, 0f0020AAC8;
    add.sat.s32 %r0, %r2, %r3;
    st.global.b32 [%g_outp+0], %r0;
    ret;
}
"""


def test_byte_of_a_half_set_result_returned_by_a_func_is_zero():
    """`set.le.f16.f32 h, a, b` writes 1.0 (0x3c00) when a <= b; `cvt.u8.u8 r, h` keeps its
    low byte, 0, so `fn2` returns 0 whatever the compare gives, `fn1` returns
    (a ^ 1520468001) * 0 + 0 and the kernel stores add.sat(-0, 0) = 0. ptxas 13.5.37
    compiles `fn2` as `FSETP.LE` + `SEL R, RZ, 0x1, !P0` (the compare as an integer 1),
    so `fn1` returns 1520468001 + 1 and the kernel stores its negation. Seed 870026
    (`add.sat.s32`), as the reducer left it (`ptx2sass-fuzz reduce 870026 --sig
    "mismatch: add.sat.s32"`); the same two statements in a kernel or a one-call .func
    compile to the manual's 0."""
    r0, r3 = 0x00000000, 0x00000000                       # 0.0 <= 0x1cc6b347 (> 0): true
    inputs = [r0, 5, 7, 0, 9, 0, 11, r3]                  # r0, d0, r1, pad, d1 (2 words), r2, r3
    fn2 = 0                                               # low byte of 1.0h (0x3c00)
    fn1 = ((r0 ^ 1520468001) * fn2 + fn2) & 0xFFFFFFFF
    total = max(-(1 << 31), min((1 << 31) - 1, -fn1 + r3)) & 0xFFFFFFFF
    assert total == 0
    ours, theirs = _run_both(HALF_SET_NARROWED_IN_A_FUNC, inputs)
    assert ours == [total]
    assert theirs == [(-(1520468001 + 1)) & 0xFFFFFFFF]


SHIFT16_BY_CNOT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<3>;
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    ld.global.u16 %h0, [%d1+4];
    cnot.b32 %r1, %r0;
    shr.u16 %h1, %h0, %r1;
    st.global.b16 [%d0], %h1;
    st.global.u32 [%d0+4], %r1;
    ret;
}
"""


@pytest.mark.parametrize("x", [0x42F2, 0])
def test_16bit_shift_by_a_cnot_result_shifts_by_it(x):
    """`cnot.b32 r, x` is 1 for x == 0, else 0; `shr.u16 h, 0xff, r` is then 0x7f or 0xff.
    ptxas 13.5.37 computes the cnot (`SEL` + `IMAD.MOV -R`, stored right) but shifts by R1,
    the stack pointer it loaded from c[0x0][0x28] (`SHF.R.U32.HI R7, RZ, R1, R0`): 0 for
    any stack address >= 16. Seed 8900344 (`shr.u16`), reduced to these two statements."""
    r = 1 if x == 0 else 0
    ours, theirs = _run_both(SHIFT16_BY_CNOT, [x, 0xFF], out_words=2)
    assert ours == [0xFF >> r, r]
    assert theirs == [0, r]


MAD_HI_SAT_BESIDE_MUL_LO = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    ld.global.u32 %r2, [%d1+4];
    mul.lo.u32 %r1, %r0, %r0;
    mad.hi.sat.s32 %r3, %r0, %r0, %r2;
    st.global.u32 [%d0], %r1;
    st.global.u32 [%d0+4], %r3;
    ret;
}
"""


def test_saturating_mad_hi_beside_a_mul_lo_of_the_same_operands_saturates():
    """`mad.hi.sat.s32 d, a, a, c` is the high word of a*a plus c, clamped to the s32
    range: for a = 0x7ee45531, c = 0x7f800000 the sum 0x3ee58f84 + 0x7f800000 overflows
    and saturates to 0x7fffffff. ptxas 13.5.37 fuses it with `mul.lo.u32 r, a, a` into one
    `IMAD.WIDE R6, R9, R9, R6` (addend c in the high word) and drops the saturation:
    0xbe658f84. Seed 8900463 (`mad.hi.sat.s32`), reduced to these two statements."""
    a, c = 0x7EE45531, 0x7F800000
    sa, sc = a - (1 << 32) if a >> 31 else a, c - (1 << 32) if c >> 31 else c
    lo = (sa * sa) & 0xFFFFFFFF
    hi = max(-(1 << 31), min((1 << 31) - 1, ((sa * sa) >> 32) + sc)) & 0xFFFFFFFF
    assert hi == 0x7FFFFFFF
    ours, theirs = _run_both(MAD_HI_SAT_BESIDE_MUL_LO, [a, c], out_words=2)
    assert ours == [lo, hi]
    assert theirs == [lo, ((((sa * sa) >> 32) + sc) & 0xFFFFFFFF)]


NEG_OF_SET_F32 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .f32 q)
{
    .reg .b32 %r<6>;
    .reg .b64 %d<3>;
    .reg .pred %p<1>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.f64 %d2, [%d1];
    set.ltu.f32.f64 %r1, %d2, %d2;
    neg.f32 %r2, %r1;
    testp.notanumber.f32 %p0, %r2;
    selp.b32 %r2, 0x7fffffff, %r2, %p0;
    ld.param.f32 %r4, [q];
    div.rz.f32 %r5, %r4, 0fC0500000;
    st.global.b32 [%d0], %r2;
    ret;
}
"""


def test_neg_of_a_false_set_f32_is_minus_zero():
    """`set.ltu.f32.f64 d, x, x` of a number is false: 0.0f (the manual), and `neg.f32` of
    0.0f is -0.0f, 0x80000000; the testp/selp (the generator's NaN canonicalisation) keeps
    it. ptxas 13.5.37 folds the neg into the set's select as `FSEL R, RZ, -1, !P0` where
    testp's integer test reads it, when an unrelated `div.rz.f32` (a CALL) follows (+0 where
    the manual's -0: the sign of zero lost; without the division it writes
    `FADD R, -R, -RZ`, -0). Campaign 9,
    seed 20000594 (reduced: tests/fuzz_regressions/s20000594 is not kept, this is)."""
    one = 0x3FF0000000000000                # 1.0: ltu(1, 1) is false
    ours, theirs = _run_both(NEG_OF_SET_F32, [one & 0xFFFFFFFF, one >> 32], params=[np.float32(2.0)])
    assert ours == [0x80000000]
    assert theirs == [0x00000000]


ABS_F16X2_OF_SATURATED_F32 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    ld.global.b32 %r1, [%d1+4];
    fma.rm.sat.f32 %r2, %r0, %r0, %r1;
    abs.f16x2 %r3, %r2;
    st.global.b32 [%d0], %r3;
    ret;
}
"""


def test_abs_f16x2_of_a_saturated_f32_clears_both_half_signs():
    """`abs.f16x2` clears the sign bit of each half (the manual). Of an `fma.sat.f32` result
    (0 <= x <= 1 as an f32, so its own sign bit is clear) ptxas 13.5.37 drops the abs
    altogether (`FFMA.RM.SAT` stored as is): the low half's sign bit is a mantissa bit of
    the f32 and stays set. Campaign 9, seed 20004527 (`fma.rm.sat.f32` then `abs.f16x2`)."""
    x = 0x3F04F606                          # 0.519...: fma(0, 0, x) = x, inside [0, 1]
    want = ((x >> 16) & 0x7FFF) << 16 | (x & 0x7FFF)
    assert want == 0x3F047606
    ours, theirs = _run_both(ABS_F16X2_OF_SATURATED_F32, [0, x])
    assert ours == [want]
    assert theirs == [x]


SET_EQ_OF_A_SET_RESULT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    ld.global.b32 %r1, [%d1+4];
    set.eq.f32.f32 %r2, %r0, %r1;
    set.eq.ftz.u32.f32 %r3, %r2, 0f3F800000;
    st.global.b32 [%d0], %r3;
    ret;
}
"""


def test_ftz_compare_of_a_set_result_keeps_the_inner_compare_exact():
    """`set.eq.f32.f32 t, a, b` (no .ftz: a subnormal a is not equal to +0) is 0.0f for
    a = 3 ulp (0x00000003) and b = +0; `set.eq.ftz.u32.f32 d, t, 1.0` is then false: d = 0.
    ptxas 13.5.37 folds the two into one `FSETP.EQ.FTZ a, b`, flushing a to zero in the inner
    compare too: 0xffffffff. Campaign 9, seed 20008201 (a vset4 sum, a subnormal, in a .func)."""
    ours, theirs = _run_both(SET_EQ_OF_A_SET_RESULT, [3, 0])
    assert ours == [0]
    assert theirs == [0xFFFFFFFF]


SATURATE_S8_OF_NEG_S16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.s16 %h0, [%d1];
    neg.s16 %h0, %h0;
    cvt.sat.s8.s16 %h1, %h0;
    add.s16 %h2, %h0, %h1;
    st.global.b16 [%d0], %h0;
    st.global.b16 [%d0+2], %h1;
    st.global.b16 [%d0+4], %h2;
    ret;
}
"""


def test_saturating_narrow_of_neg_of_the_most_negative_s16_is_minus_128():
    """`neg.s16` of -2^15 wraps to -2^15 in a 16-bit register (0x8000, which this program
    also stores); `cvt.sat.s8.s16` of it clamps to -128, sign-extended into the .b16
    destination (0xff80), and `add.s16` of the two wraps to 0x7f80. ptxas 13.5.37 clamps
    the negation of the 32-bit sign-extended value (+2^15) and saturates to 127 (0x007f),
    while the plain store writes 0x8000: the same departure as `abs.s32` above, for neg.s16.
    Campaign 10, seed 22002937 (`add.s16`: ours 0x7f80, ptxas 0x807f)."""
    a = 0x8000
    neg = -(a - 0x10000) & 0xFFFF
    sat = max(-128, min(127, neg - 0x10000 if neg >> 15 else neg)) & 0xFFFF
    total = (neg + sat) & 0xFFFF
    assert (neg, sat, total) == (0x8000, 0xFF80, 0x7F80)
    ours, theirs = _run_both(SATURATE_S8_OF_NEG_S16, [a], out_words=3, dtype=np.uint16)
    assert ours == [neg, sat, total]
    assert theirs == [0x8000, 0x7F, 0x807F]


SATURATE_F16_AFTER_SATURATE_U16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    cvt.sat.u16.u32 %h0, %r0;
    cvt.sat.f16.f16 %h1, %h0;
    st.global.b16 [%d0], %h1;
    ret;
}
"""


@pytest.mark.parametrize("x, theirs", [(0x4000, 0x4000), (0xFFFF, 0x7FFF)])
def test_saturating_f16_move_of_a_saturated_u16_clamps_to_0_1(x, theirs):
    """`cvt.sat.u16.u32 h, x` leaves x's low 16 bits for x < 2^16; `cvt.sat.f16.f16 h, h`
    reads them as a half and clamps it to [0.0, 1.0] (the manual's `.sat`; NaN gives +0):
    0x4000 (2.0) gives 0x3c00, 0xffff (a NaN) gives 0. ptxas 13.5.37 drops the `.sat` after
    the integer saturation (`IMNMX.U32 R0, R0, 0xffff` then a plain `HADD2 R0, R0.H0_H0,
    -RZ.H0_H0`): 2.0 stays 2.0 and the NaN comes out as the canonical 0x7fff. With a plain
    `ld.u16` source it keeps `HADD2.SAT`. Campaign 10, seed 22005690 (`cvt.sat.f16.f16` of
    a NaN: ours +0, ptxas 0x7fff)."""
    ours, got = _run_both(SATURATE_F16_AFTER_SATURATE_U16, [x], dtype=np.uint16)
    assert ours == [0x3C00 if x == 0x4000 else 0]
    assert got == [theirs]


NEG_F64_OF_A_CNOT_RESULT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .f64 x)
{
    .reg .b64 %d<3>;
    .reg .pred %p0;
    ld.param.u64 %d2, [out];
    ld.param.f64 %d0, [x];
    sqrt.rp.f64 %d1, %d0;
    cnot.b64 %d0, %d0;
    neg.f64 %d0, %d0;
    testp.notanumber.f64 %p0, %d0;
    selp.b64 %d0, 0x7fffffffffffffff, %d0, %p0;
    st.global.b64 [%d2], %d0;
    ret;
}
"""


@pytest.mark.parametrize("x, theirs", [(2.5, 0), (0.0, 0x7FFFFFFFFFFFFFFF)])
def test_neg_f64_of_a_cnot_result_flips_the_sign_bit(x, theirs):
    """`cnot.b64` gives the bits 0 (x != 0) or 1 (x == 0); `neg.f64` of them flips the sign
    bit: -0.0 (0x8000000000000000) or the negative subnormal 0x8000000000000001, neither a
    NaN, so the `selp` keeps them. ptxas 13.5.37, when a (dead) `sqrt.rp.f64` call precedes
    the `cnot`, computes the whole chain in uniform registers and writes the negation as the
    integer one (`USEL UR4, URZ, 0xffffffff, !UP0` sign-extended): +0 for x != 0, and for
    x == 0 the integer -1, a NaN that the `selp` turns into 0x7fffffffffffffff. Without the
    `sqrt` call it writes `DADD R4, -RZ, -R4`, as the manual says. Campaign 10, seed
    22003533 (`neg.f64`: ours 0x8000000000000000, ptxas 0)."""
    want = (1 if x == 0 else 0) | 1 << 63
    ours, got = _run_both(NEG_F64_OF_A_CNOT_RESULT, [0], params=(np.float64(x),), dtype=np.uint64)
    assert ours == [want]
    assert got == [theirs]


MIN_F32_OF_A_SATURATED_VMIN = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    vmin.u32.u32.s32.sat %r1, %r0, %r0;
    min.ftz.f32 %r2, %r1, 0f477FE000;
    st.global.b32 [%d0], %r1;
    st.global.b32 [%d0+4], %r2;
    ret;
}
"""


def test_float_min_of_a_saturated_vmin_is_not_clamped_to_one():
    """`vmin.u32.u32.s32.sat d, x, x` is min(x as u32, x as s32) clamped to the u32 range:
    x itself for x < 2^31 (0x447a0000, 1000.0 as a float); `min.ftz.f32` of that and
    65504.0 is 1000.0. ptxas 13.5.37 writes the min as `FADD.FTZ.SAT R7, RZ, R9` (as if the
    video `.sat` had clamped to the float range [0, 1]), giving 1.0 while the plain store of
    the same register writes 1000.0. Campaign 9, seed 20100724 (`vmax4...sat d.b0` merging
    into that min's result: both compilers take the unselected bytes from c as the manual
    says; c differs)."""
    ours, theirs = _run_both(MIN_F32_OF_A_SATURATED_VMIN, [0x447A0000], out_words=2)
    assert ours == [0x447A0000, 0x447A0000]
    assert theirs == [0x447A0000, 0x3F800000]


F16X2_MIN_OF_A_U16_LOAD_BESIDE_A_HALF = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<1>;
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    ld.global.u16 %r1, [%d1+4];
    ld.global.b16 %h0, [%d1+6];
    min.NaN.xorsign.abs.f16x2 %r2, %r0, %r1;
    st.global.b32 [%d0], %r2;
    st.global.b16 [%d0+4], %h0;
    ret;
}
"""


def test_f16x2_min_reads_the_zero_upper_lane_of_a_u16_load():
    """`ld.global.u16 b` zero-extends into the 32-bit register: b's upper lane is +0.0.
    `min.NaN.xorsign.abs.f16x2 d, a, b` with a = (1.0, 1.0) and b's low lane 0x1234: low
    lane min(1.0, |0x1234|) = 0x1234, upper lane min(1.0, 0) = +0 with sign 0 ^ 0: d =
    0x00001234. ptxas 13.5.37 merges the u16 load with the `ld.b16` of the next two bytes
    into one `LDG.E R9, [R2.64+0x4]` and feeds R9 whole to `HMNMX2.NAN.XORSIGN`: b's upper
    lane is that half (-1.0 here), giving min(1.0, 1.0) with sign 0 ^ 1 = 0xbc00 above. The
    same narrowing as the f16x2 compare above. Campaign 10, seed 22003145 (there b's upper
    half came from a texture coordinate's register: ours 0x00000000, ptxas 0x80000000)."""
    ours, theirs = _run_both(F16X2_MIN_OF_A_U16_LOAD_BESIDE_A_HALF, [0x3C003C00, 0xBC001234], out_words=2)
    assert ours == [0x00001234, 0xBC00]
    assert theirs == [0xBC001234, 0xBC00]


FUNC_RESULT_FROM_AN_UNWRITTEN_UNIFORM_PREDICATE = HEAD + """
.func (.param .b32 fn0_r0) fn0(.param .b32 fn0_a0)
{
    .reg .pred %p<1>;
    .reg .b16 %h<3>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    .reg .pred %tp0;
    .reg .b16 %th0;
    .reg .b32 %tr0;
    .reg .b32 %tr1;
    .reg .pred %tp1;
    .reg .pred %tp2;
    .reg .b16 %th1;
    .reg .pred %tp3;
    .reg .b16 %th2;
    ld.param.b32 %r0, [fn0_a0];
    xor.b32 %r1, %r0, 1037683930;
    mov.b16 %h0, 18133;
    xor.b32 %r2, %r0, 2075367860;
    setp.ne.b32 %p0, %r0, 4;
    mov.b64 %d0, 9352;
    mov.b64 %d1, 6425;
    mov.b16 %h1, 3498;
    mov.b16 %h2, 571;
    abs.ftz.f16 %h0, %h0;
    and.b16 %th0, %h0, 0x7fff;
    setp.gt.u16 %tp0, %th0, 0x7c00;
    selp.b16 %h0, 0x7fff, %h0, %tp0;
    set.eq.s32.s32 %r2, -1289181802, %r0;
    @!%p0 bra $L1_noret;
    st.param.b32 [fn0_r0], %r1;
    ret;
$L1_noret:
    mov.u32 %tr0, 0;
    and.b32 %tr1, %r2, 1;
    add.u32 %tr1, %tr1, 1;
$L2_loop:
        abs.bf16 %h0, %h0;
        and.b16 %th1, %h0, 0x7fff;
        setp.gt.u16 %tp2, %th1, 0x7f80;
        selp.b16 %h0, 0x7fff, %h0, %tp2;
        set.eq.s32.s64 %r2, %d0, %d0;
        sqrt.rp.f64 %d1, %d0;
        add.u32 %tr0, %tr0, 1;
        setp.lt.u32 %tp1, %tr0, %tr1;
        @%tp1 bra $L2_loop;
$L3_endloop:
    max.bf16 %h2, %h0, %h1;
    and.b16 %th2, %h2, 0x7fff;
    setp.gt.u16 %tp3, %th2, 0x7f80;
    selp.b16 %h2, 0x7fff, %h2, %tp3;
    min.s32 %r2, %r2, %r0;
    cvt.rzi.ftz.u16.f32 %h2, %r0;
    st.param.b32 [fn0_r0], %r1;
    ret;
}
.func (.param .b32 fn2_r0) fn2(.param .b64 fn2_a0, .param .b32 fn2_a1)
{
    .reg .pred %p<1>;
    .reg .b16 %h<1>;
    .reg .b32 %r<5>;
    .reg .b64 %d<3>;
    .reg .b64 %sd0;
    ld.param.b64 %d0, [fn2_a0];
    ld.param.b32 %r0, [fn2_a1];
    xor.b32 %r1, %r0, 482784071;
    mov.b16 %h0, 12279;
    setp.ne.b64 %p0, %d0, 0;
    set.gt.s32.s16 %r2, %h0, 7249;
    set.ge.s32.s32 %r2, %r1, %r0;
    set.eq.and.u32.b16 %r3, %h0, 0x15f1, %p0;
    set.eq.and.u32.b32 %r1, %r2, %r3, %p0;
    {
        .param .b32 fn0_a0;
        .param .b32 fn0_r0;
        st.param.b32 [fn0_a0], %r0;
        call (fn0_r0), fn0, (fn0_a0);
        ld.param.b32 %r4, [fn0_r0];
    }
    st.param.b32 [fn2_r0], %r1;
    ret;
}
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<2>;
    .reg .b64 %d<3>;
    ld.param.u64 %d1, [out];
    ld.param.u64 %d2, [in];
    ld.global.u64 %d0, [%d2];
    ld.global.b32 %r0, [%d2+8];
    {
        .param .b64 fn2_a0;
        .param .b32 fn2_a1;
        .param .b32 fn2_r0;
        st.param.b64 [fn2_a0], %d0;
        st.param.b32 [fn2_a1], %r0;
        call (fn2_r0), fn2, (fn2_a0, fn2_a1);
        ld.param.b32 %r1, [fn2_r0];
    }
    st.global.b32 [%d1], %r1;
    ret;
}
"""


def test_func_result_does_not_come_from_an_unwritten_uniform_predicate():
    """In fn2, `set.eq.and.u32.b16 r3, 12279, 0x15f1, p` is 0 and `set.ge.s32.s32 r2`
    is -1 for a = 0x17c01 (a ^ 482784071 >= a), so `set.eq.and.u32.b32 r1, r2, r3, p` is 0
    whatever p: fn2 returns 0. ptxas 13.5.37 drops the whole computation (and the load of
    fn2's 64-bit argument) and returns `USEL UR5, URZ, 0xffffffff, UP0` of a uniform predicate
    no instruction of the cubin writes (the emulator's UP0 starts false: 0xffffffff; on
    hardware whatever UP0 holds). Campaign 10, seed 22005165 (`vabsdiff.u32.u32.u32 d,
    a.b0, b.h1, c` with b that result: ours 0, ptxas 0xffff)."""
    ours, theirs = _run_both(FUNC_RESULT_FROM_AN_UNWRITTEN_UNIFORM_PREDICATE, [0x5244, 0, 0x17C01])
    assert ours == [0]
    assert theirs == [0xFFFFFFFF]


U16_COMPARE_OF_HALF_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<2>;
    .reg .b16 %h<2>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    setp.ne.u32 %p0, %r0, 0;
    ld.global.u16 %h1, [%d1+4];
    set.eq.xor.f16.f16 %h0, %h1, %h1, %p0;
    setp.lt.xor.u16 %p1, %h0, 0xffff, %p0;
    selp.u32 %r2, 1, 0, %p1;
    st.global.u32 [%d0], %r2;
    ret;
}
"""


@pytest.mark.parametrize("flag,half,theirs", [(1, 0x7E00, 1), (0, 0x3C00, 0)])
def test_u16_compare_of_a_half_set_result_reads_its_16_bits(flag, half, theirs):
    """`set.eq.xor.f16.f16` gives 1.0 (0x3c00) or +0 in a 16-bit register; `setp.lt.u16`
    of it against 0xffff is true either way, so the result is `!flag` (xor). ptxas 13.5.37
    writes the set as `HSET2.BF ... .H0_H0`, which puts 0x3c00 in both halves, and compares
    the whole 32-bit register (`ISETP.LT.U32 R, 0xffff`): 0x3c003c00 is not below 0xffff, so
    where the set is true its compare is false. Fuzz campaign 12, seed 24001347."""
    ours, got = _run_both(U16_COMPARE_OF_HALF_SET, [flag, half])
    assert ours == [1 - flag]
    assert got == [theirs]


U16_MULTIPLY_OF_HALF_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<2>;
    .reg .b16 %h<3>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    setp.ne.u32 %p0, %r0, 0;
    ld.global.u16 %h1, [%d1+4];
    ld.global.u16 %h2, [%d1+8];
    ld.global.u32 %r1, [%d1+12];
    set.nan.or.f16.f16 %h0, %h1, %h1, %p0;
    mad.wide.u16 %r2, %h2, %h0, %r1;
    st.global.u32 [%d0], %r2;
    ret;
}
"""


@pytest.mark.parametrize("flag", [1, 0])
def test_u16_multiply_of_a_half_set_result_reads_its_16_bits(flag):
    """`set.nan.or.f16.f16 h, x, x, p` is 1.0 (0x3c00) where p holds, +0 where it does not (x
    is no NaN); `mad.wide.u16 d, a, h, c` multiplies the 16-bit values: 0x3b1a * 0x3c00 + 0x10
    = 0x0dda1810. ptxas 13.5.37 writes the set as `HSET2.BF ... .H0_H0` (0x3c00 in both halves)
    and the multiply as a 32-bit `IMAD` of the whole register: 0x3b1a * 0x3c003c00 + 0x10 =
    0x25da1810 (mod 2^32). The sm_75 run of branch fuzz29, seed 39000353 (sm_80/89 alike)."""
    ours, got = _run_both(U16_MULTIPLY_OF_HALF_SET, [flag, 0x3C00, 0x3B1A, 0x10])
    want = 0x3B1A * 0x3C00 + 0x10 if flag else 0x10
    assert ours == [want]
    assert got == [0x25DA1810 if flag else 0x10]


FTZ_SETP_AND_BRANCH = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    ld.global.u32 %r1, [%d1+4];
    ld.global.u32 %r2, [%d1+8];
    setp.ne.u32 %p0, %r2, 0;
    mov.u32 %r3, 7;
    setp.ltu.and.ftz.f32 %p1, %r0, %r1, !%p0;
    @%p1 bra $Lskip;
    ld.volatile.global.u32 %r3, [%d1+12];
$Lskip:
    st.global.u32 [%d0], %r3;
    ret;
}
"""


@pytest.mark.parametrize("a, b, ours, theirs", [
    (0x00000001, 0x00000002, 9, 7),      # two subnormals: flushed, 0 < 0 is false
    (0x00000000, 0x00000100, 9, 7),      # 0 and a subnormal
])
def test_ftz_compare_feeding_a_branch_flushes_subnormals(a, b, ours, theirs):
    """`setp.ltu.and.ftz.f32 p, a, b, !q; @p bra`: with .ftz, subnormal inputs are flushed to
    zero (PTX ISA, setp), so 1 and 2 (as f32 bits) compare as 0 < 0: false, and the branch
    is not taken (the store gives the volatile load's 9). ptxas 13.5.37 folds the `.and !q` into `@!P0 BRA P1`
    and writes the compare as `FSETP.LTU.AND P1, ...` without .FTZ (sm_89 and sm_90 alike),
    so it branches (7). Fuzz seed 25000269 (campaign 13, sm_90: a sad.s32 after the join)."""
    got_ours, got_theirs = _run_both(FTZ_SETP_AND_BRANCH, [a, b, 0, 9])
    assert got_ours == [ours]
    assert got_theirs == [theirs]
    # with normal inputs both follow the manual
    assert _run_both(FTZ_SETP_AND_BRANCH, [0x3F800000, 0x40000000, 0, 9]) == [[7], [7]]


FP8_MMA_C_ALIASES_D = """.version 8.5
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<8>;
    .reg .b64 %d<3>;
    .reg .b32 %t;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %d2, %t, 4;
    add.s64 %d0, %d0, %d2;
    ld.global.b32 %r3, [%d1];
    ld.global.f32 %r2, [%d1+4];
    mov.b32 %r4, 0;
    mov.b32 %r1, 0;
    mov.b32 %r0, 0;
    mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%r2, %r4, %r1, %r0}, {%r3, %r3, %r3, %r3}, {%r3, %r3}, {%r2, %r2, %r2, %r4};
    st.global.b32 [%d0], %r4;
    ret;
}
"""


def test_fp8_mma_on_sm90_reads_c_before_writing_d():
    """An mma reads C before it writes D (PTX ISA, mma): with every fp8 input 1.0 (e4m3
    0x38) the m16n8k32 dot product is 32, and D[1] = 32 + C[1] = 32 + %r2 (1.0) = 33 even
    though D[0] is %r2 too. sm_90 has no fp8 mma: ptxas widens to f16, runs two HMMAs and
    adds C with FADDs, writing D[0] into %r2's register before it adds %r2 as C[1]: 32 +
    33 = 65. Fuzz seeds 25000665/724/761 (campaign 13, sm_90). The same departure as
    tests/test_fp8_mma_aliased_c_sm90.py (seed 9301524, where the H200 ran ptxas's cubin as the
    emulator does); here it is the pinned test of the campaign's ptxas_wrong rule."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    got = []
    for cubin, check in ((ptx2sass.compile(FP8_MMA_C_ALIASES_D, "sm_90"), True),
                         (oracle.ptxas(FP8_MMA_C_ALIASES_D, "sm_90").output, False)):
        out = np.zeros(32, np.float32)
        run(cubin, "k", (1,), (32,), [out, np.array([0x38383838, 0x3F800000], np.uint32)], hazard_check=check)
        got.append(set(out.tolist()))
    assert got == [{33.0}, {65.0}]



def test_16bit_left_shift_by_a_cnot_result_shifts_by_it():
    """`cnot.b32 %r1, %r0; shl.b16 %h1, %h0, %r1`: the shift is 1 where %r0 == 0, else 0.
    ptxas 13.5.37 (sm_90) does not load %r0 at all and shifts by a constant 0
    (`HFMA2.MMA R9, -RZ, RZ, 0, 0`, `SHF.L.U32 R9, R2, R9, RZ`). Seed 25000673 (campaign
    13), reduced (tests/fuzz_departures/shl16_by_cnot_s25000673.ptx; per thread %r0 at in+0,
    %h0 at in+4 of its 16-byte record, %h1 to out+0 of its 8). A smaller program with the
    same two statements makes ptxas 13.5.37 crash (signal 11) on sm_89 and sm_90."""
    from pathlib import Path
    from ptx2sass.fuzz.inputs import launch_data, read_case
    from ptx2sass.fuzz.runner import compile_ours, compile_ptxas, execute, load
    case = read_case((Path(__file__).parent / "fuzz_departures" / "shl16_by_cnot_s25000673.ptx").read_text())
    inb = np.frombuffer(launch_data(case).buffers["in"][1], np.uint8)
    words, n = [], case.threads
    for t in range(n):
        r0 = int(inb[16 * t:16 * t + 4].view(np.uint32)[0])
        h0 = int(inb[16 * t + 4:16 * t + 6].view(np.uint16)[0])
        words.append((h0 << (1 if r0 == 0 else 0)) & 0xFFFF)
    assert any(w != 0 for w in words) and len(set(words)) > 1

    def stored(cubin):
        out = np.frombuffer(execute(load(cubin, case.kernel), case, hazard_check=False).buffers["out"], np.uint8)
        return [int(out[8 * t:8 * t + 2].view(np.uint16)[0]) for t in range(n)]
    theirs, err = compile_ptxas(case)
    assert theirs is not None, err
    assert stored(compile_ours(case)) == words
    unshifted = [int(inb[16 * t + 4:16 * t + 6].view(np.uint16)[0]) for t in range(n)]
    assert stored(theirs) == unshifted != words


NEG_F16_OF_A_CNOT_RESULT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<4>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    .reg .pred %p0;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    ld.global.b32 %r0, [%d1+4];
    ld.global.b32 %r1, [%d1+8];
    cnot.b16 %h1, %h0;
    neg.f16 %h1, %h1;
    and.b16 %h3, %h1, 0x7fff;
    setp.gt.u16 %p0, %h3, 0x7c00;
    selp.b16 %h1, 0x7fff, %h1, %p0;
    neg.ftz.f16 %h2, %h1;
    div.rp.ftz.f32 %r2, %r0, %r1;
    st.global.b16 [%d0], %h1;
    st.global.b16 [%d0+2], %h2;
    st.global.b32 [%d0+4], %r2;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_120"])
@pytest.mark.parametrize("h0, theirs", [(5, (0x0000, 0x8000)), (0, (0x7FFF, 0x7FFF))])
def test_neg_f16_of_a_cnot_result_flips_the_sign_bit(arch, h0, theirs):
    """`cnot.b16` gives the bits 0 (h0 != 0) or 1 (h0 == 0); `neg.f16` "negates the sign of
    a" (PTX ISA, neg): -0.0 (0x8000) or the negative subnormal 0x8001 (no .ftz: subnormals
    are kept), neither a NaN, so the NaN-canonicalising `selp` keeps them; `neg.ftz.f16` of
    either flushes the (sub)normal input to a sign-preserving zero and negates it: +0
    (0x0000) both times. ptxas 13.5.37, with a `div.rp.ftz.f32` call in the kernel, writes
    cnot + neg as the integer negation (`SEL R0, RZ, 0xffffffff, !P0`): +0 for h0 != 0 (its
    neg.ftz then -0, 0x8000) and 0xffff, a NaN the `selp` turns into 0x7fff, for h0 == 0.
    Without the call it writes the manual's values, as the neg.f64 one above. Campaign 14,
    seed 26000131 (sm_120; `neg.ftz.f16`: ours 0x0000, ptxas 0x8000); sm_89 alike."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    want = (0x8000 | (1 if h0 == 0 else 0), 0x0000)
    got = []
    for cubin, check in ((ptx2sass.compile(NEG_F16_OF_A_CNOT_RESULT, arch), True),
                         (oracle.ptxas(NEG_F16_OF_A_CNOT_RESULT, arch).output, False)):
        out = np.zeros(4, np.uint16)
        run(cubin, "k", (1,), (1,), [out, np.array([h0, 0x3F800000, 0x40000000], np.uint32)], hazard_check=check)
        got.append((int(out[0]), int(out[1])))
    assert got[0] == want
    assert got[1] == theirs


SHL64_BY_AN_IMMEDIATE_OF_64_OR_MORE = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<1>;
    .reg .b64 %d<5>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    mul.wide.u32 %d2, %r0, 3;
    shl.b64 %d3, %d2, 200;
    shl.b64 %d4, %d2, 64;
    st.global.u64 [%d0], %d3;
    st.global.u64 [%d0+8], %d4;
    ret;
}
"""


def test_64bit_left_shift_by_an_immediate_of_64_or_more_is_zero():
    """`shl.b64` by an immediate of 64 or more: the manual clamps the amount to 64, so the
    result is 0. ptxas 13.5.37 (sm_75 and sm_89 alike) stores the operand unshifted, for 64
    and for 200. Fuzz campaign 15's 27001629 (sm_75: `shl.b64 %d1, %d0, 200` then
    `red.global.xor.b64`), reduced; values worked out by hand: 0x12345 * 3 = 0x369cf."""
    ours, theirs = _run_both(SHL64_BY_AN_IMMEDIATE_OF_64_OR_MORE, [0x12345], out_words=2, dtype=np.uint64)
    assert ours == [0, 0]
    assert theirs == [0x369CF, 0x369CF]


F16X2_SET_OF_AN_S16_LOAD_BESIDE_AN_S16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<1>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    ld.global.s16 %h0, [%d1+4];
    ld.global.s16 %r1, [%d1+6];
    set.eq.ftz.s32.f16x2 %r2, %r0, %r1;
    st.global.b32 [%d0], %r2;
    st.global.b16 [%d0+4], %h0;
    ret;
}
"""


def test_f16x2_compare_reads_the_sign_extended_upper_half_of_an_s16_load():
    """`ld.global.s16 %r1` of 0x8000 sign-extends into the 32-bit register (ISA 9.4.1, Table
    28: s16 into b32 is sext): %r1 = 0xffff8000, lanes (-0.0, NaN 0xffff). `set.eq.ftz.s32.
    f16x2 d, (+0, +0), %r1`: low lane +0 == -0 true (0xffff), upper lane +0 == NaN false
    (0): d = 0x0000ffff. ptxas 13.5.37 merges the two s16 loads into one `LDG.E R6,
    [+0x4]` and builds %r1 as `PRMT R7, R6, 0x7632, R7`, its upper half from R7, which
    nothing writes (0 in the emulator): both lanes equal, 0xffffffff. Campaign 16, seed
    28001354 (sm_100; sm_89/90/120 alike; there the upper half came from a u8 load's zeros)."""
    ours, theirs = _run_both(F16X2_SET_OF_AN_S16_LOAD_BESIDE_AN_S16, [0, 0x80001234], out_words=2)
    assert ours == [0x0000FFFF, 0x1234]
    assert theirs == [0xFFFFFFFF, 0x1234]


M8N8K4_OF_A_U16_LOAD_BESIDE_A_HALF = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .s32 c3)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<9>;
    .reg .b32 %t;
    .reg .b64 %d<4>;
    mov.u32 %t, %tid.x;
    ld.param.u64 %d0, [in];
    mul.wide.u32 %d1, %t, 48;
    add.s64 %d0, %d0, %d1;
    ld.param.u64 %d2, [out];
    mul.wide.u32 %d3, %t, 8;
    add.s64 %d2, %d2, %d3;
    ld.global.b32 %r0, [%d0+0];
    ld.global.b32 %r1, [%d0+4];
    ld.global.b32 %r2, [%d0+8];
    ld.global.u16 %r3, [%d0+12];
    ld.global.b16 %h0, [%d0+14];
    ld.global.b16 %h1, [%d0+16];
    ld.global.b32 %r4, [%d0+20];
    ld.param.s32 %r5, [c3];
    ld.global.b32 %r6, [%d0+28];
    ld.global.b32 %r7, [%d0+32];
    ld.global.b32 %r8, [%d0+36];
    mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%r6, %r2, %r1, %r4}, {%r3, %r4}, {%r2, %r7}, {%r8, %r8, %r6, %r5};
    shfl.sync.up.b32 %r3, %r1, %r0, 0x181f, 0xffffffff;
    st.global.v2.b16 [%d2+4], {%h0, %h1};
    st.global.b32 [%d2], %r3;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_100"])
def test_m8n8k4_reads_the_zero_upper_half_of_a_u16_load(arch):
    """Every lane loads the same record: A = {%r3, %r4} with %r3 from `ld.global.u16` of
    1.0 (zero-extended: lanes (1.0, +0)) and %r4 = (1.0, 1.0); B all 1.0; C's third register
    %r6 = 0. Whatever the fragment layout, every row of A is (1, 0, 1, 1), so D's third
    register %r1 = 3.0 in both lanes: 0x42004200 (the shfl.up by 0 keeps it). ptxas 13.5.37
    (sm_80..sm_100, where it emulates m8n8k4 with FFMAs) merges the u16 load with the
    `ld.b16 %h0` of the next half (2.0) into one `LDG.E R0, [+0xc]` and reads a1 as
    `R0.H1_H1`: 1 + 2 + 1 + 1 = 5.0, 0x45004500. sm_75's native HMMA.884 gets 3.0.
    Campaign 16, seed 28001020 (sm_100; there through an atom.exch into a private word)."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    src = M8N8K4_OF_A_U16_LOAD_BESIDE_A_HALF.replace("sm_89", "sm_80") if arch == "sm_80" else M8N8K4_OF_A_U16_LOAD_BESIDE_A_HALF
    record = [0, 0, 0x3C003C00, 0x40003C00, 0, 0x3C003C00, 0, 0, 0x3C003C00, 0, 0, 0]
    results = []
    for cubin, check in ((ptx2sass.compile(src, arch=arch), True), (oracle.ptxas(src, arch).output, False)):
        out = np.zeros(64, np.uint32)
        run(cubin, "k", (1,), (32,), [out, np.array(record * 32, np.uint32), np.int32(0)], hazard_check=check)
        results.append(({int(v) for v in out[0::2]}, {int(v) for v in out[1::2]}))
    assert results[0] == ({0x42004200}, {0x00004000})
    assert results[1] == ({0x45004500}, {0x00004000})


# NEG_OF_SET_F32 with an integer set: all ones (a NaN pattern) when true
NEG_OF_AN_INTEGER_SET = NEG_OF_SET_F32.replace("set.ltu.f32.f64 %r1,", "set.nan.u32.f64 %r1,")


@pytest.mark.parametrize("x, ours_, theirs_", [
    (0x7FF8000000000000, 0x7FFFFFFF, 0x00000001),     # NaN: set true, 0xffffffff
    (0x3FF0000000000000, 0x80000000, 0x00000000),     # 1.0: set false, 0
])
def test_neg_f32_of_an_integer_set_result_is_a_nan(x, ours_, theirs_):
    """`set.nan.u32.f64` gives 0xffffffff (true) or 0 (ISA 9.7.3.x set); `neg.f32` "negates
    the sign" and "NaN inputs yield an unspecified NaN" (9.7.3.10): a NaN, which testp/selp
    (the generator's canonicalisation) turn into 0x7fffffff; of 0 it is -0.0, 0x80000000.
    ptxas 13.5.37, with a CALL in the kernel (the div.rz.f32's slow path), folds the neg
    into the set's select as the integer negation `SEL R0, RZ, 0x1, !P0`: 1 (a subnormal,
    not a NaN) and +0 (without the division it writes `FADD R, -R, -RZ`). The set.f32 form
    is the +0 of test_neg_of_a_false_set_f32_is_minus_zero. Campaign 16, seed 28001234."""
    ours, theirs = _run_both(NEG_OF_AN_INTEGER_SET, [x & 0xFFFFFFFF, x >> 32], params=[np.float32(2.0)])
    assert ours == [ours_]
    assert theirs == [theirs_]


MIN_F32_OF_A_SATURATED_SUBTRACTION = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.s32 %r0, [%d1];
    sub.sat.s32 %r1, %r0, -1857930779;
    min.f32 %r2, %r1, 0f40000000;
    st.global.b32 [%d0], %r2;
    ret;
}
"""


def test_min_f32_of_a_saturated_subtraction_is_the_minimum():
    """`sub.sat.s32` of 5 and -1857930779 = 1857930784 = 0x6ebdc620, which read as f32 is
    about 2.9e28; `min.f32` of it and 2.0 is 2.0 (0x40000000). ptxas 13.5.37 (sm_89) leaves the
    FMNMX out after the saturating PLOP3/SEL sequence and stores 0x6ebdc620; with `sub.s32`
    (no .sat), `add.sat` of 7 or a plain move it keeps the minimum. Fuzz campaign 18's
    29100833 (`min.f32` then testp/selp), reduced; value worked out by hand."""
    ours, theirs = _run_both(MIN_F32_OF_A_SATURATED_SUBTRACTION, [5])
    assert ours == [0x40000000]
    assert theirs == [0x6EBDC620]


MAX_F32_OF_A_SATURATED_MAD_HI = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<5>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.s32 %r0, [%d1];
    ld.global.s32 %r1, [%d1+4];
    ld.global.s32 %r2, [%d1+8];
    mad.hi.sat.s32 %r3, %r1, %r2, %r0;
    max.f32 %r4, %r3, 0fBF800000;
    st.global.b32 [%d0], %r4;
    ret;
}
"""


@pytest.mark.parametrize("inputs,saturated", [
    ([0xC0000000, 3, 5], 0xC0000000),          # hi(3*5) = 0, + -2^30: -2.0 as f32
    ([0x7FFFFFFF, 0x40000000, 4], 0x7FFFFFFF),   # clamps to 2^31-1: a NaN as f32
])
def test_max_f32_of_a_saturated_mad_hi_is_the_maximum(inputs, saturated):
    """`max.f32` of a `mad.hi.sat.s32` result and -1.0: read as f32 the saturated value is -2.0,
    or a NaN (max gives the other operand), so the maximum is -1.0 (0xbf800000) both times.
    ptxas 13.5.37 leaves the FMNMX out after the saturating sequence and stores the integer, as
    it does for `min.f32` of `sub.sat.s32` above. Fuzz campaign 19's 30001065 (sm_90,
    `max.f32` then testp/selp/mul), reduced; values worked out by hand."""
    ours, theirs = _run_both(MAX_F32_OF_A_SATURATED_MAD_HI, inputs)
    assert ours == [0xBF800000]
    assert theirs == [saturated]


def test_saturated_minmax_departure_is_recognised_only_where_ptxas_left_the_fmnmx_out():
    from ptx2sass.fuzz.departures import minmax_of_saturated_left_out
    with_fmnmx = "/*0100*/ FMNMX R5, R0, -1, !PT ;"
    assert minmax_of_saturated_left_out(MAX_F32_OF_A_SATURATED_MAD_HI, "/*0100*/ SEL R0, R4, 0x7fffffff, !P0 ;")
    assert not minmax_of_saturated_left_out(MAX_F32_OF_A_SATURATED_MAD_HI, with_fmnmx)
    assert not minmax_of_saturated_left_out(MAX_F32_OF_A_SATURATED_MAD_HI.replace(".sat", ""), "")
    # other FMNMX of registers (a cube texture's face selection) do not stand for it
    assert minmax_of_saturated_left_out(MAX_F32_OF_A_SATURATED_MAD_HI, "FMNMX R6, |R13|, |R14|, !PT ;")

def test_vabsdiff4_of_a_uniform_operand_reads_that_operand():
    """`vabsdiff4.u32.s32.s32.add d, a, b, c` (ISA, vabsdiff4: the sum of the four |a_i -
    b_i| of signed bytes, plus c) with a = 9 (u16 load), b = p_u0 = 0x66ef (bytes -17, 102,
    0, 0) and c = 0x55: 26 + 102 + 85 = 213 = 0xd5. ptxas 13.5.37 (sm_89) computes b as
    `ULOP3.LUT UR8, UR8, 0xffff` and writes `VABSDIFF4.ACC R11, R27, R8, R29` (sm_89 has no
    VABSDIFF4 form with a uniform source), one cycle after `IMAD.MOV.U32 R8, RZ, RZ, 0x120`:
    b = 0x120 gives |9-32| + |0-1| + 85 = 0x6d. Fuzz campaign 18, seed 29102974 (reduced)."""
    import dataclasses
    from pathlib import Path

    import ptx2sass
    from ptx2sass.emu.launch import run_buffers
    from ptx2sass.emu.loader import load_program
    from ptx2sass.fuzz.inputs import launch_data, read_case
    from ptx2sass.fuzz.runner import ptx_for
    path = Path(__file__).parent / "fuzz_departures" / "vabsdiff4_uniform_operand_s29102974.ptx"
    case = read_case(path.read_text())
    text = ptx_for(dataclasses.replace(case, arch="sm_89"))
    data = launch_data(case)
    got = []
    for cubin in (ptx2sass.compile(text, "sm_89", fmad=False),
                  oracle.ptxas(text, "sm_89", ("--fmad=false",)).output):
        res = run_buffers(load_program(cubin, case.kernel), case.grid, case.block, data.params,
                          data.buffers, hazard_check=False)
        got.append(int.from_bytes(res.buffers["out"][144:148], "little"))   # %r14's slot
    assert got == [0xD5, 0x6D]


CVT_RZI_OF_A_CNOT_RESULT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<3>;
    .reg .b16 %h<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r0, [%d1];
    ld.global.s16 %h0, [%d1+4];
    div.rp.f32 %r1, %r0, %r0;
    cnot.b16 %h1, %h0;
    cvt.rzi.s8.f16 %h2, %h1;
    st.global.b16 [%d0], %h2;
    st.global.b32 [%d0+4], %r1;
    ret;
}
"""


def test_cvt_rzi_of_a_cnot_result_as_f16_truncates_to_zero():
    """`cnot.b16` of 0 is 1, which read as f16 is 2^-24; `cvt.rzi.s8.f16` of it is 0. ptxas
    13.5.37 (sm_89; campaign 19's 30003385 on sm_90, reduced) keeps the cnot's integer where
    the kernel calls the division's slow path (`SEL R3, RZ, 0x1, !P0` stored as is) and
    stores 1; of a nonzero input both give 0. Values worked out by hand."""
    ours, theirs = _run_both(CVT_RZI_OF_A_CNOT_RESULT, [0x40000000, 0], out_words=2)
    assert ours == [0, 0x3F800000]
    assert theirs == [1, 0x3F800000]
    assert _run_both(CVT_RZI_OF_A_CNOT_RESULT, [0x40000000, 5], out_words=2) == [[0, 0x3F800000]] * 2


ABS_S16_THEN_CVT_U16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<3>;
    .reg .b16 %h<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    abs.s16 %h0, %h0;
    cvt.rp.ftz.sat.f32.u16 %r1, %h0;
    cvt.u32.u16 %r2, %h0;
    st.global.b32 [%d0], %r1;
    st.global.b32 [%d0+4], %r2;
    ret;
}
"""


def test_saturating_u16_to_f32_of_abs_of_the_most_negative_s16_is_one():
    """`abs.s16` of -2^15 is -2^15 itself (0x8000, stored here too); `cvt.rp.ftz.sat.f32.u16`
    reads it as 32768, saturated to 1.0. ptxas 13.5.37 (sm_75 and sm_89) assumes `abs` is
    non-negative and converts with `I2F.S16.RP`, so the register reads as -32768 there and
    saturates to 0 (campaign 21's 32001611 on sm_75, reduced). Values worked out by hand."""
    ours, theirs = _run_both(ABS_S16_THEN_CVT_U16, [0x8000], out_words=2)
    assert ours == [0x3F800000, 0x8000]
    assert theirs == [0, 0x8000]
    assert _run_both(ABS_S16_THEN_CVT_U16, [0xFFFF], out_words=2) == [[0x3F800000, 1]] * 2


SHR_U16_OF_HALF_SET = SHIFT16_OF_HALF_SET.replace(
    "set.nan.f16.f16 %h2, %h0, %h1;\n    shr.b16 %h2, %h2, %r0;",
    "set.le.f16.f16 %h2, %h0, %h0;\n    shr.u16 %h2, %h2, %r0;")


def test_16bit_unsigned_shift_of_a_half_set_result_keeps_16_bits():
    """`set.le.f16.f16` of 1.0 with itself gives 1.0 (0x3c00); `shr.u16` by 13 gives 1.
    ptxas 13.5.37 shifts the whole 32-bit register, whose upper half its HSET2.BF also set to
    0x3c00: 0x3c003c00 >> 13 = 0x1e001, stored as 0xe001 (as the `shr.b16` departure above;
    campaign 22's 33003175 on sm_110, the same on sm_89)."""
    ours, theirs = _run_both(SHR_U16_OF_HALF_SET, [0x3C00, 13], dtype=np.uint16)
    assert ours == [1]
    assert theirs == [0xE001]



NE_OF_AN_INTEGER_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<8>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    set.eq.ftz.s32.f32 %r1, %r0, %r0;
    set.ne.u32.f32 %r3, 0f00000000, %r1;
    st.global.u32 [%d0], %r3;
    st.global.u32 [%d0+4], %r1;
    ret;
}
"""


def test_f32_ne_of_an_integer_set_result_is_ordered():
    """`set.eq.ftz.s32.f32 r1, x, x` gives -1 for a number x (0xffffffff: a NaN as f32);
    `set.ne.u32.f32 r3, 0.0, r1` is then false by the manual (ne is ordered: false when an
    operand is NaN). ptxas 13.5.37 compares the integers (-1 != 0: true, 0xffffffff); with a
    loaded 0.0 instead of the literal, or a loaded 0xffffffff instead of r1, its compare is
    ordered. Fuzz seed 34003205
    (campaign 23, sm_89, reduced: an add.cc of the two set results)."""
    ours, theirs = _run_both(NE_OF_AN_INTEGER_SET, [0x3F800000], out_words=2)
    assert ours == [0, 0xFFFFFFFF]
    assert theirs == [0xFFFFFFFF, 0xFFFFFFFF]
    # x a NaN: r1 = 0, ne(0.0, 0.0) is false for both
    assert _run_both(NE_OF_AN_INTEGER_SET, [0x7FC00000], out_words=2) == [[0, 0], [0, 0]]


HALF_BESIDE_AN_FP8_PAIR = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .b32 p)
{
    .reg .b16 %h<6>;
    .reg .b32 %r<4>;
    .reg .b64 %d<3>;
    ld.param.u64 %d1, [out];
    ld.param.u64 %d2, [in];
    ld.global.u32 %r0, [%d2];
    ld.global.s16 %h0, [%d2+4];
    ld.global.u8 %h2, [%d2+8];
    ld.param.b32 %r1, [p];
    shr.b16 %h1, %h0, %r0;
    cvt.rn.satfinite.e5m2x2.f16x2 %h3, %r1;
    mov.b64 %d0, {%h2, %h0, %h3, %h1};
    mov.b64 {%h1, %h3, %h4, %h5}, %d0;
    st.global.b64 [%d1], %d0;
    st.global.b16 [%d1+8], %h5;
    ret;
}
"""


def test_half_unpacked_beside_an_fp8_pair_is_its_own():
    """`mov.b64 d, {h2, h0, h3, h1}` then `mov.b64 {., ., ., h5}, d`: h5 is h1 (the manual's
    packing order), here 0x1234 >> 3 = 0x246, and d's high word is h3 | h1 << 16 with h3 the
    FP8 pair of 1.0, 1.0 in e5m2 (0x3c3c). ptxas 13.5.37 writes h3 as `F2FP.SATFINITE.E5M2.
    F16.UNPACK_B_MERGE_C R9, c[0x0][0x178], R9` (h1 merged above the pair), stores d right,
    and stores R9's low half, the pair, as h5. Fuzz seed 34003432 (campaign 23, sm_89)."""
    import numpy as np
    ours, theirs = _run_both(HALF_BESIDE_AN_FP8_PAIR, [3, 0x1234, 7], params=(np.uint32(0x3C003C00),),
                             out_words=3)
    assert ours == [0x12340007, 0x02463C3C, 0x246]
    assert theirs == [0x12340007, 0x02463C3C, 0x3C3C]



U16_SET_OF_A_HALF_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<4>;
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    set.eq.f16.f16 %h1, %h0, %h0;
    set.gt.s32.u16 %r1, %h1, %h0;
    st.global.u32 [%d0], %r1;
    ret;
}
"""


@pytest.mark.parametrize("target", ["sm_89", "sm_110"])
def test_u16_set_of_a_half_set_result_compares_its_16_bits(target):
    """`set.eq.f16.f16 h1, x, x` of x = 2.0 (0x4000) gives 1.0 (0x3c00); `set.gt.s32.u16 r,
    h1, x` compares 0x3c00 > 0x4000 as u16: false, 0. ptxas 13.5.37 writes the half set as
    HSET2.BF (0x3c003c00) and compares the whole 32-bit register: true, -1 (the setp form
    above, here a `set`). Campaign 22's 33003906 on sm_110: the -1 went into an `mma.sp`
    (u8.s8) as an A/B/C element, so one lane of D differed (ours 0x62, ptxas 0x59): not the
    mma or the emulator's sparse model (ptxas's sp-metadata routine on sm_10x gives NumPy's D
    for ordered and random metadata, selectors 0 and 1, in the emulator)."""
    src = U16_SET_OF_A_HALF_SET.replace(HEAD, f".version 9.0\n.target {target}\n.address_size 64\n")
    assert _run_both(src, [0x4000], arch=target) == [[0], [0xFFFFFFFF]]
    # x = 0.125 (0x3000): 0x3c00 > 0x3000 is true either way
    assert _run_both(src, [0x3000], arch=target) == [[0xFFFFFFFF], [0xFFFFFFFF]]


S64_OF_A_HALF_SET_WITH_A_CALL = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .pred %p<2>;
    .reg .b16 %h<4>;
    .reg .b32 %r<4>;
    .reg .b64 %d<4>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.s8 %r0, [%d1];
    ld.global.u8 %h1, [%d1+1];
    setp.ne.u16 %p0, %h1, 0;
    ld.global.f32 %r1, [%d1+4];
    set.geu.xor.f16.f32 %h0, %r0, %r0, !%p0;
    div.rz.ftz.f32 %r2, %r1, %r1;
    cvt.s64.s16 %d2, %h0;
    st.global.b64 [%d0], %d2;
    st.global.f32 [%d0+8], %r2;
    ret;
}
"""


@pytest.mark.parametrize("target", ["sm_89", "sm_110"])
def test_s64_of_a_half_set_result_is_its_bits_when_the_kernel_calls(target):
    """`set.geu.xor.f16.f32 h, 5, 5, !p` with p true: geu is true, xor false: true, 1.0 as
    f16 = 0x3c00; `cvt.s64.s16` of it gives 15360. ptxas 13.5.37, when the kernel calls the
    division's slow path (`div.rz.ftz.f32`), writes the set as `SEL R, RZ, 0x1`: the integer 1
    (as 28001234's neg.f32 and 30003385's cnot above). Without the division both give 15360.
    Campaign 22's 33002318 on sm_110 (reduced: /work/notes/open_33002318.ptx)."""
    src = S64_OF_A_HALF_SET_WITH_A_CALL.replace(HEAD, f".version 9.0\n.target {target}\n.address_size 64\n")
    one = 0x3F800000
    ours, theirs = _run_both(src, [0x0105, one], out_words=4, arch=target)
    assert ours == [15360, 0, one, 0]
    assert theirs == [1, 0, one, 0]
    # p false: true xor true = false, +0 from both
    assert _run_both(src, [0x0005, one], out_words=4, arch=target) == [[0, 0, one, 0]] * 2
    without_call = src.replace("    div.rz.ftz.f32 %r2, %r1, %r1;\n", "    mov.b32 %r2, %r1;\n")
    assert _run_both(without_call, [0x0105, one], out_words=4, arch=target) == [[15360, 0, one, 0]] * 2


S64_OF_AN_F32_SET_WITH_A_SQRT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .f64 u0)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<2>;
    .reg .b64 %d<4>;
    ld.param.u64 %d2, [out];
    ld.param.u64 %d3, [in];
    ld.global.b16 %h1, [%d3];
    ld.param.f64 %d0, [u0];
    sqrt.rm.f64 %d1, %d0;
    set.gt.f32.s16 %r1, %h1, 12647;
    cvt.s64.u32 %d1, %r1;
    st.global.b64 [%d2], %d1;
    ret;
}
"""


@pytest.mark.parametrize("target", ["sm_75", "sm_100"])
def test_s64_of_an_f32_set_result_is_one_point_zero_when_the_kernel_has_a_sqrt(target):
    """`set.gt.f32.s16 r, h, 12647` with h = 0x7000 is true: 1.0f = 0x3f800000 (PTX ISA,
    set: "1.0f is written for floating-point destination types"); `cvt.s64.u32` of it keeps
    the bits. ptxas 13.5.37, where the kernel has a `sqrt.rm.f64` (dead here), writes the set
    as `SEL R, RZ, 0x1`: the integer 1. Without the sqrt both give 0x3f800000; a 32-bit
    read (`mov`, `add.s32`, `shr.u32`) of the same set is right in both. Branch fuzz31's
    held-out sm_75 run, seed 43300190 (`set.ls.and.f32.u16` after a loop with `rem.s32`)."""
    src = S64_OF_AN_F32_SET_WITH_A_SQRT.replace(HEAD, f".version 8.8\n.target {target}\n.address_size 64\n")
    sqrt = [np.float64(2.0)]
    ours, theirs = _run_both(src, [0x7000], params=sqrt, out_words=2, arch=target)
    assert ours == [0x3F800000, 0]
    assert theirs == [1, 0]
    assert _run_both(src, [0x0010], params=sqrt, out_words=2, arch=target) == [[0, 0]] * 2   # false: +0
    without = src.replace("    sqrt.rm.f64 %d1, %d0;\n", "")
    assert _run_both(without, [0x7000], params=sqrt, out_words=2, arch=target) == [[0x3F800000, 0]] * 2


SAD_S16_OF_A_HALF_SET_WITH_A_SQRT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .f64 u0)
{
    .reg .b16 %h<4>;
    .reg .b64 %d<4>;
    ld.param.u64 %d2, [out];
    ld.param.u64 %d3, [in];
    ld.global.b16 %h0, [%d3];
    ld.global.b16 %h1, [%d3+2];
    ld.param.f64 %d0, [u0];
    sqrt.rm.f64 %d1, %d0;
    set.gt.f16.s16 %h2, %h1, 12647;
    sad.s16 %h3, %h2, %h0, %h0;
    st.global.b16 [%d2], %h3;
    ret;
}
"""


@pytest.mark.parametrize("target", ["sm_75", "sm_100"])
def test_sad_s16_of_a_half_set_result_is_its_bits_when_the_kernel_has_a_sqrt(target):
    """`set.gt.f16.s16 h2, h1, 12647` with h1 = 0x7000: 1.0 as f16 = 0x3c00; `sad.s16 d, h2,
    h0, h0` with h0 = 16: |0x3c00 - 16| + 16 = 0x3c00. ptxas 13.5.37, with a `sqrt.rm.f64` in
    the kernel, takes the set as the integer 1: |1 - 16| + 16 = 31. Without the sqrt both give
    0x3c00. Branch fuzz31's held-out sm_100 run, seed 43200298 (reduced to these lines)."""
    src = SAD_S16_OF_A_HALF_SET_WITH_A_SQRT.replace(HEAD, f".version 8.8\n.target {target}\n.address_size 64\n")
    sqrt = [np.float64(2.0)]
    ours, theirs = _run_both(src, [0x7000 << 16 | 16], params=sqrt, dtype=np.uint16, arch=target)
    assert ours == [0x3C00]
    assert theirs == [31]
    assert _run_both(src, [0x0010 << 16 | 16], params=sqrt, dtype=np.uint16, arch=target) == [[32]] * 2   # false: |0 - 16| + 16
    without = src.replace("    sqrt.rm.f64 %d1, %d0;\n", "")
    assert _run_both(without, [0x7000 << 16 | 16], params=sqrt, dtype=np.uint16, arch=target) == [[0x3C00]] * 2


FP8_PAIR_FROM_A_LOCAL_ARRAY = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .local .align 32 .b32 loc[16];
    .reg .b16 %h<4>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d1, [out];
    st.local.u32 [loc+32], 0x8ff34781;
    st.local.u32 [loc+36], 0x2e2af13a;
    mov.u64 %d0, loc;
    ld.local.v4.u16 {%h0, %h2, %h3, %h1}, [%d0+32];
    cvt.rn.f16x2.e4m3x2 %r0, %h2;
    st.global.b32 [%d1], %r0;
    ret;
}
"""


def test_e4m3_pair_of_a_local_array_half_is_its_value():
    """h2 is the second 16-bit element at loc+32: 0x8ff3, the e4m3 pair (0xf3, 0x8f) =
    (-176, -0.029296875), as f16 0xd980 and 0xa780. ptxas 13.5.37 folds the stores into the
    load and writes `F2FP.F16.E4M3.UNPACK_B R5, <immediate 0x24>`: 0x3200 (0.1875, 0); with
    `cvt.u32.u16` instead of the conversion it forwards 0x8ff3 right, and a `mov.b16` of the
    constant converts right too. Fuzz seed 35002150 (campaign 24, sm_121; sm_89 alike)."""
    ours, theirs = _run_both(FP8_PAIR_FROM_A_LOCAL_ARRAY, [0])
    assert ours == [0xA780D980]
    assert theirs == [0x3200]


U32_CVT_OF_AN_S8_PARAMETER = HEAD + """
.visible .func (.param .b32 r0) fn0(.param .b32 a2)
{
    .reg .b32 %r<4>;
    ld.param::func.s8 %r2, [a2];
    cvt.rz.f32.u32 %r3, %r2;
    st.param.b32 [r0], %r3;
    ret;
}
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.f32 %r3, [%d1];
    {
        .param .b32 a2;
        .param .b32 r0;
        st.param.b32 [a2], %r3;
        call.uni (r0), fn0, (a2);
        ld.param.b32 %r1, [r0];
    }
    st.global.b32 [%d0], %r1;
    ret;
}
"""


def test_u32_conversion_of_a_sign_extended_byte_is_unsigned():
    """`ld.param::func.s8` sign-extends the byte 0x85 to 0xffffff85; `cvt.rz.f32.u32` of it is
    4294967168 rounded toward zero (0x4f7fffff). ptxas 13.5.37 inlines the call, loads the
    byte and writes `I2F.S8.RZ`: -123.0 (0xc2f60000); with `.sat` that is 0 where the manual
    gives 1.0. A byte without the sign bit converts alike. Fuzz seed 34008588 (campaign 23,
    sm_89)."""
    ours, theirs = _run_both(U32_CVT_OF_AN_S8_PARAMETER, [0x3F800085])
    assert ours == [0x4F7FFFFF]
    assert theirs == [0xC2F60000]
    assert _run_both(U32_CVT_OF_AN_S8_PARAMETER, [0x3F800005]) == [[0x40A00000], [0x40A00000]]


U32_CVT_OF_AN_ABS = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r1, [%d1];
    abs.s32 %r2, %r1;
    cvt.rm.f32.u32 %r3, %r2;
    st.global.b32 [%d0], %r3;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_u32_conversion_of_abs_of_int_min_is_two_to_the_31(arch):
    """`abs.s32` of 0x80000000 is 0x80000000 (PTX ISA: the most negative value stays), and
    `cvt.rm.f32.u32` reads it as the unsigned 2^31 (0x4f000000). ptxas 13.5.37 converts the
    IABS result as signed (`I2F.RM`, no .U32), as if abs were never negative: -2^31
    (0xcf000000). Other values convert alike. Fuzz seed 40003608 (campaign 28, sm_90)."""
    ours, theirs = _run_both(U32_CVT_OF_AN_ABS, [0x80000000], arch=arch)
    assert ours == [0x4F000000]
    assert theirs == [0xCF000000]
    assert _run_both(U32_CVT_OF_AN_ABS, [0xFFFFFFF9], arch=arch) == [[0x40E00000], [0x40E00000]]


U64_SATURATE_OF_AN_ABS = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<4>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r1, [%d1];
    abs.s32 %r2, %r1;
    cvt.sat.u64.s32 %d2, %r2;
    st.global.u64 [%d0], %d2;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_saturating_u64_widening_of_abs_of_int_min_is_zero(arch):
    """`abs.s32` of 0x80000000 is 0x80000000 (the most negative value stays), an s32 below
    zero, which `cvt.sat.u64.s32` clamps to 0. ptxas 13.5.37 takes the IABS result as never
    negative and zero-extends it: 2^31. Other values widen alike. Branch fuzz36, seed
    48200467 (sm_90a, `cvt.sat.u64.s32`: ours 0, ptxas 0x80000000)."""
    ours, theirs = _run_both(U64_SATURATE_OF_AN_ABS, [0x80000000], out_words=1, dtype=np.uint64, arch=arch)
    assert ours == [0]
    assert theirs == [0x80000000]
    assert _run_both(U64_SATURATE_OF_AN_ABS, [0xFFFFFFF9], dtype=np.uint64, arch=arch) == [[7], [7]]


def _bfe_s32(a: int, pos: int, length: int) -> int:
    """PTX ISA, bfe.s32: bits pos.. of a, len of them, sign-extended from the last one
    taken (bit min(pos + len - 1, 31)); pos and len are the low bytes of their operands."""
    pos, length = pos & 0xFF, length & 0xFF
    if length == 0:
        return 0
    sbit = (a >> min(pos + length - 1, 31)) & 1
    return sum((((a >> (pos + i)) & 1) if i < length and pos + i <= 31 else sbit) << i for i in range(32))


def test_bfe_of_a_parameter_by_a_per_lane_position_is_per_lane():
    """`bfe.s32 %r1, %r11, %r2, %r7` with %r11 a `.u16` kernel parameter and %r2 (pos), %r7
    (len) loaded per thread, in a kernel that also calls a function and runs an mma (fuzz
    seed 36000184, campaign 25 on sm_103; sm_100 alike, sm_89 not): every thread's result
    is its own bfe (PTX ISA). ptxas 13.5.37 shifts per lane, then moves the shifted value
    into a uniform register (`R2UR UR7, R14`) before the SGXT, so threads whose position
    differs from the lane R2UR reads get another thread's field (0 for thread 2, whose pos
    is 0: 0x10 is right). The kernel stores a, pos and len, so the manual's answer is
    computed from what each compiler's kernel read."""
    wrong = {}
    for by in ("ours", "ptxas"):
        out = _fuzz_out(_reduced("bfe_shift_made_uniform_s36000184.ptx"), by, "sm_100").reshape(-1, 32)
        want = [_bfe_s32(int(t[26]), int(t[6]), int(t[16])) for t in out]
        wrong[by] = [i for i, t in enumerate(out) if int(t[4]) != want[i]]
    assert wrong["ours"] == []
    assert 2 in wrong["ptxas"]


F16_SET_AS_INTEGER = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<3>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    .reg .b64 %x;
    .reg .pred %p<2>;
    .reg .pred %t;
    .reg .b16 %s;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r1, [%d1];
    ld.global.u16 %h1, [%d1+4];
    ld.global.b64 %x, [%d1+8];
    setp.ne.u32 %p0, %r1, 0;
    set.eq.and.f16.s64 %h0, %x, %x, %p0;
    set.eq.f16.s16 %h2, %h1, %h0;
    setp.eq.s16 %t, %h2, 0;
    setp.eq.or.s16 %t, %h2, -1, %t;
    selp.b16 %s, 7, %h2, %t;
    rem.s16 %h1, %h2, %s;
    st.global.b16 [%d0], %h2;
    ret;
}
"""


@pytest.mark.parametrize("h1, ours, theirs", [(0x3C00, 0x3C00, 0), (1, 0, 0x3C00)])
def test_s16_compare_of_an_f16_set_result_beside_a_remainder_sees_0x3c00(h1, ours, theirs):
    """`set.eq.and.f16.s64 %h0, x, x, p` is 1.0 (0x3c00) with p true (PTX ISA, set: an f16
    destination gets 1.0 for true), so `set.eq.f16.s16 %h2, %h1, %h0` is 1.0 exactly when
    %h1 = 0x3c00. Where %h2 feeds a `rem.s16` (dead here), ptxas 13.5.37 writes %h0 for the
    compare as `SEL R0, RZ, 0x1, !P1`: 1 compares equal, 0x3c00 not (fuzz seed 36000303,
    campaign 25 on sm_103; sm_89 alike; the departure `half set result as the integer 1
    where the kernel calls`: the remainder's slow path is a call). With p false both give the manual's (h0 = 0)."""
    got_ours, got_theirs = _run_both(F16_SET_AS_INTEGER, [5, h1, 77, 0], out_words=1, dtype=np.uint16)
    assert got_ours == [ours]
    assert got_theirs == [theirs]
    assert _run_both(F16_SET_AS_INTEGER, [0, 0, 77, 0], out_words=1, dtype=np.uint16) == [[0x3C00], [0x3C00]]


ABS_BF16X2_OF_SATURATED = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.f32 %r0, [%d1];
    add.rz.sat.f32 %r0, %r0, %r0;
    abs.bf16x2 %r1, %r0;
    st.global.b32 [%d0], %r1;
    ret;
}
"""


def test_abs_bf16x2_of_a_saturated_f32_clears_both_signs():
    """x = 0x3e12ef29 (0.1435...): add.rz.sat.f32 x + x = 0x3e92ef29 (0.287, in [0, 1]);
    abs.bf16x2 of those bits clears each half's sign bit (PTX ISA, abs: per half), so
    0x3e926f29. ptxas 13.5.37 drops the abs (the f32 is not negative) and writes
    `HFMA2.BF16_V2 R0, -RZ.H0_H0, RZ.H0_H0, R0`: 0x3e92ef29 (fuzz seed 36001465, campaign 25
    on sm_103; sm_89 alike). A value whose low half has bit 15 clear gives the same on both."""
    assert _run_both(ABS_BF16X2_OF_SATURATED, [0x3E12EF29]) == [[0x3E926F29], [0x3E92EF29]]
    assert _run_both(ABS_BF16X2_OF_SATURATED, [0x1F097794]) == [[0x1F897794], [0x1F897794]]


def test_fp8_pairs_stored_together_keep_their_own_values():
    """`@p cvt.rn.satfinite.relu.e4m3x2.f16x2 %h1, %r1` and `cvt...e5m2x2.f16x2 %h0, %r2`,
    stored together by `sust.b.2d.v4.b16 {%h0, %h1, %h2, %h1}` (fuzz seed 36002701, campaign
    25 on sm_103; sm_89 alike). With a wmma in the kernel, ptxas 13.5.37 builds the pair with
    `F2FP...E5M2.F16.UNPACK_B_MERGE_C R14, R6, R11` (%h1 in R11) and then copies R14 over
    R11, so %h1 read later is %h0's value. The reference is ptxas's own cubin of the same
    kernel without the wmma (whose %h1 it keeps); ours must give it with the wmma."""
    text = _reduced("fp8_pair_merge_copied_back_s36002701.ptx")
    end = "    add.rz.ftz.f32 %r0, %r0, %r0;\n    st.global.b32 [%g_outp+0], %r0;\n"
    assert end in text
    text = text.replace(end, "    cvt.u32.u16 %r0, %h1;\n    st.global.b32 [%g_outp+0], %r0;\n")

    def h1(src, by):
        return _fuzz_out(src, by, "sm_89")[0:64:2].tolist()
    without_wmma = "".join(ln for ln in text.splitlines(keepends=True) if "wmma" not in ln)
    want = h1(without_wmma, "ptxas")
    assert h1(without_wmma, "ours") == want
    assert h1(text, "ours") == want
    assert h1(text, "ptxas") != want


def test_high_half_of_a_uniform_parameter_xor_is_its_own():
    """`xor.b32 %tr0, %r8, 0x76a16a26; mov.b32 {%h2, %h1}, %tr0` with %r8 a `.u16` kernel
    parameter (so its high half is 0) on the path a `.u32` parameter selects: %h1 is 0x76a1
    (PTX ISA, mov: the vector's second element is the high half). ptxas 13.5.37 (sm_121 fuzz
    seed 35000635, campaign 24; sm_100/sm_120 alike) loads the parameters with one
    `LDCU.64 UR4` and moves %h1 down with `UPRMT UR4, UR5, 0x7610, UR4`: the low half of
    UR5 (the next parameter), not UR4's high half."""
    text = _reduced("uniform_half_from_next_register_s35000635.ptx")
    end = "    st.global.b32 [%g_outp+0], %r6;\n    ret;"
    assert end in text
    text = text.replace(end, "    cvt.u32.u16 %r6, %h1;\n" + end)
    got = {by: _fuzz_out(text, by, "sm_120")[0:64:2].tolist() for by in ("ours", "ptxas")}
    assert got["ours"] == [0x76A1] * 32          # the else path (p_u2 != 0) for this launch
    assert got["ptxas"] != got["ours"]


def test_high_half_of_a_uniform_parameter_xor_read_as_a_pair_is_its_own():
    """The other form of that departure, in seed 35000635's whole program (reduced here to
    `tests/fuzz_departures/uniform_pair_high_half_s35000635.ptx`, sm_121): `xor.b32 %tr3, %r8,
    0x76a16a26; mov.b32 {%h2, %h1}, %tr3` with %r8 the `.u16` parameter p_u1 = 4 on the path
    p_u3 = 10 selects, %h1 stored by `st.global.b16 [+104]`: the manual's %h1 is the xor's
    high half, 0x76a1. ptxas 13.5.37 writes `ULOP3.LUT UR4, UR6, 0x76a16a26, URZ, 0x3c, !UPT`,
    `MOV.64 R2, UR4` and then `MOV R13, UR5`: %h1 from UR5, a register the xor never wrote."""
    from ptx2sass.fuzz import departures, runner
    from ptx2sass.fuzz.inputs import launch_data, read_case
    case = read_case((ROOT / "tests/fuzz_departures/uniform_pair_high_half_s35000635.ptx").read_text())
    params = {name: p.value for (name, *_), p in zip(case.params, launch_data(case).params[3:])}
    assert (params["p_u1"], params["p_u3"] != 0) == (4, True)
    got = {}
    for by in ("ours", "ptxas"):
        cubin = runner.compile_ptxas(case)[0] if by == "ptxas" else runner._ours(case, {})[0]
        if by == "ptxas":
            listing = oracle.cuobjdump_sass(cubin)
            assert departures._pair_read_of_a_word(listing) and "UPRMT" not in listing
        out = runner.execute(runner.load(cubin, case.kernel), case, by == "ours").buffers["out"]
        got[by] = int.from_bytes(bytes(out)[104:106], "little")
    assert got["ours"] == 0x76A1
    assert got["ptxas"] != 0x76A1


def test_pair_read_of_a_word_needs_the_next_register_unwritten():
    """The pair form's near misses: the high half's register written in between (by the xor
    as a pair, or by anything), or no pair read of the xor's register."""
    from ptx2sass.fuzz.departures import _pair_read_of_a_word
    at = lambda n, text: f"        /*{n:04x}*/                   {text} ;"
    xor = at(0x10, "ULOP3.LUT UR4, UR6, 0x76a16a26, URZ, 0x3c, !UPT")
    pair, high = at(0x20, "MOV.64 R2, UR4"), at(0x30, "MOV R13, UR5")
    assert _pair_read_of_a_word("\n".join([xor, pair, high]))
    assert not _pair_read_of_a_word("\n".join([xor, at(0x18, "UMOV UR5, URZ"), pair, high]))
    assert not _pair_read_of_a_word("\n".join([xor, at(0x20, "MOV R2, UR4"), high]))
    assert not _pair_read_of_a_word("\n".join([xor.replace("UR4, UR6", "UR8, UR6"), pair, high]))


NEG_S16_OF_HALF_SET = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<3>;
    .reg .b64 %d<3>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b64 %d2, [%d1];
    ld.global.b32 %r0, [%d1+8];
    ld.global.b32 %r1, [%d1+12];
    set.neu.f16.f64 %h0, 0d3FF0000000000000, %d2;
    div.rz.ftz.f32 %r0, %r0, %r1;
    neg.s16 %h0, %h0;
    st.global.b16 [%d0], %h0;
    st.global.b32 [%d0+4], %r0;
    ret;
}
"""


def test_neg_s16_of_a_half_set_result_is_the_integer_negation():
    """`set.neu.f16.f64 %h0, 1.0, 0.0` is 1.0 (0x3c00); `neg.s16` negates the 16 bits as an
    integer (PTX ISA, neg): 0x10000 - 0x3c00 = 0xc400. ptxas 13.5.37, with a division's call
    in the kernel, writes a half negation: 0xbc00 (-1.0) (fuzz seed 36004785, campaign 25 on
    sm_103; sm_89 alike). The division's result (3.0 / 1.0) is the same on both."""
    ours, theirs = _run_both(NEG_S16_OF_HALF_SET, [0, 0, 0x40400000, 0x3F800000], out_words=2)
    assert ours == [0xC400, 0x40400000]
    assert theirs == [0xBC00, 0x40400000]


def test_f32_of_a_cnot_b64_result_is_zero():
    """`cnot.b64 %d0, %d0` is 1 or 0; `cvt.rn.f32.f64` of those bits (the least subnormal
    double, or +0) rounds to +0.0f (PTX ISA, cvt), and `testp.notanumber` keeps it. ptxas
    13.5.37 (a loop after it in the kernel) converts the integer 1 to 1.0f where %d0 was 0
    (fuzz seed 36003549, campaign 25 on sm_103)."""
    got = {by: _fuzz_out(_reduced("f32_of_cnot_b64_s36003549.ptx"), by)[::4].tolist() for by in ("ours", "ptxas")}
    assert set(got["ours"]) == {0}
    assert 0x3F800000 in got["ptxas"]


SAT_F32_OF_SAT_S16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<3>;
    .reg .b64 %d<3>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r1, [%d1];
    cvt.sat.s16.u32 %h1, %r1;
    cvt.sat.f32.f16 %r0, %h1;
    st.global.b32 [%d0], %r0;
    ret;
}
"""


@pytest.mark.parametrize("word", [0x7FC00000, 0x40000000])
def test_saturating_f32_of_a_saturated_s16_nan_is_zero(word):
    """`cvt.sat.s16.u32` of a u32 above 32767 is 0x7fff, a NaN as a half; `cvt.sat.f32.f16`
    of it is +0 (PTX ISA, cvt: .sat flushes a NaN result to +0). ptxas 13.5.37 gives the
    canonical NaN 0x7fffffff (fuzz seed 36005660, campaign 25 on sm_103; sm_89 alike). 15360
    (0x3c00, 1.0 as a half) converts alike on both."""
    assert _run_both(SAT_F32_OF_SAT_S16, [word]) == [[0], [0x7FFFFFFF]]
    assert _run_both(SAT_F32_OF_SAT_S16, [0x3C00]) == [[0x3F800000], [0x3F800000]]


def test_sin_approx_of_a_huge_constant_is_the_units():
    """Fuzz seed 36005150 (campaign 25, sm_103): `sin.approx.f32` of a word ptxas knows at
    compile time (a store-initialised local table: 1401181199, about 1.1e12 as f32). The
    unit computes sine of revolutions (MUFU.SIN after a prescale), 0 for an argument of 2^23
    revolutions or more (an H200 does; the manual bounds the error only on [-pi, pi]); ours
    runs it there: 0. ptxas folds the call with an exact sine (-0.709..., 0xbf35928c) and
    writes no MUFU.SIN."""
    from ptx2sass.fuzz import runner
    from ptx2sass.fuzz.inputs import read_case
    text = _reduced("sin_approx_folded_s36005150.ptx")
    assert "MUFU.SIN" not in oracle.nvdisasm(runner.compile_ptxas(read_case(text))[0], ("-c",))
    got = {by: set(_fuzz_out(text, by)[::2].tolist()) for by in ("ours", "ptxas")}
    assert got["ours"] == {0}
    assert 0xBF35928C in got["ptxas"]


def _f16_eq_ftz(a: int, b: int) -> bool:
    """PTX ISA, set.eq.ftz on f16 halves: subnormals flushed to sign-preserving zero, +0 ==
    -0, NaN equal to nothing."""
    x, y = (np.array([v & 0xFFFF], np.uint16).view(np.float16)[0] for v in (a, b))
    x, y = (np.float16(0) if abs(v) < np.float16(2.0 ** -14) else v for v in (x, y))
    return bool(x == y)


def test_f16x2_or_compare_reads_the_zero_upper_half_of_a_merged_u16_load():
    """Campaign 28 (sm_90), seed 40001364 reduced: `ld.global.u16 %r6, [+26]` zero-extends
    into the 32-bit register (ISA 9.4.1, Table 28), so `set.eq.or.ftz.s32.f16x2 %r4, %r6,
    %r5, !%p0` compares an upper lane of +0 with %r5's: per half 0xffff where (a == b) or
    !%p0, else 0. The `mad.hi.sat.s32` that would overwrite %r4 is under `@%p1 bra.uni`
    with %p1 true (p_u1 != 0), so %r4 is the set's. ptxas 13.5.37 merges the u16 load with
    the `ld.global.b16 %h0, [+24]` beside it into `LDG.E R16, [+0x18]` and builds %r6 as
    `PRMT R4, R16, 0x7632, R4`, the upper half from R4, which by then holds a byte of the
    other branch's `ld.weak.v4.s8` (`@P1 SHF.R.S32.HI R4, RZ, 0x8, R8`). Expected values
    are worked out here from the launch's inputs for all 66 threads; ptxas's low lanes
    agree, and its upper lane of thread 23 (%r5 = +0, manual: equal) is not 0xffff."""
    from ptx2sass.fuzz.inputs import launch_data, read_case
    text = _reduced("f16x2_or_of_merged_u16_load_s40001364.ptx")
    case = read_case(text)
    data = launch_data(case)
    inb = data.buffers["in"][1]
    assert data.params[4].value != 0                     # p_u1: the mad is skipped
    nslots = len(case.slots)
    assert case.slots[1][0] == "%r4"
    want = []
    for t in range(case.threads):
        rec = inb[t * case.record:(t + 1) * case.record]
        p0 = rec[0] != 0
        a = int.from_bytes(rec[26:28], "little")         # %r6: u16 zero-extended
        b = int.from_bytes(rec[20:24], "little")         # %r5
        lo = _f16_eq_ftz(a, b) or not p0
        hi = _f16_eq_ftz(a >> 16, b >> 16) or not p0
        want.append((0xFFFF if lo else 0) | (0xFFFF0000 if hi else 0))
    ours, theirs = (_fuzz_out(text, by).reshape(case.threads, nslots * 2)[:, 2] for by in ("ours", "ptxas"))
    assert [int(v) for v in ours] == want
    assert [int(v) & 0xFFFF for v in theirs] == [w & 0xFFFF for w in want]
    assert want[23] == 0xFFFF0000 and int(theirs[23]) == 0


MMA_UNPACKED_C_PROGRAM = """.version 9.1
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in) {{
 .reg .b32 %r<6>; .reg .b64 %d<2>; .reg .b64 %a<4>;
 ld.param.u64 %a0, [in]; ld.param.u64 %a1, [out];
 mov.u32 %r5, %tid.x; mul.wide.u32 %a2, %r5, 32; add.u64 %a0, %a0, %a2;
 mul.wide.u32 %a2, %r5, 16; add.u64 %a1, %a1, %a2;
 ld.global.b32 %r0, [%a0+0]; ld.global.b32 %r3, [%a0+20]; ld.global.b32 %r4, [%a0+24];
 {halves}
 mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {{%r0, %r4}}, {{%r3, %r3}}, {{%r1}}, {{%r2, %r3}};
 st.global.v2.b32 [%a1], {{%r0, %r4}};
 ret;
}}
"""
MMA_UNPACKED = "ld.global.b64 %d0, [%a0+8]; mov.b64 {%r1, %r2}, %d0;"
MMA_WORDS = "ld.global.b32 %r1, [%a0+8]; ld.global.b32 %r2, [%a0+12];"


def _mma_unpacked_out(cubin):
    from ptx2sass.emu.launch import run
    rng = np.random.default_rng(1)
    inp = (rng.integers(0, 2 ** 16, 32 * 8, dtype=np.uint32) * 0x10001) & np.uint32(0x3bff3bff)
    out = np.zeros(32 * 4, np.uint32)
    res = run(cubin, "k", 1, 32, [out, inp])
    return out.tolist(), res


@pytest.mark.parametrize("arch", ["sm_90a", "sm_120a"])
def test_mma_c_fragment_of_an_unpacked_high_half(arch):
    """A ptxas 13.5.37 departure (held-out sm_120a fuzz seed 45200124: `mismatch:
    mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16`). After `mov.b64 {%r1, %r2}, %d0` (PTX ISA,
    mov: the first register takes the low half) an `mma` reading %r1 as its B fragment and %r2
    as the first register of its C fragment gets, from ptxas, `MOV Rc, Rlo`: C[0] is the low
    half (%r1) where the manual gives the high half. The same program with %r1/%r2 loaded as two
    words (the same values by the manual) is compiled right by ptxas; ours gives that program's
    value for both. Seen on sm_80, sm_89, sm_90a, sm_100a and sm_120a alike (the listing below is
    sm_90a's; 45200124's sm_120a listing: `MOV R12, R6` of `LDG.E.64 R6`). Not run on a GPU:
    the listing shows the copy."""
    import re

    from ptx2sass.compiler import compile as compile_ours
    unpacked, words = (MMA_UNPACKED_C_PROGRAM.format(arch=arch, halves=h) for h in (MMA_UNPACKED, MMA_WORDS))
    theirs_words = oracle.ptxas(words, arch)
    theirs_unpacked = oracle.ptxas(unpacked, arch)
    assert theirs_words.ok and theirs_unpacked.ok
    manual, _ = _mma_unpacked_out(theirs_words.output)          # ptxas is right on the two-word program
    for src in (unpacked, words):
        got, res = _mma_unpacked_out(compile_ours(src, arch=arch))
        assert not res.hazards
        assert got == manual
    wrong, _ = _mma_unpacked_out(theirs_unpacked.output)
    assert wrong != manual                          # the departure, pinned
    listing = oracle.nvdisasm(theirs_unpacked.output)
    lo = re.search(r"LDG\.E\.64 R(\d+),", listing)
    hmma = re.search(r"HMMA\.1688\.F16 R\d+, R\d+, R\d+, R(\d+) ", listing)
    assert lo and hmma
    assert re.search(rf"MOV R{hmma.group(1)}, R{lo.group(1)} ", listing)    # C[0] := the low half


NARROW_PAIR_PACK = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
 .reg .b16 %h<3>; .reg .b32 %r<9>; .reg .b64 %d<2>;
 ld.param.u64 %d0, [out]; ld.param.u64 %d1, [in];
 ld.global.u32 %r8, [%d1]; ld.global.u32 %r1, [%d1+4]; ld.global.u16 %h1, [%d1+8];
 {convert}
 and.b16 %h2, %h1, 0xff;
 mov.b32 %r5, {{%h0, %h2}};
 st.global.b16 [%d0], %h0; st.global.b16 [%d0+4], %h2; st.global.b32 [%d0+8], %r5;
 ret;
}}
"""
# (arch, PTX version, the conversion, its inputs %r8/%r1, the pair it gives by the manual)
NARROW_PAIRS = [
    # e4m3 of the f16x2 pair (1.0, 2.0): 1.0 = 0 0111 000, 2.0 = 0 1000 000; high half first
    ("sm_89", "8.1", "cvt.rn.satfinite.e4m3x2.f16x2 %h0, %r8;", (0x3C004000, 0), 0x3840),
    # e5m2 of the f32 pair a = 1.0, b = 2.0 (a to the upper byte): 0 01111 00, 0 10000 00
    ("sm_90a", "8.1", "cvt.rn.satfinite.e5m2x2.f32 %h0, %r8, %r1;", (0x3F800000, 0x40000000), 0x3C40),
    # ue8m0 (2^(e-127)) of the bf16x2 pair (1.0, 4.0), rounded up: 127 and 129
    ("sm_100a", "9.1", "cvt.rp.ue8m0x2.bf16x2 %h0, %r8;", (0x3F804080, 0), 0x7F81),
]


@pytest.mark.parametrize("arch,version,convert,inputs,pair", NARROW_PAIRS)
def test_narrow_pair_packed_under_a_16bit_value_keeps_that_value(arch, version, convert, inputs, pair):
    """A ptxas 13.5.37 departure (branch fuzz35's corner group, seed 1012 of `--features
    int32,corner,fp6` on sm_100a: `mismatch: cvt.rn.satfinite.relu.e2m1x2.bf16x2`, the
    e2m1 value zero-extended into %h2). `mov.b32 %r5, {%h0, %h2}` (PTX ISA, mov: the first
    register is the low half) of an fp8/fp6/ue8m0 pair %h0 and a 16-bit ALU result %h2: ptxas
    writes the pair with `F2FP...MERGE_C Rx, ..., Rx` into %h2's own register (the pair low,
    %h2 above it: %r5 right), copies Rx onto itself and stores Rx's low half as %h2, so %h2
    reads the pair. With %h2 loaded (`ld.global.u8`) ptxas extracts it with `PRMT 0x7632`
    and is right. Ours gives the manual's three values; ptxas's %h2 is the pair, pinned.
    Seen with every F2FP that merges (fp8 on sm_89/sm_90, fp6 and ue8m0 on sm_100a). On an
    H200 (session 35, ptxas's `.target sm_90` cubin of the e5m2 case, launched through the
    driver, out filled with 0xa5): bytes 403ca5a5 403ca5a5 403c3400, i.e. %h0 0x3c40, %h2
    0x3c40 (the departure on silicon), %r5 0x00343c40 (MERGE_C puts C's low half above the
    pair, as the emulator has it): the emulator's values for ptxas's cubin."""
    import re
    src = NARROW_PAIR_PACK.format(arch=arch, version=version, convert=convert)
    words = [inputs[0], inputs[1], 0x1234]
    ours, theirs = _run_both(src, words, out_words=3, arch=arch)
    assert ours == [pair, 0x34, 0x34 << 16 | pair]                  # the manual
    assert theirs[0] == pair and theirs[2] == 0x34 << 16 | pair
    assert theirs[1] == pair                                       # the departure, pinned
    listing = oracle.cuobjdump_sass(oracle.ptxas(src, arch).output)
    merge = re.search(r"F2FP\.[\w.]*MERGE_C[\w.]* (R\d+), [^;]*\b\1 ;", listing)   # into %h2's register
    r = merge.group(1)
    assert re.search(rf"\b(IMAD\.MOV\.U32 {r}, RZ, RZ, {r}|MOV {r}, {r}) ;", listing[merge.end():])


# S64_OF_AN_F32_SET_WITH_A_SQRT's kernel, the set's result stored as its low byte
BYTE_OF_AN_F32_SET_WITH_A_SQRT = S64_OF_AN_F32_SET_WITH_A_SQRT.replace(
    "    cvt.s64.u32 %d1, %r1;\n    st.global.b64 [%d2], %d1;\n",
    "    cvt.u16.u8 %h0, %r1;\n    st.global.b16 [%d2], %h0;\n")


@pytest.mark.parametrize("target", ["sm_75", "sm_100"])
def test_byte_of_an_f32_set_result_is_zero_when_the_kernel_has_a_sqrt(target):
    """The same departure read through a byte: `cvt.u16.u8` of a true `set...f32` result takes
    the low byte of 1.0f (0x3f800000), 0; ptxas 13.5.37, where the kernel has an f64 slow path,
    wrote the set as the integer 1 and gives 1. Branch fuzz35's sm_75 tuning run, seed
    47300172 (`set.eq.or.f32.b16` of a register with itself, the byte converted beside a
    `.func` with `rcp.rm.f64`). Without the sqrt both give 0."""
    src = BYTE_OF_AN_F32_SET_WITH_A_SQRT.replace(HEAD, f".version 8.8\n.target {target}\n.address_size 64\n")
    sqrt = [np.float64(2.0)]
    ours, theirs = _run_both(src, [0x7000], params=sqrt, out_words=1, arch=target)
    assert ours == [0]
    assert theirs == [1]                                           # the departure, pinned
    without = src.replace("    sqrt.rm.f64 %d1, %d0;\n", "")
    assert _run_both(without, [0x7000], params=sqrt, out_words=1, arch=target) == [[0]] * 2
