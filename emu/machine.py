"""The machine: CTAs of warps of 32 lanes, and the loop that runs them.

A `Machine` holds a batch of CTAs of one launch (`Launch.run` cuts the grid into batches)
with the register files of all their lanes as NumPy arrays over the batch: general
registers as [256, lanes] uint32 (one register of every lane is one contiguous row),
predicates as [8, lanes], uniform registers and predicates per warp, plus every lane's
PC and scheduling state. Warps are 32 consecutive lanes (a CTA's last warp may have dead
lanes), CTAs consecutive runs of warps.

Execution is vectorised across warps and CTAs: the warps whose next instruction is at the
same PC form a `Group` and run that instruction together, one NumPy operation over all
their lanes; groups form again after control flow and wherever warps meet at a PC.

Each warp's own schedule is the one the emulator has always had, in one of two modes (the
launch's `reconverge`), with Volta-style independent thread scheduling modelled by a
program counter per lane:

* "optimistic" (the default): each step of a warp runs every ready lane that sits at the
  lowest pending PC, which reconverges structured control flow at the earliest point;
* "explicit": what the hardware guarantees and no more. Lanes run in groups; a group that
  diverges (a branch, BRX, RET with lanes going different ways) splits, and groups never
  merge because they reach the same PC: only lanes released together from a BSYNC, a
  WARPSYNC or a CTA barrier form one group again. The current group runs on (taken path
  first) until it exits or waits; warp-collective instructions run by part of their
  members are reported (emu.convergence).

In both modes BSSY/BSYNC, WARPSYNC and BAR make lanes wait explicitly.

Between warps the machine runs the lowest PC first, so warps that fell behind catch up and
run together again; a warp that has had no turn for `QUANTUM` group steps gets a turn of its
own, so that spin-waits on another warp's store make progress. CTA barriers release as soon
as every live thread (or the count asked for) has arrived. Memory operations of a group
apply in lane order (CTA, warp, lane), which also orders atomics.

Semantics handlers (emu.registry) see a `lanes.Lanes`: a `Group` for width-agnostic ones,
each warp's `Warp` (32 lanes, the per-warp state of the old interface) for the others.
Observers (the hazard checker and cycle model, emu.hazards) see every executed instruction
with the warps that ran it and the registers it touched.
"""
from __future__ import annotations

import numpy as np

from .errors import EmuFault
from .lanes import AT_BAR, AT_BSYNC, AT_WARPSYNC, EXITED, READY, Lanes, PerWarp  # noqa: F401
from .blocks import Run, runs_of, visit
from .memory import FlatMemory

LANES = 32
FULL = 0xFFFFFFFF
LANE_BITS = (np.uint64(1) << np.arange(LANES, dtype=np.uint64)).astype(np.uint64)
_LANE = np.arange(LANES, dtype=np.int64)

_NO_PC = np.iinfo(np.int64).max
# The barrier id lanes at UCGABAR_WAIT wait on (AT_BAR): not a CTA barrier's (0..15)
CLUSTER_BARRIER = 1 << 20
# Explicit reconvergence: a group that keeps the warp this many scheduling decisions in a row
# (branches, mostly) hands it to another ready group, so that spin-waits between lanes of
# one warp make progress as under the hardware's fair scheduling.
GROUP_TURN = 64
# Group steps after which a warp that has had no turn gets one (spin-waits across warps).
QUANTUM = 256
# Optimistic reconvergence: warp-instructions a warp's spinning paths (loops with a YIELD)
# may run while other lanes of the warp wait, ready at another PC or at a BSYNC, before the
# next of those paths (by PC, then wrapping round) gets the warp or the BSYNC lets its lanes
# go. Lowest-PC-first alone livelocks where lanes spin on what a sibling lane has still to
# do (a flag it sets, a lock it holds), which the hardware's independent thread scheduling
# runs to completion.
SPIN_LIMIT = 512
_ONE_WARP = np.zeros(1, dtype=np.int64)
_ONE_WARP.flags.writeable = False
_WARP_LANES = np.arange(LANES, dtype=np.int64)


_WARPS: dict[int, np.ndarray] = {1: _ONE_WARP}


def _all_warps(n: int) -> np.ndarray:
    """Warps 0..n-1 (shared, read-only)."""
    got = _WARPS.get(n)
    if got is None:
        got = np.arange(n, dtype=np.int64)
        got.flags.writeable = False
        if len(_WARPS) > 64:
            _WARPS.clear()
            _WARPS[1] = _ONE_WARP
        _WARPS[n] = got
    return got


def mask_to_int(mask: np.ndarray) -> int:
    return int(np.bitwise_or.reduce(np.where(mask, LANE_BITS, np.uint64(0))))


def int_to_mask(value: int) -> np.ndarray:
    return (np.uint64(value & FULL) & LANE_BITS) != 0


def lane_bits(idx: np.ndarray, warps: np.ndarray) -> np.ndarray:
    """For sorted lanes `idx` spanning `warps` (sorted, unique): each warp's lanes as bits."""
    bits = np.left_shift(1, idx & 31, dtype=np.int64)
    starts = np.searchsorted(idx >> 5, warps)
    return np.bitwise_or.reduceat(bits, starts)


_GEOMETRY: dict = {}


def _rank(ctaid, cluster) -> int:
    """A CTA's rank in its cluster (%cluster_ctarank): its place in the cluster, x fastest."""
    cx, cy, cz = cluster
    return ctaid[0] % cx + cx * (ctaid[1] % cy + cy * (ctaid[2] % cz))


def _geometry(block, ncta: int):
    """Per lane of `ncta` CTAs of shape `block`: live (a thread there) and thread index;
    and the warps per CTA. Shared, read-only."""
    key = (tuple(block), ncta)
    got = _GEOMETRY.get(key)
    if got is None:
        bx, by, bz = block
        n = bx * by * bz
        wpc = (n + LANES - 1) // LANES
        linear = np.arange(wpc * LANES, dtype=np.int64)
        live = np.broadcast_to(linear < n, (ncta, len(linear))).reshape(-1)
        tid = np.stack([linear % bx, (linear // bx) % by, linear // (bx * by)]).astype(np.uint32)
        tid = np.broadcast_to(tid[:, None, :], (3, ncta, len(linear))).reshape(3, -1)
        state = np.where(live, READY, EXITED).astype(np.int8)
        live.flags.writeable = False
        tid.flags.writeable = False
        state.flags.writeable = False
        if len(_GEOMETRY) > 64:
            _GEOMETRY.clear()
        lanes = live.nonzero()[0]
        lanes.flags.writeable = False
        # fresh predicate files to copy: PT and UPT set
        P = np.zeros((8, ncta * len(linear)), dtype=bool)
        P[7] = True
        UP = np.zeros((ncta * wpc, 8), dtype=bool)
        UP[:, 7] = True
        got = _GEOMETRY[key] = (live, tid, state, wpc, lanes, P, UP)
    return got


class Group(Lanes):
    """The lanes that run the next instructions together: in each of the warps `warps`, the
    lanes that warp's schedule picks, all at `pc`."""

    def __init__(self, m, idx: np.ndarray, warps: np.ndarray, pc: int):
        super().__init__(m, idx, int(warps[0]) if len(warps) == 1 else -1)
        self.warps = warps
        # the same lanes and warps as indexes that assign faster: slices where they can be
        self.at = self.sl if self.sl is not None else idx
        w0, nw = int(warps[0]), len(warps)
        self.ws = slice(w0, w0 + nw) if int(warps[-1]) - w0 + 1 == nw else warps     # sorted, unique
        self.pc = pc
        self.stop = _NO_PC          # re-form the group when it reaches this PC
        self.merge = _NO_PC         # optimistic: a PC where more lanes of its warps wait
        self.others = False         # optimistic: lanes of its warps wait ready at other PCs
        self._bits = None
        self._starts = None

    @property
    def bits(self) -> np.ndarray:
        """Each warp's lanes in the group as a bit set (int64)."""
        if self._bits is None:
            self._bits = lane_bits(self.idx, self.warps)
        return self._bits

    def any_per_warp(self, mask: np.ndarray) -> np.ndarray:
        """Per warp of the group: whether `mask` holds for any of its lanes."""
        if self._starts is None:
            self._starts = np.searchsorted(self.wl, self.warps)
        return np.logical_or.reduceat(mask, self._starts)


class Warp(Lanes):
    """One warp's 32 lanes with its scheduling state: views into the machine's arrays, so
    that handlers written for one warp (and the convergence machinery) see the interface
    they always had."""

    per_warp = True

    def __init__(self, m: "Machine", w: int):
        base = w * LANES
        super().__init__(m, _WARP_LANES + base, w)
        self.wid = w
        self.index = w % m.warps_per_cta
        self.explicit = m.explicit
        self._s = slice(base, base + LANES)

    # the warp's share of the machine's state, as views made on first use
    _VIEWS = {
        "R": lambda v: v.m.R[:, v._s], "P": lambda v: v.m.P[:, v._s], "B": lambda v: v.m.B[:, v._s],
        "UR": lambda v: v.m.UR[v.wid], "UP": lambda v: v.m.UP[v.wid],
        "pc": lambda v: v.m.pc[v._s], "state": lambda v: v.m.state[v._s],
        "wait_arg": lambda v: v.m.wait_arg[v._s], "live_mask": lambda v: v.m.live[v._s],
        "bar_pred": lambda v: v.m.bar_pred[v._s], "group": lambda v: v.m.group[v._s],
        "sync_hint": lambda v: v.m.sync_hint[v._s], "apart": lambda v: v.m.apart[v._s],
        "excl": lambda v: v.m.excl[v._s], "bssy_hint": lambda v: v.m.bssy_hint[:, v._s],
        "cta": lambda v: v.m.ctas[v.wid // v.m.warps_per_cta],
        "bar_result": lambda v: v.m.bar_results[v.wid], "bar_kind": lambda v: v.m.bar_kinds[v.wid],
    }

    def __getattr__(self, name):
        make = Warp._VIEWS.get(name)
        if make is None:
            raise AttributeError(name)
        value = make(self)
        setattr(self, name, value)
        return value

    # per-warp scalars kept in the machine's arrays
    @property
    def last_bar(self) -> int:
        return int(self.m.last_bar[self.wid])

    @last_bar.setter
    def last_bar(self, value: int) -> None:
        self.m.last_bar[self.wid] = value

    @property
    def _running(self) -> int:
        return int(self.m.running[self.wid])

    @_running.setter
    def _running(self, v: int) -> None:
        self.m.running[self.wid] = v

    @property
    def _turn(self) -> int:
        return int(self.m.turn[self.wid])

    @_turn.setter
    def _turn(self, v: int) -> None:
        self.m.turn[self.wid] = v

    @property
    def _next_group(self) -> int:
        return int(self.m.next_group[self.wid])

    @_next_group.setter
    def _next_group(self, v: int) -> None:
        self.m.next_group[self.wid] = v

    @property
    def _converged(self):
        return None

    @_converged.setter
    def _converged(self, value) -> None:
        """Setting it (to None) says the warp's lanes changed: pick its lanes afresh."""
        self.m.dirty.add(self.wid)

    @property
    def tracing(self) -> bool:
        return self.m.tracing

    # ---------------------------------------------------------------- scheduling
    def runnable(self) -> bool:
        return bool(np.count_nonzero(self.state == READY))

    def finished(self) -> bool:
        return bool((self.state == EXITED).all())

    def _pick_group(self) -> tuple[int, np.ndarray]:
        """The lanes to run next: the running group while it has ready lanes and its turn
        lasts, else the ready group at the lowest PC (then the lowest id)."""
        ready = self.state == READY
        active = ready & (self.group == self._running)
        self._turn += 1
        if not np.count_nonzero(active) or self._turn > GROUP_TURN:
            others = ready & ~active if np.count_nonzero(active) else ready
            if np.count_nonzero(others):
                lanes = np.nonzero(others)[0]
                key = min(zip(self.pc[lanes].tolist(), self.group[lanes].tolist()))
                self._running = key[1]
                self._turn = 0
                active = ready & (self.group == self._running)
            elif not np.count_nonzero(active):
                raise EmuFault("no ready lanes to run", kernel=self.launch.program.name)
            else:
                self._turn = 0
        pcs = self.pc[active]
        pc0 = int(pcs[0])
        if np.count_nonzero(pcs != pc0):
            raise EmuFault("internal: a lane group at different PCs", kernel=self.launch.program.name)
        return pc0, active

    def _split(self, active: np.ndarray, next_pc: int) -> None:
        """After a control instruction: lanes of the running group that went different ways
        become separate groups; the taken path (the lowest target) runs first."""
        lanes = active & (self.state == READY) & (self.group == self._running)
        if not np.count_nonzero(lanes):
            return
        targets = sorted(set(self.pc[lanes].tolist()))
        if len(targets) == 1:
            return
        taken = [int(t) for t in targets if t != next_pc]
        first = None
        for t in taken:
            gid = self._next_group
            self._next_group += 1
            self.group[lanes & (self.pc == t)] = gid
            first = gid if first is None else first
        for t in targets:
            here = lanes & (self.pc == t)
            self.apart[here] |= mask_to_int(lanes & ~here)
        self._running = first
        self._turn = 0

    def merge_lanes(self, released: np.ndarray, accounted: int = 0) -> None:
        """Lanes released together (BSYNC, WARPSYNC, CTA barrier) run as one group per PC;
        they are no longer apart from each other nor from the exited lanes the release
        counted as arrived (`accounted`)."""
        if not self.explicit or not np.count_nonzero(released):
            return
        met = mask_to_int(released) | (accounted & mask_to_int(self.state == EXITED))
        self.apart[released] &= ~met
        first = None
        tags = self.excl if "excl" in self.m.__dict__ else np.zeros(LANES, dtype=np.int64)
        for t, x in sorted(set(zip(self.pc[released].tolist(), tags[released].tolist()))):
            gid = self._next_group
            self._next_group += 1
            self.group[released & (self.pc == t) & (tags == x)] = gid
            first = gid if first is None else first
        self._running = first
        self._turn = 0

    def release_convergence(self) -> bool:
        """Wake lanes waiting at BSYNC/WARPSYNC whose partners have all arrived or exited."""
        woke = False
        exited = self.state == EXITED
        at_bsync = self.state == AT_BSYNC
        if np.count_nonzero(at_bsync):
            # a barrier instance releases once every live member waits on it
            for b, m, waiting_here in self._barrier_instances(at_bsync):
                members = int_to_mask(m)
                if not np.count_nonzero(members & ~exited & ~waiting_here):
                    self.state[waiting_here] = READY
                    self.join_exclusive(waiting_here)
                    if "sync_hint" in self.m.__dict__:
                        # every member together again: on what they were together at BSSY
                        self.sync_hint[waiting_here] = self.bssy_hint[b][waiting_here]
                    self.merge_lanes(waiting_here, m)
                    self._converged = None
                    woke = True
        # Lanes parked at a convergence barrier do not hold up a warp sync (the hardware lets
        # the synchronising lanes proceed without them).
        if self._release_warp_syncs(AT_BSYNC):
            woke = True
        return woke

    def _release_warp_syncs(self, *parked_states: int) -> bool:
        """Release the lanes at each WARPSYNC whose members have all arrived, exited, or
        wait in one of `parked_states`."""
        at_ws = self.state == AT_WARPSYNC
        if not np.count_nonzero(at_ws):
            return False
        exited = self.state == EXITED
        woke = False
        for m in sorted(set(self.wait_arg[at_ws].tolist())):
            settled = exited | (self.state == AT_WARPSYNC)      # (as the lanes released so far left it)
            for state in parked_states:
                settled |= self.state == state
            if np.count_nonzero(int_to_mask(int(m)) & ~settled):
                continue
            waiting = at_ws & (self.wait_arg == m)
            self.state[waiting] = READY
            self.sync_hint[waiting] = mask_to_int(waiting)   # met: these lanes
            # a plain WARPSYNC joins lanes an EXCLUSIVE one kept apart (its own lanes waited
            # with their tag set to the mask they wait on)
            if "excl" in self.m.__dict__:
                self.join_exclusive(waiting & (self.excl != int(m)))
            self.merge_lanes(waiting, int(m))
            self._converged = None
            woke = True
        return woke

    def join_exclusive(self, lanes: np.ndarray) -> None:
        """Lanes that meet (BSYNC, plain WARPSYNC, CTA barrier) run together again."""
        if "excl" in self.m.__dict__:
            self.excl[lanes] = 0

    def release_yielded(self) -> bool:
        """A convergence barrier whose members that have not arrived all executed YIELD
        since they joined it (they spin, e.g. for a lock a waiting lane holds, or merely
        loop on) lets its waiting lanes go, as the hardware clears a barrier whose
        participants are blocked there or yielded (US patent 10,067,768); the yielded lanes
        then no longer wait for those at that barrier. Asked at each YIELD (an H200 let
        them go at the loop's next YIELD, GPU run 12) and, optimistic, after SPIN_LIMIT."""
        woke = False
        at_bsync = self.state == AT_BSYNC
        if not np.count_nonzero(at_bsync) or "yielded" not in self.m.__dict__:
            return False
        exited = self.state == EXITED
        yielded = self.m.yielded[self._s]
        repeat = self.m.yield_repeat[self._s]
        for b, m, waiting_here in self._barrier_instances(at_bsync):
            missing = int_to_mask(m) & ~exited & ~waiting_here
            if not np.count_nonzero(missing) or not yielded[missing].all():
                continue
            if (repeat[missing] < self.m.yield_join[b][self._s][missing]).any():
                continue        # a missing lane passed a YIELD once, it does not spin here
            self._release_without_partners(b, m, waiting_here, missing)
            woke = True
        return woke

    def release_blocked(self) -> bool:
        """Every live lane of the warp waits at a convergence barrier or a CTA barrier and
        none of those is complete (the machine has nothing else to run): the innermost
        barrier instance (its BSYNC at the lowest address) whose missing members all wait at
        other barriers lets its lanes go, as the hardware clears a barrier whose participants
        are blocked (US patent 10,067,768). ptxas's break from an inner region straight to
        the outer BSYNC (`@P BRA` to `BSYNC B1`, skipping `BSYNC B0`) leaves B0's other lanes
        waiting for lanes that wait at B1 for them; ptxas -g's callee restores its caller's
        barrier (`BMOV.32 B6, R`) after the caller's other lanes, let go at the callee's
        YIELD (`release_yielded`), went on to a `BAR.SYNC` that waits for this lane. The
        released lanes are no longer awaited by those members at this barrier."""
        at_bsync = self.state == AT_BSYNC
        exited = self.state == EXITED
        if not np.count_nonzero(at_bsync) or np.count_nonzero(~exited & ~at_bsync & (self.state != AT_BAR)):
            return False
        found = [(int(self.pc[waiting_here].min()), b, m, waiting_here)
                 for b, m, waiting_here in self._barrier_instances(at_bsync)
                 if np.count_nonzero(int_to_mask(m) & ~exited & ~waiting_here)]
        if not found:
            return False
        _, b, m, waiting_here = min(found, key=lambda f: f[:3])
        self._release_without_partners(b, m, waiting_here, int_to_mask(m) & ~exited & ~waiting_here)
        return True

    def release_warp_syncs_blocked(self) -> bool:
        """Nothing in the machine can run and lanes of this warp wait at a WARPSYNC whose
        missing members all wait at a CTA barrier (or a convergence barrier): they go on,
        as lanes parked at a convergence barrier never hold up a warp sync (the barrier's
        own lanes cannot leave it without them). ptxas -g's `block.sync()` is WARPSYNC then
        BAR.SYNC: lanes let go early at a callee's YIELD reach the BAR before the lane that
        called it reaches the WARPSYNC."""
        return self._release_warp_syncs(AT_BSYNC, AT_BAR)

    def _barrier_instances(self, at_bsync: np.ndarray):
        """(Bx, member mask, lanes waiting on it) of each barrier instance lanes wait at:
        lanes waiting on the same Bx with the same member mask, in (Bx, mask) order."""
        lanes = at_bsync.nonzero()[0]
        waited = self.wait_arg[lanes]
        keys = set(zip(waited.tolist(), self.B[waited, lanes].tolist()))
        for b, m in sorted(keys):
            yield b, m, at_bsync & (self.wait_arg == b) & (self.B[b] == m)

    def _release_without_partners(self, b: int, m: int, waiting_here, missing) -> None:
        """Let barrier instance (Bx = `b`, members `m`)'s waiting lanes go before its
        `missing` members arrive; those no longer wait for the released lanes there."""
        self.state[waiting_here] = READY
        if "sync_hint" in self.m.__dict__:
            self.sync_hint[waiting_here] = FULL       # released without their partners
        self.B[b][missing & (self.B[b] == m)] = m & ~mask_to_int(waiting_here) & FULL
        self.merge_lanes(waiting_here, m)
        self._converged = None

    def describe_wait(self) -> str:
        parts = []
        for lane in range(LANES):
            s = int(self.state[lane])
            if s == AT_BSYNC:
                parts.append(f"lane {lane} at BSYNC B{int(self.wait_arg[lane])} (pc 0x{int(self.pc[lane]) - 16:x})")
            elif s == AT_WARPSYNC:
                parts.append(f"lane {lane} at WARPSYNC 0x{int(self.wait_arg[lane]):x}")
            elif s == AT_BAR and int(self.wait_arg[lane]) == CLUSTER_BARRIER:
                parts.append(f"lane {lane} at UCGABAR_WAIT (barrier.cluster)")
            elif s == AT_BAR:
                parts.append(f"lane {lane} at BAR {int(self.wait_arg[lane])}")
        return "; ".join(parts[:4]) + (" …" if len(parts) > 4 else "")


def _initial_shared(m: "Machine") -> np.ndarray:
    """Every CTA's shared memory at launch: the fill, then what the driver's at-entry
    fragments leave there (emu.ops_tmem.at_entry)."""
    from .ops_tmem import at_entry
    data = np.full(len(m.ctaids) * m.shared_stride, getattr(m.launch, "shared_fill", 0), dtype=np.uint8)
    at_entry(m, data)
    return data


class Cta:
    """One thread block of a machine: its place, shared memory and warps."""

    def __init__(self, m: "Machine", index: int, ctaid: tuple[int, int, int]):
        self.machine = m
        self.launch = m.launch
        self.index = index
        self.ctaid = ctaid
        size, at = m.shared_bytes, index * m.shared_stride
        self.shared = FlatMemory(size, "shared", m.shared_data[at:at + size])
        self.first_warp = index * m.warps_per_cta

    @property
    def warps(self) -> list[Warp]:
        return [self.machine.warp(w) for w in range(self.first_warp, self.first_warp + self.machine.warps_per_cta)]


class Budget:
    """Warp-instruction budget of a launch: stops runaway loops with a clear fault."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def exceeded(self, kernel: str, offset: int) -> EmuFault:
        return EmuFault(f"instruction budget of {self.limit} warp-instructions exceeded "
                        f"(runaway loop?)", kernel=kernel, offset=max(offset, 0))


class Machine:
    """A batch of CTAs of one launch, run together (see the module docstring)."""

    # What every machine starts with (class attributes: a launch of a few instructions would
    # spend a noticeable part of its time setting them one by one)
    _fresh = True                 # every live lane at PC 0, nothing run yet
    unflushed = 0                 # instructions issued by the running group, not yet added
    _local = None
    _steps_since_check = 0
    _executed_at_check = None
    _turn_warps: np.ndarray | None = None
    _turn_left = 0
    # optimistic: per warp, warp-instructions run while other paths of it waited ready
    # (`spun`, made on first use; `_spinning`: warps with a count), and the warps whose
    # next pick is the path after the one at the PC given (SPIN_LIMIT)
    _spinning = 0
    _rotated = False

    def __init__(self, launch, ctaids: list[tuple[int, int, int]]):
        self.launch = launch
        self.program = launch.program
        self.steps = launch.steps
        self.decoded = launch.decoded
        self.explicit = getattr(launch, "reconverge", "optimistic") == "explicit"
        self.sequential = launch.sequential
        self.regcount_limit = launch.regcount_limit
        self.imm32 = launch.decoded.imm32
        ncta = len(ctaids)
        live, tid, state, wpc, self._live_lanes, P, UP = _geometry(launch.block, ncta)
        self.warps_per_cta = wpc
        W = ncta * wpc
        T = W * LANES
        self.nwarps = W
        self.nlanes = T
        self.live = live
        self.tid = tid
        self.ctaids = ctaids
        self.R = np.zeros((256, T), dtype=np.uint32)
        self.P = P.copy()                                 # PT set
        # uniform registers: 63 and URZ before sm_100; the blackwell words' 8-bit fields
        # name up to UR254 (ptxas writes UR69 for sm_100)
        self.UR = np.zeros((W, 256), dtype=np.uint32)
        self.UP = UP.copy()                               # UPT set
        self.pc = np.zeros(T, dtype=np.int64)
        self.state = state.copy()
        self.alive = int(launch.threads_per_cta) * ncta   # lanes not exited
        self.executed = np.zeros(W, dtype=np.int64)      # instructions issued, per warp
        self.shared_bytes = launch.shared_total
        self.shared_stride = -(-self.shared_bytes // 16) * 16    # CTAs' shared memory 16-byte aligned
        self._warps: list[Warp | None] = [None] * W
        # What each warp runs next: its lanes (`sel`) and their PC (`sel_pc`, _NO_PC: none).
        self.sel = live.copy()
        self.sel_pc = np.zeros(W, dtype=np.int64)         # every warp has a live lane at 0
        self.dirty: set[int] = set()
        if self.explicit:
            self.turn[:] = 1      # the first pick of each warp's group (id 0, every lane)
        # Observers: the hazard/cycle model and any other tracer.
        self.timing = launch.timing_model
        self.tracing = self.timing is not None
        # The trace recorder (emu.timing.trace) notes each instruction's memory addresses,
        # so instructions run their handlers, which access memory through the recorded
        # paths, instead of specialised forms; `note(space, addresses, size)`.
        recorder = getattr(launch, "recorder", None)
        self.recording = recorder is not None
        self.note = recorder.note if recorder is not None else None
        self.reads: list[tuple] = []
        self.writes: list[tuple] = []
        self.rotate: dict[int, int] = {}
        self.const32: dict[int, np.ndarray] = {}
        self.runs = runs_of(self.decoded, launch)        # fused straight-line runs (emu.blocks)

    # State most kernels never touch, made on first use.
    _LAZY = {
        # Convergence barriers, per lane: B[x, lane] is the member mask of the barrier Bx the
        # lane is in (its BSSY's lanes, less those that left by BREAK). Per lane, not per
        # warp, since lanes apart can each be inside their own region on the same Bx: a
        # recursive callee's BSSY B6 while the caller's lanes wait at their BSYNC B6 (ptxas
        # saves the caller's mask with BMOV.32.CLEAR and restores it before RET).
        "B": lambda m: np.zeros((16, m.nlanes), dtype=np.int64),
        "wait_arg": lambda m: np.zeros(m.nlanes, dtype=np.int64),     # barrier waited on
        "bar_pred": lambda m: np.zeros(m.nlanes, dtype=bool),         # predicate brought to BAR.RED
        "bar_results": lambda m: [{} for _ in range(m.nwarps)],
        "bar_kinds": lambda m: [{} for _ in range(m.nwarps)],
        "last_bar": lambda m: np.zeros(m.nwarps, dtype=np.int64),     # AND / OR / POPC of the last BAR.RED
        # Explicit reconvergence: lane groups (ids), and per warp the group running, its run
        # length and the next free id.
        "group": lambda m: np.zeros(m.nlanes, dtype=np.int64),
        "running": lambda m: np.zeros(m.nwarps, dtype=np.int64),
        "turn": lambda m: np.zeros(m.nwarps, dtype=np.int64),
        "next_group": lambda m: np.ones(m.nwarps, dtype=np.int64),
        # Per lane, the lanes it last met (released together from a WARPSYNC, or found
        # together by BRA.CONV/BRA.DIV) with no control instruction since: the member mask
        # of a collective (emu.convergence)
        "sync_hint": lambda m: np.full(m.nlanes, FULL, dtype=np.int64),
        # Per convergence barrier and lane, the lane's sync_hint when it joined the barrier
        # (BSSY): the lanes a BSYNC releases together, all members there, are together on it
        # again (ptxas's converged path of a run-time-mask collective: BRA.CONV m, then
        # BSSY; WARPSYNC.EXCLUSIVE m; REDUX; BSYNC, then MATCH/VOTE of mask m)
        "bssy_hint": lambda m: np.full((16, m.nlanes), FULL, dtype=np.int64),
        # Per lane, the lanes it has been split from since they last met (a BSYNC, WARPSYNC
        # or CTA barrier releasing them together, or one that counted them as exited): a
        # collective run without such a lane is a hazard even if that lane has exited
        # meanwhile, since the hardware may as well have run the collective first.
        "apart": lambda m: np.zeros(m.nlanes, dtype=np.int64),
        # Per lane, the member mask of the last WARPSYNC.EXCLUSIVE it passed (0: none): lanes
        # with different ones run apart, so a collective counts only the lanes of its own
        # (emu.ops_warp), until a BSYNC, a plain WARPSYNC or a CTA barrier joins them again
        "excl": lambda m: np.zeros(m.nlanes, dtype=np.int64),
        "spun": lambda m: np.zeros(m.nwarps, dtype=np.int64),
        # per lane: it executed YIELD since it last joined a convergence barrier (BSSY)
        "yielded": lambda m: np.zeros(m.nlanes, dtype=bool),
        # Spinning, for the release of a convergence barrier (Warp.release_yielded): a lane
        # spins on a barrier when it has executed one YIELD twice since it joined that barrier
        # (its BSSY on that Bx). YIELD executions are numbered (`yield_count`); per lane the
        # number of the earlier of the last repeated pair (`yield_repeat`), the number of its
        # last YIELD at each PC (`yield_last`), and per Bx the number current at its BSSY
        # (`yield_join`).
        "yield_count": lambda m: [0],
        "yield_repeat": lambda m: np.full(m.nlanes, -1, dtype=np.int64),
        "yield_last": lambda m: {},
        "yield_join": lambda m: np.zeros((16, m.nlanes), dtype=np.int64),
        # shared memory a kernel reads before writing holds whatever was there on hardware:
        # 0 here, or `Launch.shared_fill` (tools/gpu_truth runs twice to find what depends on it)
        "shared_data": lambda m: _initial_shared(m),
        "ctas": lambda m: [Cta(m, i, c) for i, c in enumerate(m.ctaids)],
        "ctaid_of_warp": lambda m: np.repeat(np.array(m.ctaids, dtype=np.uint32).T, m.warps_per_cta, axis=1),
        "shared_base_of_warp": lambda m: (np.arange(m.nwarps, dtype=np.uint64) // np.uint64(m.warps_per_cta))
        * np.uint64(m.shared_stride),
        # Thread-block clusters (a cluster launch puts whole clusters on one machine, each
        # cluster's CTAs consecutive in rank order: Launch.cta_order): per CTA its rank, per
        # warp its CTA's rank (SR_CgaCtaId) and the machine index of its cluster's rank-0 CTA
        "cta_rank": lambda m: np.array([_rank(c, m.launch.cluster) for c in m.ctaids], dtype=np.int64),
        "cga_rank_of_warp": lambda m: np.repeat(m.cta_rank.astype(np.uint32), m.warps_per_cta),
        "cluster_first_of_warp": lambda m: np.repeat(np.arange(len(m.ctaids), dtype=np.int64) - m.cta_rank,
                                                     m.warps_per_cta),
        # barrier.cluster (UCGABAR_ARV / UCGABAR_WAIT, emu.ops_cluster): per lane its
        # arrivals, per CTA (its cluster's rank-0 CTA's entry counts) the completed phases
        "cga_arrived": lambda m: np.zeros(m.nlanes, dtype=np.int64),
        "cga_done": lambda m: np.zeros(len(m.ctaids), dtype=np.int64),
    }

    def __getattr__(self, name):
        make = Machine._LAZY.get(name)
        if make is None:
            raise AttributeError(name)
        value = make(self)
        setattr(self, name, value)
        return value

    def release(self) -> None:
        """Break the machine's reference cycles (its Warp and Cta views refer back to it) once
        its launch is done with it: reference counting then frees it and its arrays, not the
        cycle collector (whose collections, triggered by a launch's leftovers, cost more
        than a short launch)."""
        self._warps = None
        self.__dict__.pop("ctas", None)

    # ---------------------------------------------------------------- views
    def warp(self, w: int) -> Warp:
        v = self._warps[w]
        if v is None:
            v = self._warps[w] = Warp(self, w)
        return v

    @property
    def local_data(self) -> np.ndarray:
        if self._local is None:
            self._local = np.zeros((self.nlanes, self.launch.local_bytes), dtype=np.uint8)
        return self._local

    # ---------------------------------------------------------------- selection
    def _reselect(self) -> None:
        """Pick afresh the lanes of the warps marked dirty."""
        rotate = self.rotate
        if rotate:
            rotate = {w: pc for w, pc in rotate.items() if w in self.dirty}
            self.rotate = {}
        self._pick()
        for w, after in rotate.items():
            self._pick_after(w, after)

    def _pick_after(self, w: int, after: int) -> None:
        """Optimistic, a turn for the next path: warp `w`'s ready lanes at the lowest PC above
        `after`, else (wrapping round) at the lowest PC."""
        s = slice(w * LANES, (w + 1) * LANES)
        ready = self.state[s] == READY
        if not np.count_nonzero(ready):
            return
        pcs = self.pc[s]
        higher = ready & (pcs > after)
        target = int(pcs[higher].min()) if np.count_nonzero(higher) else int(pcs[ready].min())
        np.logical_and(ready, pcs == target, out=self.sel[s])
        self.sel_pc[w] = target
        self._rotated = True
        self._pick_exclusive([w])

    def _pick(self) -> None:
        ws = np.fromiter(sorted(self.dirty), dtype=np.int64, count=len(self.dirty))
        self.dirty.clear()
        if self.explicit:
            sel2 = self.sel.reshape(-1, LANES)
            for w in ws.tolist():
                warp = self.warp(w)
                if not warp.runnable():
                    sel2[w] = False
                    self.sel_pc[w] = _NO_PC
                    continue
                pc0, active = warp._pick_group()
                sel2[w] = active
                self.sel_pc[w] = pc0
            return
        if self.nwarps == 1:
            ready = self.state == READY
            if not np.count_nonzero(ready):
                self.sel_pc[0] = _NO_PC
                self.sel[:] = False
                return
            cand = np.where(ready, self.pc, _NO_PC)
            low = cand.min()
            np.equal(cand, low, out=self.sel)
            self.sel_pc[0] = low
            self._pick_exclusive(ws)
            return
        ready = self.state.reshape(-1, LANES)[ws] == READY
        cand = np.where(ready, self.pc.reshape(-1, LANES)[ws], _NO_PC)
        low = cand.min(axis=1)
        self.sel.reshape(-1, LANES)[ws] = (cand == low[:, None]) & ready
        self.sel_pc[ws] = low
        self._pick_exclusive(ws)

    def _pick_exclusive(self, ws) -> None:
        """Optimistic: in a warp with lanes that WARPSYNC.EXCLUSIVE keeps apart (`excl`),
        one tag's lanes run at a time (the lowest tag, at its lowest PC) until they wait or
        meet the others again, as the hardware runs one such group after the other: their
        uniform registers (REDUX's result) are the warp's, shared by every group."""
        if "excl" not in self.__dict__:
            return
        for w in np.asarray(ws).tolist():
            s = slice(w * LANES, (w + 1) * LANES)
            tags = self.excl[s]
            tagged = (self.state[s] == READY) & (tags != 0)
            if not np.count_nonzero(tagged):
                continue
            mine = tagged & (tags == tags[tagged].min())
            target = int(self.pc[s][mine].min())
            np.logical_and(mine, self.pc[s] == target, out=self.sel[s])
            self.sel_pc[w] = target

    def _form(self) -> Group | None:
        """The next group: the warps whose selections stand at the lowest PC (or, for a turn,
        at the lowest PC among the warps having the turn)."""
        if self.dirty:
            self._reselect()
        sel_pc = self.sel_pc
        if self._fresh:     # every live lane at one PC: 0, or where the scalar path handed over
            self._fresh = False
            p = int(sel_pc[0])
            if p != _NO_PC:
                return Group(self, self._live_lanes, _all_warps(self.nwarps), p)
        if self.nwarps == 1:
            p = int(sel_pc[0])
            if p == _NO_PC:
                return None
            g = Group(self, self.sel.nonzero()[0], _ONE_WARP, p)
            if not self.explicit:
                rest = (self.state == READY) & ~self.sel
                if np.count_nonzero(rest):
                    g.others = True
                    if self._rotated:           # a path after a turn: lanes below are not met
                        rest &= self.pc > p
                    if np.count_nonzero(rest):
                        g.merge = int(self.pc[rest].min())
            return g
        if self._turn_left > 0:
            tw = self._turn_warps
            cand = np.where(tw, sel_pc, _NO_PC)
            p = int(cand.min())
            if p == _NO_PC:
                self._turn_left = 0
            else:
                gwm = cand == p
        if self._turn_left <= 0:
            p = int(sel_pc.min())
            if p == _NO_PC:
                return None
            gwm = sel_pc == p
        warps = gwm.nonzero()[0]
        rows = self.sel.reshape(-1, LANES)[warps]
        idx = (warps[:, None] * LANES + _LANE)[rows]
        g = Group(self, idx, warps, p)
        if self._turn_left <= 0:
            others = sel_pc[~gwm]
            g.stop = int(others.min()) if len(others) else _NO_PC
        if not self.explicit:
            # lanes of the same warps at a higher PC join when the group gets there
            rest = (self.state.reshape(-1, LANES)[warps] == READY) & ~rows
            if np.count_nonzero(rest):
                g.others = True
                pcs = self.pc.reshape(-1, LANES)[warps]
                if self._rotated:               # a path after a turn: lanes below are not met
                    rest &= pcs > p
                if np.count_nonzero(rest):
                    g.merge = int(pcs[rest].min())
        return g

    def _after_control(self, g: Group) -> bool:
        """After a control instruction run by group `g`: True when the group runs on as it is
        (every lane ready and at one PC, no warp's lanes changed otherwise), having updated
        its PC; else its warps are marked to be picked afresh."""
        ok = not self.dirty and self.alive
        if ok:
            st = self.state[g.at]
            pcs = self.pc[g.at]
            q = int(pcs[0])
            ok = not np.count_nonzero(st != READY) and not np.count_nonzero(pcs != q) and q < g.stop and q < g.merge
        if ok and self.explicit:
            # the warps' picks: the same lanes, one more decision on their turn; a warp whose
            # turn ends while other lanes of it are ready picks again
            ws = g.warps
            ready = self.state.reshape(-1, LANES)[ws] == READY
            mine = self.sel.reshape(-1, LANES)[ws]
            if np.count_nonzero(ready != mine):
                ok = (self.turn[ws] + 1 <= GROUP_TURN).all() and \
                    not (ready & ~mine & (self.group.reshape(-1, LANES)[ws] ==
                                          self.running[ws][:, None])).any()
            if ok:
                t = self.turn[ws] + 1
                t[(t > GROUP_TURN)] = 0
                self.turn[ws] = t
        if ok:
            g.pc = q
            self.sel_pc[g.ws] = q
            return True
        self.dirty.update(g.warps.tolist())
        return False

    # ---------------------------------------------------------------- the loop
    def run(self, budget: Budget) -> None:
        if self.sequential:
            return self._run_rounds(budget)
        while True:
            g = self._form() if self.alive else None
            if g is None:
                if not self.alive or not np.count_nonzero(self.state != EXITED):
                    return
                if self._wake():
                    continue
                self._deadlock()
            self._run_group(g, budget)

    def _run_rounds(self, budget: Budget) -> None:
        """Warps one at a time, in rounds: each runs up to QUANTUM instructions (until it
        waits or exits), CTA barriers release after a round. Programs whose warps contend
        through atomics run so (Launch.sequential): how many times a CAS loop retries then
        depends on the schedule, and this is the one the emulator has always used."""
        while True:
            progressed = False
            for w in range(self.nwarps):
                n = 0
                while n < QUANTUM:
                    if self.dirty:
                        self._reselect()
                    p = int(self.sel_pc[w])
                    if p == _NO_PC:
                        if not self.warp(w).release_convergence():
                            break
                        continue
                    idx = self.sel[w * LANES:(w + 1) * LANES].nonzero()[0] + w * LANES
                    g = Group(self, idx, np.array([w]), p)
                    if not self.explicit:
                        rest = (self.state[w * LANES:(w + 1) * LANES] == READY) & \
                            ~self.sel[w * LANES:(w + 1) * LANES]
                        if np.count_nonzero(rest):
                            g.others = True
                            pcs = self.pc[w * LANES:(w + 1) * LANES]
                            if self._rotated:
                                rest &= pcs > p
                            if np.count_nonzero(rest):
                                g.merge = int(pcs[rest].min())
                    n += self._run_group(g, budget, QUANTUM - n)
                progressed |= n > 0
            if not np.count_nonzero(self.state != EXITED):
                return
            if self._release_barriers(range(len(self.ctaids))):
                continue
            if not progressed and self._wake():
                continue
            if not progressed:
                self._deadlock()

    def _run_group(self, g: Group, budget: Budget, limit: int = 0) -> int:
        """Run group `g` until it must form again: control flow that changed its lanes, a PC
        where other warps or lanes join, the end of a turn (or of `limit` instructions).
        Returns how many instructions it ran."""
        steps = self.steps
        nw = len(g.warps)
        p = g.pc
        stop = min(g.stop, g.merge)
        active = g.active
        fast_ok = not self.tracing
        left = limit or (self._turn_left if self._turn_left > 0 else QUANTUM)
        used, limit = budget.used, budget.limit
        one = g.width == 1
        # traced, the fast path serves every group; where a guard holds on some of its
        # warps' lanes and on none of another's, the warps' footprints differ and the
        # instruction goes to _general, which runs it per warp
        traced_ok = self.tracing
        bits = g.bits if traced_ok else None
        direct = direct_bits = None
        end = self.timing.end if traced_ok else None
        recording = self.recording
        ran = 0            # instructions run by the group
        counted = 0        # … of them already added to its warps' executed counts
        runs = self.runs if fast_ok and not recording else None
        # a run is looked for where the group enters straight-line code (its start, after a
        # step no run holds), not at each step of it: a run that does not fit here (stop PC,
        # turn, budget) makes no shorter runs from each of its steps
        entered = True
        try:
            while True:
                if entered and runs is not None:
                    fused = runs.get(p)
                    if fused is None or fused.__class__ is int:
                        fused = visit(self.decoded, p)
                    if fused.__class__ is Run and ran + fused.n <= left and p + 16 * fused.n <= stop \
                            and used + fused.n * nw <= limit:
                        n = fused.n
                        f = (fused.one or fused.make("one", self.launch)) if one \
                            else (fused.many or fused.make("many", self.launch))
                        out = f(g, active, ran - counted)
                        if out is None:
                            ran += n
                            used += n * nw
                            p += 16 * n
                        else:
                            k, exc = out
                            ran += k + 1
                            used += (k + 1) * nw
                            p += 16 * k
                            if not isinstance(exc, PerWarp):
                                raise exc
                            self._per_warp(g, steps[p], p)
                            p += 16
                        if p >= stop or ran >= left:
                            break
                        continue
                step = steps.get(p)
                if step is None:
                    step = self.decoded.step(p)          # first time here
                    if step is None:
                        raise EmuFault(f"jump to 0x{p:x}, which holds no instruction",
                                       kernel=self.program.name, offset=p)
                used += nw
                if used > limit:
                    raise budget.exceeded(self.program.name, p)
                ran += 1
                if step.fast and (fast_ok or traced_ok):
                    if step.reads_clock:
                        self.unflushed = ran - counted
                    guard = step.guard
                    run = step.handler if recording else step.run1 if one else step.run
                    if fast_ok:
                        try:
                            if guard is None:
                                run(g, step, active, active)
                            else:
                                run(g, step, active, active & g.pred(guard))
                        except PerWarp:
                            self._per_warp(g, step, p)
                    else:
                        # traced: the observers see the registers it read and wrote
                        reads, writes = self.reads, self.writes
                        reads.clear()
                        writes.clear()
                        mask = active if guard is None else active & g.pred(guard)
                        if guard is not None and nw > 1:
                            anyw = g.any_per_warp(mask)
                            if np.count_nonzero(anyw) and not anyw.all():
                                self.executed[g.ws] += ran - counted
                                counted = ran
                                budget.used = used
                                self._general(g, step, p)
                                direct = None
                                entered = True
                                p += 16
                                if p >= stop or ran >= left:
                                    break
                                continue
                        try:
                            run(g, step, active, mask)
                        except PerWarp:
                            self._per_warp(g, step, p)
                            if nw > 1:      # the warps may have clocks of their own now
                                direct = None
                        else:
                            if direct is not None:          # the warp's own clock, known
                                end(direct, step, direct_bits, reads, writes)
                            else:
                                self.timing.step(self, step, g.warps, bits, reads, writes)
                                direct, direct_bits = self.timing.sole_clock(self, g.warps)
                    entered = False
                    p += 16
                    if p >= stop or ran >= left:
                        break
                    continue
                entered = True
                self.executed[g.ws] += ran - counted
                counted = ran
                budget.used = used
                self._general(g, step, p)
                if nw > 1:
                    direct = None
                if step.plain:
                    p += 16
                    if p >= stop or ran >= left:
                        break
                    continue
                if not self._after_control(g):
                    p = None
                    break
                p = g.pc
                if ran >= left:
                    break
        except EmuFault as e:
            raise e.located(self.program.name, p) from None
        finally:
            budget.used = used
            if ran > counted:
                self.executed[g.ws] += ran - counted
            self.unflushed = 0
        if p is not None:
            self.pc[g.at] = p
            self.sel_pc[g.ws] = p
            if p == g.merge:
                self.dirty.update(g.warps.tolist())
        self.launch.thread_instructions += ran * g.width
        if g.others or (ran >= left and not self.explicit and self._bsync_waits(g)):
            self._spun(g, ran)
        elif self._spinning:
            self._converged_again(g)
        if not self.sequential and (ran >= QUANTUM or self._turn_left > 0 or self.nwarps > 1):
            self._account(ran)
        return ran

    def _general(self, g: Group, step, p: int) -> None:
        """One instruction with everything the fast path leaves out: control flow,
        convergence checks, handlers that run per warp, and observers."""
        per_warp = not step.vector or (self.explicit and step.collective is not None)
        mask = None
        if not per_warp:
            if self.tracing:
                self.reads.clear()
                self.writes.clear()
            guard = step.guard
            mask = g.active if guard is None else g.active & g.pred(guard)
            # observers see each warp's footprint: a handler may do nothing (read nothing)
            # where no lane of a warp is on, so warps with and without such lanes run apart
            if self.tracing and guard is not None and len(g.warps) > 1:
                anyw = g.any_per_warp(mask)
                if np.count_nonzero(anyw) and not anyw.all():
                    per_warp = True
        if not step.plain:
            self.pc[g.at] = p + 16
        if per_warp:
            self._per_warp(g, step, p)
        else:
            try:
                (step.handler if self.recording else step.run)(g, step, g.active, mask)
            except PerWarp:
                self._per_warp(g, step, p)
            except EmuFault as e:
                raise e.located(self.program.name, p) from None
            else:
                if not step.plain and self.explicit:
                    self._explicit_after(g, step, p)
                if self.tracing:
                    self.timing.step(self, step, g.warps, g.bits, self.reads, self.writes)
        if step.releases and self.alive and not self.sequential and np.count_nonzero(self.state == AT_BAR):
            self._release_barriers(sorted(set((g.warps // self.warps_per_cta).tolist())))

    def _per_warp(self, g: Group, step, p: int) -> None:
        """Run `step` once per warp of the group, each with its own 32-lane view, as the
        emulator always ran every instruction."""
        if len(g.warps) == 1:
            full = np.zeros(LANES, dtype=bool)
            full[g.idx & (LANES - 1)] = True
            base = int(g.warps[0]) * LANES
        else:
            full = np.zeros(len(self.pc), dtype=bool)
            full[g.idx] = True
            base = 0
        need = step.collective if self.explicit else None
        for w in g.warps.tolist():
            warp = self.warp(w)
            active = full[w * LANES - base:(w + 1) * LANES - base].copy()
            if self.tracing:
                self.reads.clear()
                self.writes.clear()
            guard = step.guard
            mask = active if guard is None else active & warp.pred(guard)
            if need is not None:
                from .convergence import check
                check(warp, step, active, need)
            try:
                (step.handler if self.recording else step.run)(warp, step, active, mask)
            except EmuFault as e:
                raise e.located(self.program.name, p) from None
            if self.explicit and not step.plain:
                warp._split(active, p + 16)
                if not step.meets:
                    warp.sync_hint[active] = FULL
            if self.tracing:
                self.timing.step(self, step, np.array([w]), np.array([mask_to_int(active)], dtype=np.int64),
                                 self.reads, self.writes)

    def _explicit_after(self, g: Group, step, p: int) -> None:
        """Explicit reconvergence after a control instruction run as a group: each warp's
        lanes that went different ways split; the lanes no longer share a sync hint."""
        pcs = self.pc[g.at]
        st = self.state[g.at]
        if not ((pcs == pcs[0]).all() and (st == READY).all()):
            full = np.zeros(len(self.pc), dtype=bool)
            full[g.idx] = True
            for w in g.warps.tolist():
                self.warp(w)._split(full[w * LANES:(w + 1) * LANES], p + 16)
        if not step.meets:
            self.sync_hint[g.idx] = FULL

    def _bsync_waits(self, g: Group) -> bool:
        """Whether lanes of `g`'s warps wait at a convergence barrier (asked after a whole
        quantum: a loop that runs on while its warp's other lanes wait)."""
        if len(g.warps) == 1:
            w = int(g.warps[0])
            return bool((self.state[w * LANES:(w + 1) * LANES] == AT_BSYNC).any())
        return bool((self.state.reshape(-1, LANES)[g.warps] == AT_BSYNC).any())

    def _spun(self, g: Group, ran: int) -> None:
        """Optimistic: group `g` ran `ran` instructions, YIELD among them, while other lanes
        of its warps waited (ready at other PCs, or at a convergence barrier): it spins, as
        ptxas marks a loop that may wait on other threads. A warp whose paths have spun
        SPIN_LIMIT instructions with no stretch run converged in between gives the next
        ready path a turn, or else releases the lanes waiting at a BSYNC for members that
        have all yielded (`Warp.release_yielded`). Divergent code without YIELD keeps the
        lowest PC first (a long divergent loop reconverges as before)."""
        yielded = self.__dict__.get("yielded")
        if yielded is None or not np.count_nonzero(yielded[g.idx]):
            return              # no YIELD in what it ran: not a spin-wait (ptxas marks those)
        spun = self.spun
        ws = g.warps
        spun[ws] += ran
        self._spinning = 1
        if ran and int(spun[ws].max()) >= SPIN_LIMIT:
            over = ws[spun[ws] >= SPIN_LIMIT].tolist()
            spun[over] = 0
            for w in over:
                if g.others:
                    # the path that ran: where its lanes stand (or stood, if they moved on)
                    self.rotate[w] = int(self.sel_pc[w]) if self.sel_pc[w] != _NO_PC else g.pc
                else:
                    self.warp(w).release_yielded()
            self.dirty.update(over)
        yielded[g.idx] = False  # the next stretch counts if it yields again

    def _converged_again(self, g: Group) -> None:
        """Optimistic: `g`'s warps ran with no other path waiting: their counts start again."""
        spun = self.spun
        spun[g.warps] = 0
        if not np.count_nonzero(spun):
            self._spinning = 0

    def _account(self, ran: int) -> None:
        """Turns: every QUANTUM steps, warps that have lanes to run but ran nothing since the
        last look get a turn of QUANTUM steps (lowest PC among them first)."""
        if self._turn_left > 0:
            self._turn_left -= ran
            return
        self._steps_since_check += ran
        if self._steps_since_check < QUANTUM:
            return
        self._steps_since_check = 0
        before = self._executed_at_check if self._executed_at_check is not None else 0
        waiting = (self.sel_pc != _NO_PC) & (self.executed == before)
        self._executed_at_check = self.executed.copy()
        if np.count_nonzero(waiting):
            self._turn_warps = waiting
            self._turn_left = QUANTUM

    # ---------------------------------------------------------------- waits
    def _wake(self) -> bool:
        """Nothing can run: release convergence waits and CTA barriers that are complete."""
        woke = False
        st = self.state.reshape(-1, LANES)
        for w in ((st == AT_BSYNC) | (st == AT_WARPSYNC)).any(axis=1).nonzero()[0].tolist():
            if self.warp(w).release_convergence():
                woke = True
        if self._release_barriers(range(len(self.ctaids))):
            woke = True
        if not woke:        # a warp whose every lane waits at a convergence barrier
            for w in (st == AT_BSYNC).any(axis=1).nonzero()[0].tolist():
                if self.warp(w).release_blocked():
                    woke = True
        if not woke:        # a warp sync whose other lanes wait at a CTA barrier
            for w in (st == AT_WARPSYNC).any(axis=1).nonzero()[0].tolist():
                if self.warp(w).release_warp_syncs_blocked():
                    woke = True
        return woke

    def _release_barriers(self, ctas) -> bool:
        """BAR.SYNC/BAR.RED: release a barrier once every live thread (or the count it asks
        for) has arrived. Reductions (AND/OR/POPC) of the arriving threads' predicates are
        kept per warp for B2R."""
        released = False
        if "cga_arrived" in self.__dict__:
            released = self._release_cluster_barriers()
        if self.timing is None and not self.explicit and not self.launch.bar_counts:
            fast = self._release_barriers_at_once(ctas)
            if fast is not None:
                return fast or released
        return self._release_cta_barriers(ctas) or released

    def _release_cta_barriers(self, ctas) -> bool:
        """_release_barriers' CTA barriers, CTA by CTA."""
        released = False
        per = self.warps_per_cta * LANES
        for c in ctas:
            cta = self.ctas[c]
            s = slice(cta.index * per, (cta.index + 1) * per)
            st = self.state[s]
            at = st == AT_BAR
            if not np.count_nonzero(at):
                continue
            args = self.wait_arg[s]
            live = int((st != EXITED).sum())
            for b in sorted(set(args[at].tolist()) - {CLUSTER_BARRIER}):
                here = at & (args == b)
                counted = self.launch.bar_counts.get((id(cta), b))
                if counted:         # warp arrivals (ops_control.op_bar)
                    if self.launch.__dict__.get("bar_arrivals", {}).get((id(cta), b), 0) * LANES < counted:
                        continue
                elif int(here.sum()) < live:
                    continue
                preds = self.bar_pred[s][here]
                result = (int(preds.sum()), bool(preds.all()), bool(np.count_nonzero(preds)))
                ws = here.reshape(-1, LANES).any(axis=1).nonzero()[0] + cta.first_warp
                if self.timing is not None:
                    self.timing.barrier_release(self, ws)
                st[here] = READY
                if "excl" in self.__dict__:
                    self.excl[s][here] = 0
                for w in ws.tolist():
                    if self.explicit:
                        lanes = here[(w - cta.first_warp) * LANES:(w - cta.first_warp + 1) * LANES]
                        self.warp(w).merge_lanes(lanes.copy(), FULL)
                    self.bar_results[w][b] = result
                    self.last_bar[w] = b
                self.dirty.update(ws.tolist())
                self.launch.bar_counts.pop((id(cta), b), None)
                self.launch.__dict__.get("bar_arrivals", {}).pop((id(cta), b), None)
                released = True
        return released

    def _release_barriers_at_once(self, ctas) -> bool | None:
        """`_release_barriers` for many CTAs in a few array operations, where each CTA's
        waiting lanes wait on one barrier and no count was asked for (the barrier needs every
        live thread): the same releases, results and marks. None where that does not hold (or
        no CTA has a waiting lane), for the CTA-by-CTA loop."""
        wpc = self.warps_per_cta
        per = wpc * LANES
        rows = np.asarray(ctas, dtype=np.int64)
        if len(rows) == 0:
            return False
        n = len(self.ctaids)
        whole = self.state[:n * per].reshape(n, per)
        c0 = int(rows[0])
        contiguous = int(rows[-1]) - c0 + 1 == len(rows)
        sel = slice(c0, c0 + len(rows)) if contiguous else rows
        st = whole[sel]                     # a view, or a copy written back below
        at = st == AT_BAR
        if not np.count_nonzero(at):
            return None
        args = self.wait_arg[:n * per].reshape(n, per)[sel]
        waiting = args[at]
        b = int(waiting[0])
        if np.count_nonzero(waiting != b) or b == CLUSTER_BARRIER:
            return None                     # more than one barrier waited on, or a cluster's
        arrived = np.count_nonzero(at, axis=1)
        live = np.count_nonzero(st != EXITED, axis=1)
        go = (arrived > 0) & (arrived >= live)
        if not np.count_nonzero(go):
            return False
        here = at & go[:, None]
        preds = self.bar_pred[:n * per].reshape(n, per)[sel] & here
        counts = np.count_nonzero(preds, axis=1)
        st[here] = READY
        if not contiguous:
            whole[rows] = st
        if "excl" in self.__dict__:
            excl = self.excl[:n * per].reshape(n, per)
            if contiguous:
                excl[sel][here] = 0
            else:
                e = excl[rows]
                e[here] = 0
                excl[rows] = e
        on = here.reshape(len(rows), wpc, LANES).any(axis=2)          # (cta, warp) released
        results, last = self.bar_results, self.last_bar
        dirty = []
        for i in go.nonzero()[0].tolist():
            result = (int(counts[i]), bool(counts[i] == arrived[i]), bool(counts[i]))
            first = int(rows[i]) * wpc
            for k in on[i].nonzero()[0].tolist():
                w = first + k
                results[w][b] = result
                dirty.append(w)
        last[dirty] = b
        self.dirty.update(dirty)
        return True

    def _release_cluster_barriers(self) -> bool:
        """barrier.cluster: a phase completes once every live thread of the cluster has
        arrived (UCGABAR_ARV) once more than the phases completed; UCGABAR_WAIT's lanes
        (AT_BAR on CLUSTER_BARRIER) go on once the phase of their last arrival has."""
        per = self.warps_per_cta * LANES
        n = len(self.ctaids)
        state = self.state[:n * per].reshape(n, per)
        arrived = self.cga_arrived[:n * per].reshape(n, per)
        live = state != EXITED
        size = self.launch.cluster_size
        released = False
        for first in range(0, n, size):
            rows = slice(first, first + size)
            alive = live[rows]
            if not np.count_nonzero(alive):
                continue
            done = int(arrived[rows][alive].min())
            if done > self.cga_done[first]:
                self.cga_done[first] = done
            waiting = (state[rows] == AT_BAR) & (self.wait_arg[:n * per].reshape(n, per)[rows] == CLUSTER_BARRIER)
            here = waiting & (arrived[rows] <= self.cga_done[first])
            if not np.count_nonzero(here):
                continue
            st = state[rows]
            st[here] = READY
            state[rows] = st
            if "excl" in self.__dict__:
                e = self.excl[:n * per].reshape(n, per)[rows]
                e[here] = 0
            on = here.reshape(-1, LANES).any(axis=1).nonzero()[0]
            ws = on + first * self.warps_per_cta
            if self.timing is not None:
                self.timing.barrier_release(self, ws)
            flat = here.reshape(-1, LANES)
            for k, w in zip(on.tolist(), ws.tolist()):
                if self.explicit:
                    self.warp(w).merge_lanes(flat[k].copy(), FULL)
            self.dirty.update(ws.tolist())
            released = True
        return released

    def _deadlock(self) -> None:
        for w in range(self.nwarps):
            warp = self.warp(w)
            if not warp.finished():
                raise EmuFault(f"deadlock in CTA {warp.cta.ctaid}, warp {warp.index}: {warp.describe_wait()}",
                               kernel=self.program.name)
        raise EmuFault("deadlock", kernel=self.program.name)
