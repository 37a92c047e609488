"""Semantics of sm_90's SYNCS unit: the mbarrier object of the PTX ISA ("Parallel
Synchronization and Communication Instructions: mbarrier") as ptxas 13.5's sm_90 code
lays it out (ptx2sass/isel/mbarrier_syncs.py selects the same forms).

The 64-bit object in shared memory: the low word holds (2^20 - expected arrivals) << 1,
the high word the current phase in bit 31 and (2^20 - pending arrivals) << 11 (init's
SYNCS.EXCH.64 writes both, pending_count reads the second). The transaction count is
this model's own placement (ptxas's code never reads it; the hardware's bits are not
public): a 21-bit two's-complement value, its low 11 bits in bits 21..31 of the low
word and its high 10 bits in bits 0..9 of the high word (0 after init).

PTX's rules: an arrive-on lowers the pending count, expect-tx raises the transaction
count and complete-tx lowers it; the phase completes when both are zero, and then the
pending count starts again from the expected count (which arrive_drop lowers for this
and later phases). A state returned is the object before the operation.

* `SYNCS.ARRIVE.TRANS64[.RED][.TMASK][.OPTOUT].<A><T> d, [a], b`: A1/AR/A0 arrive once,
  b times or not at all; T0/TR/TX/T1 leave the transaction count, raise it by b, lower it
  by b, raise it by one; OPTOUT drops the arrivals from the expected count. With TMASK the
  lanes naming one object arrive together: each gets the mask of them in the low word and
  the object's high word before them (the code adds the counts of the lanes below).
* `SYNCS.PHASECHK.TRANS64[.TRYWAIT] P, [a], b`: P = the object's phase bit differs from
  bit 31 of b, i.e. the phase b names has completed (TRYWAIT does not suspend here; the
  machine's turns let other warps run a spin-wait's arrivals).
* `SYNCS.EXCH.64 URd, [URa], URb`: the pair URb, URb+1 stored once per warp.
* `SYNCS.CCTL.IV [a]` (mbarrier.inval): nothing to model.
* `ARRIVES.LDGSTSBAR.64.ARVCNT/TRANSCNT [a]`: the lane's cp.async copies land, then an
  arrival (ARVCNT) or a complete-tx of one (TRANSCNT).
"""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Reg, SpecialReg

from .errors import EmuFault
from .lanes import PerWarp
from .ops_memory import _load, _store, address
from .registry import semantics

M32 = 0xFFFFFFFF
LIMIT = 1 << 20
FIELD = LIMIT - 1
TX_BITS = 21


def unpack(v: int) -> tuple[int, int, int, int]:
    """(expected, pending, phase, transactions) of an object's 64 bits."""
    lo, hi = v & M32, v >> 32
    expected = LIMIT - (lo >> 1 & FIELD)
    # a field of 0 is no pending arrival (a phase whose arrivals are in and whose
    # transactions are not): counts never reach LIMIT
    pending = (LIMIT - (hi >> 11 & FIELD)) & FIELD
    tx = (lo >> 21 & 0x7FF) | (hi & 0x3FF) << 11
    if tx >> (TX_BITS - 1):
        tx -= 1 << TX_BITS
    return expected, pending, hi >> 31 & 1, tx


def pack(expected: int, pending: int, phase: int, tx: int) -> int:
    tx &= (1 << TX_BITS) - 1
    lo = ((LIMIT - expected) & FIELD) << 1 | (tx & 0x7FF) << 21
    hi = phase << 31 | ((LIMIT - pending) & FIELD) << 11 | tx >> 11
    return lo | hi << 32


def update(v: int, arrivals: int, tx: int, drop: bool) -> int:
    """The object after `arrivals` arrivals (dropped from the expected count too when
    `drop`) and a transaction-count change of `tx`."""
    expected, pending, phase, count = unpack(v)
    if drop:
        expected -= arrivals
    pending -= arrivals
    count += tx
    if pending == 0 and count == 0:
        phase ^= 1
        pending = expected
    return pack(expected, pending, phase, count)


def _read64(w, addrs, lane: int) -> int:
    sel = np.zeros(w.width, bool)
    sel[lane] = True
    return int.from_bytes(_load(w, "shared", addrs, 8, sel)[0].tobytes(), "little")


def _write64(w, addrs, lane: int, value: int) -> None:
    sel = np.zeros(w.width, bool)
    sel[lane] = True
    _store(w, "shared", addrs, np.frombuffer(value.to_bytes(8, "little"), np.uint8)[None, :], sel)


_ROUTE = {"A1T0": (1, None, 0), "ART0": (None, None, 0), "A0TR": (0, "b", 1),
          "A0TX": (0, "b", -1), "A0T1": (0, 1, 1)}


def _arrive_parts(mods) -> tuple[int | None, int | str | None, int]:
    """(arrivals: a number or None for the register, transaction amount: a number, "b"
    for the register or None, its sign) of an ARRIVE's modifiers."""
    for m in mods:
        if m in _ROUTE:
            return _ROUTE[m]
    return 1, "b", 1                       # no suffix: arrive once, expect b (arrive.expect_tx)


def op_arrive(w, s, mask) -> None:
    ins = s.ins
    d, mem, b = ins.operands
    mods = ins.modifiers
    if "TMASK" in mods and not d.is_zero and not w.per_warp:
        raise PerWarp()
    arrivals, amount, sign = _arrive_parts(mods)
    drop = "OPTOUT" in mods
    addrs = address(w, mem, False)
    bval = np.broadcast_to(w.r(b), (w.width,)).astype(np.int64)
    old = np.zeros(w.width, np.uint64)
    lanes = np.nonzero(mask)[0]
    before: dict[int, int] = {}
    for lane in lanes:
        a = int(addrs[lane])
        v = _read64(w, addrs, lane)
        before.setdefault(a, v)
        old[lane] = v
        n = int(bval[lane]) if arrivals is None else arrivals
        t = 0 if amount is None else sign * (int(bval[lane]) if amount == "b" else amount)
        _write64(w, addrs, lane, update(v, n, t, drop))
    if d.is_zero:
        return
    if "TMASK" in mods:
        # the lanes naming each object arrived together: their mask, the high word before
        groups: dict[int, int] = {}
        for lane in lanes:
            groups[int(addrs[lane])] = groups.get(int(addrs[lane]), 0) | 1 << int(lane)
        for lane in lanes:
            a = int(addrs[lane])
            old[lane] = groups[a] | (before[a] >> 32) << 32
    w.w64(d, old, mask)


def op_phasechk(w, s, mask) -> None:
    p, mem, b = s.ins.operands
    addrs = address(w, mem, False)
    want = np.broadcast_to(w.r(b), (w.width,)) >> np.uint32(31)
    done = np.zeros(w.width, bool)
    for lane in np.nonzero(mask)[0]:
        done[lane] = (_read64(w, addrs, lane) >> 63) != int(want[lane])
    w.wp(p, done, mask)


def op_exch(w, s, mask) -> None:
    """Once per warp (uniform operands): the warp's first active lane stores the pair."""
    if not w.per_warp:
        raise PerWarp()
    if not mask.any():
        return
    d, mem, b = s.ins.operands
    lane = int(np.argmax(mask))
    addrs = address(w, mem, False)
    old = _read64(w, addrs, lane)
    lo = int(np.broadcast_to(w.r(b), (w.width,))[lane])
    hi = int(np.broadcast_to(w.r(Reg(b.file, b.index + 1)), (w.width,))[lane]) if not b.is_zero else 0
    _write64(w, addrs, lane, lo | hi << 32)
    if not d.is_zero:
        w.w64(d, np.full(w.width, old, np.uint64), mask)


@semantics("SYNCS", vector=True)
def op_syncs(w, s, active, mask):
    mods = s.ins.modifiers
    if "ARRIVE" in mods:
        return op_arrive(w, s, mask)
    if "PHASECHK" in mods:
        return op_phasechk(w, s, mask)
    if "EXCH" in mods:
        return op_exch(w, s, mask)
    if "CCTL" in mods:
        return None
    raise EmuFault(f"unsupported SYNCS form {'.'.join(mods)}")


def arrives_syncs(w, s, mask) -> None:
    """ARRIVES.LDGSTSBAR.64.ARVCNT/TRANSCNT, after ops_memory's handler landed the copies."""
    transcnt = "TRANSCNT" in s.ins.modifiers
    addrs = address(w, s.ins.operands[0], False)
    for lane in np.nonzero(mask)[0]:
        v = _read64(w, addrs, lane)
        _write64(w, addrs, lane, update(v, 0, -1, False) if transcnt else update(v, 1, 0, False))


@semantics("RPCMOV", vector=True)
def op_rpcmov(w, s, active, mask):
    """RPCMOV.32 between a register and a half of the lane's Rpc pair, a per-lane 64-bit
    register ptxas uses as scratch around the TMASK state arithmetic (it saves a state there
    while the registers serve the lane-mask arithmetic)."""
    d, a = s.ins.operands
    rpc = getattr(w.m, "rpc", None)
    if rpc is None:
        rpc = w.m.rpc = np.zeros((2, w.m.nlanes), np.uint32)
    lanes = w.idx[mask]
    if isinstance(d, SpecialReg):
        half = 1 if d.name.endswith("HI") else 0
        rpc[half, lanes] = np.broadcast_to(w.r(a), (w.width,))[mask]
        return
    half = 1 if a.name.endswith("HI") else 0
    w.w(d, rpc[half, w.idx], mask)


@semantics("STAS", vector=True)
def op_stas(w, s, active, mask):
    """STAS[.64|.128] [Ra.64], Rb (st.async.mbarrier::complete_tx::bytes): Ra holds the
    shared::cluster address of the data, Ra+1 the mbarrier's; the lane's bytes are stored
    and complete a transaction of their size on that mbarrier."""
    from .lanes import reg
    from .ops_memory import access_size
    mem, data = s.ins.operands[0], s.ins.operands[1]
    size, _ = access_size(s.ins.modifiers)
    lo = w.r(reg("R", mem.base.index)).astype(np.uint64)
    hi = w.r(reg("R", mem.base.index + 1)).astype(np.uint64)
    addrs = np.broadcast_to(lo + np.uint64(mem.offset & M32), (w.width,)).copy()
    bars = np.broadcast_to(hi, (w.width,)).copy()
    words = [np.broadcast_to(w.r(reg("R", data.index + k)), (w.width,)).astype(np.uint32)
             for k in range(max(1, size // 4))]
    raw = np.stack(words, axis=1).view(np.uint8)[:, :size]
    lanes = np.nonzero(mask)[0]
    if not len(lanes):
        return
    _store(w, "shared", addrs, np.ascontiguousarray(raw[mask]), mask)
    for lane in lanes:
        v = _read64(w, bars, lane)
        _write64(w, bars, lane, update(v, 0, -size, False))
