"""One fragment read by two mmas (flash attention's P, the A of both halves of `P @ V`),
computed by cvt: ptxas 13.5 packs each F2FP result straight into the A quad both HMMAs
read; ours gathered it twice, each gather copying the F2FP results. Expectations: ptxas's
cubin (both HMMAs read one A register, no move reads an F2FP result) and its outputs in the
emulator, hazard checker on."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<8>; .reg .b32 %r<64>; .reg .f32 %f<16>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r51, %tid.x;
  mul.wide.u32 %rd3, %r51, 64;
  add.s64 %rd1, %rd1, %rd3;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1+16];
  ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd1+32];
  cvt.rn.f16x2.f32 %r1, %f2, %f1;
  cvt.rn.f16x2.f32 %r2, %f4, %f3;
  cvt.rn.f16x2.f32 %r3, %f6, %f5;
  cvt.rn.f16x2.f32 %r4, %f8, %f7;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r10, %r11, %r12, %r13}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r14, %r15, %r16, %r17}, {%r1, %r2, %r3, %r4}, {%r7, %r8}, {%f5, %f6, %f7, %f8};
  st.global.v4.b32 [%rd2], {%r10, %r11, %r12, %r13};
  st.global.v4.b32 [%rd2+16], {%r14, %r15, %r16, %r17};
  ret;
}
"""


def _fields(o: str) -> list[str]:
    return o.replace(",", " ").replace(".reuse", "").split()


def _a_registers(listing: list[str]) -> list[str]:
    return [_fields(o)[2] for o in listing if o.startswith("HMMA")]


def _moved_packs(listing: list[str]) -> int:
    """Moves whose source is a register an F2FP wrote."""
    packed = {_fields(o)[1] for o in listing if o.startswith("F2FP")}
    return sum(_fields(o)[0] in ("MOV", "IMAD.MOV.U32") and _fields(o)[-1] in packed for o in listing)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_shared_a_fragment_is_packed_once(arch):
    ptx = PTX.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    assert len(set(_a_registers(ref))) == 1 and _moved_packs(ref) == 0
    assert len(set(_a_registers(mine))) == 1, mine
    assert _moved_packs(mine) == 0, mine
    rng = np.random.default_rng(9)
    data = np.zeros((32, 16), dtype=np.uint32)
    data[:, :8] = rng.uniform(-2, 2, size=(32, 8)).astype(np.float32).view(np.uint32)
    data[:, 8:12] = (rng.integers(-8, 9, size=(32, 8)).astype(np.float16) / np.float16(4)).view(np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32 * 16, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.ravel().copy()], hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].any()
