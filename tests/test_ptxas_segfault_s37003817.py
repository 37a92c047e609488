"""A valid program ptxas 13.5.37 segfaults on (sm_80/86/89/90; fuzz campaign 26's 37003817,
reduced by hand to these lines): `cnot.b32` of a u16 load, a `shl.b16` by it and a shared
`atom` inside a uniform branch. Ours compiles it and computes the PTX ISA's result."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle

PTX = """.version 8.5
.target sm_89
.address_size 64
.shared .align 16 .b32 sh[4];
.visible .entry k(.param .u64 p_out, .param .u64 p_in, .param .u32 p_u0)
{
    .reg .pred %p0; .reg .b16 %h0; .reg .b32 %r<4>; .reg .b64 %in, %out;
    ld.param.u64 %in, [p_in]; cvta.to.global.u64 %in, %in;
    ld.param.u64 %out, [p_out]; cvta.to.global.u64 %out, %out;
    ld.global.u16 %r0, [%in+0];
    ld.param.u32 %r2, [p_u0];
    setp.ne.u32 %p0, %r2, 0;
    ld.global.s8 %h0, [%in+8];
    cnot.b32 %r1, %r0;
    @%p0 bra.uni L;
        shl.b16 %h0, %h0, %r1;
        atom.shared.max.s32 %r3, [sh+4], %r2;
L:
    st.global.b16 [%out+0], %h0;
    ret;
}
"""


def test_ptxas_segfaults_here():
    """What makes this a finding (ptxas's exit by signal 11); if a later ptxas compiles it,
    the test below still checks ours."""
    try:
        oracle.ptxas(PTX, "sm_89")
    except oracle.OracleFailed as e:
        assert "signal 11" in str(e)
    else:
        pytest.skip("this ptxas compiles the program")


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("r0,s8,skip", [(0, -3, 0), (7, -3, 0), (0, 100, 1), (0, 0x7f, 0)])
def test_ours_computes_the_manual_s_result(arch, r0, s8, skip):
    from ptx2sass.emu.launch import run
    cubin = codegen.compile_ptx(PTX.replace(".target sm_89", f".target {arch}"), arch=arch)
    data = np.zeros(16, np.uint8)
    data[0:2] = np.array([r0], np.uint16).view(np.uint8)
    data[8] = np.uint8(s8 & 0xFF)
    out = np.zeros(1, np.uint16)
    res = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out, data, np.uint32(skip)], hazard_check=True)
    assert not res.hazards
    h = s8 & 0xFFFF                           # ld.s8 into .b16: sign-extended
    if not skip:
        shift = 1 if r0 == 0 else 0           # cnot: 1 where the operand is 0
        h = (h << shift) & 0xFFFF
    assert int(out[0]) == h
