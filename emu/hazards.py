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
- an instruction that depends on a late memory effect without a wait on the scoreboard of
  the instruction that has it (or after one that set none): an access that may reach shared
  memory after an mbarrier.inval (SYNCS.CCTL.IV: the SYNCS unit writes the object back after
  it issues), a memory access or wgmma after a proxy fence (FENCE.VIEW.ASYNC), that fence
  after a MEMBAR.CTA, shared accesses after SYNCS.CCTL.IVALL, LDTM/STTM after
  FENCE.VIEW.ASYNC.T (`ptx2sass.fences.memory_effect`; the kinds the latency table lists:
  `late_memory_effects`);
- cp.async group bookkeeping unlike ptxas's: an instruction other than LDGDEPBAR that sets
  or waits on LDGDEPBAR's scoreboard, a DEPBAR with a stall below 4 (checked on the code as
  a whole, executed or not);
- an overwrite of a register that a pending variable-latency instruction will still write
  (WAW; not by a later result of the same in-order unit, which lands after it) or may still
  be reading under a read scoreboard (WAR; not by a variable-latency result of a unit that
  reads in one order with the reader's, `sched.latency.source_read_order`). A read is over once the
  reader's write scoreboard has been waited on (its result arrived), and a later instruction
  of the same in-order unit (`sched.latency.source_unit`) cannot overtake it.

Cycle model: fixed latencies as tabled; variable ones complete after their typical latency
(`sched.latency.VARIABLE`: global loads as L1 hits, ~35 cycles); a warp's time is its issue
clock at exit; a CTA takes as long as its slowest warp (warps interleave freely, issue
contention between warps is not modelled); CTAs are assumed to run concurrently, so the
launch's cycles are those of the slowest CTA. A barrier release brings the released warps'
clocks to the latest arrival.

Debug builds (ptxas -g, or PTX for debugging; recognised by their control fields,
`loader.unscheduled`) carry no schedule at all: ptxas gives every instruction the same
control field (stall 0, no scoreboards, no waits), even loads whose completion time nothing else could bound, so such code only runs correctly if
the hardware interlocks it. The model runs it serialised (each instruction issues when the
previous one's result is ready) and checks nothing.
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field

import numpy as np

from ptx2sass.encoder.model import IndexList
from ptx2sass.fences import EFFECT_WAITERS, effect_on_read_scoreboard, memory_effect
from ptx2sass.sched.control import MIN_STALL
from .ops_gmma import accumulator_registers
from ptx2sass.sched.latency import model_for

NO_SB = 7
EFFECT_NAMES = {"inval": "mbarrier.inval's write-back of the object", "proxy": "proxy fence",
                "membar": "CTA memory barrier", "ivall": "the SYNCS unit's invalidation after mbarrier.init",
                "tensor": "tensor-memory store fence", "exch": "mbarrier.init's exchange (SYNCS.EXCH)"}


@dataclass(frozen=True)
class Hazard:
    kernel: str
    offset: int
    message: str

    def __str__(self) -> str:
        return f"kernel {self.kernel}, offset 0x{self.offset:04x}: hazard: {self.message}"


class WarpTiming:
    """The issue clock and scoreboard state of a warp; warps that have run the same
    instructions on the same lanes share one (see `TimingModel.step`)."""

    def __init__(self):
        self.t = 0
        # reg → (issue time, producer offset, opcode, its _StepFacts (None: a variable-latency
        # result that has arrived), lanes, which register of its result of that file, the
        # cycle a fixed-latency result lands there (None: an arrived one))
        self.ready: dict[tuple, tuple] = {}
        self.pending: dict[tuple, tuple[int, int, str]] = {}    # reg → (sb, producer offset, opcode)
        self.sb_release = [0] * 6
        self.sb_readers: dict[int, dict[tuple, int]] = {0: {}, 1: {}, 2: {}, 3: {}, 4: {}, 5: {}}
        # register -> (offset, lanes, cycle, unit, scoreboard, seq, MMA opcode, guard): a late-reading load
        # (`late_source_reads`) with no read scoreboard, or an MMA (`late_fixed_reads`), may still read it
        # until that cycle or until a wait on the scoreboard (the load's write one, the MMA's read one)
        self.late_reads: dict[tuple, tuple] = {}
        # issue group (or "BAR") -> (cycle, offset) of its last instruction
        self.group_issued: dict = {}
        self.sb_queues: dict[int, dict[str, int]] = {0: {}, 1: {}, 2: {}, 3: {}, 4: {}, 5: {}}   # sb → queue → last seq
        self.seq = 0
        # predicate register -> seq of its last write (guards of exclusive writers)
        self.predicate_written: dict[tuple, int] = {}
        # wgmma groups whose accumulators are in flight, oldest first (`TimingModel._gmma`)
        self.gmma_groups: list[GmmaGroup] = []
        # kind -> (scoreboard, offset, opcode) of an instruction whose late memory effect
        # (`ptx2sass.fences.memory_effect`) nothing has waited for yet
        self.effects: dict[str, tuple[int, int, str]] = {}

    _OWN = ("t", "ready", "pending", "sb_release", "sb_readers", "sb_queues", "seq", "late_reads",
            "group_issued", "predicate_written", "gmma_groups", "effects")

    def clone(self) -> "WarpTiming":
        c = WarpTiming.__new__(WarpTiming)
        c.t = self.t
        c.ready = dict(self.ready)
        c.pending = dict(self.pending)
        c.sb_release = list(self.sb_release)
        c.sb_readers = {i: dict(d) for i, d in self.sb_readers.items()}
        c.sb_queues = {i: dict(d) for i, d in self.sb_queues.items()}
        c.seq = self.seq
        c.late_reads = dict(self.late_reads)
        c.group_issued = dict(self.group_issued)
        c.predicate_written = dict(self.predicate_written)
        c.gmma_groups = [g.copy() for g in self.gmma_groups]
        c.effects = dict(self.effects)
        for k, v in self.__dict__.items():      # what subclasses of the model keep here
            if k not in self._OWN:
                setattr(c, k, copy.deepcopy(v))
        return c


@dataclass
class GmmaGroup:
    """The HGMMA/IGMMA/QGMMA of one wgmma group (up to the one with gsb0, which `closed` it):
    their accumulator registers, in flight until a WARPGROUP.DEPBAR retires the group, and
    the offset of its first instruction (named in findings)."""
    offset: int
    registers: set = field(default_factory=set)
    closed: bool = False

    def copy(self) -> "GmmaGroup":
        return GmmaGroup(self.offset, set(self.registers), self.closed)


def _name(reg: tuple) -> str:
    return f"{reg[0]}{reg[1]}"


# instructions that count asynchronous groups on a scoreboard: LDGDEPBAR (cp.async), and
# UTMACMDFLUSH (cp.async.bulk.commit_group: ptxas 13.5's sm_100a code puts a bulk group on
# SB0 with the cp.async groups and drains both with one `DEPBAR.LE SB0, 0x0`, fuzz
# 43600043, tests/fuzz_regressions/utmacmdflush_group_scoreboard_sm100.ptx)
ASYNC_GROUP_COUNTERS = ("LDGDEPBAR", "UTMACMDFLUSH")


def _async_group_findings(instructions) -> list[tuple[int, str]]:
    """(offset, message) of TimingModel._check_async_groups's hazards, in order."""
    found = []
    groups = {ins.control.wr_sb for _, ins in instructions
              if ins.opcode == "LDGDEPBAR" and ins.control.wr_sb != NO_SB}
    for off, ins in instructions:
        c = ins.control
        if ins.opcode == "DEPBAR" and c.stall < MIN_STALL["DEPBAR"]:
            found.append((off, f"DEPBAR stalls {c.stall} cycles; its wait takes hold after "
                               f"{MIN_STALL['DEPBAR']}"))
        if not groups or ins.opcode in ASYNC_GROUP_COUNTERS:
            continue
        for sb in sorted(groups):
            # a wait on it drains every group (conservative): ptxas 13.5's CCTL.IVALL waits on
            # all six scoreboards (sm_90, fuzz seed 9600473) or on SB0-SB2 (sm_89, fuzz seed
            # 8900433) in kernels with cp.async groups; another producer on it would corrupt
            # the count
            if c.wr_sb == sb or c.rd_sb == sb:
                found.append((off, f"{ins.opcode} sets SB{sb}, the scoreboard "
                                   f"LDGDEPBAR counts cp.async groups on"))
    return found


class TimingModel:
    """Observes a machine (emu.machine): `attach` before it runs, `step` after every
    instruction a group of its warps executed (with the registers it read and wrote, in
    order), `barrier_release` when a CTA barrier lets warps go, `finish` at its end.

    Warps start sharing one `WarpTiming`; a step run by only part of the warps sharing one
    (or by warps with different lanes) gives them their own copy first, so that every warp
    is modelled exactly as if alone while identical warps cost one update."""

    def __init__(self, launch, max_hazards: int = 100):
        # the launch holds its model: a weak reference back, so that the pair is no cycle
        # (freed by reference counting, not by the cycle collector)
        self._launch = weakref.ref(launch)
        self.kernel = launch.program.name
        self.hazards: list[Hazard] = []
        self.max_hazards = max_hazards
        self.cycles = 0
        self._seen: set = set()
        self.serialised = launch.program.debug_build
        self.lat = model_for(launch.program.arch)       # the cubin's arch's latency table
        if not self.serialised:
            self._check_async_groups(launch.program)

    @property
    def launch(self):
        return self._launch()

    # ------------------------------------------------------------ wiring
    def new_clock(self) -> WarpTiming:
        return WarpTiming()

    def attach(self, machine) -> None:
        machine.clocks = [self.new_clock()]
        machine.clock_of = np.zeros(machine.nwarps, dtype=np.int64)
        machine.clock_refs = [machine.nwarps]
        self._parts = None

    def finish(self, machine) -> None:
        used = set(machine.clock_of.tolist())
        self.cycles = max(self.cycles, max((machine.clocks[c].t for c in used), default=0))
        self._parts = None          # (it holds the machine, which holds the launch, which holds this)

    def _own(self, machine, cid: int, warps: np.ndarray) -> int:
        """The clock `cid` for `warps` alone: a copy when other warps share it too."""
        if machine.clock_refs[cid] == len(warps):
            return cid
        new = len(machine.clocks)
        machine.clocks.append(machine.clocks[cid].clone())
        machine.clock_refs.append(len(warps))
        machine.clock_refs[cid] -= len(warps)
        machine.clock_of[warps] = new
        self._parts = None
        return new

    def barrier_release(self, machine, warps) -> None:
        cids = machine.clock_of[warps]
        t = max(machine.clocks[c].t for c in set(cids.tolist()))
        for c in set(cids.tolist()):
            if machine.clocks[c].t != t:
                c = self._own(machine, c, warps[cids == c])
                machine.clocks[c].t = t

    def _flag(self, offset: int, message: str) -> None:
        key = (offset, message)
        if key in self._seen or len(self.hazards) >= self.max_hazards:
            return
        self._seen.add(key)
        self.hazards.append(Hazard(self.kernel, offset, message))

    def _check_async_groups(self, program) -> None:
        """cp.async groups as every ptxas cubin keeps them (sm_80 to sm_90): the scoreboard
        LDGDEPBAR counts groups on is set by nothing else (DEPBAR.LE SB, n must count
        groups only; a wait on it drains them all), and DEPBAR stalls long enough for its wait to take hold
        before the next instruction issues."""
        instructions = program.instructions
        # the findings depend on the instructions alone: kept on the program for its next launches
        cached = program.__dict__.get("_async_group_findings")
        if cached is None or cached[0] is not instructions or cached[1] != len(instructions):
            cached = (instructions, len(instructions), _async_group_findings(instructions))
            program.__dict__["_async_group_findings"] = cached
        for off, message in cached[2]:
            self._flag(off, message)

    # ------------------------------------------------------------ per instruction
    def step(self, machine, step, warps: np.ndarray, lanes: np.ndarray, reads: list, writes: list) -> None:
        """Instruction `step` ran on `warps`, on the lanes `lanes` (a bit set per warp)."""
        parts = self._parts
        # the cached split is keyed by the warps and their lanes: a later group of the same
        # warps (the same array) with other lanes, after a divergent branch, gets its own bits
        if parts is None or parts[0] is not warps or parts[1] is not machine or parts[3] is not lanes:
            cids = machine.clock_of[warps]
            if len(warps) == 1 or (cids.min() == cids.max() and lanes.min() == lanes.max()):
                groups = {(int(cids[0]), int(lanes[0])): warps}
            else:
                groups = {}
                for c, b, w in zip(cids.tolist(), lanes.tolist(), warps.tolist()):
                    groups.setdefault((c, b), []).append(w)
                groups = {k: np.array(v) for k, v in groups.items()}
            owned = []
            for (c, b), ws in groups.items():
                owned.append((self._own(machine, c, ws), b))
            parts = self._parts = (warps, machine, owned, lanes)
        for c, b in parts[2]:
            self.end(machine.clocks[c], step, b, reads, writes)

    def _waw(self, reg, r, t: int, lands: int, offset: int) -> None:
        """A write of `reg` issued at `t` that lands `lands` cycles later, before the
        fixed-latency result `r` (its `ready` entry) still on its way: it must land after it
        (an HMMA's unread result landed over the LOP3 that reused its register the next
        cycle: H200, fuzz 9400186 hung)."""
        self._flag(offset, f"overwrites {_name(reg)} {t - r[0]} cycles after {r[2]} at "
                           f"0x{r[1]:04x} issued; its result lands {r[6] - r[0]} cycles "
                           f"after issue, this one's {lands} (WAW)")

    def _gmma(self, clock: WarpTiming, step, reads: list, writes: list) -> list:
        """wgmma's accumulators (emu.ops_gmma): an HGMMA/IGMMA/QGMMA's D registers are in flight
        from its issue until the WARPGROUP.DEPBAR.LE gsb0, N that retires its group (groups end at
        an HGMMA with gsb0; N groups stay in flight). Another instruction that reads or writes one
        of them meanwhile is undefined in PTX (wgmma.wait_group): flagged. A later HGMMA may use
        them (chained accumulation). The DEPBAR's writes (the results) are there when it retires:
        no latency to wait for after it."""
        ins = step.ins
        groups = clock.gmma_groups
        if ins.opcode == "WARPGROUP":
            if "DEPBAR" not in ins.modifiers:
                return writes
            keep = next((o.value for o in ins.operands if hasattr(o, "value")), 0)
            closed = [g for g in groups if g.closed]
            for g in closed[:max(len(closed) - keep, 0)]:
                groups.remove(g)
            return []
        if ins.opcode in _GMMA_OPS:
            count = accumulator_registers(ins)
            d = ins.operands[0].index
            if not groups or groups[-1].closed:
                groups.append(GmmaGroup(step.offset))
            groups[-1].registers.update(("R", d + i) for i in range(count))
            if any(getattr(o, "name", "").startswith("gsb") for o in ins.operands):
                groups[-1].closed = True
            return writes
        for reg in (*reads, *writes):
            for g in groups:
                if reg in g.registers:
                    self._flag(step.offset, f"{'reads' if reg in reads else 'writes'} {_name(reg)}, an accumulator "
                               f"of the wgmma at 0x{g.offset:04x} still in flight (no WARPGROUP.DEPBAR retired it)")
                    break
        return writes


    def sole_clock(self, machine, warps):
        """(clock, lanes) when the last `step` of `warps` updated one clock that only they
        share, so that the machine may call `end` directly for their next instructions
        (until something else touches clocks); else (None, None)."""
        parts = self._parts
        if type(self).step is not TimingModel.step or parts is None or parts[0] is not warps \
                or len(parts[2]) != 1:
            return None, None
        c, b = parts[2][0]
        return machine.clocks[c], b

    def end(self, clock: WarpTiming, step, lanes: int, reads: list, writes: list) -> None:
        lat = self.lat
        if self.serialised:
            ins = step.ins
            op = ins.opcode
            clock.t += lat.variable_latency(op) if lat.is_variable(op) else \
                lat.fixed_latency(op, ins.modifiers)
            return
        facts = step.aux.get("timing")
        if facts is None or facts.lat is not lat:
            facts = step.aux["timing"] = _StepFacts(step.ins, lat, step.offset)
        pending, ready = clock.pending, clock.ready
        # 1. Wait on scoreboards.
        t = clock.t
        op = facts.op
        # (a fixed-latency instruction that waits on nothing and sets no scoreboard: steps 2
        # and 3 below only, with their checks against what is in flight only where something is)
        plain = facts.plain and not clock.gmma_groups
        if op in _GMMA_OPS or clock.gmma_groups:
            writes = self._gmma(clock, step, reads, writes)
        if facts.special:          # waits, barriers, issue intervals, ldgsts padding
            for sb in facts.wait_sbs:
                released = clock.sb_release[sb]
                if released > t:
                    t = released
                covered = clock.sb_queues[sb]
                if pending:
                    done = [r for r, p in pending.items() if p[0] == sb or p[4] <= covered.get(p[3], -1)]
                    for reg in done:
                        _, off, pop, _, _, who, _ = pending.pop(reg)
                        ready[reg] = (released, off, pop, None, who, 0, None)
                if clock.late_reads:
                    # a load whose result arrived has read its sources, and so has every
                    # earlier load of an in-order unit (group) a later instruction of which has
                    units = {lat.read_order(e[2]) for e in clock.sb_readers[sb].values()}
                    for reg in [r for r, e in clock.late_reads.items()
                                if e[4] == sb or lat.read_order(e[3]) in units or e[5] <= covered.get(e[3], -1)]:
                        del clock.late_reads[reg]
                clock.sb_readers[sb].clear()
                covered.clear()
                if clock.effects:
                    for kind in [k for k, e in clock.effects.items() if e[0] == sb]:
                        del clock.effects[kind]
                # An instruction whose result has arrived has read its sources, too.
                for readers in clock.sb_readers.values():
                    if readers:
                        for reg in [r for r, e in readers.items() if e[3] == sb]:
                            readers.pop(reg)
            if facts.after_barrier and clock.group_issued.get("BAR") is not None:
                last = clock.group_issued["BAR"]
                if t < last[0] + lat.AFTER_BARRIER[1]:
                    what = "a barrier's result (B2R) needs" if op == "B2R" else "memory instructions need"
                    self._flag(facts.offset, f"issues {op} {t - last[0]} cycles after the BAR at 0x{last[1]:04x}; "
                                             f"{what} {lat.AFTER_BARRIER[1]}")
            if op == "BAR":
                clock.group_issued["BAR"] = (t, facts.offset)
            if facts.pad_role:
                pad, pad_after = lat.LDGSTS_PADDING
                # dummy loads seen since the entry or the last barrier; -1: an LDGSTS came since
                seen = clock.group_issued.get("ldgsts_pad", 0)
                if op in pad_after:
                    clock.group_issued["ldgsts_pad"] = 0
                elif (facts.never and op == "LDS" or facts.unit == "mio") and seen >= 0:
                    # ptxas counts other shared-memory-unit instructions (a SHFL: flash_attn_fwd's
                    # loop has two dummies after one)
                    clock.group_issued["ldgsts_pad"] = seen + 1
                elif op == "LDGSTS":
                    if 0 <= seen < pad:
                        self._flag(facts.offset, f"LDGSTS after the entry or a barrier with {seen} of the "
                                                 f"{pad} shared-memory-unit instructions (or @!PT LDS) "
                                                 f"before it (ldgsts_padding)")
                    clock.group_issued["ldgsts_pad"] = -1
            group = facts.issue_group
            if group is not None:
                last = clock.group_issued.get(group[0])
                if last is not None and t < last[0] + group[1]:
                    self._flag(facts.offset, f"issues {op} {t - last[0]} cycles after the instruction at "
                                             f"0x{last[1]:04x} of its unit; it takes one every {group[1]}")
                clock.group_issued[group[0]] = (t, facts.offset)
        if clock.effects and facts.waits_for:
            for kind in facts.waits_for:
                e = clock.effects.get(kind)
                # an exchange after an exchange needs no wait: ptxas 13.5 issues the mbarrier.inits
                # of a kernel's barriers back to back (`SYNCS.EXCH.64 [UR8]`, `[UR9]`, `[UR8+0x8]`
                # on sm_100; `[UR6]`, `[UR6+0x8]` on sm_90: real-world producer_consumer,
                # double_buffered_sum); a per-lane loop's next one waits to rewrite its sources
                if e is not None and not (kind == "exch" and facts.effect == "exch"):
                    self._flag(facts.offset, f"{op} issues before the late memory effect of the {e[2]} at "
                                             f"0x{e[1]:04x} ({EFFECT_NAMES[kind]}) is over: "
                                             + ("no wait on its scoreboard" if e[0] != NO_SB else "it sets no scoreboard"))
        if facts.effect:
            sb = facts.rd_sb if effect_on_read_scoreboard(facts.effect) else facts.wr_sb
            clock.effects[facts.effect] = (sb, facts.offset, op)
        # the footprint's registers with what is fixed about each (its last one kept: an
        # instruction mostly touches the same registers each time it runs)
        fp = facts.footprint
        if fp is None or fp[0] != reads or fp[1] != writes:
            fp = facts.footprint = _footprint(reads, writes, facts)
        # 2. Reads.
        for reg, per_lane, file, keyed in fp[2]:
            if pending:
                p = pending.get(reg)
                if p is not None:
                    self._read_pending(clock, facts, reg, p, lanes if per_lane else _ALL)
                    continue
            r = ready.get(reg)
            if r is not None and r[4] & (lanes if per_lane else _ALL):
                producer = r[3]
                if producer is None:
                    need = facts.need_arrived
                else:
                    # the producer's facts (one object per instruction) stand for its opcode
                    # and modifiers; a guard or addend register also keys how it is read
                    key = (producer, file, r[5]) if keyed is None else (producer, file, r[5]) + keyed
                    need = facts.needs.get(key)
                    if need is None:
                        need = facts.needs[key] = facts.checker_need(lat.read_latency(
                            r[2], producer.modifiers, file, facts.reader, reg == facts.guard, r[5], reg in facts.addend))
                if r[0] + need > t:
                    self._flag(facts.offset, f"reads {_name(reg)} {t - r[0]} cycles after {r[2]} "
                                             f"at 0x{r[1]:04x} issued; {op} needs {need}")
        # 3. Writes.
        if fp[3]:
            variable = facts.variable
            sb_readers = clock.sb_readers
            busy_readers = [(sb, readers) for sb, readers in sb_readers.items() if readers] \
                if any(sb_readers.values()) else ()
            in_flight = pending or busy_readers or clock.late_reads
            guard = (facts.guard, facts.guard_inv, clock.seq) if variable and facts.guard else None
            for reg, per_lane, part, is_predicate, lands in fp[3]:
                mine = lanes if per_lane else _ALL
                if in_flight:
                    self._overwrite(clock, facts, reg, mine, t, busy_readers)
                r = ready.get(reg)
                if r is not None and r[6] is not None and r[4] & mine:
                    e = facts.variable_latency if variable else lands
                    if t + e < r[6]:
                        self._waw(reg, r, t, e, facts.offset)
                if variable:
                    p = pending.get(reg)
                    if p is not None:          # other lanes' pending result stays tracked
                        mine |= p[5]
                    sb = facts.rd_sb if reg[0] == "P" and op in lat.PREDICATE_WITH_READS else facts.wr_sb
                    pending[reg] = (sb, facts.offset, op, facts.queue, clock.seq, mine, guard)
                    ready.pop(reg, None)
                else:
                    # (part: the register's place in the result, from the first written of its file)
                    ready[reg] = (t, facts.offset, op, facts, mine, part, t + lands)
                if is_predicate:
                    clock.predicate_written[reg] = clock.seq
        if plain:
            clock.seq += 1
            clock.t = t + facts.stall
            return
        guard = (facts.guard, facts.guard_inv, clock.seq) if facts.guard else None
        if facts.tail:             # scoreboards it sets, sources it may read late
            # 4. Scoreboards set by this instruction.
            wr_sb, rd_sb = facts.wr_sb, facts.rd_sb
            if facts.sets_scoreboards:
                if wr_sb != NO_SB:
                    release = t + facts.variable_latency
                    if release > clock.sb_release[wr_sb]:
                        clock.sb_release[wr_sb] = release
                    clock.sb_queues[wr_sb][facts.queue] = clock.seq
                if rd_sb != NO_SB:
                    release = t + lat.SOURCE_READ_CYCLES
                    if release > clock.sb_release[rd_sb]:
                        clock.sb_release[rd_sb] = release
                    if op in lat.PREDICATE_WITH_READS:
                        # its result rides the read scoreboard: a wait on it also covers the
                        # earlier results of its queue (ptxas: LDS.64 R16 with no scoreboard, then
                        # QSPC P1 with SB0, R16 read after the wait on SB0)
                        clock.sb_queues[rd_sb][facts.queue] = clock.seq
                    if facts.read_unit is not None:
                        # its unit's place in the read order, even where its guard left it no register
                        # to read (ptxas: a wait on a later `@P0 LDG`'s read scoreboard ends an
                        # earlier LDG's late read whatever P0 holds)
                        clock.sb_readers[rd_sb][("unit", facts.read_unit)] = (facts.offset, 0, facts.read_unit, wr_sb, None)
                    for reg in reads:
                        # predicates are consumed at issue, uniform registers too where the table says so
                        if reg[0] == "R" or (reg[0] == "UR" and (facts.uniform_late or not lat.UNIFORM_READ_AT_ISSUE)):
                            clock.sb_readers[rd_sb][reg] = (facts.offset, lanes if reg[0] == "R" else _ALL,
                                                            facts.read_unit, wr_sb, guard)
            if rd_sb == NO_SB and facts.late_reads:
                # a load that reads its address after issue, with no read scoreboard (and an
                # instruction that sets none at all, e.g. a UBLKCP): it may read it for
                # `late_read_cycles` (uniform registers are read at issue, as ptxas overwrites
                # an LDS's UR address the next cycle, but for `uniform_late_readers`)
                for reg in reads:
                    if reg[0] == "R" or (reg[0] == "UR" and facts.uniform_late):
                        clock.late_reads[reg] = (facts.offset, lanes if reg[0] == "R" else _ALL,
                                                 t + lat.late_read_window(facts.read_unit),
                                                 facts.read_unit, wr_sb, clock.seq, None, guard)
            window = facts.late_window
            if window:
                # a wait on its read scoreboard (or, lacking one, its write scoreboard) ends the
                # window: the MMA has read its sources then (ptxas's sm_75 HMMA.884.STEP0 with a
                # read scoreboard, its accumulator overwritten 4 cycles after under a wait on it)
                sb = facts.rd_sb if facts.rd_sb != NO_SB else facts.wr_sb
                for reg in reads:
                    if reg[0] == "R" and not lat.read_at_issue(step.ins, reg):
                        clock.late_reads[reg] = (facts.offset, lanes, t + window, _TENSOR, sb, clock.seq, op, guard)
        clock.seq += 1
        clock.t = t + facts.stall
        if facts.drains:
            # (ERRBAR) the next instruction issues once every fixed-latency result in flight
            # has landed; what a reader needs beyond its landing is still asked of it
            for reg, r in ready.items():
                if r[6] is not None:
                    clock.t = max(clock.t, r[6])

    def _read_pending(self, clock: WarpTiming, facts, reg, p: tuple, mine: int) -> None:
        """A read of `reg`, whose variable-latency result `p` (its `pending` entry) has not
        arrived."""
        sb, off, pop, q, _, who, _ = p
        if not who & mine:
            pass
        elif q == facts.unit and facts.in_order:
            pass          # read after the result was written, in the unit's order
        elif _exclusive_guards(p[6], facts, clock):
            pass          # the lanes that read it are not those it writes
        elif sb == NO_SB:
            self._flag(facts.offset, f"reads {_name(reg)} written by {pop} at 0x{off:04x}, "
                                     f"a variable-latency result with no write scoreboard")
        else:
            self._flag(facts.offset, f"reads {_name(reg)} written by {pop} at 0x{off:04x} "
                                     f"without waiting on scoreboard SB{sb}")

    def _overwrite(self, clock: WarpTiming, facts, reg, mine: int, t: int, busy_readers) -> None:
        """A write of `reg` (on lanes `mine`, issued at `t`) against what is in flight: a
        pending variable-latency result (WAW), a reader under a read scoreboard or a late
        reader (WAR). What it conflicts with is no longer tracked after."""
        lat, op, variable = self.lat, facts.op, facts.variable
        pending, late_reads = clock.pending, clock.late_reads
        p = pending.get(reg)
        # a later result of the same in-order unit lands after the pending one
        # (ptxas: `F2I R6` with no scoreboard, then `@!P0 F2I R6`)
        if p is not None and p[5] & mine and not (variable and p[3] == facts.queue) \
                and not _exclusive_guards(p[6], facts, clock):
            self._flag(facts.offset, f"overwrites {_name(reg)} while {p[2]} at 0x{p[1]:04x} may still "
                                     f"write it (SB{p[0]} not waited)")
            pending.pop(reg)
        for sb, readers in busy_readers:
            e = readers.get(reg)
            if e is not None and e[1] & mine and not (
                    variable and facts.read_order is not None and lat.read_order(e[2]) == facts.read_order) \
                    and not _exclusive_guards(e[4], facts, clock):
                self._flag(facts.offset, f"overwrites {_name(reg)} while the instruction at "
                                         f"0x{e[0]:04x} may still read it (SB{sb} not waited)")
                readers.pop(reg)
        late = late_reads.get(reg) if late_reads else None
        if late is not None and late[3] == _TENSOR:
            # an MMA's source: a fixed-latency writer must wait out `late_fixed_reads`,
            # less `late_fixed_reads_write_early` for one whose result lands later (a
            # variable-latency one, or another MMA, writes after it read)
            if t < late[2] - lat.LATE_FIXED_WRITE_EARLY.get(op, 0) and late[1] & mine and not variable \
                    and op not in lat.LATE_FIXED_READS \
                    and not _exclusive_guards(late[7], facts, clock):
                self._flag(facts.offset, f"overwrites {_name(reg)} {t - late[2] + lat.LATE_FIXED_READS.get(late[6], 0)} "
                                         f"cycles after the {late[6]} at 0x{late[0]:04x} issued; it may read it "
                                         f"for {lat.LATE_FIXED_READS.get(late[6], 0)} (late_fixed_reads)")
            del late_reads[reg]
        elif late is not None:   # (a later instruction of the load's unit runs after it read)
            if t < late[2] and late[1] & mine and not (
                    facts.read_order is not None and facts.read_order == lat.read_order(late[3])) \
                    and not _exclusive_guards(late[7], facts, clock):
                window = lat.late_read_window(late[3])
                self._flag(facts.offset, f"overwrites {_name(reg)} {t - late[2] + window} "
                                         f"cycles after the load at 0x{late[0]:04x} issued; it may "
                                         f"read it for {window} (no read scoreboard)")
            del late_reads[reg]

# `TimingModel.end` as defined here: emu/scalar.py keeps what a launch's calls came to only
# for this `end` (a test that wraps it in place sees every call)
PURE_END = TimingModel.end

_PER_LANE = frozenset(("R", "P"))
_TENSOR = "tensor-late-read"      # late_reads' unit field for an MMA's sources (late_fixed_reads)
_ALL = (1 << 32) - 1


class _StepFacts:
    """What the timing model needs of one instruction, worked out once per instruction."""
    __slots__ = ("wait", "wait_sbs", "variable", "queue", "unit", "in_order", "variable_latency", "guard", "guard_inv",
                 "sets_scoreboards", "op", "reader", "modifiers", "offset", "wr_sb", "rd_sb", "stall", "drains",
                 "addend", "late_reads", "uniform_late", "issue_group", "after_barrier", "read_unit", "never", "read_order",
                 "lat", "late_window", "pad_role", "reader_fixed", "needs", "need_arrived", "special", "tail",
                 "keyed_regs", "landing", "gmma", "footprint", "plain", "waits_for", "effect")

    def __init__(self, ins, lat, offset: int = 0):
        op = ins.opcode
        self.wait = ins.control.wait
        if op == "DEPBAR":
            # `DEPBAR.LE SB0, n, {1}`: the braced list names further scoreboards drained to zero
            # (ptxas's sm_89 code waits on an R2UR's SB1 that way: fuzz 34000492)
            for o in ins.operands:
                if getattr(o, "file", None) == "SB":
                    self.wait |= 1 << o.index
                elif isinstance(o, IndexList):
                    for sb in o.items:
                        self.wait |= 1 << sb
        self.wait_sbs = tuple(sb for sb in range(6) if self.wait >> sb & 1)
        self.variable = lat.is_variable(op) and op != "CS2R"
        self.queue = lat.queue_of(op)
        self.unit = lat.source_unit(op)
        self.in_order = self.unit in lat.READS_IN_ORDER
        # the unit whose later instructions show this one has read its sources (none for an
        # instruction that may re-read them after a later one of its unit: LDC's replays)
        self.read_unit = None if op in lat.UNORDERED_LATE_READS else self.unit
        # the in-order group of units whose earlier instructions this one's result cannot overtake
        self.read_order = lat.read_order(self.unit)
        self.variable_latency = lat.variable_latency(op)
        self.addend = lat.addend_registers(ins)
        # (UTC*MMA/UTCBAR on sm_100, SYNCS.EXCH: their uniform registers too, `uniform_late_readers`)
        self.uniform_late = lat.uniform_late_reader(ins)
        self.late_reads = op in lat.LATE_SOURCE_READS or self.uniform_late
        self.issue_group = lat.ISSUE_INTERVAL.get(op)
        self.after_barrier = op in lat.AFTER_BARRIER[0]
        g = ins.guard
        self.guard = (g.file, g.index) if g is not None and not g.is_zero else None
        self.guard_inv = bool(g is not None and g.inv)
        self.never = g is not None and g.file == "P" and g.index == 7 and g.inv      # @!PT
        self.sets_scoreboards = self.variable or op in ("ST", "STG", "STS", "STL", "RED", "REDG", "ATOMS", "STSM", "REDAS",
                                                        "LDGSTS", "BAR")
        self.op, self.modifiers, self.offset = op, lat.latency_modifiers(ins), offset
        self.reader = lat.reader_key(op, tuple(ins.modifiers))     # as the latency rules name it
        self.wr_sb, self.rd_sb = ins.control.wr_sb, ins.control.rd_sb
        self.stall = max(ins.control.stall, lat.ISSUE_CYCLES.get(op, 1))
        self.drains = op in lat.DRAINS_FIXED
        # facts of the model `lat` that are fixed per instruction, worked out here once
        self.lat = lat
        self.late_window = lat.late_fixed_window(op, self.modifiers)
        pad, pad_after = lat.LDGSTS_PADDING
        # whether the ldgsts_padding count sees it at all (`TimingModel.end` decides how)
        self.pad_role = bool(pad) and (op in pad_after or (self.never and op == "LDS") or self.unit == "mio"
                                       or op == "LDGSTS")
        self.reader_fixed = (lat.READER_FIXED.get(op), lat.CHECKER_READER_FIXED.get(op)) \
            if op in lat.CHECKER_READER_FIXED else None
        # (producer's facts, file, part[, as guard, as addend]) -> cycles it needs
        self.needs: dict = {}
        self.landing: dict = {}
        self.keyed_regs = frozenset(self.addend) | ({self.guard} if self.guard else set())
        self.need_arrived = self.checker_need(0)      # a variable-latency result that has arrived
        # what `TimingModel.end` must look at besides the registers, before and after them
        self.special = bool(self.wait_sbs) or self.after_barrier or op == "BAR" or self.pad_role \
            or self.issue_group is not None
        self.tail = self.sets_scoreboards or self.late_reads or bool(self.late_window)
        self.gmma = op in _GMMA_OPS
        self.waits_for = () if self.never else tuple(k for k, ops in EFFECT_WAITERS.items()
                                                      if op in ops and k in lat.LATE_MEMORY_EFFECTS)
        effect = memory_effect(op, ins.modifiers)
        self.effect = effect if effect in lat.LATE_MEMORY_EFFECTS else None
        self.footprint = None       # `_footprint` of the registers it touched last
        # `TimingModel.end`'s common case: none of the above but its registers to look at
        self.plain = not (self.special or self.tail or self.gmma or self.drains or self.variable
                          or bool(self.waits_for) or bool(self.effect))

    def lands(self, file: str) -> int:
        """`lat.result_lands` of this instruction's result in a register of `file` (kept)."""
        v = self.landing.get(file)
        if v is None:
            v = self.landing[file] = self.lat.result_lands(self.op, self.modifiers, file)
        return v

    def checker_need(self, need: int) -> int:
        """The cycles the checker asks for where the model's reader latency is `need`:
        `checker_reader_fixed` replaces the reader's own fixed figure."""
        if self.reader_fixed is not None and need == self.reader_fixed[0]:
            return self.reader_fixed[1]
        return need


def _footprint(reads: list, writes: list, facts) -> tuple:
    """(reads, writes, read facts, write facts) of one execution's footprint: the registers
    each once, in order; a read as (reg, per lane, file, None or (is guard, is addend) where
    the register keys how it is read); a write as (reg, per lane, place in the result (its
    offset from the first written of its file), is a predicate, cycles until a fixed-latency
    result lands there)."""
    rd = tuple((reg, reg[0] in _PER_LANE, reg[0],
                (reg == facts.guard, reg in facts.addend) if reg in facts.keyed_regs else None)
               for reg in dict.fromkeys(reads))
    first_of_file: dict[str, int] = {}
    wr = tuple((reg, reg[0] in _PER_LANE, reg[1] - first_of_file.setdefault(reg[0], reg[1]), reg[0] == "P",
                None if facts.variable else facts.lands(reg[0]))
               for reg in dict.fromkeys(writes))
    return list(reads), list(writes), rd, wr


_GMMA_OPS = frozenset(("HGMMA", "IGMMA", "QGMMA", "WARPGROUP"))


def _exclusive_guards(pending_guard, facts, clock) -> bool:
    """A pending instruction (a variable-latency write, or a read under a read scoreboard or
    a late read) and this one touch no lane in common: they are guarded by the same predicate
    with opposite senses, unchanged since the pending one issued (ptxas: `@!P0 LDG R6` then
    `@P0 IMAD.MOV.U32 R6, RZ, RZ, RZ` with no wait; `@P1 STG [R], R33` then `@!P1 PRMT R33`)."""
    if pending_guard is None or facts.guard is None:
        return False
    guard, inv, seq = pending_guard
    return (guard == facts.guard and inv != facts.guard_inv and guard[0] == "P"
            and clock.predicate_written.get(guard, -1) < seq)


def _lanes(active) -> int:
    """The lanes of a boolean (32,) mask as a bit set."""
    return int.from_bytes(np.packbits(active, bitorder="little").tobytes(), "little")
