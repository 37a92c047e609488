"""Semantics of the integer forms sm_120's ISA adds (what ptxas 13.5 writes for sm_120):

* `IADD d, [P,] a, b` and `IADD.X d, a, b, Pc`: the two-input add, with a carry out and
  in (IADD3 with its third input RZ);
* `IADD.64 d, a, b`: a 64-bit add of register pairs; a 32-bit immediate is sign-extended
  (ptxas writes `IADD.64 R1, R1, -0x8` for a frame and `IADD.64 R4, R2, 0x4` for offsets);
* `MOV.64`/`UMOV.64 d, a`: a register pair (or uniform pair, or a 64-bit immediate) copied;
* `VIADD.S32.ISAT d, a, b`: the signed add clamped to [-2^31, 2^31 - 1] (add.sat.s32);
  `UVIADD.S32.ISAT` the same on uniform registers (b a register or a 32-bit immediate, read
  as signed);
* the 64-bit min/max `IMNMX.S64/.U64 Pd, Pd2, d, a, b, Pmin, Px` on register pairs:
  Pmin picks the minimum as IMNMX's; forms with predicate outputs other than PT or a
  last input other than !PT are refused (their meaning is not established).
"""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Imm, Reg

from .errors import EmuFault
from .ops_int import I64, M32, U32, U64, _is_pred, _s64, _terms_u64, carries_per_adder, op_imnmx, op_viadd
from .registry import semantics


@semantics("IADD", vector=True)
def op_iadd(w, s, active, mask):
    ops = list(s.ins.operands)
    mods = s.ins.modifiers
    if "64" in mods:
        # `IADD.64 d, [P,] a, b` / `IADD.64.X d, a, b, Pc`: the sum with its carry out of bit
        # 63 and in; `-b` is ~b + 1 and `~b` is ~b for the carry too (ptxas's 64-bit
        # subtraction: `IADD.64 RZ, P4, -R18, R36` then `IADD.64.X R56, R38, ~R20, P4`)
        d, rest = ops[0], list(ops[1:])
        pouts = []
        while _is_pred(rest[0]):
            pouts.append(rest.pop(0))
        total = _sum64_terms(w, rest[0]) + _sum64_terms(w, rest[1])
        if "X" in mods:
            for p in rest[2:]:
                total = total + w.pred(p).astype(object)
        m64 = (1 << 64) - 1
        w.w64(d, np.array([int(v) & m64 for v in np.atleast_1d(total)], dtype=U64), mask)
        carry = np.array([int(v) >> 64 != 0 for v in np.atleast_1d(total)])
        for p in pouts:
            w.wp(p, carry, mask)
        return
    d, rest = ops[0], ops[1:]
    pouts = []
    while _is_pred(rest[0]):
        pouts.append(rest.pop(0))
    a, b = _terms_u64(w, rest[:2])
    carry = U64(0)
    if "X" in mods:
        for p in rest[2:]:
            carry = carry + w.pred(p).astype(U64)
    total = a + b + carry
    w.w(d, (total & M32).astype(U32), mask)
    for p in pouts:
        w.wp(p, (total >> U64(32)) != 0, mask)


def add3_64(w, s, mask) -> None:
    """`UIADD3.64[.X] d, [UPc0, UPc1,] a, b, c[, UPi0, UPi1]`: the 64-bit sum of three uniform
    pairs (a 32-bit immediate sign-extended, as IADD.64's), with carries as IADD3's: two
    adders (a + b, then c), the first carry out of each, a lone carry in to the second (ptxas's
    `UIADD3.64 URZ, UP0, UPT, UR14, UR16, URZ` then `UIADD3.64.X ..., UP0, !UPT`: a 64-bit
    add.cc/addc, campaign 25's 35003322 on sm_120; the carry out was not written)."""
    ops = s.ins.operands
    d, rest = ops[0], list(ops[1:])
    pouts = []
    while _is_pred(rest[0]):
        pouts.append(rest.pop(0))
    a, b, c = (_sum64_terms(w, op) for op in rest[:3])
    carries = [w.pred(p).astype(object) for p in rest[3:]] if "X" in s.ins.modifiers else []
    first_in, later = carries_per_adder(carries, 0)
    m64 = (1 << 64) - 1
    s1 = a + b + first_in
    total = (s1 & m64) + c + sum(later, 0)
    w.w64(d, np.array([int(v) & m64 for v in np.atleast_1d(total)], dtype=U64), mask)
    if pouts:
        first = np.array([int(v) >> 64 != 0 for v in np.atleast_1d(s1)])
        second = np.array([int(v) >> 64 != 0 for v in np.atleast_1d(total)])
        if len(pouts) == 1 or pouts[1].index == 7:
            w.wp(pouts[0], first | second, mask)
        else:
            w.wp(pouts[0], first, mask)
            w.wp(pouts[1], second, mask)


def _sum64_terms(w, op) -> np.ndarray:
    """A 64-bit addend of IADD.64 as Python integers per lane, `-x` as ~x + 1 and `~x` as ~x
    (so that a carry out of bit 63 comes out as the hardware's)."""
    m64 = (1 << 64) - 1
    if isinstance(op, Imm):
        v = op.value & 0xFFFFFFFF
        return np.array([(v - (1 << 32) if v & 0x80000000 else v) & m64], dtype=object)
    v = np.atleast_1d(w.r64(op)).astype(object)
    if getattr(op, "inv", False):
        v = m64 - v
    if getattr(op, "neg", False):
        v = (m64 - v) + 1
    return v


def _value64(w, op) -> np.ndarray:
    """A 64-bit source of IADD.64/MOV.64: a pair, or a sign-extended 32-bit immediate."""
    if isinstance(op, Imm):
        v = op.value & 0xFFFFFFFF
        v = v - (1 << 32) if v & 0x80000000 else v
        v = np.array([v & ((1 << 64) - 1)], dtype=U64)
    else:
        v = w.r64(op)
    if getattr(op, "neg", False):
        v = (U64(0) - v).astype(U64)
    return v


@semantics("MOV", "UMOV", vector=True)
def op_mov(w, s, active, mask):
    """MOV d, a; `MOV d, a, m` (a 4-bit lane mask, ptxas's tex.grad code) writes only the
    lanes whose position in their quad (lane % 4) has its bit set in m."""
    d, a = s.ins.operands[:2]
    if len(s.ins.operands) == 3:
        quad_bits = s.ins.operands[2].value
        mask = mask & ((np.int64(quad_bits) >> (w.lane_ids % 4)) & 1).astype(bool)
    if "64" in s.ins.modifiers:
        if isinstance(a, Imm):
            # MOV.64's immediate field is 64 bits wide (bits 24..87 of the word: ptxas's
            # `MOV.64 R4, 0xaf759ab1da0a440a`), taken whole, unlike IADD.64's 32-bit one
            w.w64(d, np.array([a.value & ((1 << 64) - 1)], dtype=U64), mask)
        else:
            w.w64(d, _value64(w, a), mask)
    else:
        w.w(d, w.ri(a), mask)


@semantics("IMNMX", "UIMNMX", vector=True)
def op_imnmx64(w, s, active, mask):
    ops = s.ins.operands
    if len(ops) == 4:
        return op_imnmx(w, s, active, mask)
    p1, p2, d, a, b, pmin, px = ops
    if not (_true(p1) and _true(p2) and _true(px) and (px.inv or px.neg)):
        raise EmuFault(f"IMNMX form {s.ins} not modelled")
    signed = "S64" in s.ins.modifiers
    va, vb = _value64(w, a) if isinstance(a, Imm) else w.r64(a), _value64(w, b) if isinstance(b, Imm) else w.r64(b)
    if signed:
        va, vb = va.view(np.int64), vb.view(np.int64)
    res = np.where(w.pred(pmin), np.minimum(va, vb), np.maximum(va, vb))
    w.w64(d, np.asarray(res).astype(np.int64).view(U64) if signed else res, mask)


def _true(p) -> bool:
    return isinstance(p, Reg) and p.file in ("P", "UP") and p.index == 7


@semantics("VIADD", "UVIADD", vector=True)
def op_viadd_sat(w, s, active, mask):
    if "ISAT" not in s.ins.modifiers:
        return op_viadd(w, s, active, mask)
    d, a, b = s.ins.operands[:3]
    # `-` negates exactly (ptxas writes `VIADD.S32.ISAT d, a, -b` for sub.sat.s32, whose
    # b = -2^31 must give a + 2^31 clamped, not a wrapped negation)
    exact = lambda op: -_s64(w.r(op)) if getattr(op, "neg", False) else _s64(w.r(op))  # noqa: E731
    total = np.clip(exact(a) + exact(b), -(1 << 31), (1 << 31) - 1).astype(I64)
    w.w(d, (total.astype(U64) & M32).astype(U32), mask)
