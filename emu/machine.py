"""The machine: warps of 32 lanes, CTAs of warps, and the loop that runs them.

A warp holds its register files as NumPy arrays (general registers as [256, 32] uint32 so
that one register of all lanes is one contiguous row). Volta-style independent thread
scheduling is modelled with a program counter per lane, in one of two modes (the launch's
`reconverge`):

* "optimistic" (the default): each step runs every ready lane that sits at the lowest
  pending PC, which reconverges structured control flow at the earliest point;
* "explicit": what the hardware guarantees and no more. Lanes run in groups; a group that
  diverges (a branch, BRX, RET with lanes going different ways) splits, and groups never
  merge because they reach the same PC: only lanes released together from a BSYNC, a
  WARPSYNC or a CTA barrier form one group again. The current group runs on (taken path
  first) until it exits or waits; warp-collective instructions run by part of their
  members are reported (emu.convergence).

In both modes BSSY/BSYNC, WARPSYNC and BAR make lanes wait explicitly.

Warps of a CTA run in rounds (a bounded number of steps each before the next warp gets a
turn), so spin-waits on another warp's store make progress and BAR.SYNC releases a CTA when
every live thread has arrived.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptx2sass.encoder.model import ConstRef, Imm, Reg

from .errors import EmuFault
from .memory import ConstantBanks, FlatMemory, GlobalMemory, LocalMemory

LANES = 32
FULL = 0xFFFFFFFF
LANE_BITS = (np.uint64(1) << np.arange(LANES, dtype=np.uint64)).astype(np.uint64)

# Lane states.
READY, EXITED, AT_BSYNC, AT_WARPSYNC, AT_BAR = 0, 1, 2, 3, 4
_NO_PC = np.iinfo(np.int64).max
# Explicit reconvergence: a group that keeps the warp this many scheduling decisions in a row
# (branches, mostly) hands it to another ready group, so that spin-waits between lanes of
# one warp make progress as under the hardware's fair scheduling.
GROUP_TURN = 64


def mask_to_int(mask: np.ndarray) -> int:
    return int(np.bitwise_or.reduce(np.where(mask, LANE_BITS, np.uint64(0))))


def int_to_mask(value: int) -> np.ndarray:
    return (np.uint64(value & FULL) & LANE_BITS) != 0


class Warp:
    """Architectural state of one warp plus its lanes' scheduling state."""

    def __init__(self, cta: "Cta", index: int, tids: np.ndarray, live: np.ndarray):
        self.cta = cta
        self.launch = cta.launch
        self.index = index
        self.R = np.zeros((256, LANES), dtype=np.uint32)
        self.P = np.zeros((8, LANES), dtype=bool)
        self.P[7] = True
        self.UR = np.zeros(64, dtype=np.uint32)
        self.UP = np.zeros(8, dtype=bool)
        self.UP[7] = True
        # Convergence barriers, per lane: B[x, lane] is the member mask of the barrier Bx the
        # lane is in (its BSSY's lanes, less those that left by BREAK). Per lane, not per
        # warp, since lanes apart can each be inside their own region on the same Bx: a
        # recursive callee's BSSY B6 while the caller's lanes wait at their BSYNC B6 (ptxas
        # saves the caller's mask with BMOV.32.CLEAR and restores it before RET).
        self.B = np.zeros((16, LANES), dtype=np.int64)
        self.tid = tids                                    # (3, 32) thread index per lane
        self.pc = np.zeros(LANES, dtype=np.int64)
        self.state = np.where(live, READY, EXITED).astype(np.int8)
        self.wait_arg = np.zeros(LANES, dtype=np.int64)   # barrier waited on
        self.live_mask = live.copy()
        self.bar_result: dict[int, tuple[int, bool, bool]] = {}
        self.bar_kind: dict[int, str] = {}
        self.last_bar = 0                 # AND / OR / POPC of the last BAR.RED
        self.bar_pred = np.zeros(LANES, dtype=bool)       # predicate brought to BAR.RED
        self._local: LocalMemory | None = None
        self.executed = 0
        self.timing = None                                 # hazard/cycle model, when enabled
        self.tracing = False                               # record register reads/writes
        self.clock = None                                  # this warp's hazards.WarpTiming
        self._converged: tuple[int, np.ndarray] | None = None   # see `step`
        # Explicit reconvergence: the lane groups (ids), the group running, its run length.
        self.explicit = getattr(self.launch, "reconverge", "optimistic") == "explicit"
        self.group = np.zeros(LANES, dtype=np.int64)
        self._next_group = 1
        self._running = 0
        self._turn = 0
        # Per lane, the lanes it last met (released together from a WARPSYNC, or found
        # together by BRA.CONV/BRA.DIV) with no control instruction since: the member mask
        # of a collective (emu.convergence)
        self.sync_hint = np.full(LANES, FULL, dtype=np.int64)
        # Per lane, the lanes it has been split from since they last met (a BSYNC, WARPSYNC
        # or CTA barrier releasing them together, or one that counted them as exited): a
        # collective run without such a lane is a hazard even if that lane has exited
        # meanwhile, since the hardware may as well have run the collective first.
        self.apart = np.zeros(LANES, dtype=np.int64)

    # ---------------------------------------------------------------- memory spaces
    @property
    def local(self) -> LocalMemory:
        if self._local is None:
            self._local = LocalMemory(LANES, self.launch.local_bytes)
        return self._local

    # ---------------------------------------------------------------- operand reads
    def const(self, ref: ConstRef, size: int = 4) -> int:
        offset = ref.offset
        if ref.ureg is not None:
            if ref.ureg.file == "UR":
                offset += int(self.UR[ref.ureg.index]) if not ref.ureg.is_zero else 0
            else:
                raise EmuFault("per-lane constant index in a uniform read")
        return self.launch.const.read(ref.bank, offset, size)

    def r(self, op) -> np.ndarray:
        """Raw 32-bit bits of a source (register, uniform register, immediate, constant),
        with `~` applied; shape (32,) for per-lane values, (1,) for uniform ones."""
        if isinstance(op, Reg):
            if op.file == "R":                      # the common case first
                if self.tracing and op.index != 255:
                    self.clock.reads.append(("R", op.index))
                v = self.R[op.index]
                return ~v if op.inv else v
            if self.tracing and not op.is_zero and op.file == "UR":
                self.clock.reads.append((op.file, op.index))
            if op.file == "R":
                v = self.R[op.index]
            elif op.file == "UR":
                v = self.UR[op.index:op.index + 1] if op.index != 63 else np.zeros(1, np.uint32)
            elif op.file in ("P", "UP"):
                v = self.pred(op).astype(np.uint32)
            else:
                raise EmuFault(f"cannot read {op.file}{op.index} as a value")
            return ~v if op.inv else v
        if isinstance(op, Imm):
            if op.text is not None and not (op.value and "NAN" in op.text):
                from ptx2sass.encoder.sass_text import float_value
                return np.array([np.float32(float_value(op))], dtype=np.float32).view(np.uint32)
            return np.array([op.value & FULL], dtype=np.uint32)   # (a NaN's payload bits)
        if isinstance(op, ConstRef):
            if op.ureg is not None and op.ureg.file == "R":
                offs = self.R[op.ureg.index].astype(np.int64) + op.offset
                v = self.launch.const.read_lanes(op.bank, offs, 4).view(np.uint32).reshape(-1)
            else:
                v = np.array([self.const(op)], dtype=np.uint32)
            return ~v if op.inv else v
        raise EmuFault(f"operand {op!r} is not a value")

    def ri(self, op) -> np.ndarray:
        """Integer source with `-` (two's complement) and `~` applied."""
        v = self.r(op)
        if getattr(op, "neg", False):
            v = (np.uint32(0) - v).astype(np.uint32)
        return v

    def rf(self, op) -> np.ndarray:
        """FP32 source as float32 with `-` and `|.|` applied (a sign-bit operation)."""
        b = self.r(op)
        if getattr(op, "abs", False):
            b = b & np.uint32(0x7FFFFFFF)
        if getattr(op, "neg", False):
            b = b ^ np.uint32(0x80000000)
        return b.view(np.float32)

    def r64(self, op) -> np.ndarray:
        """A 64-bit source: an even register pair, a uniform pair, an immediate, a constant."""
        if isinstance(op, Reg):
            if op.file == "R":
                if op.is_zero:
                    return np.zeros(1, np.uint64)
                if self.tracing:
                    self.clock.reads += [("R", op.index), ("R", op.index + 1)]
                lo = self.R[op.index].astype(np.uint64)
                hi = self.R[op.index + 1].astype(np.uint64) if op.index + 1 < 255 else 0
                return lo | (hi << np.uint64(32))
            if op.file == "UR":
                if op.is_zero:
                    return np.zeros(1, np.uint64)
                if self.tracing:
                    self.clock.reads += [("UR", op.index), ("UR", op.index + 1)]
                return np.array([int(self.UR[op.index]) | int(self.UR[op.index + 1]) << 32], np.uint64)
        if isinstance(op, Imm):
            return np.array([op.value & ((1 << 64) - 1)], dtype=np.uint64)
        if isinstance(op, ConstRef):
            return np.array([self.const(op, 8)], dtype=np.uint64)
        raise EmuFault(f"operand {op!r} is not a 64-bit value")

    def rd(self, op) -> np.ndarray:
        """FP64 source with `-`/`|.|`. A float immediate is the double it spells."""
        if isinstance(op, Imm) and op.text is not None and not (op.value and "NAN" in op.text):
            from ptx2sass.encoder.sass_text import float_value
            return np.array([float_value(op)], dtype=np.float64)
        if isinstance(op, Imm):
            b = np.array([(op.value & FULL) << 32], dtype=np.uint64)   # high word of a double
        else:
            b = self.r64(op)
        if getattr(op, "abs", False):
            b = b & np.uint64(0x7FFFFFFFFFFFFFFF)
        if getattr(op, "neg", False):
            b = b ^ np.uint64(0x8000000000000000)
        return b.view(np.float64)

    def pred(self, op) -> np.ndarray:
        if isinstance(op, Reg):
            if self.tracing and not op.is_zero and op.file in ("P", "UP"):
                self.clock.reads.append((op.file, op.index))
            if op.file == "P":
                v = self.P[op.index]
            elif op.file == "UP":
                v = self.UP[op.index:op.index + 1]
            elif op.file in ("R", "UR") and "SIGN" in op.suffix:
                v = (self.r(Reg(op.file, op.index)) >> np.uint32(31)) != 0
            else:
                raise EmuFault(f"{op.file}{op.index} is not a predicate")
            return ~v if op.inv else v
        if isinstance(op, ConstRef) and "SIGN" in op.suffix:   # PLOP3's c[0x2][0x0].SIGN
            v = (self.r(replace(op, suffix=(), inv=False)) >> np.uint32(31)) != 0
            return ~v if op.inv else v
        if isinstance(op, Imm):
            return np.array([bool(op.value)])
        raise EmuFault(f"operand {op!r} is not a predicate")

    # ---------------------------------------------------------------- writes
    def w(self, dst: Reg, values, mask: np.ndarray) -> None:
        if dst.file == "R":                         # the common case first
            index = dst.index
            if index == 255:
                return
            if index >= self.launch.regcount_limit:
                raise EmuFault(f"write to R{index} beyond the kernel's register count")
            if self.tracing:
                self.clock.writes.append(("R", index))
            np.copyto(self.R[index], values, where=mask, casting="unsafe")
            return
        if dst.is_zero:
            return
        if self.tracing and dst.file in ("R", "UR"):
            self.clock.writes.append((dst.file, dst.index))
        if dst.file == "R":
            if dst.index + 0 >= self.launch.regcount_limit:
                raise EmuFault(f"write to R{dst.index} beyond the kernel's register count")
            np.copyto(self.R[dst.index], np.asarray(values, dtype=np.uint32), where=mask)
        elif dst.file == "UR":
            if mask.any():
                vals = np.broadcast_to(np.asarray(values, dtype=np.uint32), (LANES,))
                self.UR[dst.index] = vals[int(np.argmax(mask))]
        elif dst.file in ("P", "UP"):
            self.wp(dst, values, mask)
        else:
            raise EmuFault(f"cannot write {dst.file}{dst.index}")

    def w64(self, dst: Reg, values, mask: np.ndarray) -> None:
        v = np.asarray(values, dtype=np.uint64)
        self.w(Reg(dst.file, dst.index), (v & np.uint64(FULL)).astype(np.uint32), mask)
        if not dst.is_zero:
            self.w(Reg(dst.file, dst.index + 1), (v >> np.uint64(32)).astype(np.uint32), mask)

    def wn(self, dst: Reg, words: list, mask: np.ndarray) -> None:
        """Write consecutive registers starting at `dst`."""
        if dst.is_zero:
            return
        for i, v in enumerate(words):
            self.w(Reg(dst.file, dst.index + i), v, mask)

    def wp(self, dst: Reg, values, mask: np.ndarray) -> None:
        if dst.is_zero:
            return
        if self.tracing:
            self.clock.writes.append((dst.file, dst.index))
        v = np.asarray(values, dtype=bool)
        if dst.file == "P":
            np.copyto(self.P[dst.index], v, where=mask)
        elif dst.file == "UP":
            if mask.any():
                self.UP[dst.index] = np.broadcast_to(v, (LANES,))[int(np.argmax(mask))]
        else:
            raise EmuFault(f"{dst.file}{dst.index} is not a predicate")

    # ---------------------------------------------------------------- scheduling
    def runnable(self) -> bool:
        if self._converged is not None:
            return True
        return bool((self.state == READY).any())

    def finished(self) -> bool:
        return bool((self.state == EXITED).all())

    def step(self) -> None:
        """Execute one instruction for the ready lanes at the lowest PC.

        Fast path: after an instruction that cannot touch PCs or lane states (anything but
        control flow and synchronisation), executed by every ready lane, the next step runs
        the same lanes at the next PC; `_converged` remembers that (PC, lanes) until a
        control instruction or a barrier/convergence release changes the picture."""
        converged = self._converged
        if converged is not None:
            pc0, active = converged
            everyone = True
        elif self.explicit:
            pc0, active = self._pick_group()
            everyone = True
        else:
            ready = self.state == READY
            pcs = np.where(ready, self.pc, _NO_PC)
            pc0 = int(pcs.min())
            active = pcs == pc0
            everyone = bool((active == ready).all())
        step = self.launch.steps.get(pc0)
        if step is None:
            raise EmuFault(f"jump to 0x{pc0:x}, which holds no instruction",
                           kernel=self.launch.program.name, offset=pc0)
        if self.timing is not None:
            self.timing.begin(self)
        guard = step.ins.guard
        if guard is None:
            mask = active
        else:
            mask = active & self.pred(guard)
        if self.explicit:
            need = step.aux.get("collective")
            if need is not None:
                from .convergence import check
                check(self, step, active, need)
        self.pc[active] = pc0 + 16
        self.executed += 1
        self._converged = None
        try:
            step.run(self, step, active, mask)
        except EmuFault as e:
            raise e.located(self.launch.program.name, pc0) from None
        if everyone and step.plain:
            self._converged = (pc0 + 16, active)
        elif self.explicit and not step.plain:
            self._split(active, pc0 + 16)
            if not step.aux.get("meets"):
                self.sync_hint[active] = FULL
        if self.timing is not None:
            self.timing.end(self, step, active)

    # ---------------------------------------------------------------- explicit groups
    def _pick_group(self) -> tuple[int, np.ndarray]:
        """The lanes to run next: the running group while it has ready lanes and its turn
        lasts, else the ready group at the lowest PC (then the lowest id)."""
        ready = self.state == READY
        active = ready & (self.group == self._running)
        self._turn += 1
        if not active.any() or self._turn > GROUP_TURN:
            others = ready & ~active if active.any() else ready
            if others.any():
                lanes = np.nonzero(others)[0]
                key = min(zip(self.pc[lanes].tolist(), self.group[lanes].tolist()))
                self._running = key[1]
                self._turn = 0
                active = ready & (self.group == self._running)
            elif not active.any():
                raise EmuFault("no ready lanes to run", kernel=self.launch.program.name)
            else:
                self._turn = 0
        pcs = self.pc[active]
        pc0 = int(pcs[0])
        if (pcs != pc0).any():
            raise EmuFault("internal: a lane group at different PCs", kernel=self.launch.program.name)
        return pc0, active

    def _split(self, active: np.ndarray, next_pc: int) -> None:
        """After a control instruction: lanes of the running group that went different ways
        become separate groups; the taken path (the lowest target) runs first."""
        lanes = active & (self.state == READY) & (self.group == self._running)
        if not lanes.any():
            return
        targets = np.unique(self.pc[lanes])
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
        if not self.explicit or not released.any():
            return
        met = mask_to_int(released) | (accounted & mask_to_int(self.state == EXITED))
        self.apart[released] &= ~met
        first = None
        for t in np.unique(self.pc[released]):
            gid = self._next_group
            self._next_group += 1
            self.group[released & (self.pc == t)] = gid
            first = gid if first is None else first
        self._running = first
        self._turn = 0

    def release_convergence(self) -> bool:
        """Wake lanes waiting at BSYNC/WARPSYNC whose partners have all arrived or exited."""
        woke = False
        exited = self.state == EXITED
        at_bsync = self.state == AT_BSYNC
        if at_bsync.any():
            # one barrier instance: lanes waiting on the same Bx with the same member mask;
            # it releases once every live member waits on it
            keys = {(int(b), int(self.B[int(b), lane])) for lane, b in
                    zip(np.nonzero(at_bsync)[0].tolist(), self.wait_arg[at_bsync].tolist())}
            for b, m in sorted(keys):
                waiting_here = at_bsync & (self.wait_arg == b) & (self.B[b] == m)
                members = int_to_mask(m)
                if not (members & ~exited & ~waiting_here).any():
                    self.state[waiting_here] = READY
                    self.merge_lanes(waiting_here, m)
                    self._converged = None
                    woke = True
        at_ws = self.state == AT_WARPSYNC
        if at_ws.any():
            for m in np.unique(self.wait_arg[at_ws]):
                members = int_to_mask(int(m))
                waiting = at_ws & (self.wait_arg == m)
                # Lanes parked at a convergence barrier do not hold up a warp sync (the
                # hardware lets the synchronising lanes proceed without them).
                parked = (self.state == AT_WARPSYNC) | (self.state == AT_BSYNC)
                if not (members & ~exited & ~parked).any():
                    self.state[waiting] = READY
                    self.sync_hint[waiting] = mask_to_int(waiting)   # met: these lanes
                    self.merge_lanes(waiting, int(m))
                    self._converged = None
                    woke = True
        return woke

    def describe_wait(self) -> str:
        parts = []
        for lane in range(LANES):
            s = int(self.state[lane])
            if s == AT_BSYNC:
                parts.append(f"lane {lane} at BSYNC B{int(self.wait_arg[lane])} (pc 0x{int(self.pc[lane]) - 16:x})")
            elif s == AT_WARPSYNC:
                parts.append(f"lane {lane} at WARPSYNC 0x{int(self.wait_arg[lane]):x}")
            elif s == AT_BAR:
                parts.append(f"lane {lane} at BAR {int(self.wait_arg[lane])}")
        return "; ".join(parts[:4]) + (" …" if len(parts) > 4 else "")


class Cta:
    """One thread block: its warps, shared memory and named barriers."""

    def __init__(self, launch, ctaid: tuple[int, int, int]):
        self.launch = launch
        self.ctaid = ctaid
        bx, by, bz = launch.block
        n = bx * by * bz
        self.shared = FlatMemory(launch.shared_total, "shared")
        self.warps: list[Warp] = []
        for w in range((n + LANES - 1) // LANES):
            linear = np.arange(w * LANES, (w + 1) * LANES)
            live = linear < n
            tids = np.stack([linear % bx, (linear // bx) % by, linear // (bx * by)]).astype(np.uint32)
            self.warps.append(Warp(self, w, tids, live))

    def run(self, budget: "Budget", quantum: int = 256) -> None:
        warps = self.warps
        while True:
            progressed = False
            for warp in warps:
                n = 0
                while n < quantum:
                    if not warp.runnable():
                        if not warp.release_convergence():
                            break
                        continue
                    warp.step()
                    n += 1
                budget.spend(n, warp)
                progressed |= n > 0
            if all(w.finished() for w in warps):
                return
            if self._release_barriers():
                continue
            if not progressed:
                self._deadlock()

    def _release_barriers(self) -> bool:
        """BAR.SYNC/BAR.RED: release a barrier once every live thread (or the count it asks
        for) has arrived. Reductions (AND/OR/POPC) of the arriving threads' predicates are
        kept per warp for B2R."""
        waiting = {}
        for warp in self.warps:
            at = warp.state == AT_BAR
            for b in np.unique(warp.wait_arg[at]):
                waiting.setdefault(int(b), []).append(warp)
        released = False
        for b, ws in waiting.items():
            live = sum(int((w.state != EXITED).sum()) for w in self.warps)
            arrived = sum(int(((w.state == AT_BAR) & (w.wait_arg == b)).sum()) for w in ws)
            expected = self.launch.bar_counts.get((id(self), b)) or live
            if arrived < min(expected, live):
                continue
            preds = np.concatenate([w.bar_pred[(w.state == AT_BAR) & (w.wait_arg == b)] for w in ws])
            result = (int(preds.sum()), bool(preds.all()), bool(preds.any()))
            if getattr(self, "timing", None) is not None:
                self.timing.barrier_release(ws)
            for w in ws:
                sel = (w.state == AT_BAR) & (w.wait_arg == b)
                w.state[sel] = READY
                w.merge_lanes(sel, FULL)
                w._converged = None
                w.bar_result[b] = result
                w.last_bar = b
            self.launch.bar_counts.pop((id(self), b), None)
            released = True
        return released

    def _deadlock(self) -> None:
        for warp in self.warps:
            if not warp.finished():
                raise EmuFault(f"deadlock in CTA {self.ctaid}, warp {warp.index}: {warp.describe_wait()}",
                               kernel=self.launch.program.name)
        raise EmuFault("deadlock", kernel=self.launch.program.name)


class Budget:
    """Warp-instruction budget of a launch: stops runaway loops with a clear fault."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def spend(self, n: int, warp: Warp) -> None:
        self.used += n
        if self.used > self.limit:
            pc = int(warp.pc.min()) - 16
            raise EmuFault(f"instruction budget of {self.limit} warp-instructions exceeded "
                           f"(runaway loop?)", kernel=warp.launch.program.name, offset=max(pc, 0))
