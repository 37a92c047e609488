"""-g: a `.func` that calls itself (CALL.REL to its own entry) saves only what its own body
writes, as any link target; the slow-path rule (a CALL.REL's clobbers count as written,
isel/ieee.py's subroutines save nothing) took the self-call's clobbers (every register) for
its own, saved R2..R254 and gave the kernel 257 registers: CubinError (found with nvcc -G on
tests/corpus/realworld/src/irregular_flow.cu recursive_depths). Expected: ptxas -g's
register count bounds ours, and the depth is the arithmetic's (halvings of x down to 1)."""
import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

PTX = """.version 8.0
.target sm_89
.address_size 64
.func (.param .b32 rv) depth(.param .b32 x, .param .b32 d)
{
  .reg .pred %p<2>; .reg .b32 %r<6>;
  ld.param.u32 %r1, [x];
  ld.param.u32 %r2, [d];
  setp.le.u32 %p1, %r1, 1;
  @%p1 bra DONE;
  shr.u32 %r3, %r1, 1;
  add.s32 %r4, %r2, 1;
  {
  .param .b32 a0; .param .b32 a1; .param .b32 r0;
  st.param.b32 [a0], %r3;
  st.param.b32 [a1], %r4;
  call.uni (r0), depth, (a0, a1);
  ld.param.b32 %r2, [r0];
  }
DONE:
  st.param.b32 [rv], %r2;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd3, %r3, 8;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r1, [%rd2];
  {
  .param .b32 a0; .param .b32 a1; .param .b32 r0;
  st.param.b32 [a0], %r1;
  st.param.b32 [a1], 0;
  call.uni (r0), depth, (a0, a1);
  ld.param.b32 %r2, [r0];
  }
  st.global.u32 [%rd2+4], %r2;
  ret;
}
"""


def _regcounts(cubin):
    return {k.name: k.regcount for k in read_cubin(cubin).kernels}


def test_self_recursive_function_keeps_ptxas_register_count():
    theirs = oracle.ptxas(PTX, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(PTX, "sm_89", "k.ptx", debug=True, opt_level=0)
    mine, ptxas = _regcounts(ours), _regcounts(theirs.output)
    assert mine["k"] <= ptxas["k"], (mine, ptxas)
    data = np.zeros((32, 2), np.uint32)
    data[:, 0] = np.arange(32, dtype=np.uint32) * 977 + 1
    for cubin in (ours, theirs.output):
        out = data.copy()
        run(cubin, "k", 1, 32, [out], hazard_check=False)
        np.testing.assert_array_equal(out[:, 1], [int(x).bit_length() - 1 for x in data[:, 0]])
