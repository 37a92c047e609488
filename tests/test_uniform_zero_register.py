"""URZ and UR63 are different registers on sm_100/sm_120 (8-bit uniform-register fields, URZ
at 255) and the same one on earlier families (6-bit fields, URZ at 63). The model keeps URZ
as UR255 everywhere, so a real UR63 in ptxas's Blackwell code decodes as a register (it
decoded as URZ: the emulator read zero for it) and ours encodes as nvdisasm reads it."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec
from ptx2sass.encoder.model import Imm, Instruction, Reg


def _ushf(last: Reg) -> Instruction:
    return Instruction("USHF", ("L", "U32"), (Reg("UR", 10), Reg("UR", 12), Imm(11), last))


def _nvdisasm_text(word: int, arch: str) -> str:
    run = oracle.nvdisasm_raw(word.to_bytes(16, "little"), arch, ("-hex",))
    m = re.search(r"(USHF[^;]*);", run.stdout)
    assert m, run.stdout + run.stderr
    return m.group(1)


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_ur63_is_a_register_on_blackwell(arch):
    ur63, urz = Reg("UR", 63), Reg("UR", 255)
    w63, wz = codec.encode(_ushf(ur63), arch, 0, []), codec.encode(_ushf(urz), arch, 0, [])
    assert w63 != wz
    assert _nvdisasm_text(w63, arch).endswith("UR63")
    assert _nvdisasm_text(wz, arch).endswith("URZ")
    back63, backz = codec.decode(w63, arch).operands[3], codec.decode(wz, arch).operands[3]
    assert replace(back63, reuse=False) == ur63 and not back63.is_zero
    assert backz.is_zero


def test_ur63_is_urz_on_hopper():
    w = codec.encode(_ushf(Reg("UR", 255)), "sm_90", 0, [])
    assert _nvdisasm_text(w, "sm_90").endswith("URZ")
    assert codec.decode(w, "sm_90").operands[3].is_zero
