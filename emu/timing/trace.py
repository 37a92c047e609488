"""The functional emulator's instruction trace, as the SM model replays it.

A `TraceRecorder` observes the machine the way the control-code checker does (emu.machine
reports every instruction with the warps that ran it and the registers it really read and
wrote); memory addresses come from wrapping the launch's global memory and from the
machine's `note` hook on shared memory. `Tee` runs the checker and the recorder in one
launch."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(slots=True)
class TraceOp:
    opcode: str
    modifiers: tuple
    reads: tuple
    writes: tuple
    lanes: int
    space: str | None = None          # "global" / "shared" for a memory access
    addresses: np.ndarray | None = None
    size: int = 0


@dataclass
class CtaTrace:
    ctaid: tuple
    warps: list = field(default_factory=list)      # per warp: [TraceOp]


class _RecordingMemory:
    """Forwards to a memory, noting the addresses of each load and store."""

    def __init__(self, memory, space: str, recorder: "TraceRecorder"):
        self._memory, self._space, self._recorder = memory, space, recorder

    def load(self, addresses, size, *rest):
        self._recorder.note(self._space, addresses, size)
        return self._memory.load(addresses, size, *rest)

    def store(self, addresses, values, *rest):
        self._recorder.note(self._space, addresses, values.shape[1])
        return self._memory.store(addresses, values, *rest)

    def gather(self, addresses, size):
        self._recorder.note(self._space, addresses, size)
        return self._memory.gather(addresses, size)

    def scatter(self, addresses, values, size):
        self._recorder.note(self._space, addresses, size)
        return self._memory.scatter(addresses, values, size)

    def __getattr__(self, name):
        return getattr(self._memory, name)


class TraceRecorder:
    """Records, per CTA and warp, each instruction a warp ran. Recording runs the launch's
    warps one at a time (`Launch.sequential`), so that every instruction the machine reports
    is one warp's, with that warp's memory addresses; instructions run their handlers then
    (emu.machine: `recording`)."""

    end = None              # the machine's direct-clock path is the checker's only

    def __init__(self, launch):
        self.launch = launch
        launch.recorder = self          # the launch's result carries the trace
        launch.sequential = True
        self.ctas: list[CtaTrace] = []
        self._access = None
        self._warp_ops: list = []
        if not isinstance(launch.gmem, _RecordingMemory):
            launch.gmem = _RecordingMemory(launch.gmem, "global", self)
        self.cycles = 0
        self.hazards: list = []

    def note(self, space, addresses, size) -> None:
        if self._access is None:
            self._access = (space, np.array(addresses, dtype=np.int64, copy=True).reshape(-1), int(size))

    def attach(self, machine) -> None:
        self._warp_ops = []
        for ctaid in machine.ctaids:
            trace = CtaTrace(tuple(ctaid))
            self.ctas.append(trace)
            for _ in range(machine.warps_per_cta):
                ops: list = []
                trace.warps.append(ops)
                self._warp_ops.append(ops)

    def finish(self, machine) -> None:
        pass

    def barrier_release(self, machine, warps) -> None:
        pass

    def sole_clock(self, machine, warps):
        return None, None

    def step(self, machine, step, warps, lanes, reads, writes) -> None:
        """Instruction `step` ran on `warps` (one, recording) on the lanes `lanes` (bit sets)."""
        ins = step.ins
        rs, ws = tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes))
        access, self._access = self._access, None
        for w, b in zip(np.asarray(warps).tolist(), np.asarray(lanes).tolist()):
            op = TraceOp(ins.opcode, tuple(ins.modifiers), rs, ws, int(b).bit_count())
            if access is not None:
                op.space, op.addresses, op.size = access
            self._warp_ops[w].append(op)


class Tee:
    """The control-code checker and the trace recorder on one launch."""

    end = None

    def __init__(self, checker, recorder: TraceRecorder):
        self.checker, self.recorder = checker, recorder

    @classmethod
    def checked(cls, launch) -> "Tee":
        """The plain checker with a recorder beside it (a `timing=` factory for the
        corpus runners of tools.emu_testing)."""
        from ..hazards import TimingModel
        return cls(TimingModel(launch), TraceRecorder(launch))

    @property
    def cycles(self):
        return self.checker.cycles

    @property
    def hazards(self):
        return self.checker.hazards

    def attach(self, machine) -> None:
        self.checker.attach(machine)
        self.recorder.attach(machine)

    def finish(self, machine) -> None:
        self.checker.finish(machine)

    def barrier_release(self, machine, warps) -> None:
        self.checker.barrier_release(machine, warps)

    def sole_clock(self, machine, warps):
        return None, None

    def step(self, machine, step, warps, lanes, reads, writes) -> None:
        self.recorder.step(machine, step, warps, lanes, reads, writes)
        self.checker.step(machine, step, warps, lanes, reads, writes)
