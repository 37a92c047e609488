"""CTA barriers reached by part of a warp, as ptxas writes them and as nvcc -G's code meets
them (found running tests/corpus/realworld/src/async_copy.cu built with `nvcc -G` through
ptxas -g: its cubin deadlocked in the emulator).

- `@P0 BAR.SYNC R0` (ptxas's if-conversion of a `bar.sync %r` that one path takes): the
  emulator read the barrier id from lane 0's register even where lane 0 does not execute
  (here lane 0 holds id + 5): the lanes waited on another barrier than lane 0, a deadlock.
- ptxas -g's `block.sync()` after `if (rank == 0) init(&bar)`: lane 0, in the out-of-line
  `init`, yields; the emulator lets the other lanes go from the region's BSYNC (the
  hardware clears a barrier whose missing members yield), they reach the CTA barrier, and
  lane 0 returns with its caller's barrier restored (`BMOV.32 B6, R`): at its BSYNC it then
  waits for lanes that wait at the BAR for it. When nothing else can run, a convergence
  barrier or warp sync whose missing members all wait at a CTA barrier lets its lanes go.
Expected values: the shared-memory exchange itself, computed here."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

BAR_BY_REGISTER = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_out, .param .u32 k_id)
{
  .shared .align 4 .b8 s[256];
  .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  ld.param.u32 %r1, [k_id];
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p1, %r2, 0;
  selp.u32 %r3, 5, 0, %p1;
  add.u32 %r4, %r1, %r3;
  shl.b32 %r5, %r2, 2;
  mov.u32 %r6, s;
  add.u32 %r7, %r6, %r5;
  add.u32 %r8, %r2, 100;
  st.shared.u32 [%r7], %r8;
  @%p1 bra L0;
  bar.sync %r4;
  bra Done;
L0:
  bar.sync %r1;
Done:
  add.u32 %r9, %r2, 1;
  and.b32 %r9, %r9, 63;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r6, %r9;
  ld.shared.u32 %r10, [%r9];
  ld.param.u64 %rd1, [k_out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r10;
  ret;
}
"""


@pytest.mark.parametrize("compiler", ["ptxas", "ours"])
def test_barrier_id_from_a_lane_that_executes(compiler):
    if compiler == "ptxas":
        built = oracle.ptxas(BAR_BY_REGISTER, "sm_89", name="k.ptx")
        assert built.ok, built.stderr
        cubin = built.output
    else:
        cubin = codegen.compile_ptx(BAR_BY_REGISTER, "sm_89", "k.ptx")
    out = np.zeros(64, np.uint32)
    res = run(cubin, "k", 1, 64, [out, np.uint32(1)], hazard_check=compiler == "ours")
    assert res.hazards == []
    np.testing.assert_array_equal(out, (np.arange(64) + 1) % 64 + 100)


INIT_UNDER_LOCK_CU = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ __noinline__ void init_table(float* t, int n, int* lock) {
  while (atomicCAS(lock, 0, 1) != 0) { }
  for (int i = 0; i < n; ++i) t[i] = i * 0.5f;
  atomicExch(lock, 0);
}
extern "C" __global__ void k(const float* in, float* out) {
  __shared__ float tile[64];
  __shared__ int lock;
  if (threadIdx.x == 0) lock = 0;
  __syncthreads();
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init_table(tile, 64, &lock);
  block.sync();
  out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x] + in[blockIdx.x * 64 + threadIdx.x];
}
"""


def test_nvcc_G_init_by_one_lane_then_block_sync_runs():
    """The shape of async_copy.cu's `if (rank == 0) init(&bar); block.sync();` without CCCL:
    the out-of-line callee spins on a lock (ptxas puts YIELDs in its loop); ptxas -g's cubin
    deadlocked in the emulator before."""
    ptx = oracle.nvcc_ptx(INIT_UNDER_LOCK_CU, "sm_89", ("-G",), name="k.cu")
    assert ptx.ok, ptx.stderr
    text = ptx.output.decode()
    built = oracle.ptxas(text, "sm_89", ("-g",), name="k.ptx")
    assert built.ok, built.stderr
    assert "YIELD" in oracle.nvdisasm(built.output)          # the premise: the callee yields
    data = np.arange(128, dtype=np.float32)
    want = np.tile((63 - np.arange(64)) * np.float32(0.5), 2) + data
    for cubin in (built.output, codegen.compile_ptx(text, "sm_89", "k.ptx", debug=True, opt_level=0)):
        out = np.zeros(128, np.float32)
        run(cubin, "k", 2, 64, [data.copy(), out], hazard_check=False)
        np.testing.assert_array_equal(out, want)
