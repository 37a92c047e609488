"""Whether HADD2.F32 reads a register's high half in place is a Target fact
(`f32_from_high_half`), not a probe of the encoder in isel/high_halves.py: the fact agrees with
every arch's encoding table, and it alone decides whether the pass rewrites."""
from dataclasses import replace

import pytest

from ptx2sass.encoder import codec
from ptx2sass.encoder.arch import ARCHS, target
from ptx2sass.encoder.model import Imm, Instruction, Reg
from ptx2sass.isel.high_halves import read_high_halves
from ptx2sass.mir import MBlock, MFunction, MInstr, VOp

CODEGEN_ARCHS = [name for name, t in ARCHS.items() if t.codegen]


def _table_encodes_high_half(arch: str) -> bool:
    probe = Instruction("HADD2", ("F32",), (Reg("R", 2), Reg("R", 255, neg=True), Reg("R", 4, suffix=("H1_H1",))))
    try:
        codec.encode(probe, arch, 0, [])
        return True
    except codec.EncodeError:
        return False


@pytest.mark.parametrize("arch", CODEGEN_ARCHS)
def test_the_fact_agrees_with_the_table(arch):
    assert target(arch).f32_from_high_half == _table_encodes_high_half(arch)


def _high_half_widened(tgt) -> tuple[MFunction, MInstr]:
    """w = 5; t = w >> 16 (SHF.R.U32.HI); d = HADD2.F32 -RZ, t.H0_H0."""
    mf = MFunction("k", target=tgt)
    w, t, d = mf.new_vreg(), mf.new_vreg(), mf.new_vreg()
    widen = MInstr("HADD2", ("F32",), [VOp(d), Reg("R", 255, neg=True), VOp(t, suffix=("H0_H0",))], 1)
    mf.blocks.append(MBlock("entry", [MInstr("MOV", (), [VOp(w), Imm(5)], 1),
                                      MInstr("SHF", ("R", "U32", "HI"), [VOp(t), Reg("R", 255), Imm(16), VOp(w)], 1),
                                      widen]))
    return mf, widen


@pytest.mark.parametrize("fact", [True, False])
def test_the_fact_decides(fact):
    mf, widen = _high_half_widened(replace(target("sm_90"), f32_from_high_half=fact))
    assert read_high_halves(mf) == int(fact)
    assert widen.operands[2].suffix == (("H1_H1",) if fact else ("H0_H0",))
    assert widen.operands[2].reg.id == (0 if fact else 1)


def test_no_target_no_rewrite():
    mf, _ = _high_half_widened(None)
    assert read_high_halves(mf) == 0
