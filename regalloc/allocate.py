"""Register allocation by graph colouring (Chaitin–Briggs, optimistic) over the machine IR.

Nodes are virtual registers; two interfere when one is defined while the other is live
(a copy's source excepted, so copies can share a register). Register classes: `R` with
widths 1, 2 (even-aligned pair) and 4 (4-aligned quad), and `P` (P0–P6). Colouring is
biased: a node takes the register of an already coloured copy partner when it can, which
removes most of the copies phi elimination and two-address sequences leave.

Liveness (`regalloc.liveness`) treats a write of one part of a wide register, and a guarded
write, as a use and a def; an `IMPLICIT_DEF` starts such a register's live range. Iteration
orders are lists and vreg ids, never sets of objects, so allocations are identical across
runs.

When a class runs out, simplification removes the node of least spill cost per unit of
degree (cost: its reads and writes weighted by loop depth, `regalloc.loops`), select
colours optimistically, and whatever stays uncoloured is spilled (`regalloc.spill`) and the
whole allocation runs again. Predicates first try recomputing their compares
(`regalloc.remat_predicates`). Before the first colouring, copies are coalesced
conservatively (`regalloc.coalesce`), after scalars copied from or into one part of a
wide register have been renamed to that part (`regalloc.coalesce_parts`).

Calls add two constraints (`ptx2sass.abi`): virtual registers precoloured to the
convention's registers (`MFunction.precolored`, seeded before colouring, never spilled
and never coalesced), and registers a call clobbers, which values live across it avoid
(`regalloc.constraints`).
"""
from __future__ import annotations

import heapq
from dataclasses import field

from ptx2sass.records import dataclass
from ptx2sass.errors import CompileError
from ptx2sass.frame import Frame
from ptx2sass.encoder.model import Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, VOp, register_operands
from ptx2sass.regalloc.coalesce import coalesce
from ptx2sass.regalloc.coalesce_parts import coalesce_parts
from ptx2sass.regalloc.colouring_cycles import estimated_cycles
from ptx2sass.regalloc.constraints import forbidden_registers
from ptx2sass.regalloc.liveness import (UNIT_BITS, fresh_writes, unit_liveness,
                                        unit_use_def, use_def)
from ptx2sass.regalloc.loops import block_weights
from ptx2sass.regalloc.prespill import prespill
from ptx2sass.regalloc.remat_predicates import rematerialise_predicates
from ptx2sass.regalloc.spill import Spiller, SpillStats

# Registers the allocator may hand out, per class. R1 is the stack pointer (ptxas
# initialises it in every kernel); RZ (R255) and PT (P7) are constants.
REGISTER_FILE = 255          # registers a thread may use on sm_8x (ptxas's archmax)
REGISTERS_RESERVED = 2       # ptxas counts the highest register + 1 + 2
# How much longer than the other colouring's the wide-first one's estimated cycles may be
# and still be taken for its fewer registers: the estimate (`colouring_cycles`) replays the
# scheduler with the latency table's fixed latencies, so differences of a few percent are
# within its error (the 16-value reduction: 158 vs 157 estimated, 208 vs 256 emulated), a
# register reuse that serialises an unrolled loop's loads is not (2475 vs 1975).
CYCLE_MARGIN = 1.05
R_LIMIT = REGISTER_FILE - REGISTERS_RESERVED     # R0..R252
STACK_POINTER = 1
P_REGS = list(range(7))
MAX_ROUNDS = 24              # colour / spill rounds before giving up
_RZ = Reg("R", 255)


@dataclass
class Allocation:
    color: dict[int, int]          # vreg id -> first physical register index
    max_r: int                     # highest R index written or read (-1: none)
    spills: SpillStats = field(default_factory=SpillStats)


_use_def = use_def     # the name other modules imported before liveness had its own module


def move_source(ins) -> VOp | None:
    """A register copy: COPY, or a plain unguarded `MOV d, s` between virtual registers (the
    selector's move out of S2R and the like), whose two sides may share a register."""
    if ins.opcode == COPY:
        return ins.operands[1] if isinstance(ins.operands[1], VOp) else None
    if ins.guard is not None or ins.ndefs != 1 or not isinstance(ins.operands[0], VOp):
        return None
    if ins.opcode == "MOV" and not ins.modifiers and len(ins.operands) == 2:
        src = ins.operands[1]
    elif (ins.opcode == "IMAD" and ins.modifiers == ("MOV", "U32") and len(ins.operands) == 4
          and ins.operands[1] == _RZ and ins.operands[2] == _RZ):
        src = ins.operands[3]
    else:
        return None
    plain = isinstance(src, VOp) and not (src.neg or src.abs or src.inv or src.suffix)
    return src if plain else None


def interference(mf: MFunction):
    """(vreg id -> the vreg ids it interferes with, vreg id -> its copy partners)."""
    edges, moves, _, _ = interference_parts(mf)
    return edges, moves


def _full_mask(wa: int, wb: int) -> int:
    return sum(1 << (i << UNIT_BITS | j) for i in range(wa) for j in range(wb))


def interference_parts(mf: MFunction, soft: set[tuple[int, int]] | None = None):
    """`interference`'s two maps and the parts that interfere: (a, b) -> a mask with bit
    `i << UNIT_BITS | j` set when part i of a and part j of b must not share a register,
    for every edge where a or b is wide (an edge between two single registers is always
    i = j = 0). Liveness is per part (`liveness.unit_liveness`), so a wide register
    interferes only where its parts are live. Fourth: vreg id -> [(vreg id, offset)], a
    single register written by an instruction that reads the last of a wide one's part
    prefers that part's register (`FADD R16, R20, R16` into a dying quad), and the wide
    one the place that gives it. `soft`, where given, receives the (d, v) pairs of the rule
    below whose own parts never meet (same width, no part i of one live where part i of the
    other is written): only the IMPLICIT_DEF keeps them apart (`regalloc.coalesce`)."""
    fresh = fresh_writes(mf)
    found: dict[int, list] = {}          # block index -> unit_use_def of its instructions, last first
    live_out = unit_liveness(mf, fresh, found)
    edges: dict[int, set[int]] = {v.id: set() for v in mf.vregs}
    moves: dict[int, list[int]] = {v.id: [] for v in mf.vregs}
    parts: dict[tuple[int, int], int] = {}
    prefs: dict[int, list[tuple[int, int]]] = {}
    cls = [v.cls for v in mf.vregs]
    width = [v.width for v in mf.vregs]
    low = (1 << UNIT_BITS) - 1
    # the sets hold these int objects, one per vreg, not a new int per edge (`u >> UNIT_BITS`
    # makes a fresh 32-byte object each time: 5 MB of the graph at 300 nested loops)
    vid = list(range(len(mf.vregs)))

    def add(a: int, b: int) -> None:
        if a != b and cls[a] == cls[b]:
            edges[a].add(b)
            edges[b].add(a)
            if width[a] > 1 or width[b] > 1:
                parts[(a, b)] = parts.get((a, b), 0) | _full_mask(width[a], width[b])
                parts[(b, a)] = parts.get((b, a), 0) | _full_mask(width[b], width[a])

    live_at_start: dict[int, set[int]] = {}     # vreg -> vregs live at its IMPLICIT_DEF
    for i, b in enumerate(mf.blocks):
        live = live_out.pop(i)      # this call's own sets: each freed once its block is done
        for ins, (uses, kills, dunits) in zip(reversed(b.instrs), found.pop(i)):
            if ins.opcode == IMPLICIT_DEF:
                # writes nothing: only the parts read before any write need a register
                dunits = [u for u in dunits if u in live]
                for op in ins.operands:
                    if isinstance(op, VOp):
                        live_at_start.setdefault(op.reg.id, set()).update(vid[u >> UNIT_BITS] for u in live)
            copy_src = None
            src = move_source(ins)
            if src is not None:
                copy_src = src.reg.id
                dst = ins.operands[0].reg.id
                if ins.operands[0].part is None and src.part is None:
                    moves[dst].append(copy_src)
                    moves[copy_src].append(dst)
                else:
                    copy_src = None          # a part copy: source and result interfere
            if dunits:
                # (`live` in its own order: what the loop below adds to sets and to `parts`
                # does not depend on the order, and every reader of them is order-free)
                written: dict[int, list[int]] = {}
                for u in dunits:
                    written.setdefault(vid[u >> UNIT_BITS], []).append(u & low)
                for d, dparts in written.items():
                    # the hottest loop of allocation: edges with every live unit, inlined
                    mine, c, wide = edges[d], cls[d], width[d] > 1
                    for lu in live:
                        lv = vid[lu >> UNIT_BITS]
                        if lv == d or lv == copy_src or cls[lv] != c:
                            continue
                        mine.add(lv)
                        edges[lv].add(d)
                        if wide or width[lv] > 1:
                            j = lu & low
                            m = t = 0
                            for k in dparts:
                                m |= 1 << (k << UNIT_BITS | j)
                                t |= 1 << (j << UNIT_BITS | k)
                            parts[(d, lv)] = parts.get((d, lv), 0) | m
                            parts[(lv, d)] = parts.get((lv, d), 0) | t
                for d in written:
                    for d2 in written:
                        add(d, d2)
                for d, dparts in written.items():
                    if width[d] == 1 and cls[d] == "R":
                        for u in uses:
                            q = u >> UNIT_BITS
                            if width[q] > 1 and q != d and u not in live and cls[q] == "R":
                                prefs.setdefault(d, []).append((q, u & low))
                                prefs.setdefault(q, []).append((d, -(u & low)))
            live.difference_update(kills)
            live.update(uses)
        # Values live into the entry block are read before any write (PTX undefined
        # registers): they still need registers of their own.
        if i == 0:
            entry = sorted({u >> UNIT_BITS for u in live})
            for a in entry:
                for c in entry:
                    add(a, c)
    # A value started by an IMPLICIT_DEF where a value it is copy-related to (through any
    # chain of copies) is live may not be merged with it: a loop's `mul.lo.s64 %d, %d, %e`
    # builds the result in parts while the phi's parts are still read, and the result is
    # copied back into the phi; merged, the IMPLICIT_DEF would end the phi's live range
    # before its last read (fuzz 25000108 on sm_90: the loop-invariant high word took the
    # phi's high register).
    if live_at_start:
        component = _copy_components(moves)
        rule = [(d, v) for d, live_there in live_at_start.items() for v in sorted(live_there)
                if v != d and component.get(v) == component.get(d) is not None]
        if soft is not None:
            soft.update((d, v) for d, v in rule if width[d] == width[v] > 1
                        and not parts.get((d, v), 0) & _diagonal(width[d]))
        for d, v in rule:
            add(d, v)
    return edges, moves, parts, prefs


def _diagonal(w: int) -> int:
    """The parts mask of part i against part i, for every i < w."""
    return sum(1 << (i << UNIT_BITS | i) for i in range(w))


def _copy_components(moves: dict[int, list[int]]) -> dict[int, int]:
    """vreg id -> a representative of the vregs joined to it by copies."""
    component: dict[int, int] = {}
    for start, partners in moves.items():
        if start in component or not partners:
            continue
        component[start] = start
        todo = [start]
        while todo:
            v = todo.pop()
            for w in moves[v]:
                if w not in component:
                    component[w] = start
                    todo.append(w)
    return component


def registers_of(r_limit: int = R_LIMIT) -> dict[str, list[int]]:
    """The physical registers each class may take: R0..R(r_limit-1) but the stack pointer,
    and P0..P6."""
    return {"R": [r for r in range(r_limit) if r != STACK_POINTER], "P": list(P_REGS)}


def present_vregs(mf: MFunction) -> list[int]:
    """Ids of the virtual registers the code names, ascending."""
    seen = set()
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, _ in register_operands(ins):
                seen.add(op.reg.id)
    return sorted(seen)


def spill_costs(mf: MFunction, unspillable: set[int] = frozenset()) -> dict[int, float]:
    """vreg id -> how much spilling it would cost: each read or write weighted by how often
    its block runs; infinite for registers that spilling itself created."""
    weights = block_weights(mf)
    cost: dict[int, float] = {}
    for bi, b in enumerate(mf.blocks):
        w = weights[bi]
        for ins in b.instrs:
            for _, op, _ in register_operands(ins):
                cost[op.reg.id] = cost.get(op.reg.id, 0) + w
    for vid in list(unspillable) + list(mf.precolored):
        cost[vid] = float("inf")
    return cost


def alignment(w: int) -> int:
    """Where a group of `w` registers may start: pairs and quads at multiples of their
    width, wider groups (warpgroup MMA accumulators, up to 128 registers) at multiples of 8
    (ptxas 13.5 puts every HGMMA accumulator at R24)."""
    return w if w <= 4 else 8


def aligned_places(allowed: list[int], w: int) -> int:
    """How many aligned groups of `w` registers the class offers."""
    allowed_set = set(allowed)
    return sum(1 for c in allowed if c % alignment(w) == 0 and all(r in allowed_set for r in range(c, c + w)))


def _simplify(nodes: list[int], edges, width, allowed: list[int], cost) -> list[int]:
    """Chaitin–Briggs simplification of one class: the order to colour in (reversed).
    A node is trivially colourable when its neighbours cannot block every aligned place
    it could take (a neighbour blocks at most max(1, its width / this width) of them; for
    single registers this is degree < registers); those go first, least pressure first.
    When none is left, the next node removed (optimistically: it may still find a colour)
    is the one of least spill cost per unit of pressure, or without costs (None) the one
    of least pressure. Heap entries are (key, vreg id) tuples, so the order never depends
    on set iteration."""
    places = {w: aligned_places(allowed, w) for w in sorted({width[v] for v in nodes})}

    def blocks(n: int, v: int) -> int:
        return max(1, width[n] // width[v])
    # sum(blocks(n, v) for n in edges[v]); for a single register, the neighbours' widths:
    # their count plus what the wide ones add (a set intersection, not a lookup per edge)
    wide = {n for n, w in width.items() if w > 1}
    pressure = {v: (len(edges[v]) + sum(width[n] - 1 for n in edges[v] & wide) if wide
                    else len(edges[v])) if width[v] == 1
                else sum(blocks(n, v) for n in edges[v]) for v in nodes}
    low: list[tuple[int, int]] = []           # entries never go stale: a node enters once
    high: list[tuple] = []                     # lazy: stale entries skipped on pop

    def is_low(v: int) -> bool:
        return pressure[v] < places[width[v]]

    def high_key(v: int) -> tuple:
        if cost is None:
            return (pressure[v], v)
        return (cost.get(v, 0) / (pressure[v] + 1), pressure[v], v)

    for v in nodes:
        heapq.heappush(low, (pressure[v], v)) if is_low(v) else high.append(high_key(v))
    heapq.heapify(high)
    removed: set[int] = set()
    stack: list[int] = []
    # high nodes whose pressure fell since `high` last held their current key: pushed only
    # when `high` is next popped (a push per neighbour update was O(edges) heap entries)
    dirty: set[int] = set()
    while len(stack) < len(nodes):
        if low:
            pick = heapq.heappop(low)[1]
        else:
            for v in dirty:
                if v not in removed and not is_low(v):
                    heapq.heappush(high, high_key(v))
            dirty.clear()
            if len(high) > 2 * len(nodes):
                # mostly stale entries: keep one per node still high (the same choices)
                high = [high_key(v) for v in nodes if v not in removed and not is_low(v)]
                heapq.heapify(high)
            while True:
                entry = heapq.heappop(high)
                v = entry[-1]
                if v in removed or is_low(v):
                    continue
                if entry[-2] == pressure[v]:
                    break
                if cost is not None:
                    # a cost key only grows as the pressure falls: re-key on the way out
                    heapq.heappush(high, high_key(v))
            pick = v
        removed.add(pick)
        stack.append(pick)
        w_pick = width[pick]
        for n in edges[pick]:
            if n in removed or n not in pressure:      # a precoloured neighbour stays
                continue
            was_low = is_low(n)
            pressure[n] -= w_pick if width[n] == 1 else blocks(pick, n)
            if was_low:
                continue
            if is_low(n):
                heapq.heappush(low, (pressure[n], n))
            elif cost is None:
                dirty.add(n)
    return stack


_OFFSETS: dict[int, tuple[int, ...]] = {}


def _offsets(mask: int) -> tuple[int, ...]:
    """j - i for every (i, j) of a parts mask: a register placed at c + (j - i), with c
    where the neighbour starts, would put its part i on the neighbour's part j."""
    out = _OFFSETS.get(mask)
    if out is None:
        n = 1 << UNIT_BITS
        out = _OFFSETS[mask] = tuple(sorted({j - i for i in range(n) for j in range(n)
                                             if mask >> (i << UNIT_BITS | j) & 1}))
    return out


def _single_choice(allowed: list[int], allowed_set: set[int], taken: set[int],
                   bad_starts: set[int], high: int, fill_holes: bool,
                   ascending: bool = False) -> int | None:
    """A register for a single value: the lowest free one; with `fill_holes`, below the
    registers given out so far, first one whose aligned pair (then quad) a neighbour
    already breaks, so that wide values coloured later still find aligned places."""
    lowest = next((c for c in allowed if c not in taken and c not in bad_starts), None)
    if not fill_holes or lowest is None:      # the lowest free one: no list of every free register
        return lowest
    # the free ones below `high`, in `allowed`'s order (ascending: the scan stops at `high`)
    if ascending:
        below = []
        for c in allowed:
            if c >= high:
                break
            if c not in taken and c not in bad_starts:
                below.append(c)
    else:
        below = [c for c in allowed if c < high and c not in taken and c not in bad_starts]
    for group in (2, 4):
        for c in below:
            first = c & -group
            for r in range(first, first + group):
                if r != c and (r not in allowed_set or r in taken or r in bad_starts):
                    return c
    return lowest


def color(mf: MFunction, edges, moves, registers: dict[str, list[int]] | None = None,
          cost: dict[int, float] | None = None,
          forbidden: dict[int, set[int]] | None = None,
          parts: dict[tuple[int, int], int] | None = None,
          wide_first: bool = False,
          prefs: dict[int, list[tuple[int, int]]] | None = None,
          stacks: dict[str, list[int]] | None = None,
          present: list[int] | None = None) -> tuple[dict[int, int], list[int]]:
    """(vreg id -> first physical register, vreg ids left uncoloured). With `cost`, nodes
    are simplified by spill cost once a class is full (see `_simplify`). Precoloured
    registers keep their register; `forbidden` (vreg id -> indices) are never chosen.
    `parts` (`interference_parts`): where a wide register's edge names only some of its
    parts, only those parts keep apart; an edge without an entry keeps the whole apart.
    `wide_first`: select quads, then pairs, then single registers (each in simplification's
    order), single ones filling the holes wide ones leave: no longer guaranteed to colour
    what simplification found colourable, but often tighter (see `best_colouring`).
    `prefs` (`interference_parts`' fourth): places to try after the copy partners'.
    `stacks`: class -> simplification's order, filled and reused across calls on the same
    graph, registers and costs (`best_colouring`'s two orders share it); `present`:
    `present_vregs(mf)` where the caller has it."""
    parts = parts or {}
    partial = {a for a, _ in parts}        # the nodes some parts entry names first
    prefs = prefs or {}
    registers = registers or registers_of()
    vregs = mf.vregs
    width = {v.id: v.width for v in vregs}
    present = present_vregs(mf) if present is None else present
    named = set(present)
    colors: dict[int, int] = {v: c for v, c in mf.precolored.items() if v in named}
    forbidden = forbidden or {}
    uncoloured: list[int] = []
    for cls in ("P", "R", "UP", "UR"):
        if cls not in registers:
            continue
        allowed = registers[cls]
        allowed_set = set(allowed)
        ascending = all(x < y for x, y in zip(allowed, allowed[1:]))
        nodes = [v for v in present if vregs[v].cls == cls and v not in mf.precolored]
        stack = stacks.get(cls) if stacks is not None else None
        if stack is None:
            stack = _simplify(nodes, edges, width, allowed, cost)
            if stacks is not None:
                stacks[cls] = stack
        high = 0                                  # one past the highest register given out
        # uniform registers cost no occupancy: a value takes one no other value has had yet
        # while there is one, so that reusing a register does not order independent uniform
        # work (a second LDCU waiting for the first value's last reader; isel/uniform_datapath.py)
        spread = cls in ("UR", "UP")
        used: set[int] = set()
        order = list(reversed(stack))
        if wide_first:
            order = sorted(order, key=lambda v: -width[v])      # stable: simplification's order
        for vid in order:
            w = width[vid]
            taken: set[int] = set(forbidden.get(vid, ()))
            bad_starts: set[int] = set()       # first registers a partial edge rules out
            if vid in partial:
                for n in edges[vid]:
                    c = colors.get(n)
                    if c is None:
                        continue
                    mask = parts.get((vid, n))
                    if mask is None:
                        taken.update(range(c, c + width[n]))
                    else:
                        bad_starts.update(c + off for off in _offsets(mask))
            else:                # no parts entry names vid: every coloured neighbour whole
                for n in edges[vid]:
                    c = colors.get(n)
                    if c is not None:
                        if width[n] == 1:
                            taken.add(c)
                        else:
                            taken.update(range(c, c + width[n]))

            def fits(c: int) -> bool:
                return (c % alignment(w) == 0 and c not in bad_starts
                        and all(r in allowed_set and r not in taken for r in range(c, c + w)))
            choice = None
            for partner in moves[vid]:
                c = colors.get(partner)
                if c is not None and width[partner] == w and fits(c):
                    choice = c
                    break
            if choice is None:
                for partner, offset in prefs.get(vid, ()):
                    c = colors.get(partner)
                    if c is not None and c + offset >= 0 and fits(c + offset):
                        choice = c + offset
                        break
            if choice is None and spread:
                choice = next((c for c in allowed if fits(c) and used.isdisjoint(range(c, c + w))), None)
            if choice is None:
                if w == 1:
                    choice = _single_choice(allowed, allowed_set, taken, bad_starts, high, wide_first,
                                            ascending)
                else:
                    choice = next((c for c in allowed if fits(c)), None)
            if choice is None:
                uncoloured.append(vid)
            else:
                colors[vid] = choice
                high = max(high, choice + w)
                if spread:
                    used.update(range(choice, choice + w))
    return colors, sorted(uncoloured)


def best_colouring(mf: MFunction, edges, moves, registers, cost, forbidden, parts, prefs
                   ) -> tuple[dict[int, int], list[int]]:
    """`color` in simplification's order, and wide registers first (mixed widths fragment
    the file when single registers take the low places first). Wide-first wins when it
    colours what the first order left uncoloured, or colours everything in fewer
    registers and either those cross an allocation unit (occupancy) or the scheduler after
    allocation keeps about as many cycles (within CYCLE_MARGIN; `colouring_cycles`: reusing
    registers sooner adds false dependences between loads issued one after another)."""
    stacks: dict[str, list[int]] = {}
    present = present_vregs(mf)
    colors, uncoloured = color(mf, edges, moves, registers, cost, forbidden, parts, prefs=prefs,
                               stacks=stacks, present=present)
    if not any(mf.vregs[v].width > 1 for v in colors if mf.vregs[v].cls == "R"):
        return colors, uncoloured
    other, left = color(mf, edges, moves, registers, cost, forbidden, parts, True, prefs, stacks,
                        present)
    if left:
        return colors, uncoloured
    if uncoloured:
        return other, left
    high_other, high = _highest_r(mf, other), _highest_r(mf, colors)
    if high_other >= high:
        return colors, uncoloured
    unit = mf.target.register_unit_per_thread if mf.target is not None else 8
    count = lambda h: -(-(h + 1 + REGISTERS_RESERVED) // unit)   # noqa: E731
    if (count(high_other) < count(high)
            or estimated_cycles(mf, other) <= CYCLE_MARGIN * estimated_cycles(mf, colors)):
        return other, left
    return colors, uncoloured


def _highest_r(mf: MFunction, colors: dict[int, int]) -> int:
    max_r = -1
    for b in mf.blocks:
        for ins in b.instrs:
            if ins.opcode == IMPLICIT_DEF:
                continue
            for _, op, _ in register_operands(ins):
                if op.reg.cls == "R":
                    c = colors[op.reg.id] + (op.part or 0)
                    max_r = max(max_r, c + op.width - 1)
    return max_r


def _out_of(mf: MFunction, vids: list[int]) -> CompileError:
    kind = "predicate" if all(mf.vregs[v].cls == "P" for v in vids) else "general"
    return CompileError(f"function {mf.name}: out of {kind} registers "
                        f"(spilling is not supported yet)")


def allocate(mf: MFunction, r_limit: int = R_LIMIT) -> Allocation:
    """Colour without spilling: a CompileError when a class runs out."""
    edges, moves, parts, prefs = interference_parts(mf)
    colors, uncoloured = best_colouring(mf, edges, moves, {**registers_of(r_limit), **mf.uniform_registers},
                                        None, forbidden_registers(mf), parts, prefs)
    if uncoloured:
        raise _out_of(mf, uncoloured)
    return Allocation(colors, _highest_r(mf, colors))


def _make_room(mf: MFunction, stuck: list[int], edges, registers, cost) -> set[int]:
    """Neighbours to spill so that a register spilling created (live for one instruction,
    never spilled itself) finds a place next round: the cheapest per 32-bit register, at
    least its own width's worth, and enough that the rest leave room for it twice over."""
    chosen: set[int] = set()
    width = lambda n: mf.vregs[n].width  # noqa: E731
    for v in stuck:
        capacity = len(registers[mf.vregs[v].cls])
        degree = sum(width(n) for n in edges[v] if n not in chosen)
        freed = 0
        candidates = sorted((n for n in edges[v] if n not in chosen and cost.get(n, 0) != float("inf")),
                            key=lambda n: (cost.get(n, 0) / width(n), n))
        for n in candidates:
            if freed >= width(v) and degree + 2 * width(v) <= capacity:
                break
            chosen.add(n)
            degree -= width(n)
            freed += width(n)
    return chosen


def register_budget(max_registers: int | None) -> int:
    """R indices the allocator may use under a register count (ptxas's -maxrregcount or
    `.maxnreg`: the count includes the two registers ptxas reserves)."""
    if max_registers is None:
        return R_LIMIT
    return max(min(max_registers, REGISTER_FILE) - REGISTERS_RESERVED, STACK_POINTER + 2)


def allocate_with_spilling(mf: MFunction, frame: Frame | None = None,
                           max_registers: int | None = None,
                           must_save=None) -> tuple[Allocation, Frame]:
    """Colour, spilling what does not fit, until everything fits. Spill slots go into
    `frame` (a new one when None); returns the allocation and the frame. `must_save`
    (register index -> bool: a link target's callee-saved registers) moves those below
    R32 after the others there, so that a small function saves nothing (as ptxas's)."""
    frame = frame if frame is not None else Frame()
    registers = registers_of(register_budget(max_registers))
    registers.update(mf.uniform_registers)      # isel/uniform_datapath.py's free URs/UPs
    if must_save is not None:
        low = [r for r in registers["R"] if r < 32]
        registers["R"] = ([r for r in low if not must_save(r)] + [r for r in low if must_save(r)]
                          + [r for r in registers["R"] if r >= 32])
    unspillable: set[int] = set()
    stats = SpillStats()
    recomputed_compares = tried_uncoloured = False
    by_cost = False
    coalesce_parts(mf)
    prespill(mf, registers, lambda vids: Spiller(mf, frame, unspillable, stats).spill(vids),
             lambda: spill_costs(mf, unspillable))
    edges = moves = parts = prefs = None
    for round_ in range(MAX_ROUNDS):
        # the previous graph is dropped before the next is built: with hundreds of values
        # live at once two graphs side by side were the compile's peak memory
        edges = moves = parts = prefs = None
        soft: set[tuple[int, int]] = set()
        edges, moves, parts, prefs = interference_parts(mf, soft)
        if round_ == 0 and coalesce(mf, edges, {c: len(r) for c, r in registers.items()}, soft):
            edges = moves = parts = prefs = None
            edges, moves, parts, prefs = interference_parts(mf)
        forbidden = forbidden_registers(mf)
        colors, uncoloured = best_colouring(mf, edges, moves, registers,
                                            spill_costs(mf, unspillable) if by_cost else None,
                                            forbidden, parts, prefs)
        if not uncoloured:
            return Allocation(colors, _highest_r(mf, colors), stats), frame
        if not recomputed_compares and any(mf.vregs[v].cls == "P" for v in uncoloured):
            # the compares of the predicates left uncoloured first, then every compare
            if not tried_uncoloured:
                tried_uncoloured = True
                if rematerialise_predicates(mf, {v for v in uncoloured if mf.vregs[v].cls == "P"}):
                    continue
            recomputed_compares = True
            if rematerialise_predicates(mf):
                continue
        if not by_cost:
            # from now on choose what to spill by cost: simplify again, cheapest per unit
            # of degree first
            by_cost = True
            colors, uncoloured = best_colouring(mf, edges, moves, registers,
                                                spill_costs(mf, unspillable), forbidden, parts,
                                                prefs)
            if not uncoloured:
                return Allocation(colors, _highest_r(mf, colors), stats), frame
        spillable = [v for v in uncoloured if v not in unspillable]
        stuck = [v for v in uncoloured if v in unspillable]
        if stuck:
            spillable = sorted(set(spillable) | _make_room(mf, stuck, edges, registers,
                                                             spill_costs(mf, unspillable)))
        if not spillable:
            raise CompileError(f"function {mf.name}: an instruction needs more registers at "
                               f"once than the register limit allows")
        Spiller(mf, frame, unspillable, stats).spill(spillable, edges)
    raise CompileError(f"function {mf.name}: register allocation did not converge after "
                       f"{MAX_ROUNDS} spill rounds")


def verify(mf: MFunction, colors: dict[int, int]) -> None:
    """Check an allocation against liveness: wherever a register part is written, no other
    value's part live across that write may be in the same physical register (a copy's
    source excepted when the copy is a whole-register move; an IMPLICIT_DEF writes only the
    parts read before any write). Liveness is per part, as the allocator's. Raises
    AssertionError naming the first conflict; a compiler bug, never a user error."""
    fresh = fresh_writes(mf)
    live_out = unit_liveness(mf, fresh)
    low = (1 << UNIT_BITS) - 1

    def place(u: int) -> tuple[str, int]:
        vid = u >> UNIT_BITS
        return mf.vregs[vid].cls, colors[vid] + (u & low)

    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        for ins in reversed(b.instrs):
            uses, kills, dunits = unit_use_def(ins, fresh)
            if ins.opcode == IMPLICIT_DEF:
                dunits = [u for u in dunits if u in live]
            exempt = None
            if (ins.opcode == COPY and isinstance(ins.operands[1], VOp)
                    and ins.operands[0].part is None and ins.operands[1].part is None):
                exempt = ins.operands[1].reg.id
            for du in dunits:
                d = du >> UNIT_BITS
                for lu in sorted(live):
                    lv = lu >> UNIT_BITS
                    if lv != d and lv != exempt and place(du) == place(lu):
                        raise AssertionError(f"{mf.name}/{b.name}: {ins!r} overwrites "
                                             f"{mf.vregs[lv]!r}, live in the same register")
            live.difference_update(kills)
            live.update(uses)
