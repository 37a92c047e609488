"""mma.sp with tf32, s4/u4 and fp8 (e4m3/e5m2) A and B (branch sparse33): HMMA.SP.1688/16816
.F32.TF32, IMMA.SP.16864/168128 .S4/.U4 (.SAT) and QMMA.SP.16864.F32 on sm_80/86/89 (tf32 also
sm_90/100/120, fp8 also sm_120), as ptxas 13.5 writes them.

Values: the dense A, B and C are drawn here, the expected D is NumPy's A @ B + C, and the
words each lane loads are written from the PTX ISA's descriptions, not from the emulator:
  * sparse storage: tf32 is 1:2 (one element of each pair kept, metadata nibble 0b0100 for
    the first, 0b1110 for the second); s4/u4 is 4:8 pair-wise (two of the four two-element
    sub-chunks of each eight kept, the nibble holding their indices, ascending); fp8 is 2:4
    (two of four, their indices ascending). The kept elements, in order, are the row of the
    compressed m x k/2 A.
  * fragments: compressed A in the dense layout of the half-k shape of its type (tf32
    m16n8k4 / k8, s4 m16n8k32 / k64, fp8 m16n8k32), B, C and D as mma's.
  * metadata: a row's nibbles in chunk order, four bits each; tf32 follows the 16-bit shapes'
    figures (k8: thread sel, row g in bits 0-15, row g + 8 in bits 16-31; k16: threads
    2 sel + chunk // 4), the 4-bit and fp8 forms the 8-bit ones (thread 2 sel + (row >= 8),
    chunks 0-7; k128 / fp8 k64: threads 2 (chunk // 8) + (row >= 8)). These are the figures
    tests/test_codegen_mma_sparse.py reads for f16/s8 (not hardware-checked: no device).
ptxas's cubin must give the same D in the emulator.
"""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

LANE = np.arange(32)
G, T = LANE // 4, LANE % 4
VERSION = {"sm_100": "8.8", "sm_120": "8.8"}
# (shape, A type) -> (A registers, B registers, largest sparsity selector ptxas takes)
FORMS = {("m16n8k8", "tf32"): (2, 2, 3), ("m16n8k16", "tf32"): (4, 4, 1),
         ("m16n8k64", "s4"): (2, 2, 1), ("m16n8k128", "s4"): (4, 4, 0),
         ("m16n8k64", "u4"): (2, 2, 1), ("m16n8k128", "u4"): (4, 4, 0),
         ("m16n8k64", "e4m3"): (4, 4, 0), ("m16n8k64", "e5m2"): (4, 4, 0)}
BITS = {"tf32": 32, "s4": 4, "u4": 4, "e4m3": 8, "e5m2": 8}


def _kernel(arch, shape, a, b, sel, n_a, n_b, variant="sp", sat=""):
    integer = a in ("s4", "u4")
    types = f"{sat}.s32.{a}.{b}.s32" if integer else f".f32.{a}.{b}.f32"
    c = "{" + ", ".join(f"%r{8 + i}" for i in range(4)) + "}"
    d = "{" + ", ".join(f"%r{20 + i}" for i in range(4)) + "}"
    regs = lambda first, n: "{" + ", ".join(f"%r{first + i}" for i in range(n)) + "}"
    loads = "\n".join(f"    ld.global.b32 %r{i}, [%rd4+{4 * i}];" for i in range(n_a)) + "\n" + \
        "\n".join(f"    ld.global.b32 %r{4 + i}, [%rd4+{16 + 4 * i}];" for i in range(n_b)) + "\n" + \
        "\n".join(f"    ld.global.b32 %r{8 + i}, [%rd4+{32 + 4 * i}];" for i in range(4)) + \
        "\n    ld.global.b32 %r16, [%rd4+48];"
    stores = "\n".join(f"    st.global.b32 [%rd5+{4 * i}], %r{20 + i};" for i in range(4))
    return f"""
.version {VERSION.get(arch, "8.5")}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<40>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r30, %laneid; mul.wide.u32 %rd3, %r30, 64; add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r30, 16; add.s64 %rd5, %rd2, %rd3;
{loads}
    mma.{variant}.sync.aligned.{shape}.row.col{types} {d}, {regs(0, n_a)}, {regs(4, n_b)}, {c}, %r16, {sel};
{stores}
    ret;
}}
"""


def _fp8_value(code, kind):
    """The OCP FP8 value of a code (normal and subnormal; the codes drawn are finite)."""
    e_bits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    m_bits = 7 - e_bits
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)


def _draw(kind, rng, size):
    """(codes, values): small values whose products and sums are exact in f32."""
    if kind == "tf32":
        v = rng.integers(-8, 9, size=size)
        return v.astype(np.float32).view(np.uint32), v.astype(np.float64)
    if kind in ("s4", "u4"):
        v = rng.integers(-8, 8, size=size) if kind == "s4" else rng.integers(0, 16, size=size)
        return (v & 0xF).astype(np.uint32), v.astype(np.float64)
    # fp8: exponent fields near the bias (|value| in [1/8, 16)), any mantissa and sign
    e_bits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    m_bits = 7 - e_bits
    e = rng.integers(bias - 3, bias + 4, size=size)
    m = rng.integers(0, 1 << m_bits, size=size)
    s = rng.integers(0, 2, size=size)
    codes = ((s << 7) | (e << m_bits) | m).astype(np.uint32)
    return codes, np.vectorize(lambda c: _fp8_value(int(c), kind))(codes)


def _sparse_a(kind, k, rng):
    """(dense A 16 x k values, compressed codes 16 x k/2, metadata nibbles 16 x chunks)."""
    codes, values = _draw(kind, rng, (16, k // 2))
    A = np.zeros((16, k))
    if kind == "tf32":                              # 1:2, nibble 0b0100 / 0b1110
        pos = rng.integers(0, 2, size=(16, k // 2))
        for r in range(16):
            for c in range(k // 2):
                A[r, 2 * c + pos[r, c]] = values[r, c]
        return A, codes, np.where(pos == 0, 0b0100, 0b1110)
    group = 2 if kind in ("s4", "u4") else 1        # 4:8 in pairs / 2:4
    chunk = 4 * group
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    which = rng.integers(0, 6, size=(16, k // chunk))
    for r in range(16):
        for c in range(k // chunk):
            for j, p in enumerate(pairs[which[r, c]]):
                for e in range(group):
                    A[r, chunk * c + group * p + e] = values[r, 2 * group * c + group * j + e]
    nibbles = np.array([[pairs[w][0] | pairs[w][1] << 2 for w in row] for row in which])
    return A, codes, nibbles


def _a_place(kind, k, r, e, lane):
    """(row, compressed column) of element e of A register r at `lane`."""
    g, t = divmod(lane, 4)
    if kind == "tf32":
        return g + 8 * (r % 2), t + 4 * (r // 2)
    per = 32 // BITS[kind]                          # 8 nibbles / 4 bytes a register
    return g + 8 * (r % 2), (r // 2) * 4 * per + t * per + e


def _b_row(kind, r, e, lane):
    t = lane % 4
    if kind == "tf32":
        return t + 4 * r
    per = 32 // BITS[kind]
    return r * 4 * per + t * per + e


def _meta_place(kind, k, sel, row, chunk):
    """(thread of the quad, bit) of a row's metadata nibble `chunk`."""
    if kind == "tf32":
        return (sel + 0, 16 * (row >= 8) + 4 * chunk) if k == 8 else \
            (2 * sel + chunk // 4, 16 * (row >= 8) + 4 * (chunk % 4))
    return 2 * sel + 2 * (chunk // 8) + (row >= 8), 4 * (chunk % 8)


def _case(shape, a, b, sel, rng, c_range=(-1000, 1001)):
    k = int(shape.split("k")[1])
    n_a, n_b, _ = FORMS[(shape, a)]
    bits = BITS[a]
    per = 32 // bits
    A, a_codes, nibbles = _sparse_a(a, k, rng)
    b_codes, B = _draw(b, rng, (k, 8))
    C = rng.integers(*c_range, size=(16, 8))
    words = np.zeros((32, 16), dtype=np.uint32)
    words[:, 12] = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32)  # noise
    mask = (1 << bits) - 1 if bits < 32 else 0xFFFFFFFF
    for lane in range(32):
        g, t = divmod(lane, 4)
        for r in range(n_a):
            for e in range(min(per, 32 // bits)):
                row, col = _a_place(a, k, r, e, lane)
                words[lane, r] |= np.uint32((int(a_codes[row, col]) & mask) << (bits * e))
        for r in range(n_b):
            for e in range(per):
                words[lane, 4 + r] |= np.uint32((int(b_codes[_b_row(b, r, e, lane), g]) & mask) << (bits * e))
        for r in range(4):
            v = int(C[g + 8 * (r // 2), 2 * t + r % 2])
            words[lane, 8 + r] = np.float32(v).view(np.uint32) if a not in ("s4", "u4") else v & 0xFFFFFFFF
    meta = {}
    for row in range(16):
        for chunk in range(nibbles.shape[1]):
            thread, bit = _meta_place(a, k, sel, row, chunk)
            lane = 4 * (row % 8) + thread
            meta[lane] = meta.get(lane, 0) | int(nibbles[row, chunk]) << bit
    for lane, value in meta.items():
        words[lane, 12] = value
    return words, A @ B + C


def _d(out, integer):
    vals = out.reshape(32, 4).copy().view(np.int32 if integer else np.float32).astype(np.float64)
    D = np.zeros((16, 8))
    for r in range(4):
        D[G + 8 * (r // 2), 2 * T + r % 2] = vals[:, r]
    return D


def _run_both(arch, ptx, words):
    outs = []
    for cubin, check in ((codegen.compile_ptx(ptx, arch, "k.ptx"), True), (oracle.ptxas(ptx, arch=arch).output, False)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, words.reshape(-1).copy()], hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out)
    return outs


CASES = [("sm_80", "m16n8k8", "tf32", "tf32", 3), ("sm_86", "m16n8k8", "tf32", "tf32", 0),
         ("sm_89", "m16n8k16", "tf32", "tf32", 1), ("sm_80", "m16n8k16", "tf32", "tf32", 0),
         ("sm_89", "m16n8k64", "s4", "s4", 1), ("sm_80", "m16n8k64", "u4", "s4", 0),
         ("sm_86", "m16n8k64", "s4", "u4", 1), ("sm_89", "m16n8k128", "u4", "u4", 0),
         ("sm_80", "m16n8k128", "s4", "u4", 0),
         ("sm_89", "m16n8k64", "e4m3", "e4m3", 0), ("sm_89", "m16n8k64", "e5m2", "e4m3", 0),
         ("sm_89", "m16n8k64", "e4m3", "e5m2", 0), ("sm_89", "m16n8k64", "e5m2", "e5m2", 0),
         ("sm_90", "m16n8k8", "tf32", "tf32", 2), ("sm_100", "m16n8k16", "tf32", "tf32", 1),
         ("sm_120", "m16n8k8", "tf32", "tf32", 1), ("sm_120", "m16n8k64", "e4m3", "e5m2", 0)]


@pytest.mark.parametrize("variant", ["sp", "sp::ordered_metadata"])
@pytest.mark.parametrize("arch,shape,a,b,sel", CASES)
def test_values(arch, shape, a, b, sel, variant):
    """D of our cubin = D of ptxas's = NumPy's for the dense A the fragments and metadata
    describe."""
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, sel, n_a, n_b, variant)
    words, want = _case(shape, a, b, sel, np.random.default_rng(sum(map(ord, arch + shape + a + b)) + sel))
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, a in ("s4", "u4")) == want).all()


@pytest.mark.parametrize("arch,shape,a,b", [("sm_89", "m16n8k64", "u4", "u4"), ("sm_80", "m16n8k128", "s4", "s4")])
def test_satfinite(arch, shape, a, b):
    """`.satfinite` (.SAT): C near the s32 limits; the exact sum clamped."""
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, 0, n_a, n_b, sat=".satfinite")
    rng = np.random.default_rng(11)
    words, want = _case(shape, a, b, 0, rng, c_range=(2 ** 31 - 300, 2 ** 31))
    for lane in range(0, 32, 3):            # some accumulators near the lower limit
        words[lane, 8:12] = (words[lane, 8:12].astype(np.int64) ^ 0xFFFFFFFF).astype(np.uint32)
    C = np.zeros((16, 8))
    for r in range(4):
        C[G + 8 * (r // 2), 2 * T + r % 2] = words[:, 8 + r].view(np.int32)
    k = int(shape.split("k")[1])
    rng2 = np.random.default_rng(11)
    A, _, _ = _sparse_a(a, k, rng2)
    _, B = _draw(b, rng2, (k, 8))
    want = np.clip(A @ B + C, -2 ** 31, 2 ** 31 - 1)
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, True) == want).all()
    assert (want == 2 ** 31 - 1).any() and ((want == -2 ** 31).any() or "s4" not in (a, b))


def _mma_lines(cubin):
    import re
    return [re.sub(r"R\d+", "R", " ".join(line.split("*/")[1].split(";")[0].split()).replace(".reuse", ""))
            for line in oracle.nvdisasm(cubin).splitlines() if "MMA" in line and "*/" in line]


@pytest.mark.parametrize("arch,shape,a,b,sat", [("sm_86", "m16n8k64", "u4", "s4", ".satfinite"),
                                                ("sm_89", "m16n8k128", "s4", "u4", ""),
                                                ("sm_89", "m16n8k64", "e5m2", "e4m3", ""),
                                                ("sm_80", "m16n8k16", "tf32", "tf32", ""),
                                                ("sm_120", "m16n8k64", "e5m2", "e5m2", "")])
def test_mma_line_is_ptxas(arch, shape, a, b, sat):
    """The MMA line (opcode, modifiers, operand kinds, selector) = ptxas's, register numbers aside."""
    n_a, n_b, top = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, top, n_a, n_b, "sp::ordered_metadata", sat=sat)
    assert _mma_lines(codegen.compile_ptx(ptx, arch, "k.ptx")) == _mma_lines(oracle.ptxas(ptx, arch=arch).output)


@pytest.mark.parametrize("arch,shape,a,sel", [("sm_89", "m16n8k16", "tf32", 2), ("sm_80", "m16n8k8", "tf32", 4),
                                              ("sm_89", "m16n8k64", "s4", 2), ("sm_86", "m16n8k128", "u4", 1),
                                              ("sm_89", "m16n8k64", "e4m3", 1)])
def test_selector_range_in_ptxas_words(arch, shape, a, sel):
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, a, sel, n_a, n_b, "sp::ordered_metadata")
    theirs = oracle.ptxas(ptx, arch=arch)
    assert not theirs.ok
    first = next(line for line in theirs.stderr.splitlines() if "error" in line)
    with pytest.raises(CompileError) as err:
        codegen.compile_ptx(ptx, arch, "k.ptx")
    assert first.split("error   : ")[1] in str(err.value)


# sm_90+ (branch isa34): ptxas computes sparse s4/u4 with a routine of its own
# (`__cuda_sm_9x_mma_sub_byte_internal_sparse_*`: nibbles widened, the metadata re-laid with
# SHFLs, two IMMA.SP.16832.S8); ours is two s8/u8 mma.sp of the even and odd nibbles with the
# same metadata (ptx2sass/mma_forms.py SPARSE_HALVES): other SASS, the same D
WIDENED = [("sm_90", "m16n8k64", "s4", "s4", 1), ("sm_90", "m16n8k64", "u4", "s4", 0),
           ("sm_90", "m16n8k128", "s4", "u4", 0), ("sm_100", "m16n8k128", "u4", "u4", 0),
           ("sm_100", "m16n8k64", "u4", "u4", 1), ("sm_120", "m16n8k64", "s4", "u4", 1),
           ("sm_120", "m16n8k128", "s4", "s4", 0)]


@pytest.mark.parametrize("variant", ["sp", "sp::ordered_metadata"])
@pytest.mark.parametrize("arch,shape,a,b,sel", WIDENED)
def test_sub_byte_values_beyond_sm89(arch, shape, a, b, sel, variant):
    """D of ours (two 8-bit sparse mmas) = D of ptxas's routine = NumPy's."""
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, sel, n_a, n_b, variant)
    words, want = _case(shape, a, b, sel, np.random.default_rng(sum(map(ord, arch + shape + a + b)) + sel))
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, True) == want).all()


@pytest.mark.parametrize("arch,shape,a,b", [("sm_90", "m16n8k64", "s4", "s4"), ("sm_120", "m16n8k128", "u4", "s4")])
def test_sub_byte_satfinite_beyond_sm89(arch, shape, a, b):
    """`.satfinite` there: both halves from 0, C joined by one saturating add (the exact sum
    clamped once, as the instruction defines it)."""
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, 0, n_a, n_b, sat=".satfinite")
    rng = np.random.default_rng(12)
    words, _ = _case(shape, a, b, 0, rng, c_range=(2 ** 31 - 300, 2 ** 31))
    for lane in range(0, 32, 3):            # some accumulators near the lower limit
        words[lane, 8:12] = (words[lane, 8:12].astype(np.int64) ^ 0xFFFFFFFF).astype(np.uint32)
    C = np.zeros((16, 8))
    for r in range(4):
        C[G + 8 * (r // 2), 2 * T + r % 2] = words[:, 8 + r].view(np.int32)
    rng2 = np.random.default_rng(12)
    A, _, _ = _sparse_a(a, int(shape.split("k")[1]), rng2)
    _, B = _draw(b, rng2, (int(shape.split("k")[1]), 8))
    want = np.clip(A @ B + C, -2 ** 31, 2 ** 31 - 1)
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, True) == want).all()
    assert (want == 2 ** 31 - 1).any()


# sm_90/100 (branch isa35): no fp8 tensor core; ptxas widens the fp8 values to f16 and runs
# two HMMA.SP.16832.F32 from zero (A's low halves, then the high ones), B and the metadata
# re-laid with SHFLs (on sm_100 through a `__cuda_sm_10x_hmma_mdata_m16n8k32` call), C added
# last; ours the same sums (ptx2sass/mma_forms.py, sparse_fp8): the same D bit for bit
FP8_WIDENED = [("sm_90", "e4m3", "e4m3"), ("sm_90", "e5m2", "e4m3"), ("sm_90", "e4m3", "e5m2"),
               ("sm_90", "e5m2", "e5m2"), ("sm_100", "e4m3", "e4m3"), ("sm_100", "e5m2", "e5m2"),
               ("sm_100", "e4m3", "e5m2")]


@pytest.mark.parametrize("variant", ["sp", "sp::ordered_metadata"])
@pytest.mark.parametrize("arch,a,b", FP8_WIDENED)
def test_fp8_values_without_fp8_tensor_cores(arch, a, b, variant):
    """D of ours (two f16 sparse mmas) = D of ptxas's cubin = NumPy's."""
    ptx = _kernel(arch, "m16n8k64", a, b, 0, 4, 4, variant)
    words, want = _case("m16n8k64", a, b, 0, np.random.default_rng(sum(map(ord, arch + a + b))))
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, False) == want).all()


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_fp8_rounding_is_ptxas_split(arch):
    """Values whose sums round: ours = ptxas's bit for bit (the same products in each of the
    two HMMAs, C added last), on random fp8 codes of any exponent and C of any f32 size."""
    ptx = _kernel(arch, "m16n8k64", "e4m3", "e5m2", 0, 4, 4, "sp::ordered_metadata")
    rng = np.random.default_rng(35)
    for _ in range(3):
        words, _ = _case("m16n8k64", "e4m3", "e5m2", 0, rng)
        codes = rng.integers(0, 256, size=(32, 8, 4), dtype=np.uint32)
        codes[:, :4] = np.where(codes[:, :4] & 0x7F == 0x7F, codes[:, :4] ^ 1, codes[:, :4])  # no e4m3 NaN
        codes[:, 4:] = np.where(codes[:, 4:] & 0x7C == 0x7C, codes[:, 4:] ^ 0x40, codes[:, 4:])  # no e5m2 inf/NaN
        words[:, 0:8] = (codes << np.array([0, 8, 16, 24], dtype=np.uint32)).sum(axis=2, dtype=np.uint32)
        words[:, 8:12] = (rng.standard_normal((32, 4)) * 10.0 ** rng.integers(-3, 4, size=(32, 4))).astype(np.float32).view(np.uint32)
        ours, theirs = _run_both(arch, ptx, words)
        assert np.isfinite(ours.view(np.float32)).all()
        assert (ours == theirs).all()


def test_fp8_guarded_stays_refused():
    """A guarded sparse fp8 mma on sm_90 (ptxas takes it): not generated, refused at the line."""
    ptx = _kernel("sm_90", "m16n8k64", "e4m3", "e4m3", 0, 4, 4, "sp::ordered_metadata")
    ptx = ptx.replace("    mma.sp", "    setp.ne.u32 %p1, %r30, 3;\n    @%p1 mma.sp").replace(
        ".reg .b32 %r<40>;", ".reg .b32 %r<40>; .reg .pred %p<2>;")
    assert oracle.ptxas(ptx, arch="sm_90").ok
    with pytest.raises(CompileError, match="not supported yet"):
        codegen.compile_ptx(ptx, "sm_90", "k.ptx")


@pytest.mark.parametrize("arch,shape,a,b", [("sm_90", "m16n8k8", "tf32", "tf32"), ("sm_100", "m16n8k16", "tf32", "tf32"),
                                          ("sm_120", "m16n8k64", "e4m3", "e5m2"), ("sm_90", "m16n8k64", "s4", "u4"),
                                          ("sm_120", "m16n8k128", "u4", "u4"), ("sm_90", "m16n8k64", "e4m3", "e5m2"),
                                          ("sm_100", "m16n8k64", "e5m2", "e4m3")])
def test_sparse_mma_mask(arch, shape, a, b):
    """nv.info's EIATTR_SPARSE_MMA_MASK (sm_90+) = ptxas's: 0x10 for HMMA.SP tf32, 0x08 for
    sm_120's QMMA.SP, 0x20 for the IMMA.SP of sparse s4/u4 there (ptxas's routine's too)."""
    from ptx2sass.encoder.cubin import read_cubin
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, 0, n_a, n_b)
    masks = []
    for cubin in (codegen.compile_ptx(ptx, arch, "k.ptx"), oracle.ptxas(ptx, arch=arch).output):
        kern = read_cubin(cubin).kernels
        kern = kern["k"] if isinstance(kern, dict) else kern[0]
        masks.append([r.value for r in kern.attributes if r.name == "SPARSE_MMA_MASK"])
    assert masks[0] == masks[1] and masks[0]


@pytest.mark.parametrize("arch,shape,a,b", [("sm_89", "m16n8k16", "tf32", "tf32"), ("sm_86", "m16n8k64", "s4", "u4"),
                                            ("sm_89", "m16n8k64", "e4m3", "e5m2")])
def test_accumulator_carried_around_a_loop(arch, shape, a, b):
    """D fed back as C three times in a loop (the accumulator group kept across the back
    edge): D = C + 3 A @ B, ours = ptxas's cubin."""
    n_a, n_b, _ = FORMS[(shape, a)]
    ptx = _kernel(arch, shape, a, b, 0, n_a, n_b)
    line = next(text for text in ptx.splitlines() if "mma." in text)
    loop = ("    mov.u32 %r31, 0;\nLOOP:\n" + line.replace("{%r20, %r21, %r22, %r23}", "{%r8, %r9, %r10, %r11}")
            + "\n    add.u32 %r31, %r31, 1;\n    setp.lt.u32 %p1, %r31, 3;\n    @%p1 bra LOOP;\n"
            + "    mov.b32 %r20, %r8; mov.b32 %r21, %r9; mov.b32 %r22, %r10; mov.b32 %r23, %r11;")
    ptx = ptx.replace(line, loop).replace(".reg .b32 %r<40>;", ".reg .b32 %r<40>; .reg .pred %p<2>;")
    words, once = _case(shape, a, b, 0, np.random.default_rng(3))
    integer = a in ("s4", "u4")
    C = np.zeros((16, 8))
    for r in range(4):
        C[G + 8 * (r // 2), 2 * T + r % 2] = words[:, 8 + r].view(np.int32 if integer else np.float32)
    ours, theirs = _run_both(arch, ptx, words)
    assert (ours == theirs).all()
    assert (_d(ours, integer) == C + 3 * (once - C)).all()
