"""The packed int <-> float converts (I2FP.F32.S32, F2IP.U8.F32) are a Target fact
(`packed_converts`): ptxas writes them from sm_86 on and I2F / F2I.U8 on sm_80."""
import re

import pytest

import ptx2sass
from ptx2sass import oracle

PTX = """
.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<4>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd1, %rd1;
    ld.global.u32 %r1, [%rd1];
    cvt.rn.f32.s32 %f1, %r1;
    cvt.rzi.u8.f32 %r2, %f1;
    st.global.f32 [%rd1+4], %f1;
    st.global.u32 [%rd1+8], %r2;
    ret;
}}
"""


def _converts(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [m.split(".")[0] for m in re.findall(r"\b(?:I2FP?|F2IP?)(?:\.[A-Z0-9]+)*", text)]


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_packed_converts_as_ptxas(arch):
    ptx = PTX.format(arch=arch)
    theirs = _converts(oracle.ptxas(ptx, arch).output)
    ours = _converts(ptx2sass.compile(ptx, arch, "k.ptx"))
    assert sorted(ours) == sorted(theirs)
    assert (arch == "sm_80") == ("I2F" in theirs)
