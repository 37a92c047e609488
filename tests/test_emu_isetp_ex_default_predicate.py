"""ISETP.EX whose low words' predicate is a plain PT: nvdisasm leaves it out
(`ISETP.EQ.U32.AND.EX P0, PT, R2, 0x40000000, P0`, five operands), and the emulator indexed the
sixth operand and crashed (IndexError in op_isetp; fuzz campaign 21 seed 32001158, sm_75).
ptxas writes the form where it knows the low words compare equal: here a 64-bit value shifted
left by 32 compared with a constant whose low word is 0. Expected values: exact integer
arithmetic (the PTX's own meaning)."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u64 %rd5, [%rd4];
  shl.b64 %rd5, %rd5, 32;
  setp.ne.u32 %p2, %r1, 3;
  setp.eq.and.u64 %p1, %rd5, 0x4000000000000000, %p2;
  selp.u32 %r2, 1, 0, %p1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd6, %rd1, %rd3;
  st.global.u32 [%rd6], %r2;
  ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_75", "sm_89"])
def test_isetp_ex_without_the_low_words_predicate(arch):
    build = oracle.ptxas(PTX.replace("ARCH", arch), arch)
    assert build.ok, build.stderr
    values = np.array([0x40000000, 0x40000000, 0, 0x40000000, 0x140000000, 0x40000001,
                       0xFFFFFFFF40000000, 7] * 4, dtype=np.uint64)
    out = np.zeros(len(values), dtype=np.uint32)
    run(build.output, "k", (1, 1, 1), (len(values), 1, 1), [out, values])
    want = [int(((int(v) << 32) & (2**64 - 1)) == 0x4000000000000000 and t != 3)
            for t, v in enumerate(values)]
    assert [int(x) for x in out] == want
