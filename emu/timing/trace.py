"""The functional emulator's instruction trace, as the SM model replays it.

A `TraceRecorder` hooks the emulator the way the control-code checker does (a warp's
`timing` gets `begin`/`end` around every instruction, and the warp records the registers
the instruction really reads and writes); memory addresses come from wrapping the launch's
global memory and each CTA's shared memory. `Tee` runs the checker and the recorder in one
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


class _Clock:
    """What the emulator's operand access writes into while tracing."""
    __slots__ = ("reads", "writes", "t")

    def __init__(self):
        self.reads, self.writes, self.t = [], [], 0


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

    def __getattr__(self, name):
        return getattr(self._memory, name)


class TraceRecorder:
    def __init__(self, launch):
        self.launch = launch
        launch.recorder = self          # the launch's result carries the trace
        self.ctas: list[CtaTrace] = []
        self._access = None
        if not isinstance(launch.gmem, _RecordingMemory):
            launch.gmem = _RecordingMemory(launch.gmem, "global", self)
        self.cycles = 0
        self.hazards: list = []

    def note(self, space, addresses, size) -> None:
        if self._access is None:
            self._access = (space, np.array(addresses, dtype=np.int64, copy=True).reshape(-1), int(size))

    def attach(self, cta) -> None:
        trace = CtaTrace(cta.ctaid)
        self.ctas.append(trace)
        cta.shared = _RecordingMemory(cta.shared, "shared", self)
        for warp in cta.warps:
            if getattr(warp, "clock", None) is None or not hasattr(warp.clock, "reads"):
                warp.clock = _Clock()
            warp.tracing = True
            warp.timing = self
            warp.trace_ops = []
            trace.warps.append(warp.trace_ops)
        cta.timing = self

    def finish_cta(self, cta) -> None:
        pass

    def barrier_release(self, warps) -> None:
        pass

    def begin(self, warp) -> None:
        warp.clock.reads = []
        warp.clock.writes = []
        self._access = None

    def end(self, warp, step, active) -> None:
        ins = step.ins
        op = TraceOp(ins.opcode, tuple(ins.modifiers), tuple(dict.fromkeys(warp.clock.reads)),
                     tuple(dict.fromkeys(warp.clock.writes)), int(np.count_nonzero(active)))
        if self._access is not None:
            op.space, op.addresses, op.size = self._access
            self._access = None
        warp.trace_ops.append(op)


class Tee:
    """The control-code checker and the trace recorder on one launch."""

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

    def attach(self, cta) -> None:
        self.checker.attach(cta)
        self.recorder.attach(cta)
        for warp in cta.warps:
            warp.timing = self
        cta.timing = self

    def finish_cta(self, cta) -> None:
        self.checker.finish_cta(cta)

    def barrier_release(self, warps) -> None:
        self.checker.barrier_release(warps)

    def begin(self, warp) -> None:
        self.checker.begin(warp)
        self.recorder._access = None

    def end(self, warp, step, active) -> None:
        self.recorder.end(warp, step, active)
        self.checker.end(warp, step, active)
