"""The code generator's work grows linearly with the number of branches (issue 21).

A diamond per branch (`@p bra L; add; L:` N times) made the backend quadratic: each
divergent branch walked everything after it (its joins, the exits it reaches), post-
dominators were a bit set per block, and each region's barrier was checked against every
other region: 1000 diamonds took 8 s where ptxas takes 0.3 s. Early exits that never meet
again walked everything after each of them for joins that cannot exist; each loop left by
a divergent branch was looked for among all loops, for every branch and every value read;
coalescing scanned the whole neighbour set of the register that lives through every loop
(the accumulator) for each of its copies. Counted, not timed: the
Python calls (and calls of built-ins) made while compiling 4x the diamonds stay near 4x.
"""
from __future__ import annotations

import sys
from collections import Counter

import pytest

from ptx2sass import codegen
from ptx2sass.frontend import check, parse


def diamonds(n: int) -> str:
    """N divergent diamonds in a row (the value is loaded, so every branch is divergent and
    gets a BSSY/BSYNC region), the result stored so nothing is dead. Each side holds a
    volatile store, which if-conversion (opt/if_convert.py) leaves alone."""
    body = "".join(f"setp.lt.u32 %p, %r1, {k};\n@%p bra L{k};\nadd.u32 %r1, %r1, 1;\n"
                   f"st.volatile.global.u32 [%rd1+4], %r1;\nL{k}:\n" for k in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<2>;\n.reg .pred %p;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n" + body
            + "st.global.u32 [%rd1], %r1;\nret;\n}\n")


def converted_diamonds(n: int) -> str:
    """N diamonds around one add each: if-conversion (opt/if_convert.py) makes them one
    straight block of N compares and SELs, whose compares no predicate join reads (the
    compare-chain fold walked every pending compare at each definition: 15x the calls for
    4x the diamonds)."""
    body = "".join(f"setp.lt.u32 %p, %r1, {k};\n@%p bra L{k};\nadd.u32 %r1, %r1, 1;\nL{k}:\n"
                   for k in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<2>;\n.reg .pred %p;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n" + body
            + "st.global.u32 [%rd1], %r1;\nret;\n}\n")


def guards(n: int) -> str:
    """N divergent early exits in a row, each to a `ret` of its own: no branch has a
    reconvergence point, and the sides of each never meet again."""
    body = "".join(f"setp.eq.u32 %p, %r1, {k};\n@%p bra X{k};\nadd.u32 %r1, %r1, 3;\n" for k in range(n))
    exits = "".join(f"X{k}:\nst.global.u32 [%rd1+4], %r1;\nret;\n" for k in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<2>;\n.reg .pred %p;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n" + body
            + "st.global.u32 [%rd1], %r1;\nret;\n" + exits + "}\n")


def loops(n: int) -> str:
    """N loops in a row, each left when a lane-varying bound is reached (a divergent exit)."""
    body = "".join(f"mov.u32 %r2, 0;\nT{k}:\nadd.u32 %r2, %r2, 1;\nadd.u32 %r1, %r1, %r2;\n"
                   f"setp.lt.u32 %p, %r2, %r1;\n@%p bra T{k};\n" for k in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<3>;\n.reg .pred %p;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n" + body
            + "st.global.u32 [%rd1], %r1;\nret;\n}\n")


def _calls_per_file(ptx: str) -> Counter:
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    lowered = codegen.lower_checked(module, True)
    counts: Counter = Counter()

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            counts[frame.f_code.co_filename.rsplit("/", 1)[-1]] += 1
    sys.setprofile(count)
    try:
        cubin = codegen.compile_module(lowered, "sm_89", {"ptx_text": ptx, "ptx_ast": module}, "d.ptx")
    finally:
        sys.setprofile(None)
    assert cubin[:4] == b"\x7fELF"
    return counts


@pytest.mark.parametrize("shape", [diamonds, converted_diamonds, guards, loops])
def test_backend_work_is_linear_in_the_number_of_branches(shape):
    small, large = _calls_per_file(shape(60)), _calls_per_file(shape(240))
    assert sum(large.values()) <= 5 * sum(small.values()), (sum(small.values()), sum(large.values()))
    worst = {f: round(large[f] / small[f], 1) for f in large if small[f] > 200 and large[f] > 5 * small[f]
}
    assert not worst, worst          # the files whose work grew faster than the input


def logic_chain(n: int) -> str:
    """N statements on one line that do not fold (`mad.lo` and `xor` of loaded values,
    bench/memory_scaling.py's `lineops`): one block of N/2 LOP3s whose results no compare
    tests."""
    ops = " ".join("xor.b32 %r1, %r1, %r2;" if i % 2 else f"mad.lo.u32 %r1, %r1, {2 * i + 3}, %r2;"
                   for i in range(n))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<3>;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1+4];\n"
            + ops + "\nst.global.u32 [%rd1], %r1;\nret;\n}\n")


def test_backend_work_is_linear_in_a_long_block():
    """The LOP3-predicate fold kept every untested LOP3 of the block pending and walked all
    of them at each definition (lineops:5000 took 19 s of CPU, ptxas 0.1 s)."""
    small, large = _calls_per_file(logic_chain(100)), _calls_per_file(logic_chain(400))
    assert sum(large.values()) <= 5 * sum(small.values()), (sum(small.values()), sum(large.values()))
    worst = {f: round(large[f] / small[f], 1) for f in large if small[f] > 200 and large[f] > 5 * small[f]}
    assert not worst, worst


def test_every_diamond_is_a_divergent_region():
    """The premise of the count: our code brackets each diamond with BSSY/BSYNC, so the
    divergence and reconvergence passes do their work per branch (the sides' volatile
    stores keep if-conversion away; without them ours, like ptxas, has no branch here)."""
    from ptx2sass import oracle
    listing = oracle.nvdisasm(codegen.compile_ptx(diamonds(20), "sm_89"), ())
    assert listing.count("BSSY") == 20 and listing.count("BSYNC") == 20


def nested_loops(n: int) -> str:
    """N do-while loops nested in one another, each counting to a loaded bound: every loop
    header has a phi for each variable of the enclosing loops, and each of those reads the
    innermost header's (the latches fall through to one another)."""
    body = "".join(f"mov.u32 %c{k}, 0;\nH{k}:\n" for k in range(n)) + "mad.lo.u32 %r1, %r1, 5, 1;\n"
    body += "".join(f"add.u32 %c{k}, %c{k}, 1;\nsetp.lt.u32 %p{k}, %c{k}, %r0;\n@%p{k} bra H{k};\n"
                    for k in reversed(range(n)))
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<2>;\n.reg .u64 %rd1;\n"
            f".reg .pred %p<{n}>;\n.reg .u32 %c<{n}>;\n"
            "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nld.global.u32 %r0, [%rd1+4];\n"
            + body + "st.global.u32 [%rd1], %r1;\nret;\n}\n")


def _lowering_calls(ptx: str) -> Counter:
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    counts: Counter = Counter()

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            counts[frame.f_code.co_filename.rsplit("/", 1)[-1]] += 1
    sys.setprofile(count)
    try:
        codegen.lower_checked(module, True)
    finally:
        sys.setprofile(None)
    return counts


def test_ssa_construction_is_quadratic_at_most_in_loop_nesting():
    """Three times the nesting holds nine times the phis (each header one per enclosing
    loop's variable); removing the trivial ones took rounds over every block, as many as
    loops are nested: 60 vs 20 levels made 15.1x the calls in to_ssa.py (now 7.1x)."""
    small, large = _lowering_calls(nested_loops(20)), _lowering_calls(nested_loops(60))
    assert large["to_ssa.py"] <= 11 * small["to_ssa.py"], (small["to_ssa.py"], large["to_ssa.py"])


def test_converted_diamonds_are_one_block():
    """The premise of converted_diamonds' count: no branch is left (ptxas has none either)."""
    from ptx2sass import oracle
    ours = oracle.nvdisasm(codegen.compile_ptx(converted_diamonds(20), "sm_89"), ())
    theirs = oracle.nvdisasm(oracle.ptxas(converted_diamonds(20), "sm_89").output, ())
    for listing in (ours, theirs):
        assert "BSSY" not in listing and listing.count("BRA") == 1, listing   # the final self-branch


def _lines_run(ptx: str, files=("divergence.py", "reconverge.py")) -> Counter:
    """Lines executed in `files` while compiling `ptx` (a comprehension's or loop's every
    turn counts: a Python-level walk shows up however it is written)."""
    module = parse(ptx, "d.ptx")
    check(module, "sm_89", whole_program=True)
    lowered = codegen.lower_checked(module, True)
    counts: Counter = Counter()

    def trace(frame, event, arg):
        name = frame.f_code.co_filename.rsplit("/", 1)[-1]
        if name not in files:
            return None

        def lines(frame, event, arg):
            if event == "line":
                counts[(name, frame.f_lineno)] += 1
            return lines
        return lines
    sys.settrace(trace)
    try:
        codegen.compile_module(lowered, "sm_89", {"ptx_text": ptx, "ptx_ast": module}, "d.ptx")
    finally:
        sys.settrace(None)
    return counts


def test_divergence_and_reconvergence_work_is_quadratic_at_most_in_loop_nesting():
    """N nested loops, each left by a divergent branch: N regions whose bodies nest, so
    their sizes sum to ~N^2/2 and the per-region walks (joins, bodies) are quadratic in
    all. Gathering each region's neighbours went through every block of its body and every
    region touching that block: cubic (lines run in reconverge.py 11.3x for 3x the
    nesting, the neighbour gathering alone 25x)."""
    small, large = _lines_run(nested_loops(40)), _lines_run(nested_loops(120))
    for name in ("divergence.py", "reconverge.py"):
        s = sum(v for (f, _), v in small.items() if f == name)
        g = sum(v for (f, _), v in large.items() if f == name)
        assert g <= 10 * s, (name, s, g)
    worst = {k: round(large[k] / small[k], 1) for k in large
             if small[k] >= 2000 and large[k] > 12 * small[k]}
    assert not worst, worst


def test_loop_invariant_hoisting_is_quadratic_at_most_in_loop_nesting():
    """N nested loops: the loop bodies' blocks sum to ~N^2/2, and hoisting asked, for each
    such block, whether it dominates the loop's exits by walking up the dominator tree
    (as deep as the nesting): cubic, 17% of nestloops:300's compile. The answers now come
    from the tree's intervals (`ir.dominance`)."""
    files = ("hoist_invariants.py", "ir.py")
    small, large = (_lines_run(nested_loops(n), files) for n in (40, 120))
    for name in files:
        s = sum(v for (f, _), v in small.items() if f == name)
        g = sum(v for (f, _), v in large.items() if f == name)
        assert g <= 10 * s, (name, s, g)
