"""Warp-collective operations: SHFL, VOTE, MATCH, REDUX. They act on the lanes executing the
instruction together (the active mask); a source lane that is not active reads its stale
register, as hardware's result is undefined there."""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Reg

from .machine import LANES, mask_to_int
from .ops_int import _s64
from .registry import semantics

U32, U64 = np.uint32, np.uint64
LANE = np.arange(LANES, dtype=np.int64)


@semantics("SHFL")
def op_shfl(w, s, active, mask):
    """PTX shfl semantics: c = segmask << 8 | clamp; out-of-range lanes read their own value
    and get a false predicate."""
    pd, d, a_op, b_op, c_op = s.ins.operands
    mode = next(m for m in s.ins.modifiers if m in ("IDX", "UP", "DOWN", "BFLY"))
    a = np.broadcast_to(w.r(a_op), (LANES,))
    b = np.broadcast_to(w.r(b_op), (LANES,)).astype(np.int64) & 31
    c = np.broadcast_to(w.r(c_op), (LANES,)).astype(np.int64)
    clamp = c & 31
    seg = (c >> 8) & 31
    max_lane = (LANE & seg) | (clamp & ~seg)
    min_lane = LANE & seg
    if mode == "UP":
        j = LANE - b
        ok = j >= max_lane
    elif mode == "DOWN":
        j = LANE + b
        ok = j <= max_lane
    elif mode == "BFLY":
        j = LANE ^ b
        ok = j <= max_lane
    else:
        j = min_lane | (b & ~seg)
        ok = j <= max_lane
    j = np.where(ok, j, LANE) & 31
    w.w(d, a[j], mask)
    w.wp(pd, ok, mask)


@semantics("VOTE", "VOTEU")
def op_vote(w, s, active, mask):
    ops = list(s.ins.operands)
    kind = next(m for m in s.ins.modifiers if m in ("ALL", "ANY", "EQ"))
    src = ops[-1]
    p = np.broadcast_to(w.pred(src), (LANES,)) & mask
    ballot = mask_to_int(p)
    act = mask_to_int(mask)
    result = {"ALL": ballot == act, "ANY": ballot != 0, "EQ": ballot in (0, act)}[kind]
    dests = ops[:-1]
    for dst in dests:
        if dst.file in ("R", "UR"):
            w.w(dst, np.full(LANES, ballot, dtype=U32), mask)
        else:
            w.wp(dst, np.full(LANES, result), mask)


@semantics("MATCH")
def op_match(w, s, active, mask):
    ops = s.ins.operands
    src = ops[-1]
    wide = "U64" in s.ins.modifiers or "64" in s.ins.modifiers
    v = np.broadcast_to(w.r64(src) if wide else w.r(src).astype(U64), (LANES,))
    out = np.zeros(LANES, dtype=U64)
    lanes = np.nonzero(mask)[0]
    bits = {}
    for l in lanes:
        bits.setdefault(int(v[l]), 0)
        bits[int(v[l])] |= 1 << int(l)
    for l in lanes:
        out[l] = bits[int(v[l])]
    if "ALL" in s.ins.modifiers:
        # MATCH.ALL Pd, Rd, Rs: the predicate operand comes first when present.
        all_same = len(bits) <= 1
        d = next(op for op in ops[:-1] if isinstance(op, Reg) and op.file == "R")
        w.w(d, np.full(LANES, mask_to_int(mask) if all_same else 0, dtype=U32), mask)
        for op in ops[:-1]:
            if isinstance(op, Reg) and op.file == "P":
                w.wp(op, np.full(LANES, all_same), mask)
    else:
        w.w(ops[0], out.astype(U32), mask)


@semantics("REDUX")
def op_redux(w, s, active, mask):
    d, a_op = s.ins.operands[0], s.ins.operands[-1]
    mods = s.ins.modifiers
    kind = next((m for m in mods if m in ("SUM", "MIN", "MAX", "AND", "OR", "XOR")), "AND")
    v = np.broadcast_to(w.r(a_op), (LANES,))[mask]
    if len(v) == 0:
        return
    signed = "S32" in mods
    vals = _s64(v) if signed else v.astype(np.int64)
    if kind == "SUM":
        r = int(vals.sum())
    elif kind == "MIN":
        r = int(vals.min())
    elif kind == "MAX":
        r = int(vals.max())
    elif kind == "AND":
        r = int(np.bitwise_and.reduce(v))
    elif kind == "OR":
        r = int(np.bitwise_or.reduce(v))
    else:
        r = int(np.bitwise_xor.reduce(v))
    w.w(d, np.full(LANES, r & 0xFFFFFFFF, dtype=U32), mask)
