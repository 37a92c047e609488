"""Register allocation by graph colouring (Chaitin–Briggs, optimistic) over the machine IR.

Nodes are virtual registers; two interfere when one is defined while the other is live
(a copy's source excepted, so copies can share a register). Register classes: `R` with
widths 1, 2 (even-aligned pair) and 4 (4-aligned quad), and `P` (P0–P6). Colouring is
biased: a node takes the register of an already coloured copy partner when it can, which
removes most of the copies phi elimination and two-address sequences leave.

Liveness treats a write of one part of a wide register, and a guarded write, as a use and a
def (the rest of the register, or its value where the guard is false, stays live); an
`IMPLICIT_DEF` starts such a register's live range. Iteration orders are lists and vreg ids,
never sets of objects, so allocations are identical across runs.

Spilling is not implemented: running out of registers is a CompileError.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from ptx2sass.errors import CompileError
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VOp, register_operands

# Registers the allocator may hand out, per class. R1 is the stack pointer (ptxas
# initialises it in every kernel); RZ (R255) and PT (P7) are constants.
R_LIMIT = 255
P_REGS = list(range(7))


@dataclass
class Allocation:
    color: dict[int, int]          # vreg id -> first physical register index
    max_r: int                     # highest R index written or read (-1: none)


def _use_def(ins: MInstr) -> tuple[list[int], list[int]]:
    """Virtual registers read (for liveness) and killed (fully written) by `ins`."""
    uses, kills = [], []
    guarded = ins.guard is not None
    for _, op, is_def in register_operands(ins):
        rid = op.reg.id
        if is_def:
            if op.part is not None or guarded:
                uses.append(rid)
            if op.part is None and not guarded:
                kills.append(rid)
        else:
            uses.append(rid)
    return uses, kills


def liveness(mf: MFunction) -> dict[int, set[int]]:
    """Live-out vreg ids per block (keyed by block index)."""
    n = len(mf.blocks)
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    gen, kill = [set() for _ in range(n)], [set() for _ in range(n)]
    for i, b in enumerate(mf.blocks):
        for ins in reversed(b.instrs):
            uses, kills = _use_def(ins)
            for k in kills:
                gen[i].discard(k)
                kill[i].add(k)
            gen[i].update(uses)
    live_in = [set() for _ in range(n)]
    live_out = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            b = mf.blocks[i]
            out = set()
            for s in b.succs:
                out |= live_in[index[id(s)]]
            inn = gen[i] | (out - kill[i])
            if out != live_out[i] or inn != live_in[i]:
                live_out[i], live_in[i] = out, inn
                changed = True
    return {i: live_out[i] for i in range(n)}


def interference(mf: MFunction):
    live_out = liveness(mf)
    edges: dict[int, set[int]] = {v.id: set() for v in mf.vregs}
    moves: dict[int, list[int]] = {v.id: [] for v in mf.vregs}

    def add(a: int, b: int) -> None:
        if a != b and mf.vregs[a].cls == mf.vregs[b].cls:
            edges[a].add(b)
            edges[b].add(a)

    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        for ins in reversed(b.instrs):
            uses, kills = _use_def(ins)
            defs = [op.reg.id for _, op, d in register_operands(ins) if d]
            copy_src = None
            if ins.opcode == COPY and isinstance(ins.operands[1], VOp):
                copy_src = ins.operands[1].reg.id
                dst = ins.operands[0].reg.id
                if ins.operands[0].part is None and ins.operands[1].part is None:
                    moves[dst].append(copy_src)
                    moves[copy_src].append(dst)
            for d in defs:
                for lv in sorted(live):
                    if lv != copy_src or ins.operands[0].part is not None or ins.operands[1].part is not None:
                        add(d, lv)
                for d2 in defs:
                    add(d, d2)
            for k in kills:
                live.discard(k)
            live.update(uses)
        # Values live into the entry block are read before any write (PTX undefined
        # registers): they still need registers of their own.
        if i == 0:
            for a in sorted(live):
                for c in sorted(live):
                    add(a, c)
    return edges, moves


def color(mf: MFunction, edges, moves, reserved_r=(1,)) -> dict[int, int]:
    vregs = mf.vregs
    present = vregs
    # Simplify: repeatedly take the node of least (weighted) degree; with ~250 registers
    # this is plain Chaitin order, and the optimistic select below handles the rest.
    degree = {v.id: sum(vregs[n].width for n in edges[v.id]) for v in present}
    removed: set[int] = set()
    stack: list[int] = []
    heap = [(degree[v.id], v.id) for v in present]
    heapq.heapify(heap)
    while heap:
        deg, vid = heapq.heappop(heap)
        if vid in removed or deg != degree[vid]:
            continue
        removed.add(vid)
        stack.append(vid)
        for n in sorted(edges[vid]):
            if n not in removed:
                degree[n] -= vregs[vid].width
                heapq.heappush(heap, (degree[n], n))
    colors: dict[int, int] = {}
    for vid in reversed(stack):
        v = vregs[vid]
        taken: set[int] = set()
        for n in edges[vid]:
            if n in colors:
                taken.update(range(colors[n], colors[n] + vregs[n].width))
        def fits(c: int) -> bool:
            if c % v.width:
                return False
            span = range(c, c + v.width)
            if v.cls == "R":
                return all(r not in taken and r not in reserved_r and r < R_LIMIT for r in span)
            return all(r not in taken and r in P_REGS for r in span)
        choice = None
        for partner in moves[vid]:
            c = colors.get(partner)
            if c is not None and vregs[partner].width == v.width and fits(c):
                choice = c
                break
        if choice is None:
            limit = R_LIMIT if v.cls == "R" else len(P_REGS)
            choice = next((c for c in range(0, limit, v.width) if fits(c)), None)
        if choice is None:
            kind = "predicate" if v.cls == "P" else "general"
            raise CompileError(f"function {mf.name}: out of {kind} registers "
                               f"(spilling is not supported yet)")
        colors[vid] = choice
    return colors


def allocate(mf: MFunction) -> Allocation:
    edges, moves = interference(mf)
    colors = color(mf, edges, moves)
    max_r = -1
    for b in mf.blocks:
        for ins in b.instrs:
            if ins.opcode == IMPLICIT_DEF:
                continue
            for _, op, _ in register_operands(ins):
                if op.reg.cls == "R":
                    c = colors[op.reg.id] + (op.part or 0)
                    max_r = max(max_r, c + op.width - 1)
    return Allocation(colors, max_r)


def verify(mf: MFunction, colors: dict[int, int]) -> None:
    """Check an allocation against liveness: wherever a register is written, no other value
    live across that write may share any of its physical registers (a copy's source
    excepted when the copy is a whole-register move). Raises AssertionError naming the
    first conflict; a compiler bug, never a user error."""
    live_out = liveness(mf)

    def span(vid: int) -> set[tuple[str, int]]:
        v = mf.vregs[vid]
        return {(v.cls, colors[vid] + k) for k in range(v.width)}

    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        for ins in reversed(b.instrs):
            uses, kills = _use_def(ins)
            defs = [op.reg.id for _, op, d in register_operands(ins) if d]
            exempt = None
            if (ins.opcode == COPY and isinstance(ins.operands[1], VOp)
                    and ins.operands[0].part is None and ins.operands[1].part is None):
                exempt = ins.operands[1].reg.id
            for d in defs:
                for lv in sorted(live):
                    if lv != d and lv != exempt and span(d) & span(lv):
                        raise AssertionError(f"{mf.name}/{b.name}: {ins!r} overwrites "
                                             f"{mf.vregs[lv]!r}, live in the same register")
            for k in kills:
                live.discard(k)
            live.update(uses)
