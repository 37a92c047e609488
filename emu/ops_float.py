"""FP32 and FP64 arithmetic, comparisons, MUFU, conversions."""
from __future__ import annotations

import math

from dataclasses import replace

import numpy as np

from ptx2sass.encoder.model import Imm, Reg

from . import fp, mufu_measured, narrow_float, stochastic
from .fp import round_rational_bits
from .errors import EmuFault
from .lanes import PerWarp
from .ops_int import _s64, _u64, compare_combine
from .registry import semantics

U32, U64, I64 = np.uint32, np.uint64, np.int64
M32 = U64(0xFFFFFFFF)


def _prep_mode(step):
    step.aux["mode"] = fp.mode_of(step.ins.modifiers)
    step.aux["ftz"] = "FTZ" in step.ins.modifiers
    step.aux["sat"] = "SAT" in step.ins.modifiers


def _finish32(w, s, d, r, mask):
    if s.aux.get("sat"):
        # NaN and -0 (every value not above zero) saturate to +0 (an H200: `mul.rp.sat.f32`
        # of a negative tiny product gives 0x00000000)
        r = np.where(r > 0, np.minimum(r, np.float32(1)), np.float32(0)).astype(np.float32)
    w.w(d, fp.canonicalise_f32(r), mask)


@semantics("FADD", "UFADD", prepare=_prep_mode, vector=True)
def op_fadd(w, s, active, mask):
    d, a, b = s.ins.operands
    r = fp.fadd32(w.rf(a), w.rf(b), s.aux["mode"], s.aux["ftz"])
    _finish32(w, s, d, r, mask)


_SIGN = {"P": 1.0, "N": -1.0}


@semantics("FSWZADD", vector=True)
def op_fswzadd(w, s, active, mask):
    """FSWZADD[.NDV] d, a, b, SIGNS: per lane of a quad (q = lane % 4), d = sa*a + sb*b
    rounded once (an FADD), the signs letters 2q and 2q+1 of SIGNS: P (+), N (-) or Z (the
    term left out: d = ±b exactly). ptxas's tex.grad code builds a quad's coordinates with
    it: ZPPPZPPP then ZPZPPPPP on (dx, c) and (dy, ·) give c, c+dx, c+dy, c+dx+dy (lane 0
    takes c itself; ptxas reads the sample back from lane 0)."""
    d, a, b, signs = s.ins.operands
    letters = signs.name
    q = w.lane_ids % 4
    av, bv = np.broadcast_to(w.rf(a), q.shape), np.broadcast_to(w.rf(b), q.shape)
    r = np.zeros(q.shape, np.float32)
    for lane in range(4):
        sa, sb = letters[2 * lane], letters[2 * lane + 1]
        here = q == lane
        if sa == "Z" and sb == "Z":
            v = np.zeros(q.shape, np.float32)
        elif sa == "Z":
            v = (bv * np.float32(_SIGN[sb])).astype(np.float32)
        elif sb == "Z":
            v = (av * np.float32(_SIGN[sa])).astype(np.float32)
        else:
            v = fp.fadd32(av * np.float32(_SIGN[sa]), bv * np.float32(_SIGN[sb]), "RN", False)
        r = np.where(here, v, r)
    _finish32(w, s, d, r, mask)


@semantics("FMUL", "UFMUL", prepare=_prep_mode, vector=True)
def op_fmul(w, s, active, mask):
    d, a, b = s.ins.operands
    r = fp.fmul32(w.rf(a), w.rf(b), s.aux["mode"], s.aux["ftz"])
    _finish32(w, s, d, r, mask)


@semantics("FFMA", "UFFMA", prepare=_prep_mode, vector=True)
def op_ffma(w, s, active, mask):
    d, a, b, c = s.ins.operands
    r = fp.ffma32(w.rf(a), w.rf(b), w.rf(c), s.aux["mode"], s.aux["ftz"])
    _finish32(w, s, d, r, mask)


def _min_or_max(a, b, use_min, nan: bool):
    """FMNMX's choice: -0 orders below +0; a NaN operand yields the other one (`nan`: NaN)."""
    a_less = (a < b) | ((a == b) & np.signbit(a) & ~np.signbit(b))
    r = np.where(use_min, np.where(a_less, a, b), np.where(a_less, b, a))
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r)).astype(np.float32)
    if nan:
        r = np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), r).astype(np.float32)
    return r


@semantics("FMNMX3", prepare=_prep_mode, vector=True)
def op_fmnmx3(w, s, active, mask):
    """The minimum (predicate true) or maximum of three (sm_100): FMNMX of FMNMX, which
    gives the same value for every ordering of the operands, NaN and signed zeros included."""
    d, a_op, b_op, c_op, p_op = s.ins.operands
    if "XORSIGN" in s.ins.modifiers:
        raise NotImplementedError("FMNMX3.XORSIGN")
    a, b, c = w.rf(a_op), w.rf(b_op), w.rf(c_op)
    if s.aux["ftz"]:
        a, b, c = fp.flush_f32(a), fp.flush_f32(b), fp.flush_f32(c)
    a, b, c = np.broadcast_arrays(a, b, c)
    use_min = np.broadcast_to(w.pred(p_op), a.shape)
    nan = "NAN" in s.ins.modifiers
    _finish32(w, s, d, _min_or_max(_min_or_max(a, b, use_min, nan), c, use_min, nan), mask)


@semantics("FMNMX", prepare=_prep_mode, vector=True)
def op_fmnmx(w, s, active, mask):
    d, a_op, b_op, p_op = s.ins.operands
    a, b = w.rf(a_op), w.rf(b_op)
    if s.aux["ftz"]:
        a, b = fp.flush_f32(a), fp.flush_f32(b)
    a, b = np.broadcast_arrays(a, b)
    use_min = np.broadcast_to(w.pred(p_op), a.shape)
    mods = s.ins.modifiers
    r = _min_or_max(a, b, use_min, "NAN" in mods)
    if "XORSIGN" in mods:
        # the operands come as |a|, |b|: the result takes the xor of their own signs
        sign = (w.r(replace(a_op, abs=False, neg=False)) ^ w.r(replace(b_op, abs=False, neg=False))) \
            >> np.uint32(31)
        r = np.where(np.isnan(r), r, np.where(sign.astype(bool), -np.abs(r), np.abs(r))).astype(np.float32)
    _finish32(w, s, d, r, mask)


_FCMP = {
    "F": lambda a, b, n: np.zeros(n.shape, bool),
    "T": lambda a, b, n: np.ones(n.shape, bool),
    "LT": lambda a, b, n: a < b, "EQ": lambda a, b, n: a == b, "LE": lambda a, b, n: a <= b,
    "GT": lambda a, b, n: a > b, "NE": lambda a, b, n: (a != b) & ~n, "GE": lambda a, b, n: a >= b,
    "NUM": lambda a, b, n: ~n, "NAN": lambda a, b, n: n,
    "LTU": lambda a, b, n: (a < b) | n, "EQU": lambda a, b, n: (a == b) | n,
    "LEU": lambda a, b, n: (a <= b) | n, "GTU": lambda a, b, n: (a > b) | n,
    "NEU": lambda a, b, n: a != b, "GEU": lambda a, b, n: (a >= b) | n,
}


# the comparisons that a NaN operand makes false (NEU: true) by IEEE 754's rules as is:
# one ufunc (NumPy compares NaN without a floating-point exception)
_FCMP_PLAIN = {"LT": np.less, "EQ": np.equal, "LE": np.less_equal, "GT": np.greater,
               "GE": np.greater_equal, "NEU": np.not_equal}
# unordered ones as the negation of the ordered opposite (a NaN makes that false)
_FCMP_NOT = {"GEU": np.less, "LTU": np.greater_equal, "LEU": np.greater, "GTU": np.less_equal}


def fcompare(mods, a, b):
    cmp = next(m for m in mods if m in _FCMP)
    plain = _FCMP_PLAIN.get(cmp)
    if plain is not None:
        return plain(a, b)
    negated = _FCMP_NOT.get(cmp)
    if negated is not None:
        return ~negated(a, b)
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(invalid="ignore"):
        return _FCMP[cmp](a, b, np.isnan(a) | np.isnan(b))


@semantics("FSETP", "UFSETP", prepare=_prep_mode, vector=True)
def op_fsetp(w, s, active, mask):
    pd, pd2, a_op, b_op, pc_op = s.ins.operands
    a, b = w.rf(a_op), w.rf(b_op)
    if s.aux["ftz"]:
        a, b = fp.flush_f32(a), fp.flush_f32(b)
    p1, p2 = compare_combine(s.ins.modifiers, fcompare(s.ins.modifiers, a, b), w.pred(pc_op))
    w.wp(pd, p1, mask)
    w.wp(pd2, p2, mask)


@semantics("FSET", prepare=_prep_mode, vector=True)
def op_fset(w, s, active, mask):
    d, a_op, b_op, pc_op = s.ins.operands
    a, b = w.rf(a_op), w.rf(b_op)
    if s.aux["ftz"]:
        a, b = fp.flush_f32(a), fp.flush_f32(b)
    p1, _ = compare_combine(s.ins.modifiers, fcompare(s.ins.modifiers, a, b), w.pred(pc_op))
    if "BF" in s.ins.modifiers:
        w.w(d, np.where(p1, U32(0x3F800000), U32(0)), mask)
    else:
        w.w(d, np.where(p1, U32(0xFFFFFFFF), U32(0)), mask)


@semantics("FCHK", vector=True)
def op_fchk(w, s, active, mask):
    """True when a/b may not be computed correctly by the fast reciprocal path (q = a * r,
    then q + r * (a - b * q)): any special or denormal operand, exponents far enough apart
    to overflow or underflow, or a dividend so small (biased exponent below 25) that the
    residual a - b*q falls among the subnormals and loses the bits the correction needs
    (`tests/test_emu_rounding.py`: 1 in ~1000 random quotients came out 1 ulp off). Erring
    towards true is safe: the slow path the compiler branches to is exact."""
    pd, a_op, b_op = s.ins.operands
    a, b = np.broadcast_arrays(w.r(a_op), w.r(b_op))
    ea = (a >> U32(23)) & U32(0xFF)
    eb = (b >> U32(23)) & U32(0xFF)
    a_zero = (a & U32(0x7FFFFFFF)) == 0
    diff = ea.astype(I64) - eb.astype(I64)
    ok = (eb >= 1) & (eb <= 252) & (a_zero | ((ea >= 25) & (ea <= 252) & (diff > -125) & (diff < 126)))
    w.wp(pd, ~ok, mask)


@semantics("FRND", "UFRND", prepare=_prep_mode, vector=True)
def op_frnd(w, s, active, mask):
    d, a_op = s.ins.operands
    mode = s.aux["mode"]
    if "F64" in s.ins.modifiers:
        a = w.rd(a_op)
        r = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](a)
        w.w64(d, fp.propagate_nan_f64(r, w.rd(_unmodified(a_op))), mask)
        return
    if "F16" in s.ins.modifiers:
        # FRND.F16: one half of the source (`.H1` selects the high one), rounded to an
        # integral half; the result is the low half of Rd, the high half zero.
        bits = w.r(a_op)
        if "H1" in getattr(a_op, "suffix", ()):
            bits = bits >> U32(16)
        h = (bits & U32(0xFFFF)).astype(np.uint16).view(np.float16)
        if getattr(a_op, "abs", False):
            h = np.abs(h)
        if getattr(a_op, "neg", False):
            h = -h
        r = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](h).astype(np.float16)
        # a NaN gives the canonical 0x7fff (an H200: cvt.rmi.f16.f16 of 0xffff, run 10's 9300688)
        w.w(d, np.where(np.isnan(r), fp.F16_CANONICAL_NAN, r.view(np.uint16)).astype(U32), mask)
        return
    if "BF16" in s.ins.modifiers:
        # FRND.BF16: as FRND.F16 on a bfloat16 half; an integral bf16 value is exact in f32
        # and back (from 2^7 on every bf16 value is already an integer)
        bits = w.r(a_op)
        if "H1" in getattr(a_op, "suffix", ()):
            bits = bits >> U32(16)
        x = ((bits & U32(0xFFFF)) << U32(16)).astype(U32).view(np.float32)
        r = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](x).astype(np.float32)
        out = (r.view(U32) >> U32(16)).astype(U32)
        w.w(d, np.where(np.isnan(r), U32(fp.BF16_CANONICAL_NAN), out).astype(U32), mask)
        return
    a = w.rf(a_op)
    if s.aux["ftz"]:
        a = fp.flush_f32(a)
    r = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](a).astype(np.float32)
    _finish32(w, s, d, r, mask)


# --------------------------------------------------------------------------- MUFU

def _mufu_prep(step):
    step.aux["fn"] = next(m for m in step.ins.modifiers)


# MUFU.RCP64H/RSQ64H's high word: "extra4" (the exact result rounded to nearest at 24
# fraction bits, then truncated to the 20 the high word holds) fits an H200's 90 results of
# run 5's fuzz 9300143, both 1-higher ones (dropped fractions 0.982 and 0.990 of a unit) and
# all others (the largest 0.943 and 0.919 kept): a threshold between 0.943 and 0.982, of
# which 31/32 is the only power-of-two step; "trunc": the exact high word (before)
RCP64H_ROUNDING = "extra4"


@semantics("MUFU", prepare=_mufu_prep, vector=True)
def op_mufu(w, s, active, mask):
    """Multi-function unit. Results here are the correctly rounded FP32 value of the exact
    function (computed in FP64), with denormal inputs and outputs flushed, as the MUFU does
    (TANH keeps them).
    Hardware is an approximation: RCP/RSQ/SQRT within 1 ulp, EX2/LG2 within 2 ulp,
    SIN/COS within 2^-20.9 absolute on [-pi, pi], TANH within 2^-10.7 relative; programs
    that depend on the exact approximation bits (rare: compilers refine with FFMA) can differ.
    SIN/COS take their argument in revolutions (x/2pi), as ptxas prescales with FMUL.RZ.
    RCP64H/RSQ64H act on the high word of a double and return a high word."""
    d, a_op = s.ins.operands
    fn = s.aux["fn"]
    if fn in ("RCP64H", "RSQ64H"):
        if isinstance(a_op, Imm) and a_op.text is not None and not (a_op.value and "NAN" in a_op.text):
            # a float immediate is a double's high word (`MUFU.RSQ64H R3, 1`: 0x3ff00000)
            from ptx2sass.encoder.fields import float_bits
            hi = np.array([float_bits(a_op.text, "f64h")], dtype=U64)
        else:
            hi = _u64(w.ri(a_op))
        if getattr(a_op, "abs", False):
            hi = hi & U64(0x7FFFFFFF)
        if getattr(a_op, "neg", False):
            hi = hi ^ U64(0x80000000)
        # a subnormal input is flushed to a zero of its sign first (an H200: rsqrt.approx.ftz.f64
        # of 0x000fffffffffffff gave +inf, GPU run 24's fuzz 9400176)
        hi = np.where((hi & U64(0x7FF00000)) == 0, hi & U64(0x80000000), hi)
        x = (hi << U64(32)).view(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = 1.0 / x if fn == "RCP64H" else 1.0 / np.sqrt(x)
        yb = y.view(U64)
        if RCP64H_ROUNDING == "extra4":
            # the H200's high word is the exact result's rounded to nearest with 4 bits more
            # than it holds (24 fraction bits), then truncated: it is one higher where the
            # exact value's dropped low word is at least 31/32 of a unit (RCP64H_ROUNDING)
            yb = np.where(np.isfinite(y), yb + U64(1 << 27), yb)
        out = (yb >> U64(32)).astype(U32)
        # a subnormal result is flushed to a zero of its sign (an H200: rcp.approx.ftz.f64 of
        # a huge value gives 0x80000000 where the exact reciprocal's high word is 0x80040000)
        out = np.where((out & U32(0x7FF00000)) == 0, out & U32(0x80000000), out)
        out = np.where(np.isnan(y), U32(0x7FFFFFFF), out)
        w.w(d, out, mask)
        return
    if "F16x2" in s.ins.modifiers or "BF16x2" in s.ins.modifiers:
        # MUFU.<fn>.F16x2 / .BF16x2 (sm_103's ex2.approx.f16x2 / ex2.approx.ftz.bf16x2): each
        # half of the source as MUFU.<fn>.F16 / .BF16 takes one, the two results packed low
        # and high
        kind = "bf16" if "BF16x2" in s.ins.modifiers else "f16"
        bits = w.r(a_op)
        halves = [_half_result(fn, fp.half_to_f64(((bits >> U32(k)) & U32(0xFFFF)).astype(np.uint16), kind),
                               a_op, kind).astype(U32) << U32(k) for k in (0, 16)]
        w.w(d, halves[0] | halves[1], mask)
        return
    kind = "bf16" if "BF16" in s.ins.modifiers else "f16"
    if "F16" in s.ins.modifiers or "BF16" in s.ins.modifiers:
        # MUFU.<fn>.F16: one half of the source (`.H1`: the high one); the FP16 result goes
        # to the low half of Rd, the high half zero (ptxas packs two with PRMT 0x5410).
        if isinstance(a_op, Imm) and a_op.text is not None and not (a_op.value and "NAN" in a_op.text):
            # a float immediate (`-QNAN`, `1.5`) is the half it spells (its field holds the
            # f16 bits), not the low half of the f32 bits `w.r` would give
            from ptx2sass.encoder.sass_text import float_value
            x = np.array([float_value(a_op)], dtype=np.float64)
        else:
            bits = w.r(a_op)
            if "H1" in getattr(a_op, "suffix", ()):
                bits = bits >> U32(16)
            x = fp.half_to_f64((bits & U32(0xFFFF)).astype(np.uint16), kind)
        w.w(d, _half_result(fn, x, a_op, kind).astype(U32), mask)
        return
    if fn == "TANH":
        # tanh keeps subnormal inputs and results (the PTX manual; an H200: tanh.approx.f32 of
        # a subnormal x gave x, run 11's fuzz 9300822)
        xf = w.rf(a_op)
    else:
        xf = fp.flush_f32(w.rf(a_op))
    model = mufu_measured.MODELS.get(fn)
    if model is not None:
        # EX2/LG2: the H200's own function, measured over every input
        w.w(d, model(fp.bits32(xf)), mask)
        return
    y = _mufu_function(fn, xf.astype(np.float64))
    r = y.astype(np.float32) if fn == "TANH" else fp.flush_f32(y.astype(np.float32))
    bits = fp.canonicalise_f32(r)
    if fn in mufu_measured.CORRECTED:
        # the H200's approximation, measured over every input fraction
        bits = mufu_measured.correct_f32(fn, fp.bits32(xf), bits)
    w.w(d, bits, mask)


def _half_result(fn: str, x, op, kind: str):
    """MUFU.<fn>.F16/.BF16's result bits for the half value(s) `x` of operand `op` (its `|.|`
    and `-` applied first): the H200's measured output where it was measured (EX2, TANH),
    else rounded to f16 or bf16, a NaN the canonical 0x7fff (an H200: ex2/tanh.approx.f16 of
    a NaN)."""
    if getattr(op, "abs", False):
        x = np.abs(x)
    if getattr(op, "neg", False):
        x = -x
    measured = mufu_measured.half_table(fn, kind)
    if measured is not None:
        # the H200's output for every input (a NaN's: 0x7fff)
        return measured[fp.f64_to_half_bits(np.asarray(x, dtype=np.float64), kind)]
    y = _mufu_function(fn, x)
    if kind == "bf16":
        h = fp.f64_to_half_bits(np.asarray(y, dtype=np.float64), "bf16")
        return np.where(np.isnan(y), fp.BF16_CANONICAL_NAN, h)
    with np.errstate(over="ignore"):
        h = y.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(y), fp.F16_CANONICAL_NAN, h)


def _mufu_function(fn: str, x):
    """MUFU's function `fn` of the FP64 values `x` (exact; the caller rounds; under the
    launch's np.errstate, emu/fp.py)."""
    if fn == "RCP":
        return 1.0 / x
    if fn == "RSQ":
        return 1.0 / np.sqrt(x)
    if fn == "SQRT":
        return np.sqrt(x)
    if fn == "EX2":
        return np.exp2(x)
    if fn == "LG2":
        return np.log2(x)
    if fn in ("SIN", "COS"):
        # whole revolutions dropped first (exact: x is an FP32 value): an integral x
        # (every |x| >= 2^23) gives sin 0 and cos 1, as an H200 does
        turns = x - np.floor(x)
        y = np.sin(turns * 2 * math.pi) if fn == "SIN" else np.cos(turns * 2 * math.pi)
        if fn == "SIN":         # a zero result has the sign of x (-0 for a negative whole x)
            y = np.where(turns == 0, np.copysign(0.0, x), y)
        return y
    if fn == "TANH":
        return np.tanh(x)
    raise EmuFault(f"unsupported MUFU function {fn}")


# --------------------------------------------------------------------------- FP64

def _f64_result(w, d, vals, mask, *operands):
    """Write an FP64 result; a NaN takes a NaN source's bits (fp.propagate_nan_f64): the
    register's own, the operand's `-`/`|.|` not applied (an H200: `DADD R8, -RZ, -R4` of a
    NaN R4 gives R4, quieted; abs.f64 keeps a NaN's sign)."""
    raw = [w.rd(_unmodified(op)) for op in operands]
    w.w64(d, fp.propagate_nan_f64(np.asarray(vals, dtype=np.float64), *raw), mask)


def _unmodified(op):
    if getattr(op, "neg", False) or getattr(op, "abs", False):
        return replace(op, neg=False, abs=False)
    return op


def _per_lane(fn, *arrays):
    arrays = np.broadcast_arrays(*arrays)
    return np.array([fn(*vals) for vals in zip(*(a.tolist() for a in arrays))], dtype=np.float64)


def _exact_binop(op, mode):
    from fractions import Fraction

    def f(a, b):
        r = op(a, b)
        if not math.isfinite(a) or not math.isfinite(b) or math.isnan(r):
            return r
        exact = op(Fraction(a), Fraction(b)) if op is not _div else Fraction(a) / Fraction(b)
        if exact == 0:
            if mode == "RM" and op is _add and not (math.copysign(1, a) > 0 < math.copysign(1, b) and a == b == 0):
                return -0.0       # x + (-x), +0 + -0: -0 when rounding toward -inf
            return r
        return fp.round_rational(exact, "f64", mode)
    return f


def _add(a, b):
    return a + b


def _div(a, b):
    return a / b


@semantics("DADD", prepare=_prep_mode, vector=True)
def op_dadd(w, s, active, mask):
    d, a, b = s.ins.operands
    va, vb = w.rd(a), w.rd(b)
    mode = s.aux["mode"]
    if mode == "RN":
        with np.errstate(invalid="ignore", over="ignore"):
            r = va + vb
    else:
        r = _per_lane(_exact_binop(_add, mode), va, vb)
    _f64_result(w, d, r, mask, a, b)


@semantics("DMUL", prepare=_prep_mode, vector=True)
def op_dmul(w, s, active, mask):
    d, a, b = s.ins.operands
    va, vb = w.rd(a), w.rd(b)
    mode = s.aux["mode"]
    if mode == "RN":
        with np.errstate(invalid="ignore", over="ignore", under="ignore"):
            r = va * vb
    else:
        r = _per_lane(_exact_binop(lambda x, y: x * y, mode), va, vb)
    _f64_result(w, d, r, mask, a, b)


@semantics("DFMA", prepare=_prep_mode, vector=True)
def op_dfma(w, s, active, mask):
    d, a, b, c = s.ins.operands
    mode = s.aux["mode"]
    va, vb, vc = w.rd(a), w.rd(b), w.rd(c)
    if mode == "RN" and w.width > 16:          # fewer lanes: Python's ints cost less
        r = fp.fma64_rn(va, vb, vc)
    else:
        r = _per_lane(lambda x, y, z: fp.fma64(x, y, z, mode), va, vb, vc)
    _f64_result(w, d, r, mask, a, b, c)


def _minmax_select(mods, a, b):
    """DSETP.MIN/.MAX, how ptxas builds min/max.f64 on sm_8x (no DMNMX there): the first
    predicate says "the result is a" (a is a number and b is NaN or a orders first, -0
    before +0), the second "both are NaN" (ptxas then returns b with its quiet bit set).
    Read off ptxas's sequence: FSEL/SEL on the first, `@P LOP3 hi | 0x80000` on the second."""
    a, b = np.broadcast_arrays(a, b)
    na, nb = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        if "MIN" in mods:
            first = (a < b) | ((a == b) & np.signbit(a) & ~np.signbit(b))
        else:
            first = (a > b) | ((a == b) & ~np.signbit(a) & np.signbit(b))
    return ~na & (nb | first), na & nb


@semantics("DSETP", vector=True)
def op_dsetp(w, s, active, mask):
    pd, pd2, a_op, b_op, pc_op = s.ins.operands
    mods = s.ins.modifiers
    if "MIN" in mods or "MAX" in mods:
        pick_a, both_nan = _minmax_select(mods, w.rd(a_op), w.rd(b_op))
        combine = next((m for m in ("AND", "OR", "XOR") if m in mods), "AND")
        pc = w.pred(pc_op)
        from .ops_int import _BOOL
        # both results from the sources as they were (a destination may be a source too)
        p1, p2 = _BOOL[combine](pick_a, pc), _BOOL[combine](both_nan, pc)
        w.wp(pd, p1, mask)
        w.wp(pd2, p2, mask)
        return
    p1, p2 = compare_combine(s.ins.modifiers, fcompare(s.ins.modifiers, w.rd(a_op), w.rd(b_op)),
                             w.pred(pc_op))
    w.wp(pd, p1, mask)
    w.wp(pd2, p2, mask)


@semantics("DMNMX", vector=True)
def op_dmnmx(w, s, active, mask):
    d, a_op, b_op, p_op = s.ins.operands
    a, b = np.broadcast_arrays(w.rd(a_op), w.rd(b_op))
    use_min = np.broadcast_to(w.pred(p_op), a.shape)
    r = np.where(use_min, np.fmin(a, b), np.fmax(a, b))
    _f64_result(w, d, r, mask)


# --------------------------------------------------------------------------- conversions

_INT_TYPES = {"U8": (8, False), "S8": (8, True), "U16": (16, False), "S16": (16, True),
              "U32": (32, False), "S32": (32, True), "U64": (64, False), "S64": (64, True)}
_FLOAT_TYPES = ("F16", "F32", "F64", "BF16")


def _conv_types(mods, default_int="S32"):
    ints = [m for m in mods if m in _INT_TYPES]
    floats = [m for m in mods if m in _FLOAT_TYPES]
    return ints, floats


def _read_float(w, op, kind):
    if kind == "F64":
        return w.rd(op)
    if kind in ("F16", "BF16"):
        if isinstance(op, Imm) and op.text is not None and not (op.value and "NAN" in op.text):
            # a float immediate (`F2I.U64.F16.CEIL R4, 6.83203125`) is the half it spells
            # (its field holds the half's bits), not the low half of the f32 bits `w.r` gives
            from ptx2sass.encoder.sass_text import float_value
            v = np.array([float_value(op)], dtype=np.float64)
        else:
            bits = w.r(op)
            sfx = getattr(op, "suffix", ())
            half = (bits >> U32(16)) if "H1" in sfx else (bits & U32(0xFFFF))
            v = fp.half_to_f64(half.astype(np.uint16), "f16" if kind == "F16" else "bf16")
        if getattr(op, "abs", False):
            v = np.abs(v)
        if getattr(op, "neg", False):
            v = -v
        return v
    return w.rf(op).astype(np.float64)


@semantics("F2IP", "UF2IP", prepare=_prep_mode, vector=True)
def op_f2ip(w, s, active, mask):
    """F2IP.U8.F32 Rd, RZ, Ra, RZ: ptxas's form of `cvt.rzi.u8.f32` (the kernels mask the
    low byte of the result). Only the form with both other sources RZ is known; its result
    is the saturated 8-bit conversion of Ra in the low byte (PTX cvt: float-to-integer
    conversions clamp to the destination range, NaN gives 0)."""
    d, b_op, a_op, c_op = s.ins.operands
    if not (getattr(b_op, "is_zero", False) and getattr(c_op, "is_zero", False)):
        raise EmuFault(f"unsupported F2IP form (second and merge sources other than RZ)")
    _f2i(w, s, mask, d, a_op)


@semantics("F2I", "UF2I", prepare=_prep_mode, vector=True)
def op_f2i(w, s, active, mask):
    _f2i(w, s, mask, s.ins.operands[0], s.ins.operands[-1])


def _f2i_nan(src: str, bits: int, signed: bool) -> int:
    """What F2I gives for a NaN (an H200, cuda/cvt_*_to_int and fuzz run 5): from F64, the
    destination's sign bit alone at every width (s32/u32 0x80000000, s16/u16 0x8000, s8/u8
    0x80, 64-bit 0x8000000000000000; signed ones sign-extended in the register); from F32
    and narrower, 0x8000000000000000 into 64 bits and 0 into 32 bits or fewer."""
    if src == "F64" or bits == 64:
        return -(1 << (bits - 1)) if signed else 1 << (bits - 1)
    return 0


def _f2i(w, s, mask, d, a_op):
    mods = s.ins.modifiers
    ints, floats = _conv_types(mods)
    dst = ints[0] if ints else "S32"
    src = floats[0] if floats else "F32"
    x = _read_float(w, a_op, src)
    if s.aux["ftz"] and src == "F32":
        x = fp.flush_f32(x.astype(np.float32)).astype(np.float64)
    mode = s.aux["mode"]
    r = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](x)
    bits, signed = _INT_TYPES[dst]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    nan = _f2i_nan(src, bits, signed)
    vals = []
    for v in np.broadcast_to(r, (r.size,)).tolist():
        if math.isnan(v):
            vals.append(nan)
        elif v <= lo:
            vals.append(lo)
        elif v >= hi:
            vals.append(hi)
        else:
            vals.append(int(v))
    out = np.array([v & ((1 << 64) - 1) for v in vals], dtype=U64)
    if bits == 64:
        w.w64(d, out, mask)
    else:
        w.w(d, (out & M32).astype(U32), mask)


def _i2f(w, s, mask, dst_default="F32"):
    mods = s.ins.modifiers
    d, a_op = s.ins.operands[0], s.ins.operands[-1]
    ints, floats = _conv_types(mods)
    src = ints[0] if ints else "S32"
    dst = floats[0] if floats else dst_default
    bits, signed = _INT_TYPES[src]
    if bits == 64:
        # a 64-bit source's 32-bit immediate is its high word, as a double's is (ptxas's
        # `I2F.U64.RP R10, 0x40000000` converts 2^62 for div.s64 by 2^62)
        raw = np.array([(a_op.value & 0xFFFFFFFF) << 32], dtype=U64) if isinstance(a_op, Imm) \
            else w.r64(a_op)
        vals = raw.astype(I64) if signed else raw
    else:
        # a byte or half-word selector picks the source's bits (`I2F.U8.RZ R0, R4.B1`)
        shift = {"H1": 16, "B1": 8, "B2": 16, "B3": 24}
        at = next((shift[x] for x in getattr(a_op, "suffix", ()) if x in shift), 0)
        raw = (w.r(a_op).astype(np.int64) >> at) & ((1 << bits) - 1)
        vals = np.where(raw >= 1 << (bits - 1), raw - (1 << bits), raw) if signed else raw
    mode = fp.mode_of(mods)
    fmt = {"F32": "f32", "F64": "f64", "F16": "f16", "BF16": "bf16"}[dst]
    exact = bits < 64 or np.all(vals <= _EXACT_IN_F64) and (not signed or np.all(vals >= -_EXACT_IN_F64))
    if exact and (mode == "RN" or fmt in ("f32", "f64")):
        # every value is exact in FP64: rounding that double is rounding the integer (F16
        # and BF16 in a directed mode would go through fractions there too: from the ints)
        x = vals.astype(np.float64)
        out = (x.view(U64) if fmt == "f64" else fp.narrow_f64(x, mode).view(U32) if fmt == "f32"
               else fp.f64_to_half_bits(x, fmt, mode))
    else:
        from fractions import Fraction
        out = [fp.round_rational_bits(Fraction(v), fmt, mode) if v else 0 for v in vals.tolist()]
    if dst == "F64":
        w.w64(d, np.array(out, dtype=U64), mask)
    else:
        w.w(d, np.array(out, dtype=U64).astype(U32), mask)


_EXACT_IN_F64 = 1 << 53


@semantics("I2F", "UI2F", vector=True)
def op_i2f(w, s, active, mask):
    _i2f(w, s, mask)


@semantics("I2FP", "UI2FP", vector=True)
def op_i2fp(w, s, active, mask):
    _i2f(w, s, mask)


@semantics("F2F", "UF2F", prepare=_prep_mode, vector=True)
def op_f2f(w, s, active, mask):
    mods = s.ins.modifiers
    d, a_op = s.ins.operands[0], s.ins.operands[-1]
    floats = [m for m in mods if m in _FLOAT_TYPES]
    dst, src = (floats + ["F32", "F32"])[:2] if len(floats) >= 2 else (floats[0], floats[0])
    x = _read_float(w, a_op, src)
    if s.aux["ftz"] and src == "F32":
        x = fp.flush_f32(x.astype(np.float32)).astype(np.float64)
    mode = s.aux["mode"]
    if any(m in mods for m in ("TRUNC", "FLOOR", "CEIL", "ROUND")) or ("INT" in mods):
        x = {"RN": np.rint, "RZ": np.trunc, "RM": np.floor, "RP": np.ceil}[mode](x)
        mode = "RN"
    nan_bits = _f2f_nan(w, a_op, src, dst)
    if dst == "F64":
        w.w64(d, np.where(np.isnan(x), nan_bits, fp.canonicalise_f64(x)).astype(U64), mask)
    elif dst == "F32":
        r = fp.narrow_f64(x, mode)
        if s.aux["ftz"]:
            r = fp.flush_f32(r)
        w.w(d, np.where(np.isnan(x), nan_bits, fp.canonicalise_f32(r)).astype(U32), mask)
    else:
        h = fp.f64_to_half_bits(x, "f16" if dst == "F16" else "bf16", mode)
        if dst == "F16" and src == "F32":
            # an FP32 NaN narrows to the canonical 0x7fff (an H200: F2F.F16.F32.RP of
            # 0xffff…, run 10's 9300664), where an FP64 one keeps its sign and payload top
            nan_bits = np.full_like(nan_bits, fp.F16_CANONICAL_NAN)
        w.w(d, np.where(np.isnan(x), nan_bits, h).astype(U32), mask)


_FLOAT_FIELDS = {"F64": (64, 52), "F32": (32, 23), "F16": (16, 10), "BF16": (16, 7)}


def _f2f_nan(w, a_op, src: str, dst: str) -> np.ndarray:
    """F2F of a NaN keeps its sign and the top of its payload, quiet bit set (an H200:
    f64 0xfff8000000000001 -> f32 0xffc00000 and f16 0xfe00; f32 0x7fffffff -> f64
    0x7fffffffe0000000)."""
    dbits, dman = _FLOAT_FIELDS[dst]
    if src == "F32":
        sbits, sman = _FLOAT_FIELDS[src]
        raw = w.rf(a_op).view(U32).astype(U64)
    else:       # F64, or a half widened to FP64 (the widening keeps the payload's top bits)
        sbits, sman = _FLOAT_FIELDS["F64"]
        raw = np.asarray(_read_float(w, a_op, src), dtype=np.float64).view(U64)
    sign = (raw >> U64(sbits - 1)) & U64(1)
    man = raw & U64((1 << sman) - 1)
    man = (man >> U64(sman - dman)) if sman >= dman else (man << U64(dman - sman))
    exp = U64((1 << (dbits - 1 - dman)) - 1)
    return (sign << U64(dbits - 1)) | (exp << U64(dman)) | man | U64(1 << (dman - 1))


def _unpack_shift(op) -> int:
    """Where an UNPACK_B source's pair starts: its high half for `.H1`, byte N for `.BN`
    (ptxas's sm_100a `F2FP.F16.E2M1.UNPACK_B R0, R7.B2` widens byte 2 of R7: fuzz 43600275)."""
    for name in getattr(op, "suffix", ()):
        if name == "H1":
            return 16
        if len(name) == 2 and name[0] == "B" and name[1] in "0123":
            return 8 * int(name[1])
    return 0


def _f2fp_fp8(w, s, mask):
    """FP8 pairs: PACK_AB narrows two FP32 (Ra high byte, Rb low byte; _MERGE_C puts Rc's low
    half above them); .F16 UNPACK_B_MERGE_C narrows the two halves of Ra the same way;
    UNPACK_B widens the two FP8 bytes of Rb's low half to F16x2."""
    mods = s.ins.modifiers
    kind = "e4m3" if "E4M3" in mods else "e5m2"
    ops = s.ins.operands
    if "UNPACK_B" in mods and "BF16" in mods:
        return _widen_to_bf16(w, s, mask, 8, lambda code: fp.fp8_decode(code, kind))
    if "UNPACK_B" in mods:
        d, b_op = ops[0], ops[-1]
        b = np.broadcast_to(w.r(b_op), (32,))
        b = b >> U32(_unpack_shift(b_op))
        out = np.zeros(32, dtype=U32)
        for lane in np.flatnonzero(mask).tolist():      # the lanes it writes
            word = 0
            for i in range(2):
                code = int(b[lane]) >> (8 * i) & 0xFF
                v = fp.fp8_decode(code, kind)
                if "RELU" in mods and not math.isnan(v) and math.copysign(1.0, v) < 0:
                    v = 0.0         # .RELU: negative values (and -0) become +0 (an H200)
                h = int(np.float16(v).view(np.uint16)) if not math.isnan(v) else 0x7FFF
                word |= h << (16 * i)
            out[lane] = word
        w.w(d, out, mask)
        return
    sat = "SATFINITE" in mods

    def encode(x: float) -> int:
        if "RELU" in mods and not math.isnan(x) and math.copysign(1.0, x) < 0:
            x = 0.0             # .RELU: negative values (and -0) become +0 before narrowing (an H200)
        return fp.fp8_encode(x, kind, sat)

    out = np.zeros(32, dtype=U32)
    if "UNPACK_B_MERGE_C" in mods:
        # F16 source: the two halves of Ra narrowed (high half to the high byte), Rc's low
        # half above them (cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2)
        d, a_op, c_op = ops[:3]
        a = np.broadcast_to(w.r(a_op), (32,))
        c = np.broadcast_to(w.r(c_op), (32,))
        for lane in np.flatnonzero(mask).tolist():
            word = int(a[lane])
            wide = "BF16" if "BF16" in mods else "F16"     # (.bf16x2 sources: PTX 9.1)
            hi, lo = (_half_value(word >> k & 0xFFFF, wide) for k in (16, 0))
            out[lane] = (int(c[lane]) & 0xFFFF) << 16 | encode(hi) << 8 | encode(lo)
        w.w(d, out, mask)
        return
    d, a_op, b_op = ops[:3]
    a = np.broadcast_to(w.rf(a_op), (32,))
    b = np.broadcast_to(w.rf(b_op), (32,))
    c = np.broadcast_to(w.r(ops[3]), (32,)) if len(ops) > 3 and "PACK_AB_MERGE_C" in mods else np.zeros(32, U32)
    for lane in np.flatnonzero(mask).tolist():          # the lanes it writes
        out[lane] = (int(c[lane]) & 0xFFFF) << 16 | encode(float(a[lane])) << 8 | encode(float(b[lane]))
    w.w(d, out, mask)


def _half_value(bits: int, wide: str) -> float:
    if wide == "BF16":
        return float(np.uint32(bits << 16).view(np.float32))
    return float(np.uint16(bits).view(np.float16))


def _f2fp_narrow(w, s, mask):
    """fp4/fp6/ue8m0 pairs (emu/narrow_float.py has the formats): PACK_AB_MERGE_C narrows
    two FP32 (Ra the high element, Rb the low; Rc's low half above the pair, as for FP8);
    UNPACK_B_MERGE_C narrows the two halves of Ra (F16 or BF16, high half to the high
    element); UNPACK_B widens the two elements of Rb's low bits to F16x2 / BF16x2. An fp4
    pair takes 4 bits an element (a byte in all), fp6 and ue8m0 8 bits."""
    mods = s.ins.modifiers
    fmt = next(m for m in mods if m in narrow_float.NARROW_NAMES)
    width = 4 if fmt == "E2M1" else 8
    wide = next((m for m in mods if m in ("F32", "F16", "BF16")), "F32")
    relu, sat = "RELU" in mods, "SATFINITE" in mods
    rounding = next((m for m in mods if m in ("RZ", "RP")), "RN")
    ops = s.ins.operands
    out = np.zeros(32, dtype=U32)
    lanes = np.flatnonzero(mask).tolist()

    def enc(x: float) -> int:
        return narrow_float.encode(x, fmt, sat, relu, rounding)

    if "UNPACK_B" in mods and wide == "BF16" and fmt != "E8":
        return _widen_to_bf16(w, s, mask, width, lambda code: narrow_float.decode(code, fmt))
    if "UNPACK_B" in mods:
        d, b_op = ops[0], ops[1]
        b = np.broadcast_to(w.r(b_op), (32,))
        b = b >> U32(_unpack_shift(b_op))
        for lane in lanes:
            word = 0
            for i in range(2):
                v = narrow_float.decode(int(b[lane]) >> (width * i) & ((1 << width) - 1), fmt)
                if relu and not math.isnan(v) and math.copysign(1.0, v) < 0:
                    v = 0.0
                if math.isnan(v):
                    h = 0x7FFF          # ue8m0's NaN code: the canonical NaN (narrow_float.py)
                elif wide == "F16":
                    h = int(np.float16(v).view(np.uint16))
                else:
                    h = round_rational_bits(v, "bf16", "RN")
                word |= h << (16 * i)
            out[lane] = word
        w.w(d, out, mask)
        return
    if "UNPACK_B_MERGE_C" in mods:
        d, a_op, c_op = ops[:3]
        a = np.broadcast_to(w.r(a_op), (32,))
        c = np.broadcast_to(w.r(c_op), (32,))
        for lane in lanes:
            word = int(a[lane])
            hi, lo = (_half_value(word >> k & 0xFFFF, wide) for k in (16, 0))
            out[lane] = (int(c[lane]) & 0xFFFF) << 16 | enc(hi) << width | enc(lo)
        w.w(d, out, mask)
        return
    d, a_op, b_op = ops[:3]
    a = np.broadcast_to(w.rf(a_op), (32,))
    b = np.broadcast_to(w.rf(b_op), (32,))
    c = np.broadcast_to(w.r(ops[3]), (32,)) if len(ops) > 3 else np.zeros(32, U32)
    for lane in lanes:
        out[lane] = (int(c[lane]) & 0xFFFF) << 16 | enc(float(a[lane])) << width | enc(float(b[lane]))
    w.w(d, out, mask)


def _widen_to_bf16(w, s, mask, width: int, decode):
    """`F2FP[.SATFINITE][.RELU].BF16.<fp8/fp6/fp4>.UNPACK_B Rd, Ra, bound.H0` (cvt.rn.bf16x2
    from a narrow pair, PTX 9.2): the two elements of Ra's low bits (`width` bits each, the
    high one to the high half) widened exactly to bf16; .RELU makes negatives (and -0) +0 as
    the F16 widening does. ptxas always writes the largest finite bf16 (0x7f7f) as the bound;
    read here as what .SATFINITE clamps an infinity (e5m2's) to. Not hardware-checked: a NaN
    code gives the canonical NaN 0x7fff (the manual: a NaN; the H200 widens an fp8 NaN to
    f16 as the canonical NaN), an infinity without .SATFINITE stays one."""
    mods = s.ins.modifiers
    d, a_op, bound_op = s.ins.operands[:3]
    bound = _half_immediate(bound_op)
    a = np.broadcast_to(w.r(a_op), (32,)) >> U32(_unpack_shift(a_op))
    out = np.zeros(32, dtype=U32)
    for lane in np.flatnonzero(mask).tolist():
        word = 0
        for i in range(2):
            v = decode(int(a[lane]) >> (width * i) & ((1 << width) - 1))
            if "RELU" in mods and not math.isnan(v) and math.copysign(1.0, v) < 0:
                v = 0.0
            if math.isnan(v):
                h = 0x7FFF
            elif math.isinf(v) and "SATFINITE" in mods:
                h = bound | (0x8000 if v < 0 else 0)
            else:
                h = int(np.float32(v).view(np.uint32)) >> 16       # exact: bf16 holds them all
            word |= h << (16 * i)
        out[lane] = word
    w.w(d, out, mask)


def _half_immediate(op) -> int:
    """The 16 bits an F2FP immediate with .H0 names (nvdisasm prints the f32 of the word)."""
    text = getattr(op, "text", None)
    if text:
        base = text.split(".H")[0]
        bits = int(np.float32(float(base)).view(np.uint32))
        return bits >> 16 & 0xFFFF if text.endswith(".H1") else bits & 0xFFFF
    return int(op.value) & 0xFFFF


def _f2fp_rs(w, s, mask):
    """`F2FP ... .RS Rd, Ra, Rb, Rc` (cvt.rs, sm_100a/sm_103a): Ra and Rb rounded
    stochastically with Rc's random bits (emu/stochastic.py has the model)."""
    mods = s.ins.modifiers
    fmt = next(m for m in mods if m in stochastic.FORMATS)
    sat, relu = "SATFINITE" in mods, "RELU" in mods
    d, a_op, b_op, c_op = s.ins.operands[:4]
    a = np.broadcast_to(w.rf(a_op), (32,))
    b = np.broadcast_to(w.rf(b_op), (32,))
    c = np.broadcast_to(w.r(c_op), (32,))
    out = np.zeros(32, dtype=U32)
    for lane in np.flatnonzero(mask).tolist():
        out[lane] = stochastic.f2fp_rs(fmt, float(a[lane]), float(b[lane]), int(c[lane]), sat, relu)
    w.w(d, out, mask)


def _f2fp_tf32(w, s, mask):
    """`F2FP.TF32.F32.PACK_B[.RZ] Rd, Rb` (cvt.rn/.rz.tf32.f32, sm_90): Rb rounded to
    TF32's 10 mantissa bits in an FP32 register (the 13 low bits zero), to nearest even or
    toward zero (.RZ: truncated); a round-up past the largest finite value gives infinity. A NaN's
    result is not known (not hardware-checked): the model faults."""
    d, b_op = s.ins.operands[0], s.ins.operands[-1]
    x = np.broadcast_to(w.rf(b_op), (w.width,)).astype(np.float32).view(U32).astype(np.uint64)
    nan = (x & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000)
    inf = (x & np.uint64(0x7FFFFFFF)) == np.uint64(0x7F800000)
    if "RZ" in s.ins.modifiers:
        r = x & np.uint64(0xFFFFE000)
    else:
        half, low = np.uint64(0x1000), x & np.uint64(0x1FFF)
        odd = (x >> np.uint64(13)) & np.uint64(1)
        up = (low > half) | ((low == half) & (odd == 1))
        r = (x & np.uint64(0xFFFFE000)) + np.where(up, np.uint64(0x2000), np.uint64(0))
    if np.any(nan[np.broadcast_to(mask, (w.width,))]):
        raise EmuFault("F2FP.TF32 of a NaN is not modelled")
    r = np.where(inf, x, r)
    if "SATFINITE" in s.ins.modifiers:
        # (the PTX ISA's .satfinite: an infinite result, a rounded-up overflow too, becomes
        # the largest finite tf32 value of its sign; not hardware-checked)
        big = (r & np.uint64(0x7FFFFFFF)) >= np.uint64(0x7F800000)
        r = np.where(big, (r & np.uint64(0x80000000)) | np.uint64(0x7F7FE000), r)
    if "RELU" in s.ins.modifiers:
        # (.relu: negative results and -0 become +0, as F2FP's other .RELU forms)
        r = np.where((r & np.uint64(0x80000000)) != 0, np.uint64(0), r)
    w.w(d, r.astype(U32), mask)


@semantics("F2FP", "UF2FP", prepare=_prep_mode, vector=True)
def op_f2fp(w, s, active, mask):
    """Two FP32 values narrowed to F16/BF16 and packed: Ra in the high half, Rb in the low."""
    mods = s.ins.modifiers
    if "RS" in mods:
        if not w.per_warp:
            raise PerWarp()
        return _f2fp_rs(w, s, mask)
    if "E4M3" in mods or "E5M2" in mods:
        if not w.per_warp:
            raise PerWarp()
        return _f2fp_fp8(w, s, mask)
    if narrow_float.NARROW_NAMES & set(mods):
        if not w.per_warp:
            raise PerWarp()
        return _f2fp_narrow(w, s, mask)
    if "TF32" in mods:
        return _f2fp_tf32(w, s, mask)
    d, a_op, b_op = s.ins.operands[:3]
    kind = "bf16" if "BF16" in mods else "f16"
    relu = "RELU" in mods

    def conv(op):
        x = w.rf(op).astype(np.float64)
        if relu:
            x = np.where(np.isnan(x), x, np.maximum(x, 0.0))
        h = fp.f64_to_half_bits(x, kind, s.aux["mode"])
        if "SATFINITE" in mods:
            maxbits = 0x7BFF if kind == "f16" else 0x7F7F
            inf = (h.astype(U32) & U32(0x7FFF)) == (0x7C00 if kind == "f16" else 0x7F80)
            h = np.where(inf, (h.astype(U32) & U32(0x8000)) | U32(maxbits), h)
        return h.astype(U32)

    if "MERGE_C" in mods:
        # one value (ptxas's scalar .relu/.satfinite converts: `F2FP.RELU.F16.F32.MERGE_C d, a,
        # RZ`) into the low half, the high half from C's low half (as the FP8 PACK_AB_MERGE_C;
        # only C = RZ seen)
        c = w.r(b_op).astype(U32)
        w.w(d, ((c & U32(0xFFFF)) << U32(16)) | (conv(a_op) & U32(0xFFFF)), mask)
        return
    hi, lo = conv(a_op), conv(b_op)
    w.w(d, (hi << U32(16)) | (lo & U32(0xFFFF)), mask)


@semantics("I2I", "UI2I", vector=True)
def op_i2i(w, s, active, mask):
    """Integer narrowing with saturation (I2I.S8.S32.SAT …): destination type first."""
    mods = s.ins.modifiers
    d, a_op = s.ins.operands[0], s.ins.operands[-1]
    ints = [m for m in mods if m in _INT_TYPES]
    dst = ints[0] if ints else "S32"
    src = ints[1] if len(ints) > 1 else "S32"
    dbits, dsigned = _INT_TYPES[dst]
    sbits, ssigned = _INT_TYPES[src]
    v = w.r(a_op).astype(np.int64) & ((1 << sbits) - 1)
    if ssigned:
        v = np.where(v >= 1 << (sbits - 1), v - (1 << sbits), v)
    lo, hi = (-(1 << (dbits - 1)), (1 << (dbits - 1)) - 1) if dsigned else (0, (1 << dbits) - 1)
    if "SAT" in mods:
        v = np.clip(v, lo, hi)
    w.w(d, (v & 0xFFFFFFFF).astype(np.uint32), mask)


def _pair_halves(op):
    """The two f32 elements of a packed `R.F32x2.HI_LO` source (sm_100's FADD2/FMUL2/FFMA2):
    element 0 in the register, element 1 in the next one (ptxas's code for add/mul/fma.f32x2
    gives the PTX lanes in that order). RZ is zero in both; other swizzles are not modelled."""
    if not isinstance(op, Reg) or op.suffix not in (("F32x2", "HI_LO"), ()):
        raise EmuFault(f"packed f32x2 source {op} is not modelled")
    plain = replace(op, suffix=())
    if op.index == 255:
        return plain, plain
    return plain, replace(plain, index=op.index + 1)


def _packed(w, s, mask, combine):
    d, *srcs = s.ins.operands
    halves = [_pair_halves(op) for op in srcs]
    for k in (0, 1):
        r = combine(*[w.rf(h[k]) for h in halves])
        dst = d if k == 0 or d.index == 255 else replace(d, index=d.index + 1)
        _finish32(w, s, dst, r, mask)


@semantics("FADD2", prepare=_prep_mode, vector=True)
def op_fadd2(w, s, active, mask):
    """FADD2 d, a, b on register pairs: each element an FADD with the instruction's
    rounding/.FTZ/.SAT (PTX add.f32x2: each element's result is add.f32's)."""
    _packed(w, s, mask, lambda a, b: fp.fadd32(a, b, s.aux["mode"], s.aux["ftz"]))


@semantics("FMUL2", prepare=_prep_mode, vector=True)
def op_fmul2(w, s, active, mask):
    _packed(w, s, mask, lambda a, b: fp.fmul32(a, b, s.aux["mode"], s.aux["ftz"]))


@semantics("FFMA2", prepare=_prep_mode, vector=True)
def op_ffma2(w, s, active, mask):
    _packed(w, s, mask, lambda a, b, c: fp.ffma32(a, b, c, s.aux["mode"], s.aux["ftz"]))
