"""Control instructions outside plain branches (`nanosleep`, `trap`): our cubin and ptxas's
run in the emulator on the same inputs and must agree, with zero hazards in ours; a trap
must fault in both."""
import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

SLEEP_THEN_TRAP = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .u32 %r<4>; .reg .u64 %rd<3>; .reg .pred %p;
  ld.param.u32 %r1, [n];
  nanosleep.u32 100;
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p, %r1, 7;
  @%p trap;
  add.u32 %r3, %r1, %r2;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def _ptxas_cubin(ptx: str) -> bytes:
    r = oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _launch(cubin: bytes, n: int, hazard_check: bool) -> np.ndarray:
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", 1, 32, [out, np.uint32(n)], hazard_check=hazard_check)
    if hazard_check:
        assert res.hazards == []
    return out


def test_nanosleep_runs_like_ptxas():
    ours = codegen.compile_ptx(SLEEP_THEN_TRAP)
    want = _launch(_ptxas_cubin(SLEEP_THEN_TRAP), 3, False)
    got = _launch(ours, 3, True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, 3 + np.arange(32))


def test_nanosleep_register_operand_is_reported():
    ptx = SLEEP_THEN_TRAP.replace("nanosleep.u32 100;", "nanosleep.u32 %r1;")
    with pytest.raises(CompileError, match="nanosleep` with a register operand not supported yet"):
        codegen.compile_ptx(ptx)


def test_trap_faults_like_ptxas():
    ours = codegen.compile_ptx(SLEEP_THEN_TRAP)
    for cubin in (_ptxas_cubin(SLEEP_THEN_TRAP), ours):
        with pytest.raises(EmuFault, match="BPT.TRAP"):
            _launch(cubin, 7, False)
