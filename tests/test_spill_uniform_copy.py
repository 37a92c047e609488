"""Spilling a register that a copy from (or to) a uniform register writes (or reads):
STL/LDL take R registers only, so the copy stays a move through a temporary R register and
the store/reload touches that temporary. Fuzz seed 46000157 (sm_90a, a `setmaxnreg.dec 40`
squeezing a kernel whose global base address lived in a UR pair) gave the encoder
`STL.64 [R1+0x10], UR2`: "cannot encode" (tests/fuzz_regressions/
crash_stl64_uniform_spill_s46000157.ptx runs that program)."""
from ptx2sass.frame import Frame
from ptx2sass.mir import COPY, MBlock, MFunction, MInstr, VOp
from regalloc.spill import SpillStats, Spiller


def _spill_copy(direction: str):
    mf = MFunction("k")
    ur = mf.new_vreg("UR", 2)
    r = mf.new_vreg("R", 2)
    if direction == "into":          # R = COPY UR, R spilled: its store
        ins = MInstr(COPY, (), [VOp(r), VOp(ur)], 1)
    else:                            # UR = COPY R, R spilled: its reload
        ins = MInstr(COPY, (), [VOp(ur), VOp(r)], 1)
    mf.blocks = [MBlock("entry", [ins])]
    Spiller(mf, Frame(), set(), SpillStats()).spill([r.id])
    return mf.blocks[0].instrs


def _classes(ins, opcode):
    return [op.reg.cls for i in ins if i.opcode == opcode for op in i.operands if isinstance(op, VOp)]


def test_copy_from_a_uniform_register_into_a_spilled_one_stores_an_r_register():
    out = _spill_copy("into")
    assert _classes(out, "STL") == ["R"]
    assert any(i.opcode == COPY and i.operands[1].reg.cls == "UR" for i in out)


def test_copy_of_a_spilled_register_into_a_uniform_one_reloads_an_r_register():
    out = _spill_copy("from")
    assert _classes(out, "LDL") == ["R"]
    assert any(i.opcode == COPY and i.operands[0].reg.cls == "UR" for i in out)
