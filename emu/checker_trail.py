"""A machine's calls to the hazard checker, kept and made when it ends (`MachineTrail`); a
later machine of the same decoding whose calls are the same takes what they came to
(`run_machine`) instead of making them.

The checker (a plain `TimingModel`) only observes: nothing the machine runs reads its
state (clock registers count executed instructions: ops_int.timer_value). What a machine
leaves in it, every clock's cycle and the `_flag` calls, follows from the calls in order
(`attach`; `step` with the warps, their lanes and the registers read and written;
`barrier_release` with the warps; `finish`), the machine's warp count, the latency model and
the checker's methods. `sole_clock`'s shortcut, `end` on a warp's own clock, is what `step`
makes of the same call, so the trail answers that there is none and the machine calls `step`.
"""
from __future__ import annotations

import numpy as np

DEFER = True            # whether machines under a plain checker keep their calls (tests compare)
MAX_EVENTS = 1 << 14    # a longer machine makes its calls from there on as they come (memory)
MEMO_TRAILS = 4         # trails kept per (decoding, checker)
_MEMO_KEYS = 8          # checkers kept per decoding (a test's model may be new per launch)


class MachineTrail:
    """Stands for the checker `tm` on a machine: its calls, in order, as (step, warps,
    lanes, reads, writes), a barrier release as (None, warps, None, None, None). Warps and
    lanes are tuples, made again only when the machine passes another array (it makes new
    ones rather than change one in place, as the checker's own cached split assumes). Past
    MAX_EVENTS the kept calls are made and later ones passed on as they come (`direct`)."""
    __slots__ = ("events", "tm", "direct", "_w", "_wk", "_l", "_lk")

    def __init__(self, tm):
        self.events: list = []
        self.tm = tm
        self.direct = False
        self._w = self._l = self._wk = self._lk = None

    def step(self, machine, step, warps, lanes, reads, writes) -> None:
        if self.direct:
            return self.tm.step(machine, step, warps, lanes, reads, writes)
        if warps is not self._w:
            self._w, self._wk = warps, tuple(warps.tolist())
        if lanes is not self._l:
            self._l, self._lk = lanes, tuple(lanes.tolist())
        events = self.events
        events.append((step, self._wk, self._lk, reads.copy(), writes.copy()))
        if len(events) >= MAX_EVENTS:
            self._go_direct(machine)

    def _go_direct(self, machine) -> None:
        _replay(self.tm, machine, self.events)
        self.events = []
        self.direct = True

    def sole_clock(self, machine, warps):
        return self.tm.sole_clock(machine, warps) if self.direct else (None, None)

    def end(self, clock, step, lanes, reads, writes) -> None:
        # (the machine has a clock to call `end` on only from `sole_clock`, once direct)
        return self.tm.end(clock, step, lanes, reads, writes)

    def barrier_release(self, machine, warps) -> None:
        if self.direct:
            return self.tm.barrier_release(machine, warps)
        self._w = None
        self.events.append((None, tuple(np.asarray(warps).tolist()), None, None, None))


def defers(tm) -> bool:
    """Whether a machine under checker `tm` may keep its calls: a checker that observes as
    TimingModel does (emu/scalar.py `_plain_checker`) with TimingModel's own `end` (a test
    that wraps it in place sees every call as it comes)."""
    from .scalar import _plain_checker, _pure_end
    return DEFER and tm is not None and _plain_checker(type(tm)) and type(tm).end is _pure_end()


def _replay(tm, machine, events) -> None:
    """The kept calls made on the checker, in order."""
    aw = al = lw = ll = None
    step_of, release = tm.step, tm.barrier_release
    for step, wk, lk, reads, writes in events:
        if wk is not lw:
            lw, aw = wk, np.array(wk, dtype=np.int64)
        if step is None:
            release(machine, aw)
            continue
        if lk is not ll:
            ll, al = lk, np.array(lk, dtype=np.int64)
        step_of(machine, step, aw, al, reads, writes)


def _entries(decoded, tm) -> list | None:
    if MEMO_TRAILS <= 0:
        return None
    return memo_list(decoded, "machine_trail_memo", (type(tm), id(tm.lat), tm.serialised), tm.lat)


def memo_list(decoded, attr: str, key: tuple, lat) -> list:
    """The trails kept on `decoded` (in its attribute `attr`) under `key`: a fresh list where
    the checker's latency model is another object than the one they were recorded with; all
    dropped once `_MEMO_KEYS` keys are kept."""
    memo = decoded.__dict__.setdefault(attr, {})
    slot = memo.get(key)
    if slot is None or slot[0] is not lat:
        if len(memo) >= _MEMO_KEYS:
            memo.clear()
        slot = memo[key] = (lat, [])
    return slot[1]


def run_machine(launch, machine, tm) -> None:
    """`machine.run` under checker `tm` (attached) with its calls kept, then `tm.finish`: a
    kept trail's outcome where its calls equal this one's, else the calls made (and kept)."""
    trail = MachineTrail(tm)
    machine.timing = trail
    try:
        machine.run(launch.budget)
    except BaseException:
        machine.timing = tm
        _replay(tm, machine, trail.events)
        raise
    machine.timing = tm
    events = trail.events
    if trail.direct:
        _replay(tm, machine, events)
        tm.finish(machine)
        return
    entries = _entries(launch.decoded, tm)
    nwarps = machine.nwarps
    if entries is not None:
        for kept in entries:
            if kept[0] == nwarps and kept[1] == events:
                flag = tm._flag
                for offset, message in kept[3]:
                    flag(offset, message)
                tm.cycles = max(tm.cycles, kept[2])
                tm._parts = None
                return
    flags: list = []
    flag = tm._flag

    def recording(offset, message):
        flags.append((offset, message))
        flag(offset, message)
    before = tm.cycles
    tm._flag = recording
    try:
        _replay(tm, machine, events)
    finally:
        del tm._flag
    tm.cycles = 0
    tm.finish(machine)
    reached = tm.cycles
    tm.cycles = max(before, reached)
    if entries is not None:
        entries.insert(0, (nwarps, events, reached, flags))
        del entries[MEMO_TRAILS:]
