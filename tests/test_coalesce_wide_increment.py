"""A loop's 64-bit pointers advanced in place (Triton's `ptrs += BLOCK_K * stride`, nine of
them in matmul_masked): ptxas 13.5 writes `IADD3 R4, P0, R4, 0x40` / `IADD3.X R5, R5, ...`
into the pointer's own pair; ours built the sum in a fresh pair (its IMPLICIT_DEF while the
old pointer was live kept the two apart) and copied it back at the back edge, two MOVs per
pointer. Expectations: ptxas's cubin (its moves, its instruction count) and its outputs in
the emulator, hazard checker on; and the allocator's own check of the allocation."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u64 b, .param .u32 n)
{
  .reg .b64 %rd<12>; .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd4, %r2, 4;
  add.s64 %rd1, %rd1, %rd4;
  add.s64 %rd2, %rd2, %rd4;
  add.s64 %rd3, %rd3, %rd4;
  mov.f32 %f1, 0f00000000;
  mov.u32 %r3, 0;
LOOP:
  .pragma "nounroll";
  ld.global.f32 %f2, [%rd1];
  ld.global.f32 %f3, [%rd2];
  fma.rn.f32 %f1, %f2, %f3, %f1;
  add.s64 %rd1, %rd1, 128;
  add.s64 %rd2, %rd2, 256;
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r3, %r1;
  @%p1 bra LOOP;
  st.global.f32 [%rd3], %f1;
  ret;
}
"""
TRIPS = 6


def _loop_moves(text: str) -> int:
    """Register-to-register moves between the loop's label and its backward branch."""
    lines = [ln.split("*/", 1) for ln in text.splitlines() if ln.strip().startswith("/*")]
    code = [(int(a.strip().strip("/*"), 16), i.strip().rstrip(" ;")) for a, i in lines]
    branch = next((pc, i) for pc, i in code if "BRA" in i and int(i.split("(.L_")[1].rstrip(")"), 16) < pc)
    start = int(branch[1].split("(.L_")[1].rstrip(")"), 16)
    out = 0
    for pc, i in code:
        f = i.replace(",", " ").split()
        out += (start <= pc < branch[0] and f[0] in ("MOV", "IMAD.MOV.U32")
                and f[-1].startswith("R") and f[-1] != "RZ")
    return out


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89"])
def test_pointer_increments_in_place(arch):
    ptx = PTX.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    assert _loop_moves(sass_listing(ours)) <= _loop_moves(sass_listing(theirs)), (mine, ref)
    assert len(mine) <= len(ref), (mine, ref)
    rng = np.random.default_rng(2)
    a = rng.standard_normal(32 * 32 * TRIPS).astype(np.float32)
    b = rng.standard_normal(64 * 32 * TRIPS).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.full(32, np.nan, dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, a.copy(), b.copy(), np.int32(TRIPS)],
                  hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert not np.isnan(outs[0]).any()


PRODUCT = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u32 n)
{
  .reg .b64 %rd<12>; .reg .b32 %r<8>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd3, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd4, %r2, 8;
  add.s64 %rd1, %rd1, %rd4;
  add.s64 %rd3, %rd3, %rd4;
  cvt.u64.u32 %rd5, %r2;
  add.s64 %rd5, %rd5, 7;
  mov.u32 %r3, 0;
LOOP:
  .pragma "nounroll";
  ld.global.u64 %rd6, [%rd1];
  mul.lo.s64 %rd5, %rd5, %rd6;
  add.s64 %rd5, %rd5, %rd6;
  add.s64 %rd1, %rd1, 256;
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r3, %r1;
  @%p1 bra LOOP;
  st.global.u64 [%rd3], %rd5;
  ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
def test_loop_product_and_sum_in_place_keep_outputs(arch):
    """A 64-bit value multiplied and added in a loop (the product reads the old low word
    after writing its own: those two stay apart, fuzz 25000108's pattern) beside the
    pointer's in-place sum: outputs = ptxas's."""
    ptx = PRODUCT.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    a = np.random.default_rng(4).integers(0, 1 << 63, size=32 * TRIPS, dtype=np.uint64)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32, dtype=np.uint64)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, a.copy(), np.int32(TRIPS)], hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].any()
