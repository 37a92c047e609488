"""List scheduling before register allocation, over virtual registers.

The scheduler after allocation (`sched.list_schedule`) can only reorder what the registers
allow: once the allocator has given the address and the result of one unrolled iteration's
load the same registers as the next one's, the loads stay one after another, each waiting
for the last. Before allocation the only dependences are the true ones, so the same critical
path ordering issues every independent load first and lets them overlap (what ptxas's code
does for an unrolled reduction).

The regions and what may move are those of `sched.list_schedule` (pure arithmetic and memory
instructions; memory instructions keep their order; anything else is a boundary), plus the
selector's COPY and IMPLICIT_DEF. A partial or guarded write reads the register too. Because
issuing early lengthens live ranges, a block keeps its new order only while its register
pressure stays within PRESSURE_LIMIT or the pressure it had, and its predicates within the
seven the file has (or what it needed before).
"""
from __future__ import annotations

import heapq

from ptx2sass.encoder.model import Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, register_operands
from ptx2sass.regalloc.liveness import liveness, use_def
from ptx2sass.sched import latency as lat
from ptx2sass.sched.list_schedule import MEMORY, PURE

PRESSURE_LIMIT = 64          # 32-bit registers live at once that scheduling may reach
PREDICATE_LIMIT = 6          # predicates (P0-P6; beyond, the allocator recomputes compares)


def _movable(ins: MInstr) -> bool:
    if ins.clobbers or ins.shown is not None:
        return False
    return ins.opcode in PURE or ins.opcode in MEMORY or ins.opcode in (COPY, IMPLICIT_DEF)


def _footprint(ins: MInstr) -> tuple[list, list]:
    """(keys read, keys written): vreg ids, and physical registers as (file, index)."""
    reads, writes = [], []
    for _, op, is_def in register_operands(ins):
        if is_def:
            writes.append(op.reg.id)
            if op.part is not None or ins.guard is not None:
                reads.append(op.reg.id)
        else:
            reads.append(op.reg.id)
    for i, op in enumerate(ins.operands):
        if isinstance(op, Reg) and not op.is_zero and not (op.file == "P" and op.index == 7):
            (writes if i < ins.ndefs else reads).append((op.file, op.index))
    if isinstance(ins.guard, Reg):
        reads.append((ins.guard.file, ins.guard.index))
    return reads, writes


def _latency(producer: MInstr, reader: MInstr, file: str) -> int:
    op = "MOV" if producer.opcode == COPY else producer.opcode
    if producer.opcode == IMPLICIT_DEF:
        return 0
    if lat.is_variable(op):
        return lat.variable_latency(op)
    rd = "MOV" if reader.opcode == COPY else reader.opcode
    return lat.read_latency(op, producer.modifiers, file, rd, False)


def _schedule_region(region: list[MInstr], vfile: dict[int, str],
                     live_after: set[int] = frozenset(), live_in: set[int] = frozenset()) -> list[MInstr]:
    n = len(region)
    if n < 3:
        return region
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    npreds = [0] * n
    last_write: dict = {}
    reads_since: dict = {}
    last_memory = -1

    def edge(a: int, b: int, latency: int) -> None:
        succs[a].append((b, latency))
        npreds[b] += 1

    for j, ins in enumerate(region):
        reads, writes = _footprint(ins)
        for r in reads:
            if r in last_write:
                i = last_write[r]
                file = vfile.get(r, "R") if isinstance(r, int) else r[0]
                edge(i, j, _latency(region[i], ins, file))
        for r in writes:
            for i in reads_since.get(r, ()):
                if i != j:
                    edge(i, j, 1)
            if r in last_write and last_write[r] != j:
                edge(last_write[r], j, 1)
        for r in reads:
            reads_since.setdefault(r, []).append(j)
        for r in writes:
            last_write[r] = j
            reads_since[r] = []
        if ins.opcode in MEMORY:
            if last_memory >= 0:
                edge(last_memory, j, 1)
            last_memory = j
    height = [0] * n
    for i in range(n - 1, -1, -1):
        height[i] = max((l + height[j] for j, l in succs[i]), default=1)
    for i, ins in enumerate(region):
        # a copy goes as soon as its source is ready: its two sides then do not overlap
        # and the allocator can still give them one register
        if ins.opcode in (COPY, IMPLICIT_DEF):
            height[i] = 1 << 20
    # Predicates: at most PREDICATE_LIMIT live at once where the order allows; a compare
    # waits while the file is full and something else is ready.
    pdefs = [[op.reg.id for _, op, d in register_operands(ins) if d and op.reg.cls == "P"]
             for ins in region]
    readers: dict[int, int] = {}
    for ins in region:
        for _, op, d in register_operands(ins):
            if not d and op.reg.cls == "P":
                readers[op.reg.id] = readers.get(op.reg.id, 0) + 1
    live_p: set[int] = set()
    # predicates live through the region take their registers for all of it
    limit = max(1, PREDICATE_LIMIT - sum(1 for v in live_in & live_after if vfile.get(v) == "P"))
    earliest = [0] * n
    ready = [(-height[j], j) for j in range(n) if npreds[j] == 0]
    heapq.heapify(ready)
    waiting: list[tuple[int, int, int]] = []
    order: list[int] = []
    t = 0
    while ready or waiting:
        while waiting and waiting[0][0] <= t:
            _, h, j = heapq.heappop(waiting)
            heapq.heappush(ready, (h, j))
        if not ready:
            t = waiting[0][0]
            continue
        if len(live_p) >= limit:
            others = [item for item in ready if not pdefs[item[1]]]
            if not others and waiting:
                # only compares are ready: wait for something else rather than fill the file
                t = max(t, waiting[0][0])
                while waiting and waiting[0][0] <= t:
                    _, h, k = heapq.heappop(waiting)
                    heapq.heappush(ready, (h, k))
                continue
            if others:
                best = min(others)
                ready.remove(best)
                heapq.heapify(ready)
                j = best[1]
            else:
                _, j = heapq.heappop(ready)
        else:
            _, j = heapq.heappop(ready)
        order.append(j)
        t += 1
        for _, op, d in register_operands(region[j]):
            if not d and op.reg.cls == "P" and op.reg.id in readers:
                readers[op.reg.id] -= 1
                if readers[op.reg.id] == 0 and op.reg.id not in live_after:
                    live_p.discard(op.reg.id)
        for v in pdefs[j]:
            if readers.get(v, 0) > 0 or v in live_after:
                live_p.add(v)
        for k, l in succs[j]:
            earliest[k] = max(earliest[k], t - 1 + l)
            npreds[k] -= 1
            if npreds[k] == 0:
                heapq.heappush(waiting, (earliest[k], -height[k], k))
    return [region[j] for j in order]


def _pressure(instrs: list[MInstr], live_out: set[int], width: dict[int, int]) -> int:
    live = {v for v in live_out if v in width}
    cur = sum(width[v] for v in live)
    peak = cur
    for ins in reversed(instrs):
        uses, kills = use_def(ins)
        for k in kills:
            if k in live:
                live.discard(k)
                cur -= width[k]
        for u in uses:
            if u in width and u not in live:
                live.add(u)
                cur += width[u]
        peak = max(peak, cur)
    return peak


def pre_schedule(mf: MFunction) -> int:
    """Reorder each block's movable regions; returns the number of blocks reordered."""
    vfile = {v.id: v.cls for v in mf.vregs}
    width = {v.id: v.width for v in mf.vregs if v.cls == "R"}
    preds = {v.id: 1 for v in mf.vregs if v.cls == "P"}
    live_out = liveness(mf)
    changed = 0
    for bi, b in enumerate(mf.blocks):
        # live_before[k]: registers live just before instruction k of the block
        live = set(live_out[bi])
        live_before = [set()] * (len(b.instrs) + 1)
        live_before[len(b.instrs)] = set(live)
        for k in range(len(b.instrs) - 1, -1, -1):
            uses, kills = use_def(b.instrs[k])
            live.difference_update(kills)
            live.update(uses)
            live_before[k] = set(live)
        out: list[MInstr] = []
        region: list[MInstr] = []
        start = 0
        for k, ins in enumerate(b.instrs):
            if _movable(ins):
                if not region:
                    start = k
                region.append(ins)
                continue
            out.extend(_schedule_region(region, vfile, live_before[k], live_before[start]))
            region = []
            out.append(ins)
        out.extend(_schedule_region(region, vfile, live_before[len(b.instrs)], live_before[start]))
        if out == b.instrs:
            continue
        before = _pressure(b.instrs, live_out[bi], width)
        after = _pressure(out, live_out[bi], width)
        p_before = _pressure(b.instrs, live_out[bi], preds)
        p_after = _pressure(out, live_out[bi], preds)
        if after <= max(before, PRESSURE_LIMIT) and p_after <= max(p_before, PREDICATE_LIMIT):
            b.instrs = out
            changed += 1
    return changed
