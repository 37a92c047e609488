"""An mma whose accumulator is all zero constants (Triton's `tl.dot` from zeros, the first
product of flash attention's loop): ptxas 13.5 reads RZ as C (`HMMA.16816.F32 R8, R4, R6,
RZ`, IMMA and QMMA alike, sm_75 to sm_120) and zeroes no register group. Expectations:
ptxas's cubin (how many of its mmas read RZ, how many zeroing instructions it has) and its
outputs in the emulator, hazard checker on."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

HEAD = """.version 8.7
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<8>; .reg .b32 %r<64>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r60, %tid.x;
  mul.wide.u32 %rd3, %r60, 32;
  add.s64 %rd1, %rd1, %rd3;
  mul.wide.u32 %rd3, %r60, 128;
  add.s64 %rd2, %rd2, %rd3;
  mov.b32 %r39, 0;
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
  ld.global.v2.b32 {%r5, %r6}, [%rd1+16];
"""
# (line, results stored): each an mma from a zero C, its D stored at a distinct offset
MMAS = {
    "f16": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r10,%r11,%r12,%r13}, {%r1,%r2,%r3,%r4}, "
            "{%r5,%r6}, {%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2], {%r10,%r11,%r12,%r13};\n"
            "  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r14,%r15}, {%r1,%r2,%r3,%r4}, "
            "{%r5,%r6}, {%r39,%r39};\n  st.global.v2.b32 [%rd2+16], {%r14,%r15};\n"),
    "bf16": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%r10,%r11,%r12,%r13}, {%r1,%r2,%r3,%r4}, "
             "{%r5,%r6}, {%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2+32], {%r10,%r11,%r12,%r13};\n"),
    "s8": ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r20,%r21,%r22,%r23}, {%r1,%r2,%r3,%r4}, "
           "{%r5,%r6}, {%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2+48], {%r20,%r21,%r22,%r23};\n"),
    "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%r24,%r25,%r26,%r27}, {%r1,%r2,%r3,%r4}, "
             "{%r5,%r6}, {%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2+64], {%r24,%r25,%r26,%r27};\n"),
    "f16k8": ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r28,%r29,%r30,%r31}, {%r1,%r2}, {%r5}, "
              "{%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2+80], {%r28,%r29,%r30,%r31};\n"),
    "e4m3": ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%r32,%r33,%r34,%r35}, {%r1,%r2,%r3,%r4}, "
             "{%r5,%r6}, {%r39,%r39,%r39,%r39};\n  st.global.v4.b32 [%rd2+96], {%r32,%r33,%r34,%r35};\n"),
}
CASES = [("sm_75", ("f16k8",)), ("sm_80", ("f16", "bf16", "s8", "tf32")),
         ("sm_89", ("f16", "bf16", "s8", "tf32", "e4m3")), ("sm_90", ("f16", "bf16", "s8", "tf32"))]


def _zeroing(listing: list[str]) -> int:
    return sum(o.startswith("CS2R") or (o.startswith(("MOV ", "IMAD.MOV")) and o.rstrip(" ;").endswith("RZ"))
               for o in listing)


def _reads_rz(listing: list[str]) -> int:
    return sum("MMA" in o.split()[0] and o.rstrip(" ;").endswith("RZ") for o in listing)


def _inputs() -> np.ndarray:
    """Per lane 4 A words and 2 B words of small finite values for every element type:
    f16/bf16 halves of +-(1..8)/8, int8 bytes, fp8 e4m3 bytes below 0x70 (no NaN)."""
    rng = np.random.default_rng(5)
    words = rng.integers(0, 1 << 30, size=(32, 8), dtype=np.uint32) & np.uint32(0x3C373C37)
    return words


@pytest.mark.parametrize("arch,kinds", CASES)
def test_zero_accumulator_reads_rz(arch, kinds):
    ptx = HEAD.replace("ARCH", arch) + "".join("  " + MMAS[k] for k in kinds) + "  ret;\n}\n"
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    assert _reads_rz(ref) == len(kinds) + (kinds[0] == "f16")
    assert _reads_rz(mine) == _reads_rz(ref), mine
    assert _zeroing(mine) <= _zeroing(ref), (mine, ref)
    data = _inputs()
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32 * 32, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].any()
