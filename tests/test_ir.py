"""IR invariants: dominators on hand-drawn CFGs, and the verifier rejects broken SSA."""
import pytest

from ptx2sass import ir


def cfg(edges: str):
    """Build a function from 'a>b a>c b>d c>d' (the first node is the entry)."""
    fn = ir.Function("f", True)
    blocks = {}
    for edge in edges.split():
        for name in edge.split(">"):
            if name not in blocks:
                blocks[name] = fn.new_block(name)
    for edge in edges.split():
        a, b = edge.split(">")
        ir.link(blocks[a], blocks[b])
    return fn, blocks


def idoms(fn):
    return {b.name: (d.name if d else None) for b, d in ir.dominators(fn).items()}


def test_diamond_dominators():
    fn, _ = cfg("a>b a>c b>d c>d")
    assert idoms(fn) == {"a": None, "b": "a", "c": "a", "d": "a"}


def test_loop_and_irreducible_dominators():
    # The classic example from Cooper, Harvey & Kennedy (figure 4), nodes renamed.
    fn, _ = cfg("r>x r>y x>z y>w z>w w>z")
    assert idoms(fn) == {"r": None, "x": "r", "y": "r", "z": "r", "w": "r"}
    fn, _ = cfg("e>h h>b b>h h>x")
    assert idoms(fn) == {"e": None, "h": "e", "b": "h", "x": "h"}


def test_reverse_postorder_starts_at_entry_and_is_deterministic():
    fn, _ = cfg("a>b a>c b>d c>d")
    assert [b.name for b in ir.reverse_postorder(fn)] == ["a", "c", "b", "d"]


def _diamond_with_phi():
    fn, b = cfg("a>l a>r l>j r>j")
    x = fn.new_value("u32")
    y = fn.new_value("u32")
    z = fn.new_value("u32")
    p = fn.new_value("pred")
    b["a"].instrs.append(ir.Instr("setp", [p], [ir.Const(1, "u32"), ir.Const(2, "u32")], ("lt",), "u32"))
    b["a"].instrs.append(ir.Instr("bra", guard=p))
    b["l"].instrs.append(ir.Instr("mov", [x], [ir.Const(1, "u32")], type="u32"))
    b["r"].instrs.append(ir.Instr("mov", [y], [ir.Const(2, "u32")], type="u32"))
    b["j"].phis.append(ir.Phi(z, [(b["l"], x), (b["r"], y)]))
    b["j"].instrs.append(ir.Instr("ret"))
    return fn, b, (x, y, z, p)


def test_valid_ssa_verifies_and_dumps():
    fn, _, _ = _diamond_with_phi()
    ir.verify(fn)
    text = ir.dump_function(fn)
    assert "%2:u32 = phi [l: %0], [r: %1]" in text
    assert "@%3 bra" in text


def test_verifier_rejects_double_definition():
    fn, b, (x, *_ ) = _diamond_with_phi()
    b["r"].instrs.append(ir.Instr("mov", [x], [ir.Const(3, "u32")], type="u32"))
    with pytest.raises(ir.IRError, match="defined twice"):
        ir.verify(fn)


def test_verifier_rejects_non_dominating_use():
    fn, b, (x, *_ ) = _diamond_with_phi()
    b["j"].instrs.insert(0, ir.Instr("add", [fn.new_value("u32")], [x, x], type="u32"))
    with pytest.raises(ir.IRError, match="does not dominate"):
        ir.verify(fn)


def test_verifier_rejects_use_before_def_and_bad_phi():
    fn, b, (x, y, z, p) = _diamond_with_phi()
    b["a"].instrs.insert(0, ir.Instr("not", [fn.new_value("pred")], [p], type="pred"))
    with pytest.raises(ir.IRError, match="before its definition"):
        ir.verify(fn)
    fn, b, (x, y, z, p) = _diamond_with_phi()
    b["j"].phis[0].incoming.pop()
    with pytest.raises(ir.IRError, match="does not match its predecessors"):
        ir.verify(fn)


def test_verifier_rejects_terminator_mid_block():
    fn, b, _ = _diamond_with_phi()
    b["j"].instrs.insert(0, ir.Instr("ret"))
    with pytest.raises(ir.IRError, match="terminator"):
        ir.verify(fn)


def _random_cfg(rng, n: int):
    fn = ir.Function("f", True)
    blocks = [fn.new_block(f"b{k}") for k in range(n)]
    for k, b in enumerate(blocks):
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3)) if k else 2):
            ir.link(b, rng.choice(blocks))
    return fn, blocks


def _reached(starts, step):
    seen, work = {id(s): s for s in starts}, list(starts)
    while work:
        for t in step(work.pop()):
            if id(t) not in seen:
                seen[id(t)] = t
                work.append(t)
    return list(seen.values())


def _brute_dominators(nodes, roots, step):
    """Each node's dominators by definition: the nodes without which it is not reached."""
    out = {}
    for v in nodes:
        out[id(v)] = {id(v)} | {id(d) for d in nodes if d is not v
                                and all(x is not v for x in _reached([r for r in roots if r is not d],
                                                                     lambda x: [] if x is d else step(x)))}
    return out


def test_immediate_dominators_and_components_match_their_definitions():
    """The Cooper-Harvey-Kennedy helper (dominators from several roots; with predecessors as
    the direction, post-dominators) and Tarjan's components against brute force on random
    graphs, loops and irreducible ones included."""
    import random
    rng = random.Random(7)
    for _ in range(60):
        fn, blocks = _random_cfg(rng, rng.randint(2, 12))
        reach = _reached([fn.entry], lambda b: b.succs)
        for roots, forward, backward in (([fn.entry], lambda b: b.succs, lambda b: b.preds),
                                         ([b for b in reach if not b.succs],
                                          lambda b: [p for p in b.preds if any(p is r for r in reach)],
                                          lambda b: b.succs)):
            nodes = _reached(roots, forward)
            brute = _brute_dominators(nodes, roots, forward)
            idom = ir.immediate_dominators(roots, forward, backward)
            assert set(idom) == {id(v) for v in nodes}
            for v in nodes:
                chain, d = {id(v)}, idom[id(v)]
                while d is not None:
                    chain.add(id(d))
                    d = idom[id(d)]
                assert chain == brute[id(v)], v.name
        comp = ir.components([fn.entry], lambda b: b.succs)
        for a in reach:
            ahead = {id(x) for x in _reached([a], lambda b: b.succs)}
            for b in reach:
                behind = any(x is a for x in _reached([b], lambda b: b.succs))
                assert (comp[id(a)] == comp[id(b)]) == (id(b) in ahead and behind)
                if id(b) in ahead:
                    assert comp[id(a)] >= comp[id(b)]    # what reaches b is numbered >= b
