"""cvt with Blackwell's narrow float pairs (branch fp4_30; issues 15/18: `KeyError: 'e2m1x2'`):
fp4 (.e2m1x2), fp6 (.e2m3x2, .e3m2x2) and the MX scale (.ue8m0x2), to and from f32 / f16x2 /
bf16x2, on sm_100a and sm_120a.

- ptx2sass's cubin and ptxas's both run in the emulator, against a reference written here
  from the formats' definitions (OCP Microscaling Formats v1.0; the PTX ISA's cvt: round to
  nearest even, .satfinite clamps to the largest finite value, .relu makes negatives +0;
  ue8m0 rounds toward zero (.rz) or up (.rp), 2^(e-127), 0xff NaN): every fp4/fp6 code for
  the widenings, edge values (ties, subnormals, overflow, infinities, signed zeros) for the
  narrowings.
- the F2FP line each writes, as nvdisasm reads it;
- refusals, compared line for line with ptxas's.
Inputs the manual fixes beyond the definitions (cvt's `.satfinite`: a NaN into fp4/fp6 is
the positive largest value, an overflow of either sign into ue8m0 0xfe; ue8m0's NaN code
widens to a NaN) have tests of their own; those it leaves open (zero or a negative into
ue8m0, a value below 2^-127 with .rz) are not run: the emulator faults on them (no
Blackwell part measured them)."""
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from codegen_harness import kernel
from tests.ptxas_refusals import assert_refused_as_ptxas, one_instruction_module

TARGETS = [("sm_100a", "8.7"), ("sm_120a", "8.7")]

# name -> (exponent bits, mantissa bits); bias 2^(E-1)-1, no infinity, no NaN
SIGNED = {"e2m1x2": (2, 1), "e2m3x2": (2, 3), "e3m2x2": (3, 2)}
SASS = {"e2m1x2": "E2M1", "e2m3x2": "E2M3", "e3m2x2": "E3M2", "ue8m0x2": "E8"}


def value(code: int, fmt: str) -> Fraction:
    """The value of one code, from the format's definition (sign is separate: see sign_of)."""
    e_bits, m_bits = SIGNED[fmt]
    bias = 2 ** (e_bits - 1) - 1
    e, m = code >> m_bits & (2 ** e_bits - 1), code & (2 ** m_bits - 1)
    mag = Fraction(m, 2 ** m_bits) * Fraction(2) ** (1 - bias) if e == 0 else \
        (1 + Fraction(m, 2 ** m_bits)) * Fraction(2) ** (e - bias)
    return -mag if code >> (e_bits + m_bits) & 1 else mag


def width(fmt: str) -> int:
    return sum(SIGNED[fmt]) + 1


def to_half_bits(v: Fraction, negative_zero: bool) -> int:
    """An exactly representable value as f16 bits."""
    h = int(np.float16(float(v)).view(np.uint16))
    assert Fraction(float(np.float16(float(v)))) == v
    return h | 0x8000 if negative_zero else h


def narrow(x: float, fmt: str, relu: bool) -> int:
    """RN-even with .satfinite into an fp4/fp6 format (the code, sign included)."""
    e_bits, m_bits = SIGNED[fmt]
    if relu and (x < 0 or math.copysign(1, x) < 0):
        x = 0.0
    sign = 1 << (e_bits + m_bits) if math.copysign(1, x) < 0 else 0
    codes = {c: value(c, fmt) for c in range(1 << (e_bits + m_bits))}
    top = max(codes.values())
    mag = top if math.isinf(x) else min(abs(Fraction(x)), top)
    best = min(codes, key=lambda c: (abs(codes[c] - mag), c & 1))
    return sign | best


def e8(x: float, rounding: str, satfinite: bool) -> int:
    """f32 -> ue8m0: 2^k with k = floor/ceil(log2 x) (exact powers stay), 0xff NaN; overflow
    is 0xfe with .satfinite, else 0xff."""
    if math.isnan(x):
        return 0xFF
    if math.isinf(x):
        return 0xFE if satfinite else 0xFF
    f = Fraction(x)
    k = f.numerator.bit_length() - f.denominator.bit_length()
    if Fraction(2) ** k > f:
        k -= 1                          # floor(log2 x)
    if rounding == "rp" and Fraction(2) ** k != f:
        k += 1
    k = max(k, -127)                    # (only reached with .rp: up to the smallest scale)
    if k > 127:
        return 0xFE if satfinite else 0xFF
    return k + 127


def run_both(src: str, arch: str, n: int, inp: np.ndarray, out_dtype=np.uint32):
    """Outputs of ptx2sass's and ptxas's cubins for `src` in the emulator, and the F2FP lines
    nvdisasm reads in each."""
    from ptx2sass import codegen, oracle
    from ptx2sass.emu.launch import run
    try:
        theirs = oracle.ptxas(src, arch)
    except oracle.OracleMissing:
        pytest.skip("pinned ptxas not installed")
    assert theirs.ok, theirs.stderr
    outs, lines = [], []
    for cubin in (codegen.compile_ptx(src, arch), theirs.output):
        out = np.zeros(n, out_dtype)
        res = run(cubin, "k", 1, n, [out, inp])
        assert res.hazards == []
        outs.append(out.tolist())
        listing = oracle.nvdisasm(cubin, ())
        lines.append(sorted(re.sub(r"\s+R\S+.*", "", m) for m in re.findall(r"F2FP\S*\s[^;]*", listing)))
    assert outs[0] == outs[1]
    assert lines[0] == lines[1]
    return outs[0], lines[0]


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", ["e2m1x2", "e2m3x2", "e3m2x2"])
def test_widen_every_code(fmt, relu, arch, version):
    """cvt.rn[.relu].f16x2.{e2m1x2,e2m3x2,e3m2x2}: every code in each position of the pair."""
    bits = width(fmt)
    n_codes = 1 << bits
    step = 4 if bits == 4 else 8                      # an element's place in the register
    body = f"cvt.rn{'.relu' if relu else ''}.f16x2.{fmt} %o, %a0;"
    in_bits = 8 if fmt == "e2m1x2" else 16
    src = kernel(body, in_bits, 1, 32, version=version, target=arch)
    pairs = [(c << step) | ((c * 7 + 3) % n_codes) for c in range(n_codes)]
    inp = np.array(pairs, np.uint8 if in_bits == 8 else np.uint16)
    got, lines = run_both(src, arch, len(pairs), inp)
    assert lines == [f"F2FP{'.RELU' if relu else ''}.F16.{SASS[fmt]}.UNPACK_B"]
    for word, out in zip(pairs, got):
        for k, code in ((16, word >> step), (0, word & (n_codes - 1))):
            v = value(code, fmt)
            neg = code >> (bits - 1) == 1
            if relu and neg:
                want = 0
            else:
                want = to_half_bits(v, neg and v == 0)
            assert out >> k & 0xFFFF == want, (fmt, hex(word), hex(out))


@pytest.mark.parametrize("arch,version", TARGETS)
def test_widen_every_scale(arch, version):
    """cvt.rn.bf16x2.ue8m0x2: every scale but the NaN code, 2^(e-127) as bf16 (2^-127 is a
    bf16 subnormal)."""
    src = kernel("cvt.rn.bf16x2.ue8m0x2 %o, %a0;", 16, 1, 32, version=version, target=arch)
    pairs = [(c << 8) | (254 - c) for c in range(255)]
    got, lines = run_both(src, arch, len(pairs), np.array(pairs, np.uint16))
    assert lines == ["F2FP.BF16.E8.UNPACK_B"]
    for word, out in zip(pairs, got):
        for k, code in ((16, word >> 8), (0, word & 0xFF)):
            want = int(np.float32(2.0 ** (code - 127)).view(np.uint32)) >> 16
            assert out >> k & 0xFFFF == want, (hex(word), hex(out))


F32_EDGES = [0.0, -0.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -5.0, 6.0, 7.0, 7.5, 7.75, 28.0,
             30.0, 32.0, 1e6, -1e6, math.inf, -math.inf, 1e-45, -1e-45, 1e-40, 0.0625, 0.09375,
             0.125, 0.1875, -0.1875, 0.3, -0.3, 1.0 + 2 ** -20, 2.75, -2.75, 3.0, 0.5, -0.5,
             0.0703125, 0.046875, 26.0, 29.0, 6.5, 3.75, 0.875, 0.9375]


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", ["e2m1x2", "e2m3x2", "e3m2x2"])
def test_narrow_f32_pairs(fmt, relu, arch, version):
    """cvt.rn.satfinite[.relu].{e2m1x2,e2m3x2,e3m2x2}.f32 d, a, b: a to the high element, b
    to the low; ties to even, subnormals, overflow and infinities clamped, signed zeros."""
    bits = width(fmt)
    reg = "b8" if fmt == "e2m1x2" else "b16"
    body = f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}.f32 %d, %a0, %a1; cvt.u32.{reg.replace('b', 'u')} %o, %d;"
    src = kernel(body, 32, 2, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", f".reg .b32 %t;\n.reg .{reg} %d;")
    vals = F32_EDGES
    pairs = [(vals[i], vals[(i * 5 + 1) % len(vals)]) for i in range(len(vals))]
    inp = np.array([x for p in pairs for x in p], np.float32).view(np.uint32)
    got, lines = run_both(src, arch, len(pairs), inp)
    assert lines == [f"F2FP.SATFINITE{'.RELU' if relu else ''}.{SASS[fmt]}.F32.PACK_AB_MERGE_C"]
    mask = (1 << (2 * bits if bits == 4 else 16)) - 1
    step = 4 if bits == 4 else 8
    for (a, b), out in zip(pairs, got):
        a32, b32 = (float(np.float32(x)) for x in (a, b))
        want = narrow(a32, fmt, relu) << step | narrow(b32, fmt, relu)
        assert out & mask == want, (fmt, a, b, hex(out), hex(want))


E8_EDGES = [1.0, 1.5, 3.0, 0.75, 2.0 ** -126, 2.0 ** -127, 1.5 * 2.0 ** -127, 2.0 ** -149,
            2.0 ** 127, 1.5 * 2.0 ** 127, 3.4028234663852886e38, math.inf, math.nan, 1e-30,
            1e30, 65504.0, 0.1, 2.0 ** 100, 1.0 + 2 ** -23, 2.0 - 2 ** -23]


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("satfinite", [False, True])
@pytest.mark.parametrize("rounding", ["rz", "rp"])
def test_scale_from_f32_pairs(rounding, satfinite, arch, version):
    """cvt.{rz,rp}[.satfinite].ue8m0x2.f32: powers of two stay, others go down (.rz) or up
    (.rp); past 2^127 NaN (0xff), or 0xfe with .satfinite; NaN 0xff."""
    sat = ".satfinite" if satfinite else ""
    body = f"cvt.{rounding}{sat}.ue8m0x2.f32 %d, %a0, %a1; cvt.u32.u16 %o, %d;"
    src = kernel(body, 32, 2, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .b16 %d;")
    vals = [v for v in E8_EDGES if rounding == "rp" or not 0 < v < 2.0 ** -127]
    pairs = [(vals[i], vals[(i * 3 + 2) % len(vals)]) for i in range(len(vals))]
    inp = np.array([x for p in pairs for x in p], np.float32).view(np.uint32)
    got, lines = run_both(src, arch, len(pairs), inp)
    assert lines == [f"F2FP{sat.upper()}.E8.F32.PACK_AB_MERGE_C.{rounding.upper()}"]
    for (a, b), out in zip(pairs, got):
        want = e8(a, rounding, satfinite) << 8 | e8(b, rounding, satfinite)
        assert out & 0xFFFF == want, (a, b, hex(out), hex(want))


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("rounding", ["rz", "rp"])
def test_scale_from_bf16_pair(rounding, arch, version):
    """cvt.{rz,rp}.satfinite.ue8m0x2.bf16x2: the high half to the high byte."""
    body = f"cvt.{rounding}.satfinite.ue8m0x2.bf16x2 %d, %a0; cvt.u32.u16 %o, %d;"
    src = kernel(body, 32, 1, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .b16 %d;")
    halves = [0x3F80, 0x3FC0, 0x4040, 0x0080, 0x0040, 0x0001, 0x7F7F, 0x7F80, 0x7FC0, 0x4B80, 0x3DCD]
    words = [halves[i] << 16 | halves[(i * 3 + 1) % len(halves)] for i in range(len(halves))]
    words = [w for w in words if rounding == "rp" or all(h >= 0x0040 for h in (w >> 16, w & 0xFFFF))]
    got, lines = run_both(src, arch, len(words), np.array(words, np.uint32))
    assert lines == [f"F2FP.SATFINITE.E8.BF16.UNPACK_B_MERGE_C.{rounding.upper()}"]
    for word, out in zip(words, got):
        hi, lo = (float(np.uint32((word >> k & 0xFFFF) << 16).view(np.float32)) for k in (16, 0))
        assert out & 0xFFFF == e8(hi, rounding, True) << 8 | e8(lo, rounding, True), hex(word)



# The values the PTX ISA's cvt fixes beyond the formats' definitions (`.satfinite`): "For
# .e2m1x2, .e2m3x2, .e3m2x2 ... destination formats NaN results are converted to positive
# MAX_NORM"; "If the absolute value of input (ignoring sign) is greater than MAX_NORM ...
# the result is ... a positive MAX_NORM in .ue8m0x2 for which the destination sign is not
# supported"; ue8m0's code 0xff is a NaN, so widening it gives a NaN.
F32_NANS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF]
POSITIVE_MAX_NORM = {"e2m1x2": 0x7, "e2m3x2": 0x1F, "e3m2x2": 0x1F}


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("fmt", ["e2m1x2", "e2m3x2", "e3m2x2"])
def test_narrow_nan_is_positive_max_norm(fmt, relu, arch, version):
    """cvt.rn.satfinite[.relu].{e2m1x2,e2m3x2,e3m2x2}.f32 of a NaN (any sign or payload):
    the positive largest value, in either element (the other a finite value)."""
    bits = width(fmt)
    reg = "b8" if fmt == "e2m1x2" else "b16"
    body = f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}.f32 %d, %a0, %a1; cvt.u32.{reg.replace('b', 'u')} %o, %d;"
    src = kernel(body, 32, 2, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", f".reg .b32 %t;\n.reg .{reg} %d;")
    one = int(np.float32(1.0).view(np.uint32))
    pairs = [(n, one) for n in F32_NANS] + [(one, n) for n in F32_NANS] + [(n, n) for n in F32_NANS]
    inp = np.array([x for p in pairs for x in p], np.uint32)
    got, _ = run_both(src, arch, len(pairs), inp)
    step = 4 if bits == 4 else 8
    mask = (1 << (2 * bits if bits == 4 else 16)) - 1
    top = POSITIVE_MAX_NORM[fmt]
    for (a, b), out in zip(pairs, got):
        code = [top if x in F32_NANS else narrow(1.0, fmt, relu) for x in (a, b)]
        assert out & mask == code[0] << step | code[1], (fmt, hex(a), hex(b), hex(out))


@pytest.mark.parametrize("arch,version", TARGETS)
@pytest.mark.parametrize("rounding", ["rz", "rp"])
def test_scale_satfinite_ignores_the_sign_of_overflow(rounding, arch, version):
    """cvt.{rz,rp}.satfinite.ue8m0x2.f32 of -inf and of negative values past 2^127: 0xfe,
    as for the positive ones."""
    body = f"cvt.{rounding}.satfinite.ue8m0x2.f32 %d, %a0, %a1; cvt.u32.u16 %o, %d;"
    src = kernel(body, 32, 2, 32, version=version, target=arch).replace(
        ".reg .b32 %t;", ".reg .b32 %t;\n.reg .b16 %d;")
    big = [-math.inf, -3.4028234663852886e38, -1.5 * 2.0 ** 127, math.inf, 1.5 * 2.0 ** 127]
    pairs = [(x, 2.0) for x in big] + [(4.0, x) for x in big]
    inp = np.array([x for p in pairs for x in p], np.float32).view(np.uint32)
    got, _ = run_both(src, arch, len(pairs), inp)
    for (a, b), out in zip(pairs, got):
        want = [0xFE if abs(x) > 2.0 ** 127 else e8(x, rounding, True) for x in (a, b)]
        assert out & 0xFFFF == want[0] << 8 | want[1], (a, b, hex(out))


@pytest.mark.parametrize("arch,version", TARGETS)
def test_widen_nan_scale(arch, version):
    """cvt.rn.bf16x2.ue8m0x2 with the NaN code 0xff in either element: a bf16 NaN there
    (exponent all ones, mantissa not zero), the other element its scale."""
    src = kernel("cvt.rn.bf16x2.ue8m0x2 %o, %a0;", 16, 1, 32, version=version, target=arch)
    pairs = [0xFF00 | c for c in (0, 1, 127, 254, 255)] + [c << 8 | 0xFF for c in (0, 126, 254)]
    got, _ = run_both(src, arch, len(pairs), np.array(pairs, np.uint16))
    for word, out in zip(pairs, got):
        for k, code in ((16, word >> 8), (0, word & 0xFF)):
            half = out >> k & 0xFFFF
            if code == 0xFF:
                assert half & 0x7F80 == 0x7F80 and half & 0x7F, (hex(word), hex(out))
            else:
                assert half == int(np.float32(2.0 ** (code - 127)).view(np.uint32)) >> 16, hex(word)

REFUSALS = [   # (PTX version, target, declarations, instruction)
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rn.satfinite.e2m1x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .u8 %u<3>;", "cvt.rn.satfinite.e2m1x2.f32 %u1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.satfinite.e2m3x2.f32 %r1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .u16 %u<3>;", "cvt.rn.satfinite.e3m2x2.f32 %u1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>;", "cvt.rn.satfinite.e4m3x2.f32 %b1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.f16x2.e2m1x2 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.f16x2.e2m1x2 %r1, %r2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>; .reg .u32 %r<3>;", "cvt.rn.f16x2.e2m1x2 %r1, %b1;"),
    ("8.7", "sm_100a", ".reg .u16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.f16x2.e2m3x2 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rn.f16x2.e4m3x2 %r1, %r2;"),
    ("8.7", "sm_100a", ".reg .b32 %r<3>;", "cvt.rz.ue8m0x2.f32 %r1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>;", "cvt.rn.e2m1x2.f32 %b1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rn.e3m2x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>;", "cvt.satfinite.e2m1x2.f32 %b1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>;", "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rm.satfinite.e2m3x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>;", "cvt.rz.satfinite.e2m1x2.f32 %b1, %f1, %f2;"),
    ("8.7", "sm_120a", ".reg .b16 %h<3>;", "cvt.rz.satfinite.e4m3x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rn.ue8m0x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rz.relu.ue8m0x2.f32 %h1, %f1, %f2;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.relu.bf16x2.ue8m0x2 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rz.bf16x2.ue8m0x2 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.f16x2.e2m1x2 %r1, %b1;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.f16x2.e2m1x2 %r1, %b1;"),
    ("8.7", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.e2m1x2.f16x2 %b1, %r1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.e4m3x2.bf16x2 %h1, %r1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.bf16x2.e4m3x2 %r1, %h1;"),
    ("8.7", "sm_100", ".reg .b8 %b<3>;", "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1, %f2;"),
    ("8.7", "sm_120", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.f16x2.e2m3x2 %r1, %h1;"),
    ("8.7", "sm_90a", ".reg .b16 %h<3>;", "cvt.rz.ue8m0x2.f32 %h1, %f1, %f2;"),
    ("8.5", "sm_90", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.bf16x2.ue8m0x2 %r1, %h1;"),
    ("8.5", "sm_90", ".reg .b8 %b<3>;", "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1, %f2;"),
    ("9.1", "sm_100", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.e2m1x2.bf16x2 %b1, %r1;"),
    ("9.1", "sm_89", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.e4m3x2.bf16x2 %h1, %r1;"),
    ("9.1", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.e2m1x2.f16x2 %b1, %r1;"),
    # bf16x2 widenings (PTX 9.2; branch cvt31): .rz is PTX 9.4, other roundings twice illegal
    ("9.2", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rz.bf16x2.e4m3x2 %r1, %h1;"),
    ("9.2", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rz.bf16x2.e2m1x2 %r1, %b1;"),
    ("9.2", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rz.f16x2.e3m2x2 %r1, %h1;"),
    ("9.2", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rm.bf16x2.e2m3x2 %r1, %h1;"),
    ("9.2", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rm.f16x2.e2m1x2 %r1, %b1;"),
    ("9.2", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.bf16x2.e5m2x2 %r1, %h1;"),
    ("9.2", "sm_100a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.relu.bf16x2.ue8m0x2 %r1, %h1;"),
    ("9.2", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.f16x2.e2m1x2 %r1, %b1;"),
]


@pytest.mark.parametrize("version,target,decls,ins", REFUSALS)
def test_refused_as_ptxas(version, target, decls, ins):
    assert_refused_as_ptxas(one_instruction_module(version, target, decls, ins), target)


ACCEPTED = [   # compiled by both, the same F2FP
    ("9.1", "sm_100a", ".reg .b8 %b<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.relu.e2m1x2.f16x2 %b1, %r1;"),
    ("9.1", "sm_120a", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.satfinite.e3m2x2.bf16x2 %h1, %r1;"),
    ("8.8", "sm_103a", ".reg .b8 %b<3>;", "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1, %f2;"),
    ("9.0", "sm_110a", ".reg .b16 %h<3>;", "cvt.rp.ue8m0x2.f32 %h1, %f1, %f2;"),
    ("8.8", "sm_100f", ".reg .b16 %h<3>; .reg .b32 %r<3>;", "cvt.rn.f16x2.e3m2x2 %r1, %h1;"),
    ("8.7", "sm_100a", ".reg .b16 %h<3>;", "cvt.rn.satfinite.e2m3x2.f32 %h1, %f1, 0f3F800000;"),
]


@pytest.mark.parametrize("version,target,decls,ins", ACCEPTED)
def test_accepted_as_ptxas(version, target, decls, ins):
    from ptx2sass import codegen, oracle
    store = "st.global.b8 [%rd1], %b1;" if "%b1," in ins else \
        "st.global.b16 [%rd1], %h1;" if "%h1," in ins else "st.global.b32 [%rd1], %r1;"
    src = one_instruction_module(version, target, decls, "ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; "
                                 "ld.global.b32 %r1, [%rd1+8];" * ("%r1;" in ins) + ins + store)
    if "%r1;" not in ins:
        src = src.replace("ld.param.u64 %rd1, [p];", "ld.param.u64 %rd1, [p]; ld.global.f32 %f1, [%rd1]; "
                          "ld.global.f32 %f2, [%rd1+4]; ld.global.b16 %h1, [%rd1+8];" * ("%h1;" in ins)
                          + "ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4];" * ("%h1;" not in ins))
    try:
        theirs = oracle.ptxas(src, target)
    except oracle.OracleMissing:
        pytest.skip("pinned ptxas not installed")
    assert theirs.ok, theirs.stderr
    lines = [sorted(re.sub(r"\s+R\S+.*", "", m) for m in re.findall(r"F2FP\S*\s[^;]*", oracle.nvdisasm(c, ())))
             for c in (codegen.compile_ptx(src, target), theirs.output)]
    assert lines[0] == lines[1] and lines[0]


HALF_EDGES = [0x0000, 0x8000, 0x0001, 0x3400, 0x3A00, 0x3D00, 0x4100, 0x4500, 0xC500, 0x4600,
              0x4700, 0x4780, 0x4F00, 0x7BFF, 0x7C00, 0xFC00, 0x2C00, 0x2E00, 0xB2CD, 0x4680]


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a"])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("wide", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("fmt", ["e2m1x2", "e3m2x2"])
def test_narrow_half_pairs(fmt, wide, relu, arch):
    """cvt.rn.satfinite[.relu].{e2m1x2,e3m2x2}.{f16x2,bf16x2} (PTX 9.1): the high half to the
    high element; the same rounding as from f32."""
    bits = width(fmt)
    reg = "b8" if fmt == "e2m1x2" else "b16"
    body = f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}.{wide} %d, %a0; cvt.u32.{reg.replace('b', 'u')} %o, %d;"
    src = kernel(body, 32, 1, 32, version="9.1", target=arch).replace(
        ".reg .b32 %t;", f".reg .b32 %t;\n.reg .{reg} %d;")
    if wide == "bf16x2":        # the same values as bf16 (each f16 edge's f32 top half)
        halves = [int(np.float32(np.uint16(h).view(np.float16)).view(np.uint32)) >> 16 for h in HALF_EDGES]
    else:
        halves = HALF_EDGES
    words = [halves[i] << 16 | halves[(i * 7 + 3) % len(halves)] for i in range(len(halves))]
    got, _ = run_both(src, arch, len(words), np.array(words, np.uint32))
    step = 4 if bits == 4 else 8

    def val(h):
        return float(np.uint16(h).view(np.float16)) if wide == "f16x2" else \
            float(np.uint32(h << 16).view(np.float32))
    for word, out in zip(words, got):
        want = narrow(val(word >> 16), fmt, relu) << step | narrow(val(word & 0xFFFF), fmt, relu)
        assert out & ((1 << 2 * step) - 1) == want, (hex(word), hex(out), hex(want))


def fp8_value(code: int, fmt: str) -> float:
    """An fp8 code's value (OCP FP8: E4M3 bias 7, no infinities, S.1111.111 NaN; E5M2 bias
    15, IEEE-like); None for a NaN code."""
    e_bits, m_bits = (4, 3) if fmt == "e4m3x2" else (5, 2)
    bias = 2 ** (e_bits - 1) - 1
    sign = -1.0 if code & 0x80 else 1.0
    e, m = code >> m_bits & (2 ** e_bits - 1), code & (2 ** m_bits - 1)
    if fmt == "e4m3x2" and e == 15 and m == 7 or fmt == "e5m2x2" and e == 31 and m:
        return None
    if fmt == "e5m2x2" and e == 31:
        return sign * math.inf
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp(2 ** m_bits + m, e - bias - m_bits)


WIDEN_BF16 = [("e4m3x2", False, False, "sm_100a"), ("e4m3x2", True, False, "sm_120a"),
              ("e5m2x2", False, False, "sm_100a"), ("e5m2x2", True, True, "sm_100a"),
              ("e5m2x2", False, True, "sm_120a"), ("e2m1x2", False, False, "sm_100a"),
              ("e2m1x2", True, True, "sm_120a"), ("e2m3x2", True, False, "sm_100a"),
              ("e3m2x2", False, True, "sm_100a"), ("e3m2x2", True, False, "sm_120a")]


@pytest.mark.parametrize("fmt,relu,satfinite,arch", WIDEN_BF16)
def test_widen_to_bf16(fmt, relu, satfinite, arch):
    """cvt.rn[.satfinite][.relu].bf16x2.{e4m3x2,e5m2x2,e2m1x2,e2m3x2,e3m2x2} (PTX 9.2, branch
    cvt31): every code but NaN's in each element, widened exactly (they all fit bf16);
    .relu makes negatives +0; .satfinite clamps e5m2's infinities to the largest finite bf16
    (the PTX ISA's .satfinite)."""
    fp8 = fmt in ("e4m3x2", "e5m2x2")
    bits = 8 if fp8 else width(fmt)
    step = 4 if bits == 4 else 8
    reg = "b8" if fmt == "e2m1x2" else "b16"
    mods = ".satfinite" * satfinite + ".relu" * relu
    body = f"cvt.rn{mods}.bf16x2.{fmt} %o, %a0;"
    src = kernel(body, int(reg[1:]), 1, 32, version="9.2", target=arch)

    def val(code):
        if fp8:
            return fp8_value(code, fmt)
        return math.copysign(float(value(code, fmt)), -1.0 if code >> (bits - 1) else 1.0)
    codes = [c for c in range(1 << bits) if val(c) is not None]
    pairs = [(c << step) | codes[(i * 7 + 3) % len(codes)] for i, c in enumerate(codes)]
    inp = np.array(pairs, np.uint8 if reg == "b8" else np.uint16)
    got, lines = run_both(src, arch, len(pairs), inp)
    assert lines == [f"F2FP{'.SATFINITE' * satfinite}{'.RELU' * relu}.BF16.{SASS.get(fmt, fmt[:4].upper())}.UNPACK_B"]
    for word, out in zip(pairs, got):
        for k, code in ((16, word >> step), (0, word & ((1 << step) - 1))):
            v = val(code)
            if relu and math.copysign(1.0, v) < 0:
                v = 0.0
            if satfinite and math.isinf(v):
                want = 0x7F7F | (0x8000 if v < 0 else 0)
            else:
                want = int(np.float32(v).view(np.uint32)) >> 16
            assert out >> k & 0xFFFF == want, (fmt, hex(word), hex(out))
