"""Packed half-precision (F16x2, BF16x2) arithmetic: each register holds a low and a high
half; operand selectors `.H0_H0`/`.H1_H1` broadcast one half, `.H0_NH1` reads (-high, low), `.F32`
reads an FP32 value."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptx2sass.encoder.model import Imm, Reg

from . import fp
from .ops_float import fcompare
from .ops_int import compare_combine
from .errors import EmuFault
from .registry import semantics

U32 = np.uint32


def _kind(mods):
    return "bf16" if any(m.startswith("BF16") for m in mods) else "f16"


def _halves(w, op, kind):
    """(low, high) of a packed operand as float64 arrays."""
    if isinstance(op, Imm) and op.text is None:
        bits = np.array([op.value & 0xFFFFFFFF], dtype=U32)
    elif isinstance(op, Imm):
        v = np.array([fp.f32(w.r(op))[0]], dtype=np.float64)
        return v, v
    else:
        bits = w.r(op)
    sfx = getattr(op, "suffix", ())
    if "F32" in sfx:
        v = _f32_operand_to_half(fp.f32(bits).astype(np.float64), kind)
        lo = hi = v
    else:
        lo = fp.half_to_f64((bits & U32(0xFFFF)).astype(np.uint16), kind)
        hi = fp.half_to_f64((bits >> U32(16)).astype(np.uint16), kind)
        if "H0_H0" in sfx:
            hi = lo
        elif "H1_H1" in sfx:
            lo = hi
        elif "H0_NH1" in sfx:
            # the pair times i: (-high, low). ptxas writes __hcmadd's cross terms as
            # `HFMA2 R7, R3.H1_H1, R3.H0_NH1, R0`, right only with this reading
            lo, hi = -hi, lo
    if getattr(op, "abs", False):
        lo, hi = np.abs(lo), np.abs(hi)
    if getattr(op, "neg", False):
        lo, hi = -lo, -hi
    return lo, hi


def _f32_operand_to_half(v: np.ndarray, kind: str) -> np.ndarray:
    """An `.F32` source of an HADD2/HMUL2/HFMA2 is narrowed to the instruction's half type
    toward zero, subnormals kept: ptxas 13.5 writes sm_75's cvt.rz.f16.f32 (with or without
    .ftz/.sat) as `HADD2 R, R.F32, -RZ.H0_H0` and cvt.rn as F2F.F16.F32, so only the
    truncating reading makes its code right (fuzz campaign 15's 27000663: the emulator
    rounded to nearest, 0x3808 where cvt.rz gives 0x3807)."""
    return fp.half_to_f64(fp.f64_to_half_bits(np.asarray(v, np.float64), kind, "RZ"), kind)


F16_MIN_NORMAL = 2.0 ** -14


def _flush(x, kind, mods):
    """`.FTZ`: F16 subnormals become zeros of their sign (inputs and results; an H200:
    add.ftz.f16 of tiny values gives 0x0000, set.eq.ftz.f16 of two subnormals is true)."""
    if "FTZ" not in mods or kind != "f16":
        return x
    x = np.asarray(x, dtype=np.float64)
    return np.where((np.abs(x) < F16_MIN_NORMAL) & (x != 0), np.copysign(0.0, x), x)


def _operands(s):
    """Destination and sources; two trailing immediates are one packed (high, low) source."""
    ops = list(s.ins.operands)
    out = [ops[0]]
    rest = ops[1:]
    i = 0
    while i < len(rest):
        op = rest[i]
        if isinstance(op, Imm) and i + 1 < len(rest) and isinstance(rest[i + 1], Imm) \
                and not (isinstance(rest[i + 1], Reg)):
            out.append(("pair", op, rest[i + 1]))
            i += 2
        else:
            out.append(op)
            i += 1
    return out[0], out[1:]


def _read(w, op, kind, mods=()):
    lo, hi = _read_raw(w, op, kind)
    if "F32" in getattr(op, "suffix", ()):
        return lo, hi
    return _flush(lo, kind, mods), _flush(hi, kind, mods)


def _read_raw(w, op, kind):
    if isinstance(op, tuple):
        _, hi_op, lo_op = op
        def val(imm):
            if imm.text is not None:
                from ptx2sass.encoder.sass_text import float_value
                return float_value(imm)
            return float(fp.half_to_f64(np.array([imm.value & 0xFFFF], np.uint16), kind)[0])
        return np.array([val(lo_op)]), np.array([val(hi_op)])
    return _halves(w, op, kind)


def _pack(w, d, lo, hi, kind, mods, mask):
    if "SAT" in mods:      # NaN and -0 saturate to +0 (HADD2.F32.SAT too: sm_75's cvt.sat.f32.f16)
        lo = np.where(lo > 0, np.minimum(lo, 1.0), 0.0)
        hi = np.where(hi > 0, np.minimum(hi, 1.0), 0.0)
    if "F32" in mods:   # result is a single FP32 (HADD2.F32 converts f16 → f32)
        r = fp.narrow_f64(lo)
        w.w(d, fp.canonicalise_f32(r), mask)
        return
    if "RELU" in mods:     # negative results (-0 too) become +0; NaN stays NaN (canonical)
        lo = np.where(np.signbit(lo) & ~np.isnan(lo), 0.0, lo)
        hi = np.where(np.signbit(hi) & ~np.isnan(hi), 0.0, hi)
    l = _flush_bits(fp.f64_to_half_bits(np.asarray(lo, np.float64), kind).astype(U32), kind, mods)
    h = _flush_bits(fp.f64_to_half_bits(np.asarray(hi, np.float64), kind).astype(U32), kind, mods)
    w.w(d, (h << U32(16)) | l, mask)


def _flush_bits(h, kind, mods):
    """`.FTZ` on an F16 result: a subnormal (rounded) result becomes a zero of its sign."""
    if "FTZ" not in mods or kind != "f16":
        return h
    return np.where((h & U32(0x7C00)) == 0, h & U32(0x8000), h)


def _fused(x, y, z):
    """x*y+z carried rounded-to-odd in FP64 (the product of two halves is exact)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return fp.add_rto(np.asarray(x * y, np.float64), np.asarray(z, np.float64))


@semantics("HADD2", vector=True)
def op_hadd2(w, s, active, mask):
    kind = _kind(s.ins.modifiers)
    d, (a, b) = _operands(s)
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    _pack(w, d, fp.add_rto(*np.broadcast_arrays(al, bl)), fp.add_rto(*np.broadcast_arrays(ah, bh)),
          kind, s.ins.modifiers, mask)


@semantics("HMUL2", vector=True)
def op_hmul2(w, s, active, mask):
    kind = _kind(s.ins.modifiers)
    d, (a, b) = _operands(s)
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    _pack(w, d, al * bl, ah * bh, kind, s.ins.modifiers, mask)


@semantics("HFMA2", vector=True)
def op_hfma2(w, s, active, mask):
    kind = _kind(s.ins.modifiers)
    d, (a, b, c) = _operands(s)
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    cl, ch = _read(w, c, kind, s.ins.modifiers)
    if "OOB" in s.ins.modifiers:
        # fma.rn.oob: an input that is the tensor unit's out-of-bounds NaN gives 0; which NaN
        # that is, the model does not know: other inputs compute as plain HFMA2
        lanes = np.broadcast_to(mask, (w.width,))
        if any(np.any(np.broadcast_to(np.isnan(v), (w.width,))[lanes]) for v in (al, ah, bl, bh, cl, ch)):
            raise EmuFault("HFMA2.OOB with a NaN input is not modelled")
    _pack(w, d, _fused(al, bl, cl), _fused(ah, bh, ch), kind, s.ins.modifiers, mask)


def _unsigned_view(op):
    """The operand without its |.|/- modifiers (a packed immediate pair has none)."""
    return op if isinstance(op, tuple) else replace(op, abs=False, neg=False)


@semantics("HMNMX2", vector=True)
def op_hmnmx2(w, s, active, mask):
    kind = _kind(s.ins.modifiers)
    d, (a, b, p) = _operands(s)
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    use_min = w.pred(p)

    mods = s.ins.modifiers

    def pick(x, y):
        x, y = np.broadcast_arrays(x, y)
        x_less = (x < y) | ((x == y) & np.signbit(x) & ~np.signbit(y))
        r = np.where(use_min, np.where(x_less, x, y), np.where(x_less, y, x))
        r = np.where(np.isnan(x), y, np.where(np.isnan(y), x, r))
        if "NAN" in mods:         # .NAN: a NaN operand gives NaN
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, r)
        return r

    lo, hi = pick(al, bl), pick(ah, bh)
    if "XORSIGN" in mods:       # |a|, |b| compared; the result takes the xor of their signs
        sal, sah = _read(w, _unsigned_view(a), kind)
        sbl, sbh = _read(w, _unsigned_view(b), kind)
        neg_lo = np.signbit(sal) ^ np.signbit(sbl)
        neg_hi = np.signbit(sah) ^ np.signbit(sbh)
        lo = np.where(np.isnan(lo), lo, np.where(neg_lo, -np.abs(lo), np.abs(lo)))
        hi = np.where(np.isnan(hi), hi, np.where(neg_hi, -np.abs(hi), np.abs(hi)))
    _pack(w, d, lo, hi, kind, mods, mask)


@semantics("VHMNMX", vector=True)
def op_vhmnmx(w, s, active, mask):
    """sm_90's three-input packed-half min/max (the predicate picks min when true). A NaN
    input is ignored unless `.NAN`, which makes any NaN the result; `.XORSIGN` compares
    magnitudes and gives the result the XOR of the inputs' signs."""
    mods = s.ins.modifiers
    kind = _kind(mods)
    d, (a, b, c, p) = _operands(s)
    use_min = w.pred(p)
    lanes = [_read(w, x, kind, mods) for x in (a, b, c)]

    def pick(xs):
        xs = list(np.broadcast_arrays(*xs))
        sign = None
        if "XORSIGN" in mods:
            sign = np.signbit(xs[0]) ^ np.signbit(xs[1]) ^ np.signbit(xs[2])
            xs = [np.abs(x) for x in xs]
        r = xs[0]
        for x in xs[1:]:
            less = (x < r) | ((x == r) & np.signbit(x) & ~np.signbit(r))
            more = (x > r) | ((x == r) & ~np.signbit(x) & np.signbit(r))
            better = np.where(use_min, less, more)
            r = np.where(np.isnan(r), x, np.where(np.isnan(x), r, np.where(better, x, r)))
        if "NAN" in mods:
            r = np.where(np.isnan(xs[0]) | np.isnan(xs[1]) | np.isnan(xs[2]), np.nan, r)
        if sign is not None:
            r = np.where(sign, -np.abs(r), np.abs(r))
        return r

    _pack(w, d, pick([l[0] for l in lanes]), pick([l[1] for l in lanes]), kind, mods, mask)


@semantics("HSET2", vector=True)
def op_hset2(w, s, active, mask):
    mods = s.ins.modifiers
    kind = _kind(mods)
    d, (a, b, p) = _operands(s)
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    pc = w.pred(p)
    lo, _ = compare_combine(mods, fcompare(mods, al, bl), pc)
    hi, _ = compare_combine(mods, fcompare(mods, ah, bh), pc)
    one = 0x3F80 if kind == "bf16" else 0x3C00
    t = U32(one) if "BF" in mods else U32(0xFFFF)
    res = (np.where(hi, t, U32(0)) << U32(16)) | np.where(lo, t, U32(0))
    w.w(d, res.astype(U32), mask)


@semantics("HSETP2", vector=True)
def op_hsetp2(w, s, active, mask):
    mods = s.ins.modifiers
    kind = _kind(mods)
    pd, rest = _operands(s)       # an immediate source is a (high, low) pair of operands
    pd2, a, b, p = rest[:4]
    al, ah = _read(w, a, kind, s.ins.modifiers)
    bl, bh = _read(w, b, kind, s.ins.modifiers)
    pc = w.pred(p)
    lo, _ = compare_combine(mods, fcompare(mods, al, bl), pc)
    hi, _ = compare_combine(mods, fcompare(mods, ah, bh), pc)
    if "H_AND" in mods:
        w.wp(pd, lo & hi, mask)
        w.wp(pd2, ~(lo & hi), mask)
    else:
        w.wp(pd, lo, mask)
        w.wp(pd2, hi, mask)
