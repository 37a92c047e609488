"""Scalar-interpreter forms (emu/scalar.py) of instructions that otherwise ran their NumPy
handler through the one-lane machine (`scalar._bridge`, ~100 us a step): shared memory
(LDS/STS, on the thread's own shared bytes, which a machine the thread is handed to takes
over), the MUFU functions from the C library (EX2/LG2/SIN/COS/TANH), F2FP's F16/BF16 packs,
PRMT with a register selector or sign replication, PLOP3.

Each computes what its handler computes, bit for bit: the libm functions and the F16/BF16
roundings are NumPy's own (the same ufuncs and emu/fp.py helpers on one value), the rest
exact integer or FP64 arithmetic. An access or value off the fast path (a misaligned or
out-of-bounds address, an input where NumPy would warn) runs the handler instead
(`fallback`), which raises the handler's fault. tests/test_emu_scalar.py checks them against
the handlers; the machine's own paths are untouched.
"""
from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np

from ptx2sass.encoder.model import ConstRef, Imm, Mem, Reg

from .mufu_measured import MODELS_ONE
from .single_lane import M32, M64, _flush, f32_bits, f32_value
from .specialise import _access, shared_address_parts

FORMS: dict[str, Callable] = {}


def form(*opcodes):
    """Register a maker `f(step, fallback, x) -> closure or None` for `opcodes`."""
    return lambda make: FORMS.update(dict.fromkeys(opcodes, make)) or make


# --------------------------------------------------------------------------- shared memory

def _shared_address(mem) -> Callable | None:
    """f(t) → the 32-bit shared address `[Ra + URb + imm]` (ops_memory.address, narrow)."""
    parts = shared_address_parts(mem) if isinstance(mem, Mem) else None
    if parts is None:
        return None
    rb, ub, k = parts
    k &= M32
    if rb is not None and ub is not None:
        return lambda t: (t.R[rb] + t.UR[ub] + k) & M32
    if rb is not None:
        return lambda t: (t.R[rb] + k) & M32
    if ub is not None:
        return lambda t: (t.UR[ub] + k) & M32
    return lambda t: k


def _aligned(size: int) -> int:
    return min(size, 16) - 1


def _shared_access(ins, mem, reg, mods) -> tuple | None:
    """(size, signed, address, words) of an LDS/STS whose register operand is `reg`."""
    acc = _access(mods)
    if acc is None or reg.__class__ is not Reg or reg.file != "R" or len(ins.operands) != 2:
        return None
    address = _shared_address(mem)
    return None if address is None else (*acc, address, max(acc[0] // 4, 1))


@form("LDS")
def _lds(step, fallback, x):
    ins = step.ins
    d, mem = ins.operands[0], ins.operands[1]
    got = _shared_access(ins, mem, d, tuple(m for m in ins.modifiers if m != "U"))
    if got is None:
        return None
    size, signed, address, nwords = got
    dsts = [x.dst(Reg("R", d.index + k)) for k in range(nwords)] if d.index != 255 else []
    if None in dsts:
        return None
    align = _aligned(size)
    sign = 1 << (8 * size - 1) if signed else 0

    def lds(t, s, active, mask):
        a = address(t)
        if a & align or a + size > t.launch.shared_total:
            return fallback(t, s, active, mask)
        v = int.from_bytes(t.shared[a:a + size], "little")
        if sign and v & sign:
            v = (v - (sign << 1)) & M32
        for write in dsts:
            write(t, v & M32, mask)
            v >>= 32
    return lds


@form("STS")
def _sts(step, fallback, x):
    ins = step.ins
    mem, value = ins.operands[0], ins.operands[1]
    got = _shared_access(ins, mem, value, ins.modifiers)
    if got is None:
        return None
    size, _, address, nwords = got
    srcs = [x.src(Reg("R", value.index + k) if value.index != 255 else value, neg=False) for k in range(nwords)]
    if None in srcs:
        return None
    align = _aligned(size)
    keep = (1 << (8 * size)) - 1

    def sts(t, s, active, mask):
        a = address(t)
        if a & align or a + size > t.launch.shared_total:
            return fallback(t, s, active, mask)
        v = 0
        for k, f in enumerate(srcs):
            v |= f(t) << (32 * k)
        t.shared[a:a + size] = (v & keep).to_bytes(size, "little")
    return sts


# --------------------------------------------------------------------------- MUFU from libm

def _turns(x: float) -> float:
    """x less its whole revolutions (x - floor(x), exact for an FP32 value)."""
    return x - math.floor(x)


def _sin(x: float):
    turns = _turns(x)
    return math.copysign(0.0, x) if turns == 0 else np.sin(turns * 2 * math.pi)


def _cos(x: float):
    return np.cos(_turns(x) * 2 * math.pi)


# the MUFU functions of a double's high word `_mufu64h` computes (a set: bench/emu_exec_paths.py
# empties it to time the scalar path without them)
MUFU64H = {"RCP64H", "RSQ64H"}

# fn → (f, whether an input is in the domain where NumPy computes it without a warning)
_LIBM = {
    "SIN": (_sin, math.isfinite),
    "COS": (_cos, math.isfinite),
    "TANH": (np.tanh, math.isfinite),
}


@form("MUFU")
def _mufu(step, fallback, x):
    """MUFU.EX2/LG2/SIN/COS/TANH as ops_float.op_mufu: the FP32 source (`|.|`, `-`, then a
    denormal flushed, except for TANH); EX2/LG2 the H200's measured function of its bits,
    the others NumPy's function of it in FP64 rounded to FP32 (a denormal flushed, except
    for TANH), a NaN the canonical one."""
    ins = step.ins
    if len(ins.modifiers) == 1 and ins.modifiers[0] in MUFU64H and len(ins.operands) == 2:
        return _mufu64h(step, fallback, x)
    if len(ins.modifiers) != 1 or len(ins.operands) != 2 \
            or ins.modifiers[0] not in _LIBM and ins.modifiers[0] not in MODELS_ONE:
        return None
    name = ins.modifiers[0]
    d, a_op = x.dst(ins.operands[0]), ins.operands[1]
    a = x.src(a_op, neg=False)
    if d is None or a is None:
        return None
    keep = 0x7FFFFFFF if getattr(a_op, "abs", False) else M32
    flip = 0x80000000 if getattr(a_op, "neg", False) else 0
    flush = (lambda b: b) if name == "TANH" else _flush

    if name in MODELS_ONE:
        # the H200's measured EX2/LG2 (emu/mufu_measured.py): every input, no fallback needed
        measured = MODELS_ONE[name]

        def measured_mufu(t, s, active, mask):
            d(t, measured(_flush((a(t) & keep) ^ flip)), mask)
        return measured_mufu
    fn, domain = _LIBM[name]

    def mufu(t, s, active, mask):
        v = f32_value(flush((a(t) & keep) ^ flip))
        if not domain(v):
            return fallback(t, s, active, mask)
        r = f32_bits(float(fn(v)))
        d(t, r if r == 0x7FFFFFFF else flush(r), mask)
    return mufu


# --------------------------------------------------------------------------- F2FP

@form("F2FP")
def _f2fp(step, fallback, x):
    """F2FP.{F16,BF16}.F32.PACK_AB (RELU, SATFINITE, MERGE_C) as ops_float.op_f2fp, each
    value narrowed by fp.f64_to_half_bits (the handler's helper) on one element."""
    from .fp import f64_to_half_bits
    ins = step.ins
    mods = set(ins.modifiers)
    if ins.opcode != "F2FP" or "F32" not in mods or "PACK_AB" not in mods or len(ins.operands) != 3 \
            or mods - {"F16", "BF16", "F32", "PACK_AB", "RELU", "SATFINITE", "MERGE_C", "RN", "RZ"}:
        return None
    kind = "bf16" if "BF16" in mods else "f16"
    relu, merge, sat = "RELU" in mods, "MERGE_C" in mods, "SATFINITE" in mods
    mode = step.aux.get("mode", "RN")
    d, a_op, b_op = ins.operands
    w = x.dst(d)
    a, b = x.src(a_op, neg=False), x.src(b_op, neg=False)
    if w is None or a is None or b is None:
        return None
    maxbits, infbits = (0x7BFF, 0x7C00) if kind == "f16" else (0x7F7F, 0x7F80)

    def bits(op):
        keep = 0x7FFFFFFF if getattr(op, "abs", False) else M32
        flip = 0x80000000 if getattr(op, "neg", False) else 0
        return keep, flip

    (ka, fa), (kb, fb) = bits(a_op), bits(b_op)

    def conv(v: int) -> int:
        y = f32_value(v)
        if relu:
            y = float(np.maximum(y, 0.0))
        h = int(f64_to_half_bits(np.array([y]), kind, mode)[0])
        if sat and h & 0x7FFF == infbits:
            h = (h & 0x8000) | maxbits
        return h

    if merge:
        def f2fp_merge(t, s, active, mask):
            va = (a(t) & ka) ^ fa
            if va & _NAN == _NAN and va & 0x7FFFFF:
                return fallback(t, s, active, mask)     # a NaN's payload: the handler's
            w(t, ((b(t) & 0xFFFF) << 16) | conv(va), mask)
        return f2fp_merge

    def f2fp(t, s, active, mask):
        va, vb = (a(t) & ka) ^ fa, (b(t) & kb) ^ fb
        if va & _NAN == _NAN and va & 0x7FFFFF or vb & _NAN == _NAN and vb & 0x7FFFFF:
            return fallback(t, s, active, mask)
        w(t, (conv(va) << 16) | conv(vb), mask)
    return f2fp


_NAN = 0x7F800000


# --------------------------------------------------------------------------- PRMT, PLOP3

@form("PRMT")
def _prmt(step, fallback, x):
    """PRMT's default mode with any selector (ops_int.op_prmt): byte n of the result is byte
    `sel[4n+2:4n]` of b:a, or that byte's sign replicated where `sel[4n+3]` is set."""
    ins = step.ins
    if ins.modifiers or len(ins.operands) != 4:
        return None
    d_op, a_op, sel_op, b_op = ins.operands
    d, a, sel, b = x.dst(d_op), x.src(a_op), x.src(sel_op), x.src(b_op)
    if None in (d, a, sel, b):
        return None

    def prmt(t, s, active, mask):
        low = a(t)
        selector = sel(t)           # (read before b, as the handler reads them)
        pool = low | b(t) << 32
        out = 0
        for i in range(4):
            nib = selector >> (4 * i) & 0xF
            byte = pool >> (8 * (nib & 7)) & 0xFF
            if nib & 8:
                byte = 0xFF if byte & 0x80 else 0
            out |= byte << (8 * i)
        d(t, out, mask)
    return prmt


def _sign_pred(op, x):
    """x.pred(op), or for a register's `.SIGN` (`Lanes.pred`) f(t) → its sign bit (`!`: not)."""
    if op.__class__ is Reg and op.file in ("R", "UR") and "SIGN" in op.suffix and not op.neg and not op.abs:
        get = x.src(Reg(op.file, op.index), neg=False)
        if get is None:
            return None
        inv = op.inv
        return lambda t: not get(t) >> 31 if inv else bool(get(t) >> 31)
    return x.pred(op)


@form("PLOP3")
def _plop3(step, fallback, x):
    """PLOP3.LUT Pd, Pd2, a, b, c, lut, lut2 (ops_int.op_plop3): both results from the
    sources as they were."""
    ins = step.ins
    ops = ins.operands
    if ins.modifiers != ("LUT",) or len(ops) != 7 or ops[5].__class__ is not Imm \
            or ops[6].__class__ is not Imm:
        return None
    p1, p2 = x.dst_pred(ops[0]), x.dst_pred(ops[1])
    a, b, c = (_sign_pred(op, x) for op in ops[2:5])
    if None in (p1, p2, a, b, c):
        return None
    lut, lut2 = int(ops[5].value), int(ops[6].value)

    def plop3(t, s, active, mask):
        i = (4 if a(t) else 0) | (2 if b(t) else 0) | (1 if c(t) else 0)
        p1(t, lut >> i & 1, mask)
        p2(t, lut2 >> i & 1, mask)
    return plop3


# --------------------------------------------------------------------------- integer and warp


@form("BREV")
def _brev(step, fallback, x):
    """BREV: the 32-bit source (`~` and `-` applied, as the handler's `w.ri`) bit-reversed."""
    ops = step.ins.operands
    if len(ops) != 2 or step.ins.modifiers:
        return None
    write, get = x.dst(ops[0]), x.src(ops[1])
    if write is None or get is None:
        return None
    return lambda t, s, active, mask: write(t, int(f"{get(t):032b}"[::-1], 2), mask)


@form("VOTE")
def _vote(step, fallback, x):
    """VOTE.ALL/ANY/EQ of the one thread (lane 0 of its warp, the only lane active): the
    ballot is 1 where the predicate holds, each register destination gets the ballot and
    each predicate one the vote, in operand order (the handler's `op_vote`)."""
    ops = step.ins.operands
    kinds = [m for m in step.ins.modifiers if m in ("ALL", "ANY", "EQ")]
    if len(kinds) != 1 or len(step.ins.modifiers) != 1 or len(ops) < 2:
        return None
    kind = kinds[0]
    get = x.pred(ops[-1])
    writes = []
    for d in ops[:-1]:
        if d.__class__ is not Reg:
            return None
        w = x.dst(d) if d.file == "R" else x.dst_pred(d) if d.file == "P" else None
        if w is None:
            return None
        writes.append((w, d.file == "R"))
    if get is None:
        return None

    def vote(t, s, active, mask):
        ballot = 1 if get(t) else 0
        result = ballot == 1 if kind == "ALL" else ballot != 0 if kind == "ANY" else True
        for w, is_reg in writes:
            w(t, ballot if is_reg else result, mask)
    return vote


_LDC_SIZES = {(): (4, False), ("U8",): (1, False), ("S8",): (1, True), ("U16",): (2, False),
              ("S16",): (2, True), ("32",): (4, False), ("64",): (8, False)}


@form("LDC")
def _ldc(step, fallback, x):
    """LDC of a fixed `c[bank][offset]` (no index register, or a zero one), 1 to 8 bytes:
    the handler's words (narrow ones sign- or zero-extended). A read outside the bank raises
    the bank's fault, which hands the step to the machine (the handler raises it there)."""
    ops = step.ins.operands
    acc = _LDC_SIZES.get(tuple(step.ins.modifiers))
    if acc is None or len(ops) != 2:
        return None
    d, ref = ops
    if ref.__class__ is not ConstRef or getattr(ref, "ubank", None) is not None \
            or (ref.ureg is not None and not ref.ureg.is_zero) or d.__class__ is not Reg or d.file != "R":
        return None
    size, signed = acc
    bank, offset = ref.bank, ref.offset
    if d.is_zero:
        writes = []
    else:
        writes = [x.dst(Reg("R", d.index + i)) for i in range(max(size // 4, 1))]
        if None in writes:
            return None
    top = 1 << (8 * size)

    def ldc(t, s, active, mask):
        v = t.launch.const.read(bank, offset, size)
        if size < 4:
            if signed and v >= top >> 1:
                v -= top
            words = (v & M32,)
        elif size == 4:
            words = (v,)
        else:
            words = (v & M32, v >> 32)
        for w, word in zip(writes, words):
            w(t, word, mask)
    return ldc


# --------------------------------------------------------------------------- FP64

_PACK_Q, _UNPACK_D = struct.Struct("<Q").pack, struct.Struct("<d").unpack
_PACK_D, _UNPACK_Q = struct.Struct("<d").pack, struct.Struct("<Q").unpack
_F64_EXP, _F64_FRAC, _F64_QUIET = 0x7FF0000000000000, 0x000FFFFFFFFFFFFF, 0x0008000000000000
_F64_DEFAULT_NAN = 0xFFF8000000000000


def _f64_source(op, x):
    """(f(t) → the operand's double, f(t) → its register bits as `_f64_result` reads them for a
    NaN, or None) of an FP64 source as `Lanes.rd` reads it: a register pair with `-`/`|.|`, or
    a float immediate (the double it spells; none with its own sign flags or a NaN)."""
    if op.__class__ is Imm:
        if op.text is None or (op.value and "NAN" in op.text) or op.neg or op.abs:
            return None
        from ptx2sass.encoder.sass_text import float_value
        v = float_value(op)
        if v != v:
            return None
        return (lambda t: v), None
    if op.__class__ is not Reg or op.file != "R" or op.inv or op.suffix:
        return None
    keep = 0x7FFFFFFFFFFFFFFF if op.abs else M64
    flip = 1 << 63 if op.neg else 0
    raw = x.pair(op.index)
    return (lambda t: _UNPACK_D(_PACK_Q((raw(t) & keep) ^ flip))[0]), raw


def _f64_out(r: float, raws, t) -> int:
    """ops_float._f64_result's bits of `r`: a NaN takes the last NaN register source's bits
    (c, b, then a), quieted, else the default NaN."""
    if r == r:
        return _UNPACK_Q(_PACK_D(r))[0]
    for raw in reversed(raws):
        if raw is not None:
            v = raw(t)
            if v & _F64_EXP == _F64_EXP and v & _F64_FRAC:
                return v | _F64_QUIET
    return _F64_DEFAULT_NAN


def _f64_form(step, x, arity: int, modes):
    """(sources, raw readers, low and high destination writers) of a DFMA/DMUL whose rounding
    mode is in `modes`, or None."""
    ins = step.ins
    ops = ins.operands
    if len(ops) != arity + 1 or set(ins.modifiers) - set(modes):
        return None
    dop = ops[0]
    if dop.__class__ is not Reg or dop.file != "R" or dop.suffix:
        return None
    srcs = [_f64_source(op, x) for op in ops[1:]]
    if None in srcs:
        return None
    lo = x.dst(dop)
    hi = x.dst(Reg("R", dop.index + 1)) if dop.index != 255 else None
    if lo is None or (dop.index != 255 and hi is None):
        return None
    return [s[0] for s in srcs], [s[1] for s in srcs], lo, hi


def _reads_again(raws, x) -> list:
    """With the checker (`x.traced`), the register sources read again after the values, as
    `ops_float._f64_result` reads each one's bits (a, b, c) whatever the result."""
    return [r for r in raws if r is not None] if getattr(x, "traced", False) else []


@form("DFMA")
def _dfma(step, fallback, x):
    """DFMA with a float immediate among its sources (emu/single_lane.py's form takes register
    pairs only): fp.fma64 of the doubles (ops_float.op_dfma's one-lane path), the bits as
    `_f64_result` writes them."""
    from .fp import fma64, mode_of
    got = _f64_form(step, x, 3, ("RN", "RZ", "RM", "RP"))
    if got is None:
        return None
    (fa, fb, fc), raws, lo, hi = got
    mode = mode_of(step.ins.modifiers)
    again = _reads_again(raws, x)

    def dfma(t, s, active, mask):
        r = fma64(fa(t), fb(t), fc(t), mode)
        for raw in again:
            raw(t)
        out = _f64_out(r, raws, t)
        lo(t, out & M32, mask)
        if hi is not None:
            hi(t, out >> 32, mask)
    return dfma


@form("DMUL")
def _dmul(step, fallback, x):
    """DMUL (round to nearest): the IEEE product of the two doubles, which Python's float
    multiplication is (ops_float.op_dmul: NumPy's), the bits as `_f64_result` writes them."""
    got = _f64_form(step, x, 2, ("RN",))
    if got is None:
        return None
    (fa, fb), raws, lo, hi = got
    again = _reads_again(raws, x)

    def dmul(t, s, active, mask):
        r = fa(t) * fb(t)
        for raw in again:
            raw(t)
        out = _f64_out(r, raws, t)
        lo(t, out & M32, mask)
        if hi is not None:
            hi(t, out >> 32, mask)
    return dmul


def _mufu64h(step, fallback, x):
    """MUFU.RCP64H/RSQ64H of a register as ops_float.op_mufu: the source word the high word
    of a double (a subnormal one flushed to a zero of its sign), 1/x or 1/sqrt(x) in FP64,
    its high word rounded as `RCP64H_ROUNDING` says, a subnormal result flushed, NaN 0x7fffffff."""
    from . import ops_float
    ins = step.ins
    d_op, a_op = ins.operands
    if a_op.__class__ is not Reg or a_op.file not in ("R", "UR") or a_op.inv or a_op.neg or a_op.abs \
            or a_op.suffix:
        return None
    d, a = x.dst(d_op), x.src(a_op, neg=False)
    if d is None or a is None:
        return None
    rcp = ins.modifiers[0] == "RCP64H"

    def mufu64h(t, s, active, mask):
        h = a(t)
        if not h & 0x7FF00000:
            h &= 0x80000000
        v = _UNPACK_D(_PACK_Q(h << 32))[0]
        if v == 0:
            y = math.copysign(math.inf, v)
        elif rcp:
            y = 1.0 / v
        else:
            y = math.nan if v < 0 else 1.0 / math.sqrt(v)
        if y != y:
            out = 0x7FFFFFFF
        else:
            yb = _UNPACK_Q(_PACK_D(y))[0]
            if ops_float.RCP64H_ROUNDING == "extra4" and y - y == 0:
                yb += 1 << 27
            out = yb >> 32 & M32
            if not out & 0x7FF00000:
                out &= 0x80000000
        d(t, out, mask)
    return mufu64h


# --------------------------------------------------------------------------- IDP, FRND, F2F

def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


@form("IDP")
def _idp(step, fallback, x):
    """IDP.4A/.2A (ops_int.op_idp): four byte products (two halfword-by-byte ones, of b's low
    or `.HI` bytes), signed or unsigned as the type words say, summed with c as a signed
    32-bit value, the low 32 bits of the sum."""
    ins = step.ins
    mods = ins.modifiers
    types = [m for m in mods if m in ("S8", "U8", "S16", "U16")]
    if len(ins.operands) != 4 or len(types) != 2 or set(mods) - {"4A", "2A", "HI", "LO", *types}:
        return None
    d = x.dst(ins.operands[0])
    a, b, c = (x.src(op) for op in ins.operands[1:])
    if None in (d, a, b, c):
        return None
    four = "4A" in mods
    sa, sb = (types[0] == "S8", types[1] == "S8") if four else (types[0] == "S16", types[1] == "S8")
    shift = 16 if "HI" in mods else 0

    def idp(t, s, active, mask):
        va, vb = a(t), b(t)
        acc = _signed(c(t), 32)
        if four:
            for k in range(0, 32, 8):
                ea, eb = va >> k & 0xFF, vb >> k & 0xFF
                acc += (_signed(ea, 8) if sa else ea) * (_signed(eb, 8) if sb else eb)
        else:
            for j in range(2):
                ea, eb = va >> (16 * j) & 0xFFFF, vb >> (shift + 8 * j) & 0xFF
                acc += (_signed(ea, 16) if sa else ea) * (_signed(eb, 8) if sb else eb)
        d(t, acc & M32, mask)
    return idp


_TO_INTEGRAL = {"RN": round, "RZ": math.trunc, "RM": math.floor, "RP": math.ceil}


@form("FRND")
def _frnd(step, fallback, x):
    """FRND of an FP32 value (ops_float.op_frnd: `|.|`/`-`, FTZ's flush, NumPy's rounding to
    an integral value in the instruction's mode, a zero keeping the source's sign); an
    infinite or NaN source runs the handler."""
    from .fp import mode_of
    ins = step.ins
    mods = set(ins.modifiers)
    if len(ins.operands) != 2 or mods - {"FTZ", "RN", "RZ", "RM", "RP", "TRUNC", "FLOOR", "CEIL", "ROUND"}:
        return None
    d, a_op = ins.operands
    w, a = x.dst(d), x.src(a_op, neg=False)
    if w is None or a is None or a_op.__class__ is not Reg:
        return None
    keep = 0x7FFFFFFF if getattr(a_op, "abs", False) else M32
    flip = 0x80000000 if getattr(a_op, "neg", False) else 0
    ftz = "FTZ" in mods
    fn = _TO_INTEGRAL[mode_of(ins.modifiers)]

    def frnd(t, s, active, mask):
        bits = (a(t) & keep) ^ flip
        if ftz:
            bits = _flush(bits)
        if bits & _NAN == _NAN:
            return fallback(t, s, active, mask)
        v = f32_value(bits)
        w(t, f32_bits(math.copysign(float(fn(v)), v)), mask)
    return frnd


@form("F2F")
def _f2f(step, fallback, x):
    """F2F.F64.F32 (ops_float.op_f2f): an FP32 number widened exactly, its register pair's
    bits; a NaN source runs the handler."""
    ins = step.ins
    if ins.modifiers != ("F64", "F32") or len(ins.operands) != 2:
        return None
    d_op, a_op = ins.operands
    if d_op.__class__ is not Reg or d_op.file != "R" or d_op.index >= 254 or d_op.suffix:
        return None
    lo, hi, a = x.dst(d_op), x.dst(Reg("R", d_op.index + 1)), x.src(a_op, neg=False)
    if None in (lo, hi, a) or a_op.__class__ is not Reg:
        return None
    keep = 0x7FFFFFFF if getattr(a_op, "abs", False) else M32
    flip = 0x80000000 if getattr(a_op, "neg", False) else 0
    twice = getattr(x, "traced", False)     # (the handler reads the source again for a NaN's bits)

    def f2f(t, s, active, mask):
        bits = (a(t) & keep) ^ flip
        if twice:
            a(t)
        if bits & _NAN == _NAN and bits & 0x7FFFFF:
            return fallback(t, s, active, mask)
        out = _UNPACK_Q(_PACK_D(f32_value(bits)))[0]
        lo(t, out & M32, mask)
        hi(t, out >> 32, mask)
    return f2f


# --------------------------------------------------------------------------- FCHK, I2FP, FMUL, VOTEU

def _plain_reg(op) -> bool:
    return op.__class__ is Reg and op.file in ("R", "UR") and not (op.neg or op.abs or op.inv or op.suffix)


@form("FCHK")
def _fchk(step, fallback, x):
    """FCHK Pd, a, b (ops_float.op_fchk): true unless b's biased exponent is 1..252 and a is
    a zero or has a biased exponent 25..252 within (-125, 126) of b's."""
    ins = step.ins
    if ins.modifiers or len(ins.operands) != 3:
        return None
    pd, a_op, b_op = ins.operands
    p, a, b = x.dst_pred(pd), x.src(a_op, neg=False), x.src(b_op, neg=False)
    if None in (p, a, b) or not (_plain_reg(a_op) and _plain_reg(b_op)):
        return None

    def fchk(t, s, active, mask):
        va, vb = a(t), b(t)
        ea, eb = va >> 23 & 0xFF, vb >> 23 & 0xFF
        ok = 1 <= eb <= 252 and (not va & 0x7FFFFFFF or (25 <= ea <= 252 and -125 < ea - eb < 126))
        p(t, not ok, mask)
    return fchk


@form("I2FP")
def _i2fp(step, fallback, x):
    """I2FP.F32.U32/.S32 (ops_float._i2f): the 32-bit integer, exact in FP64, rounded to FP32
    to nearest."""
    ins = step.ins
    mods = set(ins.modifiers)
    if len(ins.operands) != 2 or mods - {"F32", "RN"} - {"U32", "S32"} or len(mods & {"U32", "S32"}) != 1:
        return None
    d_op, a_op = ins.operands
    d, a = x.dst(d_op), x.src(a_op, neg=False)
    if d is None or a is None or not _plain_reg(a_op):
        return None
    signed = "S32" in mods

    def i2fp(t, s, active, mask):
        v = a(t)
        if signed and v >> 31:
            v -= 1 << 32
        d(t, f32_bits(float(v)), mask)
    return i2fp


@form("FMUL")
def _fmul_rz(step, fallback, x):
    """FMUL.RZ (emu/single_lane.py's form rounds to nearest only): fp.fmul32 on one value:
    the product exact in FP64, rounded to FP32 to nearest and one step back towards zero
    where that went past it (fp.narrow_f64; an overflow to infinity becomes the largest
    finite value), FTZ flushing sources and result."""
    from .fp import mode_of
    ins = step.ins
    mods = set(ins.modifiers)
    mode = mode_of(ins.modifiers)
    if len(ins.operands) != 3 or mode != "RZ" or mods - {"FTZ", mode}:
        return None
    d_op, a_op, b_op = ins.operands
    d, a, b = x.dst(d_op), x.src(a_op, neg=False), x.src(b_op, neg=False)
    if None in (d, a, b) or getattr(a_op, "inv", False) or getattr(b_op, "inv", False):
        return None
    (ka, fa), (kb, fb) = ((0x7FFFFFFF if getattr(op, "abs", False) else M32,
                           0x80000000 if getattr(op, "neg", False) else 0) for op in (a_op, b_op))
    ftz = "FTZ" in mods

    def fmul(t, s, active, mask):
        ba, bb = (a(t) & ka) ^ fa, (b(t) & kb) ^ fb
        if ftz:
            ba, bb = _flush(ba), _flush(bb)
        p = f32_value(ba) * f32_value(bb)
        r = f32_bits(p)
        back = f32_value(r)
        if abs(back) > abs(p):
            r -= 1
        d(t, _flush(r) if ftz else r, mask)
    return fmul


@form("VOTEU")
def _voteu(step, fallback, x):
    """VOTEU.ALL/ANY/EQ of the one thread, unguarded (ops_warp.op_vote): the ballot (1 where
    the predicate holds) to each uniform register destination, the vote to each uniform
    predicate one."""
    ins = step.ins
    ops = ins.operands
    kinds = [m for m in ins.modifiers if m in ("ALL", "ANY", "EQ")]
    if step.guard is not None or len(kinds) != 1 or len(ins.modifiers) != 1 or len(ops) < 2:
        return None
    kind = kinds[0]
    get = x.pred(ops[-1])
    regs, preds = [], []
    for d in ops[:-1]:
        if d.__class__ is not Reg or d.suffix or d.file not in ("UR", "UP"):
            return None
        if d.file == "UR" and d.index != 255:
            regs.append(d.index)
        elif d.file == "UP" and d.index != 7:
            preds.append(d.index)
    if get is None:
        return None

    def voteu(t, s, active, mask):
        ballot = 1 if get(t) else 0
        result = ballot == 1 if kind == "ALL" else ballot != 0 if kind == "ANY" else True
        for i in regs:
            t.UR[i] = ballot
        for i in preds:
            t.UP[i] = result
    return voteu


_F2I_INTS = {"U8": (8, False), "S8": (8, True), "U16": (16, False), "S16": (16, True),
             "U32": (32, False), "S32": (32, True)}


@form("F2I")
def _f2i(step, fallback, x):
    """F2I of an FP32 value to a 32-bit or narrower integer (ops_float._f2i): `|.|`/`-`, FTZ's
    flush, rounded to an integer in the instruction's mode, clamped to the type's range, a
    NaN 0; the low 32 bits of the result."""
    from .fp import mode_of
    ins = step.ins
    mods = set(ins.modifiers)
    ints = [m for m in ins.modifiers if m in ("U8", "S8", "U16", "S16", "U32", "S32", "U64", "S64")]
    if len(ins.operands) != 2 or len(ints) > 1 or (ints and ints[0] not in _F2I_INTS) \
            or mods - {"F32", "FTZ", "NTZ", "RN", "RZ", "RM", "RP", "TRUNC", "FLOOR", "CEIL", "ROUND", *ints}:
        return None
    bits, signed = _F2I_INTS[ints[0] if ints else "S32"]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    d_op, a_op = ins.operands
    d, a = x.dst(d_op), x.src(a_op, neg=False)
    if d is None or a is None or a_op.__class__ is not Reg or a_op.inv or a_op.suffix:
        return None
    keep = 0x7FFFFFFF if a_op.abs else M32
    flip = 0x80000000 if a_op.neg else 0
    ftz = "FTZ" in mods
    fn = _TO_INTEGRAL[mode_of(ins.modifiers)]

    def f2i(t, s, active, mask):
        b = (a(t) & keep) ^ flip
        if ftz:
            b = _flush(b)
        if b & _NAN == _NAN:
            v = 0 if b & 0x7FFFFF else lo if b >> 31 else hi
        else:
            v = fn(f32_value(b))
            v = lo if v <= lo else hi if v >= hi else v
        d(t, v & M32, mask)
    return f2i


# --------------------------------------------------------------------------- IMAD.HI/.WIDE with carries, I2F

def _is_pred_reg(op) -> bool:
    return op.__class__ is Reg and op.file in ("P", "UP")


@form("IMAD")
def _imad_carry(step, fallback, x):
    """IMAD.HI/.WIDE with a carry out and/or in, or an inverted or negated c (emu/single_lane.py's
    form takes neither): ops_int.op_imad's 64-bit adder, `-c` as ~c + 1 and `~c` as ~c, the
    carry out that of the additions (.WIDE), or of the high word's (.HI)."""
    ins = step.ins
    mods = set(ins.modifiers)
    if not mods & {"WIDE", "HI"} or mods - {"WIDE", "HI", "U32", "X"} or {"WIDE", "HI"} <= mods:
        return None
    d_op, *rest = ins.operands
    pout = rest.pop(0) if rest and _is_pred_reg(rest[0]) else None
    if len(rest) not in (3, 4) or d_op.__class__ is not Reg or d_op.file != "R" or d_op.suffix:
        return None
    a_op, b_op, c_op = rest[:3]
    cin = rest[3] if len(rest) == 4 and "X" in mods else None
    a, b = x.src(a_op), x.src(b_op)
    if c_op.__class__ is Reg and c_op.file == "R" and not c_op.suffix:
        c64 = x.pair(c_op.index)
    elif c_op.__class__ is Imm:
        cv = c_op.value & M64
        c64 = lambda t: cv
    else:
        return None
    pw = x.dst_pred(pout) if pout is not None else None
    cf = x.pred(cin) if cin is not None else None
    if None in (a, b, c64) or (pout is not None and pw is None) or (cin is not None and cf is None):
        return None
    wide = "WIDE" in mods
    lo = x.dst(d_op)
    hi = x.dst(Reg("R", d_op.index + 1)) if wide and d_op.index != 255 else None
    if lo is None or (wide and d_op.index != 255 and hi is None):
        return None
    signed = "U32" not in mods
    one = 1 if getattr(c_op, "neg", False) else 0
    invert = bool(one or getattr(c_op, "inv", False))
    # with the checker, what op_imad reads: the carry in, a and b, c; for .HI a and b twice more
    again = (a, b, a, b) if getattr(x, "traced", False) and not wide else ()

    def imad(t, s, active, mask):
        carry = 1 if cf is not None and cf(t) else 0
        va, vb = a(t), b(t)
        if signed:
            va = va - (1 << 32) if va >> 31 else va
            vb = vb - (1 << 32) if vb >> 31 else vb
        full = va * vb
        c = c64(t)
        for f in again:
            f(t)
        if invert:
            c = ~c & M64
        if wide:
            prod = full & M64
            partial = (prod + c) & M64
            plus = (partial + one) & M64
            total = (plus + carry) & M64
            out = partial < prod or plus < partial or total < plus
            lo(t, total & M32, mask)
            if hi is not None:
                hi(t, total >> 32, mask)
        else:
            res = ((full >> 32) & M32) + (c >> 32) + ((full & M32) + (c & M32) + one >> 32) + carry
            out = res >> 32 != 0
            lo(t, res & M32, mask)
        if pw is not None:
            pw(t, out, mask)
    return imad


def _f32_step(bits: int, up: bool) -> int:
    """The FP32 next to `bits` towards +inf (`up`) or -inf (np.nextafter on the bits)."""
    if up:
        return bits + 1 if not bits >> 31 else 0x00000001 if bits == 0x80000000 else bits - 1
    return bits + 1 if bits >> 31 else 0x80000001 if bits == 0 else bits - 1


@form("I2F")
def _i2f(step, fallback, x):
    """I2F of a 32-bit integer to FP32 (ops_float._i2f): the integer, exact in FP64, rounded to
    FP32 in the instruction's mode (fp.narrow_f64: to nearest, then one step back where that
    went past it on the mode's side)."""
    from .fp import mode_of
    ins = step.ins
    mods = set(ins.modifiers)
    ints = mods & {"U32", "S32"}
    if len(ins.operands) != 2 or len(ints) > 1 or mods - {"F32", "RN", "RZ", "RM", "RP", *ints}:
        return None
    d_op, a_op = ins.operands
    d, a = x.dst(d_op), x.src(a_op, neg=False)
    if d is None or a is None or not _plain_reg(a_op):
        return None
    signed = "U32" not in mods
    mode = mode_of(ins.modifiers)

    def i2f(t, s, active, mask):
        v = a(t)
        if signed and v >> 31:
            v -= 1 << 32
        r = f32_bits(float(v))
        back = f32_value(r)
        if mode == "RZ":
            if abs(back) > abs(v):
                r -= 1
        elif mode == "RM":
            if back > v:
                r = _f32_step(r, False)
        elif mode == "RP":
            if back < v:
                r = _f32_step(r, True)
        d(t, r, mask)
    return i2f


# --------------------------------------------------------------------------- LEA

@form("LEA")
def _lea(step, fallback, x):
    """LEA Rd[, Pc], a, b, sh[, Pcin] and LEA.HI Rd[, Pc], a, b[, c], sh[, Pcin] (ops_int.op_lea):
    a (with c, or a's sign under .SX32, as its high word for .HI) shifted left by `sh`, the
    low word (.HI: the high word) plus b (`-b` as ~b + 1) plus the carry in; the carry out."""
    ins = step.ins
    mods = set(ins.modifiers)
    if mods - {"HI", "X", "SX32"}:
        return None
    ops = ins.operands
    d_op, i, pouts = ops[0], 1, []
    while i < len(ops) and _is_pred_reg(ops[i]) and len(ops) - i > 3:
        pouts.append(ops[i])
        i += 1
    rest = list(ops[i:])
    if "HI" in mods:
        if len(rest) >= 4 and not _is_pred_reg(rest[3]) and rest[3].__class__ is Imm:
            a_op, b_op, c_op, sh_op, tail = rest[0], rest[1], rest[2], rest[3], rest[4:]
        else:
            a_op, b_op, c_op, sh_op, tail = rest[0], rest[1], None, rest[2], rest[3:]
    else:
        a_op, b_op, c_op, sh_op, tail = rest[0], rest[1], None, rest[2], rest[3:]
    if sh_op.__class__ is not Imm or getattr(b_op, "inv", False) or len(pouts) > 1 or len(tail) > 1:
        return None
    cin = tail[0] if "X" in mods and tail else None
    d = x.dst(d_op)
    a, b = x.src(a_op), x.src(b_op, neg=False)
    c = x.src(c_op) if c_op is not None else None
    pw = x.dst_pred(pouts[0]) if pouts else None
    cf = x.pred(cin) if cin is not None else None
    if None in (d, a, b) or (c_op is not None and c is None) or (pouts and pw is None) \
            or (cin is not None and cf is None):
        return None
    sh = int(sh_op.value) & 31
    bneg = getattr(b_op, "neg", False)
    hi_mode = "HI" in mods
    sx = "SX32" in mods

    def lea(t, s, active, mask):
        va = a(t)
        vb = b(t)
        if bneg:
            vb = (~vb & M32) + 1
        if hi_mode:
            high = c(t) if c is not None else (M32 if sx and va >> 31 else 0)
            part = ((high << 32 | va) << sh >> 32) & M32 if sh else high
        else:
            part = (va << sh) & M32
        total = part + vb + (1 if cf is not None and cf(t) else 0)
        d(t, total & M32, mask)
        if pw is not None:
            pw(t, total >> 32 != 0, mask)
    return lea


# --------------------------------------------------------------------------- FADD/FFMA in a directed mode

def _narrow_directed(s: float, mode: str) -> int:
    """fp.narrow_f64 of one FP64 value in RZ/RM/RP, as FP32 bits: rounded to nearest, then
    one step back where that went past `s` on the mode's side."""
    r = f32_bits(s)
    back = f32_value(r)
    if mode == "RZ":
        if abs(back) > abs(s):
            r -= 1
    elif mode == "RM":
        if back > s:
            r = _f32_step(r, False)
    elif back < s:
        r = _f32_step(r, True)
    return r


def _directed(step, x, arity: int):
    """f(t) → the FP32 bits of FADD (arity 2) or FFMA (3) in RZ/RM/RP as fp.fadd32/ffma32
    compute them: `|.|`/`-` and FTZ's flush on the sources, the exact product, the sum rounded
    to odd in FP64 (fp._sum_rto, add_rto's one-lane form), an exact zero sum's sign in RM
    (fp.zero_sum_sign), the directed narrowing, FTZ's flush of the result, NaN canonical."""
    from .fp import _sum_rto, mode_of
    ins = step.ins
    mods = set(ins.modifiers)
    mode = mode_of(ins.modifiers)
    if len(ins.operands) != arity + 1 or mode == "RN" or mods - {"FTZ", mode}:
        return None
    srcs = []
    for op in ins.operands[1:]:
        f = x.src(op, neg=False)
        if f is None or getattr(op, "inv", False):
            return None
        srcs.append((f, 0x7FFFFFFF if getattr(op, "abs", False) else M32, 0x80000000 if getattr(op, "neg", False) else 0))
    ftz = "FTZ" in mods

    def value(t):
        vals = []
        for f, keep, flip in srcs:
            b = (f(t) & keep) ^ flip
            vals.append(f32_value(_flush(b) if ftz else b))
        if arity == 3:
            p, c = vals[0] * vals[1], vals[2]
        else:
            p, c = vals
        s = _sum_rto(p, c)
        if mode == "RM" and s == 0 and not (p == 0 and c == 0 and math.copysign(1, p) > 0 < math.copysign(1, c)):
            s = -0.0
        r = _narrow_directed(s, mode)
        if r & _NAN == _NAN and r & 0x7FFFFF:
            return 0x7FFFFFFF
        return _flush(r) if ftz else r
    return value


@form("FADD")
def _fadd_directed(step, fallback, x):
    """FADD.RZ/.RM/.RP (emu/single_lane.py's form rounds to nearest only): `_directed`."""
    d, value = x.dst(step.ins.operands[0]), _directed(step, x, 2)
    if d is None or value is None:
        return None
    return lambda t, s, active, mask: d(t, value(t), mask)


@form("FFMA")
def _ffma_directed(step, fallback, x):
    """FFMA.RZ/.RM/.RP (emu/single_lane.py's form rounds to nearest only): `_directed`."""
    d, value = x.dst(step.ins.operands[0]), _directed(step, x, 3)
    if d is None or value is None:
        return None
    return lambda t, s, active, mask: d(t, value(t), mask)
