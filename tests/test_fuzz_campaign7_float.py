"""Float/half/conversion wrong answers of fuzz campaign 7 (docs/fuzz/campaign-7.md) that are
not ours to fix in the compiler: what the PTX ISA manual defines, what ptx2sass computes, and
where ptxas 13.5.37's cubin computes something else (a ptxas miscompile the fuzzer found; the
emulator runs that cubin as written). Campaign 7's abs.bf16x2 mismatch (seed 845643: the abs of
an fma.sat.f32 result dropped) is the miscompile tests/test_fuzz.py already pins for add.sat. Expected values come from the manual's definition
(exact arithmetic / NumPy); each ptxas check pins the SASS that differs, so a ptxas that
changes its code makes the test fail and the note gets revisited. Also the one compiler bug
among them that a fuzz regression file does not cover on its own (neg.f64 of +0)."""
import struct

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

HEAD = """.version 8.5
.target sm_89
.address_size 64
"""


def _run(cubin, out_words: int, inp: np.ndarray, dtype=np.uint32) -> np.ndarray:
    out = np.zeros(out_words, dtype)
    run(cubin, "k", (1,), (1,), [out, inp.copy()], hazard_check=False)
    return out


def _both(ptx: str, out_words: int, inp: np.ndarray, dtype=np.uint32):
    ours = _run(ptx2sass.compile(ptx), out_words, inp, dtype)
    theirs_cubin = oracle.ptxas(ptx).output
    return ours, _run(theirs_cubin, out_words, inp, dtype), oracle.nvdisasm(theirs_cubin)


NEG_ZERO = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<4>;
    ld.param.u64 %d0, [out];
    neg.ftz.f32 %r0, 0f00000000;
    neg.f32 %r1, 0f00000000;
    neg.f64 %d1, 0d0000000000000000;
    st.global.b32 [%d0], %r0;
    st.global.b32 [%d0+4], %r1;
    st.global.b64 [%d0+8], %d1;
    ret;
}
"""


def test_neg_of_positive_zero_is_negative_zero():
    """neg flips the sign bit, so neg(+0) is -0 (f32, f32.ftz and f64). An immediate 0 became
    RZ, whose integer negation is a no-op: FADD RZ, -RZ gave +0 (campaign 7 seed 845089)."""
    f32, f64 = struct.unpack("<I", struct.pack("<f", -0.0))[0], struct.unpack("<Q", struct.pack("<d", -0.0))[0]
    want = [f32, f32, f64 & 0xFFFFFFFF, f64 >> 32]
    ours, theirs, _ = _both(NEG_ZERO, 4, np.zeros(4, np.uint32))
    assert list(ours) == want
    assert list(theirs) == want


SAT_AFTER_INT_SAT = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    ld.global.u32 %r1, [%d1+4];
    add.sat.s32 %r2, %r0, %r1;
    cvt.rn.ftz.sat.f16.f32 %h0, %r2;
    st.global.b16 [%d0], %h0;
    ret;
}
"""


def test_ptxas_drops_float_saturation_after_an_integer_add_sat():
    """cvt.rn.ftz.sat.f16.f32 clamps to [0, 1] and flushes a NaN to +0 (PTX ISA, cvt: `.sat`).
    Its source here is the bits add.sat.s32 wrote: 0x7fffffff + 0xffff saturates to
    0x7fffffff, an f32 NaN, so the result is +0. ptxas 13.5.37 takes the integer add's
    saturation for the float one and leaves out the HADD2.SAT it writes after F2FP
    otherwise (with add.s32 it is there), giving the NaN 0x7fff (campaign 7 seed 842077)."""
    inp = np.array([0x7FFFFFFF, 0xFFFF], np.uint32)
    ours, theirs, sass = _both(SAT_AFTER_INT_SAT, 1, inp, np.uint16)
    assert int(ours[0]) == 0x0000
    assert "HADD2.SAT" not in sass and "F2FP.F16.F32.PACK_AB" in sass
    assert int(theirs[0]) == 0x7FFF
    assert "HADD2.SAT" in oracle.nvdisasm(oracle.ptxas(SAT_AFTER_INT_SAT.replace("add.sat.s32", "add.s32")).output)


UNPACK_OF_NARROW_LOAD = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<4>;
    .reg .b32 %r<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u8 %r0, [%d1];
    mov.b32 {%h0, %h2}, %r0;
    max.u16 %h3, %h2, 1;
    st.global.b16 [%d0], %h3;
    ret;
}
"""


def test_ptxas_takes_the_low_half_for_the_high_half_of_an_unpacked_narrow_load():
    """`mov.b32 {lo, hi}, r` puts r's bits 16..31 in hi; after ld.global.u8 they are 0, so
    max.u16(hi, 1) = 1. ptxas 13.5.37 uses the loaded register itself (IMNMX.U32 R, R_load,
    0x1) and gives 0xf for the byte 0xf (campaign 7 seed 845604, max.xorsign.abs.bf16 fed by
    rem.u16 of that value; with ld.u32 or when lo and hi are also stored ptxas is right)."""
    ours, theirs, sass = _both(UNPACK_OF_NARROW_LOAD, 2, np.array([0x0F], np.uint32), np.uint16)
    assert int(ours[0]) == 1
    assert "PRMT" not in sass
    assert int(theirs[0]) == 0xF


SUST_B8_OF_F16 = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 surf)
{
    .reg .b16 %h<2>;
    .reg .b32 %r<2>;
    .reg .b64 %d<3>;
    ld.param.u64 %d1, [in];
    ld.param.u64 %d2, [surf];
    ld.global.b16 %h1, [%d1];
    ld.global.u32 %r0, [%d1+4];
    cvt.rn.f16.s16 %h0, %h1;
    sust.b.1d.b8.trap [%d2, {%r0}], %h0;
    ret;
}
"""


@pytest.mark.parametrize("producer", ["cvt.rn.f16.s16 %h0, %h1;", "mov.b16 %h0, %h1;"])
def test_ptxas_converts_an_f16_register_stored_by_sust_b8(producer):
    """sust.b stores unformatted bits: a .b8 element is the register's low byte. When the
    16-bit register holds an f16 that an instruction computed, ptxas 13.5.37 converts its
    value to an integer first (F2I.U8.F16.TRUNC.NTZ) and stores that byte (campaign 7: the
    sust.b.*.b8 and tex.1d.v4.s32.f32 mismatches, seeds 840622, 841655 …); for a register
    that only moved bits it stores them as they are. ptx2sass stores the low byte."""
    ptx = SUST_B8_OF_F16.replace("cvt.rn.f16.s16 %h0, %h1;", producer)
    sass = oracle.nvdisasm(oracle.ptxas(ptx).output)
    ours = oracle.nvdisasm(ptx2sass.compile(ptx))
    assert "F2I" not in ours
    assert ("F2I.U8.F16.TRUNC.NTZ" in sass) == producer.startswith("cvt")
