"""Single-lane forms: the specialised instruction forms (emu/specialise.py) once more for a
group of one lane (a one-thread launch, a lane left alone in a loop), computed on Python ints
and floats, where a NumPy call would cost more than the arithmetic.

Each closure reads and writes the machine's register arrays element by element, computes
exactly what the form's handler computes (32-bit wrap-around as masks, FP32 results rounded
from exact or rounded-to-odd FP64 values through the C cast to float), records the same
register reads and writes for the hazard checker, and hands anything off its fast path (a
fault to report, a generic address in the shared window) to the vector closure.
tests/test_emu_specialise.py checks them against the handlers with the vector forms.
"""
from __future__ import annotations

import math
import struct
from bisect import bisect_right
from types import SimpleNamespace
from typing import Callable

from ptx2sass.encoder.model import ConstRef, Imm, Mem, Reg, SpecialReg

from .mufu_measured import correct_f32_one
from .memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from .specialise import _access, _imm32, _is_pred, _lut_fn, imad_moves_c, prmt_terms

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
_F32_OVER = 2.0 ** 128 - 2.0 ** 103       # |x| from here rounds to infinity in FP32
_PACK_F, _UNPACK_I = struct.Struct("<f").pack, struct.Struct("<I").unpack
_PACK_I, _UNPACK_F = struct.Struct("<I").pack, struct.Struct("<f").unpack


def f32_bits(x: float) -> int:
    """The FP32 rounding (to nearest) of a double, as bits; NaN is the canonical 0x7fffffff."""
    if x != x:
        return 0x7FFFFFFF
    if abs(x) >= _F32_OVER:
        return 0xFF800000 if x < 0 else 0x7F800000
    return _UNPACK_I(_PACK_F(x))[0]


def f32_value(bits: int) -> float:
    return _UNPACK_F(_PACK_I(bits))[0]


def _flush(bits: int) -> int:
    """FTZ: a denormal's bits become a zero of its sign."""
    return bits & 0x80000000 if not bits & 0x7F800000 else bits


# --------------------------------------------------------------------------- operands

def src(op, neg: bool = True) -> Callable | None:
    """f(w) → the lane's 32-bit value of a source as `w.ri(op)` (`neg`) or `w.r(op)`, with
    the same read recorded."""
    negate = neg and getattr(op, "neg", False)
    if op.__class__ is Reg and op.file == "R":
        i, inv = op.index, op.inv
        if i == 255:
            v = M32 if inv else 0
            v = -v & M32 if negate else v
            return lambda w: v

        def read(w):
            m = w.m
            if m.tracing:
                m.reads.append(("R", i))
            v = m.R.item(i, w.lane)
            if inv:
                v ^= M32
            return -v & M32 if negate else v
        return read
    if op.__class__ is Imm:
        v = int(_imm32(op)[0])
        v = -v & M32 if negate else v
        return lambda w: v
    if op.__class__ is ConstRef and op.ureg is None:
        bank, offset, inv = op.bank, op.offset, op.inv

        def const(w):
            v = w.launch.const.read(bank, offset, 4)
            if inv:
                v ^= M32
            return -v & M32 if negate else v
        return const
    if op.__class__ is Reg and op.file == "UR":
        i, inv, zero = op.index, op.inv, op.is_zero

        def uniform(w):
            m = w.m
            if zero:
                v = 0
            else:
                if m.tracing:
                    m.reads.append(("UR", i))
                v = m.UR.item(w.warp, i)
            if inv:
                v ^= M32
            return -v & M32 if negate else v
        return uniform
    return None


def pred(op) -> Callable | None:
    if op.__class__ is Reg and op.file == "P":
        i, inv = op.index, op.inv
        if i == 7:
            return lambda w: not inv

        def read(w):
            m = w.m
            if m.tracing:
                m.reads.append(("P", i))
            v = m.P.item(i, w.lane)
            return not v if inv else v
        return read
    return None


def dst(op) -> Callable | None:
    """f(w, value, mask): what `w.w(op, …)` does for the lane."""
    if op.__class__ is not Reg or op.file != "R":
        return None
    i = op.index
    if i == 255:
        return lambda w, v, mask: None

    def write(w, v, mask):
        m = w.m
        if i >= m.regcount_limit:
            w.w(op, _array(v), mask)          # the handler's fault
            return
        if m.tracing:
            m.writes.append(("R", i))
        if mask is w.active or mask[0]:
            m.R[i, w.lane] = v
    return write


def dst_pred(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "P":
        return None
    i = op.index
    if i == 7:
        return lambda w, v, mask: None

    def write(w, v, mask):
        m = w.m
        if m.tracing:
            m.writes.append(("P", i))
        if mask is w.active or mask[0]:
            m.P[i, w.lane] = v
    return write


def _array(v):
    import numpy as np
    return np.array([v], dtype=np.uint32)


# --------------------------------------------------------------------------- forms

FORMS: dict[str, Callable] = {}


def form(*opcodes):
    def register(fn):
        for op in opcodes:
            FORMS[op] = fn
        return fn
    return register


def specialise_one(step, vector: Callable, x=None) -> Callable | None:
    """The single-lane closure for `step` (whose vector closure is `vector`), or None. `x`:
    how operands are read and written (`LANE`: a lane of the machine's arrays; emu/scalar.py
    gives Python lists), so that both run the same semantics."""
    make = FORMS.get(step.ins.opcode)
    return None if make is None else make(step, vector, x or LANE)


@form("MOV")
def _mov(step, vector, x):
    ops = step.ins.operands
    if len(ops) != 2 or step.ins.modifiers:      # MOV.64 (sm_100+): the handler
        return None
    d, a = x.dst(ops[0]), x.src(ops[1])
    if d is None or a is None:
        return None
    return lambda w, s, active, mask: d(w, a(w), mask)


@form("IMAD")
def _imad(step, vector, x):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if "HI" in mods or _is_pred(ops[1]):
        return None
    if "WIDE" in mods:
        return _imad_wide(step, vector, x)
    if len(ops) != 4 and not (len(ops) == 5 and "X" in mods):
        return None
    d = x.dst(ops[0])
    if d is None:
        return None
    if "MOV" in mods and imad_moves_c(ops[1], ops[2]):
        c = x.src(ops[3])
        if c is None:
            return None
        return lambda w, s, active, mask: d(w, c(w), mask)
    a, b, c = x.src(ops[1]), x.src(ops[2]), x.src(ops[3])
    cin = x.pred(ops[4]) if len(ops) == 5 else None
    if None in (a, b, c) or (len(ops) == 5 and cin is None):
        return None

    def imad(w, s, active, mask):
        carry = cin(w) if cin is not None else 0
        d(w, (a(w) * b(w) + c(w) + carry) & M32, mask)
    return imad


def _imad_wide(step, vector, x):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if "X" in mods or len(ops) != 4:
        return None
    dop, c_op = ops[0], ops[3]
    if dop.__class__ is not Reg or dop.file != "R" or c_op.inv:
        return None
    d_lo = x.dst(dop)
    d_hi = x.dst(Reg("R", dop.index + 1)) if dop.index != 255 else None
    a, b = x.src(ops[1]), x.src(ops[2])
    const_c = c_op.__class__ is ConstRef and c_op.ureg is None
    if a is None or b is None or not (c_op.__class__ is Reg and c_op.file == "R" or const_c):
        return None
    c64 = x.const64(c_op) if const_c else x.pair(c_op.index)
    cneg = c_op.neg
    if c64 is None:
        return None
    signed = "U32" not in mods

    def wide(w, s, active, mask):
        va, vb = a(w), b(w)
        if signed:
            va = va - (1 << 32) if va >> 31 else va
            vb = vb - (1 << 32) if vb >> 31 else vb
        prod = va * vb
        c = c64(w)
        total = (prod + (-c if cneg else c)) & M64
        d_lo(w, total & M32, mask)
        if d_hi is not None:
            d_hi(w, total >> 32, mask)
    return wide


@form("IADD3")
def _iadd3(step, vector, x):
    ops = list(step.ins.operands)
    mods = step.ins.modifiers
    d = x.dst(ops[0])
    rest = ops[1:]
    pouts = []
    while rest and _is_pred(rest[0]):
        pouts.append(rest.pop(0))
    if d is None or len(rest) < 3 or len(pouts) > 1 or (rest[3:] and "X" not in mods):
        return None
    raw = [x.src(op, neg=False) for op in rest[:3]]
    negs = [bool(getattr(op, "neg", False)) for op in rest[:3]]
    cins = [x.pred(p) for p in rest[3:]]
    pout = x.dst_pred(pouts[0]) if pouts else None
    if None in raw or None in cins or (pouts and pout is None):
        return None

    def iadd3(w, s, active, mask):
        total = 0
        for f, neg in zip(raw, negs):
            v = f(w)
            total += (v ^ M32) + 1 if neg else v      # -x as ~x + 1: the carry of a subtraction
        for p in cins:
            total += p(w)
        d(w, total & M32, mask)
        if pout is not None:
            pout(w, total > M32, mask)
    return iadd3


@form("SHF")
def _shf(step, vector, x):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if len(ops) != 4:
        return None
    width = 64 if ("U64" in mods or "S64" in mods) else 32
    wrap = "W" in mods
    k = amount = None
    if isinstance(ops[2], Imm) and ops[2].text is None:
        k = ops[2].value & M32
        k = k & (width - 1) if wrap else min(k, width)
    else:
        amount = x.src(ops[2], neg=False)          # as the handler's w.r: `~` applied
        if amount is None:
            return None
    left, hi_out, signed = "L" in mods, "HI" in mods, "S32" in mods or "S64" in mods
    d, lo, hi = x.dst(ops[0]), x.src(ops[1], neg=False), x.src(ops[3], neg=False)
    if None in (d, lo, hi):
        return None

    def shf(w, s, active, mask):
        nonlocal k
        if amount is not None:
            k = amount(w) & (width - 1) if wrap else min(amount(w), width)
        val = lo(w) | hi(w) << 32
        if left:
            res = (val << k) & M64 if k < 64 else 0
        elif signed:
            res = ((val - (1 << 64) if val >> 63 else val) >> min(k, 63)) & M64
        else:
            res = val >> k if k < 64 else 0
        d(w, (res >> 32 if hi_out else res) & M32, mask)
    return shf


@form("LOP3")
def _lop3(step, vector, x):
    ops = list(step.ins.operands)
    pout = ops.pop(0) if _is_pred(ops[0]) else None
    if len(ops) < 5 or not isinstance(ops[4], Imm):
        return None
    lut = int(ops[4].value) & 0xFF
    table = [lut >> i & 1 for i in range(8)]
    d, a, b, c = x.dst(ops[0]), x.src(ops[1]), x.src(ops[2]), x.src(ops[3])
    wp = x.dst_pred(pout) if pout is not None else None
    # the predicate result is `res != 0` OR (AND with .PAND) the predicate source
    pin = x.pred(ops[5]) if pout is not None and len(ops) > 5 else (lambda w: True)
    if None in (d, a, b, c, pin) or (pout is not None and wp is None):
        return None
    pand = "PAND" in step.ins.modifiers
    f = _lut_fn(lut)
    if f(1, 2, 4).__class__ is not int:
        # a table with no Python expression (ops_int.lut3 on NumPy): its NumPy scalar must not
        # reach a scalar thread's registers (`hi << 32` of a uint32 is 0: a 64-bit store of
        # the pair wrote 0, fuzz regressions s339 and s105 on the scalar paths)
        f3 = f
        f = lambda a, b, c: int(f3(a, b, c))        # noqa: E731

    def lop3(w, s, active, mask):
        res = f(a(w), b(w), c(w)) & M32
        d(w, res, mask)
        if wp is not None:
            nonzero, vin = res != 0, pin(w)
            wp(w, (nonzero and vin) if pand else (nonzero or vin), mask)

    # the two-/three-input expressions of specialise work on Python ints too (~ gives a
    # negative number, masked above); check them on every input combination
    if all((f((i >> 2 & 1) * M32, (i >> 1 & 1) * M32, (i & 1) * M32) & 1) == table[i] for i in range(8)):
        return lop3
    return None


_CMP = {"EQ": lambda x, y: x == y, "NE": lambda x, y: x != y, "LT": lambda x, y: x < y,
        "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y, "GE": lambda x, y: x >= y}


@form("ISETP")
def _isetp(step, vector, x):
    mods = step.ins.modifiers
    ops = step.ins.operands
    ex = "EX" in mods
    if "U64" in mods or "S64" in mods or len(ops) != (6 if ex else 5):
        return None
    cmp = next((m for m in mods if m in _CMP), None)
    if cmp is None:
        return None
    fcmp = _CMP[cmp]
    # .EX (the high words of a 64-bit compare): equal words defer to the low words' result,
    # the predicate operand; LE/GE compare strictly then
    strict = _CMP[{"LE": "LT", "GE": "GT"}.get(cmp, cmp)]
    combine = next((m for m in ("AND", "OR", "XOR") if m in mods), None)
    p1, p2 = x.dst_pred(ops[0]), x.dst_pred(ops[1])
    a, b, pc = x.src(ops[2]), x.src(ops[3]), x.pred(ops[4])
    pex = (x.pred(ops[5]) if len(ops) > 5 else (lambda w: True)) if ex else None
    if None in (p1, p2, a, b, pc) or ex and pex is None:
        return None
    unsigned = "U32" in mods

    def isetp(w, s, active, mask):
        va, vb = a(w), b(w)
        if not unsigned:
            va = va - (1 << 32) if va >> 31 else va
            vb = vb - (1 << 32) if vb >> 31 else vb
        if not ex:
            base = fcmp(va, vb)
        else:
            e = pex(w)
            if cmp == "EQ":
                base = va == vb and e
            elif cmp == "NE":
                base = va != vb or e
            else:
                base = strict(va, vb) or (va == vb and e)
        vc = pc(w)
        if combine == "AND":
            r1, r2 = base and vc, (not base) and vc
        elif combine == "OR":
            r1, r2 = base or vc, (not base) or vc
        elif combine == "XOR":
            r1, r2 = base != vc, (not base) != vc
        else:
            r1, r2 = base, not base
        p1(w, bool(r1), mask)
        p2(w, bool(r2), mask)
    return isetp


@form("SEL")
def _sel(step, vector, x):
    ops = step.ins.operands
    if len(ops) != 4 or step.ins.modifiers:       # SEL.64 (sm_120): the handler
        return None
    d, a, b, p = x.dst(ops[0]), x.src(ops[1]), x.src(ops[2]), x.pred(ops[3])
    if None in (d, a, b, p):
        return None

    def sel(w, s, active, mask):
        va, vb = a(w), b(w)
        d(w, va if p(w) else vb, mask)
    return sel


@form("S2R")
def _s2r(step, vector, x):
    d, sr = step.ins.operands
    write = x.dst(d)
    if not isinstance(sr, SpecialReg) or write is None:
        return None
    axis = {"X": 0, "Y": 1, "Z": 2}.get(sr.name[-1])
    if sr.name.startswith("SR_TID.") and axis is not None:
        return lambda w, s, active, mask: write(w, w.m.tid.item(axis, w.lane), mask)
    if sr.name.startswith("SR_CTAID.") and axis is not None:
        return lambda w, s, active, mask: write(w, w.m.ctaid_of_warp.item(axis, w.warp), mask)
    if sr.name == "SR_LANEID":
        return lambda w, s, active, mask: write(w, w.lane & 31, mask)
    return None


@form("PRMT")
def _prmt(step, vector, x):
    ins = step.ins
    if ins.modifiers or len(ins.operands) != 4:
        return None
    d_op, a_op, sel_op, b_op = ins.operands
    if not isinstance(sel_op, Imm) or sel_op.text is not None or sel_op.neg:
        return None
    terms = prmt_terms(sel_op.value & 0xFFFF)
    d, a, b = x.dst(d_op), x.src(a_op), x.src(b_op)
    if terms is None or None in (d, a, b):
        return None

    def prmt(w, s, active, mask):
        srcs = (a(w), b(w))
        out = 0
        for k, sh, m in terms:
            v = srcs[k]
            out |= ((v << sh) if sh >= 0 else (v >> -sh)) & m
        d(w, out, mask)
    return prmt


def _signed32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def _unary(step, x, arity):
    """(d, sources) of `OP d, a[, b]` with the sources as the handler's `w.ri`, or None."""
    ops = step.ins.operands
    if len(ops) != arity + 1:
        return None
    fs = [x.dst(ops[0])] + [x.src(op) for op in ops[1:]]
    return None if None in fs else fs


@form("IMNMX")
def _imnmx(step, vector, x):
    ops = step.ins.operands
    if set(step.ins.modifiers) - {"U32"} or len(ops) != 4:
        return None
    d, a, b, p = x.dst(ops[0]), x.src(ops[1]), x.src(ops[2]), x.pred(ops[3])
    if None in (d, a, b, p):
        return None
    conv = (lambda v: v) if "U32" in step.ins.modifiers else _signed32

    def imnmx(w, s, active, mask):
        va, vb = conv(a(w)), conv(b(w))
        d(w, (min(va, vb) if p(w) else max(va, vb)) & M32, mask)
    return imnmx


def _plain_unary(step, x, fn):
    """`OP d, a` without modifiers: d = fn(a)."""
    fs = None if step.ins.modifiers else _unary(step, x, 1)
    if fs is None:
        return None
    d, a = fs
    return lambda w, s, active, mask: d(w, fn(a(w)), mask)


@form("IABS")
def _iabs(step, vector, x):
    return _plain_unary(step, x, lambda v: abs(_signed32(v)) & M32)


@form("POPC")
def _popc(step, vector, x):
    return _plain_unary(step, x, lambda v: bin(v).count("1"))


@form("FLO")
def _flo(step, vector, x):
    mods = set(step.ins.modifiers)
    fs = None if mods - {"U32", "S32", "SH"} else _unary(step, x, 1)
    if fs is None:
        return None
    d, a = fs
    signed, sh = "U32" not in mods, "SH" in mods

    def flo(w, s, active, mask):
        v = a(w)
        if signed and v >> 31:          # the highest bit that differs from the sign
            v ^= M32
        pos = v.bit_length() - 1
        d(w, M32 if pos < 0 else (31 - pos if sh else pos), mask)
    return flo


@form("SGXT")
def _sgxt(step, vector, x):
    ops = step.ins.operands
    mods = set(step.ins.modifiers)
    if mods - {"U32", "W"} or len(ops) != 3:
        return None
    d, a, b = x.dst(ops[0]), x.src(ops[1], neg=False), x.src(ops[2], neg=False)
    if None in (d, a, b):
        return None
    wrap, signed = "W" in mods, "U32" not in mods

    def sgxt(w, s, active, mask):
        v, n = a(w), b(w)
        n = n & 31 if wrap else min(n & 0xFF, 32)
        keep = M32 if n >= 32 else (1 << n) - 1
        v &= keep
        if signed and 0 < n < 32 and v >> (n - 1) & 1:
            v |= ~keep & M32
        d(w, v, mask)
    return sgxt


@form("BMSK")
def _bmsk(step, vector, x):
    ops = step.ins.operands
    mods = set(step.ins.modifiers)
    if mods - {"W"} or len(ops) != 3:
        return None
    d, a, b = x.dst(ops[0]), x.src(ops[1], neg=False), x.src(ops[2], neg=False)
    if None in (d, a, b):
        return None
    cap = 31 if "W" in mods else M32        # clamp: the whole register is compared with 32

    def bmsk(w, s, active, mask):
        pos, width = a(w) & cap, b(w) & cap
        ones = M32 if width >= 32 else (1 << width) - 1
        d(w, 0 if pos >= 32 else (ones << pos) & M32, mask)
    return bmsk


def _fp_bits(ops, x) -> list | None:
    """(f, keep, flip) per FP32 source: its bits are `(f(w) & keep) ^ flip`, |.| then -
    as Lanes.rf applies them; None if one has no single-lane read."""
    out = []
    for op in ops:
        f = x.src(op, neg=False)
        if f is None:
            return None
        out.append((f, 0x7FFFFFFF if getattr(op, "abs", False) else M32,
                    0x80000000 if getattr(op, "neg", False) else 0))
    return out


@form("FSEL")
def _fsel(step, vector, x):
    ops = step.ins.operands
    if step.ins.modifiers or len(ops) != 4:
        return None
    d, p = x.dst(ops[0]), x.pred(ops[3])
    srcs = _fp_bits(ops[1:3], x)
    if d is None or p is None or srcs is None:
        return None
    (fa, ka, na), (fb, kb, nb) = srcs

    def fsel(w, s, active, mask):
        va, vb = (fa(w) & ka) ^ na, (fb(w) & kb) ^ nb
        d(w, va if p(w) else vb, mask)
    return fsel


# --------------------------------------------------------------------------- FP32

def _fp_sources(step, arity, x):
    ins = step.ins
    if set(ins.modifiers) - {"FTZ"} or len(ins.operands) != arity + 1:
        return None
    out = []
    for op in ins.operands[1:]:
        if getattr(op, "abs", False):
            return None
        f = x.src(op, neg=False)
        if f is None:
            return None
        out.append((f, 0x80000000 if getattr(op, "neg", False) else 0))
    return out


@form("FFMA")
def _ffma(step, vector, x):
    """a*b + c: the product is exact in FP64, the sum rounded to odd there, then to FP32."""
    srcs = _fp_sources(step, 3, x)
    d = x.dst(step.ins.operands[0])
    if srcs is None or d is None:
        return None
    ftz = "FTZ" in step.ins.modifiers
    (fa, na), (fb, nb), (fc, nc) = srcs
    inf = math.inf

    def ffma(w, s, active, mask):
        ba, bb, bc = fa(w) ^ na, fb(w) ^ nb, fc(w) ^ nc
        if ftz:
            ba, bb, bc = _flush(ba), _flush(bb), _flush(bc)
        x, y, c = f32_value(ba), f32_value(bb), f32_value(bc)
        p = x * y
        t = p + c
        if t - t == 0:                         # finite: round the sum to odd
            z = t - p
            err = (p - (t - z)) + (c - z)
            if err != 0 and err - err == 0 and not _UNPACK_Q(_PACK_D(t))[0] & 1:
                t = math.nextafter(t, inf if err > 0 else -inf)
        r = f32_bits(t)
        d(w, _flush(r) if ftz and r != 0x7FFFFFFF else r, mask)
    return ffma


_PACK_D, _UNPACK_Q = struct.Struct("<d").pack, struct.Struct("<Q").unpack


def _rcp(x: float) -> float:
    return math.copysign(math.inf, x) if x == 0 else 1.0 / x


def _sqrt(x: float) -> float:
    return math.nan if x < 0 else math.sqrt(x)      # sqrt(-0) = -0


# MUFU functions whose FP64 value is IEEE-exact (a division, a square root): the same in
# Python as in NumPy, so the FP32 rounding of it is too (EX2, LG2, SIN, COS, TANH: the
# handler's, NumPy's library functions)
_MUFU = {"RCP": _rcp, "SQRT": _sqrt, "RSQ": lambda x: math.nan if x < 0 else _rcp(math.sqrt(x))}


@form("MUFU")
def _mufu(step, vector, x):
    """MUFU.RCP/RSQ/SQRT of one lane as ops_float.op_mufu: the FP32 source (`|.|`, `-`,
    then a denormal flushed) in FP64, the function there, the result rounded to FP32 and a
    denormal flushed, a NaN the canonical one, then moved as the H200 moves it
    (emu/mufu_measured.py)."""
    ins = step.ins
    if len(ins.modifiers) != 1 or ins.modifiers[0] not in _MUFU or len(ins.operands) != 2:
        return None
    fn = _MUFU[ins.modifiers[0]]
    d, srcs = x.dst(ins.operands[0]), _fp_bits(ins.operands[1:], x)
    if d is None or srcs is None:
        return None
    (a, keep, flip), = srcs

    name = ins.modifiers[0]

    def mufu(w, s, active, mask):
        xb = _flush((a(w) & keep) ^ flip)
        r = f32_bits(fn(f32_value(xb)))
        d(w, r if r == 0x7FFFFFFF else correct_f32_one(name, xb, _flush(r)), mask)
    return mufu


def _fp2(step, vector, op, x):
    srcs = _fp_sources(step, 2, x)
    d = x.dst(step.ins.operands[0])
    if srcs is None or d is None:
        return None
    ftz = "FTZ" in step.ins.modifiers
    (fa, na), (fb, nb) = srcs

    def run(w, s, active, mask):
        ba, bb = fa(w) ^ na, fb(w) ^ nb
        if ftz:
            ba, bb = _flush(ba), _flush(bb)
        r = f32_bits(op(f32_value(ba), f32_value(bb)))
        d(w, _flush(r) if ftz and r != 0x7FFFFFFF else r, mask)
    return run


@form("FADD")
def _fadd(step, vector, x):
    # an FP32 sum in FP64 then FP32: the double rounding is innocuous (53 >= 2*24 + 2)
    return _fp2(step, vector, lambda u, v: u + v, x)


@form("FMUL")
def _fmul(step, vector, x):
    return _fp2(step, vector, lambda u, v: u * v, x)       # exact in FP64


_FCMP = {
    "F": lambda x, y, nan: False, "T": lambda x, y, nan: True,
    "LT": lambda x, y, nan: x < y, "EQ": lambda x, y, nan: x == y, "LE": lambda x, y, nan: x <= y,
    "GT": lambda x, y, nan: x > y, "NE": lambda x, y, nan: x != y and not nan,
    "GE": lambda x, y, nan: x >= y, "NUM": lambda x, y, nan: not nan, "NAN": lambda x, y, nan: nan,
    "LTU": lambda x, y, nan: x < y or nan, "EQU": lambda x, y, nan: x == y or nan,
    "LEU": lambda x, y, nan: x <= y or nan, "GTU": lambda x, y, nan: x > y or nan,
    "NEU": lambda x, y, nan: x != y, "GEU": lambda x, y, nan: x >= y or nan,
}


@form("FSETP")
def _fsetp(step, vector, x):
    """FP32 compare of one lane on Python floats (the FP32 values exactly), combined with
    the predicate source as ops_float.op_fsetp does."""
    ins = step.ins
    ops = ins.operands
    mods = ins.modifiers
    if len(ops) != 5:
        return None
    cmp = next((m for m in mods if m in _FCMP), None)
    combine = next((m for m in mods if m in ("AND", "OR", "XOR")), None)
    if cmp is None or set(mods) - {cmp, combine, "FTZ"}:
        return None
    fcmp = _FCMP[cmp]
    p1, p2, pc = x.dst_pred(ops[0]), x.dst_pred(ops[1]), x.pred(ops[4])
    srcs = _fp_bits(ops[2:4], x)
    if None in (p1, p2, pc) or srcs is None:
        return None
    (fa, ka, na), (fb, kb, nb) = srcs
    ftz = "FTZ" in mods

    def fsetp(w, s, active, mask):
        ba, bb = (fa(w) & ka) ^ na, (fb(w) & kb) ^ nb
        if ftz:
            ba, bb = _flush(ba), _flush(bb)
        x, y = f32_value(ba), f32_value(bb)
        base = bool(fcmp(x, y, x != x or y != y))
        vc = bool(pc(w))
        if combine == "AND":
            r1, r2 = base and vc, (not base) and vc
        elif combine == "OR":
            r1, r2 = base or vc, (not base) or vc
        elif combine == "XOR":
            r1, r2 = base != vc, (not base) != vc
        else:
            r1, r2 = base, not base
        p1(w, r1, mask)
        p2(w, r2, mask)
    return fsetp


_PACK_Q, _UNPACK_D = struct.Struct("<Q").pack, struct.Struct("<d").unpack
_F64_EXP, _F64_FRAC = 0x7FF0000000000000, 0x000FFFFFFFFFFFFF


@form("DFMA")
def _dfma(step, vector, x):
    """FP64 a*b + c of one lane from register pairs: fp.fma64's exact rounding, a NaN result
    as fp.propagate_nan_f64 makes it (c's, b's or a's NaN, quieted, else the default NaN),
    with ops_float.op_dfma's reads (each source twice) and writes."""
    from .fp import fma64, mode_of
    ins = step.ins
    ops = ins.operands
    if len(ops) != 4 or set(ins.modifiers) - {"RN", "RZ", "RM", "RP"}:
        return None
    dop = ops[0]
    if dop.__class__ is not Reg or dop.file != "R" or dop.suffix:
        return None
    srcs = []
    for op in ops[1:]:
        if op.__class__ is not Reg or op.file != "R" or op.inv or op.suffix:
            return None
        srcs.append((op.index, 0x7FFFFFFFFFFFFFFF if op.abs else M64, 1 << 63 if op.neg else 0))
    d_lo = x.dst(dop)
    d_hi = x.dst(Reg("R", dop.index + 1)) if dop.index != 255 else None
    mode = mode_of(ins.modifiers)
    pairs = [[("R", i), ("R", i + 1)] for i, _, _ in srcs if i != 255]

    readers = [x.pair(i) for i, _, _ in srcs]

    def dfma(w, s, active, mask):
        m = w.m
        tracing = m.tracing
        raw = [f(w) for f in readers]
        x, y, z = (_UNPACK_D(_PACK_Q((v & keep) ^ flip))[0] for v, (_, keep, flip) in zip(raw, srcs))
        r = fma64(x, y, z, mode)
        if tracing:                     # the handler reads the sources again for a NaN's bits
            for p in pairs:
                m.reads += p
        if r != r:
            out = 0xFFF8000000000000
            for v in reversed(raw):
                if v & _F64_EXP == _F64_EXP and v & _F64_FRAC:
                    out = v | 0x0008000000000000
                    break
        else:
            out = _UNPACK_Q(_PACK_D(r))[0]
        d_lo(w, out & M32, mask)
        if d_hi is not None:
            d_hi(w, out >> 32, mask)
    return dfma


# --------------------------------------------------------------------------- memory

def pair(i: int) -> Callable:
    """f(w) → the lane's 64-bit value of register pair Ri:Ri+1 (RZ: 0), the reads recorded."""
    if i == 255:
        return lambda w: 0

    def read(w):
        m = w.m
        if m.tracing:
            m.reads += [("R", i), ("R", i + 1)]
        return m.R.item(i, w.lane) | (m.R.item(i + 1, w.lane) << 32 if i + 1 < 255 else 0)
    return read


def const64(op: ConstRef) -> Callable:
    return lambda w: int(w.r64(op)[0])


def address_parts(mem: Mem) -> tuple[int, int] | None:
    """(register, offset) of a [Ri.64 + offset] address, the only form the single-lane
    accesses take."""
    base = mem.base
    if base is None or base.file != "R" or base.index == 255 or set(base.suffix) != {"64"}:
        return None
    if mem.ubase is not None and not mem.ubase.is_zero:
        return None
    return base.index, mem.offset


def _address(mem: Mem) -> Callable | None:
    parts = address_parts(mem)
    if parts is None:
        return None
    i, off = parts
    return lambda m, lane: ((m.R.item(i + 1, lane) << 32 if i + 1 < 255 else 0)
                            | m.R.item(i, lane)) + off & M64


def _element(gm, a: int, size: int):
    """(typed view, index) of an aligned access inside one buffer, else None."""
    if a & (size - 1 if size < 16 else 15):
        return None
    base, end, b = gm.last_hit
    if a < base or a + size > end:
        i = bisect_right(gm._base_list, a) - 1
        if i < 0:
            return None
        b = gm.buffers[i]
        base, end = b.base, b.base + len(b.data)
        if a + size > end:
            return None
        gm.last_hit = (base, end, b)
    v = b.views.get(size)
    return (v if v is not None else b.typed(size)), (a - base) >> _SHIFT[size]


_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}
_WINDOWS = (SHARED_WINDOW, LOCAL_WINDOW + WINDOW_SIZE)


@form("LDG", "LD")
def _load(step, vector, x):
    ins = step.ins
    d, mem = ins.operands[0], ins.operands[1]
    acc = _access(ins.modifiers)
    if acc is None or not isinstance(mem, Mem) or d.__class__ is not Reg or d.file != "R" \
            or len(ins.operands) != 2:
        return None
    size, signed = acc
    address = x.address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    dsts = [x.dst(Reg("R", d.index + k)) for k in range(nwords)] if d.index != 255 else []
    base = mem.base.index
    generic_space = ins.opcode == "LD"

    def load(w, s, active, mask):
        if mask is not active and not mask[0]:
            return
        m = w.m
        a = address(m, w.lane)
        at = None if generic_space and _WINDOWS[0] <= a < _WINDOWS[1] else _element(w.launch.gmem, a, size)
        if at is None:
            return vector(w, s, active, mask)
        if m.tracing:
            m.reads += [("R", base), ("R", base + 1)]
        view, k = at
        if size == 16:
            lo, hi = view.item(k, 0), view.item(k, 1)
            words = [lo & M32, lo >> 32, hi & M32, hi >> 32]
        else:
            v = view.item(k)
            if size < 4:
                if signed and v >> (8 * size - 1):
                    v -= 1 << (8 * size)
                words = [v & M32]
            else:
                words = [v & M32, v >> 32] if size == 8 else [v]
        for write, word in zip(dsts, words):
            write(w, word, mask)
    return load


@form("STG", "ST")
def _store(step, vector, x):
    ins = step.ins
    mem, value = ins.operands[0], ins.operands[1]
    acc = _access(ins.modifiers)
    if acc is None or not isinstance(mem, Mem) or value.__class__ is not Reg or value.file != "R" \
            or len(ins.operands) != 2:
        return None
    size, _ = acc
    address = x.address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    srcs = [x.src(Reg("R", value.index + k) if value.index != 255 else value, neg=False) for k in range(nwords)]
    base = mem.base.index
    generic_space = ins.opcode == "ST"

    def store(w, s, active, mask):
        if mask is not active and not mask[0]:
            return
        m = w.m
        a = address(m, w.lane)
        at = None if generic_space and _WINDOWS[0] <= a < _WINDOWS[1] else _element(w.launch.gmem, a, size)
        if at is None:
            return vector(w, s, active, mask)
        if m.tracing:
            m.reads += [("R", base), ("R", base + 1)]
        words = [f(w) for f in srcs]
        view, k = at
        if size == 16:
            view[k, 0] = words[0] | words[1] << 32
            view[k, 1] = words[2] | words[3] << 32
        elif size == 8:
            view[k] = words[0] | words[1] << 32
        else:
            view[k] = words[0] & ((1 << (8 * size)) - 1)
    return store


# how the forms read and write a lane of the machine's arrays
LANE = SimpleNamespace(src=src, pred=pred, dst=dst, dst_pred=dst_pred, pair=pair, const64=const64,
                       address=_address)
