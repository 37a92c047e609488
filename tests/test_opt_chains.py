"""A chain of constant arithmetic folded in one pass (issue 21: a 1 MB line of 40,000
`add %r1, %r1, k` from `mov %r1, 0` took the four optimisation rounds, each halving the
chain by reassociation, and left 2,500 adds behind): constant folding sees the constants
earlier folds of the same pass made."""
from __future__ import annotations

from ptx2sass import frontend
from ptx2sass.frontend.to_ssa import lower_module
from ptx2sass.opt import fold, optimise, propagate

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"
N = 300


def _function(first: str):
    body = (f".reg .u32 %r1;\n.reg .u64 %rd1;\nld.param.u64 %rd1, [p];\n{first}\n"
            + " ".join(f"add.u32 %r1, %r1, {i % 7 + 1};" for i in range(N))
            + "\nst.global.u32 [%rd1], %r1;\nret;")
    module = frontend.parse(HEADER + ".visible .entry k(.param .u64 p)\n{\n" + body + "\n}\n", "x.ptx")
    frontend.check(module, "sm_89")
    return lower_module(module).functions[0]


def _instrs(fn):
    return [ins for b in fn.blocks for ins in b.instrs]


def _total() -> int:
    return sum(i % 7 + 1 for i in range(N))


def test_constant_chain_folds_in_one_pass():
    fn = _function("mov.u32 %r1, 5;")
    propagate.propagate_copies(fn)
    assert fold.fold_constants(fn) is True
    assert not [ins for ins in _instrs(fn) if ins.opcode == "add"]
    store = next(ins for ins in _instrs(fn) if ins.opcode == "st")
    movs = {ins.dests[0].id: ins.srcs[0] for ins in _instrs(fn) if ins.opcode == "mov"}
    assert movs[store.srcs[1].id].value == 5 + _total()


def test_optimised_constant_chain_leaves_no_add():
    fn = _function("mov.u32 %r1, 5;")
    optimise(fn)
    assert not [ins for ins in _instrs(fn) if ins.opcode == "add"]
