"""cvt.pack.sat of every destination type (fuzz campaign 8900000 refused the 16-, 4- and
2-bit ones): ptx2sass's cubin against ptxas's, and against the manual's formula worked out
with Python integers (saturate a and b to the type's range, b in the lowest field, a above
it, c's low bits above both)."""
import numpy as np
import pytest

from codegen_harness import inputs, kernel

RANGES = {"u2": (0, 3), "s2": (-2, 1), "u4": (0, 15), "s4": (-8, 7), "u8": (0, 255), "s8": (-128, 127),
          "u16": (0, 65535), "s16": (-32768, 32767)}


def _signed(v):
    return v - (1 << 32) if v >> 31 else v


def _manual(t, a, b, c):
    lo, hi = RANGES[t]
    width = int(t[1:])
    mask = (1 << width) - 1
    sa, sb = (max(lo, min(hi, _signed(x))) & mask for x in (a, b))
    return ((c << 2 * width) | (sa << width) | sb) & 0xFFFFFFFF


@pytest.mark.parametrize("t", list(RANGES))
def test_cvt_pack_sat_matches_ptxas_and_the_manual(t):
    import ptx2sass
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    if t in ("u16", "s16"):
        body, n = f"cvt.pack.sat.{t}.s32 %o, %a0, %a1;", 2
    else:
        body, n = f"cvt.pack.sat.{t}.s32.b32 %o, %a0, %a1, %a2;", 3
    src = kernel(body, 32, n, 32, version="8.5")
    vals = inputs(32, n)
    outs = []
    for cubin in (ptx2sass.compile(src), oracle.ptxas(src).output):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out, vals])
        assert res.hazards == []
        outs.append(out.tolist())
    rows = vals.reshape(64, n).tolist()
    expect = [_manual(t, r[0], r[1], r[2] if n == 3 else 0) for r in rows]
    assert outs[0] == expect
    assert outs[1] == expect



# ptxas keeps a function's loop of constants in uniform registers (the shape of campaign 20's
# 31000320): the loop runs (c & 1) + 1 times
UNIFORM_PACK = """.version 8.7
.target sm_120
.address_size 64
.func (.param .b32 r) f()
{
.reg .b32 %r<4>;
.reg .pred %p;
mov.b32 %r0, CONST;
mov.u32 %r2, 0;
and.b32 %r3, %r0, 1;
add.u32 %r3, %r3, 1;
L:
setp.lt.u32 %p, %r2, %r3;
@!%p bra E;
cvt.pack.sat.s16.s32 %r0, %r0, %r0;
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


@pytest.mark.parametrize("c", [21060, 70001, -40000, -3])
def test_cvt_pack_sat_of_uniform_operands_on_sm120(c):
    """ptxas (sm_120) writes the loop's pack as `UI2IP.S16.S32.SAT UR, UR, UR, URZ`, the
    uniform I2IP (fuzz campaign 20's 31000320: the emulator had no semantics for it): its
    cubin computes the manual's value."""
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    cubin = oracle.ptxas(UNIFORM_PACK.replace("CONST", str(c)), "sm_120").output
    assert "UI2IP.S16.S32.SAT" in oracle.cuobjdump_sass(cubin)
    out = np.zeros(1, np.uint32)
    res = run(cubin, "k", 1, 32, [out])
    assert res.hazards == []
    v = c & 0xFFFFFFFF
    for _ in range((v & 1) + 1):
        v = _manual("s16", v, v, 0)
    assert int(out[0]) == v
