"""Generic loads of `.const` data through `cvta.const`: the driver maps the module's constant
bank into the generic space at the address in c[0x0][const_window] (encoder/arch.py's
driver_cbank); the emulator places a copy of the bank there (fuzz campaign 6, seed 800389:
our cubin's `LD.E [R2.64+0x38]` faulted with no buffer there). Expected values are the
PTX initialiser's."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

VALUES = [0x11111111 * (i + 1) & 0xFFFFFFFF for i in range(16)]

CONST_GENERIC = """.version 8.5
.target sm_89
.address_size 64
.const .align 4 .b32 g_const[16] = {%s};
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %%r<3>;
    .reg .b64 %%d<6>;
    ld.param.u64 %%d0, [out];
    ld.param.u64 %%d1, [in];
    ld.global.u32 %%r0, [%%d1];
    and.b32 %%r0, %%r0, 15;
    mul.wide.u32 %%d2, %%r0, 4;
    mov.u64 %%d3, g_const;
    cvta.const.u64 %%d4, %%d3;
    add.s64 %%d5, %%d4, %%d2;
    ld.u32 %%r1, [%%d5];
    ld.u32 %%r2, [%%d4+56];
    st.global.u32 [%%d0], %%r1;
    st.global.u32 [%%d0+4], %%r2;
    ret;
}
""" % ", ".join(str(v) for v in VALUES)


@pytest.mark.parametrize("compiler", ["ptx2sass", "ptxas"])
@pytest.mark.parametrize("index", [0, 5, 15])
def test_generic_load_of_const_data(compiler, index):
    cubin = ptx2sass.compile(CONST_GENERIC) if compiler == "ptx2sass" else oracle.ptxas(CONST_GENERIC).output
    out = np.zeros(2, np.uint32)
    run(cubin, "k", (1,), (1,), [out, np.array([index], np.uint32)])
    assert [int(v) for v in out] == [VALUES[index], VALUES[14]]
