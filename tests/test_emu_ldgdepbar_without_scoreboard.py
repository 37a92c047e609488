"""ptxas -O0 (and -g, nvcc -G's builds) writes cp.async.commit_group as an LDGDEPBAR that
names no scoreboard, followed by `DEPBAR.LE SB0, n`; -O3 gives the LDGDEPBAR SB0. The
emulator landed the copies only when the two scoreboards matched, so with ptxas's -O0 cubin
the copies never landed and the kernel read stale shared memory (found with nvcc -G on
tests/corpus/realworld/src/async_copy.cu: ptxas's cubin gave zeros). Expected values: the
copy itself, computed here."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{
  .shared .align 16 .b8 s[512];
  .reg .b32 %r<8>; .reg .b64 %rd<6>; .reg .f32 %f<5>;
  ld.param.u64 %rd1, [k_in];
  ld.param.u64 %rd2, [k_out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, s;
  add.s32 %r4, %r3, %r2;
  cvta.to.global.u64 %rd3, %rd1;
  mul.wide.u32 %rd4, %r1, 16;
  add.s64 %rd3, %rd3, %rd4;
  cp.async.cg.shared.global [%r4], [%rd3], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  add.s32 %r5, %r1, 5;
  and.b32 %r5, %r5, 31;
  shl.b32 %r5, %r5, 4;
  add.s32 %r6, %r3, %r5;
  ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r6];
  fma.rn.f32 %f1, %f2, %f3, %f1;
  sub.f32 %f1, %f1, %f4;
  cvta.to.global.u64 %rd5, %rd2;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd5, %rd4;
  st.global.f32 [%rd5], %f1;
  ret;
}
"""


@pytest.mark.parametrize("flags", [("-O0",), ("-O3",), ("-g",)])
def test_ptxas_cubin_lands_its_copies(flags):
    built = oracle.ptxas(PTX, "sm_89", flags, name="k.ptx")
    assert built.ok, built.stderr
    rng = np.random.default_rng(3)
    data = rng.integers(-16, 16, 128).astype(np.float32)        # small integers: exact
    out = np.zeros(32, np.float32)
    run(built.output, "k", 1, 32, [data.copy(), out], hazard_check=False)
    v = data.reshape(32, 4)[(np.arange(32) + 5) % 32]
    np.testing.assert_array_equal(out, v[:, 1] * v[:, 2] + v[:, 0] - v[:, 3])
