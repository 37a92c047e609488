"""A launch runs its arithmetic under one "ignore" error state (emu/launch.py `fp_quiet`), not one
per handler call (emu/fp.py): FP32 add/mul/fma on overflowing, infinite, NaN and denormal
inputs, on few and many lanes (the generic handlers, then the specialised forms on later
launches), raise no NumPy warning with warnings as errors, and give IEEE 754's results:
add/mul as NumPy's float32 arithmetic, fma as the exact value rounded to nearest even
(Fractions), NaN as the GPU's canonical 0x7fffffff."""
import warnings
from fractions import Fraction

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import run
from ptx2sass.emu.loader import load_program
from tools.emu_testing import cubin_listing_decoder

PTX = r"""
.version 8.0
.target sm_89
.address_size 64
.visible .entry arith(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 out, .param .u32 n)
{
    .reg .u32 %r<4>; .reg .u64 %rd<12>; .reg .f32 %f<8>; .reg .pred %p1;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c]; ld.param.u64 %rd4, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mad.lo.u32 %r2, %r3, 32, %r2;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd5, %r2, 4;
    add.u64 %rd6, %rd1, %rd5; ld.global.f32 %f1, [%rd6];
    add.u64 %rd7, %rd2, %rd5; ld.global.f32 %f2, [%rd7];
    add.u64 %rd8, %rd3, %rd5; ld.global.f32 %f3, [%rd8];
    add.rn.f32 %f4, %f1, %f2;
    mul.rn.f32 %f5, %f1, %f2;
    fma.rn.f32 %f6, %f1, %f2, %f3;
    mul.wide.u32 %rd9, %r2, 12; add.u64 %rd10, %rd4, %rd9;
    st.global.f32 [%rd10], %f4; st.global.f32 [%rd10+4], %f5; st.global.f32 [%rd10+8], %f6;
DONE:
    ret;
}
"""

EDGES = np.array([0.0, -0.0, 1.0, -1.5, 3.4028235e38, -3.4028235e38, 1.7e38, np.inf, -np.inf, np.nan,
                  1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 2.0 ** 100, 2.0 ** -100, 65504.0, 1e30],
                 dtype=np.float32)

F32_MAX = Fraction(float(np.finfo(np.float32).max))


def _fma_reference(a, b, c) -> np.float32:
    """a*b + c exactly, rounded to nearest even FP32 (infinities and NaN by IEEE 754)."""
    a, b, c = float(a), float(b), float(c)
    if any(np.isnan(x) for x in (a, b, c)):
        return np.float32(np.nan)
    if np.isinf(a) or np.isinf(b):
        if a == 0 or b == 0:
            return np.float32(np.nan)
        prod_sign = np.sign(a) * np.sign(b)
        if np.isinf(c) and np.sign(c) != prod_sign:
            return np.float32(np.nan)
        return np.float32(prod_sign * np.inf)
    if np.isinf(c):
        return np.float32(c)
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:       # exact zero: +0 unless both addends are -0 (round to nearest)
        neg = (np.signbit(a) != np.signbit(b)) if c == 0 and np.signbit(c) else False
        return np.float32(-0.0 if neg and (a * b == 0) else 0.0)
    # round to FP32 by hand: scale to a 24-bit integer mantissa
    sign = -1 if x < 0 else 1
    m = abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    while Fraction(2) ** e > m:
        e -= 1
    while Fraction(2) ** (e + 1) <= m:
        e += 1
    e = max(e, -126)                               # denormals: fixed exponent
    scaled = m / Fraction(2) ** (e - 23)
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q & 1):
        q += 1
    val = Fraction(q) * Fraction(2) ** (e - 23)
    if val > F32_MAX:
        return np.float32(sign * np.inf)
    return np.float32(sign * float(val))


@pytest.fixture(scope="module")
def cubin():
    r = oracle.ptxas(PTX, "sm_89")
    assert r.ok, r.stderr
    return r.output


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    g, w = got.view(np.uint32), want.astype(np.float32).view(np.uint32)
    nan = np.isnan(want)
    return bool(np.all(np.where(nan, g == 0x7FFFFFFF, g == w)))


@pytest.mark.parametrize("lanes", [1, 5, 8, 30, 200])
def test_fp32_edges_raise_no_warning_and_round_as_ieee(cubin, lanes):
    rng = np.random.default_rng(lanes)
    a = rng.choice(EDGES, lanes)
    b = rng.choice(EDGES, lanes)
    c = rng.choice(EDGES, lanes)
    a[:3], b[:3], c[:3] = [3.4028235e38, np.inf, 0.0][:lanes], [2.0, 0.0, 1e-45][:lanes], [0.0, 1.0, -0.0][:lanes]
    with np.errstate(all="ignore"):
        want_add = a + b
        want_mul = a * b
    want_fma = np.array([_fma_reference(x, y, z) for x, y, z in zip(a, b, c)], dtype=np.float32)
    program = load_program(cubin, "arith", cubin_listing_decoder(cubin))
    for launch in range(4):        # generic handlers first, specialised forms from the third
        out = np.zeros(3 * lanes, np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            run(cubin, "arith", (-(-lanes // 32),), (32,), [a, b, c, out, np.uint32(lanes)],
                hazard_check=False, program=program)
        got = out.reshape(lanes, 3)
        assert _same(got[:, 0], want_add), launch
        assert _same(got[:, 1], want_mul), launch
        assert _same(got[:, 2], want_fma), launch


def test_the_launch_state_is_errstate_ignore_and_goes_back():
    from ptx2sass.emu.launch import fp_quiet
    with np.errstate(all="ignore"):
        want = np.geterr()
    for outer in ({}, {"all": "raise"}, {"over": "warn", "invalid": "raise", "divide": "ignore"}):
        with np.errstate(**outer):
            before = np.geterr()
            for _ in range(2):                      # made once, then the kept state
                with fp_quiet():
                    assert np.geterr() == want
                    with np.errstate(invalid="raise"):          # an inner state still rules
                        with pytest.raises(FloatingPointError):
                            np.sqrt(np.array([-1.0]))
                    assert np.geterr() == want
                assert np.geterr() == before
