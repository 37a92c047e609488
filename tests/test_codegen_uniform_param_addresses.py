"""sm_75: a generic/global access whose address is a kernel parameter's pointer (+ an offset)
reads the pointer into a uniform pair (`ULDC.64 URx, c[0x0][p]`, `LD.E.SYS R0, [URx+0x4]`),
as ptxas 13.5 does for Turing, so no vector pair holds it (ZLUDA's small kernels took two
to four registers more than ptxas's). Expected values: ptxas's sm_75 cubin (its register
count, its outputs in the emulator, hazard-free)."""
import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

ARCH = "sm_75"
PTX = """.version 6.5
.target sm_75
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .u64 a, b;
    .reg .b32 x, y, z;
    .reg .u64 w;
    .reg .b32 v0, v1;
    ld.param.u64 a, [in];
    ld.param.u64 b, [out];
    ld.b32 x, [a];
    ld.global.b32 y, [a+4];
    ld.u64 w, [a+8];
    ld.global.v2.b32 {v0, v1}, [a+8];
    xor.b32 z, x, y;
    st.b32 [b], z;
    st.global.b32 [b+4], y;
    st.u64 [b+8], w;
    st.global.v2.b32 [b+16], {v1, v0};
    ret;
}
"""


def _regs(cubin: bytes) -> int:
    (k,) = [k for k in read_cubin(cubin).kernels if k.name == "k"]
    return k.regcount


def test_parameter_pointer_addresses_cost_no_vector_registers():
    theirs = oracle.ptxas(PTX, ARCH).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(PTX, ARCH, "k.ptx"), ARCH, filename="k.ptx")
    assert _regs(ours) <= _regs(theirs)
    src = np.array([0x12345678, 0x0F0F0F0F, 0xDEADBEEF, 0x01234567], dtype=np.uint32)
    outs = []
    for cubin in (ours, theirs):
        dst = np.zeros(6, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [src.copy(), dst])
        assert not res.hazards
        outs.append(dst)
    assert (outs[0] == outs[1]).all()
    assert (outs[1] == [0x12345678 ^ 0x0F0F0F0F, 0x0F0F0F0F, 0xDEADBEEF, 0x01234567, 0x01234567, 0xDEADBEEF]).all()
