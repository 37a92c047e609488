"""ptxas 13.5.37 forms the emulator could not decode in branch fuzz31's held-out runs
(sm_120 seed 43100169, sm_75 seeds 43300051, 43300252, 43300434; their words are in
tools/isa_seeds/campaign31_sm{75,120}.words). Each test writes a small kernel for which
ptxas writes the form, checks that its cubin holds it, and runs that cubin in the emulator
against the manual's value worked out here in Python."""
import sys
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

sys.path.insert(0, str(Path(__file__).parent))
from test_cvt_pack_saturated import _manual  # noqa: E402
from test_sm120_uniform_ops import LOOP  # noqa: E402


def _cubin(src: str, arch: str, form: str) -> bytes:
    r = oracle.ptxas(src, arch)
    assert r.ok, r.stderr
    assert form in oracle.cuobjdump_sass(r.output), form
    return r.output


HEAD75 = ".version 8.8\n.target sm_75\n.address_size 64\n"

F2F_F64_F16_OF_A_PARAMETER = HEAD75 + """
.visible .entry k(.param .u64 out, .param .b16 h)
{
    .reg .b16 %h<2>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.b16 %h0, [h];
    cvt.f64.f16 %d1, %h0;
    st.global.f64 [%d0], %d1;
    ret;
}
"""


@pytest.mark.parametrize("h", [0xC140, 0x0001, 0x7BFF, 0xFC00])
def test_f2f_f64_f16_of_a_constant_bank_half(h):
    """`F2F.F64.F16 R, c[0x0][...]` (43300051): cvt.f64.f16 is exact (PTX ISA, cvt: a wider
    float holds every f16), subnormals and infinities included."""
    cubin = _cubin(F2F_F64_F16_OF_A_PARAMETER, "sm_75", "F2F.F64.F16 R2, c[0x0] [0x168]")
    out = np.zeros(1, np.float64)
    res = run(cubin, "k", 1, 1, [out, np.uint16(h)])
    assert res.hazards == []
    assert out[0] == np.float64(np.array([h], np.uint16).view(np.float16)[0])


I2IP_S4_OF_A_PARAMETER = HEAD75 + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .b32 b)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.param.b32 %r1, [b];
    ld.global.b32 %r0, [%d1];
    ld.global.b32 %r2, [%d1+4];
    cvt.pack.sat.s4.s32.b32 %r3, %r0, %r1, %r2;
    st.global.b32 [%d0], %r3;
    ret;
}
"""


@pytest.mark.parametrize("a, b, c", [(5, -3, 0x12345678), (100, -100, 0xFFFFFFFF), (-8, 7, 1)])
def test_i2ip_s4_sat_of_a_constant_bank_source(a, b, c):
    """`I2IP.S4.S32.SAT R, R, c[0x0][...], R.24` (43300252): a and b saturated to s4 and
    packed above c's low bits (PTX ISA, cvt.pack)."""
    cubin = _cubin(I2IP_S4_OF_A_PARAMETER, "sm_75", "I2IP.S4.S32.SAT")
    out = np.zeros(1, np.uint32)
    res = run(cubin, "k", 1, 1, [out, np.array([a & 0xFFFFFFFF, c], np.uint32), np.int32(b)])
    assert res.hazards == []
    assert int(out[0]) == _manual("s4", a & 0xFFFFFFFF, b & 0xFFFFFFFF, c)


UPRMT_OF_THREE_PARAMETERS = HEAD75 + """
.visible .entry k(.param .u64 out, .param .u64 in, .param .b32 a, .param .b32 b, .param .b32 c)
{
    .reg .b32 %r<8>;
    .reg .b64 %d<4>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.param.b32 %r0, [a];
    ld.param.b32 %r1, [b];
    ld.param.b32 %r2, [c];
    prmt.b32 %r3, %r0, %r1, %r2;
    and.b32 %r4, %r3, 255;
    mul.wide.u32 %d2, %r4, 4;
    add.s64 %d3, %d1, %d2;
    ld.global.u32 %r5, [%d3];
    st.global.b32 [%d0], %r5;
    shr.u32 %r4, %r3, 24;
    mul.wide.u32 %d2, %r4, 4;
    add.s64 %d3, %d1, %d2;
    ld.global.u32 %r5, [%d3];
    st.global.b32 [%d0+4], %r5;
    ret;
}
"""


def _prmt(a: int, b: int, c: int) -> int:
    """PTX ISA, prmt (default mode): byte i of d is byte c[4i+2:4i] of {b, a}, or that
    byte's sign replicated where c[4i+3] is set."""
    pool = (b << 32 | a).to_bytes(8, "little")
    d = 0
    for i in range(4):
        n = c >> 4 * i & 0xF
        byte = pool[n & 7]
        if n & 8:
            byte = 0xFF if byte & 0x80 else 0
        d |= byte << 8 * i
    return d


@pytest.mark.parametrize("a, b, c", [(0x11223344, 0x8899AABB, 0x3210), (0x11223344, 0x8899AABB, 0xC7F4),
                                     (0x80FF7F01, 0x00000000, 0x0B5A)])
def test_uprmt_of_three_uniform_registers(a, b, c):
    """`UPRMT UR, UR, UR, UR` (43300434: the selector a uniform register too); the result's
    low and high bytes index a table, so ptxas keeps it uniform."""
    cubin = _cubin(UPRMT_OF_THREE_PARAMETERS, "sm_75", "UPRMT UR8, UR8, UR4, UR9")
    table = np.arange(256, dtype=np.uint32) * 3 + 1000
    out = np.zeros(2, np.uint32)
    res = run(cubin, "k", 1, 1, [out, table, np.uint32(a), np.uint32(b), np.uint32(c)])
    assert res.hazards == []
    d = _prmt(a, b, c)
    assert [int(v) for v in out] == [int(table[d & 0xFF]), int(table[d >> 24])]


@pytest.mark.parametrize("const", [0x00014A40, 0x0001CA40, 0x00004B00, 4])
def test_guarded_uniform_f2i_f16(const):
    """`@UP0 UF2I.F16.NTZ UR, UR` (43100169 had `@!UP0`): ptxas keeps the device function's
    loop over a constant uniform; `mov.b32 {h0, h1}, r0; setp.gt.u32 p, r0, 5; @p
    cvt.rni.s32.f16 r0, h0` once (the constants are even: one trip). rni rounds half to even
    (12.5 -> 12, -12.5 -> -12); p false leaves r0."""
    body = "mov.b32 {%h0, %h1}, %r0;\nsetp.gt.u32 %p, %r0, 5;\n@%p cvt.rni.s32.f16 %r0, %h0;"
    cubin = _cubin(LOOP.replace("CONST", str(const)).replace("BODY", body), "sm_120", "@UP0 UF2I.F16.NTZ")
    out = np.zeros(1, np.uint32)
    res = run(cubin, "k", 1, 32, [out])
    assert res.hazards == []
    half = float(np.array([const & 0xFFFF], np.uint16).view(np.float16)[0])
    want = int(np.rint(half)) & 0xFFFFFFFF if const > 5 else const
    assert int(out[0]) == want
