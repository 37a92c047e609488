"""Natural loops, found once per function and CFG state and shared by the passes that ask.

Loop-invariant hoisting, dead-loop removal, divergence and the selector's preheaders all
need the natural loops of the same IR function (each found them itself: N nested loops
walked ~N^2/2 blocks per pass). `ir_loops(fn)` keeps the answer on the function with the
CFG it was found on (every block in order with its successors and predecessors, compared
at each request): a pass that changes the CFG makes the next request find the loops again,
whatever ran in between, and nothing else does. Machine code (reconvergence) uses
`natural_loops` directly: one pass asks there.

A loop's body is found by walking predecessors back from its latches, innermost loops
first; a walk that meets a block of a loop already found takes that loop's body whole and
goes on from its header's predecessors outside it (natural loops with different headers
are nested or disjoint), so each block is walked once per function, not once per loop
around it. The bodies are shared: callers read them, never change them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptx2sass import ir


def natural_loops(blocks, rpo: dict[int, int], dominates, inside) -> dict[int, tuple[object, set[int]]]:
    """Header id -> (header, ids of the loop's blocks) for the natural loops of `blocks`
    (back edges to one header merged), in the order their first back edge comes walking
    `blocks` and their successors. `rpo`: block id -> reverse-postorder index of the blocks
    reached from the entry; `dominates(a, b)`; `inside(p)`: whether a predecessor counts
    (reached from the entry). Serves IR and machine blocks alike (`succs`, `preds`)."""
    found: dict[int, tuple[object, list]] = {}
    for b in blocks:
        k = rpo.get(id(b))
        if k is None:
            continue
        for s in b.succs:
            if rpo[id(s)] <= k and dominates(s, b):          # back edge b -> s
                found.setdefault(id(s), (s, []))[1].append(b)
    bodies: dict[int, tuple[object, set[int]]] = {}
    loop_of: dict[int, int] = {}    # block id -> the header of the first loop found holding it
    merged: dict[int, int] = {}     # header id -> the header of a loop found around it
    # an enclosing loop's header dominates the inner one's: it comes earlier in reverse postorder
    for hid in sorted(found, key=lambda k: -rpo[k]):
        h, latches = found[hid]
        body = {hid}
        loop_of.setdefault(hid, hid)
        work = list(latches)
        while work:
            n = work.pop()
            k = id(n)
            if k in body:
                continue
            inner = loop_of.get(k)
            if inner is None:
                body.add(k)
                loop_of[k] = hid
                work.extend(p for p in n.preds if inside(p))
                continue
            while inner in merged:                          # the outermost loop found so far
                inner = merged[inner]
            ih, ibody = bodies[inner]
            body |= ibody
            merged[inner] = hid
            work.extend(p for p in ih.preds if id(p) not in ibody and inside(p))
        bodies[hid] = (h, body)
    return {hid: bodies[hid] for hid in found}


@dataclass
class IRLoops:
    """An IR function's dominators and natural loops (`natural_loops`), for one CFG state."""
    idom: dict
    by_header: dict[int, tuple[ir.Block, set[int]]]

    def innermost_first(self) -> list[tuple[ir.Block, set[int]]]:
        """(header, body) with the fewest blocks first (ties: the order found)."""
        return sorted(self.by_header.values(), key=lambda hb: len(hb[1]))

    def bodies(self) -> list[set[int]]:
        return [body for _, body in self.by_header.values()]


def _cfg_state(fn: ir.Function) -> tuple:
    # ids stay unique while the cache holds the blocks (`_CACHE` keeps the list)
    return tuple((id(b), tuple(map(id, b.succs)), tuple(map(id, b.preds))) for b in fn.blocks)


_CACHE = "_ir_loops"     # the attribute of the function holding (blocks, CFG state, IRLoops)


def ir_loops(fn: ir.Function) -> IRLoops:
    """The function's dominators and natural loops, found again only when its CFG (blocks,
    their order, successors, predecessors) differs from the one the last answer was for."""
    state = _cfg_state(fn)
    held = getattr(fn, _CACHE, None)
    if held is not None and held[1] == state:
        return held[2]
    idom = ir.dominators(fn)
    rpo = {id(b): k for k, b in enumerate(ir.reverse_postorder(fn))}
    loops = IRLoops(idom, natural_loops(fn.blocks, rpo, ir.dominance(idom), lambda p: p in idom))
    setattr(fn, _CACHE, (list(fn.blocks), state, loops))
    return loops


def forget_ir_loops(fn: ir.Function) -> None:
    """Drop `ir_loops`' answer kept on `fn` (it holds the blocks: a function whose code is
    freed would keep it all through this)."""
    fn.__dict__.pop(_CACHE, None)
