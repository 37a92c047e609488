"""The blocks a divergent branch may lead to (`divergence.after_divergent_branches`, where a
`.sync.aligned` setmaxnreg gets its WARPSYNC first) are computed once with the divergent
values, when the selector is made, not on first use: a uniform branch adds nothing, a
divergent one everything after it (no reconvergence assumed)."""
from ptx2sass import ir
from ptx2sass.divergence import after_divergent_branches
from ptx2sass.isel.select import Selector
from ptx2sass.encoder.arch import target


def _diamond_then_branch(divergent_first: bool):
    """entry -(p)-> a | b -> join -(q)-> c | exit; p divergent or q divergent."""
    p, q = ir.Value(0, "pred"), ir.Value(1, "pred")
    entry, a, b, join, c, exit_ = (ir.Block(n) for n in ("entry", "a", "b", "join", "c", "exit"))
    entry.instrs = [ir.Instr("bra", guard=p)]
    join.instrs = [ir.Instr("bra", guard=q)]
    for x, y in ((entry, a), (entry, b), (a, join), (b, join), (join, c), (join, exit_), (c, exit_)):
        ir.link(x, y)
    fn = ir.Function("k", True, blocks=[entry, a, b, join, c, exit_], next_value_id=2)
    return fn, {p.id if divergent_first else q.id}


def test_after_a_divergent_branch_everything():
    fn, divergent = _diamond_then_branch(True)
    assert {b.name for b in after_divergent_branches(fn, divergent)} == {"a", "b", "join", "c", "exit"}


def test_uniform_branches_add_nothing():
    fn, divergent = _diamond_then_branch(False)
    assert {b.name for b in after_divergent_branches(fn, divergent)} == {"c", "exit"}
    assert after_divergent_branches(fn, set()) == set()


def test_the_selector_has_them_from_the_start():
    fn, _ = _diamond_then_branch(True)
    sel = Selector(fn, target("sm_90"), None)
    assert sel.diverged_blocks == after_divergent_branches(fn, sel.divergent)
