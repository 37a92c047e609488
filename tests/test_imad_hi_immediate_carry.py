"""IMAD.HI's carry-out by the kind of its second factor (sm_8x, `pair_fixed_immediate_factor`
in sched/latency/ampere.json): ptxas reads it 7 cycles after an immediate-factor IMAD.HI
(fuzz campaign 9 seed 20001090, `IMAD.HI.U32 R12, P1, R3, 0x4, R12` then IADD3.X at 7:
tests/fuzz_regressions/emu_fail_imad_hi_carry_s20001090.ptx, a strict xfail before) and 5
after a register- or uniform-factor one (campaign 9 seeds 20007273/20009422 at 5, 20004829/20008674/
20009658 at 7: tests/fuzz_regressions/emu_fail_imad_hi_carry_s20001090.ptx and the triage in
docs/fuzz/campaign-9.md; the tinygrad sites at 9 are slack, the latency audit passes with 5)."""
from pathlib import Path

from ptx2sass import oracle
from ptx2sass.fuzz.inputs import read_case
from ptx2sass.fuzz.runner import load
from ptx2sass.sched.latency import IMMEDIATE_FACTOR, model

CASE = Path(__file__).parent / "fuzz_regressions" / "emu_fail_imad_hi_carry_s20001090.ptx"


def test_table_keys_the_carry_out_by_the_factor_kind():
    m = model("ampere")
    assert m.read_latency("IMAD", ("HI", "U32", IMMEDIATE_FACTOR), "P", "IADD3") == 7
    assert m.read_latency("IMAD", ("HI", "U32"), "P", "IADD3") == 5
    # sm_90 reads both at 5 (campaign 13 seed 25001043: a register factor; campaign 19 seed
    # 30000622: an immediate one)
    assert model("hopper").read_latency("IMAD", ("HI", "U32", IMMEDIATE_FACTOR), "P", "IADD3") == 5
    assert model("hopper").read_latency("IMAD", ("HI", "U32"), "P", "IADD3") == 5


def test_ptxas_immediate_factor_imad_hi_is_keyed_as_one():
    case = read_case(CASE.read_text())
    res = oracle.ptxas(CASE.read_text(), "sm_89")
    assert res.ok
    program = load(res.output, case.kernel)
    m = model("ampere")
    his = [i for _, i in program.instructions if i.opcode == "IMAD" and "HI" in i.modifiers]
    assert his
    kinds = {type(i.operands[-2]).__name__: m.latency_modifiers(i) for i in his}
    assert IMMEDIATE_FACTOR in kinds["Imm"]
    assert all(IMMEDIATE_FACTOR not in m.latency_modifiers(i) for i in his if type(i.operands[-2]).__name__ != "Imm")
