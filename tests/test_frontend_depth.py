"""Deeply nested input against ptxas: blocks, parentheses and unary signs up to the depth
ptxas's parser stack holds (then its "memory exhausted" at the same token), and flat chains
of any length; never a Python recursion error."""
from __future__ import annotations

import pytest

from ptx2sass import cli, oracle

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _kernel(statements: str) -> str:
    return (HEADER + ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r1;\n.reg .u64 %rd1;\n"
            "ld.param.u64 %rd1, [p];\nmov.u32 %r1, 0;\n" + statements +
            "st.global.u32 [%rd1], %r1;\nret;\n}\n")


def _operand(expression: str) -> str:
    return _kernel(f"mov.u32 %r1, {expression};\n")


CASES = {
    "blocks_1663": _kernel("{\n" * 1663 + "add.u32 %r1, %r1, 1;\n" + "}\n" * 1663),
    "blocks_3000": _kernel("{\n" * 3000 + "add.u32 %r1, %r1, 1;\n" + "}\n" * 3000),
    "parens_9978": _operand("(" * 9978 + "1" + ")" * 9978),
    "parens_9979": _operand("(" * 9979 + "1" + ")" * 9979),
    "parens_9980": _operand("(" * 9980 + "1" + ")" * 9980),
    "parens_20000": _operand("(" * 20000 + "1" + ")" * 20000),
    "minus_4989": _operand("-" * 4989 + "1"),
    "minus_4990": _operand("-" * 4990 + "1"),
    "minus_4991": _operand("-" * 4991 + "1"),
    "minus_parens_4000": _operand("-(" * 4000 + "1" + ")" * 4000),
    "chain_100000": _operand("1" + "+1" * 100000),
    "chain_minus_mixed": _operand("7" + "-1+2*1" * 2000),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nesting_as_deep_as_ptxas_takes(name, tmp_path, capsys, monkeypatch):
    theirs = oracle._run_cached("ptxas", ["-arch=sm_89", "x.ptx", "-o", "out.o"],
                                {"x.ptx": CASES[name].encode()}, "out.o")
    (tmp_path / "x.ptx").write_text(CASES[name])
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(["-arch=sm_89", "x.ptx", "-o", "out.o"])
    err = capsys.readouterr().err.replace("ptx2sass ", "ptxas ")
    assert (rc, err) == (theirs.returncode, theirs.stderr)


def test_folded_chain_keeps_its_value():
    """`sym + 1 + 2` and a literal chain read as one node with the value of the whole."""
    from ptx2sass.frontend import ast, parse
    module = parse(_operand("1" + "+2" * 50 + "-3*1") + ".global .u32 g[64];\n"
                   ".visible .entry k2(.param .u64 p)\n{\n.reg .u64 %rd1;\n"
                   "mov.u64 %rd1, g+4+8-2;\nret;\n}\n", "x.ptx")
    entry, k2 = module.entries()
    mov = [st for st in entry.body.statements if type(st) is ast.Instruction
           and st.opcode == "mov"][-1]
    assert type(mov.operands[1]) is ast.IntLit and mov.operands[1].value == 1 + 2 * 50 - 3
    mov2 = next(st for st in k2.body.statements if type(st) is ast.Instruction)
    addr = mov2.operands[1]
    assert type(addr) is ast.Binary and addr.left.name == "g" and addr.right.value == 10
