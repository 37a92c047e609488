"""The natural loops shared by hoisting, dead-loop removal, divergence and the selector
(ptx2sass/loop_nest.py): the definition's loops on random graphs, found once per CFG state
and found again after a pass changes the CFG."""
from __future__ import annotations

import random

import pytest

from ptx2sass import codegen, ir, loop_nest
from ptx2sass.frontend import check, parse


def _graph(rng: random.Random, n: int) -> ir.Function:
    fn = ir.Function("f", True)
    blocks = [fn.new_block(f"b{k}") for k in range(n)]
    for k, b in enumerate(blocks):
        for t in rng.sample(range(n), min(n, rng.choice((0, 1, 1, 2, 2, 3)))):
            if t != 0 or rng.random() < 0.3:
                b.succs.append(blocks[t])
                blocks[t].preds.append(b)
        if k + 1 < n and rng.random() < 0.7 and blocks[k + 1] not in b.succs:
            b.succs.append(blocks[k + 1])            # mostly chains: deep nests, some irreducible
            blocks[k + 1].preds.append(b)
    return fn


def _reached(start: ir.Block, without: ir.Block | None = None) -> set[int]:
    seen, work = set(), [start]
    while work:
        b = work.pop()
        if b is without or id(b) in seen:
            continue
        seen.add(id(b))
        work.extend(b.succs)
    return seen


def _definition(fn: ir.Function) -> dict[int, set[int]]:
    """Header id -> body by the definition: d dominates x when x is not reached from the
    entry without passing d; an edge x -> h whose target dominates its source is a back
    edge; the body is h and every reached block that reaches such an x without passing h."""
    reached = _reached(fn.entry)
    blocks = [b for b in fn.blocks if id(b) in reached]
    dom = {id(d): {id(x) for x in blocks if d is x or id(x) not in _reached(fn.entry, d)} for d in blocks}
    loops: dict[int, set[int]] = {}
    for x in blocks:
        for h in x.succs:
            if id(x) in dom[id(h)]:
                body = loops.setdefault(id(h), {id(h)})
                body |= {id(y) for y in blocks if y is not h and id(x) in _reached(y, h)}
    return loops


@pytest.mark.parametrize("seed", range(300))
def test_natural_loops_are_the_definitions(seed):
    rng = random.Random(seed)
    fn = _graph(rng, rng.randint(2, 14))
    found = loop_nest.ir_loops(fn).by_header
    assert {h: body for h, (_, body) in found.items()} == _definition(fn)


def test_deep_nest_is_walked_once_per_block():
    """N nested loops: each block is walked back through once (a walk per loop was ~N^2/2)."""
    fn = ir.Function("f", True)
    n = 200
    heads = [fn.new_block(f"h{k}") for k in range(n)]
    tails = [ir.Block(f"t{k}") for k in range(n)]
    fn.blocks += tails[::-1]

    def edge(a, b):
        a.succs.append(b)
        b.preds.append(a)
    for k in range(n - 1):
        edge(heads[k], heads[k + 1])
    edge(heads[-1], tails[-1])
    for k in range(n):
        edge(tails[k], heads[k])                     # the latch
        if k:
            edge(tails[k], tails[k - 1])             # the exit into the enclosing loop
    walked = []

    class Counting(list):
        """A predecessor list that counts the times it is read (dominators and the CFG
        state read it too: a few times per block; a walk per loop read it n^2 = 40,000
        times)."""
        def __iter__(self):
            walked.append(1)
            return super().__iter__()
    for b in fn.blocks:
        b.preds = Counting(b.preds)
    loops = loop_nest.ir_loops(fn).by_header
    assert len(loops) == n
    assert sorted(len(body) for _, body in loops.values()) == [2 * k for k in range(1, n + 1)]
    assert len(walked) <= 20 * n, len(walked)


def _lowered(ptx: str) -> ir.Function:
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    return codegen.lower_checked(module, True).functions[0]


DEAD_LOOP = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{
    .reg .u32 %r<4>;
    .reg .pred %p<2>;
    .reg .u64 %rd<2>;
    ld.param.u32 %r2, [n];
    mov.u32 %r1, 0;
L:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, %r2;
    @%p1 bra L;
    ld.param.u64 %rd1, [p];
    st.global.u32 [%rd1], %r2;
    ret;
}
"""


def test_loops_are_found_again_after_a_pass_changes_the_cfg():
    """Hoisting reads the loops (and leaves the CFG as it is: the same answer is kept);
    dead-loop removal deletes the loop, and what reads the loops next gets none."""
    from ptx2sass.opt.dead_loops import remove_dead_loops
    from ptx2sass.opt.hoist_invariants import hoist_loop_invariants
    fn = _lowered(DEAD_LOOP)
    hoist_loop_invariants(fn)
    before = loop_nest.ir_loops(fn)
    assert len(before.by_header) == 1
    assert loop_nest.ir_loops(fn) is before          # same CFG: found once
    assert remove_dead_loops(fn)
    after = loop_nest.ir_loops(fn)
    assert after is not before and after.by_header == {}
    assert set(after.idom) == set(fn.blocks)


def test_an_edge_changed_in_place_finds_the_new_loops():
    """A back edge added by rewriting successor lists (no new block, same block order)."""
    fn = ir.Function("f", True)
    a, b, c = (fn.new_block(x) for x in "abc")
    for x, y in ((a, b), (b, c)):
        x.succs.append(y)
        y.preds.append(x)
    assert loop_nest.ir_loops(fn).by_header == {}
    c.succs.append(b)
    b.preds.append(c)
    assert loop_nest.ir_loops(fn).by_header == {id(b): (b, {id(b), id(c)})}
