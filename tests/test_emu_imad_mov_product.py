"""nvdisasm names any IMAD that moves a value `.MOV`: `IMAD.MOV.U32 R0, RZ, RZ, R4` (a move
of c) and also `IMAD.MOV R8, R0, 0x1, RZ`, ptxas -O0/-g's `mul.lo x, 1` (a move of a). The
emulator read every IMAD.MOV as a move of c, so the second wrote RZ's 0 (found with nvcc -G
on tests/corpus/realworld/src/atomics.cu atomic_ref_libcu: libcu++'s -G code runs the
fetch_add operand through `mul.lo.s32 %r, %r, 1`, and ptxas's cubin added 0). Expected
values: the arithmetic, computed here, on ptxas's cubin and on ours."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<6>; .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r4, %tid.x;
  mul.wide.u32 %rd3, %r4, 12;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r1, [%rd2];
  mul.lo.s32 %r2, %r1, 1;
  st.global.u32 [%rd2+4], %r2;
  mul.lo.s32 %r3, %r1, 3;
  st.global.u32 [%rd2+8], %r3;
  ret;
}
"""


def _expected(data):
    x = data[:, 0].astype(np.int64)
    return np.stack([x, x, x * 3], axis=1).astype(np.uint32)


@pytest.mark.parametrize("flags", [("-O0",), ("-g",)])
@pytest.mark.parametrize("threads", [1, 32])
def test_ptxas_imad_mov_of_a_times_one(flags, threads):
    built = oracle.ptxas(PTX, "sm_89", flags, name="k.ptx")
    assert built.ok, built.stderr
    assert "IMAD.MOV R" in oracle.nvdisasm(built.output)   # the form in question
    data = np.zeros((threads, 3), np.uint32)
    data[:, 0] = np.random.default_rng(5).integers(0, 2**32, threads, dtype=np.uint64)
    run(built.output, "k", 1, threads, [data], hazard_check=False)
    np.testing.assert_array_equal(data, _expected(data))


def test_ours_debug_build_agrees():
    cubin = codegen.compile_ptx(PTX, "sm_89", "k.ptx", debug=True, opt_level=0)
    data = np.zeros((32, 3), np.uint32)
    data[:, 0] = np.arange(32, dtype=np.uint32) * 0x01010101 + 7
    run(cubin, "k", 1, 32, [data], hazard_check=False)
    np.testing.assert_array_equal(data, _expected(data))
