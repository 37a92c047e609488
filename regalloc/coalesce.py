"""Conservative copy coalescing (Briggs and George) before colouring.

Phi elimination and two-address sequences leave many whole-register copies. Colouring is
already biased towards giving a copy's two sides one register, but a bias can lose to the
neighbours coloured first; merging the two nodes beforehand cannot. Merging is only done
when it cannot make the graph harder to colour:

* Briggs: the merged node has fewer than K neighbours of significant degree (>= K), or
* George: every neighbour of the source either already interferes with the destination or
  has insignificant degree,

K being the number of registers of the class (counted in 32-bit units for wide nodes, the
same measure as simplification). The two sides must not interfere, have the same class
and width, and the copy must move the whole register unmodified.

Copies are visited most frequently executed first (loop depth), then in program order, so
the result never depends on set iteration. The code is rewritten with each merged group
named by its lowest vreg id, and the copies that became `x = x` are deleted.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import ConstRef
from ptx2sass.mir import COPY, MFunction, MInstr, VMem, VOp
from ptx2sass.regalloc.loops import block_weights


def _plain_copy(ins: MInstr) -> tuple[int, int] | None:
    """(dst id, src id) of a whole-register, unmodified, unguarded copy."""
    if ins.opcode != COPY or ins.guard is not None:
        return None
    d, s = ins.operands[0], ins.operands[1]
    if not (isinstance(d, VOp) and isinstance(s, VOp)) or d.part is not None or s.part is not None:
        return None
    if s.neg or s.abs or s.inv or s.suffix or d.reg.cls != s.reg.cls or d.reg.width != s.reg.width:
        return None
    return d.reg.id, s.reg.id


class _Groups:
    """Union-find over vreg ids; the representative is the lowest id of its group."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, v: int) -> int:
        root = v
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while v != root:
            self.parent[v], v = root, self.parent.get(v, v)
        return root

    def union(self, a: int, b: int) -> int:
        keep, gone = min(a, b), max(a, b)
        self.parent[gone] = keep
        return keep


def coalesce(mf: MFunction, edges: dict[int, set[int]], capacity: dict[str, int]) -> int:
    """Merge copy-related registers in `mf` (rewriting its code) where Briggs or George
    allows; `edges` is the interference graph, updated in place. Returns the number of
    copies removed."""
    width = {v.id: v.width for v in mf.vregs}
    weights = block_weights(mf)
    copies = []
    for bi, b in enumerate(mf.blocks):
        for ii, ins in enumerate(b.instrs):
            pair = _plain_copy(ins)
            if pair is not None and not (pair[0] in mf.precolored or pair[1] in mf.precolored):
                copies.append((-weights[bi], bi, ii, pair))
    copies.sort()
    groups = _Groups()

    degree = {v: sum(width[n] for n in edges[v]) for v in edges}
    for _, _, _, (d, s) in copies:
        a, b = groups.find(d), groups.find(s)
        if a == b or b in edges[a]:
            continue
        k = capacity[mf.vregs[a].cls]
        merged = edges[a] | edges[b]
        significant = sum(1 for n in merged if degree[n] >= k)
        george = all(n in edges[a] or degree[n] < k for n in edges[b])
        if significant >= k and not george:
            continue
        keep = groups.union(a, b)
        gone = b if keep == a else a
        for n in sorted(edges[gone]):
            edges[n].discard(gone)
            if keep in edges[n]:
                degree[n] -= width[gone]      # two neighbours became one
            else:
                edges[n].add(keep)            # same width: the degree stays
        edges[keep] = merged - {gone, keep}
        edges[gone] = set()
        degree[keep] = sum(width[n] for n in edges[keep])
        degree[gone] = 0
    return _rewrite(mf, groups)


def _rewrite(mf: MFunction, groups: _Groups) -> int:
    if not groups.parent:
        return 0

    def rename(op):
        if isinstance(op, VOp):
            rep = groups.find(op.reg.id)
            return op if rep == op.reg.id else replace(op, reg=mf.vregs[rep])
        if isinstance(op, VMem) and isinstance(op.base, VOp):
            return replace(op, base=rename(op.base))
        if isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
            return replace(op, ureg=rename(op.ureg))
        return op

    for gone in sorted(groups.parent):      # the merged registers' PTX names (for -g's maps)
        rep = groups.find(gone)
        if gone != rep and gone in mf.value_names:
            mf.value_names[rep] = tuple(dict.fromkeys(mf.value_names.get(rep, ()) + mf.value_names[gone]))
    removed = 0
    for b in mf.blocks:
        kept = []
        for ins in b.instrs:
            ins.operands = [rename(op) for op in ins.operands]
            if isinstance(ins.guard, VOp):
                ins.guard = rename(ins.guard)
            pair = _plain_copy(ins)
            if pair is not None and pair[0] == pair[1]:
                removed += 1
                continue
            kept.append(ins)
        b.instrs = kept
    return removed
