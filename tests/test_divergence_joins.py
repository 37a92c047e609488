"""`divergence._joins`: the blocks where paths from different successors of a branch first
meet. It labels the blocks up to the branch's immediate post-dominator, what flows back
from past it bringing the post-dominator's label (it used to label everything the branch
reaches whenever something flowed back: quadratic for nested loops). Checked on small
random graphs (loops, irreducible ones, blocks that reach no exit) against the definition
worked out the plain way: Cytron et al.'s iterated join set of the branch's out-edges, i.e.
their iterated dominance frontier (dominators by the set equations, frontiers by their
definition, over the whole of what the branch reaches)."""
from __future__ import annotations

import random

from ptx2sass import divergence, ir
from ptx2sass.divergence import _joins


def _reference(branch: ir.Block) -> set[int]:
    """Iterated dominance frontier of the branch's out-edges (each split by a node of its
    own) in the graph of everything the branch reaches without passing it again."""
    region = ir.reverse_postorder_from(branch)[1:]
    ids = {id(b) for b in region}
    succs = [s for s in dict.fromkeys(branch.succs) if id(s) in ids]
    nodes = ["branch"] + [("edge", id(s)) for s in succs] + [id(x) for x in region]
    preds: dict = {n: set() for n in nodes}
    for s in succs:
        preds[("edge", id(s))].add("branch")
        preds[id(s)].add(("edge", id(s)))
    for x in region:
        preds[id(x)].update(id(p) for p in x.preds if id(p) in ids)
    dom = {n: set(nodes) for n in nodes}
    dom["branch"] = {"branch"}
    changed = True
    while changed:
        changed = False
        for n in nodes[1:]:
            new = set(nodes)
            for p in preds[n]:
                new &= dom[p]
            new |= {n}
            if new != dom[n]:
                dom[n], changed = new, True
    frontier: dict = {n: set() for n in nodes}
    for y in nodes:
        for p in preds[y]:
            for x in dom[p]:
                if x == y or x not in dom[y]:        # x dominates a predecessor, not y
                    frontier[x].add(y)
    closure: set = set()
    work = [("edge", id(s)) for s in succs]
    while work:
        for y in frontier[work.pop()]:
            if y not in closure:
                closure.add(y)
                work.append(y)
    return {y for y in closure if isinstance(y, int)}


def _graph(rng: random.Random, n: int) -> list[ir.Block]:
    blocks = [ir.Block(f"b{k}") for k in range(n)]
    for k, b in enumerate(blocks[:-1]):
        kind = rng.random()
        if kind < 0.15 and k:
            continue                                   # an exit
        targets = [blocks[k + 1]]                      # fall through
        if kind > 0.4:
            targets.append(rng.choice(blocks[1:]))     # forward or back: loops, irreducible
        if kind > 0.9:
            targets.append(rng.choice(blocks[1:]))
        for t in dict.fromkeys(targets):
            ir.link(b, t)
    return blocks


def _analyses(fn: ir.Function):
    """What `divergent_values` hands `_joins`: post-dominators and components."""
    idom = ir.dominators(fn)
    blocks = [b for b in fn.blocks if b in idom]
    ipdom = ir.immediate_dominators([b for b in blocks if not b.succs],
                                    lambda b: [p for p in b.preds if p in idom], lambda b: b.succs)
    return blocks, ipdom, ir.components([fn.entry], lambda b: b.succs)


def test_joins_hold_the_plain_definition_on_random_graphs():
    """Every join of the definition is found (a missed one would leave a phi uniform that
    lanes reach apart); labels swept in a fixed order may add a few more where a loop's
    labels settle late (conservative), here in under 3% of the branches."""
    rng = random.Random(21)
    checked = bounded = extra = 0
    for _ in range(1500):
        blocks = _graph(rng, rng.randint(3, 14))
        fn = ir.Function(name="f", is_entry=True, blocks=blocks)
        reachable, ipdom, component = _analyses(fn)
        for b in reachable:
            if len(set(map(id, b.succs))) < 2:
                continue
            meet = ipdom.get(id(b))
            got, want = _joins(b, meet, component, len(reachable)), _reference(b)
            assert want <= got, [x.name for x in blocks if id(x) in want - got]
            checked += 1
            bounded += meet is not None
            extra += got != want
    assert checked > 4000 and bounded > 2000 and extra < 0.03 * checked, (checked, bounded, extra)


def _nest(n: int):
    """N nested do-while loops: heads H0..H(n-1) (the innermost is its own latch), latches
    L(n-2)..L0 each leaving to the next outer latch."""
    pre = ir.Block("entry")
    heads = [ir.Block(f"H{k}") for k in range(n)]
    latches = {k: ir.Block(f"L{k}") for k in range(n - 1)}
    end = ir.Block("end")
    ir.link(pre, heads[0])
    for k in range(n - 1):
        ir.link(heads[k], heads[k + 1])
    chain = [heads[n - 1]] + [latches[k] for k in reversed(range(n - 1))] + [end]
    for k, b in zip(reversed(range(n)), chain):
        ir.link(b, heads[k])                                   # back edge
        ir.link(b, chain[chain.index(b) + 1])
    fn = ir.Function(name="f", is_entry=True, blocks=[pre, *heads, *latches.values(), end])
    return fn, heads, latches


def test_nested_loop_latch_joins_at_its_header_only():
    """Latch k of nested loops: lanes that left loop k and came back through the enclosing
    loops meet those still in it at its header, nowhere else (the outermost loop is not
    re-entered: no join)."""
    fn, heads, latches = _nest(6)
    reachable, ipdom, component = _analyses(fn)
    for k, latch in latches.items():
        got = _joins(latch, ipdom[id(latch)], component, len(reachable))
        assert got == _reference(latch) == ({id(heads[k])} if k else set()), k


def test_nested_loop_latches_are_not_walked_past_their_post_dominator(monkeypatch):
    """Every latch of a nest has the enclosing loops flowing back into its loop's header;
    those paths bring the post-dominator's label instead of a walk of the whole nest for
    each latch (quadratic: 2N blocks per latch)."""
    fn, heads, latches = _nest(30)
    reachable, ipdom, component = _analyses(fn)
    walked = []
    real = divergence._walk
    monkeypatch.setattr(divergence, "_walk", lambda b, stop: walked.append(stop) or real(b, stop))
    for latch in latches.values():
        _joins(latch, ipdom[id(latch)], component, len(reachable))
    assert walked and None not in walked
