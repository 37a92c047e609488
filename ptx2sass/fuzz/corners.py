"""Corner values of the narrow float formats, and the `corner` group's statements
(sm_100a/sm_120a: fp8/fp6/fp4/ue8m0/f16/bf16 conversions and packed half arithmetic fed
those values).

Random inputs rarely land on what decides a narrow conversion: its largest value and the
tie just above it, the smallest subnormal and the ties around it, the smallest normal,
ties at 1.0, signed zeros, infinities and NaNs. Each statement here picks, per thread, a
corner of the instruction's own format or the register's own value (`selp` on a pool
predicate, so ptxas cannot fold the conversion), converts it and canonicalises any NaN
result that an integer instruction could later read (the manual leaves the bits of a
converted NaN open).

Values the manual leaves open are not drawn: zero, negatives and values below 2^-127
into ue8m0 (the sources are made positive and at least 2^-127 first: `ue8m0_positive`);
the manual fixes the others (cvt's `.satfinite`: a NaN into fp4/fp6 is +MAX_NORM, an
overflow into ue8m0 0xfe whatever its sign)."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

# exponent bits, mantissa bits, whether the all-ones exponent holds values (no inf/NaN
# there: fp4/fp6, and e4m3 but for its S.1111.111 NaN)
FORMATS = {"e2m1": (2, 1), "e2m3": (2, 3), "e3m2": (3, 2), "e4m3": (4, 3), "e5m2": (5, 2),
           "f16": (5, 10), "bf16": (8, 7)}
LARGEST = {"e2m1": Fraction(6), "e2m3": Fraction(15, 2), "e3m2": Fraction(28), "e4m3": Fraction(448),
           "e5m2": Fraction(57344), "f16": Fraction(65504), "bf16": Fraction(2 ** 8 - 1, 2 ** 7) * 2 ** 127}
F32_NANS = (0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF)


def _f32(x: Fraction | float) -> int | None:
    """The f32 bits of a value f32 holds exactly (None otherwise)."""
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return int(np.float32(x).view(np.uint32))
    with np.errstate(over="ignore"):
        v = np.float32(float(x))
    if not np.isfinite(v) or Fraction(float(v)) != Fraction(x):
        return None
    bits = int(v.view(np.uint32))
    return bits | 0x80000000 if isinstance(x, float) and math.copysign(1.0, x) < 0 else bits


@functools.cache
def values(fmt: str) -> tuple[Fraction | float, ...]:
    """The corner values of `fmt` (a conversion's destination), as exact numbers and the
    floats ±0.0, ±inf and NaN."""
    e_bits, m_bits = FORMATS[fmt]
    bias = 2 ** (e_bits - 1) - 1
    sub = Fraction(2) ** (1 - bias - m_bits)              # the smallest subnormal
    normal = Fraction(2) ** (1 - bias)                    # the smallest normal
    top = LARGEST[fmt]
    ulp_top = Fraction(2) ** (math.floor(math.log2(top)) - m_bits)   # the ulp of the largest value
    half_one = Fraction(1, 2 ** (m_bits + 1))             # half an ulp at 1.0
    out = [top, -top, top + ulp_top / 2, -(top + ulp_top / 2), top + ulp_top, top + ulp_top / 4,
           sub, -sub, sub / 2, -sub / 2, 3 * sub / 2, sub / 2 + sub / 64, sub / 4,
           normal, normal - sub / 2, normal - sub, -normal,
           1 + half_one, 1 + 3 * half_one, -(1 + half_one), 1 - half_one / 2, Fraction(3, 2) * normal,
           0.0, -0.0, math.inf, -math.inf]
    return tuple(out)


@functools.cache
def f32_corners(fmt: str) -> tuple[int, ...]:
    """f32 bit patterns of `fmt`'s corners, and NaNs of either sign and payload."""
    bits = [b for b in (_f32(v) for v in values(fmt)) if b is not None]
    return tuple(dict.fromkeys(bits + list(F32_NANS)))


@functools.cache
def half_corners(fmt: str, half: str) -> tuple[int, ...]:
    """16-bit patterns (`half`: f16 or bf16) of `fmt`'s corners that `half` holds exactly, and
    NaNs and infinities of `half`."""
    out = []
    for v in values(fmt):
        b = _f32(v)
        if b is None:
            continue
        if half == "bf16":
            if b & 0xFFFF == 0:
                out.append(b >> 16)
            continue
        with np.errstate(over="ignore"):
            h = np.float32(np.uint32(b).view(np.float32)).astype(np.float16)
        if float(h) == float(np.uint32(b).view(np.float32)) or (math.isnan(float(h)) and b in F32_NANS):
            hb = int(h.view(np.uint16))
            if float(h) == 0.0 and b >> 31:
                hb |= 0x8000
            out.append(hb)
    specials = (0x7C00, 0xFC00, 0x7E00, 0xFE01) if half == "f16" else (0x7F80, 0xFF80, 0x7FC0, 0xFFC1)
    return tuple(dict.fromkeys(out + list(specials)))


# ue8m0 (2^(e-127)): the scale each side of the range and of a power of two, the NaN;
# every value at least 2^-127 and positive (the manual leaves the others open)
UE8_F32 = (0x00400000, 0x00400001, 0x00600000, 0x00800000, 0x00800001, 0x3F800000, 0x3F800001,
           0x3F7FFFFF, 0x40400000, 0x7F000000, 0x7F000001, 0x7F7FFFFF, 0x7E800000, 0x7F800000,
           0x7FC00000, 0x7F800001)
UE8_BF16 = (0x0040, 0x0041, 0x0060, 0x0080, 0x0081, 0x3F80, 0x3F81, 0x3F7F, 0x7F00, 0x7F01, 0x7F7F,
            0x7F80, 0x7FC0, 0x7F81)
# codes to widen: each format's extremes, NaN codes (fp8), ue8m0's ends and its NaN
CODES = {"e2m1": (0x0, 0x1, 0x7, 0x8, 0x9, 0xF), "e2m3": (0x00, 0x01, 0x1F, 0x20, 0x21, 0x3F, 0x08),
         "e3m2": (0x00, 0x01, 0x1F, 0x20, 0x21, 0x3F, 0x04), "e4m3": (0x00, 0x01, 0x7E, 0x7F, 0x80, 0xFE, 0xFF, 0x08),
         "e5m2": (0x00, 0x01, 0x7B, 0x7C, 0x7D, 0xFC, 0xFF, 0x80), "ue8m0": (0x00, 0x01, 0x7F, 0xFE, 0xFF)}
# packed half arithmetic: largest, smallest subnormal and normal, ties at 1, halves of the
# largest (sums that overflow), signed zeros, infinities, NaNs
PACKED = {"f16": (0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x0400, 0x03FF, 0x3C00, 0x3C01, 0x7800, 0x7BFE,
                  0x1400, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01),
          "bf16": (0x7F7F, 0xFF7F, 0x0001, 0x8001, 0x0080, 0x007F, 0x3F80, 0x3F81, 0x7F00, 0x7F7E,
                   0x3B80, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1)}


def _mix(b, corner: int, src: str, bits: int = 32) -> tuple[str, str]:
    """(lines, register): per thread either the corner or the source's own value."""
    t = b.tmp(f"b{bits}")
    return f"selp.b{bits} {t}, {corner:#x}, {src}, {b.src('pred')};\n", t


def _pair(b, rng, table: tuple[int, ...], src: str) -> tuple[str, str]:
    """A packed pair register: each half a corner of `table` or the source's own half."""
    hi, lo = rng.choice(table), rng.choice(table)
    return _mix(b, hi << 16 | lo, src)


def ue8m0_positive(b, src: str, bf16: bool) -> tuple[str, str]:
    """(lines, register): `src` with its sign(s) cleared and anything below 2^-127 raised to
    it (as unsigned integers, which order the positive floats), NaNs and infinities kept."""
    t, m = b.tmp("b32"), b.tmp("b32")
    if bf16:
        return (f"and.b32 {t}, {src}, 0x7fff7fff;\nmov.b32 {m}, 0x00400040;\n"
                f"max.u16x2 {t}, {t}, {m};\n", t)
    return f"and.b32 {t}, {src}, 0x7fffffff;\nmax.u32 {t}, {t}, 0x00400000;\n", t


def op_corner(g, ctx):
    """A conversion to or from a narrow format, or packed half arithmetic, on corner values."""
    from ptx2sass.fuzz.generator import Builder, canonical_nan
    from ptx2sass.fuzz.newarch_ops import _build
    from ptx2sass.fuzz.program import Reg
    rng = g.rng
    b = Builder(g, ctx)
    relu = ".relu" if rng.random() < 0.3 else ""
    form = rng.choice(("narrow", "narrow", "narrow_half", "ue8", "ue8bf", "widen", "widen_ue8",
                       "half_pack", "packed", "packed"))
    if form == "narrow":                   # f32 pair -> fp4/fp6/fp8/f16x2/bf16x2
        fmt = rng.choice(("e2m1", "e2m3", "e3m2", "e4m3", "e5m2", "f16", "bf16"))
        la, a = _mix(b, rng.choice(f32_corners(fmt)), b.src("b32", "f32"))
        lb, c = _mix(b, rng.choice(f32_corners(fmt)), b.src("b32", "f32"))
        if fmt == "e2m1":
            q = f"$t{len(b.temps)}"
            b.temps.append(Reg("b8", "b8", role="temp"))
            d = b.dst("b16")
            key = f"cvt.rn.satfinite{relu}.e2m1x2.f32"
            return _build(b, f"{la}{lb}{key} {q}, {a}, {c};\ncvt.u16.u8 {d}, {q};", key, guard_ok=False)
        if fmt in ("f16", "bf16"):
            sat = rng.choice(("", ".satfinite"))
            d = b.dst("b32", f"{fmt}x2")
            key = f"cvt.rn{relu}{sat}.{fmt}x2.f32"
            return _build(b, f"{la}{lb}@@{key} {d}, {a}, {c};" + canonical_nan(b, d, f"{fmt}x2"), key)
        d = b.dst("b16")
        key = f"cvt.rn.satfinite{relu}.{fmt}x2.f32"
        return _build(b, f"{la}{lb}@@{key} {d}, {a}, {c};", key)
    if form == "narrow_half":              # f16x2/bf16x2 -> fp4/fp6/fp8
        half = rng.choice(("f16", "bf16"))
        fmt = rng.choice(("e2m1", "e2m3", "e3m2", "e4m3", "e5m2"))
        la, a = _pair(b, rng, half_corners(fmt, half), b.src("b32", f"{half}x2"))
        if fmt == "e2m1":
            q = f"$t{len(b.temps)}"
            b.temps.append(Reg("b8", "b8", role="temp"))
            d = b.dst("b16")
            key = f"cvt.rn.satfinite{relu}.e2m1x2.{half}x2"
            return _build(b, f"{la}{key} {q}, {a};\ncvt.u16.u8 {d}, {q};", key, guard_ok=False)
        d = b.dst("b16")
        key = f"cvt.rn.satfinite{relu}.{fmt}x2.{half}x2"
        return _build(b, f"{la}@@{key} {d}, {a};", key)
    if form in ("ue8", "ue8bf"):           # -> ue8m0 (positive sources only)
        rnd = rng.choice((".rz", ".rp"))
        sat = rng.choice(("", ".satfinite"))
        d = b.dst("b16")
        if form == "ue8":
            la, a = _mix(b, rng.choice(UE8_F32), b.src("b32", "f32"))
            lb, c = _mix(b, rng.choice(UE8_F32), b.src("b32", "f32"))
            pa, a = ue8m0_positive(b, a, False)
            pb, c = ue8m0_positive(b, c, False)
            key = f"cvt{rnd}{sat}.ue8m0x2.f32"
            return _build(b, f"{la}{lb}{pa}{pb}@@{key} {d}, {a}, {c};", key)
        la, a = _pair(b, rng, UE8_BF16, b.src("b32", "bf16x2"))
        pa, a = ue8m0_positive(b, a, True)
        key = f"cvt{rnd}{sat}.ue8m0x2.bf16x2"
        return _build(b, f"{la}{pa}@@{key} {d}, {a};", key)
    if form == "widen":                    # fp4/fp6/fp8 codes -> f16x2
        fmt = rng.choice(("e2m1", "e2m3", "e3m2", "e4m3", "e5m2"))
        codes = CODES[fmt]
        d = b.dst("b32", "f16x2")
        key = f"cvt.rn{relu}.f16x2.{fmt}x2"
        if fmt == "e2m1":
            corner = rng.choice(codes) << 4 | rng.choice(codes)
            la, a = _mix(b, corner, b.src("b16"), 16)
            q = f"$t{len(b.temps)}"
            b.temps.append(Reg("b8", "b8", role="temp"))
            text = f"{la}cvt.u8.u16 {q}, {a};\n{key} {d}, {q};"
        else:
            la, a = _mix(b, rng.choice(codes) << 8 | rng.choice(codes), b.src("b16"), 16)
            if fmt in ("e2m3", "e3m2"):
                t = b.tmp("b16")
                la += f"and.b16 {t}, {a}, 0x3f3f;\n"
                a = t
            text = f"{la}@@{key} {d}, {a};"
        return _build(b, text + canonical_nan(b, d, "f16x2"), key, guard_ok="@@" in text)
    if form == "widen_ue8":                # ue8m0 codes -> bf16x2
        codes = CODES["ue8m0"]
        la, a = _mix(b, rng.choice(codes) << 8 | rng.choice(codes), b.src("b16"), 16)
        d = b.dst("b32", "bf16x2")
        key = "cvt.rn.bf16x2.ue8m0x2"
        return _build(b, f"{la}@@{key} {d}, {a};" + canonical_nan(b, d, "bf16x2"), key)
    if form == "half_pack":                # f16x2/bf16x2 from two f32 halves' corners, one f32
        half = rng.choice(("f16", "bf16"))
        la, a = _mix(b, rng.choice(f32_corners(half)), b.src("b32", "f32"))
        d = b.dst("b16", half)
        rnd = rng.choice((".rn", ".rz"))
        key = f"cvt{rnd}{relu}.{half}.f32"
        return _build(b, f"{la}@@{key} {d}, {a};" + canonical_nan(b, d, half), key)
    half = rng.choice(("f16", "bf16"))       # packed half arithmetic
    t = f"{half}x2"
    op = rng.choice(("add", "sub", "mul", "fma", "fma"))
    la, a = _pair(b, rng, PACKED[half], b.src("b32", t))
    lb, c = _pair(b, rng, PACKED[half], b.src("b32", t))
    mods = ".rn"
    if op == "fma":
        mods += rng.choice(("", ".relu") if half == "bf16" else ("", ".relu", ".sat", ".ftz", ".ftz.sat"))
        le, e = _pair(b, rng, PACKED[half], b.src("b32", t))
        d = b.dst("b32", t)
        key = f"fma{mods}.{t}"
        return _build(b, f"{la}{lb}{le}@@{key} {d}, {a}, {c}, {e};" + canonical_nan(b, d, t), key)
    if half == "f16":
        mods += rng.choice(("", ".sat", ".ftz", ".ftz.sat"))
    d = b.dst("b32", t)
    key = f"{op}{mods}.{t}"
    return _build(b, f"{la}{lb}@@{key} {d}, {a}, {c};" + canonical_nan(b, d, t), key)
