"""The SM-level issue model: replays the emulator's per-warp instruction trace on a named
GPU's SMs.

A launch's CTAs go round-robin to the GPU's SMs; each SM keeps as many resident as the
occupancy allows and starts the next when one finishes. An SM's warps are spread over its
sub-partitions (warp slot mod 4); every cycle each sub-partition issues at most one
instruction, from the warp it issued last if that one is ready, else the oldest ready one
(greedy-then-oldest). An instruction is ready when the registers it reads (and writes) are
ready and its pipe is free: a pipe of N results per clock per SM takes 32 / (N / 4) cycles
of its sub-partition per warp instruction. Results are ready after the pipe's latency
(gpus.json), memory results after the latency of the level that served them: L1 (per SM,
the unified array less the shared carveout), L2 (GPU-wide), DRAM. The load/store unit
takes one wavefront per cycle per SM: one per 128-byte line a global access touches, or per
shared-memory conflict degree (32 banks of 4 bytes; lanes reading the same word share it).
A CTA ends when its warps have exited and their stores and reductions have reached the
level that serves them. The launch takes as long as its slowest SM, and no less than its
DRAM and L2 traffic needs at the GPU's bandwidths.

Not modelled (yet): instruction fetch, register-bank conflicts, L2 partitions and their
near/far latency, TLBs, DRAM page effects, clusters, async copies' overlap."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ptx2sass.fences import ORDERING_OPCODES, is_acquire_invalidation

from .caches import Cache
from .facts import SmFacts, facts_for
from .occupancy import Occupancy, occupancy
from .trace import CtaTrace

_BYPASS_L1 = {"CG", "CV", "STRONG", "VOLATILE"}
_ATOMIC = {"ATOMG", "ATOM", "RED", "REDG", "ATOMS"}
# An acquire access (a `.STRONG` load or atomic with a result) is followed by CCTL.IVALL
# (`ptx2sass.fences`), which waits for the access's result (its scoreboard, in ptxas's control
# codes and ours: `sched.control`), so that no later load is served from L1 before it; a
# fence's invalidation (after MEMBAR/ERRBAR) has no access of its own to wait for.
# Opcodes with a latency of their own rather than their pipe's (gpus.json "latency" key):
# a special-register read goes through the variable-latency (MIO) path, not the branch unit.
_OWN_LATENCY = {"S2R": "s2r", "S2UR": "s2r"}
_TENSOR_SHAPE = {"16816": 2048, "1688": 1024, "884": 256, "8816": 1024, "8832": 2048, "16832": 4096,
                 "16864": 8192, "884.F64": 256}


@dataclass
class Estimate:
    cycles: int
    occupancy: Occupancy
    facts: SmFacts
    sm_cycles: int = 0
    dram_bound: int = 0
    l2_bound: int = 0
    instructions: int = 0
    l1_hits: int = 0
    l2_hits: int = 0
    dram_lines: int = 0
    shared_wavefronts: int = 0
    sms_used: int = 0
    pipe_results: dict = field(default_factory=dict)     # pipe -> lane results issued

    @property
    def microseconds(self) -> float:
        return self.cycles / self.facts.clock_mhz


@dataclass(eq=False)           # a warp is itself: `remove` must not compare traces
class _Warp:
    ops: list
    cta: "_Cta"
    sp: int
    age: int
    i: int = 0
    next_t: float = 0.0
    at_barrier: bool = False
    ready: dict = field(default_factory=dict)
    drain: float = 0.0          # when its last store/reduction has reached its level
    acquire: float = 0.0        # when its last strong access's result arrives (no fence since)

    @property
    def done(self) -> bool:
        return self.i >= len(self.ops)


@dataclass(eq=False)
class _Cta:
    warps: list
    start: float = 0.0


class _Memory:
    """The caches and traffic counters one launch shares."""

    def __init__(self, facts: SmFacts, l1_bytes: int):
        m = facts.memory
        self.m = m
        self.l2 = Cache(m["l2_bytes"], m["line"], m["l2_ways"])
        self.l1_bytes = l1_bytes
        self.dram_bytes = 0
        self.l2_bytes = 0
        self.dram_lines = 0
        self.shared_wavefronts = 0
        self.l1s: list[Cache] = []

    def new_l1(self) -> Cache:
        cache = Cache(max(self.l1_bytes, self.m["line"]), self.m["line"], self.m["l1_ways"])
        self.l1s.append(cache)
        return cache

    def global_access(self, l1: Cache, op) -> tuple[int, int]:
        """(latency, wavefronts) of a global access."""
        m = self.m
        line, sector = m["line"], m["sector"]
        a = op.addresses
        if a is None or len(a) == 0:
            return m["l1_latency"], 1
        ends = a + max(op.size, 1) - 1
        lines = np.unique(np.concatenate([a // line, ends // line]))
        sectors = np.unique(np.concatenate([a // sector, ends // sector]))
        per_line = {}
        for s in sectors.tolist():
            per_line[s * sector // line] = per_line.get(s * sector // line, 0) + 1
        store = op.opcode in ("STG", "ST")
        atomic = op.opcode in _ATOMIC
        bypass = store or atomic or bool(_BYPASS_L1.intersection(op.modifiers))
        latency = 0
        for ln in lines.tolist():
            if store or atomic:
                l1.invalidate(ln)
            elif not bypass and l1.lookup(ln):
                latency = max(latency, m["l1_latency"])
                continue
            self.l2_bytes += per_line.get(ln, 1) * sector
            if self.l2.lookup(ln):
                latency = max(latency, m["l2_latency"])
            else:
                self.dram_bytes += per_line.get(ln, 1) * sector
                self.dram_lines += 1
                latency = max(latency, m["dram_latency"])
        return latency + len(lines) - 1, len(lines)

    def shared_access(self, op) -> tuple[int, int]:
        a = op.addresses
        if a is None or len(a) == 0:
            return self.m["shared_latency"], 1
        waves = bank_wavefronts(a, max(op.size, 4))
        self.shared_wavefronts += waves
        return self.m["shared_latency"] + (waves - 1) * self.m["shared_conflict_cycles"], waves


def bank_wavefronts(addresses: np.ndarray, size: int) -> int:
    """Conflict-free passes a warp's shared access needs: 32 banks of 4 bytes, one word
    per bank per pass, lanes reading the same word served together; a wider access is
    split into phases of 128 bytes' worth of lanes."""
    words_per_lane = max(1, size // 4)
    lanes_per_phase = max(1, 32 // words_per_lane)
    total = 0
    for start in range(0, len(addresses), lanes_per_phase):
        phase = addresses[start:start + lanes_per_phase] // 4
        words = np.unique((phase[:, None] + np.arange(words_per_lane)[None, :]).reshape(-1))
        total += int(np.bincount(words % 32, minlength=32).max())
    return max(total, 1)


def _tensor_weight(op) -> float:
    for mod in op.modifiers:
        if mod in _TENSOR_SHAPE:
            return _TENSOR_SHAPE[mod] / 32.0
    return 2048 / 32.0


def _run_sm(ctas: list[CtaTrace], facts: SmFacts, occ: Occupancy, mem: _Memory,
            stats: dict) -> tuple[float, int]:
    pending = deque(ctas)
    sps = facts.sub_partitions
    by_sp: list[list[_Warp]] = [[] for _ in range(sps)]
    last: list[_Warp | None] = [None] * sps
    pipe_free = [dict() for _ in range(sps)]
    lsu_free = 0.0
    l1 = mem.new_l1()
    resident: list[_Cta] = []
    t = 0.0
    slot = 0
    issued_total = 0
    pipe_of = facts.pipe
    issue_cycles = {p: facts.issue_cycles(p) for p in facts.throughput}
    latency = facts.latency
    t_end = [0.0]
    pipe_results = stats.setdefault("pipe_results", {})

    def launch_ctas(now: float):
        nonlocal slot
        while pending and len(resident) < occ.ctas:
            trace = pending.popleft()
            cta = _Cta([], now)
            for ops in trace.warps:
                if not ops:               # a warp that ran nothing (never scheduled)
                    continue
                w = _Warp(ops, cta, slot % sps, slot, next_t=now)
                slot += 1
                cta.warps.append(w)
                by_sp[w.sp].append(w)
            if cta.warps:
                resident.append(cta)

    def release_if_met(cta: _Cta, now: float):
        live = [w for w in cta.warps if not w.done]
        if live and all(w.at_barrier for w in live):
            for w in live:
                w.at_barrier = False
                w.next_t = now + 1

    launch_ctas(0.0)
    while resident:
        issued = False
        next_event = math.inf
        first = int(t) % sps           # the SM's shared units arbitrate round-robin
        for k in range(sps):
            sp = (first + k) % sps
            warps = by_sp[sp]
            if not warps:
                continue
            order = warps if last[sp] is None else [last[sp]] + warps
            for w in order:
                if w.done or w.at_barrier:
                    continue
                op = w.ops[w.i]
                pipe = pipe_of(op.opcode)
                r = w.next_t
                ready = w.ready
                for reg in op.reads:
                    v = ready.get(reg)
                    if v is not None and v > r:
                        r = v
                for reg in op.writes:
                    v = ready.get(reg)
                    if v is not None and v > r:
                        r = v
                if is_acquire_invalidation(op.opcode, op.modifiers) and w.acquire > r:
                    r = w.acquire
                pf = pipe_free[sp].get(pipe, 0.0)
                if pf > r:
                    r = pf
                if pipe == "lsu" and lsu_free > r:
                    r = lsu_free
                if r > t:
                    next_event = min(next_event, r)
                    continue
                # issue
                cost = issue_cycles.get(pipe, 1.0)
                if pipe == "tensor":
                    cost *= _tensor_weight(op)
                    if "F32" in op.modifiers:
                        cost /= facts.tensor_f32_accumulate
                # the load/store unit's limit is the SM's wavefront rate (lsu_free below)
                pipe_free[sp][pipe] = t + (1.0 if pipe == "lsu" else cost)
                pipe_results[pipe] = pipe_results.get(pipe, 0) + op.lanes
                done_at = t + max(latency.get(_OWN_LATENCY.get(op.opcode, pipe), latency.get(pipe, 4)), cost)
                if op.space == "global":
                    lat, waves = mem.global_access(l1, op)
                    lsu_free = max(lsu_free, t) + waves
                    done_at = t + lat
                    if not op.writes:         # a store or reduction: the launch waits for it
                        w.drain = max(w.drain, done_at)
                elif op.space == "shared":
                    lat, waves = mem.shared_access(op)
                    lsu_free = max(lsu_free, t) + waves
                    done_at = t + lat
                elif pipe == "lsu":
                    lsu_free = max(lsu_free, t) + 1
                    done_at = t + mem.m["l1_latency"] if op.writes else t + latency.get("lsu", 4)
                for reg in op.writes:
                    ready[reg] = done_at
                if op.opcode in ORDERING_OPCODES:
                    w.acquire = 0.0
                elif op.space is not None and op.writes and "STRONG" in op.modifiers:
                    w.acquire = done_at
                w.next_t = t + 1
                w.i += 1
                issued_total += 1
                last[sp] = w
                issued = True
                if op.opcode == "BAR" and "ARV" not in op.modifiers and not w.done:
                    w.at_barrier = True
                    release_if_met(w.cta, t)
                if w.done:
                    release_if_met(w.cta, t)
                    if all(x.done for x in w.cta.warps):
                        finish = max([t + 1] + [v for x in w.cta.warps for v in x.ready.values()]
                                     + [x.drain for x in w.cta.warps])
                        resident.remove(w.cta)
                        for x in w.cta.warps:
                            by_sp[x.sp].remove(x)
                            if last[x.sp] is x:
                                last[x.sp] = None
                        t_end[0] = max(t_end[0], finish)
                        launch_ctas(t + 1)
                break
        if issued:
            t += 1
        elif next_event < math.inf:
            t = max(t + 1, math.ceil(next_event))
        elif resident:
            raise RuntimeError("timing model deadlock: every resident warp waits at a barrier")
    return max(t, t_end[0]), issued_total


def simulate(ctas: list[CtaTrace], facts: SmFacts, registers: int, threads_per_cta: int,
             shared_per_cta: int = 0) -> Estimate:
    """Cycles of a launch whose CTAs ran as `ctas` (the recorder's traces), on `facts`'s GPU."""
    occ = occupancy(facts, threads_per_cta, registers, shared_per_cta)
    l1_bytes = facts.unified_l1_kb * 1024 - occ.shared_carveout
    mem = _Memory(facts, l1_bytes)
    per_sm: list[list] = [[] for _ in range(min(facts.sms, max(len(ctas), 1)))]
    for i, cta in enumerate(ctas):
        per_sm[i % len(per_sm)].append(cta)
    worst, total = 0.0, 0
    stats: dict = {}
    for sm_ctas in per_sm:
        if not sm_ctas:
            continue
        cycles, n = _run_sm(sm_ctas, facts, occ, mem, stats)
        worst, total = max(worst, cycles), total + n
    dram = mem.dram_bytes / facts.dram_bytes_per_clk
    l2 = mem.l2_bytes / facts.memory["l2_bytes_per_clk"]
    est = Estimate(int(math.ceil(max(worst, dram, l2))), occ, facts, int(math.ceil(worst)),
                   int(math.ceil(dram)), int(math.ceil(l2)), total)
    est.l1_hits = sum(c.hits for c in mem.l1s)
    est.l2_hits = mem.l2.hits
    est.dram_lines = mem.dram_lines
    est.shared_wavefronts = mem.shared_wavefronts
    est.sms_used = len(per_sm)
    est.pipe_results = stats.get("pipe_results", {})
    return est


def estimate(cubin: bytes, kernel: str | None, grid, block, params: list, *, arch=None,
             dynamic_shared_bytes: int = 0, decoder=None, budget: int | None = None) -> Estimate:
    """Run `kernel` in the functional emulator, recording its trace, and time it on the
    GPU model of `arch` (default: the cubin's)."""
    from ..launch import DEFAULT_BUDGET, run
    result = run(cubin, kernel, grid, block, params, dynamic_shared_bytes=dynamic_shared_bytes,
                 budget=budget or DEFAULT_BUDGET, hazard_check=False, decoder=decoder, trace=True)
    return from_result(result, arch)


def from_result(result, arch=None) -> Estimate:
    """The estimate of a launch run with `trace=True`."""
    rec = result.trace
    prog = rec.launch.program
    facts = facts_for(arch or prog.arch)
    block = rec.launch.block
    threads = block[0] * block[1] * block[2]
    return simulate(rec.ctas, facts, max(prog.regcount, 1), threads,
                    rec.launch.shared_total)
