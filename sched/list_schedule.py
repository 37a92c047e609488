"""List scheduling inside straight-line regions, after register allocation.

The selector emits each PTX instruction's sequence in source order, so a load's address is
often computed just before the load and its consumer follows at once, and independent
chains are not interleaved. This pass reorders each region by critical path on the
latency table (`sched.latency`, the one the control pass and the emulator use), so that
long-latency producers issue early and their readers late.

What may move is deliberately narrow: a region is a run of pure arithmetic and memory
instructions inside one block; memory instructions keep their relative order where their
state spaces may meet (`memory_spaces`); anything
else (branches, calls, barriers, warp collectives, S2R, convergence and sync instructions)
ends the region and stays where it is. Dependences are the exact register footprints the
allocator produced (read after write, write after read, write after write). Control codes
are computed afterwards, for the final order, by `sched.control`.
"""
from __future__ import annotations

import heapq

from ptx2sass.encoder.model import Mem, Reg
from ptx2sass.sched.latency import LatencyModel, model as latency_model
from ptx2sass.sched.memory_order import LOADS, MemoryOrder, access_size, ranged, read_only_load, strong_store

# Global loads count FAR_LOAD cycles (the pre-scheduler's: an L2 hit) in the critical path,
# not the table's L1 hit (35): with 35, a reduction's add chain outranked every load further
# ahead than ~35 cycles, so after allocation the loads the pre-scheduler had put 40 ahead
# drifted down to ~13 ahead of their adds and each DRAM miss stalled the chain (tinygrad
# sum_uint64__r_16_256, 256 strided 64-bit loads: SM model 10517 cycles; ptxas, 24-30 ahead:
# 6420; at FAR_LOAD: 5295).
FAR_LOADS = frozenset({"LDG", "LD"})
FAR_LOAD = 200           # cycles a global load counts for in the critical path (an L2 hit)

# Instructions that only compute registers from registers and constants.
PURE = frozenset({
    "IADD3", "IMAD", "LOP3", "SHF", "ISETP", "FSETP", "FADD", "FMUL", "FFMA", "MOV", "SEL",
    "FSEL", "PRMT", "IMNMX", "FMNMX", "I2F", "I2FP", "F2I", "F2IP", "F2F", "FRND", "MUFU",
    "POPC", "FLO", "BREV", "SGXT", "BMSK", "LEA", "IABS", "PLOP3", "HADD2", "HMUL2", "HFMA2",
    "HSETP2", "HSET2", "HMNMX2", "DADD", "DMUL", "DFMA", "DSETP", "I2I", "I2IP", "F2FP", "IDP",
    "VABSDIFF", "VABSDIFF4", "CS2R", "FCHK", "IMUL", "FSET", "ISET",
    "VIADD", "VIMNMX", "VIMNMX3", "VIADDMNMX", "VHMNMX",      # sm_90
})
# Pure opcodes only the target's spelling writes (encoder/target_spelling.py runs before this
# pass): sm_120's two-input IADD (`Target.two_input_iadd`), an IADD3 of two addends. Outside
# the pure set every address add ended a region, so real-world many_accumulators' loop on
# sm_120 issued each load just before its reader (single-warp 10875 cycles, ptxas 3830).
RESPELLED_PURE = frozenset({"IADD"})
RESPELLED_MOVE = True        # False: those end regions (A/B runs)
# Memory instructions: movable past pure ones and past accesses of other state spaces.
# Atomics and reductions too: they keep their order with every access their space may
# meet, and pure arithmetic (no memory effect) may pass them (`ATOMS` in a histogram loop
# no longer holds back the next iteration's index).
ATOMICS = frozenset({"ATOMS", "ATOMG", "ATOM", "RED", "REDG"})
MEMORY = frozenset({"LDG", "LDS", "LDL", "LD", "LDC", "STG", "STS", "STL", "ST", "LDGMC"}) | ATOMICS
# Registers that are constants or sinks: no dependence goes through them.
FIXED_REGISTERS = {("R", 255), ("P", 7), ("UR", 255), ("UP", 7)}

# The state spaces a memory instruction may touch. Global, shared and local memory are
# disjoint windows and the constant bank is never written, so only accesses whose spaces
# meet keep their order; a generic access (LD/ST) may reach global, shared or local memory.
# A strong (or MMIO) access keeps its place among every other access.
_SPACES = {"LDG": ("global",), "STG": ("global",), "LDGMC": ("global",), "LDS": ("shared",), "STS": ("shared",),
           "LDL": ("local",), "STL": ("local",), "LDC": ("const",),
           "LD": ("global", "shared", "local"), "ST": ("global", "shared", "local"),
           "ATOMS": ("shared",), "ATOMG": ("global",), "RED": ("global",), "REDG": ("global",),
           "ATOM": ("global", "shared", "local"),
           # sched.pre_schedule moves BAR.SYNC and the warp's votes, shuffles, matches and reductions ("warp")
           "BAR": ("global", "shared", "local", "const", "warp"), "VOTE": ("warp",), "SHFL": ("warp",),
           "REDUX": ("warp",), "MATCH": ("warp",)}
_EVERY_SPACE = ("global", "shared", "local", "const")


READ_ONLY_PASS = True      # read-only loads pass earlier stores and atomics (sched.memory_order)


def memory_spaces(opcode: str, modifiers) -> tuple[str, ...]:
    """The spaces whose other accesses a memory instruction must stay ordered with."""
    if "STRONG" in modifiers or "MMIO" in modifiers or "ARRIVE" in modifiers:
        return _EVERY_SPACE    # (an mbarrier arrival orders the accesses it completes)
    return _SPACES[opcode]


def _movable(slot) -> bool:
    op = slot.ins.opcode
    return op in PURE or op in MEMORY or (RESPELLED_MOVE and op in RESPELLED_PURE)


def schedule(slots: list, lat: LatencyModel | None = None) -> list:
    """The slots with each movable region reordered; block starts and labels stay put
    (`lat`: the target's latency model, default sm_8x's)."""
    lat = lat or latency_model("ampere")
    out: list = []
    region: list = []
    pending = _Pending(lat)
    for slot in slots:
        if slot.block_start or slot.labels or not _movable(slot):
            pending.issue(_schedule_region(region, lat, pending), out)
            region = []
            if slot.block_start or slot.labels:
                pending.clear()
            if _movable(slot):          # a movable instruction that starts a block: the
                region.append(slot)     # region begins with it and keeps it first
            else:
                pending.issue([slot], out)
            continue
        region.append(slot)
    pending.issue(_schedule_region(region, lat, pending), out)
    return out


class _Pending:
    """The results still in flight where a region starts: the registers the instructions
    already placed in this block write, with the cycle (one instruction per cycle) each
    writer issued at, so that a region's reader of a long-latency result issued just
    before it (a shuffle's, a load's) waits in the region's order too."""

    def __init__(self, lat: LatencyModel):
        self.lat = lat
        self.t = 0
        self.writers: dict[tuple, tuple] = {}      # register -> (instruction, issue cycle)

    def clear(self) -> None:
        self.writers.clear()

    def issue(self, slots: list, out: list) -> None:
        for s in slots:
            out.append(s)
            for r in s.writes:
                if r not in FIXED_REGISTERS:
                    self.writers[r] = (s.ins, self.t)
            self.t += 1

    def delay(self, slot, written: set) -> int:
        """Cycles from the region's start until `slot`'s operands from before it are ready."""
        ins = slot.ins
        guard = ("P", ins.guard.index) if isinstance(ins.guard, Reg) else None
        wait = 0
        for r in slot.reads:
            if r in FIXED_REGISTERS or r in written or r not in self.writers:
                continue
            p, at = self.writers[r]
            if self.lat.is_variable(p.opcode):
                latency = self.lat.variable_latency(p.opcode)
            else:
                latency = self.lat.read_latency(p.opcode, p.modifiers, r[0],
                                                   self.lat.reader_key(ins.opcode, ins.modifiers), r == guard)
            wait = max(wait, at + latency - self.t)
        return wait


def overwrite_latency(producer, lat: LatencyModel) -> int:
    """Cycles before another write of `producer`'s register may issue. A variable-latency
    producer's estimate: the second write waits on its scoreboard, so `@p LDG d` then
    `@!p MOV d, RZ` (the allocator gave a guarded load and its else-value one register)
    issued back to back stalls there, and every load after them waits too (tinygrad
    triu_tril: four guarded loads one at a time, 1.46x ptxas's SM cycles). One cycle otherwise."""
    return lat.variable_latency(producer.opcode) if lat.is_variable(producer.opcode) else 1


def dependences(instrs: list, footprints: list[tuple], latency, overwrite=None) -> tuple[list, list[int]]:
    """Successors (index, latency) and predecessor counts of a region's dependence graph over
    registers and memory: a read waits `latency(i, j, register)` after the register's last
    writer i, a write one cycle after the reads and `overwrite(i)` (default one) after the
    write before it, a memory access one cycle after the accesses touching one of its
    spaces that its bytes may overlap (`sched.memory_order`). `footprints[j]`: (registers
    read, registers written) of `instrs[j]`; fixed registers (RZ, PT, ...) order nothing."""
    n = len(instrs)
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    npreds = [0] * n
    last_write: dict[tuple, int] = {}
    reads_since: dict[tuple, list[int]] = {}
    order = MemoryOrder()

    def edge(a: int, b: int, latency_: int) -> None:
        succs[a].append((b, latency_))
        npreds[b] += 1

    for j, (ins, (reads, writes)) in enumerate(zip(instrs, footprints)):
        if ins.opcode in MEMORY:
            spaces = memory_spaces(ins.opcode, ins.modifiers)
            rng = address_range(ins, last_write)
            for i in order.before(j, spaces, rng, ins.opcode in LOADS, False,
                                  read_only=READ_ONLY_PASS and read_only_load(ins.opcode, ins.modifiers),
                                  strong=strong_store(ins.opcode, ins.modifiers)):
                edge(i, j, 1)
        for r in reads:
            if r in FIXED_REGISTERS or r not in last_write:
                continue
            edge(last_write[r], j, latency(last_write[r], j, r))
        for r in writes:
            if r in FIXED_REGISTERS:
                continue
            for i in reads_since.get(r, ()):
                if i != j:
                    edge(i, j, 1)
            if r in last_write:
                edge(last_write[r], j, overwrite(last_write[r]) if overwrite else 1)
        for r in reads:
            reads_since.setdefault(r, []).append(j)
        for r in writes:
            if r not in FIXED_REGISTERS:
                last_write[r] = j
                reads_since[r] = []
    return succs, npreds


def address_range(ins, last_write: dict) -> tuple | None:
    """(base key, offset, size) of a plain access's bytes: the base registers with the index
    of their last writer in the region (`last_write`, before `ins`'s own writes), so two
    accesses share a key only while the base holds one value; None where unknown."""
    if not ranged(ins.opcode, ins.modifiers):
        return None
    mem = next((op for op in ins.operands if isinstance(op, Mem)), None)
    if mem is None or mem.desc_only or mem.space:
        return None
    key = []
    for reg in (mem.base, mem.ubase):
        if reg is None or reg.is_zero:
            continue
        width = 2 if ".64" in reg.suffix else 1
        for k in range(width):
            r = (reg.file, reg.index + k)
            key.append((r, last_write.get(r)))
        key.append(reg.suffix)
    return (tuple(key), mem.offset, access_size(ins.modifiers))


def _schedule_region(region: list, lat: LatencyModel, pending: _Pending | None = None) -> list:
    n = len(region)
    if n < 2:
        return region
    anchored = region[0].block_start or bool(region[0].labels)
    start = [0] * n
    written: set = set()
    for j, s in enumerate(region):
        if pending is not None:
            start[j] = pending.delay(s, written)
        written.update(s.writes)

    def latency(i: int, j: int, r: tuple) -> int:
        p, ins = region[i].ins, region[j].ins
        if lat.is_variable(p.opcode):
            # an estimate, for priority only; a global load's at FAR_LOAD (below)
            if p.opcode in FAR_LOADS:
                return max(lat.variable_latency(p.opcode), FAR_LOAD)
            return lat.variable_latency(p.opcode)
        guard = ("P", ins.guard.index) if isinstance(ins.guard, Reg) else None
        return lat.read_latency(p.opcode, p.modifiers, r[0], lat.reader_key(ins.opcode, ins.modifiers), r == guard)
    succs, npreds = dependences([s.ins for s in region], [(s.reads, s.writes) for s in region], latency,
                                lambda i: overwrite_latency(region[i].ins, lat))
    if anchored:                         # the block's first instruction stays first
        for j in range(1, n):
            succs[0].append((j, 0))
            npreds[j] += 1
    height = [0] * n
    for i in range(n - 1, -1, -1):
        height[i] = max((lat_ + height[j] for j, lat_ in succs[i]), default=1)
    units = [lat.queue_of(s.ins.opcode) for s in region]
    return [region[j] for j in issue_order(succs, npreds, height, start=start, units=units,
                                           occupancy=lat.UNIT_OCCUPANCY)]


def issue_order(succs: list[list[tuple[int, int]]], npreds: list[int], height: list[int],
                choose=None, issued=None, start: list[int] | None = None,
                units: list[str | None] | None = None, occupancy: dict[str, int] | None = None,
                clock: list[int] | None = None) -> list[int]:
    """The instructions' indices in issue order, one per cycle: the ready one of greatest
    height (critical path) first, an instruction being ready once every producer's latency
    has passed. `choose(ready, waiting, pop)` may decide instead: it returns an index it took
    off the `ready` heap of (-height, index) (`pop(ready)` takes the one this order would),
    or None to wait until the next instruction is ready (`waiting` is a heap of (cycle,
    -height, index)); `issued(j)` hears of each issue. (sched.pre_schedule's predicate-aware
    order uses both.) `start`: the cycle each may issue at first, for operands in flight
    when the region begins. `clock`, where given: its first item is set to the cycle each
    choice is made at (for a `choose` that times its choices).

    `units[j]`, `occupancy`: an instruction of a unit in `occupancy` keeps that unit busy
    for so many cycles (the MUFU unit takes 8 a warp instruction), and one waits while its
    unit is busy. Among ready instructions of one such unit and equal height, the one whose
    descendants overlap most with those of the unit's issued instructions goes first: two
    independent chains bound by the unit (the two row sums of a softmax, each 4 MUFU.EX2
    then adds and shuffles) are then taken one after the other, so the first chain's
    shuffles overlap the second's MUFUs, where equal heights would interleave them."""
    n = len(succs)
    earliest = list(start) if start is not None else [0] * n
    occupancy = occupancy or {}
    # the first instruction of an occupying unit: only those instructions' descendant sets
    # are read, and a set is built from later instructions' only, so none is built before
    # it (each is a bit mask as wide as the region: all of them for lineops:40000's chain
    # of 40,000 instructions were 108 MB of its peak, more than anything else)
    first = next((j for j in range(n) if units[j] in occupancy), n) if units is not None and occupancy else n
    limited = first < n
    unit_of = (lambda j: units[j] if units[j] in occupancy else None) if limited else (lambda j: None)
    free_at: dict[str, int] = {}
    started: dict[str, int] = {}                    # unit -> descendants of its issued instructions
    desc = [0] * n
    for i in range(n - 1, first - 1, -1):
        for k, _ in succs[i]:
            desc[i] |= desc[k] | (1 << k)
    ready: list[tuple[int, int]] = [(-height[j], j) for j in range(n) if npreds[j] == 0 and earliest[j] <= 0]
    heapq.heapify(ready)
    waiting: list[tuple[int, int, int]] = [      # (earliest cycle, -height, index)
        (earliest[j], -height[j], j) for j in range(n) if npreds[j] == 0 and earliest[j] > 0]
    heapq.heapify(waiting)

    def pop(heap: list) -> int:
        h, j = heapq.heappop(heap)
        u = unit_of(j)
        if u is None or not started.get(u):
            return j
        tied = [(h, j)]
        while heap and heap[0][0] == h and unit_of(heap[0][1]) == u:
            tied.append(heapq.heappop(heap))
        best = max(tied, key=lambda item: ((desc[item[1]] & started[u]).bit_count(), -item[1]))
        for item in tied:
            if item is not best:
                heapq.heappush(heap, item)
        return best[1]

    order: list[int] = []
    t = 0
    while ready or waiting:
        while waiting and waiting[0][0] <= t:
            c, h, j = heapq.heappop(waiting)
            u = unit_of(j)
            if u is not None and free_at.get(u, 0) > t:
                heapq.heappush(waiting, (free_at[u], h, j))
            else:
                heapq.heappush(ready, (h, j))
        if not ready:
            t = waiting[0][0]
            continue
        if clock is not None:
            clock[0] = t
        j = pop(ready) if choose is None else choose(ready, waiting, pop)
        if j is None:
            t = waiting[0][0]
            continue
        order.append(j)
        u = unit_of(j)
        if u is not None:
            free_at[u] = t + occupancy[u]
            started[u] = started.get(u, 0) | desc[j] | (1 << j)
            held = [item for item in ready if unit_of(item[1]) == u]
            if held:
                ready[:] = [item for item in ready if unit_of(item[1]) != u]
                heapq.heapify(ready)
                for h, k in held:
                    heapq.heappush(waiting, (free_at[u], h, k))
        t += 1
        if issued is not None:
            issued(j)
        for k, latency in succs[j]:
            earliest[k] = max(earliest[k], t - 1 + latency)
            npreds[k] -= 1
            if npreds[k] == 0:
                heapq.heappush(waiting, (earliest[k], -height[k], k))
    return order
