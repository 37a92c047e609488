"""mma.sp (2:4 structured-sparse A) on sm_80/86/89: HMMA.SP for f16/bf16, IMMA.SP for s8/u8.
Each lane loads its fragment words, metadata word and the kernel runs one mma.sp; our cubin
and ptxas's run in the emulator and D must equal NumPy's A @ B + C, where A is the dense
matrix the compressed fragments and the metadata describe. The fragments are the PTX ISA's
(compressed A in the dense layout of the m x k/2 shape); the metadata order is the PTX ISA's
as spelled out in CUTLASS's comments on sparse HMMA metadata: 2-bit indices register by
register, thread by thread of the quad, element by element, 16 to a metadata thread, the
metadata threads being those the sparsity selector names."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

LANE = np.arange(32)
G, T = LANE // 4, LANE % 4
# (shape, A/B type) -> (A regs, B regs, largest selector)
FORMS = {("m16n8k16", "f16"): (2, 2, 3), ("m16n8k32", "f16"): (4, 4, 1),
         ("m16n8k16", "bf16"): (2, 2, 3), ("m16n8k32", "bf16"): (4, 4, 1),
         ("m16n8k32", "s8"): (2, 2, 1), ("m16n8k64", "s8"): (4, 4, 0),
         ("m16n8k32", "u8"): (2, 2, 1), ("m16n8k64", "u8"): (4, 4, 0)}


def _kernel(arch, shape, ab, ctype, sel, n_a, n_b, n_c, variant="sp", version="7.8", sat=""):
    if arch in ("sm_100", "sm_120"):      # their first PTX versions: 8.6 / 8.7
        version = max(version, "8.7")
    if arch == "sm_110":
        version = max(version, "9.0")
    regs = lambda first, n: "{" + ", ".join(f"%r{first + i}" for i in range(n)) + "}"
    if ctype in ("s32", "f16"):
        c, d = regs(8, n_c), regs(20, n_c)
        types = f"{sat}.s32.{ab[0]}.{ab[1]}.s32" if ctype == "s32" else ".f16.f16.f16.f16"
    else:
        c = "{" + ", ".join(f"%f{i}" for i in range(n_c)) + "}"
        d = "{" + ", ".join(f"%f{10 + i}" for i in range(n_c)) + "}"
        types = f".f32.{ab[0]}.{ab[1]}.f32"
    loads = "\n".join(f"    ld.global.b32 %r{i}, [%rd4+{4 * i}];" for i in range(n_a)) + "\n" + \
        "\n".join(f"    ld.global.b32 %r{4 + i}, [%rd4+{16 + 4 * i}];" for i in range(n_b)) + "\n" + \
        "\n".join(f"    ld.global.{'f32 %f' if ctype == 'f32' else 'b32 %r'}{i if ctype == 'f32' else 8 + i}, "
                  f"[%rd4+{32 + 4 * i}];" for i in range(n_c)) + \
        "\n    ld.global.b32 %r16, [%rd4+48];"
    stores = "\n".join(f"    st.global.{'f32' if ctype == 'f32' else 'b32'} [%rd5+{4 * i}], "
                       f"{'%f' if ctype == 'f32' else '%r'}{10 + i if ctype == 'f32' else 20 + i};"
                       for i in range(n_c))
    return f"""
.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<40>; .reg .f32 %f<20>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r30, %laneid; mul.wide.u32 %rd3, %r30, 64; add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r30, 16; add.s64 %rd5, %rd2, %rd3;
{loads}
    mma.{variant}.sync.aligned.{shape}.row.col{types} {d}, {regs(0, n_a)}, {regs(4, n_b)}, {c}, %r16, {sel};
{stores}
    ret;
}}
"""


def _encode(values, ab):
    """Element values -> their bit patterns (f16/bf16 as 16 bits, s8/u8 as 8)."""
    if ab == "f16":
        return values.astype(np.float16).view(np.uint16).astype(np.uint32)
    if ab == "bf16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)
    return (values.astype(np.int64) & 0xFF).astype(np.uint32)


def _range(ty):
    return {"f16": (-4, 5), "bf16": (-4, 5), "s8": (-128, 128), "u8": (0, 256)}[ty]


def _case(shape, ab, ctype, sel, rng, b_type=None):
    """(input words per lane, expected D as a 16 x 8 matrix); B of `b_type` (default A's)."""
    b_type = b_type or ab
    k = int(shape.split("k")[1])
    n_a, n_b, _ = FORMS[(shape, ab)]
    bits = 16 if ab in ("f16", "bf16") else 8
    per_reg = 32 // bits
    lo, hi = _range(ab)
    # dense A with two non-zero positions in every chunk of four (any of the 6 pairs)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    which = rng.integers(0, 6, size=(16, k // 4))
    A = np.zeros((16, k), dtype=np.int64)
    kept = rng.integers(lo, hi, size=(16, k // 2))
    for r in range(16):
        for c in range(k // 4):
            for j, p in enumerate(pairs[which[r, c]]):
                A[r, 4 * c + p] = kept[r, 2 * c + j]
    B = rng.integers(*_range(b_type), size=(k, 8))
    C = rng.integers(-1000, 1001, size=(16, 8))
    words = np.zeros((32, 16), dtype=np.uint32)
    words[:, 12] = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32)  # other lanes' metadata: noise
    n_meta = n_a * 4 * per_reg // 16
    meta = {}
    cols_per_block = 4 * per_reg
    for lane in range(32):
        g, t = divmod(lane, 4)
        for r in range(n_a):
            for e in range(per_reg):
                row, ccol = g + 8 * (r % 2), (r // 2) * cols_per_block + t * per_reg + e
                chunk, j = divmod(ccol, 2)
                pos = pairs[which[row, chunk]][j]
                words[lane, r] |= _encode(np.array([kept[row, ccol]]), ab)[0] << (bits * e)
                p = r * 4 * per_reg + t * per_reg + e
                holder = 4 * g + sel * n_meta + p // 16
                meta[holder] = (meta.get(holder, 0) & ~(3 << (2 * (p % 16)))) | (pos << (2 * (p % 16)))
        for r in range(n_b):
            for e in range(per_reg):
                words[lane, 4 + r] |= _encode(np.array([B[r * cols_per_block + t * per_reg + e, g]]), b_type)[0] \
                    << (bits * e)
        if ctype == "f16":
            for h in range(2):
                for e in range(2):
                    words[lane, 8 + h] |= _encode(np.array([C[g + 8 * h, 2 * t + e]]), "f16")[0] << (16 * e)
        else:
            for r in range(4):
                v = C[g + 8 * (r // 2), 2 * t + r % 2]
                words[lane, 8 + r] = np.float32(v).view(np.uint32) if ctype == "f32" else np.uint32(v & 0xFFFFFFFF)
    for holder, value in meta.items():
        words[holder, 12] = value
    return words, A @ B + C


def _d_matrix(out, ctype):
    D = np.zeros((16, 8))
    if ctype == "f16":
        halves = out.reshape(32, 4)[:, :2].copy().view(np.float16).astype(np.float64)
        for h in range(2):
            for e in range(2):
                D[G + 8 * h, 2 * T + e] = halves[:, 2 * h + e]
        return D
    vals = out.reshape(32, 4).copy().view(np.float32 if ctype == "f32" else np.int32).astype(np.float64)
    for r in range(4):
        D[G + 8 * (r // 2), 2 * T + r % 2] = vals[:, r]
    return D


CASES = [(arch, shape, ab, ctype, sel) for (shape, ab), (_, _, top) in FORMS.items()
         for ctype in (("f32", "f16") if ab == "f16" else ("f32",) if ab == "bf16" else ("s32",))
         for sel in sorted({0, top}) for arch in (("sm_89", "sm_80") if sel == top else ("sm_86",))]


@pytest.mark.parametrize("arch,shape,ab,ctype,sel", CASES)
def test_mma_sp(arch, shape, ab, ctype, sel):
    n_a, n_b, _ = FORMS[(shape, ab)]
    n_c = 2 if ctype == "f16" else 4
    types = (ab, "s8" if ab == "u8" else ab) if ab in ("s8", "u8") else (ab, ab)
    sat = ".satfinite" if shape == "m16n8k64" else ""
    ptx = _kernel(arch, shape, types, ctype, sel, n_a, n_b, n_c, sat=sat)
    rng = np.random.default_rng(sum(map(ord, arch + shape + ab + ctype)) + sel)
    words, want = _case(shape, ab, ctype, sel, rng, types[1])
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    outs = []
    for cubin, check in ((ours, True), (oracle.ptxas(ptx, arch=arch).output, False)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, words.reshape(-1).copy()], hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out)
    assert (outs[0] == outs[1]).all()
    assert (_d_matrix(outs[0], ctype) == want).all()


@pytest.mark.parametrize("variant,version", [("sp::ordered_metadata", "8.5")])
def test_mma_sp_ordered_metadata(variant, version):
    """`.sp::ordered_metadata` (PTX 8.5): the same HMMA.SP on sm_8x."""
    shape, ab, ctype, sel = "m16n8k16", "f16", "f32", 1
    ptx = _kernel("sm_89", shape, (ab, ab), ctype, sel, 2, 2, 4, variant=variant, version=version)
    words, want = _case(shape, ab, ctype, sel, np.random.default_rng(5))
    out = np.zeros(32 * 4, dtype=np.uint32)
    run(codegen.compile_ptx(ptx, "sm_89", "k.ptx"), "k", (1, 1, 1), (32, 1, 1), [out, words.reshape(-1).copy()])
    assert (_d_matrix(out, ctype) == want).all()


def test_selector_out_of_range_is_refused_in_ptxas_words():
    """bf16 m16n8k32 takes selectors 0..1 (ptxas 13.5 lets f16's take 0..3)."""
    ptx = _kernel("sm_89", "m16n8k32", ("bf16", "bf16"), "f32", 2, 4, 4, 4)
    theirs = oracle.ptxas(ptx, arch="sm_89")
    assert not theirs.ok
    with pytest.raises(CompileError) as err:
        codegen.compile_ptx(ptx, "sm_89", "k.ptx")
    assert "value '2' out of range, expected to be in range [0..1]" in str(err.value)
    assert "value '2' out of range, expected to be in range [0..1]" in theirs.stderr


@pytest.mark.parametrize("shape,ab,ctype,sel", [("m16n8k16", "f16", "f16", 3), ("m16n8k32", "bf16", "f32", 1),
                                               ("m16n8k32", "s8", "s32", 1), ("m16n8k64", "u8", "s32", 0)])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_mma_sp_on_sm90(shape, ab, ctype, sel, arch):
    """sm_90/100/120: the same HMMA.SP/IMMA.SP (sm_100/120's probed from
    tools/isa_seeds/sparse_mma_sm1x0.ptx; they were refused); the cubin's
    EIATTR_SPARSE_MMA_MASK is ptxas's (0x10 for HMMA.SP, 0x20 for IMMA.SP). Before, a sparse
    mma whose operand count matched a dense form compiled as the dense one."""
    from ptx2sass.encoder.cubin import read_cubin
    test_mma_sp(arch, shape, ab, ctype, sel)
    n_a, n_b, _ = FORMS[(shape, ab)]
    types = (ab, "s8" if ab == "u8" else ab) if ab in ("s8", "u8") else (ab, ab)
    ptx = _kernel(arch, shape, types, ctype, sel, n_a, n_b, 2 if ctype == "f16" else 4)
    masks = []
    for cubin in (codegen.compile_ptx(ptx, arch, "k.ptx"), oracle.ptxas(ptx, arch=arch).output):
        k = read_cubin(cubin).kernels
        k = k["k"] if isinstance(k, dict) else k[0]
        masks.append([r.value for r in k.attributes if r.name == "SPARSE_MMA_MASK"])
    assert masks[0] == masks[1] == [0x10 if ab in ("f16", "bf16") else 0x20]


def test_ordered_metadata_needs_ptx_8_5_as_ptxas_says():
    ptx = _kernel("sm_89", "m16n8k16", ("f16", "f16"), "f32", 0, 2, 2, 4, variant="sp::ordered_metadata")
    theirs = oracle.ptxas(ptx, arch="sm_89")
    message = "Feature '.sp::ordered_metadata' requires PTX ISA .version 8.5 or later"
    assert message in theirs.stderr
    with pytest.raises(CompileError, match=message.replace(".", r"\.")):
        codegen.compile_ptx(ptx, "sm_89", "k.ptx")


@pytest.mark.parametrize("sel", [0, 1])
def test_mma_sp_u8_s8_satfinite_on_sm110(sel):
    """sm_110 (and sm_100): ptxas rewrites `.sp` metadata through a
    `__cuda_sm_10x_imma_mdata_m16n8k32` call (quad shuffles and A byte swaps) before its
    IMMA.SP; ours passes the metadata as it is. Both cubins give NumPy's D for the PTX ISA's
    metadata in the emulator (campaign 22's 33003906 mismatch, `mma.sp` m16n8k32
    .satfinite.s32.u8.s8, came from an input register, not from the mma)."""
    ptx = _kernel("sm_110", "m16n8k32", ("u8", "s8"), "s32", sel, 2, 2, 4, sat=".satfinite")
    words, want = _case("m16n8k32", "u8", "s32", sel, np.random.default_rng(7 + sel), "s8")
    outs = []
    for cubin, check in ((codegen.compile_ptx(ptx, "sm_110", "k.ptx"), True),
                         (oracle.ptxas(ptx, arch="sm_110").output, False)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, words.reshape(-1).copy()], hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(_d_matrix(out, "s32"))
    assert (outs[0] == want).all() and (outs[1] == want).all()
