"""IMAD.HI's carry-out predicate, read by IADD3.X, is keyed by the kind of the IMAD.HI's second
factor (`pair_fixed` for a register, `pair_fixed_immediate_factor` for an immediate), by the
emulator's checker and by our scheduler alike (`LatencyModel.latency_modifiers`). Expected
distances are ptxas's: sm_90 5 with a register factor (campaign 13 seed 25001043's
`IMAD.HI.U32 R31, P1, R32, R33, R30` then IADD3.X 5 cycles after, tests/test_sm90_ptxas_schedules.py);
sm_90 5 with an immediate factor too (campaign 19 seed 30000622, the same file); sm_8x 7 with an
immediate factor (campaign 9 seed 20001090, tests/fuzz_regressions)."""
import pytest

from ptx2sass.encoder.model import Imm, Instruction, Reg
from ptx2sass.sched.control import Slot, assign_controls
from ptx2sass.sched.latency import model_for


def _carry_distance(arch: str, factor) -> int:
    """Issue cycles from our scheduler's IMAD.HI.U32 R31, P1, R32, factor, R30 to the IADD3.X
    that reads P1."""
    hi = Instruction("IMAD", ("HI", "U32"), (Reg("R", 31), Reg("P", 1), Reg("R", 32), factor, Reg("R", 30)))
    reads = [("R", 32), ("R", 30), ("R", 31)] + ([("R", factor.index)] if isinstance(factor, Reg) else [])
    x = Instruction("IADD3", ("X",), (Reg("R", 40), Reg("R", 42), Reg("R", 255), Reg("R", 255),
                                      Reg("P", 1), Reg("P", 7, inv=True)))
    slots = assign_controls([Slot(hi, reads=reads, writes=[("R", 31), ("P", 1)]),
                             Slot(x, reads=[("R", 42), ("P", 1)], writes=[("R", 40)])], model_for(arch))
    assert [s.ins.opcode for s in slots if s.ins.opcode != "NOP"] == ["IMAD", "IADD3"]
    return sum(s.stall for s in slots[:-1])


def test_sm90_register_factor_carry_is_read_as_ptxas_reads_it():
    assert _carry_distance("sm_90", Reg("R", 33)) == 5


def test_sm89_immediate_factor_carry_waits_for_its_own_row():
    """Our scheduler keys the producer as the checker does: on sm_8x an immediate factor's carry
    is not read at the register factor's distance."""
    assert _carry_distance("sm_89", Imm(4)) >= 7


def test_sm90_immediate_factor_carry_is_read_as_ptxas_reads_it():
    assert _carry_distance("sm_90", Imm(-0x22e460c5 & 0xffffffff)) == 5


def test_our_sm90_code_of_25001043_has_no_hazard():
    from pathlib import Path
    from tests.test_sm75_ptxas_schedules import our_hazards
    hazards = our_hazards(Path(__file__).resolve().parent / "ptxas_sm90_schedules" / "s25001043.ptx", "sm_90")
    assert not hazards, hazards[0].message
