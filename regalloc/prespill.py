"""Spilling before the interference graph exists, where far more values are live at once
than a class has registers.

A block where n values are live at once gives an interference graph of n² / 2 edges, and
colouring it only to spill nearly all of them takes rounds over that graph: 2,000 loads
held across a barrier and then summed took 0.4 GB and ~20 s in `color` alone, 5,000 took
2.5 GB. Where a class needs more than PRESPILL_ABOVE registers at once (twice the register
file: no kernel comes near it without spilling most of what it holds), values are first
sent to memory the way Belady's algorithm evicts pages: walking each block forwards,
whenever the live values need more than the class offers (less MARGIN for the reloads and
the alignment of wide registers), the one whose next read is furthest away, per unit of
its spill cost, goes (spilled everywhere, as the colouring rounds spill, by
`regalloc.spill`). What the graph is then
built on has at most the class's registers live at any point, so its size is linear in the
code's, and the colouring rounds that follow settle what is left.

Kernels below the threshold are untouched; a value live out of a block and not read in it
again counts as furthest away. Predicates come first: a spilled predicate is kept in a
general register, which the general registers' pass then counts.
"""
from __future__ import annotations

import heapq

from ptx2sass.mir import MFunction
from ptx2sass.regalloc.liveness import fresh_writes, liveness, use_def

PRESPILL_ABOVE = 2 * 255     # registers of one class live at once (32-bit units)
MARGIN = 8                   # registers left free for the reloads' short-lived copies
                             # (a quarter of the class where it is small)


def pressures(mf: MFunction, solved: dict | None = None) -> dict[str, int]:
    """Class -> the most registers of it (32-bit units) live at once anywhere in `mf`.
    `solved`, where given, receives the liveness worked out on the way ("fresh",
    "live_out"), for `furthest_next_use` on the same, unchanged code."""
    vregs = mf.vregs
    fresh = fresh_writes(mf)
    live_out = liveness(mf, fresh)
    if solved is not None:
        solved.update(fresh=fresh, live_out=live_out)
    most = {"R": 0, "P": 0, "UR": 0, "UP": 0}
    by_class = {}           # class -> (vreg id -> width, the ids): a block's counts by set operations
    for c in most:
        units = {v.id: v.width for v in vregs if v.cls == c}
        by_class[c] = (units, set(units))
    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        cur = {c: sum(map(units.__getitem__, live & members)) for c, (units, members) in by_class.items()}
        for ins in reversed(b.instrs):
            for c in cur:
                if cur[c] > most[c]:
                    most[c] = cur[c]
            uses, kills = use_def(ins, fresh)
            for k in kills:
                if k in live:
                    live.discard(k)
                    cur[vregs[k].cls] -= vregs[k].width
            for u in uses:
                if u not in live:
                    live.add(u)
                    cur[vregs[u].cls] += vregs[u].width
        for c in cur:
            if cur[c] > most[c]:
                most[c] = cur[c]
    return most


def furthest_next_use(mf: MFunction, cls: str, capacity: int, cost: dict[int, float],
                      solved: dict | None = None) -> list[int]:
    """Vreg ids of class `cls` to spill so that at most `capacity - MARGIN` registers of it
    are live at any point. The value to go is the one whose next read is furthest ahead
    per unit of `cost` (what spilling it everywhere costs: a base address read by every
    load is never worth spilling for the stretch where it waits for its last reader).
    Precoloured registers (infinite cost) stay. `solved`: `pressures`' liveness of this
    very code, if at hand."""
    width = {v.id: v.width for v in mf.vregs
             if v.cls == cls and cost.get(v.id, 0) != float("inf")}
    target = capacity - min(MARGIN, capacity // 4)
    if solved:
        fresh, live_out = solved["fresh"], solved["live_out"]
    else:
        fresh = fresh_writes(mf)
        live_out = liveness(mf, fresh)
    spilled: set[int] = set()
    counted = set(width)
    for i, b in enumerate(mf.blocks):
        effects = [use_def(ins, fresh) for ins in b.instrs]
        if _peak(effects, (live_out[i] & counted) - spilled, width, spilled) <= target:
            continue        # nothing here can go (below): the walk would leave `spilled` as it is
        n = len(effects)
        far = n + 1                           # live out and not read here again
        # each value's events in the block: (position, whether it reads the value)
        events: dict[int, list[tuple[int, bool]]] = {}
        for k, (uses, kills) in enumerate(effects):
            for v in set(uses) | set(kills):
                if v in width:
                    events.setdefault(v, []).append((k, v in uses))
        live_in = {v for v in live_out[i] if v in width}
        for uses, kills in reversed(effects):
            live_in.difference_update(kills)
            live_in.update(v for v in uses if v in width)
        ptr = dict.fromkeys(events, 0)

        def next_read(v: int) -> int | None:
            """Where v is next read in the block (far: not here, but live out); None
            where it is dead until its next write or for good."""
            seq = events.get(v, ())
            p = ptr.get(v, 0)
            if p == len(seq):
                return far if v in live_out[i] else None
            k, reads = seq[p]
            return k if reads else None

        live: set[int] = set()
        key: dict[int, float] = {}
        heap: list[tuple[float, int]] = []
        cur = 0

        def enter(v: int) -> None:
            nonlocal cur
            nxt = next_read(v)
            if nxt is None:
                if v in live:
                    live.discard(v)
                    cur -= width[v]
                return
            if v not in live:
                live.add(v)
                cur += width[v]
            key[v] = (nxt + 1) / max(cost.get(v, 0), 1e-9)
            heapq.heappush(heap, (-key[v], -v))

        def evict() -> None:
            nonlocal cur
            while cur > target and heap:
                nxt, v = heapq.heappop(heap)
                v = -v
                if v in live and key[v] == -nxt:
                    live.discard(v)
                    cur -= width[v]
                    spilled.add(v)

        for v in sorted(live_in - spilled):
            enter(v)
        evict()
        for k, (uses, kills) in enumerate(effects):
            named = sorted({v for v in (*uses, *kills) if v in width and v not in spilled})
            for v in named:
                seq = events[v]
                while ptr[v] < len(seq) and seq[ptr[v]][0] <= k:
                    ptr[v] += 1
            for v in named:
                enter(v)
            evict()
    return sorted(spilled)


def _peak(effects: list, live: set[int], width: dict[int, int], spilled: set[int]) -> int:
    """The most registers of `width`'s values not `spilled` live at once in a block, by
    liveness (`live`: those live out, consumed). Belady's live set in `furthest_next_use`
    holds only values read further on or live out, a subset of these at every point, so
    where this stays within the target that walk evicts nothing (nested loops keep
    hundreds of values live through blocks of a few instructions)."""
    cur = peak = sum(map(width.__getitem__, live))
    for uses, kills in reversed(effects):
        for k in kills:
            if k in live:
                live.discard(k)
                cur -= width[k]
        for u in uses:
            if u not in live and u in width and u not in spilled:
                live.add(u)
                cur += width[u]
        if cur > peak:
            peak = cur
    return peak


def prespill(mf: MFunction, registers: dict[str, list[int]], spill, costs) -> int:
    """Spill (through `spill(vids)`) what keeps any class above PRESPILL_ABOVE registers
    live at once; returns how many values went. `costs()`: vreg id -> spill cost.
    Predicates first (their homes are general registers)."""
    count = 0
    solved: dict = {}                # the liveness `most` was counted on, while the code is so
    most = pressures(mf, solved)
    for cls in ("P", "R"):
        if most[cls] <= PRESPILL_ABOVE:
            continue
        vids = furthest_next_use(mf, cls, len(registers[cls]), costs(), solved)
        spill(vids)
        count += len(vids)
        solved = {}
        if cls == "P":
            most = pressures(mf, solved)     # spilled predicates live on in general registers
    return count
