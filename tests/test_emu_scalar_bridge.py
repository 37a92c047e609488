"""One-thread launches whose steps go to the one-lane machine (emu/scalar.py `_bridge`): the
registers an operand holds inside it (a constant's index register `c[0x3][R4]`, a bindless
bank, an address's descriptor) must reach the machine as well as the operand's own.

They did not: `LDC.64 R6, c[0x3][R4]` read offset 0 on both scalar paths (hazards off:
`scalar.run`; on: `scalar.run_traced`), which failed 16 tests when emu29b's traced path
first ran them (`-c` linked `.const` reads, param windows, pointer-call structs, LDC.64
constants). Expected values: the manual's (the `.const` initialisers indexed by the
parameter), on the scalar paths and on the machine; and the both-ways check
(emu/traced_check.py) must find no difference here and must find the bug when it is back.
"""
from __future__ import annotations

import numpy as np
import pytest

import ptx2sass
from ptx2sass.emu import scalar, traced_check
from ptx2sass.emu.launch import forget_programs, run
from ptx2sass.emu.loader import load_program
from ptx2sass.encoder.model import ConstRef, Mem, Reg

PTX = """.version 8.8
.target {arch}
.address_size 64
.const .align 8 .u64 cv[4] = {{1, 2, 0x300000000, 4}};
.const .u32 cw[4] = {{10, 20, 30, 40}};
.visible .entry k(.param .u64 out, .param .u32 i)
{{
  .reg .u64 %rd<8>; .reg .u32 %r<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [i];
  mul.wide.u32 %rd2, %r1, 8;
  mov.u64 %rd3, cv;
  add.u64 %rd4, %rd3, %rd2;
  ld.const.u64 %rd5, [%rd4];
  ld.const.u64 %rd6, [cv+16];
  add.u64 %rd5, %rd5, %rd6;
  mul.wide.u32 %rd2, %r1, 4;
  mov.u64 %rd3, cw;
  add.u64 %rd4, %rd3, %rd2;
  ld.const.u32 %r2, [%rd4];
  cvta.to.global.u64 %rd1, %rd1;
  st.global.u64 [%rd1], %rd5;
  st.global.u32 [%rd1+8], %r2;
  ret;
}}
"""
CV, CW = [1, 2, 0x300000000, 4], [10, 20, 30, 40]
ARCHS = ("sm_75", "sm_89", "sm_90", "sm_120")


def _cubin(arch: str) -> bytes:
    return ptx2sass.compile(PTX.format(arch=arch), arch)


def _indexed_ldcs(cubin: bytes) -> list:
    program = load_program(cubin, "k")
    return [ins for _, ins in program.instructions if ins.opcode == "LDC"
            and any(isinstance(op, ConstRef) and op.ureg is not None and op.ureg.file == "R" for op in ins.operands)]


def _launch(cubin: bytes, i: int, hazards: bool):
    out = np.zeros(2, np.uint64)
    res = run(cubin, "k", 1, 1, [out, np.uint32(i)], hazard_check=hazards)
    return int(out[0]), int(out[1]) & 0xFFFFFFFF, res


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", ["scalar", "traced", "machine"])
def test_indexed_constant_reads_on_one_thread(arch, path, monkeypatch):
    cubin = _cubin(arch)
    assert len(_indexed_ldcs(cubin)) == 2           # LDC(.64) c[0x3][Rn]: what the test is about
    if path == "machine":
        monkeypatch.setattr(scalar, "suits", lambda launch: False)
        monkeypatch.setattr(scalar, "suits_traced", lambda launch: False)
    seen = []
    if path == "traced":
        orig = scalar.run_traced
        monkeypatch.setattr(scalar, "run_traced", lambda launch: seen.append(1) or orig(launch))
    for i in (3, 1, 2, 0):          # index 0 would pass with the index ignored: not first
        got64, got32, res = _launch(cubin, i, hazards=path != "scalar")
        assert (got64, got32) == (CV[i] + CV[2], CW[i]), (arch, path, i)
        assert not res.hazards
    assert path != "traced" or len(seen) == 4


def test_operand_registers():
    r4, ur6, r2, ur8, ur4 = Reg("R", 4), Reg("UR", 6), Reg("R", 2, suffix=("64",)), Reg("UR", 8), Reg("UR", 4)
    assert scalar._operand_regs(ConstRef(3, 0, ureg=r4)) == [r4]
    assert scalar._operand_regs(ConstRef(0, 0x10, ubank=ur6)) == [ur6]
    assert scalar._operand_regs(Mem(base=r2, ubase=ur8, desc=ur4)) == [r2, ur8, ur4]
    assert scalar._operand_regs(r4) == [r4]
    assert scalar._operand_regs(ConstRef(0, 0x10)) == []


def test_both_ways_check_finds_the_old_bridge(monkeypatch):
    """The sweep's check passes the fixed path, and fails it with the old rule (the operand
    itself, an address's base and uniform term only)."""
    cubin = _cubin("sm_90")
    monkeypatch.setattr(traced_check, "SETTING", "1")
    got64, got32, _ = _launch(cubin, 1, hazards=True)
    assert (got64, got32) == (CV[1] + CV[2], CW[1])

    def old_rule(op):
        reg = op if op.__class__ is Reg else getattr(op, "base", None)
        return [r for r in (reg, getattr(op, "ubase", None)) if r.__class__ is Reg]
    monkeypatch.setattr(scalar, "_operand_regs", old_rule)
    forget_programs()           # the rule is read when a program's scalar code is made
    with pytest.raises(traced_check.TracedMismatch, match="buffers"):
        _launch(_cubin("sm_90"), 1, hazards=True)


def test_both_ways_check_passes_a_fault_through(monkeypatch):
    """A budget running out on both paths alike: the machine's fault is raised, not a
    mismatch, and the launch keeps the machine's count."""
    from ptx2sass.emu.errors import EmuFault
    monkeypatch.setattr(traced_check, "SETTING", "1")
    out = np.zeros(2, np.uint64)
    with pytest.raises(EmuFault, match="budget"):
        run(_cubin("sm_90"), "k", 1, 1, [out, np.uint32(1)], hazard_check=True, budget=5)
