"""The narrow float formats of Blackwell's F2FP (cvt with .e2m1x2, .e2m3x2, .e3m2x2,
.ue8m0x2), from their definitions (OCP Microscaling Formats v1.0, and the PTX ISA's cvt):

- E2M1 (fp4), E2M3 and E3M2 (fp6): sign, E exponent bits with bias 2^(E-1)-1, M mantissa
  bits, subnormals when the exponent field is zero, no infinity and no NaN (the all-ones
  exponent holds normal values). Narrowing rounds to nearest even; .SATFINITE (which ptxas
  requires) clamps anything beyond the largest value, infinities included, to it, and
  makes a NaN the positive largest value (the PTX ISA's cvt, `.satfinite`: "For .e2m1x2,
  .e2m3x2, .e3m2x2 ... destination formats NaN results are converted to positive
  MAX_NORM").
- E8 (ue8m0, the MX block scale): 8 unsigned exponent bits, value 2^(e-127), code 0xff NaN;
  narrowing rounds toward zero (.RZ) or up (.RP); a NaN stays NaN (0xff); .SATFINITE makes
  any input whose magnitude, sign ignored, exceeds 2^127 the positive 2^127 (0xfe): the
  manual's "a positive MAX_NORM in .ue8m0x2 for which the destination sign is not
  supported". Widening gives the value, and the NaN code a NaN (the manual's conversion of a
  NaN): the canonical one, 0x7fff in bf16, as the H200 widens an fp8 NaN to f16 (its bits
  are the one thing here the manual leaves open; the fuzzer keeps them from integer readers).

What the hardware does with inputs the manual leaves open (zero, or a negative value no
larger than 2^127 in magnitude, or any negative without .SATFINITE, into ue8m0; a positive
value below 2^-127 with .RZ) is not known here (no Blackwell part to measure): the model
faults on them rather than guess."""
from __future__ import annotations

import math
from fractions import Fraction

from .errors import EmuFault

# F2FP's name -> (exponent bits, mantissa bits)
SIGNED_FORMATS = {"E2M1": (2, 1), "E2M3": (2, 3), "E3M2": (3, 2)}
NARROW_NAMES = frozenset(SIGNED_FORMATS) | {"E8"}
E8_MAX_NORM = math.ldexp(1.0, 127)


def _decode_signed(code: int, fmt: str) -> float:
    e_bits, m_bits = SIGNED_FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign = -1.0 if code >> (e_bits + m_bits) & 1 else 1.0
    e, m = code >> m_bits & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp((1 << m_bits) + m, e - bias - m_bits)


# each format's non-negative codes in value order (code order is value order)
_POSITIVE = {fmt: [(_decode_signed(c, fmt), c) for c in range(1 << sum(SIGNED_FORMATS[fmt]))]
             for fmt in SIGNED_FORMATS}


def decode(code: int, fmt: str) -> float:
    """The value of one narrow code (E8: 2^(e-127))."""
    if fmt == "E8":
        if code == 0xFF:
            return math.nan
        return math.ldexp(1.0, code - 127)
    return _decode_signed(code, fmt)


def encode(x: float, fmt: str, satfinite: bool, relu: bool = False, rounding: str = "RN") -> int:
    """One value narrowed to `fmt`'s code: fp4/fp6 to nearest even (ties to the even code),
    ue8m0 toward zero or up; .RELU makes negatives (and -0) +0 first."""
    if relu and not math.isnan(x) and math.copysign(1.0, x) < 0:
        x = 0.0
    if fmt == "E8":
        return _encode_e8(x, satfinite, rounding)
    if not satfinite:
        raise EmuFault(f"F2FP.{fmt} without .SATFINITE is not modelled")
    e_bits, m_bits = SIGNED_FORMATS[fmt]
    grid = _POSITIVE[fmt]
    if math.isnan(x):
        return grid[-1][1]                         # .satfinite: the positive largest value
    sign = (1 << (e_bits + m_bits)) if math.copysign(1.0, x) < 0 else 0
    mag = abs(x)
    if mag >= grid[-1][0]:
        return sign | grid[-1][1]                  # the largest value (infinity too)
    exact = Fraction(mag)
    for (lo, lo_code), (hi, hi_code) in zip(grid, grid[1:]):
        if lo <= mag <= hi:
            below, above = exact - Fraction(lo), Fraction(hi) - exact
            if below < above or below == above and lo_code % 2 == 0:
                return sign | lo_code
            return sign | hi_code
    raise AssertionError(mag)


def _encode_e8(x: float, satfinite: bool, rounding: str) -> int:
    if math.isnan(x):
        return 0xFF
    if satfinite and abs(x) > E8_MAX_NORM:
        return 0xFE                    # sign ignored: the positive largest scale, 2^127
    if x <= 0:
        raise EmuFault("F2FP.E8 of zero or a negative value is not modelled")
    if math.isinf(x):
        return 0xFF
    m, e = math.frexp(x)               # x = m * 2^e, 0.5 <= m < 1: floor(log2 x) = e - 1
    floor_log = e - 1
    exact = m == 0.5
    k = floor_log if rounding == "RZ" or exact else floor_log + 1
    if k < -127:
        if rounding == "RP":
            return 0x00                # up to the smallest scale, 2^-127
        raise EmuFault("F2FP.E8.RZ of a value below 2^-127 is not modelled")
    if k > 127:
        return 0xFE if satfinite else 0xFF
    return k + 127
