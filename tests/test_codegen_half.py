"""f16/f16x2 arithmetic (add, sub, mul, fma, neg, abs; bf16 fma/neg/abs) and 16-bit integer
mad: our cubin against ptxas's in the emulator, bit for bit, over special values and random
bits."""
import pytest

from codegen_harness import run_both

SCALAR = ["add.f16", "add.rn.ftz.f16", "sub.f16", "sub.sat.f16", "mul.f16", "mul.ftz.sat.f16"]
PACKED = ["add.f16x2", "sub.ftz.f16x2", "mul.rn.f16x2"]


@pytest.mark.parametrize("op", SCALAR)
def test_half_binary(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 16, 2, 16)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", PACKED)
def test_half2_binary(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 32, 2, 32, values=[
        0x3C00BC00, 0x7C00FC00, 0x7E000001, 0x80000000, 0x03FF8001, 0x7BFF3555])
    assert (ours == theirs).all()


@pytest.mark.parametrize("op,bits", [("fma.rn.f16", 16), ("fma.rn.ftz.sat.f16", 16),
                                     ("fma.rn.f16x2", 32), ("fma.rn.bf16", 16),
                                     ("fma.rn.bf16x2", 32)])
def test_half_fma(op, bits):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1, %a2;", bits, 3, bits)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op,bits", [("neg.f16", 16), ("abs.f16", 16), ("neg.ftz.f16x2", 32),
                                     ("abs.bf16", 16), ("neg.bf16x2", 32)])
def test_half_sign(op, bits):
    ours, theirs, _ = run_both(f"{op} %o, %a0;", bits, 1, bits)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["mad.lo.u16", "mad.lo.s16"])
def test_mad_lo_16(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1, %a2;", 16, 3, 16)
    assert (ours == theirs).all()


def test_ex2_f16_is_the_mufu_f16_form():
    ours, theirs, _ = run_both("ex2.approx.f16 %o, %a0;", 16, 1, 16)
    assert (ours == theirs).all()
