"""Stochastic rounding (`cvt.rs`, Blackwell's `F2FP ... .RS`), from the PTX ISA's definition:
the result is rounded toward or away from zero by the carry out of the integer addition of
the supplied random bits to the bits of the mantissa the conversion discards.

Read here as: with n random bits r and the magnitude |x| = (q + f) ulp (q the truncated
result in units of the destination's last place at |x|, 0 <= f < 1, subnormal results
included), the magnitude rounds away from zero exactly when floor(f * 2^n) + r >= 2^n, i.e.
the random bits are added to the top n discarded bits (for f32 -> f16/bf16 normal results,
13/16 bits, that is all of them). Then .RELU (negatives and -0 to +0, as F2FP's other forms),
.SATFINITE (beyond the largest finite value, infinities too, to it), NaN as the other F2FP
forms give it (fp6/fp4 have none: the model faults). Not hardware-checked (no Blackwell
part here): where the top-n alignment matters (more discarded bits than random ones) the
hardware may differ.

Which random bits an element gets (the manual's cvt; F2FP's Rc): F16 the 13 low bits of its
16-bit half (a: Rc[31:16], b: Rc[15:0]), BF16 the 16 bits of its half; E4M3/E5M2/E2M3/E3M2
both elements the 16 bits Rc[31:16] (the manual: "upper 16 bits are used for operands a,
b"); E2M1 a: Rc[31:24], b: Rc[15:8] (8 bits each)."""
from __future__ import annotations

import math
from fractions import Fraction

from .errors import EmuFault

# format -> (exponent bits, mantissa bits, largest finite value, has infinity, NaN code or None)
FORMATS = {
    "F16": (5, 10, 65504.0, True, 0x7FFF),
    "BF16": (8, 7, math.ldexp(255, 120), True, 0x7FFF),
    "E4M3": (4, 3, 448.0, False, 0x7F),
    "E5M2": (5, 2, 57344.0, True, 0x7F),
    "E2M3": (2, 3, 7.5, False, None),
    "E3M2": (3, 2, 28.0, False, None),
    "E2M1": (2, 1, 6.0, False, None),
}
# the random bits an element of each format takes
RANDOM_BITS = {"F16": 13, "BF16": 16, "E4M3": 16, "E5M2": 16, "E2M3": 16, "E3M2": 16, "E2M1": 8}


def _code(mag: Fraction, fmt: str) -> int:
    """The code (without sign) of a magnitude the format holds exactly (inf: > largest)."""
    e_bits, m_bits, largest, has_inf, _ = FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    if mag > Fraction(largest):
        assert has_inf
        return ((1 << e_bits) - 1) << m_bits
    if mag == 0:
        return 0
    emin = 1 - bias
    e = max(math.floor(math.log2(mag)), emin)
    if Fraction(2) ** e > mag:                       # (log2 rounding)
        e -= 1
    e = max(e, emin)
    mant = mag / Fraction(2) ** (e - m_bits)
    assert mant.denominator == 1, (mag, fmt)
    mant = int(mant)
    if mant < 1 << m_bits:                           # subnormal
        return mant
    return (e + bias) << m_bits | (mant - (1 << m_bits))


def round_stochastic(x: float, fmt: str, random: int, satfinite: bool, relu: bool) -> int:
    """x (an FP32 value) to `fmt`'s code, rounded by `random` (RANDOM_BITS[fmt] bits)."""
    e_bits, m_bits, largest, has_inf, nan = FORMATS[fmt]
    n = RANDOM_BITS[fmt]
    sign_bit = 1 << (e_bits + m_bits) if fmt not in ("F16", "BF16") else 0x8000
    if math.isnan(x):
        if nan is None:
            raise EmuFault(f"F2FP.{fmt}.RS of a NaN is not modelled")
        return nan
    if relu and math.copysign(1.0, x) < 0:
        x = 0.0
    sign = sign_bit if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        if satfinite or not has_inf:
            return sign | _code(Fraction(largest), fmt)
        return sign | _code(Fraction(largest) * 2, fmt)
    mag = abs(Fraction(x))
    bias = (1 << (e_bits - 1)) - 1
    if mag == 0:
        return sign
    e = max(math.floor(math.log2(mag)), 1 - bias)
    while Fraction(2) ** e > mag and e > 1 - bias:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    ulp = Fraction(2) ** (e - m_bits)
    scaled = mag / ulp
    q = scaled.numerator // scaled.denominator
    top = math.floor((scaled - q) * (1 << n))
    if top + (random & ((1 << n) - 1)) >= 1 << n:
        q += 1
    result = q * ulp
    if result > Fraction(largest):
        if satfinite or not has_inf:
            if not satfinite:
                raise EmuFault(f"F2FP.{fmt}.RS overflow without .SATFINITE is not modelled")
            result = Fraction(largest)
        else:
            return sign | _code(Fraction(largest) * 2, fmt)
    return sign | _code(result, fmt)


def element_random(fmt: str, c: int) -> tuple[int, int]:
    """The random bits of the high (a) and low (b) element of one F2FP.RS from Rc."""
    if fmt == "E2M1":
        return c >> 24 & 0xFF, c >> 8 & 0xFF
    if fmt in ("F16", "BF16"):
        return c >> 16 & 0xFFFF, c & 0xFFFF
    return c >> 16 & 0xFFFF, c >> 16 & 0xFFFF


def f2fp_rs(fmt: str, a: float, b: float, c: int, satfinite: bool, relu: bool) -> int:
    """One `F2FP[.SATFINITE][.RELU].<fmt>.F32.PACK_AB[_MERGE_C].RS Rd, Ra, Rb, Rc` word.
    F16/BF16 (PACK_AB): a in the high half, b in the low one. The narrow formats
    (PACK_AB_MERGE_C) chain: ptxas converts {a, b, e, f} as F2FP(a, b, rbits) -> t, then
    F2FP(e, f, t), so each also moves Rc's unused random bits up for the next: fp8/fp6 put
    Rc[15:0] in the high half above the pair's 16 bits, fp4 Rc's bytes 0 and 2 into bytes 1
    and 3 above the pair's byte (bits 23:16 zero). That data flow is the only one that gives
    the manual's random bits to each of the four elements with ptxas's code; not
    hardware-checked."""
    ra, rb = element_random(fmt, c)
    hi = round_stochastic(a, fmt, ra, satfinite, relu)
    lo = round_stochastic(b, fmt, rb, satfinite, relu)
    if fmt in ("F16", "BF16"):
        return hi << 16 | lo
    if fmt == "E2M1":
        return (c & 0x00FF00FF) << 8 | hi << 4 | lo
    return (c & 0xFFFF) << 16 | hi << 8 | lo
