"""A loop-carried mma accumulator rescaled before each mma (flash attention's `acc *= alpha;
acc = dot(p, v, acc)`): ptxas 13.5 keeps the four accumulators in the HMMA's quad, the
FMULs rewrite it in place and the HMMA accumulates in place (no copy in the loop); ours
gathered the scaled values into a fresh quad and copied the results back into the phis'
registers at the back edge. Expectations: ptxas's cubin (its moves and instructions) and its outputs in the
emulator, hazard checker on."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

# per lane and iteration: A (4 words of f16 pairs), B (2 words), alpha (f32); two mmas share
# A (the second's B is the first's swapped), each accumulator quad rescaled first
PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<64>; .reg .f32 %f<4>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r50, [n];
  mov.u32 %r51, %tid.x;
  mul.wide.u32 %rd3, %r51, 32;
  add.s64 %rd1, %rd1, %rd3;
  add.s64 %rd2, %rd2, %rd3;
  mov.b32 %r10, 0;
  mov.b32 %r11, 0;
  mov.b32 %r12, 0;
  mov.b32 %r13, 0;
  mov.b32 %r14, 0;
  mov.b32 %r15, 0;
  mov.b32 %r16, 0;
  mov.b32 %r17, 0;
  mov.u32 %r52, 0;
LOOP:
  .pragma "nounroll";
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
  ld.global.v2.b32 {%r5, %r6}, [%rd1+16];
  ld.global.f32 %f1, [%rd1+24];
  mul.f32 %r10, %r10, %f1;
  mul.f32 %r11, %r11, %f1;
  mul.f32 %r12, %r12, %f1;
  mul.f32 %r13, %r13, %f1;
  mul.f32 %r14, %r14, %f1;
  mul.f32 %r15, %r15, %f1;
  mul.f32 %r16, %r16, %f1;
  mul.f32 %r17, %r17, %f1;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r10, %r11, %r12, %r13}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r10, %r11, %r12, %r13};
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r14, %r15, %r16, %r17}, {%r1, %r2, %r3, %r4}, {%r6, %r5}, {%r14, %r15, %r16, %r17};
  add.s64 %rd1, %rd1, 1024;
  add.s32 %r52, %r52, 1;
  setp.lt.s32 %p1, %r52, %r50;
  @%p1 bra LOOP;
  st.global.v4.b32 [%rd2], {%r10, %r11, %r12, %r13};
  st.global.v4.b32 [%rd2+16], {%r14, %r15, %r16, %r17};
  ret;
}
"""
TRIPS = 4


def _in_place(listing: list[str], opcode: str) -> int:
    """Instructions `opcode` whose result register is also their last (HMMA: C) or first
    (FMUL) source: accumulators rewritten where they live."""
    out = 0
    for o in listing:
        parts = o.replace(",", " ").replace(".reuse", "").split()
        if parts[0].startswith(opcode):
            srcs = parts[2:]
            out += (srcs[-1] if opcode == "HMMA" else srcs[0]) == parts[1]
    return out


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(3)
    words = np.zeros((TRIPS, 32, 8), dtype=np.uint32)
    halves = rng.integers(-8, 9, size=(TRIPS, 32, 12)).astype(np.float16) / np.float16(8)
    words[:, :, :6] = halves.view(np.uint32)
    words[:, :, 6] = rng.uniform(0.25, 2.0, size=(TRIPS, 32)).astype(np.float32).view(np.uint32)
    return words.ravel()


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_rescaled_accumulators_stay_in_the_mma_quad(arch):
    ptx = PTX.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    assert (_in_place(ref, "HMMA"), _in_place(ref, "FMUL")) == (2, 8)
    assert (_in_place(mine, "HMMA"), _in_place(mine, "FMUL")) == (2, 8), mine
    data = _inputs()
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32 * 8, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.int32(TRIPS)],
                  hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].any()
