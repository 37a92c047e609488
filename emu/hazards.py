"""Control-code checking and cycle estimate.

Each warp keeps an issue clock. An instruction issues once the scoreboards in its wait mask
are clear, then the clock advances by its stall count. The registers an instruction really
touches are recorded while it executes (the semantics read and write through the warp), so
the checker sees exact footprints (register pairs, quads, predicates, uniform registers).

Registers are per thread, so hazards are tracked per lane: on divergent paths one group of
lanes may overwrite a register that a pending instruction of the other group still reads
(ptxas relies on this), which is no conflict. Uniform registers belong to the whole warp.

Hazards flagged (each names kernel, offset and registers):
- a read of a fixed-latency result before `sched.latency.read_latency` cycles have passed
  (which depends on the reader too: its pipe, a guard, a memory address ...);
- a read of a variable-latency result without having waited on its write scoreboard, or of
  one whose producer set no scoreboard, except by a later instruction of the same unit when
  that unit reads in order (`sched.latency.READS_IN_ORDER`: LDS → SHFL);
- an overwrite of a register that a pending variable-latency instruction will still write
  (WAW; not by a later result of the same in-order unit, which lands after it) or may still
  be reading under a read scoreboard (WAR). A read is over once the
  reader's write scoreboard has been waited on (its result arrived), and a later instruction
  of the same in-order unit (`sched.latency.source_unit`) cannot overtake it.

Cycle model: fixed latencies as tabled; variable ones complete after their typical latency
(`sched.latency.VARIABLE`: global loads as L1 hits, ~35 cycles); a warp's time is its issue
clock at exit; a CTA takes as long as its slowest warp (warps interleave freely, issue
contention between warps is not modelled); CTAs are assumed to run concurrently, so the
launch's cycles are those of the slowest CTA. A barrier release brings the released warps'
clocks to the latest arrival.

Debug builds (`-G`, recognised by their DWARF `.debug_info`) carry no schedule at all: ptxas
gives every instruction the same control field (stall 0, no scoreboards, no waits), even
loads whose completion time nothing else could bound, so such code only runs correctly if
the hardware interlocks it. The model runs it serialised (each instruction issues when the
previous one's result is ready) and checks nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx2sass.sched.latency import model_for

NO_SB = 7


@dataclass(frozen=True)
class Hazard:
    kernel: str
    offset: int
    message: str

    def __str__(self) -> str:
        return f"kernel {self.kernel}, offset 0x{self.offset:04x}: hazard: {self.message}"


class WarpTiming:
    def __init__(self):
        self.t = 0
        self.ready: dict[tuple, tuple] = {}   # reg → (time, producer offset, opcode, latency)
        self.pending: dict[tuple, tuple[int, int, str]] = {}    # reg → (sb, producer offset, opcode)
        self.sb_release = [0] * 6
        self.sb_readers: dict[int, dict[tuple, int]] = {i: {} for i in range(6)}
        # register -> (offset, lanes, cycle, unit, write scoreboard, seq): a late-reading load (`late_source_reads`) with
        # no read scoreboard may still read it until that cycle
        self.late_reads: dict[tuple, tuple] = {}
        self.group_issued: dict[int, tuple] = {}   # issue group -> (cycle, offset) of its last
        self.sb_queues: dict[int, dict[str, int]] = {i: {} for i in range(6)}   # sb → queue → last seq
        self.seq = 0
        self.reads: list[tuple] = []
        self.writes: list[tuple] = []
        self.lanes_of: tuple = (None, 0)      # (active mask array, its lanes as a bit set)


def _name(reg: tuple) -> str:
    return f"{reg[0]}{reg[1]}"


class TimingModel:
    def __init__(self, launch, max_hazards: int = 100):
        self.launch = launch
        self.kernel = launch.program.name
        self.hazards: list[Hazard] = []
        self.max_hazards = max_hazards
        self.cycles = 0
        self._seen: set = set()
        self.serialised = launch.program.debug_build
        self.lat = model_for(launch.program.arch)       # the cubin's arch's latency table

    # ------------------------------------------------------------ wiring
    def attach(self, cta) -> None:
        for warp in cta.warps:
            warp.timing = self
            warp.clock = WarpTiming()
            warp.tracing = True
        cta.timing = self

    def finish_cta(self, cta) -> None:
        self.cycles = max(self.cycles, max((w.clock.t for w in cta.warps), default=0))

    def barrier_release(self, warps) -> None:
        t = max(w.clock.t for w in warps)
        for w in warps:
            w.clock.t = t

    def _flag(self, offset: int, message: str) -> None:
        key = (offset, message)
        if key in self._seen or len(self.hazards) >= self.max_hazards:
            return
        self._seen.add(key)
        self.hazards.append(Hazard(self.kernel, offset, message))

    # ------------------------------------------------------------ per instruction
    def begin(self, warp) -> None:
        clock = warp.clock
        clock.reads = []
        clock.writes = []

    def end(self, warp, step, active) -> None:
        clock = warp.clock
        ins = step.ins
        ctl = ins.control
        op = ins.opcode
        lat = self.lat
        if self.serialised:
            clock.t += lat.variable_latency(op) if lat.is_variable(op) else \
                lat.fixed_latency(op, ins.modifiers)
            return
        if active is clock.lanes_of[0]:          # same lanes as the last step (converged warp)
            lanes = clock.lanes_of[1]
        else:
            lanes = _lanes(active)
            clock.lanes_of = (active, lanes)
        facts = step.aux.get("timing")
        if facts is None:
            facts = step.aux["timing"] = _StepFacts(ins, lat)
        # 1. Wait on scoreboards.
        t = clock.t
        wait = facts.wait
        for sb in (range(6) if wait else ()):
            if wait >> sb & 1:
                t = max(t, clock.sb_release[sb])
                covered = clock.sb_queues[sb]
                done = [r for r, p in clock.pending.items()
                        if p[0] == sb or p[4] <= covered.get(p[3], -1)]
                for reg in done:
                    _, off, pop, _, _, who = clock.pending.pop(reg)
                    clock.ready[reg] = (clock.sb_release[sb], off, pop, None, who, 0)
                if clock.late_reads:
                    # a load whose result arrived has read its sources, and so has every
                    # earlier load of an in-order unit a later load of which has
                    units = {e[2] for e in clock.sb_readers[sb].values()}
                    for reg in [r for r, e in clock.late_reads.items()
                                if e[4] == sb or e[3] in units or e[5] <= covered.get(e[3], -1)]:
                        del clock.late_reads[reg]
                clock.sb_readers[sb].clear()
                covered.clear()
                # An instruction whose result has arrived has read its sources, too.
                for readers in clock.sb_readers.values():
                    for reg in [r for r, e in readers.items() if e[3] == sb]:
                        readers.pop(reg)
        group = lat.ISSUE_INTERVAL.get(op)
        if group is not None:
            last = clock.group_issued.get(group[0])
            if last is not None and t < last[0] + group[1]:
                self._flag(step.offset, f"issues {op} {t - last[0]} cycles after the instruction at "
                                        f"0x{last[1]:04x} of its unit; it takes one every {group[1]}")
            clock.group_issued[group[0]] = (t, step.offset)
        # 2. Reads.
        for reg in dict.fromkeys(clock.reads):
            mine = lanes if reg[0] in ("R", "P") else _ALL
            if reg in clock.pending:
                sb, off, pop, q, _, who = clock.pending[reg]
                if not who & mine:
                    pass
                elif q == facts.unit and q in lat.READS_IN_ORDER:
                    pass          # read after the result was written, in the unit's order
                elif sb == NO_SB:
                    self._flag(step.offset, f"reads {_name(reg)} written by {pop} at 0x{off:04x}, "
                                            f"a variable-latency result with no write scoreboard")
                else:
                    self._flag(step.offset, f"reads {_name(reg)} written by {pop} at 0x{off:04x} "
                                            f"without waiting on scoreboard SB{sb}")
            elif reg in clock.ready:
                issued, off, pop, pmods, who, part = clock.ready[reg]
                if who & mine:
                    need = 0 if pmods is None else lat.read_latency(pop, pmods, reg[0], op, reg == facts.guard,
                                                                    part, reg in facts.addend)
                    if issued + need > t:
                        self._flag(step.offset, f"reads {_name(reg)} {t - issued} cycles after {pop} "
                                                f"at 0x{off:04x} issued; {op} needs {need}")
        # 3. Writes.
        variable = facts.variable
        busy_readers = [(sb, readers) for sb, readers in clock.sb_readers.items() if readers] \
            if clock.writes else ()
        first_of_file: dict[str, int] = {}
        for reg in dict.fromkeys(clock.writes):
            first_of_file.setdefault(reg[0], reg[1])
            mine = lanes if reg[0] in ("R", "P") else _ALL
            if reg in clock.pending:
                sb, off, pop, q, seq, who = clock.pending[reg]
                # a later result of the same in-order unit lands after the pending one
                # (ptxas: `F2I R6` with no scoreboard, then `@!P0 F2I R6`)
                if who & mine and not (variable and q == facts.queue):
                    self._flag(step.offset, f"overwrites {_name(reg)} while {pop} at 0x{off:04x} may still "
                                            f"write it (SB{sb} not waited)")
                    clock.pending.pop(reg)
            for sb, readers in busy_readers:
                if reg in readers and readers[reg][1] & mine and not (
                        variable and facts.unit is not None and readers[reg][2] == facts.unit):
                    self._flag(step.offset, f"overwrites {_name(reg)} while the instruction at "
                                            f"0x{readers[reg][0]:04x} may still read it (SB{sb} not waited)")
                    readers.pop(reg)
            late = clock.late_reads.get(reg) if clock.late_reads else None
            if late is not None:     # (a later load of the same unit reads in order)
                if t < late[2] and late[1] & mine and not (facts.late_reads and facts.unit == late[3]):
                    self._flag(step.offset, f"overwrites {_name(reg)} {t - late[2] + lat.LATE_READ_CYCLES} "
                                            f"cycles after the load at 0x{late[0]:04x} issued; it may "
                                            f"read it for {lat.LATE_READ_CYCLES} (no read scoreboard)")
                del clock.late_reads[reg]
            if variable:
                if reg in clock.pending:      # other lanes' pending result stays tracked
                    mine |= clock.pending[reg][5]
                clock.pending[reg] = (ctl.wr_sb, step.offset, op, facts.queue, clock.seq, mine)
                clock.ready.pop(reg, None)
            else:
                clock.ready[reg] = (t, step.offset, op, ins.modifiers, mine, reg[1] - first_of_file[reg[0]])
        # 4. Scoreboards set by this instruction.
        if facts.sets_scoreboards:
            if ctl.wr_sb != NO_SB:
                clock.sb_release[ctl.wr_sb] = max(clock.sb_release[ctl.wr_sb], t + facts.variable_latency)
                clock.sb_queues[ctl.wr_sb][facts.queue] = clock.seq
            if ctl.rd_sb != NO_SB:
                clock.sb_release[ctl.rd_sb] = max(clock.sb_release[ctl.rd_sb], t + lat.SOURCE_READ_CYCLES)
                for reg in clock.reads:
                    if reg[0] in ("R", "UR"):      # predicates are consumed at issue
                        clock.sb_readers[ctl.rd_sb][reg] = (step.offset, lanes if reg[0] == "R" else _ALL,
                                                            facts.unit, ctl.wr_sb)
            elif facts.late_reads:
                # a load that reads its address after issue, with no read scoreboard: it may
                # read it for `late_read_cycles` (uniform registers are read at issue: ptxas
                # overwrites an LDS's UR address the next cycle)
                for reg in clock.reads:
                    if reg[0] == "R":
                        clock.late_reads[reg] = (step.offset, lanes,
                                                 t + lat.LATE_READ_CYCLES, facts.unit, ctl.wr_sb,
                                                 clock.seq)
        clock.seq += 1
        clock.t = t + max(ctl.stall, 1)


_ALL = (1 << 32) - 1


class _StepFacts:
    """What the timing model needs of one instruction, worked out once per instruction."""
    __slots__ = ("wait", "variable", "queue", "unit", "variable_latency", "guard", "sets_scoreboards",
                 "addend", "late_reads")

    def __init__(self, ins, lat):
        op = ins.opcode
        self.wait = ins.control.wait
        if op == "DEPBAR":
            for o in ins.operands:
                if getattr(o, "file", None) == "SB":
                    self.wait |= 1 << o.index
        self.variable = lat.is_variable(op) and op != "CS2R"
        self.queue = lat.queue_of(op)
        self.unit = lat.source_unit(op)
        self.variable_latency = lat.variable_latency(op)
        self.addend = lat.addend_registers(ins)
        self.late_reads = op in lat.LATE_SOURCE_READS
        g = ins.guard
        self.guard = (g.file, g.index) if g is not None and not g.is_zero else None
        self.sets_scoreboards = self.variable or op in ("ST", "STG", "STS", "STL", "RED", "REDG", "ATOMS",
                                                        "LDGSTS", "BAR")


def _lanes(active) -> int:
    """The lanes of a boolean (32,) mask as a bit set."""
    return int.from_bytes(np.packbits(active, bitorder="little").tobytes(), "little")
