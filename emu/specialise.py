"""Decode-time specialisation: the most frequent instruction forms compiled into closures that
do only their arithmetic.

The semantics handlers (ops_*) parse their operands and modifiers every time they run and
compute in wide types for generality. For the forms that dominate real kernels (moves,
integer adds and multiply-adds, shifts by constants, LOP3, compares, global loads and
stores, constant loads into uniform registers, FP32 add/multiply rounding to nearest), the
decoder builds instead a closure over pre-resolved operands with the handler's signature,
computing the same bits with as few NumPy operations as the form allows. Anything else
keeps its handler; a specialised form that meets a case it does not cover at run time (a
generic address in the shared window, say) calls the handler before doing anything.

Each closure also records the registers it reads and writes, in the handler's order, when
the machine traces for the hazard checker: tests/test_emu_specialise.py runs every form
found in the corpora both ways on random state and compares registers, memory, faults and
those traces.
"""
from __future__ import annotations

import sys
from functools import lru_cache
from typing import Callable

import numpy as np

from ptx2sass.encoder.model import ConstRef, Imm, Mem, Reg, SpecialReg

from .memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE

U32, U64, I64 = np.uint32, np.uint64, np.int64
M32 = U64(0xFFFFFFFF)
_ZERO32 = np.zeros(1, U32)
_ZERO32.flags.writeable = False


# --------------------------------------------------------------------------- operands

@lru_cache(maxsize=4096)
def _imm32(op: Imm) -> np.ndarray:
    if op.text is not None and not (op.value and "NAN" in op.text):
        from ptx2sass.encoder.sass_text import float_value
        v = np.array([np.float32(float_value(op))], dtype=np.float32).view(U32)
    else:
        v = np.array([op.value & 0xFFFFFFFF], dtype=U32)
    v.flags.writeable = False
    return v


def src32(op, neg: bool = True) -> Callable | None:
    """A reader f(w) of a 32-bit source as `w.ri(op)` (`neg`) or `w.r(op)` returns it,
    recording the same register reads; None for operands it does not cover."""
    negate = neg and getattr(op, "neg", False)
    if op.__class__ is Reg and op.file == "R":
        i, inv = op.index, op.inv
        if i == 255:
            v = ~_ZERO32 if inv else _ZERO32
            if negate:
                v = (U32(0) - v).astype(U32)
            return lambda w: v

        def read(w):
            m = w.m
            if m.tracing:
                m.reads.append(("R", i))
            row = m.R[i]
            v = row[w.sl] if w.sl is not None else row[w.idx]
            if inv:
                v = ~v
            return U32(0) - v if negate else v
        return read
    if op.__class__ is Imm:
        v = _imm32(op)
        if negate:
            v = (U32(0) - v).astype(U32)
        return lambda w: v
    if op.__class__ is ConstRef and op.ureg is None:
        def const(w):
            v = w.r(op)
            return U32(0) - v if negate else v
        return const
    if op.__class__ is Reg and op.file == "UR":
        return (lambda w: w.ri(op)) if neg else (lambda w: w.r(op))
    return None


def uniform32(op, neg: bool = True) -> Callable | None:
    """A reader f(w, warps) of a source of the uniform datapath, one value per warp of
    `warps` (or one for all), recording the reads `w.ri`/`w.r` would."""
    negate = neg and getattr(op, "neg", False)
    if op.__class__ is Reg and op.file == "UR":
        i, inv = op.index, op.inv
        if op.is_zero:
            v = ~_ZERO32 if inv else _ZERO32
            if negate:
                v = (U32(0) - v).astype(U32)
            return lambda w, ws: v

        def read(w, ws):
            m = w.m
            if m.tracing:
                m.reads.append(("UR", i))
            v = m.UR[ws, i]
            if inv:
                v = ~v
            return U32(0) - v if negate else v
        return read
    if op.__class__ is Imm:
        v = _imm32(op)
        if negate:
            v = (U32(0) - v).astype(U32)
        return lambda w, ws: v
    if op.__class__ is ConstRef and op.ureg is None:
        def const(w, ws):
            v = w.r(op)
            return U32(0) - v if negate else v
        return const
    return None


def pred_src(op) -> Callable | None:
    if op.__class__ is Reg and op.file == "P":
        i, inv = op.index, op.inv
        if i == 7:
            v = np.array([not inv])
            return lambda w: v

        def read(w):
            m = w.m
            if m.tracing:
                m.reads.append(("P", i))
            row = m.P[i]
            v = row[w.sl] if w.sl is not None else row[w.idx]
            return ~v if inv else v
        return read
    return None


def dst32(op) -> Callable | None:
    """A writer f(w, values, mask) doing what `w.w(op, values, mask)` does for a general
    register."""
    if op.__class__ is not Reg or op.file != "R":
        return None
    i = op.index
    if i == 255:
        return lambda w, v, mask: None

    def write(w, values, mask):
        m = w.m
        if i >= m.regcount_limit:
            w.w(op, values, mask)           # the handler's fault
            return
        if m.tracing:
            m.writes.append(("R", i))
        row = m.R[i]
        if w.sl is not None:
            if mask is w.active:
                row[w.sl] = values
            else:
                np.copyto(row[w.sl], values, where=mask, casting="unsafe")
        elif mask is w.active:
            row[w.idx] = values
        else:
            if values.shape[0] != 1:
                values = values[mask]
            row[w.idx[mask]] = values
    return write


def dst_pred(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "P":
        return None
    if op.index == 7:
        return lambda w, v, mask: None
    return lambda w, v, mask: w.wp(op, v, mask)


def _warps(w):
    """The warps of `w` as an index for per-warp arrays (a slice for one warp, or for a
    group's consecutive warps)."""
    return slice(w.warp, w.warp + 1) if w.warp >= 0 else w.ws


def dst_uniform(op) -> Callable | None:
    """A writer f(w, ws, values) of one value per warp (unguarded: every warp writes)."""
    if op.__class__ is not Reg or op.file != "UR":
        return None
    i = op.index
    if op.is_zero:
        return lambda w, ws, v: None

    def write(w, ws, values):
        m = w.m
        if m.tracing:
            m.writes.append(("UR", i))
        m.UR[ws, i] = values
    return write


# --------------------------------------------------------------------------- forms

FORMS: dict[str, Callable] = {}


def form(*opcodes):
    def register(fn):
        for op in opcodes:
            FORMS[op] = fn
        return fn
    return register


def specialise(step) -> Callable | None:
    """The closure for `step`'s form, or None (its handler runs)."""
    make = FORMS.get(step.ins.opcode)
    if make is None:
        return None
    return make(step, step.run)


def _is_pred(op) -> bool:
    return isinstance(op, Reg) and op.file in ("P", "UP")


def imad_moves_c(a, b) -> bool:
    """Whether IMAD.MOV's product a*b is zero, making it a move of c. `.MOV` is nvdisasm's
    name for any IMAD that moves a value, also `IMAD.MOV R8, R0, 0x1, RZ` (ptxas -g/-O0 for
    `mul.lo x, 1`), which moves a: every other IMAD.MOV is a*b + c."""
    return any((isinstance(o, Reg) and o.is_zero and not o.inv)
               or (isinstance(o, Imm) and o.value == 0) for o in (a, b))


@form("MOV")
def _mov(step, generic):
    ops = step.ins.operands
    if len(ops) != 2 or step.ins.modifiers:      # MOV.64 (sm_120): the handler
        return None
    d, a = dst32(ops[0]), src32(ops[1])
    if d is None or a is None:
        return None
    return lambda w, s, active, mask: d(w, a(w), mask)


@form("IMAD")
def _imad(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if "WIDE" in mods or "HI" in mods:
        return _imad_wide(step, generic)
    if len(ops) != 4 and not (len(ops) == 5 and "X" in mods):
        return None
    d = dst32(ops[0])
    if d is None or _is_pred(ops[1]):
        return None
    if "MOV" in mods and imad_moves_c(ops[1], ops[2]):
        c = src32(ops[3])
        if c is None:
            return None
        return lambda w, s, active, mask: d(w, c(w), mask)
    a, b, c = src32(ops[1]), src32(ops[2]), src32(ops[3])
    cin = pred_src(ops[4]) if len(ops) == 5 else None
    if None in (a, b, c) or (len(ops) == 5 and cin is None):
        return None
    if cin is not None:
        def imad_x(w, s, active, mask):
            carry = cin(w)
            d(w, a(w) * b(w) + c(w) + carry, mask)
        return imad_x

    def imad(w, s, active, mask):
        d(w, a(w) * b(w) + c(w), mask)
    return imad


def _imad_wide(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if "HI" in mods or "X" in mods or len(ops) != 4 or _is_pred(ops[1]):
        return None
    dop = ops[0]
    if dop.__class__ is not Reg or dop.file != "R":
        return None
    d_lo = dst32(dop)
    d_hi = dst32(Reg("R", dop.index + 1)) if dop.index != 255 else (lambda w, v, mask: None)
    a, b = src32(ops[1]), src32(ops[2])
    c_op = ops[3]
    const_c = c_op.__class__ is ConstRef and c_op.ureg is None and not c_op.inv
    if a is None or b is None or not (c_op.__class__ is Reg and c_op.file == "R" or const_c):
        return None
    ci, cneg = (c_op.index if not const_c else -1), c_op.neg
    signed = "U32" not in mods
    if c_op.inv:
        return None

    def wide(w, s, active, mask):
        va, vb = a(w), b(w)
        if signed:
            prod = (va.view(np.int32).astype(I64) * vb.view(np.int32).astype(I64)).view(U64)
        else:
            prod = va.astype(U64) * vb.astype(U64)
        if const_c:
            c = w.r64(c_op)
            prod = prod + (U64(0) - c if cneg else c)
        elif ci != 255:
            m = w.m
            if m.tracing:
                m.reads += [("R", ci), ("R", ci + 1)]
            lo = w._lane(m.R[ci]).astype(U64)
            hi = w._lane(m.R[ci + 1]).astype(U64) if ci + 1 < 255 else 0
            c = lo | (hi << U64(32))
            if cneg:
                c = U64(0) - c
            prod = prod + c
        d_lo(w, prod.astype(U32), mask)
        if dop.index != 255:
            d_hi(w, (prod >> U64(32)).astype(U32), mask)
    return wide


@form("IADD3")
def _iadd3(step, generic):
    ops = list(step.ins.operands)
    mods = step.ins.modifiers
    d = dst32(ops[0])
    rest = ops[1:]
    pouts = []
    while rest and _is_pred(rest[0]):
        pouts.append(rest.pop(0))
    if d is None or len(rest) < 3 or len(pouts) > 1:
        return None
    a, b, c = (src32(op) for op in rest[:3])
    cins = [pred_src(p) for p in rest[3:]] if "X" in mods else []
    if None in (a, b, c) or None in cins or (rest[3:] and "X" not in mods):
        return None
    if pouts:
        # the carry out needs the handler's 33-bit terms: -x adds ~x + 1 (2^32 for x = 0)
        pout = dst_pred(pouts[0])
        raw = [src32(op, neg=False) for op in rest[:3]]
        negs = [bool(getattr(op, "neg", False)) for op in rest[:3]]
        if pout is None:
            return None

        def iadd3_carry(w, s, active, mask):
            total = None
            for f, neg in zip(raw, negs):
                v = f(w).astype(U64)
                if neg:
                    v = (~v & M32) + U64(1)
                total = v if total is None else total + v
            for p in cins:
                total = total + p(w).astype(U64)
            d(w, total.astype(U32), mask)
            pout(w, total > M32, mask)
        return iadd3_carry
    if cins:
        def iadd3_x(w, s, active, mask):
            total = a(w) + b(w) + c(w)
            for p in cins:
                total = total + p(w)
            d(w, total, mask)
        return iadd3_x

    def iadd3(w, s, active, mask):
        d(w, a(w) + b(w) + c(w), mask)
    return iadd3


def _shift_fn(left: bool, hi_out: bool, signed: bool, k: int) -> Callable:
    """(lo, hi) uint32 → the 32 bits SHF keeps of (hi:lo) shifted by the constant k
    (already clamped: 0 <= k <= 64)."""
    if left:
        if not hi_out:
            return (lambda lo, hi: lo << U32(k)) if k < 32 else (lambda lo, hi: _ZERO32)
        if k == 0:
            return lambda lo, hi: hi
        if k < 32:
            return lambda lo, hi: (hi << U32(k)) | (lo >> U32(32 - k))
        if k < 64:
            return lambda lo, hi: lo << U32(k - 32)
        return lambda lo, hi: _ZERO32
    if signed:
        if hi_out:
            return lambda lo, hi: (hi.view(np.int32) >> np.int32(min(k, 31))).view(U32)
        if k == 0:
            return lambda lo, hi: lo
        if k < 32:
            return lambda lo, hi: (lo >> U32(k)) | (hi << U32(32 - k))
        return lambda lo, hi: (hi.view(np.int32) >> np.int32(min(k - 32, 31))).view(U32)
    if hi_out:
        return (lambda lo, hi: hi >> U32(k)) if k < 32 else (lambda lo, hi: _ZERO32)
    if k == 0:
        return lambda lo, hi: lo
    if k < 32:
        return lambda lo, hi: (lo >> U32(k)) | (hi << U32(32 - k))
    if k < 64:
        return lambda lo, hi: hi >> U32(k - 32)
    return lambda lo, hi: _ZERO32


@form("SHF")
def _shf(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if len(ops) != 4 or not isinstance(ops[2], Imm) or ops[2].text is not None:
        return None
    wide_type = "U64" in mods or "S64" in mods
    width = 64 if wide_type else 32
    k = ops[2].value & 0xFFFFFFFF
    k = k & (width - 1) if "W" in mods else min(k, width)
    fn = _shift_fn("L" in mods, "HI" in mods, "S32" in mods or "S64" in mods, k)
    d = dst32(ops[0])
    lo, hi = src32(ops[1], neg=False), src32(ops[3], neg=False)
    if None in (d, lo, hi):
        return None

    def shf(w, s, active, mask):
        vlo = lo(w)
        vhi = hi(w)
        d(w, fn(vlo, vhi), mask)
    return shf


# LOP3 truth tables by the inputs they depend on: two-input functions of (x, y) by their
# 4-bit table (bit 2*x + y), as NumPy expressions on uint32 arrays.
_LUT2 = {
    0x0: lambda x, y: x & ~x, 0xF: lambda x, y: x | ~x,
    0xC: lambda x, y: x, 0x3: lambda x, y: ~x, 0xA: lambda x, y: y, 0x5: lambda x, y: ~y,
    0x8: lambda x, y: x & y, 0xE: lambda x, y: x | y, 0x6: lambda x, y: x ^ y, 0x9: lambda x, y: ~(x ^ y),
    0x4: lambda x, y: x & ~y, 0x2: lambda x, y: ~x & y, 0xD: lambda x, y: x | ~y, 0xB: lambda x, y: ~x | y,
    0x7: lambda x, y: ~(x & y), 0x1: lambda x, y: ~(x | y),
}
_LUT3 = {
    0x96: lambda a, b, c: a ^ b ^ c, 0xFE: lambda a, b, c: a | b | c, 0x80: lambda a, b, c: a & b & c,
    0xF8: lambda a, b, c: a | (b & c), 0xEA: lambda a, b, c: c | (a & b), 0xEC: lambda a, b, c: b | (a & c),
    0xE8: lambda a, b, c: (a & b) | (c & (a | b)), 0xCA: lambda a, b, c: (a & b) | (~a & c),
    0xE2: lambda a, b, c: (a & b) | (c & ~b), 0x78: lambda a, b, c: a ^ (b & c),
    0x1E: lambda a, b, c: a ^ (b | c), 0x6A: lambda a, b, c: c ^ (a & b), 0x56: lambda a, b, c: c ^ (a | b),
}


@lru_cache(maxsize=None)
def _lut_fn(lut: int) -> Callable:
    """f(a, b, c) for an 8-bit table (bit 4a + 2b + c): a two-input operation when the
    table depends on two inputs or fewer, a known three-input one, else ops_int.lut3."""
    deps = [j for j, bit in enumerate((4, 2, 1))
            if any((lut >> i & 1) != (lut >> (i ^ bit) & 1) for i in range(8))]
    if len(deps) <= 2:
        x, y = (deps + [j for j in range(3) if j not in deps])[:2]
        table = 0
        for xv in (0, 1):
            for yv in (0, 1):
                bits = [0, 0, 0]
                bits[x], bits[y] = xv, yv
                table |= (lut >> (4 * bits[0] + 2 * bits[1] + bits[2]) & 1) << (2 * xv + yv)
        f2 = _LUT2[table]
        return lambda a, b, c: f2((a, b, c)[x], (a, b, c)[y])
    if lut in _LUT3:
        return _LUT3[lut]
    from .ops_int import lut3
    return lambda a, b, c: lut3(a, b, c, lut).astype(U32)


@lru_cache(maxsize=None)
def _check_lut(f, lut: int) -> bool:
    """The closure agrees with the table on all eight input combinations."""
    a, b, c = (np.array([0, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], U32),
               np.array([0, 0, 0xFFFFFFFF, 0xFFFFFFFF] * 2, U32), np.array([0, 0xFFFFFFFF] * 4, U32))
    got = np.broadcast_to(f(a, b, c), (8,))
    return all(bool(got[i]) == bool(lut >> i & 1) for i in range(8))


@form("LOP3")
def _lop3(step, generic):
    ops = list(step.ins.operands)
    pout = ops.pop(0) if _is_pred(ops[0]) else None
    if len(ops) < 5 or not isinstance(ops[4], Imm):
        return None
    lut = int(ops[4].value) & 0xFF
    f = _lut_fn(lut)
    if not _check_lut(f, lut):
        return None
    d = dst32(ops[0])
    a, b, c = src32(ops[1]), src32(ops[2]), src32(ops[3])
    wp = dst_pred(pout) if pout is not None else None
    # the predicate result is `res != 0` OR (AND with .PAND) the predicate source
    pin = pred_src(ops[5]) if pout is not None and len(ops) > 5 else (lambda w: True)
    if None in (d, a, b, c, pin) or (pout is not None and wp is None):
        return None
    pand = "PAND" in step.ins.modifiers

    def lop3(w, s, active, mask):
        res = f(a(w), b(w), c(w))
        d(w, res, mask)
        if wp is not None:
            nonzero, vin = res != 0, pin(w)
            wp(w, (nonzero & vin) if pand else (nonzero | vin), mask)
    return lop3


_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
        "GT": np.greater, "GE": np.greater_equal}
_COMBINE = {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}


@form("ISETP")
def _isetp(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if "EX" in mods or "U64" in mods or "S64" in mods or len(ops) != 5:
        return None
    cmp = next((m for m in mods if m in _CMP), None)
    if cmp is None:
        return None
    fcmp = _CMP[cmp]
    combine = next((_COMBINE[m] for m in ("AND", "OR", "XOR") if m in mods), None)
    p1, p2 = dst_pred(ops[0]), dst_pred(ops[1])
    a, b, pc = src32(ops[2]), src32(ops[3]), pred_src(ops[4])
    if None in (p1, p2, a, b, pc):
        return None
    unsigned = "U32" in mods

    def isetp(w, s, active, mask):
        va, vb = a(w), b(w)
        if not unsigned:
            va, vb = va.view(np.int32), vb.view(np.int32)
        base = fcmp(va, vb)
        vc = pc(w)
        if combine is not None:
            r1, r2 = combine(base, vc), combine(~base, vc)
        else:
            r1, r2 = base, ~base
        p1(w, r1, mask)
        p2(w, r2, mask)
    return isetp


@form("SEL")
def _sel(step, generic):
    ops = step.ins.operands
    if len(ops) != 4 or step.ins.modifiers:       # SEL.64 (sm_120): the handler
        return None
    d, a, b, p = dst32(ops[0]), src32(ops[1]), src32(ops[2]), pred_src(ops[3])
    if None in (d, a, b, p):
        return None

    def sel(w, s, active, mask):
        va, vb = a(w), b(w)
        d(w, np.where(p(w), va, vb), mask)
    return sel


@form("S2R")
def _s2r(step, generic):
    d, sr = step.ins.operands
    if not isinstance(sr, SpecialReg) or dst32(d) is None:
        return None
    write = dst32(d)
    axis = {"X": 0, "Y": 1, "Z": 2}.get(sr.name[-1])
    if sr.name.startswith("SR_TID.") and axis is not None:
        return lambda w, s, active, mask: write(w, w.tid[axis], mask)
    if sr.name.startswith("SR_CTAID.") and axis is not None:
        return lambda w, s, active, mask: write(w, w.ctaid[axis], mask)
    if sr.name == "SR_LANEID":
        return lambda w, s, active, mask: write(w, (w.lane_ids & 31).astype(U32), mask)
    return None


def prmt_terms(selector: int):
    """PRMT's default mode with a constant selector as (source, shift, mask) terms: result =
    OR of (source a or b shifted left by `shift` bits, negative: right) & mask; None when a
    byte replicates a sign."""
    groups: dict[tuple[int, int], int] = {}
    for i in range(4):
        nib = selector >> (4 * i) & 0xF
        if nib & 8:
            return None
        j = nib & 7
        key = (j // 4, 8 * (i - j % 4))
        groups[key] = groups.get(key, 0) | 0xFF << (8 * i)
    return [(src, shift, mask) for (src, shift), mask in groups.items()]


@form("PRMT")
def _prmt(step, generic):
    ins = step.ins
    if ins.modifiers or len(ins.operands) != 4:
        return None
    d_op, a_op, sel_op, b_op = ins.operands
    if not isinstance(sel_op, Imm) or sel_op.text is not None or sel_op.neg:
        return None
    terms = prmt_terms(sel_op.value & 0xFFFF)
    d, a, b = dst32(d_op), src32(a_op), src32(b_op)
    if terms is None or None in (d, a, b):
        return None
    terms = [(k, U32(sh) if sh >= 0 else U32(-sh), sh >= 0, U32(mask)) for k, sh, mask in terms]

    def prmt(w, s, active, mask):
        srcs = (a(w), b(w))
        out = None
        for k, sh, left, m in terms:
            v = srcs[k]
            v = ((v << sh) if left else (v >> sh)) & m
            out = v if out is None else out | v
        d(w, out, mask)
    return prmt


# --------------------------------------------------------------------------- uniform datapath

@form("ULDC", "LDCU")
def _uldc(step, generic):
    d, src = step.ins.operands
    mods = step.ins.modifiers
    if step.guard is not None or not isinstance(src, ConstRef) or src.ureg is not None or src.inv:
        return None
    size = 8 if "64" in mods else 4
    if set(mods) - {"64"}:
        return None
    lo, hi = dst_uniform(d), dst_uniform(Reg("UR", d.index + 1)) if size == 8 else None
    if lo is None or d.is_zero:
        return None
    key = ("ULDC", id(src))

    def uldc(w, s, active, mask):
        if mask is not active:
            return generic(w, s, active, mask)
        m = w.m
        v = m.const32.get(key)
        if v is None:
            v = m.const32[key] = w.launch.const.read(src.bank, src.offset, size)
        ws = _warps(w)
        lo(w, ws, v & 0xFFFFFFFF)
        if hi is not None:
            hi(w, ws, v >> 32)
    return uldc


@form("UMOV")
def _umov(step, generic):
    ops = step.ins.operands
    if step.guard is not None or len(ops) != 2 or step.ins.modifiers:     # UMOV.64: the handler
        return None
    d, a = dst_uniform(ops[0]), uniform32(ops[1])
    if d is None or a is None:
        return None

    def umov(w, s, active, mask):
        if mask is not active:
            return generic(w, s, active, mask)
        ws = _warps(w)
        d(w, ws, a(w, ws))
    return umov


@form("UIADD3")
def _uiadd3(step, generic):
    ops = list(step.ins.operands)
    if step.guard is not None or {"X", "64"} & set(step.ins.modifiers) or len(ops) != 4:
        return None
    d = dst_uniform(ops[0])
    a, b, c = (uniform32(op) for op in ops[1:4])
    if None in (d, a, b, c):
        return None

    def uiadd3(w, s, active, mask):
        if mask is not active:
            return generic(w, s, active, mask)
        ws = _warps(w)
        d(w, ws, a(w, ws) + b(w, ws) + c(w, ws))
    return uiadd3


@form("UIMAD")
def _uimad(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if step.guard is not None or len(ops) != 4 or set(mods) - {"U32"}:
        return None
    d = dst_uniform(ops[0])
    a, b, c = (uniform32(op) for op in ops[1:4])
    if None in (d, a, b, c):
        return None

    def uimad(w, s, active, mask):
        if mask is not active:
            return generic(w, s, active, mask)
        ws = _warps(w)
        d(w, ws, a(w, ws) * b(w, ws) + c(w, ws))
    return uimad


@form("USHF")
def _ushf(step, generic):
    mods = step.ins.modifiers
    ops = step.ins.operands
    if step.guard is not None or len(ops) != 4 or not isinstance(ops[2], Imm) or ops[2].text is not None:
        return None
    width = 64 if ("U64" in mods or "S64" in mods) else 32
    k = ops[2].value & 0xFFFFFFFF
    k = k & (width - 1) if "W" in mods else min(k, width)
    fn = _shift_fn("L" in mods, "HI" in mods, "S32" in mods or "S64" in mods, k)
    d = dst_uniform(ops[0])
    lo, hi = uniform32(ops[1], neg=False), uniform32(ops[3], neg=False)
    if None in (d, lo, hi):
        return None

    def ushf(w, s, active, mask):
        if mask is not active:
            return generic(w, s, active, mask)
        ws = _warps(w)
        vlo = lo(w, ws)
        d(w, ws, fn(vlo, hi(w, ws)))
    return ushf


# --------------------------------------------------------------------------- FP32

def _fp_form(step, arity: int, compute):
    ins = step.ins
    if set(ins.modifiers) - {"FTZ"} or len(ins.operands) != arity + 1:
        return None
    d = dst32(ins.operands[0])
    srcs = []
    for op in ins.operands[1:]:
        if getattr(op, "abs", False) or isinstance(op, ConstRef) and op.ureg is not None:
            return None
        f = src32(op, neg=False)
        if f is None:
            return None
        srcs.append((f, bool(getattr(op, "neg", False))))
    if d is None:
        return None
    ftz = "FTZ" in ins.modifiers
    from .fp import canonicalise_f32, flush_f32

    def read(w):
        out = []
        for f, neg in srcs:
            v = f(w)
            out.append((v ^ U32(0x80000000) if neg else v).view(np.float32))
        return out

    def run(w, s, active, mask):
        vals = read(w)
        if ftz:
            vals = [flush_f32(v) for v in vals]
        r = compute(*vals)                   # (under the launch's np.errstate: emu/fp.py)
        if ftz:
            r = flush_f32(r)
        d(w, canonicalise_f32(r), mask)
    return run


@form("FFMA")
def _ffma(step, generic):
    """a*b + c rounded once to nearest: the product is exact in FP64, the sum is rounded to
    odd there (TwoSum gives its error) and then narrowed, as fp.ffma32 computes it."""
    ins = step.ins
    if set(ins.modifiers) - {"FTZ"} or len(ins.operands) != 4:
        return None
    d = dst32(ins.operands[0])
    srcs = []
    for op in ins.operands[1:]:
        if getattr(op, "abs", False):
            return None
        f = src32(op, neg=False)
        if f is None:
            return None
        srcs.append((f, bool(getattr(op, "neg", False))))
    if d is None:
        return None
    ftz = "FTZ" in ins.modifiers
    from .fp import FEW_LANES, canonicalise_f32, ffma32_few, flush_f32
    (fa, na), (fb, nb), (fc, nc) = srcs
    sign = U32(0x80000000)
    f64, inf = np.float64, np.inf

    def ffma(w, s, active, mask):
        va, vb, vc = fa(w), fb(w), fc(w)
        va = (va ^ sign if na else va).view(np.float32)
        vb = (vb ^ sign if nb else vb).view(np.float32)
        vc = (vc ^ sign if nc else vc).view(np.float32)
        if ftz:
            va, vb, vc = flush_f32(va), flush_f32(vb), flush_f32(vc)
        if w.width <= FEW_LANES:
            r = ffma32_few(va, vb, vc)
            if ftz:
                r = flush_f32(r)
            d(w, canonicalise_f32(r), mask)
            return
        p = va.astype(f64) * vb.astype(f64)      # (under the launch's np.errstate: emu/fp.py)
        c = vc.astype(f64)
        t = p + c
        bb = t - p
        err = (p - (t - bb)) + (c - bb)
        nudge = (err != 0) & np.isfinite(err) & ((t.view(U64) & U64(1)) == 0)
        if np.count_nonzero(nudge):
            t = np.where(nudge, np.nextafter(t, np.where(err > 0, inf, -inf)), t)
        r = t.astype(np.float32)
        if ftz:
            r = flush_f32(r)
        d(w, canonicalise_f32(r), mask)
    return ffma


@form("I2F", "I2FP")
def _i2f(step, generic):
    """A 32-bit integer to FP32 (rounding to nearest: the C conversion NumPy does is the
    correctly rounded one) or FP64 (exact), as ops_float._i2f computes it."""
    ins = step.ins
    mods = set(ins.modifiers)
    ints = mods & {"U8", "S8", "U16", "S16", "U32", "S32", "U64", "S64"}
    if not ints <= {"U32", "S32"} or len(ints) > 1 or mods - {"U32", "S32", "F32", "F64", "RN"} \
            or len(ins.operands) != 2:
        return None
    signed = "U32" not in ints
    double = "F64" in mods
    d = dst32(ins.operands[0])
    a = src32(ins.operands[1], neg=False)
    a_op = ins.operands[1]
    if d is None or a is None or getattr(a_op, "suffix", ()):
        return None
    hi = dst32(Reg("R", ins.operands[0].index + 1)) if double and ins.operands[0].index != 255 else None
    if double and hi is None:
        return None

    def i2f(w, s, active, mask):
        v = a(w)
        v = v.view(np.int32) if signed else v
        if double:
            bits = v.astype(np.float64).view(U64)
            d(w, bits.astype(U32), mask)
            hi(w, (bits >> U64(32)).astype(U32), mask)
        else:
            d(w, v.astype(np.float32).view(U32), mask)
    return i2f


@form("F2FP")
def _f2fp(step, generic):
    """`F2FP.F16.F32.PACK_AB` / `F2FP.BF16.F32.PACK_AB d, a, b` to nearest even: a's half in
    the high 16 bits, b's in the low, as ops_float.op_f2fp computes it. An FP32 value is
    exact in FP64, so the handler's FP64 step (and, for BF16, its round-to-odd narrowing
    back to FP32) leaves it unchanged: F16 is NumPy's correctly rounded float32 -> float16
    cast, BF16 the FP32 bits rounded to nearest even (fp.f32_to_bf16_bits); a NaN gives the
    canonical 0x7fff. Both sources are converted as one (lanes, 2) array, b's column
    first, whose 16-bit halves read as little-endian words are the packed results."""
    ins = step.ins
    mods = ins.modifiers
    if len(mods) != 3 or tuple(mods[1:]) != ("F32", "PACK_AB") or mods[0] not in ("F16", "BF16") \
            or len(ins.operands) != 3 or sys.byteorder != "little":
        return None
    d_op, a_op, b_op = ins.operands
    for op in (a_op, b_op):
        if op.__class__ is not Reg or op.file != "R" or op.inv or getattr(op, "neg", False) \
                or getattr(op, "abs", False) or getattr(op, "suffix", ()):
            return None
    d, a, b = dst32(d_op), src32(a_op, neg=False), src32(b_op, neg=False)
    if None in (d, a, b):
        return None
    bf16 = mods[0] == "BF16"
    from .fp import BF16_CANONICAL_NAN, F16_CANONICAL_NAN
    nan_half = int(BF16_CANONICAL_NAN if bf16 else F16_CANONICAL_NAN)
    abs_mask, inf_bits, one, half = U32(0x7FFFFFFF), U32(0x7F800000), U32(1), U32(0x7FFF)
    sixteen = U32(16)

    def f2fp(w, s, active, mask):
        va = a(w)
        vb = b(w)
        pair = np.empty((w.width, 2), dtype=U32)
        pair[:, 0] = vb
        pair[:, 1] = va
        nan = (pair & abs_mask) > inf_bits
        if bf16:
            halves = ((pair + half + ((pair >> sixteen) & one)) >> sixteen).astype(np.uint16)
        else:
            halves = pair.view(np.float32).astype(np.float16).view(np.uint16)
        if np.count_nonzero(nan):
            halves[nan] = nan_half
        d(w, halves.view(U32).reshape(-1), mask)
    return f2fp


@form("SHFL")
def _shfl(step, generic):
    """`SHFL.{IDX,UP,DOWN,BFLY} Pd, Rd, Ra, b, c` with c an immediate (segment mask << 8 |
    clamp) or RZ and Ra a register, as ops_warp.op_shfl computes it: each lane's source lane j
    of its own warp and whether it is in range (Pd) depend only on its lane id when b is
    an immediate too (tables made here), else on b per lane against the lane's bound (a
    table). Out-of-range lanes read their own Ra; a source outside the group reads its
    register as it stands (stale)."""
    ins = step.ins
    ops = ins.operands
    mode = [m for m in ins.modifiers if m in ("IDX", "UP", "DOWN", "BFLY")]
    if len(ops) != 5 or len(mode) != 1 or len(ins.modifiers) != 1:
        return None
    mode = mode[0]
    pd_op, d_op, a_op, b_op, c_op = ops
    if a_op.__class__ is not Reg or a_op.file != "R" or a_op.is_zero:
        return None
    if c_op.__class__ is Reg and c_op.file == "R" and c_op.is_zero and not c_op.inv:
        c_op = Imm(0)                       # RZ: c = 0 (ptxas's UP with no clamp)
    elif c_op.__class__ is not Imm or c_op.text is not None:
        return None
    d, pd, b = dst32(d_op), dst_pred(pd_op), src32(b_op, neg=False)
    if None in (d, pd, b):
        return None
    ai, inv = a_op.index, a_op.inv
    from .ops_warp import shfl_source     # (ops_warp imports this module)
    c = c_op.value & 0xFFFFFFFF
    lane = np.arange(32, dtype=I64)

    def source(bv):
        """(source lane, in range) per lane id for shift/index values `bv` (0..31)."""
        return shfl_source(mode, lane, bv, c)

    fixed = b_op.__class__ is Imm
    if fixed:
        jt, okt = source(int(b(None)[0]) & 31)
    tables: dict = {}

    def lanes_of(w):
        """(each lane's source as a lane of the machine, in range) for `w`'s lanes, b an
        immediate; for groups of whole warps from a warp's lane 0, the sources relative to
        the group's first lane are kept per width."""
        sl = w.sl
        if sl is not None and not (sl.start | w.width) & 31:
            got = tables.get(w.width)
            if got is None:
                k = w.width >> 5
                offs = np.repeat(np.arange(k, dtype=I64) * 32, 32) + np.tile(jt, k)
                ok = np.tile(okt, k)
                offs.flags.writeable = ok.flags.writeable = False
                got = tables[w.width] = (offs, ok)
            return got[0] + sl.start, got[1]
        lid = w.idx & 31
        return (w.idx - lid) + jt[lid], okt[lid]

    def shfl(w, s, active, mask):
        m = w.m
        if m.tracing:
            m.reads.append(("R", ai))
        row = m.R[ai]
        if fixed:
            src, ok = lanes_of(w)
            v = row[src]
        else:
            bv = b(w).astype(I64) & 31
            lid = w.idx & 31
            j, ok = shfl_source(mode, lid, bv, c)
            v = row[(w.idx - lid) + j]
        d(w, ~v if inv else v, mask)
        pd(w, ok, mask)
    return shfl


@form("FADD")
def _fadd(step, generic):
    return _fp_form(step, 2, np.add)


@form("FMUL")
def _fmul(step, generic):
    return _fp_form(step, 2, np.multiply)


# --------------------------------------------------------------------------- memory

_SIZES = {(): 4, ("U8",): 1, ("S8",): 1, ("U16",): 2, ("S16",): 2, ("64",): 8, ("128",): 16}


def _access(mods) -> tuple[int, bool] | None:
    rest = tuple(m for m in mods if m not in ("E", "STRONG", "GPU", "SYS", "CONSTANT", "EF", "EL", "LU",
                                             "EN", "CTA", "SM"))
    if rest not in _SIZES:
        return None
    return _SIZES[rest], rest in (("S8",), ("S16",))


def _address(mem: Mem) -> Callable | None:
    """f(w) → per-lane uint64 address of `[Ra.64 + URb + imm]` (what ops_memory.address
    computes for global/generic spaces), recording the same reads."""
    base = mem.base
    if base is None or base.file != "R" or base.index == 255 or "64" not in base.suffix \
            or set(base.suffix) - {"64"}:
        return None
    if mem.ubase is not None and not mem.ubase.is_zero:
        return None
    i, off = base.index, mem.offset

    def address(w):
        m = w.m
        if m.tracing:
            m.reads += [("R", i), ("R", i + 1)]
        sl = w.sl
        if sl is not None:
            lo = m.R[i, sl]
            a = (m.R[i + 1, sl].astype(U64) << _U64_32) | lo if i + 1 < 255 else lo.astype(U64)
        else:
            lo = m.R[i, w.idx]
            a = (m.R[i + 1, w.idx].astype(U64) << _U64_32) | lo if i + 1 < 255 else lo.astype(U64)
        if off:
            a = a + U64(off & 0xFFFFFFFFFFFFFFFF)      # wraps as the handler's signed add does
        return a
    return address


_ELEMENT_OF = {1: np.uint8, 2: np.uint16}
_WINDOWS_LO, _WINDOWS_SPAN = U64(SHARED_WINDOW), U64(LOCAL_WINDOW + WINDOW_SIZE - SHARED_WINDOW)
_U64_32 = U64(32)


def _in_windows(a: np.ndarray) -> bool:
    if len(a) == 1:
        return SHARED_WINDOW <= int(a[0]) < LOCAL_WINDOW + WINDOW_SIZE
    return bool(np.count_nonzero((a - _WINDOWS_LO) < _WINDOWS_SPAN))


@form("LDG", "LD")
def _load(step, generic):
    ins = step.ins
    d, mem = ins.operands[0], ins.operands[1]
    acc = _access(ins.modifiers)
    if acc is None or not isinstance(mem, Mem) or d.__class__ is not Reg or d.file != "R" or len(ins.operands) != 2:
        return None
    size, signed = acc
    address = _address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    dsts = [dst32(Reg("R", d.index + k)) for k in range(nwords)] if d.index != 255 else []
    if None in dsts:
        return None
    generic_space = ins.opcode == "LD"
    narrow = {1: np.int8 if signed else np.uint8, 2: np.int16 if signed else np.uint16}.get(size)

    def load(w, s, active, mask):
        if mask is not active and not np.count_nonzero(mask):
            return
        m = w.m
        if generic_space:
            reads = len(m.reads)
            a = address(w)
            if _in_windows(a if mask is active else a[mask]):
                del m.reads[reads:]
                return generic(w, s, active, mask)
        else:
            a = address(w)
        if mask is not active:
            a = a[mask]
        v = w.launch.gmem.gather(a, size)
        if narrow is not None:
            words = [v.view(narrow).astype(I64).astype(U32)]
        elif size == 4:
            words = [v]
        else:
            v = v.view(U32).reshape(len(a), nwords)
            words = [v[:, k] for k in range(nwords)]
        for k, write in enumerate(dsts):
            word = words[k]
            if mask is not active:
                full = np.zeros(w.width, dtype=U32)
                full[mask] = word
                word = full
            write(w, word, mask)
    return load


@form("STG", "ST")
def _store(step, generic):
    ins = step.ins
    mem, src = ins.operands[0], ins.operands[1]
    acc = _access(ins.modifiers)
    if acc is None or not isinstance(mem, Mem) or src.__class__ is not Reg or src.file != "R" \
            or len(ins.operands) != 2:
        return None
    size, _ = acc
    address = _address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    srcs = [src32(Reg("R", src.index + k) if src.index != 255 else src, neg=False) for k in range(nwords)]
    generic_space = ins.opcode == "ST"

    def store(w, s, active, mask):
        if mask is not active and not np.count_nonzero(mask):
            return
        m = w.m
        reads = len(m.reads)
        a = address(w)
        if mask is not active:
            a = a[mask]
        if generic_space and _in_windows(a):
            del m.reads[reads:]
            return generic(w, s, active, mask)
        n = w.width
        words = [f(w) for f in srcs]
        if mask is not active:
            words = [v[mask] if len(v) == n else np.repeat(v, len(a)) for v in words]
        elif len(srcs) > 1 or size < 4:
            words = [v if len(v) == n else np.repeat(v, n) for v in words]
        elif len(words[0]) != n:
            words = [np.repeat(words[0], n)]
        if size == 4:
            data = words[0]
        elif size < 4:
            data = words[0].astype(_ELEMENT_OF[size])
        else:
            data = np.stack(words, axis=1).view(U64)
            if size == 8:
                data = data.reshape(-1)
        w.launch.gmem.scatter(a, data, size)
    return store


# --------------------------------------------------------------------------- shared memory

def shared_address_parts(mem: Mem) -> tuple | None:
    """(R index or None, UR index or None, offset) of a shared address `[Ra + URb + imm]`
    with no suffixes, else None."""
    base, ubase = mem.base, mem.ubase
    if base is not None and (base.file != "R" or base.suffix):
        return None
    if ubase is not None and (ubase.file != "UR" or ubase.suffix):
        return None
    return (None if base is None or base.is_zero else base.index,
            None if ubase is None or ubase.is_zero else ubase.index, mem.offset)


def _shared_address(mem: Mem) -> Callable | None:
    """f(w) → per-lane 32-bit shared address `[Ra + URb + imm]` (ops_memory.address for a
    narrow space), recording the same reads."""
    parts = shared_address_parts(mem)
    if parts is None:
        return None
    rb, ub, off = parts
    k = U32(off & 0xFFFFFFFF)

    def address(w):
        m = w.m
        a = None
        if rb is not None:
            if m.tracing:
                m.reads.append(("R", rb))
            a = m.R[rb, w.sl] if w.sl is not None else m.R[rb, w.idx]
        if ub is not None:
            if m.tracing:
                m.reads.append(("UR", ub))
            u = w._uniform(m.UR, ub)
            a = u if a is None else a + u
        if a is None:
            return np.full(w.width, k, dtype=U32)
        return a + k
    return address


_TYPED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _shared_index(w, a: np.ndarray, size: int, mask):
    """Element indices into the machine's shared memory viewed as `size`-byte elements, with
    the faults of SharedLanes (alignment, bounds)."""
    pos = None if mask is w.active else np.flatnonzero(mask)
    off = w.shared._at(pos if pos is not None else np.arange(w.width), a, size)
    return off >> U64(_SHIFT_OF[size])


_SHIFT_OF = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}


def _shared_view(m, size):
    data = m.shared_data
    return data.view(np.uint64).reshape(-1, 2) if size == 16 else data.view(_TYPED[size])


@form("LDS")
def _lds(step, generic):
    ins = step.ins
    d, mem = ins.operands[0], ins.operands[1]
    acc = _access(tuple(x for x in ins.modifiers if x != "U"))
    if acc is None or not isinstance(mem, Mem) or d.__class__ is not Reg or d.file != "R" \
            or len(ins.operands) != 2:
        return None
    size, signed = acc
    address = _shared_address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    dsts = [dst32(Reg("R", d.index + k)) for k in range(nwords)] if d.index != 255 else []
    narrow = {1: np.int8 if signed else np.uint8, 2: np.int16 if signed else np.uint16}.get(size)

    def lds(w, s, active, mask):
        if mask is not active and not np.count_nonzero(mask):
            return
        a = address(w)
        if mask is not active:
            a = a[mask] if len(a) > 1 else np.repeat(a, np.count_nonzero(mask))
        elif len(a) != w.width:
            a = np.repeat(a, w.width)
        v = _shared_view(w.m, size)[_shared_index(w, a, size, mask)]
        if narrow is not None:
            words = [v.view(narrow).astype(I64).astype(U32)]
        elif size == 4:
            words = [v]
        else:
            v = v.view(U32).reshape(len(a), nwords)
            words = [v[:, k] for k in range(nwords)]
        for k, write in enumerate(dsts):
            word = words[k]
            if mask is not active:
                full = np.zeros(w.width, dtype=U32)
                full[mask] = word
                word = full
            write(w, word, mask)
    return lds


@form("STS")
def _sts(step, generic):
    ins = step.ins
    mem, src = ins.operands[0], ins.operands[1]
    acc = _access(ins.modifiers)
    if acc is None or not isinstance(mem, Mem) or src.__class__ is not Reg or src.file != "R" \
            or len(ins.operands) != 2:
        return None
    size, _ = acc
    address = _shared_address(mem)
    if address is None:
        return None
    nwords = max(size // 4, 1)
    srcs = [src32(Reg("R", src.index + k) if src.index != 255 else src, neg=False) for k in range(nwords)]

    def sts(w, s, active, mask):
        if mask is not active and not np.count_nonzero(mask):
            return
        n = w.width
        a = address(w)
        if len(a) != n:
            a = np.repeat(a, n)
        if mask is not active:
            a = a[mask]
        words = [f(w) for f in srcs]
        k = len(a)
        words = [v[mask] if len(v) == n and mask is not active else (v if len(v) == k else np.repeat(v, k))
                 for v in words]
        if size == 4:
            data = words[0]
        elif size < 4:
            data = words[0].astype(_ELEMENT_OF[size])
        else:
            data = np.stack(words, axis=1).view(U64)
            if size == 8:
                data = data.reshape(-1)
        idx = _shared_index(w, a, size, mask)
        _shared_view(w.m, size)[idx] = data
    return sts
