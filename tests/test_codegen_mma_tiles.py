"""mma.sync on the 8x8 tensor-core tiles of sm_8x (and their lowering on sm_90/120): f64 m8n8k4 (DMMA.884), s4/u4 m8n8k32
(IMMA.8832) and b1 m8n8k128 (BMMA.88128 .xor/.and .popc). Each lane loads its fragment words
(the PTX ISA's mma fragment layouts) from `in`, our cubin and ptxas's run in the emulator, and
D must equal NumPy's A @ B + C (or C + popc(A xor/and B)) computed from the same words."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

G, T = np.arange(32) // 4, np.arange(32) % 4


def _kernel(arch, body, decl):
    version = "8.7" if arch in ("sm_100", "sm_120") else "7.8"
    return f"""
.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<40>; {decl}
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r30, %laneid; mul.wide.u32 %rd3, %r30, 8; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
    mul.wide.u32 %rd6, %r30, 16; add.s64 %rd6, %rd1, %rd6;
{body}
    ret;
}}
"""


def _run_both(ptx, arch, data, out_words):
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    outs = []
    for cubin, check in ((ours, True), (oracle.ptxas(ptx, arch=arch).output, False)):
        out = np.zeros(out_words, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out)
    return outs


ARCHS = ["sm_80", "sm_86", "sm_89"]


@pytest.mark.parametrize("arch", ARCHS + ["sm_90", "sm_100", "sm_120"])
def test_f64_m8n8k4(arch):
    """A (lane: row g, k t) at in[lane], B (k t, column g) at in[32+lane], C (row g,
    columns 2t, 2t+1) at in[64+2 lane]; D stored like C. Random doubles: one rounding of the
    exact sum (PTX: .rn); small integers: exact."""
    body = """
    ld.global.f64 %fd0, [%rd4]; ld.global.f64 %fd1, [%rd4+256];
    ld.global.v2.f64 {%fd2, %fd3}, [%rd6+512];
    mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd4, %fd5}, {%fd0}, {%fd1}, {%fd2, %fd3};
    mul.wide.u32 %rd7, %r30, 16; add.s64 %rd7, %rd2, %rd7; st.global.v2.f64 [%rd7], {%fd4, %fd5};"""
    ptx = _kernel(arch, body, ".reg .f64 %fd<8>;")
    rng = np.random.default_rng(1)
    for values in (rng.integers(-20, 21, 128).astype(np.float64), rng.standard_normal(128)):
        ours, theirs = _run_both(ptx, arch, values.view(np.uint32).copy(), 128)
        A = np.zeros((8, 4)); B = np.zeros((4, 8)); C = np.zeros((8, 8))
        A[G, T] = values[:32]; B[T, G] = values[32:64]
        C[G, 2 * T] = values[64::2]; C[G, 2 * T + 1] = values[65::2]
        from codegen_harness import dmma_chain
        want = np.array([[dmma_chain(A[i, :], B[:, j], C[i, j]) for j in range(8)] for i in range(8)])
        d = ours.view(np.float64)
        got = np.zeros((8, 8)); got[G, 2 * T] = d[0::2]; got[G, 2 * T + 1] = d[1::2]
        assert (got == want).all()
        assert (ours == theirs).all()


def _int_tile(kind, a, b, c, op=None):
    """NumPy's D for the integer tiles from the lanes' A, B words and C pairs."""
    if kind == "b1":
        bits = lambda w: (w[:, None] >> np.arange(32, dtype=np.uint32)) & 1
        A = np.zeros((8, 128), np.int64); B = np.zeros((128, 8), np.int64)
        for lane in range(32):
            A[G[lane], 32 * T[lane]:32 * T[lane] + 32] = bits(a[lane:lane + 1])[0]
            B[32 * T[lane]:32 * T[lane] + 32, G[lane]] = bits(b[lane:lane + 1])[0]
        both = A @ B
        prod = both if op == "and" else A.sum(1)[:, None] + B.sum(0)[None, :] - 2 * both
    else:
        ta, tb = kind

        def nibbles(w, signed):
            n = ((w[:, None] >> (4 * np.arange(8, dtype=np.uint32))) & 15).astype(np.int64)
            return np.where(n >= 8, n - 16, n) if signed else n
        A = np.zeros((8, 32), np.int64); B = np.zeros((32, 8), np.int64)
        na, nb = nibbles(a, ta == "s4"), nibbles(b, tb == "s4")
        for lane in range(32):
            A[G[lane], 8 * T[lane]:8 * T[lane] + 8] = na[lane]
            B[8 * T[lane]:8 * T[lane] + 8, G[lane]] = nb[lane]
        prod = A @ B
    C = np.zeros((8, 8), np.int64)
    C[G, 2 * T] = c[0::2].view(np.int32); C[G, 2 * T + 1] = c[1::2].view(np.int32)
    return prod + C


TILES = [(("s4", "s4"), ""), (("u4", "s4"), ".satfinite"), (("s4", "u4"), ""), (("u4", "u4"), ".satfinite"),
         ("b1", "xor"), ("b1", "and")]


# sm_90 and sm_120 have no 4-bit (nor xor-popc) tensor-core operands: the nibbles widen to
# bytes, xor is two and-popc mmas (ptx2sass/mma_forms.py); sm_100/120 have no BMMA at all:
# b1 is bit planes on u8 IMMAs (ptxas's own sm_120 code too, with MOVM.U4TO8)
@pytest.mark.parametrize("arch,kind,extra", [(arch, *t) for arch in ARCHS + ["sm_90", "sm_120"] for t in TILES]
                         + [("sm_100", *t) for t in TILES if t[0] == "b1"]
                         + [("sm_75", *t) for t in TILES if t[1] != "and"])
def test_integer_tiles(arch, kind, extra):
    if kind == "b1":
        form = f"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.{extra}.popc"
    else:
        form = f"mma.sync.aligned.m8n8k32.row.col{extra}.s32.{kind[0]}.{kind[1]}.s32"
    body = f"""
    mul.wide.u32 %rd7, %r30, 4; add.s64 %rd7, %rd1, %rd7;
    ld.global.b32 %r0, [%rd7]; ld.global.b32 %r1, [%rd7+128];
    ld.global.v2.b32 {{%r2, %r3}}, [%rd4+256];
    {form} {{%r4, %r5}}, {{%r0}}, {{%r1}}, {{%r2, %r3}};
    st.global.v2.b32 [%rd5], {{%r4, %r5}};"""
    ptx = _kernel(arch, body, "")
    rng = np.random.default_rng(len(form))
    data = rng.integers(0, 2 ** 32, 128, dtype=np.uint64).astype(np.uint32)
    if extra == ".satfinite":      # C near the limits so that the sum saturates
        data[64:] = np.where(rng.random(64) < 0.5, 0x7FFFFF00, 0x80000100).astype(np.uint32)
    ours, theirs = _run_both(ptx, arch, data, 64)
    want = _int_tile(kind, data[:32], data[32:64], data[64:], extra)
    if extra == ".satfinite":
        want = np.clip(want, -2 ** 31, 2 ** 31 - 1)
    got = np.zeros((8, 8), np.int64)
    got[G, 2 * T] = ours[0::2].view(np.int32); got[G, 2 * T + 1] = ours[1::2].view(np.int32)
    assert ((got - want) % 2 ** 32 == 0).all()
    assert (ours == theirs).all()


# m16n8 sub-byte shapes and m8n8k16 int8: (shape, A type, B type, extra) -> registers (A, B, C)
WIDE = [("m16n8k32", "s4", "u4", "", (2, 1, 4)), ("m16n8k64", "u4", "s4", ".satfinite", (4, 2, 4)),
        ("m16n8k32", "u4", "u4", ".satfinite", (2, 1, 4)), ("m16n8k64", "s4", "s4", "", (4, 2, 4)),
        ("m16n8k128", "b1", "b1", "xor", (2, 1, 4)), ("m16n8k256", "b1", "b1", "and", (4, 2, 4)),
        ("m16n8k128", "b1", "b1", "and", (2, 1, 4)), ("m16n8k256", "b1", "b1", "xor", (4, 2, 4)),
        ("m8n8k16", "s8", "u8", ".satfinite", (1, 1, 2)), ("m8n8k16", "u8", "s8", "", (1, 1, 2))]


def _elements(word, ty):
    bits = {"s4": 4, "u4": 4, "b1": 1, "s8": 8, "u8": 8}[ty]
    per = 32 // bits
    e = (int(word) >> (bits * np.arange(per))) & ((1 << bits) - 1)
    if ty in ("s4", "s8"):
        e = np.where(e >= 1 << (bits - 1), e - (1 << bits), e)
    return e, per


@pytest.mark.parametrize("arch,shape,ta,tb,extra,regs",
                         [(arch, *w) for arch in ("sm_80", "sm_89", "sm_90", "sm_120") for w in WIDE]
                         + [("sm_100", *w) for w in WIDE if w[1] == "b1"]
                         + [("sm_75", *w) for w in WIDE if w[0] == "m8n8k16"])
def test_wide_integer_shapes(arch, shape, ta, tb, extra, regs):
    """The PTX ISA's mma fragments: A register r of lane (g, t) holds row g + 8 (r % 2),
    k from (r // 2) 4p + t p (p elements a register); B register r column g, k from
    4 r p + t p; C/D (row g (+ 8), columns 2t, 2t + 1)."""
    n_a, n_b, n_c = regs
    m, k = (16 if shape.startswith("m16") else 8), int(shape.split("k")[1])
    if ta == "b1":
        form = f"mma.sync.aligned.{shape}.row.col.s32.b1.b1.s32.{extra}.popc"
    else:
        form = f"mma.sync.aligned.{shape}.row.col{extra}.s32.{ta}.{tb}.s32"
    r = lambda first, n: "{" + ", ".join(f"%r{first + i}" for i in range(n)) + "}"
    loads = "\n".join(f"    ld.global.b32 %r{i}, [%rd7+{4 * i}];" for i in range(12))
    stores = "\n".join(f"    st.global.b32 [%rd8+{4 * i}], %r{20 + i};" for i in range(n_c))
    body = f"""
    mul.wide.u32 %rd7, %r30, 48; add.s64 %rd7, %rd1, %rd7;
    mul.wide.u32 %rd8, %r30, 16; add.s64 %rd8, %rd2, %rd8;
{loads}
    {form} {r(20, n_c)}, {r(0, n_a)}, {r(4, n_b)}, {r(8, n_c)};
{stores}"""
    ptx = _kernel(arch, body, ".reg .b64 %rd<10>;").replace(".reg .b64 %rd<8>; ", "")
    rng = np.random.default_rng(len(form) + k)
    data = rng.integers(0, 2 ** 32, 32 * 12, dtype=np.uint64).astype(np.uint32)
    words = data.reshape(32, 12)
    if extra == ".satfinite":
        words[:, 8:12] = np.where(rng.random((32, 4)) < 0.5, 0x7FFFFF00, 0x80000100)
    ours, theirs = _run_both(ptx, arch, data, 32 * 4)
    A = np.zeros((m, k), np.int64); B = np.zeros((k, 8), np.int64); C = np.zeros((m, 8), np.int64)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(n_a):
            e, per = _elements(words[lane, i], ta)
            A[g + 8 * (i % 2) if m == 16 else g, (i // 2 if m == 16 else i) * 4 * per + t * per + np.arange(per)] = e
        for i in range(n_b):
            e, per = _elements(words[lane, 4 + i], tb)
            B[i * 4 * per + t * per + np.arange(per), g] = e
        for i in range(n_c):
            C[g + 8 * (i // 2), 2 * t + i % 2] = np.int32(words[lane, 8 + i].view(np.int32))
    if ta == "b1":
        both = A @ B
        prod = both if extra == "and" else A.sum(1)[:, None] + B.sum(0)[None, :] - 2 * both
    else:
        prod = A @ B
    want = prod + C
    want = np.clip(want, -2 ** 31, 2 ** 31 - 1) if extra == ".satfinite" else (want + 2 ** 31) % 2 ** 32 - 2 ** 31
    got = np.zeros((m, 8), np.int64)
    out = ours.reshape(32, 4).view(np.int32)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(n_c):
            got[g + 8 * (i // 2), 2 * t + i % 2] = out[lane, i]
    assert (got == want).all()
    assert (ours == theirs).all()
