"""I2F from one byte of a register (`I2F.U8 R7, R2.B2`, `.B3`): ptxas writes it to unpack a
`uchar4` on sm_80 (the real-world corpus' image_ops `rgba_to_gray`), and the byte selector's
upper bit (61) was in no table: the emulator could not decode ptxas's cubin, and on
sm_90/sm_120 the F16/F64 forms were read without their selector (a wrong value). Expected
values: the bytes' exact conversions (NumPy); decoded text: nvdisasm's."""
from __future__ import annotations

import numpy as np
import pytest

from encoder import codec
from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pf, .param .u64 pd, .param .u64 ph)
{
  .reg .b16 %rs<9>; .reg .f32 %f<5>; .reg .f64 %fd<5>; .reg .b32 %r<4>; .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pf]; ld.param.u64 %rd3, [pd]; ld.param.u64 %rd4, [ph];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.v4.u8 {%rs1, %rs2, %rs3, %rs4}, [%rd6];
  ld.global.v4.s8 {%rs5, %rs6, %rs7, %rs8}, [%rd6];
  cvt.rn.f32.u16 %f1, %rs1; cvt.rn.f32.u16 %f2, %rs2; cvt.rn.f32.u16 %f3, %rs3; cvt.rn.f32.u16 %f4, %rs4;
  mul.wide.u32 %rd7, %r1, 16;
  add.s64 %rd8, %rd2, %rd7;
  st.global.v4.f32 [%rd8], {%f1, %f2, %f3, %f4};
  cvt.rn.f64.s16 %fd1, %rs7; cvt.rn.f64.s16 %fd2, %rs8;
  mul.wide.u32 %rd9, %r1, 16;
  add.s64 %rd10, %rd3, %rd9;
  st.global.v2.f64 [%rd10], {%fd1, %fd2};
  cvt.rn.f16.u16 %rs1, %rs3;
  mul.wide.u32 %rd9, %r1, 2;
  add.s64 %rd11, %rd4, %rd9;
  st.global.b16 [%rd11], %rs1;
  ret;
}
"""

WORDS = [0x000ea200000010002000000200077306,    # I2F.U8 R7, R2.B2
         0x000ea200000010003000000200077306,    # I2F.U8 R7, R2.B3
         0x000ea200000008002000000200077306,    # I2F.F16.U8 R7, R2.B2
         0x000ea20000000c003000000200077306,    # I2F.F16.S8 R7, R2.B3
         0x000ea200000018002000000200077312,    # I2F.F64.U8 R7, R2.B2
         0x000ea20000001c003000000200077312,    # I2F.F64.S8 R7, R2.B3
         0x000ea200000014001000000200077306]    # I2F.S8 R7, R2.B1


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90", "sm_120"])
def test_byte_selector_decodes_as_nvdisasm_reads_it(arch):
    for w in WORDS:
        out = oracle.nvdisasm_raw(w.to_bytes(16, "little"), arch)
        want = [ln for ln in out.stdout.splitlines() if "/*0" in ln][0].split("*/")[1].split(";")[0].strip()
        assert codec.decode_text(w, arch) == want


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_bytes_to_float_in_the_emulator(arch):
    ptx = KERNEL.replace("ARCH", arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, 4 * 64, dtype=np.uint8)
    u, s = raw.reshape(64, 4), raw.view(np.int8).reshape(64, 4)
    want_f = u.astype(np.float32).ravel()
    want_d = s[:, 2:].astype(np.float64).ravel()
    want_h = u[:, 2].astype(np.float16)
    for cubin in (theirs.output, codegen.compile_ptx(ptx, arch, "k.ptx")):
        f, d, h = np.zeros(256, np.float32), np.zeros(128, np.float64), np.zeros(64, np.float16)
        run(cubin, "k", (1, 1, 1), (64, 1, 1), [raw.copy(), f, d, h])
        assert f.tolist() == want_f.tolist()
        assert d.tolist() == want_d.tolist()
        assert h.view(np.uint16).tolist() == want_h.view(np.uint16).tolist()


def test_sm80_ptxas_writes_the_upper_byte_selectors():
    """The emulator test above exercises the forms: ptxas's sm_80 cubin holds .B2/.B3."""
    text = oracle.nvdisasm(oracle.ptxas(KERNEL.replace("ARCH", "sm_80"), "sm_80").output)
    assert ".B2 ;" in text and ".B3 ;" in text
