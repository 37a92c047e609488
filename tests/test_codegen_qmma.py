"""fp8 `mma.sync` (sm_89's QMMA): every form ptxas accepts for sm_89 (m16n8k32 and m16n8k16,
E4M3/E5M2 A and B, F32 or F16 accumulators, row.col) run from ptxas's cubin in the emulator
must give the NumPy reference built here from the fp8 bit patterns (exact sum, rounded once to
nearest even, the emulator's documented model); our cubin must give ptxas's bits with zero
hazards; and the forms ptxas refuses (sm_80/86, old .version) are refused in its words."""
from __future__ import annotations

from fractions import Fraction
import itertools

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

FP8 = ("e4m3", "e5m2")
FORMS = [(shape, acc, a, b) for shape in ("m16n8k32", "m16n8k16") for acc in ("f32", "f16")
         for a, b in itertools.product(FP8, FP8)]
# registers in (A, B, C/D) per shape and accumulator
N_A = {"m16n8k32": 4, "m16n8k16": 2}
N_B = {"m16n8k32": 2, "m16n8k16": 1}
N_D = {"f32": 4, "f16": 2}
WORDS = 12   # per lane: A at 0, B at 4, C at 6


def qmma_kernel(shape, acc, a, b, version="8.7", target="sm_89"):
    na, nb, nd = N_A[shape], N_B[shape], N_D[acc]
    frag = lambda first, n: ", ".join(f"%r{first + i}" for i in range(n))  # noqa: E731
    dests = ", ".join(f"%d{i}" for i in range(nd))
    store = "v4" if nd == 4 else "v2"
    return f""".version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<5>;
.reg .b32 %t, %r<12>, %d<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %rd3, %t, {4 * WORDS};
add.s64 %rd3, %rd2, %rd3;
ld.global.v4.b32 {{%r0, %r1, %r2, %r3}}, [%rd3];
ld.global.v4.b32 {{%r4, %r5, %r6, %r7}}, [%rd3+16];
ld.global.v4.b32 {{%r8, %r9, %r10, %r11}}, [%rd3+32];
mma.sync.aligned.{shape}.row.col.{acc}.{a}.{b}.{acc} {{{dests}}}, {{{frag(0, na)}}}, {{{frag(4, nb)}}}, {{{frag(6, nd)}}};
mul.wide.u32 %rd4, %t, 16;
add.s64 %rd4, %rd1, %rd4;
st.global.{store}.b32 [%rd4], {{{dests}}};
ret;
}}
"""


# --- the reference: fp8 decoding from the OCP FP8 bit fields, exact rational sums ---------

def fp8_value(code: int, kind: str):
    """Fraction, or 'nan' / ±'inf' strings for the non-finite codes."""
    ebits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    mbits = 7 - ebits
    sign = -1 if code & 0x80 else 1
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if kind == "e4m3" and e == 15 and m == 7:
        return "nan"
    if kind == "e5m2" and e == 31:
        return "nan" if m else ("inf" if sign > 0 else "-inf")
    if e == 0:
        return sign * Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def round_bits(x, fmt: str) -> int:
    """Round-to-nearest-even of a Fraction (or 'nan'/'inf'/'-inf') to f32 or f16 bits."""
    p, emin, emax, width, nan = {"f32": (24, -126, 127, 32, 0x7FFFFFFF),
                                 "f16": (11, -14, 15, 16, 0x7FFF)}[fmt]
    ebits = width - p
    if x == "nan":
        return nan
    if isinstance(x, str):
        return ((1 << (width - 1)) if x == "-inf" else 0) | (((1 << ebits) - 1) << (p - 1))
    sign = (1 << (width - 1)) if x < 0 else 0
    mag = abs(x)
    if mag == 0:
        return 0        # an exact zero sum is +0 in the model, whatever the terms' signs
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    q = max(e, emin) - (p - 1)
    scaled = mag / Fraction(2) ** q
    n, rem = divmod(scaled.numerator, scaled.denominator)
    if 2 * rem > scaled.denominator or (2 * rem == scaled.denominator and n & 1):
        n += 1
    if n >= 1 << p:           # carried into the next binade
        n >>= 1
        q += 1
    if q + p - 1 > emax:
        return sign | (((1 << ebits) - 1) << (p - 1))
    if n < 1 << (p - 1):      # subnormal
        return sign | n
    return sign | ((q + p - 1 + (1 << (ebits - 1)) - 1) << (p - 1)) | (n - (1 << (p - 1)))


def f16_value(bits: int):
    return Fraction(float(np.uint16(bits).view(np.float16))) if (bits >> 10) & 0x1F != 0x1F else (
        "nan" if bits & 0x3FF else ("-inf" if bits & 0x8000 else "inf"))


def f32_value(bits: int):
    v = float(np.uint32(bits).view(np.float32))
    return Fraction(v) if np.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))


def add(terms):
    """Exact sum with IEEE specials."""
    if "nan" in terms or ("inf" in terms and "-inf" in terms):
        return "nan"
    for s in ("inf", "-inf"):
        if s in terms:
            return s
    return sum(terms, Fraction(0))


def mul(x, y):
    if "nan" in (x, y):
        return "nan"
    if isinstance(x, str) or isinstance(y, str):
        other = y if isinstance(x, str) else x
        inf = x if isinstance(x, str) else y
        if not isinstance(other, str) and other == 0:
            return "nan"
        neg = (inf == "-inf") ^ (other == "-inf" if isinstance(other, str) else other < 0)
        return "-inf" if neg else "inf"
    return x * y


def reference(shape, acc, a_kind, b_kind, data: np.ndarray) -> np.ndarray:
    """D words (32 lanes x 4 for f32, x 2 for f16) from the per-lane input words."""
    m, n, k = 16, 8, int(shape.split("k")[1])
    words = data.reshape(32, WORDS)
    A = [[None] * k for _ in range(m)]
    B = [[None] * n for _ in range(k)]
    C = [[None] * n for _ in range(m)]
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i in range(4 * N_A[shape]):       # PTX ISA: fragments of mma.m16n8k32/k16 .e4m3/.e5m2
            word = int(words[lane, i // 4]) >> (8 * (i % 4)) & 0xFF
            row = g + 8 * ((i // 4) % 2)
            col = t * 4 + (i % 4) + 16 * (i // 8)
            A[row][col] = fp8_value(word, a_kind)
        for i in range(4 * N_B[shape]):
            word = int(words[lane, 4 + i // 4]) >> (8 * (i % 4)) & 0xFF
            B[t * 4 + (i % 4) + 16 * (i // 4)][g] = fp8_value(word, b_kind)
        for i in range(4):
            row, col = g + 8 * (i // 2), 2 * t + i % 2
            if acc == "f32":
                C[row][col] = f32_value(int(words[lane, 6 + i]))
            else:
                C[row][col] = f16_value(int(words[lane, 6 + i // 2]) >> (16 * (i % 2)) & 0xFFFF)
    out = np.zeros((32, 4), dtype=np.uint32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i in range(4):
            row, col = g + 8 * (i // 2), 2 * t + i % 2
            terms = [mul(A[row][j], B[j][col]) for j in range(k)] + [C[row][col]]
            bits = round_bits(add(terms), acc)
            if acc == "f32":
                out[lane, i] = bits
            else:
                out[lane, i // 2] |= np.uint32(bits << (16 * (i % 2)))
    return out[:, :N_D[acc]]


def inputs(acc, seed, specials=False) -> np.ndarray:
    """Random fp8 bytes (finite ones unless `specials`), accumulators of moderate size."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 2**32, size=(32, WORDS), dtype=np.uint64).astype(np.uint32)
    if not specials:
        # clear exponent-all-ones fp8 codes (NaN for E4M3 0x7f, Inf/NaN for E5M2)
        b = data[:, :6].view(np.uint8)
        b[(b & 0x7C) == 0x7C] &= 0xF3
        b[(b & 0x7F) == 0x7F] &= 0xF7
    if acc == "f32":
        c = rng.standard_normal((32, 4)).astype(np.float32) * np.float32(64)
        data[:, 6:10] = c.view(np.uint32)
    else:
        c = (rng.standard_normal((32, 4)) * 8).astype(np.float16)
        data[:, 6:8] = c.view(np.uint32)
    if specials:
        data[0, 6] = 0x7FC00000 if acc == "f32" else 0x7E00
        data[5, 7] = 0xFF800000 if acc == "f32" else 0xFC00
    return data.ravel()


def launch(cubin, data, hazard_check):
    out = np.zeros(32 * 4, dtype=np.uint32)
    result = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=hazard_check)
    return result, out


def ids(form):
    return ".".join(form)


def sass_name(shape, acc, a, b):
    return f"QMMA.{shape[1:].replace('n', '').replace('k', '')}.{acc.upper()}.{a.upper()}.{b.upper()}"


@pytest.mark.parametrize("form", FORMS, ids=ids)
def test_ptxas_qmma_in_the_emulator_equals_the_reference(form):
    shape, acc, a, b = form
    ptx = qmma_kernel(*form)
    cubin = oracle.ptxas(ptx).output
    assert sass_name(*form) + " " in oracle.nvdisasm(cubin, ())
    for seed in (1, 2):
        data = inputs(acc, seed)
        _, out = launch(cubin, data, False)
        want = reference(shape, acc, a, b, data)
        got = out.reshape(32, 4)[:, :want.shape[1]]
        bad = np.argwhere(got != want)
        assert not len(bad), f"{len(bad)} words differ, first {bad[0]}: {got[tuple(bad[0])]:#x} != {want[tuple(bad[0])]:#x}"


@pytest.mark.parametrize("form", [("m16n8k32", "f32", "e4m3", "e5m2"), ("m16n8k16", "f16", "e5m2", "e5m2")],
                         ids=ids)
def test_special_codes_follow_the_reference(form):
    """NaN codes, E5M2 infinities, NaN/-Inf accumulators."""
    ptx = qmma_kernel(*form)
    data = inputs(form[1], 3, specials=True)
    _, out = launch(oracle.ptxas(ptx).output, data, False)
    want = reference(*form, data)
    assert (out.reshape(32, 4)[:, :want.shape[1]] == want).all()
    assert (want == (0x7FFFFFFF if form[1] == "f32" else 0x7FFF7FFF)).any()


@pytest.mark.parametrize("form", FORMS, ids=ids)
def test_ours_equals_ptxas(form):
    ptx = qmma_kernel(*form)
    ours, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89",
                                          filename="k.ptx")
    assert any(i.opcode == "QMMA" for c in codes for i in c.instructions)
    assert sass_name(*form) + " " in oracle.nvdisasm(ours, ())   # our word, read by nvdisasm
    theirs = oracle.ptxas(ptx).output
    data = inputs(form[1], 4, specials=True)
    _, want = launch(theirs, data, False)
    result, got = launch(ours, data, True)
    assert not result.hazards, [str(h) for h in result.hazards[:3]]
    assert (got == want).all()


def test_fp8_qmma_sum_is_exact():
    """E5M2 products spanning more than FP64's 53 bits still round once: 2^30 + 2^-32 + C."""
    data = np.zeros((32, WORDS), dtype=np.uint32)
    big, tiny = 0x78, 0x01                   # E5M2 2^15, 2^-16
    # lane 0 holds A[0][0..3] and B[0..3][0]: products 2^30 and 2^-32
    data[0, 0] = big | (tiny << 8)
    data[0, 4] = big | (tiny << 8)
    data[0, 6] = np.float32(-2.0 ** 30).view(np.uint32)
    data = data.ravel()
    form = ("m16n8k32", "f32", "e5m2", "e5m2")
    _, out = launch(oracle.ptxas(qmma_kernel(*form)).output, data, False)
    assert out[0] == np.float32(2.0 ** -32).view(np.uint32), hex(out[0])


@pytest.mark.parametrize("version,target,form", [
    ("8.7", "sm_86", ("m16n8k32", "f32", "e4m3", "e4m3")),
    ("8.7", "sm_80", ("m16n8k16", "f16", "e5m2", "e4m3")),
    ("8.0", "sm_86", ("m16n8k32", "f16", "e4m3", "e4m3")),
    ("8.0", "sm_86", ("m16n8k16", "f16", "e5m2", "e4m3")),
    ("6.5", "sm_75", ("m16n8k32", "f32", "e5m2", "e4m3")),
    ("8.5", "sm_86", ("m16n8k16", "f32", "e5m2", "e4m3")),
    ("8.3", "sm_89", ("m16n8k32", "f32", "e4m3", "e5m2")),
    ("8.3", "sm_89", ("m16n8k16", "f16", "e4m3", "e5m2")),
    ("8.4", "sm_89", ("m16n8k16", "f32", "e4m3", "e4m3")),
    ("8.6", "sm_89", ("m16n8k32", "f16", "e5m2", "e5m2")),
])
def test_refusals_in_ptxas_words(version, target, form):
    from ptx2sass import CompileError
    from ptx2sass.frontend import check, parse
    ptx = qmma_kernel(*form, version=version, target=target)
    ref = oracle.ptxas(ptx, target, name="x.ptx")
    assert not ref.ok
    theirs = [line.split(": ", 1)[1] for line in ref.stderr.splitlines() if "error   :" in line]
    with pytest.raises(CompileError) as info:
        check(parse(ptx, "x.ptx"), target)
    ours = [d.message for d in getattr(info.value, "diagnostics", [info.value])]
    assert ours == theirs


def test_nan_accumulator_with_an_inexact_fp64_sum():
    """A NaN C where the products' FP64 sum is inexact (E5M2 2^30 + 2^-32) gives the
    canonical NaN; the emulator used to raise on the NaN (Fraction of NaN)."""
    data = np.zeros((32, WORDS), dtype=np.uint32)
    big, tiny = 0x78, 0x01
    data[0, 0] = big | (tiny << 8)
    data[0, 4] = big | (tiny << 8)
    data[0, 6] = 0x7FC00000
    form = ("m16n8k32", "f32", "e5m2", "e5m2")
    _, out = launch(oracle.ptxas(qmma_kernel(*form)).output, data.ravel(), False)
    assert out[0] == 0x7FFFFFFF, hex(out[0])


SM90_FORMS = [(shape, acc, a, b) for shape in ("m16n8k32", "m16n8k16") for acc in ("f32", "f16")
              for a, b in (("e4m3", "e5m2"), ("e5m2", "e5m2"))]


@pytest.mark.parametrize("form", SM90_FORMS, ids=ids)
def test_sm90_fp8_mma_equals_ptxas(form):
    """sm_90 has no QMMA: ptxas widens to f16 and runs two HMMAs from zero (HMMA.16816 for
    k = 32, HMMA.1688 for k = 16), then adds C (FADD C, D / HADD2 D, C). Ours must give the
    same bits, NaN/Inf codes and accumulators included (it used to add C inside the first
    HMMA and run one HMMA.16816 for k = 16: up to 9 lanes differed)."""
    ptx = qmma_kernel(*form, target="sm_90")
    ours = codegen.compile_ptx(ptx, "sm_90", "k.ptx")
    theirs = oracle.ptxas(ptx, arch="sm_90").output
    for seed, specials in ((6, False), (7, True)):
        data = inputs(form[1], seed, specials=specials)
        _, want = launch(theirs, data, False)
        result, got = launch(ours, data, True)
        assert not result.hazards, [str(h) for h in result.hazards[:3]]
        assert (got == want).all()


@pytest.mark.parametrize("arch", ["sm_120", "sm_100"])
@pytest.mark.parametrize("form", SM90_FORMS, ids=ids)
def test_blackwell_fp8_mma_equals_ptxas(form, arch):
    """sm_120 has QMMA (without .ROW/.COL on A and B: the suffixed form was an internal
    encode error, and sm_120 used to take sm_90's widening, which rounds otherwise: 1-9 lanes
    differed); sm_100 widens to f16 HMMAs as sm_90. Same bits as ptxas's cubin."""
    ptx = qmma_kernel(*form, target=arch)
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    theirs = oracle.ptxas(ptx, arch=arch).output
    assert ("QMMA" in oracle.nvdisasm(ours)) == (arch == "sm_120")
    for seed, specials in ((6, False), (7, True)):
        data = inputs(form[1], seed, specials=specials)
        _, want = launch(theirs, data, False)
        result, got = launch(ours, data, True)
        assert not result.hazards, [str(h) for h in result.hazards[:3]]
        assert (got == want).all()
