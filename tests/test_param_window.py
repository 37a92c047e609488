"""A kernel parameter's address and the param window, as ptxas computes them: `mov.u64 %rd, p`
is the parameter's offset among the parameters (8 for the second u64), an `ld.param` through
that address reads bank 0 at param_base more, and `cvta.param` adds the driver's window base:
c[0x0][0x40] plus param_base on sm_8x, c[0x0][0x198] alone on sm_90 (its window starts at
the parameters). Values from ptxas's cubin in the emulator."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """
.version 8.6
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 v, .param .align 8 .b8 s[16])
{{
.reg .b64 %rd<8>;
.reg .b32 %r<4>;
ld.param.u64 %rd1, [out];
mov.u64 %rd2, v;
st.global.u64 [%rd1+8], %rd2;
ld.param.u32 %r1, [%rd2];
st.global.u32 [%rd1], %r1;
cvta.param.u64 %rd3, %rd2;
st.global.u64 [%rd1+16], %rd3;
cvta.to.param.u64 %rd4, %rd3;
st.global.u64 [%rd1+24], %rd4;
mov.u64 %rd5, s;
ld.param.u32 %r2, [%rd5+4];
st.global.u32 [%rd1+4], %r2;
cvta.param.u64 %rd6, %rd5;
st.global.u64 [%rd1+32], %rd6;
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_param_addresses_as_ptxas(arch):
    from ptx2sass.emu.launch import Param
    ptx = PTX.format(arch=arch)
    outs = []
    for cubin in (oracle.ptxas(ptx, arch).output, ptx2sass.compile(ptx, arch, "k.ptx")):
        out = np.zeros(10, np.uint32)
        s = np.arange(4, dtype=np.uint32) + 100
        result = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out, np.uint32(77), Param(type="bytes", value=s.tobytes())])
        outs.append(out)
    theirs, ours = outs
    assert theirs[0] == 77 and theirs[1] == 101 and theirs[2] == 8
    assert ours.tolist() == theirs.tolist()
