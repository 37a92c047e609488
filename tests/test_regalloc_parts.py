"""Interference per 32-bit part of a register, and colouring wide registers first.

A 128-bit load's parts read one after another die one after another: a value written
after a part's last read may take that part's register (ptxas's `FADD R16, R20, R16` into
the dying quad). Interference of whole registers kept the quad live until its last part
was read. Expected register counts come from ptxas's cubins (Triton corpus) or, for the
hand-built function, from counting its live values."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.mir import IMPLICIT_DEF, MBlock, MFunction, MInstr, VMem, VOp
from ptx2sass.regalloc import allocate

TRITON = Path(__file__).resolve().parent / "corpus" / "triton"


def _quad_then_parts() -> MFunction:
    """q = LDG.128 [base]; d_k = FADD q.k, q.k for k = 0..3 in turn; then each d_k stored.
    At most 6 values are live at once (base 2 + the quad's parts still to be read + the
    sums so far), so base R2..R3, quad R4..R7 and each sum in its part's register fit
    below R8 (R1 is the stack pointer)."""
    mf = MFunction("k")
    b = MBlock("entry")
    mf.blocks = [b]
    base, q = mf.new_vreg("R", 2), mf.new_vreg("R", 4)
    sums = [mf.new_vreg() for _ in range(4)]
    b.instrs.append(MInstr(IMPLICIT_DEF, (), [VOp(base)], 1))
    b.instrs.append(MInstr("LDG", ("E", "128"), [VOp(q), VMem(VOp(base), 0)], 1))
    b.instrs += [MInstr("FADD", (), [VOp(d), VOp(q, k), VOp(q, k)], 1) for k, d in enumerate(sums)]
    b.instrs += [MInstr("STG", ("E",), [VMem(VOp(base), 16 + 4 * k), VOp(d)], 0)
                 for k, d in enumerate(sums)]
    b.instrs.append(MInstr("EXIT", (), [], 0))
    return mf


def test_sums_take_the_registers_of_the_parts_they_read():
    mf = _quad_then_parts()
    alloc, _ = allocate.allocate_with_spilling(mf)
    allocate.verify(mf, alloc.color)
    assert alloc.max_r == 7, alloc.color          # whole-register interference: R11


def test_a_part_still_to_be_read_keeps_its_register():
    """The sums may reuse parts already read, never a part read later: verify() rejects an
    allocation that puts d0 on q.1."""
    mf = _quad_then_parts()
    alloc, _ = allocate.allocate_with_spilling(mf)
    q, d0 = 1, 2
    bad = dict(alloc.color)
    bad[d0] = bad[q] + 1
    with pytest.raises(AssertionError):
        allocate.verify(mf, bad)


def _registers(cubin: bytes) -> int:
    (k,) = read_cubin(cubin).kernels
    return k.regcount


@pytest.mark.parametrize("name", [
    "vec_add",          # two 128-bit loads added part by part (30 with whole-register interference)
    "softmax_rows_w1",  # pairs and singles: 22 when singles took the low places first
])
def test_no_more_registers_than_ptxas(name):
    ptx = (TRITON / f"{name}.ptx").read_text()
    ours = _registers(codegen.compile_ptx(ptx, arch="sm_89"))
    run = oracle.ptxas(ptx.encode(), "sm_89", name=name)
    assert run.ok, run
    assert ours <= _registers(run.output)
