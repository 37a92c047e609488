"""Warp-collective operations: SHFL, VOTE, MATCH, REDUX, CREDUX. They act on the lanes executing the
instruction together (the active mask); a source lane that is not active reads its stale
register, as hardware's result is undefined there."""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Reg

from .errors import EmuFault
from .lanes import PerWarp, widen
from .machine import LANES, mask_to_int  # noqa: F401
from .ops_int import _s64
from .registry import semantics

U32, U64 = np.uint32, np.uint64
LANE = np.arange(LANES, dtype=np.int64)


def shfl_source(mode: str, lane, b, c):
    """(source lane, in range) per lane id `lane` for SHFL's mode, shift/index `b` (0..31) and
    c = segment mask << 8 | clamp; a lane out of range reads its own lane."""
    clamp, seg = c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg)
    if mode == "UP":
        j = lane - b
        ok = j >= max_lane
    elif mode == "DOWN":
        j = lane + b
        ok = j <= max_lane
    elif mode == "BFLY":
        j = lane ^ b
        ok = j <= max_lane
    else:
        j = (lane & seg) | (b & ~seg)
        ok = j <= max_lane
    return np.where(ok, j, lane) & 31, ok


@semantics("SHFL", vector=True)
def op_shfl(w, s, active, mask):
    """PTX shfl semantics: c = segmask << 8 | clamp; out-of-range lanes read their own value
    and get a false predicate. Each lane reads lane j of its own warp."""
    pd, d, a_op, b_op, c_op = s.ins.operands
    mode = next(m for m in s.ins.modifiers if m in ("IDX", "UP", "DOWN", "BFLY"))
    n = w.width
    a = w.r(a_op)
    b = widen(w.r(b_op), n).astype(np.int64) & 31
    c = widen(w.r(c_op), n).astype(np.int64)
    lane = w.lane_ids
    j, ok = shfl_source(mode, lane, b, c)
    if isinstance(a_op, Reg) and a_op.file == "R" and not a_op.is_zero:
        row = w.m.R[a_op.index]                  # every lane's register: j may be a lane
        v = row[(w.idx - lane) + j]              # outside the group (a stale value)
        value = ~v if a_op.inv else v
    else:
        value = widen(a, n)         # the same in every lane of a warp
    w.w(d, value, mask)
    w.wp(pd, ok, mask)


def _apart(handler):
    """Run a collective once per set of lanes that WARPSYNC.EXCLUSIVE keeps apart (machine
    `excl`): lanes with different tags do not run it together."""
    def run(w, s, active, mask):
        if "excl" not in w.m.__dict__:
            return handler(w, s, active, mask)
        tags = w.m.excl[w.idx]
        if not tags[mask].any():
            return handler(w, s, active, mask)
        if not w.per_warp:
            raise PerWarp()
        for t in sorted(set(tags[mask].tolist())):
            handler(w, s, active, mask & (tags == t))
    run.__name__, run.__doc__ = handler.__name__, handler.__doc__
    return run


@semantics("VOTE", "VOTEU", vector=True)
@_apart
def op_vote(w, s, active, mask):
    ops = list(s.ins.operands)
    kind = next(m for m in s.ins.modifiers if m in ("ALL", "ANY", "EQ"))
    src = ops[-1]
    n = w.width
    p = widen(w.pred(src), n) & mask
    ballot = w.warp_bits(p)              # an int for one warp, else per lane
    act = w.warp_bits(mask)
    if kind == "ALL":
        result = ballot == act
    elif kind == "ANY":
        result = ballot != 0
    else:
        result = (ballot == 0) | (ballot == act)
    if w.m.explicit and s.aux.get("present_meet"):
        here = np.asarray(w.warp_bits(active), dtype=np.int64)
        w.m.sync_hint[w.idx[active]] = widen(here, n)[active]
    dests = ops[:-1]
    for dst in dests:
        if dst.file in ("R", "UR"):
            w.w(dst, widen(np.asarray(ballot, dtype=np.int64), n).astype(U32), mask)
        else:
            w.wp(dst, widen(np.asarray(result), n), mask)


@semantics("MATCH", vector=True)
@_apart
def op_match(w, s, active, mask):
    if w.warp < 0:
        raise PerWarp()
    ops = s.ins.operands
    src = ops[-1]
    n = w.width
    wide = "U64" in s.ins.modifiers or "64" in s.ins.modifiers
    v = widen(w.r64(src) if wide else w.r(src).astype(U64), n)
    out = np.zeros(n, dtype=U64)
    lanes = np.nonzero(mask)[0]
    ids = w.lane_ids
    bits = {}
    for l in lanes:
        bits.setdefault(int(v[l]), 0)
        bits[int(v[l])] |= 1 << int(ids[l])
    for l in lanes:
        out[l] = bits[int(v[l])]
    if "ALL" in s.ins.modifiers:
        # MATCH.ALL Pd, Rd, Rs: the predicate operand comes first when present.
        all_same = len(bits) <= 1
        d = next(op for op in ops[:-1] if isinstance(op, Reg) and op.file == "R")
        w.w(d, np.full(n, w.warp_bits(mask) if all_same else 0, dtype=U32), mask)
        for op in ops[:-1]:
            if isinstance(op, Reg) and op.file == "P":
                w.wp(op, np.full(n, all_same), mask)
    else:
        w.w(ops[0], out.astype(U32), mask)


@semantics("REDUX", vector=True)
@_apart
def op_redux(w, s, active, mask):
    if w.warp < 0:
        raise PerWarp()
    d, a_op = s.ins.operands[0], s.ins.operands[-1]
    mods = s.ins.modifiers
    kind = next((m for m in mods if m in ("SUM", "MIN", "MAX", "AND", "OR", "XOR")), "AND")
    v = widen(w.r(a_op), w.width)[mask]
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
    w.w(d, np.full(w.width, r & 0xFFFFFFFF, dtype=U32), mask)


_CANONICAL_NAN = 0x7FFFFFFF


@semantics("CREDUX", vector=True)
def op_credux(w, s, active, mask):
    """`CREDUX.{MIN,MAX,MINABS,MAXABS}[.S32|.F32][.NAN] UR, R` (sm_100's redux.sync min/max,
    its result in a uniform register): the minimum or maximum of R over the executing lanes,
    unsigned without a type. `.F32` (PTX `redux.sync.min/max{.abs}{.NaN}.f32`): -0 is below
    +0; `ABS` reduces the absolute values; NaN inputs are left out unless `.NAN`, which makes
    any NaN give the canonical NaN (0x7fffffff), as does an all-NaN input."""
    if w.warp < 0:
        raise PerWarp()
    mods = s.ins.modifiers
    d = next(op for op in s.ins.operands if isinstance(op, Reg) and op.file == "UR")
    v = widen(w.r(s.ins.operands[-1]), w.width)[mask].astype(U32)
    if len(v) == 0:
        return
    kind = next(m for m in mods if m in ("MIN", "MAX", "MINABS", "MAXABS"))
    smallest = kind.startswith("MIN")
    if "F32" in mods:
        if kind.endswith("ABS"):
            v = v & U32(0x7FFFFFFF)
        f = v.view(np.float32)
        nan = np.isnan(f)
        if nan.all() or ("NAN" in mods and nan.any()):
            r = _CANONICAL_NAN
        else:
            bits = v[~nan]
            # order the bit patterns as the floats they are, -0 below +0
            key = np.where(bits >> U32(31), ~bits, bits | U32(0x80000000))
            pick = np.argmin(key) if smallest else np.argmax(key)
            r = int(bits[pick])
    elif kind.endswith("ABS"):
        raise EmuFault(f"{s.ins.mnemonic}: the absolute reduction of integers is not established")
    else:
        vals = _s64(v) if "S32" in mods else v.astype(np.int64)
        r = int(vals.min() if smallest else vals.max()) & 0xFFFFFFFF
    w.w(d, np.full(w.width, r, dtype=U32), mask)
