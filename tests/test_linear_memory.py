"""Memory that grows with the square of a long block's length (bench/memory_scaling.py's
lineops:40000, 40,000 statements on one line that do not fold: 509 MB where ptxas takes
112 MB). Two bit-mask sets were as wide as the block and made for every instruction or
register: the list scheduler's descendant sets, needed only from the first instruction of an
occupying unit (MUFU) on, and `fresh_writes`' register bits, needed only for registers that
a guarded or partial write defines. Memory is traced: doubling the block must about double
the peak (a square makes it ~4x). The machine-IR records an encoder and the allocator make by
the hundred thousand keep their fields in slots (no `__dict__` an instance)."""
from __future__ import annotations

import dataclasses
import pickle
import tracemalloc

import pytest

from ptx2sass.encoder.model import Control, Imm, Instruction, Reg
from ptx2sass.mir import MBlock, MFunction, MInstr, VMem, VOp
from ptx2sass.records import dataclass
from ptx2sass.regalloc.liveness import fresh_writes
from ptx2sass.sched.list_schedule import issue_order


def _peak(make, run) -> int:
    """Traced peak of `run(make())` above what `make()` left."""
    args = make()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        run(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _chain(n: int):
    """A dependence chain of n ALU instructions (each reads the one before it)."""
    succs = [[(i + 1, 4)] for i in range(n - 1)] + [[]]
    npreds = [0] + [1] * (n - 1)
    height = [4 * (n - i) for i in range(n)]
    return succs, npreds, height, ["alu"] * n


def _order(succs, npreds, height, units):
    assert issue_order(succs, npreds, height, units=units, occupancy={"mufu": 8}) == list(range(len(succs)))


def test_issue_order_memory_is_linear_without_an_occupying_unit():
    small, large = (_peak(lambda n=n: _chain(n), _order) for n in (6000, 12000))
    assert large < 2.6 * small, (small, large)


def _block(n: int):
    """n unguarded whole writes of n registers, then n reads: no write is guarded."""
    fn = MFunction("f")
    regs = [fn.new_vreg() for _ in range(n)]
    block = MBlock("b")
    block.instrs = [MInstr("MOV", (), [VOp(r), Imm(1)], 1) for r in regs]
    block.instrs += [MInstr("STG", (), [VMem(VOp(regs[0])), VOp(r)], 0) for r in regs]
    fn.blocks = [block]
    return (fn,)


def test_fresh_writes_memory_is_linear_without_guarded_writes():
    small, large = (_peak(lambda n=n: _block(n), lambda fn: fresh_writes(fn)) for n in (8000, 16000))
    assert large < 2.6 * small, (small, large)


def test_fresh_writes_still_finds_a_guarded_first_write():
    (fn,) = _block(50)
    p = fn.new_vreg("P")
    r = fn.new_vreg()
    guarded = MInstr("MOV", (), [VOp(r), Imm(2)], 1, guard=VOp(p))
    again = MInstr("MOV", (), [VOp(r), Imm(3)], 1, guard=VOp(p))
    fn.blocks[0].instrs[10:10] = [MInstr("ISETP", (), [VOp(p), Imm(0)], 1), guarded, again]
    assert fresh_writes(fn) == {(id(guarded), r.id)}


@pytest.mark.parametrize("record", [Reg("R", 4, neg=True), Imm(5), Control(stall=3),
                                    Instruction("IADD3", (), (Reg("R", 1),)), VOp(MFunction("f").new_vreg())])
def test_machine_records_have_no_instance_dict(record):
    assert not hasattr(record, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.neg = True


@dataclass(frozen=True, slots=True)
class _Slotted:
    a: int
    b: tuple = ()
    c: list = dataclasses.field(default_factory=list)


def test_frozen_slots_record_fills_its_fields():
    r = _Slotted(1)
    assert (r.a, r.b, r.c) == (1, (), [])
    assert _Slotted(2, (3,), [4]).c == [4] and _Slotted(1).c is not _Slotted(1).c
    assert r == _Slotted(1, ())
    assert dataclasses.replace(r, a=7) == _Slotted(7)
    assert pickle.loads(pickle.dumps(_Slotted(3, (1,)))) == _Slotted(3, (1,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.a = 2


def test_forgotten_register_operands_are_worked_out_again():
    from ptx2sass.mir import forget_register_operands, register_operands
    (fn,) = _block(3)
    ins = fn.blocks[0].instrs[3]
    first = register_operands(ins)
    assert "_register_operands" in ins.__dict__
    forget_register_operands(fn)
    assert all("_register_operands" not in i.__dict__ for i in fn.blocks[0].instrs)
    assert register_operands(ins) == first == [(0, ins.operands[0].base, False), (1, ins.operands[1], False)]
