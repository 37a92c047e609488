"""Correct rounding of exact values to f32/f64 in each IEEE rounding mode, by integer
arithmetic on fractions.Fraction (independent of the emulator's emu/fp.py): the reference
the emulator's arithmetic and the directed-rounding division/reciprocal/square root are
tested against. With `ftz`, a result whose magnitude is below the smallest normal after
rounding (as if the exponent range had no lower end) becomes a zero of the same sign."""
from __future__ import annotations

import math
from fractions import Fraction

# bits: (significand precision, smallest normal exponent, largest exponent)
FORMATS = {32: (24, -126, 127), 64: (53, -1022, 1023)}


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def _round(e: int, floor_at, neg: bool, bits: int, mode: str, ftz: bool) -> float:
    """The rounding of a positive value v whose floor(log2 v) is e; floor_at(q) gives
    (floor(v / 2^q), the sign of v / 2^q - floor - 1/2, whether v / 2^q is an integer)."""
    p, emin, emax = FORMATS[bits]
    q = (e if ftz else max(e, emin)) - (p - 1)
    n, half, exact = floor_at(q)
    if not exact:
        up = {"RN": half > 0 or half == 0 and n % 2 == 1, "RZ": False, "RM": neg, "RP": not neg}[mode]
        n += up
    value = n * Fraction(2) ** q
    if value >= Fraction(2) ** (emax + 1):
        away = mode == "RN" or mode == ("RM" if neg else "RP")
        result = math.inf if away else float((2 ** p - 1) * Fraction(2) ** (emax - p + 1))
    elif ftz and value < Fraction(2) ** emin:
        result = 0.0
    else:
        result = math.ldexp(n, q)
    return -result if neg else result


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def round_exact(x: Fraction, bits: int, mode: str, ftz: bool = False) -> float:
    """x (nonzero) rounded to the format."""
    m = abs(x)

    def floor_at(q):
        scaled = m / Fraction(2) ** q
        n = scaled.numerator // scaled.denominator
        return n, _sign(scaled - n - Fraction(1, 2)), scaled == n
    return _round(_floor_log2(m), floor_at, x < 0, bits, mode, ftz)


def round_sqrt(x: Fraction, bits: int, mode: str, ftz: bool = False) -> float:
    """sqrt(x) (x > 0) rounded to the format."""
    def floor_at(q):
        y = x / Fraction(4) ** q
        n = math.isqrt(y.numerator // y.denominator)
        return n, _sign(y - (n + Fraction(1, 2)) ** 2), Fraction(n * n) == y
    return _round(_floor_log2(x) // 2, floor_at, False, bits, mode, ftz)
