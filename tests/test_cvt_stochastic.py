"""cvt.rs: stochastic rounding with an rbits operand (PTX 8.7; ptxas 13.5.37 takes it on
sm_100a and sm_103a only), branch cvt31 (issue 15):

    cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32            d, a, b, rbits;
    cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4,e2m1x4}.f32 d, {a, b, e, f}, rbits;

- ptx2sass's cubin and ptxas's run in the emulator on random and edge inputs and random bits:
  equal to each other and to a reference written here from the PTX ISA's cvt (the result
  rounds away from zero when adding the random bits to the discarded mantissa bits carries
  out; which bits of rbits each element takes; where each element lands in d). The reference
  works on the format's grid of values (the gap around |x|), not on bit fields as the
  emulator's model does. Where the manual leaves it open (more discarded bits than random
  bits: fp8/fp6/fp4, f16/bf16 subnormal results), both read it as the random bits added to
  the top discarded bits; no Blackwell part checked that.
- the F2FP lines each writes, as nvdisasm reads them;
- refusals, line for line as ptxas's."""
import math
import re
from bisect import bisect_right
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

from codegen_harness import kernel
from tests.ptxas_refusals import assert_refused_as_ptxas, one_instruction_module

N = 128
# every form on sm_100a; two on sm_103a (test_sm103a: the same encodings)
TARGETS = [("sm_100a", "8.7")]
SASS = {"f16x2": "F16", "bf16x2": "BF16", "e4m3x4": "E4M3", "e5m2x4": "E5M2", "e2m3x4": "E2M3",
        "e3m2x4": "E3M2", "e2m1x4": "E2M1"}


# ----------------------------------------------------------------- the reference (the manual)

def _value(code: int, e_bits: int, m_bits: int) -> Fraction:
    bias = 2 ** (e_bits - 1) - 1
    e, m = code >> m_bits, code & (2 ** m_bits - 1)
    if e == 0:
        return Fraction(m, 2 ** m_bits) * Fraction(2) ** (1 - bias)
    return (1 + Fraction(m, 2 ** m_bits)) * Fraction(2) ** (e - bias)


# element format -> (exponent bits, mantissa bits, finite non-negative codes, has inf, NaN code)
FORMATS = {"F16": (5, 10, 0x7BFF, True, 0x7FFF), "BF16": (8, 7, 0x7F7F, True, 0x7FFF),
           "E4M3": (4, 3, 0x7E, False, 0x7F), "E5M2": (5, 2, 0x7B, True, 0x7F),
           "E2M3": (2, 3, 0x1F, False, None), "E3M2": (3, 2, 0x1F, False, None),
           "E2M1": (2, 1, 0x7, False, None)}


@lru_cache(maxsize=None)
def grid(fmt: str) -> list[Fraction]:
    """The format's non-negative finite values, index = code."""
    e_bits, m_bits, top, _, _ = FORMATS[fmt]
    return [_value(c, e_bits, m_bits) for c in range(top + 1)]


def stochastic(x: float, fmt: str, r: int, n: int, satfinite: bool, relu: bool) -> int:
    """x rounded to `fmt` with n random bits r: toward zero, or away from it when r plus the
    top n bits of the discarded part (the fraction of the gap between the two neighbours)
    carries out of n bits."""
    e_bits, m_bits, top, has_inf, nan = FORMATS[fmt]
    sign_bit = 1 << (e_bits + m_bits)
    if math.isnan(x):
        return nan
    if relu and math.copysign(1.0, x) < 0:
        x = 0.0
    sign = sign_bit if math.copysign(1.0, x) < 0 else 0
    g = grid(fmt)
    inf_code = top + 1 if has_inf else None
    if math.isinf(x):
        return sign | (top if satfinite or not has_inf else inf_code)
    mag = abs(Fraction(x))
    i = bisect_right(g, mag) - 1
    if g[i] == mag:
        return sign | i
    lo = g[i]
    hi = g[i + 1] if i < top else g[top] + (g[top] - g[top - 1])   # past the largest: one more gap
    frac = (mag - lo) / (hi - lo)
    up = math.floor(frac * 2 ** n) + r >= 2 ** n
    code = i + up
    if code > top:
        code = top if satfinite or not has_inf else inf_code
    return sign | code


def reference(dty: str, xs, rbits: int, satfinite: bool, relu: bool) -> int:
    """d of `cvt.rs...{dty}.f32` for the f32 sources xs (a, b or a, b, e, f), from the manual."""
    fmt = SASS[dty]

    def rnd(x, r, n):
        return stochastic(x, fmt, r, n, satfinite, relu)
    if dty == "f16x2":      # 13 LSBs of each half: upper for a, lower for b
        return rnd(xs[0], rbits >> 16 & 0x1FFF, 13) << 16 | rnd(xs[1], rbits & 0x1FFF, 13)
    if dty == "bf16x2":
        return rnd(xs[0], rbits >> 16, 16) << 16 | rnd(xs[1], rbits & 0xFFFF, 16)
    a, b, e, f = xs
    if dty == "e2m1x4":     # upper bytes of both halves for a, b; lower bytes for e, f
        return (rnd(a, rbits >> 24 & 0xFF, 8) << 12 | rnd(b, rbits >> 8 & 0xFF, 8) << 8
                | rnd(e, rbits >> 16 & 0xFF, 8) << 4 | rnd(f, rbits & 0xFF, 8))
    hi, lo = rbits >> 16, rbits & 0xFFFF       # upper 16 bits for a, b; lower 16 for e, f
    return rnd(a, hi, 16) << 24 | rnd(b, hi, 16) << 16 | rnd(e, lo, 16) << 8 | rnd(f, lo, 16)


def test_reference_is_unbiased():
    """The reference's stochastic rounding averages to the value over all random bits
    (what the manual's carry rule gives), here for f16 and bf16 where the random bits cover
    every discarded bit."""
    for fmt, n in (("F16", 13), ("BF16", 16)):
        x = float(np.float32(1.0 + 3 * 2.0 ** -20))
        codes = [stochastic(x, fmt, r, n, False, False) for r in range(2 ** n)]
        vals = [grid(fmt)[c] for c in codes]
        assert sum(vals) / len(vals) == Fraction(x)


# ----------------------------------------------------------------- both compilers in the emulator

def _run_both(src: str, arch: str, inp: np.ndarray, n: int):
    from ptx2sass import codegen, oracle
    from ptx2sass.emu.launch import run
    try:
        theirs = oracle.ptxas(src, arch)
    except oracle.OracleMissing:
        pytest.skip("pinned ptxas not installed")
    assert theirs.ok, theirs.stderr
    outs, lines = [], []
    for cubin in (codegen.compile_ptx(src, arch), theirs.output):
        out = np.zeros(n, np.uint32)
        res = run(cubin, "k", 1, n, [out, inp])
        assert res.hazards == []
        outs.append(out.tolist())
        listing = oracle.nvdisasm(cubin, ())
        lines.append(sorted(re.sub(r"\s+R\S+.*", "", m) for m in re.findall(r"F2FP\S*\s[^;]*", listing)))
    assert lines[0] == lines[1]
    assert outs[0] == outs[1]
    return outs[0], lines[0]


def _values(fmt: str, rng, count: int) -> list[float]:
    """f32 values around the format's range: edges, exact values, halfway and random points,
    subnormals of both formats, past the largest value."""
    g = grid(fmt)
    top, small = float(g[-1]), float(g[1])
    edges = [0.0, -0.0, math.inf, -math.inf, top, -top, top * 1.01, top * 4, small, small * 0.3,
             small * 1.5, 1e-45, -1e-40, 1.0, -1.0, float(g[len(g) // 2]),
             float((g[-1] + g[-2]) / 2), float(g[-1] - (g[-1] - g[-2]) / 1024)]
    if FORMATS[fmt][4] is not None:
        edges.append(math.nan)
    mags = np.exp(rng.uniform(math.log(small / 8), math.log(top * 2), count - len(edges)))
    signs = rng.choice([-1.0, 1.0], count - len(edges))
    with np.errstate(over="ignore"):        # (bf16's range passes f32's: infinities)
        return [float(np.float32(v)) for v in edges + (mags * signs).tolist()]


def _rbits(rng, count: int) -> list[int]:
    r = rng.integers(0, 2 ** 32, count, dtype=np.uint64).tolist()
    return [0, 0xFFFFFFFF, 0x80008000, 0x7FFF7FFF] + r[4:]


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("mods", ["", ".relu", ".satfinite", ".relu.satfinite"])
@pytest.mark.parametrize("dty", ["f16x2", "bf16x2"])
def test_pairs(dty, mods, arch, version):
    """cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits: one F2FP ... PACK_AB.RS."""
    rng = np.random.default_rng(hash((dty, mods)) & 0xFFFF)
    body = f"mov.b32 %y0, %a0; mov.b32 %y1, %a1; cvt.rs{mods}.{dty}.f32 %o, %y0, %y1, %a2;"
    src = kernel(body, 32, 3, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .f32 %y<2>;")
    xs = _values(SASS[dty], rng, 2 * N)
    rb = _rbits(rng, N)
    inp = np.array([w for i in range(N) for w in (
        np.float32(xs[i]).view(np.uint32), np.float32(xs[N + i]).view(np.uint32), rb[i])], np.uint32)
    got, lines = _run_both(src, arch, inp, N)
    flags = "".join(f".{m.upper()}" for m in ("satfinite", "relu") if m in mods)
    assert lines == [f"F2FP{flags}.{SASS[dty]}.F32.PACK_AB.RS"]
    sat, relu = "satfinite" in mods, "relu" in mods
    for i in range(N):
        want = reference(dty, (xs[i], xs[N + i]), rb[i], sat, relu)
        assert got[i] == want, (dty, mods, xs[i], xs[N + i], hex(rb[i]), hex(got[i]), hex(want))


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("dty", ["e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4"])
def test_quads(dty, relu, arch, version):
    """cvt.rs{.relu}.satfinite.{e4m3x4,...,e2m1x4}.f32 d, {a, b, e, f}, rbits: two chained
    F2FP ... PACK_AB_MERGE_C.RS."""
    rng = np.random.default_rng(hash((dty, relu)) & 0xFFFF)
    r = ".relu" if relu else ""
    if dty == "e2m1x4":
        tail, extra = "cvt.u32.u16 %o, %h;", "\n.reg .b16 %h;"
        dst = "%h"
    else:
        tail, extra, dst = "", "", "%o"
    body = ("mov.b32 %y0, %a0; mov.b32 %y1, %a1; mov.b32 %y2, %a2; mov.b32 %y3, %a3; "
            f"cvt.rs{r}.satfinite.{dty}.f32 {dst}, {{%y0, %y1, %y2, %y3}}, %a4; {tail}")
    src = kernel(body, 32, 5, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .f32 %y<4>;" + extra)
    xs = _values(SASS[dty], rng, 4 * N)
    rb = _rbits(rng, N)
    inp = np.array([w for i in range(N) for w in (
        [np.float32(xs[k * N + i]).view(np.uint32) for k in range(4)] + [rb[i]])], np.uint32)
    got, lines = _run_both(src, arch, inp, N)
    assert lines == [f"F2FP.SATFINITE{r.upper()}.{SASS[dty]}.F32.PACK_AB_MERGE_C.RS"] * 2
    for i in range(N):
        quad = [xs[k * N + i] for k in range(4)]
        want = reference(dty, quad, rb[i], True, relu)
        assert got[i] == want, (dty, relu, quad, hex(rb[i]), hex(got[i]), hex(want))


@pytest.mark.parametrize("dty", ["e2m3x4", "bf16x2"])
def test_guarded(dty):
    """@p cvt.rs ...: the old value where the guard is false (the quad's two F2FP both
    guarded)."""
    quad = dty.endswith("x4")
    srcs = "{%y0, %y1, %y2, %y3}, %a4" if quad else "%y0, %y1, %a4"
    mods = ".satfinite" if quad else ""
    body = ("mov.b32 %y0, %a0; mov.b32 %y1, %a1; mov.b32 %y2, %a2; mov.b32 %y3, %a3; "
            "mov.b32 %o, 0x12345678; setp.ne.u32 %p0, %a3, 0x3F800000; "
            f"@%p0 cvt.rs{mods}.{dty}.f32 %o, {srcs};")
    src = kernel(body, 32, 5, 32, version="8.7", target="sm_100a").replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .f32 %y<4>;")
    rng = np.random.default_rng(11)
    xs = _values(SASS[dty], rng, 4 * N)
    xs[3 * N:3 * N + N // 2] = [1.0] * (N // 2)          # the guard false on half the lanes
    rb = _rbits(rng, N)
    inp = np.array([w for i in range(N) for w in (
        [np.float32(xs[k * N + i]).view(np.uint32) for k in range(4)] + [rb[i]])], np.uint32)
    got, _ = _run_both(src, "sm_100a", inp, N)
    for i in range(N):
        args = [xs[k * N + i] for k in range(4 if quad else 2)]
        want = 0x12345678 if xs[3 * N + i] == 1.0 else reference(dty, args, rb[i], quad, False)
        assert got[i] == want, (i, hex(got[i]), hex(want))


def test_sm103a():
    test_pairs("bf16x2", ".relu.satfinite", "sm_103a", "8.8")
    test_quads("e2m1x4", True, "sm_103a", "8.8")


def test_sm107a():
    """ptxas 13.5.37 takes cvt.rs on sm_107a (the same F2FP .RS words as sm_100a's; our
    frontend refused it there before)."""
    test_pairs("f16x2", ".satfinite", "sm_107a", "9.4")
    test_pairs("bf16x2", ".relu", "sm_107a", "9.4")
    test_quads("e4m3x4", False, "sm_107a", "9.4")
    test_quads("e2m1x4", True, "sm_107a", "9.4")


def test_quad_vector_of_b32_and_immediates():
    """The vector may hold .b32 registers and float immediates (ptxas takes both)."""
    body = ("mov.b32 %y0, %a0; cvt.rs.satfinite.e4m3x4.f32 %o, {%y0, %a1, 0f3FC00000, 0fC0100000}, %a2;")
    src = kernel(body, 32, 3, 32, version="8.7", target="sm_100a").replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .f32 %y<1>;")
    rng = np.random.default_rng(7)
    xs = _values("E4M3", rng, 2 * N)
    rb = _rbits(rng, N)
    inp = np.array([w for i in range(N) for w in (
        np.float32(xs[i]).view(np.uint32), np.float32(xs[N + i]).view(np.uint32), rb[i])], np.uint32)
    got, _ = _run_both(src, "sm_100a", inp, N)
    for i in range(N):
        assert got[i] == reference("e4m3x4", (xs[i], xs[N + i], 1.5, -2.25), rb[i], True, False)


# ----------------------------------------------------------------- refusals, as ptxas's

REFUSALS = [   # (PTX version, target, declarations, instruction)
    ("8.7", "sm_120a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100f", ".reg .b32 %r<3>;", "cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;"),
    ("8.7", "sm_110a", ".reg .b32 %r<3>;", "cvt.rs.bf16x2.f32 %r1, %f1, %f2, %r2;"),
    ("9.4", "sm_107f", ".reg .b32 %r<3>;", "cvt.rs.bf16x2.f32 %r1, %f1, %f2, %r2;"),
    ("9.4", "sm_107", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e5m2x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.6", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e2m3x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.6", "sm_90", ".reg .b32 %r<3>;", "cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f1};"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e4m3x4.f32 %r1, %f1, %f2, %r2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e2m1x4.f32 %r1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rs.satfinite.e4m3x4.f32 %h1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100a", ".reg .u32 %u<3>; .reg .b32 %r<3>;", "cvt.rs.satfinite.e5m2x4.f32 %u1, {%f1, %f2, %f3, %f1}, %r2;"),
    ("8.7", "sm_100a", ".reg .u32 %u<3>; .reg .b32 %r<3>;", "cvt.rs.satfinite.e5m2x4.f32 %r1, {%f1, %f2, %f3, %f1}, %u2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e3m2x4.f32 %r1, {%f1, %f2, %f3, %f1}, 7;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.e3m2x4.f16x2 %r1, %r2, %r2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.f16x2.e2m1x4 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.f16x2.f32 %r1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .u32 %u<3>; .reg .b32 %r<3>;", "cvt.rs.f16x2.f32 %r1, %f1, %f2, %u1;"),
    ("8.7", "sm_100a", ".reg .u32 %u<3>; .reg .b32 %r<3>;", "cvt.rs.bf16x2.f32 %u1, %f1, %f2, %r1;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.satfinite.bf16x2.f32 %r1, %f1, %f2, %rd1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rs.satfinite.e2m1x2.f32 %h1, %f1, %f2, %r1;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rs.ftz.f16x2.f32 %r1, %f1, %f2, %r2;"),
    # .sat and .ftz on any packed conversion (ours took them before, .rn forms too)
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.ftz.sat.f16x2.f32 %r1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.satfinite.ftz.f16x2.f32 %r1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.rm.ftz.bf16x2.f32 %r1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.ftz.f16x2.f32 %r1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.sat.ftz.f16x2.e4m3x2 %r1, %h1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.sat.satfinite.e4m3x2.f16x2 %h1, %r1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>;", "cvt.sat.satfinite.e4m3x2.f32 %h1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>;", "cvt.rn.ftz.e4m3x2.f32 %h1, %f1, %f2;"),
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.rna.ftz.tf32.f32 %r1, %f1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.ftz.bf16x2.ue8m0x2 %r1, %h1;"),
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.sat.relu.f16x2.f32 %r1, %f1, %f2;"),
    # no bf16 conversion takes .sat (ours accepted cvt.sat.f32.bf16 and cvt.rzi.sat.s32.bf16,
    # and said 'not supported yet' for others); found by tools/cvt_modifier_mutants.py
    ("9.1", "sm_100a", ".reg .b16 %h<3>;", "cvt.sat.f32.bf16 %f1, %h1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rzi.sat.s32.bf16 %r1, %h1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>;", "cvt.sat.bf16.bf16 %h1, %h2;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>;", "cvt.sat.bf16.f32 %h1, %f1;"),
    ("9.1", "sm_100a", ".reg .b16 %h<3>; .reg .b64 %d<3>;", "cvt.rn.sat.bf16.f64 %h1, %d1;"),
    # tf32: a rounding is required; .satfinite with .rn/.rz is sm_100's (ours took the first,
    # and 'cannot encode' on sm_90 for the second)
    ("9.1", "sm_100a", ".reg .b32 %r<3>;", "cvt.satfinite.tf32.f32 %r1, %f1;"),
    ("9.1", "sm_90", ".reg .b32 %r<3>;", "cvt.rn.satfinite.tf32.f32 %r1, %f1;"),
    ("8.5", "sm_90", ".reg .b32 %r<3>;", "cvt.rz.relu.satfinite.tf32.f32 %r1, %f1;"),
]


@pytest.mark.parametrize("version,target,decls,ins", REFUSALS)
def test_refused_as_ptxas(version, target, decls, ins):
    assert_refused_as_ptxas(one_instruction_module(version, target, decls, ins), target)
