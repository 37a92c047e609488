"""Work that nested loops made quadratic for nothing (issue 21: nestloops:300 took ~8.8x
ptxas's CPU time). Counted, not timed: questions asked and analyses run whose answers
nothing reads."""
from __future__ import annotations

import sys

from ptx2sass import codegen, ir
from ptx2sass.regalloc import allocate, coalesce_parts, prespill

from test_branch_scaling import nested_loops
from test_regalloc_memory import _held


def test_hoisting_asks_about_exits_only_for_blocks_that_load(monkeypatch):
    """Only a load's move depends on whether its block dominates the loop's exits; every
    block of every enclosing loop's body was asked (~3N^2/2 questions for N nested loops,
    ~2,400 at 40). The loops here load nothing: no question is asked inside them."""
    asked = []
    real = ir.dominance

    def counting(idom):
        answer = real(idom)
        if sys._getframe(1).f_code.co_name == "hoist_loop_invariants":
            return lambda a, b: asked.append((a, b)) or answer(a, b)
        return answer
    monkeypatch.setattr(ir, "dominance", counting)
    codegen.compile_ptx(nested_loops(40), "sm_89")
    assert len(asked) <= 40, len(asked)


def test_part_coalescing_solves_liveness_only_when_a_copy_asks(monkeypatch):
    """Without a copy between a wide register's part and a scalar, no liveness is needed
    (it was solved twice per function before looking)."""
    solved = []
    real = coalesce_parts.liveness
    monkeypatch.setattr(coalesce_parts, "liveness", lambda *a: solved.append(1) or real(*a))
    codegen.compile_ptx(nested_loops(20), "sm_89")
    assert not solved


def test_prespill_counts_pressure_once_when_only_general_registers_spill(monkeypatch):
    """The pressure after the last class's pre-spill is read by nothing (a whole liveness
    solution and walk of the function)."""
    counted = []
    real = prespill.pressures
    monkeypatch.setattr(prespill, "pressures", lambda mf, *a: counted.append(1) or real(mf, *a))
    mf = _held(prespill.PRESPILL_ABOVE + 20)
    assert prespill.prespill(mf, allocate.registers_of(), lambda vids: None,
                             lambda: allocate.spill_costs(mf)) > 0
    assert len(counted) == 1


def test_prespill_solves_liveness_once_when_only_general_registers_spill(monkeypatch):
    """The choice of values to spill reads the liveness the pressure count just solved on
    the same code (it solved it again: a whole solution over the function, ~0.1 s at
    300 nested loops)."""
    solved = []
    real = prespill.liveness
    monkeypatch.setattr(prespill, "liveness", lambda *a: solved.append(1) or real(*a))
    mf = _held(prespill.PRESPILL_ABOVE + 20)
    assert prespill.prespill(mf, allocate.registers_of(), lambda vids: None,
                             lambda: allocate.spill_costs(mf)) > 0
    assert len(solved) == 1


def _phis_made(ptx: str) -> int:
    from ptx2sass.frontend import check, parse, to_ssa
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    made = []
    real = to_ssa._FunctionLowering.new_phi

    def counting(self, var, block):
        made.append(1)
        return real(self, var, block)
    to_ssa._FunctionLowering.new_phi = counting
    try:
        codegen.lower_checked(module, True)
    finally:
        to_ssa._FunctionLowering.new_phi = real
    return len(made)


def test_ssa_construction_makes_phis_linear_in_loop_nesting():
    """Reading a loop's counter after the loops nested in it went through every inner
    header, and each made a phi, removed again as trivial: ~N^2/2 phis for N nested loops
    (5,350 at 100 levels, 46,050 at 300). A header where no path from its dominator names
    the variable takes the dominator's value without one: 120 phis for 40 levels, 360 for
    120 (940 and 7,620 before)."""
    small, large = _phis_made(nested_loops(40)), _phis_made(nested_loops(120))
    assert large <= 3.2 * small, (small, large)


def _region_blocks_walked(ptx: str) -> int:
    """Blocks `_same_as_dominator` walks (each reads `named` once) while lowering `ptx`."""
    from ptx2sass.frontend import check, parse, to_ssa
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    reads = []

    class Counting(dict):
        def __getitem__(self, key):
            reads.append(1)
            return dict.__getitem__(self, key)
    real = to_ssa._FunctionLowering._name_variables

    def naming(self):
        real(self)
        self.named = Counting(self.named)
    to_ssa._FunctionLowering._name_variables = naming
    try:
        codegen.lower_checked(module, True)
    finally:
        to_ssa._FunctionLowering._name_variables = real
    return len(reads)


def test_ssa_join_regions_walk_each_level_once():
    """Whether a join may take its dominator's value (`_same_as_dominator`) looks at the
    blocks between the two: for N nested lane-varying ifs each join's region is the whole
    inner nest, walked block by block (~N^2/2 blocks: 30 levels 992, 90 levels 8,372). An
    inner join's region, once known, is taken whole (it lies in the outer one): 151, 451."""
    from test_reconverge_deep import nested_ifs
    small, large = _region_blocks_walked(nested_ifs(30)), _region_blocks_walked(nested_ifs(90))
    assert large <= 3.5 * small, (small, large)


def test_hoisting_looks_at_what_stays_in_an_inner_loop_once(monkeypatch):
    """Loops are hoisted from innermost out; an instruction that stays in an inner loop for
    good (it reads a phi of that loop, or the result of another that stays) stays in every
    enclosing loop, and each enclosing loop asked `_movable` about it again: ~N^2/2
    questions for N nested loops (2,540 at 40 levels, 22,020 at 120; now 122 and 362)."""
    from ptx2sass.opt import hoist_invariants

    def asked(n: int) -> int:
        calls = []
        real = hoist_invariants._movable
        monkeypatch.setattr(hoist_invariants, "_movable", lambda *a: calls.append(1) or real(*a))
        codegen.compile_ptx(nested_loops(n), "sm_89")
        monkeypatch.setattr(hoist_invariants, "_movable", real)
        return len(calls)
    small, large = asked(40), asked(120)
    assert large <= 3.2 * small, (small, large)


def test_crowded_loop_search_walks_each_block_once_per_change(monkeypatch):
    """`remat_invariants` weighs every loop over the pressure limit: it counted each block's
    pressure again for every loop around it and gathered the registers written in the
    loop's whole body, ~N^2/2 blocks and instructions for N nested loops. A block's pressure
    is now counted once per state of the function and a register's writers say whether the
    loop writes it: calls to `_pressure` and `register_operands` grow with the code (limit
    2 here so that every loop is weighed; 30 -> 90 loops: 7,387 -> 65,887 calls before,
    8.9x; now 455 -> 1,415)."""
    from ptx2sass.isel import remat_invariants as remat

    def calls(n: int) -> int:
        made = []
        real_run, real_pressure = remat.remat_invariants, remat._pressure
        real_operands = remat.register_operands
        monkeypatch.setattr(remat, "_pressure", lambda *a: made.append(1) or real_pressure(*a))
        monkeypatch.setattr(remat, "register_operands", lambda i: made.append(1) or real_operands(i))
        monkeypatch.setattr(codegen, "remat_invariants", lambda mf, limit=None, **kw: real_run(mf, 2, **kw))
        codegen.compile_ptx(nested_loops(n), "sm_89")
        monkeypatch.undo()
        return len(made)
    small, large = calls(30), calls(90)
    assert large <= 3.5 * small, (small, large)


def test_crowded_loop_candidates_found_once_per_change(monkeypatch):
    """Each crowded loop asked of every register live through it whether it is a candidate
    (its writers, its readers, the instruction's kind): ~N^2/2 questions for N nested loops,
    with hundreds of registers live through each loop and nearly none of them candidates.
    What makes a register a candidate in any loop is now found once per state of the code,
    and a loop checks only those among its live-in registers. Counted: the Python calls
    `remat_invariants.py` makes or runs (limit 2: every loop weighed), 30 vs 90 loops."""
    from ptx2sass.isel import remat_invariants as remat

    def calls(n: int) -> int:
        from ptx2sass.frontend import check, parse
        module = parse(nested_loops(n), "d.ptx")
        check(module, "sm_89", whole_program=True)
        lowered = codegen.lower_checked(module, True)
        made = []
        real_run = remat.remat_invariants

        def counting(frame, event, arg):
            if event in ("call", "c_call") and frame.f_code.co_filename == remat.__file__:
                made.append(1)

        def run(mf, limit=None, **kw):
            sys.setprofile(counting)
            try:
                return real_run(mf, 2)          # (the liveness it could hand on: not asked)
            finally:
                sys.setprofile(None)
        monkeypatch.setattr(codegen, "remat_invariants", run)
        codegen.compile_module(lowered, "sm_89")
        monkeypatch.undo()
        return len(made)
    small, large = calls(30), calls(90)
    assert large <= 5 * small, (small, large)


def test_hoisting_reads_each_blocks_code_once_while_it_stays(monkeypatch):
    """Each loop of a nest looked at every instruction of its whole body to learn whether
    the body only computes (`is_pure` on each) and what it defines: ~N^2/2 instructions
    for N nested loops (1,884 calls at 40 levels, 15,244 at 120: 8.1x). A block's summary
    is now kept while its instruction list stays the same, and blocks whose instructions
    all stay for good are not walked again: 246 and 726 (3.0x)."""
    from ptx2sass.opt import hoist_invariants

    def asked(n: int) -> int:
        calls = []
        real = hoist_invariants.is_pure
        monkeypatch.setattr(hoist_invariants, "is_pure", lambda i: calls.append(1) or real(i))
        codegen.compile_ptx(nested_loops(n), "sm_89")
        monkeypatch.undo()
        return len(calls)
    small, large = asked(40), asked(120)
    assert large <= 3.5 * small, (small, large)


def _drained_lines(ptx: str) -> int:
    """Lines run inside `assign_controls`' `drained` while compiling `ptx`."""
    lines = [0]

    def local(frame, event, arg):
        if event == "line":
            lines[0] += 1
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_name == "drained" else None
    sys.settrace(calls)
    try:
        codegen.compile_ptx(ptx)
    finally:
        sys.settrace(None)
    return lines[0]


def test_block_starts_drain_only_recent_latencies():
    """Each block start drains the fixed latencies still pending (`drained`): it walked every
    register written so far, so N nested loops (~3N block starts, ~N registers) cost ~N^2 steps
    (lines run in it: 30 levels 11,776, 90 levels 89,236). Newest first, it stops at a write
    old enough to have drained by now: 633 and 1,893."""
    small, large = _drained_lines(nested_loops(30)), _drained_lines(nested_loops(90))
    assert large <= 3.5 * small, (small, large)
