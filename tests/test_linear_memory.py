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


_KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .u32 %r<3>;
.reg .u64 %rd1;
ld.param.u64 %rd1, [p];
ld.global.u32 %r1, [%rd1];
ld.global.u32 %r2, [%rd1+4];
""" + " ".join(f"mad.lo.u32 %r1, %r1, {2 * i + 3}, %r2; xor.b32 %r1, %r1, %r2;" for i in range(50)) + """
st.global.u32 [%rd1], %r1;
ret;
}
"""


def _alive_at_allocation(monkeypatch, options: dict):
    """How many of the kernel's IR instructions are still alive when register allocation
    (the compile's peak) starts, and the IR function after the compile."""
    import gc
    import weakref
    from ptx2sass import codegen
    module = codegen.lower_ptx(_KERNEL, "sm_89", "k.ptx")
    (fn,) = module.functions
    refs = [weakref.ref(ins) for b in fn.blocks for ins in b.instrs]
    assert len(refs) > 100
    seen = []
    allocate = codegen.allocate_with_spilling

    def spy(*args, **kwargs):
        gc.collect()
        seen.append(sum(r() is not None for r in refs))
        return allocate(*args, **kwargs)
    monkeypatch.setattr(codegen, "allocate_with_spilling", spy)
    codegen.generate_module(module, "sm_89", options, "k.ptx")
    return seen, fn


def test_kernel_ir_is_freed_before_register_allocation(monkeypatch):
    """lineops:40000: the SSA IR (~0.6 KB a statement) was alive through the back end; a
    kernel's code goes once selected, its attributes and parameters stay."""
    seen, fn = _alive_at_allocation(monkeypatch, {})
    assert seen == [0]
    assert fn.blocks == [] and fn.params and fn.is_entry


@pytest.mark.parametrize("options", [{"compile_only": True}, {"debug": True}])
def test_kernel_ir_is_kept_where_read_after_selection(monkeypatch, options):
    """-c and -g read a kernel's code after it is made (`_calls_and_diverges`,
    `_names_shared_first`: zluda/extern_shared_call.ptx -g's relocation sections swapped
    places when it was freed there)."""
    seen, fn = _alive_at_allocation(monkeypatch, options)
    assert seen and seen[0] > 100
    assert fn.blocks
