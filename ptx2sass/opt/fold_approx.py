"""The value ptxas gives an approximate f32 function of an immediate (`rsqrtf(32.0f)` in an
attention kernel's scale): ptxas 13.5.37 evaluates rsqrt/rcp/sqrt/ex2/lg2/sin/cos `.approx`
of a constant at compile time, correctly rounded, instead of issuing the MUFU; the MUFU's
own approximation differs in the last bits, so run-time evaluation gave other answers.

Measured on ptxas (`.approx` with and without `.ftz`, 154 inputs each: specials, denormals,
random bit patterns): a NaN result is never folded (NaN inputs, negative square roots),
nor lg2 of zero, nor tanh at all; under `.ftz` denormal inputs and results are zeros, and
sin/cos read a denormal input as zero even without it. Where ptxas's choice was not seen
(a denormal result without `.ftz`: ex2 near -127 came out one unit off correct rounding)
nothing is folded and the MUFU runs as before. Nor is sin/cos of 2^23 revolutions or more
(the MUFU's prescaled argument, FMUL.RZ by 1/(2 pi)): there the unit gives 0 and ptxas's
exact fold is a known departure from it (fuzz seed 36005150, ptx2sass/fuzz/departures.py),
so ours keeps the unit's answer."""
from __future__ import annotations

import math
import struct

FUNCTIONS = {
    "rsqrt": lambda x: math.inf if x == 0 and math.copysign(1.0, x) > 0 else
    -math.inf if x == 0 else 0.0 if x == math.inf else 1.0 / math.sqrt(x),
    "rcp": lambda x: math.copysign(math.inf, x) if x == 0 else 1.0 / x,
    "sqrt": lambda x: math.sqrt(x) if x != math.inf else math.inf,
    "ex2": lambda x: 0.0 if x == -math.inf else math.inf if x >= 1024 else 0.0 if x < -1100 else 2.0 ** x,
    "lg2": lambda x: math.inf if x == math.inf else math.log2(x),
    "sin": math.sin,
    "cos": math.cos,
}
SMALLEST_NORMAL = 2.0 ** -126
INV_TWO_PI_F32 = 0.15915493667125701904     # the f32 prescale of sin/cos (isel/floating.py's trig)
UNIT_REVOLUTIONS = 2.0 ** 23                # from here on the unit's sine and cosine are 0


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _bits(value: float) -> int:
    """`value` rounded to the nearest f32 (overflow to infinity), as bits."""
    try:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return 0x7F800000 if value > 0 else 0xFF800000


def folded_bits(opcode: str, modifiers: tuple, ty: str, bits: int) -> int | None:
    """ptxas's compile-time result (f32 bits) for `opcode.modifiers.ty` of the immediate
    `bits`, or None where ptxas leaves the instruction to run time (or was not measured)."""
    if ty != "f32" or opcode not in FUNCTIONS or "approx" not in modifiers \
            or set(modifiers) - {"approx", "ftz"}:
        return None
    ftz = "ftz" in modifiers
    x = _f32(bits)
    if math.isnan(x):
        return None
    if abs(x) < SMALLEST_NORMAL and (ftz or opcode in ("sin", "cos")):
        x = math.copysign(0.0, x)
    if opcode == "lg2" and x == 0:
        return None
    if opcode in ("rsqrt", "sqrt", "lg2") and x < 0:
        return None
    # the product of two f32s is exact in a double, so this is the RZ product's own test
    if opcode in ("sin", "cos") and not abs(x) * INV_TWO_PI_F32 < UNIT_REVOLUTIONS:
        return None
    result = FUNCTIONS[opcode](x)
    if math.isnan(result):
        return None
    out = _bits(result)
    if 0 < abs(_f32(out)) < SMALLEST_NORMAL:
        if not ftz:
            return None
        out &= 0x80000000
    return out
