"""Which slot of a texture/surface instruction names its handle is data (`Target.handle_fields`,
read against the form slot `codec.slots_taken` says an operand took), not a list of opcodes in
the uniform datapath pass. Table forms are matched by operand shape: sm_100's TEX.LL form
takes `TEX.LL R4, R6, R4, UR0, 2D`, UR0 in the handle's slot, so the level -32.0 moved to a UR
would be read as the handle (end to end: tests/test_codegen_texture.py's
test_blackwell_texture_as_ptxas, whose cubins equal ptxas's only with this data)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from ptx2sass.encoder import codec
from ptx2sass.encoder.arch import target
from ptx2sass.encoder.sass_text import parse_instruction
from ptx2sass.isel import uniform_datapath as ud


def _lowest_bit(slot: dict) -> int:
    return min(slot["fields"][0]["bits"])


@pytest.mark.parametrize("arch, text", [
    ("sm_100", "TEX.LL R4, R6, R4, UR0, 2D"),            # the level's UR in the handle's slot
    ("sm_100", "TEX.LL R4, R6, R4, R18, UR4, 2D"),
    ("sm_120", "SULD.D.BA.2D.STRONG.SM R44, [R8], UR4"),
    ("sm_90", "TEX.LL R12, R10, R124, R9, UR4, 0x0, ARRAY_1D"),
])
def test_the_texture_units_uniform_register_takes_a_handle_field(arch, text):
    ins = parse_instruction(text)
    taken = codec.slots_taken(ins, arch)
    assert taken is not None and len(taken) == len(ins.operands)
    handle = {b for op, b in target(arch).handle_fields if op == ins.opcode}
    ur = [k for k, o in enumerate(ins.operands) if getattr(o, "file", None) == "UR"]
    assert ur and all(_lowest_bit(taken[k]) in handle for k in ur)
    # the vector registers (coordinates, results) take none
    assert not any(_lowest_bit(taken[k]) in handle for k, o in enumerate(ins.operands)
                   if getattr(o, "file", None) == "R" and taken[k]["fields"])


def test_the_pass_reads_the_targets_data(monkeypatch):
    """Without the handle fields the probe would let a uniform level into TEX.LL's handle
    slot (what the pass did before the special case); with them it does not. On sm_100 the
    table itself no longer encodes the level there (branch sound31: bits 48-55 name no
    register on sm_100), so sm_120, whose second UR after the handle is real, shows it."""
    from ptx2sass.mir import MFunction, MInstr, VOp
    from ptx2sass.encoder.model import Reg, SpecialReg
    mf = MFunction("k")
    lo, hi, x, lvl, h = (mf.new_vreg("R") for _ in range(5))
    h.cls = "UR"
    tex = MInstr("TEX", ("LL",), [Reg("R", 255), VOp(lo), VOp(x), VOp(x), VOp(lvl), VOp(h),
                                  SpecialReg("2D")], 2, None, 1)
    uniform = {lvl.id}
    assert ud._place(tex, uniform, "sm_100") is None
    assert ud._place(tex, uniform, "sm_120") is None
    plain = replace(target("sm_120"), handle_fields=())
    monkeypatch.setattr("ptx2sass.encoder.arch.target", lambda arch: plain)
    assert ud._place(tex, uniform, "sm_120") is not None
