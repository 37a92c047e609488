"""bf16 -> f16 (.rn/.rz/.rm/.rp), bf16 -> f32 with .ftz and bf16 -> f64 `cvt` on sm_90+
(branch isa27): one F2F.F16.BF16[.RZ/.RM/.RP] / F2F.FTZ.F32.BF16 / F2F.F64.BF16, as ptxas 13.5
writes them. On sm_100/sm_120 the first five were internal 'cannot encode' errors (the
blackwell table lacked the forms) and cvt.f64.bf16 was 'not supported yet' on every arch.
Expected values: NumPy (bf16 widens exactly; f16 rounding by np.float16's round-to-nearest-
even, stepped one ulp toward zero / -inf / +inf where the mode asks; .ftz flushes a subnormal
bf16 to a zero of its sign); a NaN only needs to be a NaN, with ours = ptxas's bits."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 o16, .param .u64 o32, .param .u64 o64, .param .u64 inp)
{{
.reg .b16 %h<8>; .reg .f32 %f<2>; .reg .f64 %d<2>; .reg .b32 %r<2>; .reg .b64 %rd<12>;
ld.param.u64 %rd1, [o16]; ld.param.u64 %rd2, [o32]; ld.param.u64 %rd3, [o64];
ld.param.u64 %rd4, [inp];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd5, %r1, 2; add.s64 %rd6, %rd4, %rd5;
ld.global.b16 %h1, [%rd6];
cvt.rn.f16.bf16 %h2, %h1;
cvt.rz.f16.bf16 %h3, %h1;
cvt.rm.f16.bf16 %h4, %h1;
cvt.rp.f16.bf16 %h5, %h1;
mul.wide.u32 %rd7, %r1, 8; add.s64 %rd7, %rd1, %rd7;
st.global.v4.b16 [%rd7], {{%h2, %h3, %h4, %h5}};
cvt.ftz.f32.bf16 %f1, %h1;
mul.wide.u32 %rd8, %r1, 4; add.s64 %rd8, %rd2, %rd8;
st.global.f32 [%rd8], %f1;
cvt.f64.bf16 %d1, %h1;
mul.wide.u32 %rd9, %r1, 8; add.s64 %rd9, %rd3, %rd9;
st.global.f64 [%rd9], %d1;
ret;
}}
"""

# zeros, ones, f16's limits and beyond (65504, 65520 ties, overflow), f16 subnormals and below,
# bf16 subnormals, infinities, NaNs, values between f16 neighbours, random patterns
EDGES = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x477F, 0x4780, 0xC77F, 0xC780, 0x477E, 0x4800,
         0x3380, 0xB380, 0x3300, 0x33C0, 0x2F80, 0xAF80, 0x0001, 0x8001, 0x007F, 0x0080,
         0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3FAB, 0xBFAB, 0x4049, 0x3DCD, 0xC2F7]
RNG_BITS = np.random.default_rng(27).integers(0, 1 << 16, 34, dtype=np.int64).tolist()
INPUTS = np.array(EDGES + RNG_BITS, np.uint16)


def _bf16_value(bits: int) -> float:
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def _f16_bits(x: float, mode: str) -> int | None:
    """x rounded to f16 in `mode` (None for NaN)."""
    if np.isnan(x):
        return None
    with np.errstate(over="ignore"):
        r = np.float16(x)                      # round to nearest even (one rounding from f64)
    if float(r) != x and not np.isinf(x):
        step = {"rn": None, "rz": np.float16(0), "rm": np.float16(-np.inf),
                "rp": np.float16(np.inf)}[mode]
        wrong = {"rn": False, "rz": abs(float(r)) > abs(x), "rm": float(r) > x,
                 "rp": float(r) < x}[mode]
        if wrong:
            r = np.nextafter(r, step)
    return int(np.array([r], np.float16).view(np.uint16)[0])


def _expected():
    f16 = [[_f16_bits(_bf16_value(b), m) for m in ("rn", "rz", "rm", "rp")] for b in INPUTS.tolist()]
    f32 = []
    for b in INPUTS.tolist():
        if b & 0x7F80 == 0:                    # zero or subnormal: .ftz gives a signed zero
            f32.append((b & 0x8000) << 16)
        else:
            f32.append(None if np.isnan(_bf16_value(b)) else b << 16)
    f64 = [None if np.isnan(_bf16_value(b)) else
           int(np.array([_bf16_value(b)], np.float64).view(np.uint64)[0]) for b in INPUTS.tolist()]
    return f16, f32, f64


def _run(cubin, hazards):
    n = len(INPUTS)
    outs = [np.zeros(4 * n, np.uint16), np.zeros(n, np.uint32), np.zeros(n, np.uint64)]
    res = run(cubin, "k", 1, n, [*outs, INPUTS.copy()], hazard_check=hazards)
    assert not (hazards and res.hazards), res.hazards[:3]
    return outs[0].reshape(n, 4), outs[1], outs[2]


NAN = {16: lambda g: g & 0x7C00 == 0x7C00 and g & 0x3FF, 32: lambda g: g & 0x7F800000 == 0x7F800000 and g & 0x7FFFFF,
       64: lambda g: g >> 52 & 0x7FF == 0x7FF and g & ((1 << 52) - 1)}


def _check(got, want, nan_bits, width):
    for k, (g, w) in enumerate(zip(np.asarray(got).ravel().tolist(), want)):
        if w is None:                          # a NaN: any NaN, and the same bits as ptxas's
            assert NAN[width](g) and g == nan_bits[k], (k, hex(g), hex(nan_bits[k]))
        else:
            assert g == w, (width, k, hex(g), hex(w))


@pytest.mark.parametrize("arch", ["sm_100", "sm_120", "sm_90"])
def test_bf16_widening_converts(arch):
    ptx = KERNEL.format(arch=arch)
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    f16, f32, f64 = _expected()
    flat16 = [v for row in f16 for v in row]
    t16, t32, t64 = _run(theirs.output, False)
    o16, o32, o64 = _run(ours, True)
    for got in ((o16, o32, o64), (t16, t32, t64)):
        _check(got[0], flat16, t16.ravel().tolist(), 16)
        _check(got[1], f32, t32.tolist(), 32)
        _check(got[2], f64, t64.tolist(), 64)
    sass = oracle.cuobjdump_sass(ours)
    for text in ("F2F.F16.BF16 ", "F2F.F16.BF16.RZ", "F2F.F16.BF16.RM", "F2F.F16.BF16.RP",
                 "F2F.FTZ.F32.BF16", "F2F.F64.BF16"):
        assert text in sass, text


GUARDED = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 o, .param .u64 i)
{{
.reg .b16 %h<4>; .reg .f64 %d<2>; .reg .f32 %f<2>; .reg .b32 %r<3>; .reg .b64 %rd<8>; .reg .pred %p;
ld.param.u64 %rd1, [o]; ld.param.u64 %rd2, [i];
mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 1; setp.eq.u32 %p, %r2, 0;
mul.wide.u32 %rd3, %r1, 2; add.s64 %rd3, %rd2, %rd3; ld.global.b16 %h1, [%rd3];
mov.f64 %d1, 0d4000000000000000; mov.f32 %f1, 0f40400000; mov.b16 %h2, 0x1234;
@%p cvt.f64.bf16 %d1, %h1;
@%p cvt.ftz.f32.bf16 %f1, %h1;
@!%p cvt.rm.f16.bf16 %h2, %h1;
mul.wide.u32 %rd4, %r1, 16; add.s64 %rd4, %rd1, %rd4;
st.global.f64 [%rd4], %d1; st.global.f32 [%rd4+8], %f1; st.global.b16 [%rd4+12], %h2;
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_guarded_bf16_widening_converts(arch):
    """Under a guard the old values stay where the guard is false (ours = ptxas's = NumPy)."""
    ptx = GUARDED.format(arch=arch)
    n = len(INPUTS)
    f16, f32, f64 = _expected()
    got = []
    for cubin, hazards in ((codegen.compile_ptx(ptx, arch, "k.ptx"), True),
                           (oracle.ptxas(ptx, arch).output, False)):
        out = np.zeros(n * 4, np.uint32)
        res = run(cubin, "k", 1, n, [out, INPUTS.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards), res.hazards[:3]
        got.append(out.reshape(n, 4))
    np.testing.assert_array_equal(got[0], got[1])
    ours = got[0]
    for t in range(n):
        even = t % 2 == 0
        d = int(ours[t, 0]) | int(ours[t, 1]) << 32
        want64 = f64[t] if even else 0x4000000000000000
        want32 = f32[t] if even else 0x40400000
        want16 = 0x1234 if even else f16[t][2]
        for g, w in ((d, want64), (int(ours[t, 2]), want32), (int(ours[t, 3]) & 0xFFFF, want16)):
            assert w is None or g == w, (t, hex(g), hex(w))
