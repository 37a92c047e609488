"""Cycles a colouring leaves the scheduler after allocation, for choosing between colourings.

Two colourings of one function differ in which values share registers; where a value takes
a register that another value read shortly before, the scheduler after allocation can no
longer move its writer above that read (a false dependence), and loads issued one after
another before allocation end up waiting for each other. The estimate replays that
scheduler on the machine IR as the colouring renames it: each movable region (the
pre-allocation scheduler's: pure arithmetic and memory instructions) in critical-path order
over true, anti and output dependences of physical registers, then the block issued one
instruction per cycle, each waiting for its producers' latencies (the latency table's); a
copy whose two sides share a register is not emitted.
Blocks count by their assumed frequency (`regalloc.loops.block_weights`).
"""
from __future__ import annotations

from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, register_operands
from ptx2sass.sched.latency import LatencyModel, model as latency_model, model_for
from ptx2sass.sched.list_schedule import dependences, issue_order, overwrite_latency
from ptx2sass.sched.pre_schedule import _movable, add_physical, producer_latency
from ptx2sass.regalloc.loops import block_weights


def _footprint(ins: MInstr, colors: dict[int, int], cls: dict[int, str]) -> tuple[list, list]:
    """(registers read, registers written) as (file, index) under `colors`; a guarded or
    partial write reads its register too (what it does not write stays)."""
    reads, writes = [], []
    for _, op, is_def in register_operands(ins):
        c = colors.get(op.reg.id)
        if c is None:
            continue
        f = cls[op.reg.id]
        keys = [(f, c + (op.part or 0) + k) for k in range(op.width)]
        if is_def:
            writes.extend(keys)
            if ins.guard is not None:
                reads.extend(keys)
        else:
            reads.extend(keys)
    add_physical(ins, reads, writes)
    return reads, writes


def _region_order(region: list[tuple[MInstr, list, list]], lat: LatencyModel) -> list[int]:
    def latency(i: int, j: int, r: tuple) -> int:
        return producer_latency(region[i][0], region[j][0], r[0], lat)
    succs, npreds = dependences([ins for ins, _, _ in region], [(r, w) for _, r, w in region], latency,
                                lambda i: overwrite_latency(region[i][0], lat))
    n = len(region)
    height = [0] * n
    for i in range(n - 1, -1, -1):
        height[i] = max((l + height[j] for j, l in succs[i]), default=1)
    return issue_order(succs, npreds, height)


def _block_cycles(instrs: list[MInstr], colors: dict[int, int], cls: dict[int, str],
                  lat: LatencyModel) -> int:
    order: list[tuple[MInstr, list, list]] = []
    region: list[tuple[MInstr, list, list]] = []

    def flush() -> None:
        if len(region) > 1:
            order.extend(region[k] for k in _region_order(region, lat))
        else:
            order.extend(region)
        region.clear()

    for ins in instrs:
        if ins.opcode == IMPLICIT_DEF:
            continue
        item = (ins, *_footprint(ins, colors, cls))
        if ins.opcode == COPY and ins.guard is None and item[1] == item[2]:
            continue                      # coalesced by the colouring: nothing is emitted
        if _movable(ins):
            region.append(item)
        else:
            flush()
            order.append(item)
    flush()
    ready: dict = {}                      # register -> (cycle its value is ready, writer)
    t = 0
    for ins, reads, writes in order:
        start = t + 1
        for r in reads:
            w = ready.get(r)
            if w is not None:
                start = max(start, w[0] + producer_latency(w[1], ins, r[0], lat))
        t = start
        for r in writes:
            ready[r] = (t, ins)
    return t


def estimated_cycles(mf: MFunction, colors: dict[int, int]) -> int:
    """Weighted cycles of every block under `colors` (see the module's docstring)."""
    lat = model_for(mf.target) if mf.target is not None else latency_model("ampere")
    cls = {v.id: v.cls for v in mf.vregs}
    return sum(w * _block_cycles(b.instrs, colors, cls, lat)
               for b, w in zip(mf.blocks, block_weights(mf)))
