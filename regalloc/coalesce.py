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

One interference may be crossed: a wide value built in parts after an IMPLICIT_DEF while
the value it is copied back into is live (a loop's 64-bit pointer `p += 64`: `IADD3 n.0 =
p.0 + 64; IADD3.X n.1 = p.1 + carry`, then the back edge's `p = n`), where no part of one
is live where the same part of the other is written (`interference_parts`' `soft` pairs).
Sharing one register is then sound part by part, as ptxas's in-place `IADD3 R4, P0, R4,
0x40`; the IMPLICIT_DEF, which would end the merged register's live range while the old
value is still read, is dropped (the partial writes then keep it live, as they should).

Copies are visited most frequently executed first (loop depth), then in program order, so
the result never depends on set iteration. The code is rewritten with each merged group
named by its lowest vreg id, and the copies that became `x = x` are deleted.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import ConstRef
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp
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
    """Union-find over vreg ids. A group's root is the graph node that stands for it (the
    member with the larger neighbour set, so a merge costs the smaller set's size); the
    code names a group by its lowest id (`names`)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, v: int) -> int:
        root = v
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while v != root:
            self.parent[v], v = root, self.parent.get(v, v)
        return root

    def union(self, keep: int, gone: int) -> None:
        self.parent[gone] = keep

    def names(self) -> dict[int, int]:
        """Each merged vreg id -> the lowest id of its group."""
        lowest: dict[int, int] = {}
        for v in self.parent:
            root = self.find(v)
            lowest[root] = min(lowest.get(root, root), v)
        return {v: lowest[self.find(v)] for v in list(self.parent) + list(lowest)}


def coalesce(mf: MFunction, edges: dict[int, set[int]], capacity: dict[str, int],
             soft: set[tuple[int, int]] = frozenset()) -> int:
    """Merge copy-related registers in `mf` (rewriting its code) where Briggs or George
    allows; `edges` is the interference graph, updated in place; `soft` its edges that may
    be crossed (module docstring). Returns the number of copies removed."""
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

    # the neighbours' widths summed: their count, plus what the wide ones add (one set
    # intersection per node instead of a width lookup per edge)
    wide = {v for v, w in width.items() if w > 1}
    degree = {v: len(s) + sum(width[n] - 1 for n in s & wide) if wide else len(s)
              for v, s in edges.items()}
    crossable = {(a, b) for d, v in soft for a, b in ((d, v), (v, d))}   # soft edges, by group
    for _, _, _, (d, s) in copies:
        a, b = groups.find(d), groups.find(s)
        if a == b or (b in edges[a] and (a, b) not in crossable):
            continue
        # a register live through many copies' sides (a loop's accumulator) gathers a large
        # neighbour set: every step below walks the smaller side only, where it can
        small, large = (a, b) if len(edges[a]) <= len(edges[b]) else (b, a)
        if not _conservative(small, large, edges, degree, capacity[mf.vregs[a].cls]):
            continue
        groups.union(large, small)
        into = edges[large]
        if small in into:                     # a crossed edge: the pair is one node now
            into.discard(small)
            degree[large] -= width[small]
        if not crossable:
            # no soft edge left: the same updates as below, without the pair bookkeeping
            # (a tuple per neighbour and merge was most of coalescing's time)
            w_small = width[small]
            for n in edges[small]:
                if n == large:
                    continue
                mine = edges[n]
                mine.discard(small)
                if n in into:
                    degree[n] -= w_small      # two neighbours became one
                else:
                    mine.add(large)           # same width: the degree stays
                    into.add(n)
                    degree[large] += width[n]
            edges[small] = set()
            degree[small] = 0
            continue
        for n in edges[small]:
            if n == large:
                continue
            edges[n].discard(small)
            was_soft = (small, n) in crossable
            crossable.discard((small, n))
            crossable.discard((n, small))
            if n in into:
                degree[n] -= width[small]     # two neighbours became one
                if not was_soft:
                    crossable.discard((large, n))
                    crossable.discard((n, large))
            else:
                edges[n].add(large)           # same width: the degree stays
                into.add(n)
                degree[large] += width[n]
                if was_soft:
                    crossable.update(((large, n), (n, large)))
        edges[small] = set()
        degree[small] = 0
    started = {d for d, v in soft if groups.find(d) == groups.find(v)}
    return _rewrite(mf, groups, started)


def _conservative(a: int, b: int, edges: dict[int, set[int]], degree: dict[int, int],
                  k: int) -> bool:
    """George (every neighbour of `a`, the smaller side, already interferes with `b` or has
    insignificant degree), else Briggs (the merged node has fewer than `k` neighbours of
    significant degree); neighbours are taken without the pair itself (the sets are read
    in place: copying the larger side's per candidate copy was quadratic in the nesting)."""
    small, large = edges[a], edges[b]
    if all(n == b or n in large or degree[n] < k for n in small):
        return True
    significant = sum(1 for n in small if n != b and n not in large and degree[n] >= k)
    for n in large:
        if n != a and degree[n] >= k:
            significant += 1
            if significant >= k:
                return False
    return True


def _rewrite(mf: MFunction, groups: _Groups, started: set[int] = frozenset()) -> int:
    """Name each group by its lowest id, delete the copies that became `x = x` and the
    IMPLICIT_DEFs of `started` (values merged across a soft edge)."""
    if not groups.parent:
        return 0
    names = groups.names()

    def rename(op):
        if isinstance(op, VOp):
            rep = names.get(op.reg.id, op.reg.id)
            return op if rep == op.reg.id else replace(op, reg=mf.vregs[rep])
        if isinstance(op, VMem) and (isinstance(op.base, VOp) or op.ubase is not None):
            return replace(op, base=rename(op.base), ubase=rename(op.ubase))
        if isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
            return replace(op, ureg=rename(op.ureg))
        return op

    for gone in sorted(names):      # the merged registers' PTX names (for -g's maps)
        rep = names[gone]
        if gone != rep and gone in mf.value_names:
            mf.value_names[rep] = tuple(dict.fromkeys(mf.value_names.get(rep, ()) + mf.value_names[gone]))
    removed = 0
    for b in mf.blocks:
        kept = []
        for ins in b.instrs:
            if ins.opcode == IMPLICIT_DEF and isinstance(ins.operands[0], VOp) \
                    and ins.operands[0].reg.id in started:
                continue
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
