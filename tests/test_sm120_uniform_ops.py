"""Uniform-datapath instructions of ptxas 13.5.37's sm_120 cubins the emulator had no
semantics for (fuzz campaign 20, seeds 31000000-: `fault: unsupported instruction`). ptxas
keeps a device function's loop over constants in uniform registers (the shape of 31000320):
each test writes one statement in such a loop, checks that ptxas's cubin holds the uniform
instruction, and that the cubin computes the manual's value, worked out here in Python."""
import numpy as np
import pytest

from test_cvt_pack_saturated import _manual

# %r0 starts as CONST; the loop runs (CONST & 1) + 1 times; f returns %r0
LOOP = """.version 8.7
.target sm_120
.address_size 64
.func (.param .b32 r) f()
{
.reg .b32 %r<4>;
.reg .b16 %h<2>;
.reg .pred %p;
mov.b32 %r0, CONST;
mov.b32 %r1, 0;
mov.u32 %r2, 0;
and.b32 %r3, %r0, 1;
add.u32 %r3, %r3, 1;
L:
setp.lt.u32 %p, %r2, %r3;
@!%p bra E;
BODY
add.u32 %r2, %r2, 1;
bra L;
E:
st.param.b32 [r], %r0;
ret;
}
.visible .entry k(.param .u64 out)
{
.reg .b64 %rd<2>;
.reg .b32 %r<2>;
ld.param.u64 %rd1, [out];
{
.param .b32 r0;
call.uni (r0), f, ();
ld.param.b32 %r1, [r0];
}
st.global.b32 [%rd1], %r1;
ret;
}
"""


def _ptxas_result(body: str, const: int, sass: str) -> int:
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    cubin = oracle.ptxas(LOOP.replace("CONST", str(const)).replace("BODY", body), "sm_120").output
    assert sass in oracle.cuobjdump_sass(cubin)
    out = np.zeros(1, np.uint32)
    res = run(cubin, "k", 1, 32, [out])
    assert res.hazards == []
    return int(out[0])


def _trips(const: int) -> int:
    return (const & 1) + 1


@pytest.mark.parametrize("c", [21060, 70001, -40000, -3])
def test_uniform_cvt_pack_sat(c):
    """`UI2IP.S16.S32.SAT UR, UR, UR, URZ` (31000320): the uniform I2IP."""
    v = c & 0xFFFFFFFF
    for _ in range(_trips(v)):
        v = _manual("s16", v, v, 0)
    assert _ptxas_result("cvt.pack.sat.s16.s32 %r0, %r0, %r0;", c, "UI2IP.S16.S32.SAT") == v


def _f16_rm(x: float) -> int:
    """The f16 bits of `x` rounded toward -infinity (finite, in f16's range)."""
    h = np.float16(x)
    if float(h) > x:
        h = np.nextafter(h, np.float16(-np.inf), dtype=np.float16)
    return int(h.view(np.uint16))


@pytest.mark.parametrize("c", [0x3F8CCCCD, 0xC0490FDB, 0x3E2AAAAB, 0x40000001, 0x40000000])
def test_uniform_cvt_rm_f16_f32(c):
    """`UF2F.F16.F32.RM UR, UR` (31000664): each trip adds the f16 bits of cvt.rm.f16.f32
    (round toward -infinity) of %r0 to %r0."""
    v = c
    for _ in range(_trips(c)):
        x = float(np.uint32(v).view(np.float32))
        v = (v + _f16_rm(x)) & 0xFFFFFFFF
    body = "cvt.rm.f16.f32 %h0, %r0;\ncvt.u32.u16 %r1, %h0;\nadd.u32 %r0, %r0, %r1;"
    assert _ptxas_result(body, c, "UF2F.F16.F32.RM") == v
