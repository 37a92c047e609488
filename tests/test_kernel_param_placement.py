"""Kernel parameters in constant bank 0 where ptxas 13.5 puts them: up to sm_90 each at the
first offset whose bank address (the arch's parameter base + offset) is a multiple of its
alignment, so an `.align 64` parameter after a u64 is at 0x30 on sm_90 (0x210 + 0x30 =
0x240) and at 0x20 on sm_8x (0x160 + 0x20); from sm_100 alignment counts from the first
parameter byte (`.align 256` after a u64: 0x100). Ours counted from the first parameter
byte everywhere. Checked against ptxas's KPARAM_INFO records and bank size, and by running both
cubins on the same argument bytes."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import Param, run
from ptx2sass.encoder.cubin import read_cubin

KERNEL = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u8 tag, .param .align {align} .b8 blob[136], .param .u32 last)
{{
.reg .b64 %rd<3>;
.reg .b32 %r<5>;
.reg .b16 %h;
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd2, %rd1;
ld.param.u32 %r1, [blob+4];
ld.param.u32 %r2, [blob+132];
ld.param.u32 %r3, [last];
ld.param.u8 %h, [tag];
cvt.u32.u16 %r4, %h;
st.global.v4.u32 [%rd2], {{%r1, %r2, %r3, %r4}};
ret;
}}
"""


def _records(cubin: bytes):
    kernel = read_cubin(cubin).kernels[0]
    return sorted(kernel.params), len(kernel.const0 or b"")


@pytest.mark.parametrize("align", [16, 32, 64, 128, 256, 1024])
@pytest.mark.parametrize("arch,version", [("sm_75", "8.5"), ("sm_89", "8.5"), ("sm_90", "8.5"),
                                          ("sm_100", "8.8"), ("sm_120", "8.8")])
def test_parameters_aligned_in_the_bank_as_ptxas(arch, version, align):
    ptx = KERNEL.format(arch=arch, version=version, align=align)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert _records(ours) == _records(theirs.output)
    blob = bytes(range(7, 7 + 136))
    want = [int.from_bytes(blob[4:8], "little"), int.from_bytes(blob[132:136], "little"), 0xC0FFEE, 0x5A]
    for cubin in (ours, theirs.output):
        out = np.zeros(4, np.uint32)
        run(cubin, "k", 1, 1, [out, Param(type="u8", value=0x5A), Param(type="bytes", value=blob),
                               Param(type="u32", value=0xC0FFEE)])
        assert out.tolist() == want
