"""wmma.load/mma/store (m16n16k16, m32n8k16, m8n32k16 with f16 inputs): our cubin and ptxas's run in the emulator on
the same inputs and must store the same bits; with small integer inputs (exact in f16 and f32)
the stored D must also equal NumPy's A @ B + C."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

A_OFF, B_OFF, C_OFF, IN_BYTES, OUT_BYTES = 0, 4096, 8192, 16384, 8192
DIMS = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16)}
ALL_DIMS = {**DIMS, "m16n16k8": (16, 16, 8)}
# registers in the A and B fragments per input type and shape (the PTX ISA's fragment sizes)
INPUT_WORDS = {"f16": lambda shape: (8, 8),
               "bf16": lambda shape: {"m16n16k16": (4, 4), "m32n8k16": (8, 2), "m8n32k16": (2, 8)}[shape],
               "tf32": lambda shape: (4, 4),
               "s8": lambda shape: {"m16n16k16": (2, 2), "m32n8k16": (4, 1), "m8n32k16": (1, 4)}[shape]}
INPUT_WORDS["u8"] = INPUT_WORDS["s8"]


# The kernels' shared-memory staging: each thread copies its 128 input words from global
# into `sm` before the wmma code and its 64 result words from `sd` out after it.
SHARED_COPY_IN = """
    mov.u32 %r40, sm; mov.u32 %r41, sd; mov.u32 %r42, 0;
COPYIN:
    shl.b32 %r43, %r42, 7; add.u32 %r43, %r43, %r44;
    cvt.u64.u32 %rd5, %r43; add.s64 %rd6, %rd1, %rd5; ld.global.b32 %r45, [%rd6];
    add.u32 %r46, %r40, %r43; st.shared.b32 [%r46], %r45;
    add.u32 %r42, %r42, 1; setp.lt.u32 %p1, %r42, 128; @%p1 bra COPYIN;
    bar.sync 0;"""
SHARED_COPY_OUT = """
    bar.sync 0; mov.u32 %r42, 0;
COPYOUT:
    shl.b32 %r43, %r42, 7; add.u32 %r43, %r43, %r44;
    add.u32 %r46, %r41, %r43; ld.shared.b32 %r45, [%r46];
    cvt.u64.u32 %rd5, %r43; add.s64 %rd6, %rd2, %rd5; st.global.b32 [%rd6], %r45;
    add.u32 %r42, %r42, 1; setp.lt.u32 %p1, %r42, 64; @%p1 bra COPYOUT;"""


def _kernel(la, lb, lc, ld, acc, space, stride_reg, stride=32, shape="m16n16k16", itype="f16", satfinite=""):
    """A kernel that loads A, B, C from `in` (copied to shared first for .shared), multiplies
    and stores D to `out` (through shared for .shared)."""
    s = "%r30" if stride_reg else str(stride)
    n_acc = 4 if acc == "f16" else 8
    accs = lambda base: "{" + ",".join(f"%{'f' if acc == 'f32' else 'r'}{base + i}" for i in range(n_acc)) + "}"
    n_a, n_b = INPUT_WORDS[itype](shape)
    regs = lambda base, n: "{" + ",".join(f"%r{base + i}" for i in range(n)) + "}"
    mma_types = f"{acc}.{acc}" if itype == "f16" else f"{acc}.{itype}.{itype}.{acc}{satfinite}"
    sp = {"global": ".global", "shared": ".shared", "generic": "", "symbol": ".shared"}[space]
    if space in ("global", "generic"):
        pa, pb, pc, pd = "[%rd1]", "[%rd1+4096]", "[%rd1+8192]", "[%rd2]"
        prologue, epilogue = "", ""
    else:
        if space == "shared":
            pa, pb, pc, pd = "[%r40]", "[%r40+4096]", "[%r40+8192]", "[%r41]"
        else:
            pa, pb, pc, pd = "[sm]", "[sm+4096]", "[sm+8192]", "[sd]"
        prologue, epilogue = SHARED_COPY_IN, SHARED_COPY_OUT
    return f"""
.version 7.8
.target sm_89
.address_size 64
.shared .align 16 .b8 sm[16384];
.shared .align 16 .b8 sd[8192];
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 stride)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<50>; .reg .f32 %f<40>; .reg .pred %p<2>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in]; ld.param.u32 %r30, [stride];
    mov.u32 %r44, %tid.x; shl.b32 %r44, %r44, 2;{prologue}
    wmma.load.a.sync.aligned.{la}.{shape}{sp}.{itype} {regs(0, n_a)}, {pa}, {s};
    wmma.load.b.sync.aligned.{lb}.{shape}{sp}.{itype} {regs(8, n_b)}, {pb}, {s};
    wmma.load.c.sync.aligned.{lc}.{shape}{sp}.{acc} {accs(16)}, {pc}, {s};
    wmma.mma.sync.aligned.{la}.{lb}.{shape}.{mma_types} {accs(31 if acc == 'f32' else 50)}, {regs(0, n_a)}, {regs(8, n_b)}, {accs(16)};
    wmma.store.d.sync.aligned.{ld}.{shape}{sp}.{acc} {pd}, {accs(31 if acc == 'f32' else 50)}, {s};{epilogue}
    ret;
}}
""".replace(".reg .b32 %r<50>", ".reg .b32 %r<60>")


def run_ours_and_ptxas(ptx, data, stride, arch="sm_89"):
    """(our D words, ptxas's D words); ptxas's cubins transpose 16-bit fragments of the other
    layout with MOVM.16.MT88, which the emulator runs."""
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    outs = []
    for cubin, check in ((ours, True), (oracle.ptxas(ptx, arch=arch).output, False)):
        out = np.zeros(OUT_BYTES // 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.uint32(stride)],
                  hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out)
    return outs


def _matrix(buf: bytes, offset, layout, dtype, stride, rows, cols):
    flat = np.frombuffer(buf, dtype=dtype, offset=offset)
    if layout == "row":
        return np.array([[flat[r * stride + c] for c in range(cols)] for r in range(rows)])
    return np.array([[flat[c * stride + r] for c in range(cols)] for r in range(rows)])


CASES = [(shape, *case) for shape in DIMS for case in [
    ("row", "col", "row", "row", "f32", "global", False),
    ("col", "row", "col", "col", "f32", "global", True),
    ("row", "row", "row", "col", "f16", "global", False),
    ("col", "col", "col", "row", "f16", "generic", True),
    ("row", "col", "row", "row", "f32", "shared", True),
    ("col", "row", "row", "col", "f16", "shared", False),
    ("row", "col", "col", "row", "f32", "symbol", False),
    ("row", "col", "row", "row", "f16", "generic", False),
]]


@pytest.mark.parametrize("shape,la,lb,lc,ld,acc,space,stride_reg", CASES)
def test_wmma_f16_matches_ptxas_and_numpy(shape, la, lb, lc, ld, acc, space, stride_reg):
    stride = 40 if stride_reg else 32
    m, n, k = DIMS[shape]
    rng = np.random.default_rng(sum(map(ord, shape + la + lb + lc + ld + acc + space)))
    halves = rng.integers(-4, 5, size=IN_BYTES // 2).astype(np.float16)
    data = np.frombuffer(halves.tobytes(), dtype=np.uint32).copy()
    if acc == "f32":     # C as small integers in f32
        data[C_OFF // 4:] = np.frombuffer(rng.integers(-8, 9, size=(IN_BYTES - C_OFF) // 4)
                                          .astype(np.float32).tobytes(), dtype=np.uint32)
    ours, theirs = run_ours_and_ptxas(_kernel(la, lb, lc, ld, acc, space, stride_reg, stride, shape), data, stride)
    assert (ours == theirs).all()
    buf = data.tobytes()
    ct = np.float32 if acc == "f32" else np.float16
    a = _matrix(buf, A_OFF, la, np.float16, stride, m, k).astype(np.float64)
    b = _matrix(buf, B_OFF, lb, np.float16, stride, k, n).astype(np.float64)
    c = _matrix(buf, C_OFF, lc, ct, stride, m, n).astype(np.float64)
    d = _matrix(ours.tobytes(), 0, ld, ct, stride, m, n).astype(np.float64)
    assert (d == a @ b + c).all()


def _inputs(itype, rng, low, high):
    """Small integers (exact in every input type) in `itype`'s encoding, as words."""
    values = rng.integers(low, high, size=IN_BYTES // 2).astype(np.float32)
    if itype == "f16":
        return np.frombuffer(values.astype(np.float16).tobytes(), dtype=np.uint32).copy()
    if itype == "bf16":
        return np.frombuffer((values.view(np.uint32) >> 16).astype(np.uint16).tobytes(), dtype=np.uint32).copy()
    return values.view(np.uint32)[:IN_BYTES // 4].copy()


def _decode(words: np.ndarray, itype):
    if itype == "bf16":
        return (words.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return words.view(np.float16 if itype == "f16" else np.float32)


OTHER_CASES = [(shape, itype, *case) for itype, shapes in (("bf16", DIMS), ("tf32", ["m16n16k8"]))
               for shape in shapes for case in [
                   ("row", "col", "row", "row", "global", False),
                   ("col", "row", "col", "col", "shared", True),
                   ("row", "row", "col", "row", "generic", True)]]


@pytest.mark.parametrize("shape,itype,la,lb,lc,ld,space,stride_reg", OTHER_CASES)
def test_wmma_bf16_tf32_match_ptxas_and_numpy(shape, itype, la, lb, lc, ld, space, stride_reg):
    stride = 40 if stride_reg else 32
    m, n, k = ALL_DIMS[shape]
    rng = np.random.default_rng(sum(map(ord, shape + itype + la + lb + lc + ld + space)))
    data = _inputs(itype, rng, -4, 5)
    data[C_OFF // 4:] = rng.integers(-8, 9, size=(IN_BYTES - C_OFF) // 4).astype(np.float32).view(np.uint32)
    ours, theirs = run_ours_and_ptxas(_kernel(la, lb, lc, ld, "f32", space, stride_reg, stride, shape, itype), data, stride)
    assert (ours == theirs).all()
    buf = _decode(data, itype).tobytes()
    widen = 2 if itype == "bf16" else 1      # bf16 decoded to f32: offsets double
    a = _matrix(buf, A_OFF * widen, la, np.float32, stride, m, k).astype(np.float64)
    b = _matrix(buf, B_OFF * widen, lb, np.float32, stride, k, n).astype(np.float64)
    c = _matrix(data.tobytes(), C_OFF, lc, np.float32, stride, m, n).astype(np.float64)
    d = _matrix(ours.tobytes(), 0, ld, np.float32, stride, m, n).astype(np.float64)
    assert (d == a @ b + c).all()


INTEGER_CASES = [(shape, itype, sat, *case) for shape in DIMS for itype, sat in (("s8", ""), ("u8", ".satfinite"))
                 for case in [("row", "col", "row", "row", "global", False),
                              ("col", "row", "col", "col", "shared", True),
                              ("row", "row", "col", "row", "generic", True)]]


@pytest.mark.parametrize("shape,itype,sat,la,lb,lc,ld,space,stride_reg", INTEGER_CASES)
def test_wmma_integer_matches_ptxas_and_numpy(shape, itype, sat, la, lb, lc, ld, space, stride_reg):
    stride = 40 if stride_reg else 32
    m, n, k = DIMS[shape]
    rng = np.random.default_rng(sum(map(ord, shape + itype + la + lb + lc + ld + space)))
    data = rng.integers(0, 2**32, size=IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    data[C_OFF // 4::7] = 0x7FFFFF00 if sat else 0x80000100     # near the limits: saturation/wrap
    ours, theirs = run_ours_and_ptxas(_kernel(la, lb, lc, ld, "s32", space, stride_reg, stride, shape, itype, sat), data, stride)
    assert (ours == theirs).all()
    et = np.int8 if itype == "s8" else np.uint8
    a = _matrix(data.tobytes(), A_OFF, la, et, stride, m, k).astype(np.int64)
    b = _matrix(data.tobytes(), B_OFF, lb, et, stride, k, n).astype(np.int64)
    c = _matrix(data.tobytes(), C_OFF, lc, np.int32, stride, m, n).astype(np.int64)
    d = _matrix(ours.tobytes(), 0, ld, np.int32, stride, m, n).astype(np.int64)
    want = a @ b + c
    want = np.clip(want, -2**31, 2**31 - 1) if sat else (want + 2**31) % 2**32 - 2**31
    assert (d == want).all()


@pytest.mark.parametrize("shape,itype", [(shape, "f16") for shape in DIMS] + [(shape, "bf16") for shape in DIMS]
                         + [("m16n16k8", "tf32")])
def test_wmma_random_floats_bit_identical_to_ptxas(shape, itype):
    rng = np.random.default_rng(3)
    normal = rng.standard_normal(IN_BYTES // 4).astype(np.float32)
    if itype == "f16":
        data = np.frombuffer(rng.standard_normal(IN_BYTES // 2).astype(np.float16).tobytes(), dtype=np.uint32).copy()
    elif itype == "bf16":
        data = rng.integers(0, 2**32, size=IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
        data &= 0x3FFF3FFF          # finite bf16 pairs of both signs' magnitudes below 2
        data |= (rng.integers(0, 2**32, size=IN_BYTES // 4, dtype=np.uint64).astype(np.uint32) & 0x80008000)
    else:
        data = normal.view(np.uint32).copy()
    data[C_OFF // 4:] = normal[C_OFF // 4:].view(np.uint32)
    for acc in ("f32", "f16") if itype == "f16" else ("f32",):
        ours, theirs = run_ours_and_ptxas(_kernel("row", "col", "row", "row", acc, "global", True, 40, shape, itype), data, 40)
        assert (ours == theirs).all()


def test_unsupported_wmma_form_is_refused_at_its_line():
    ptx = _kernel("row", "col", "row", "row", "f32", "global", False).replace(
        "m16n16k16.global.f16 {%r0", "m8n8k32.global.f16 {%r0")
    with pytest.raises(CompileError, match=r"k.ptx, line \d+.*wmma.*not supported yet"):
        codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")


FRAGMENT_FORMS = [(shape, itype, frag, layout, ctype)
                  for itype, shapes in (("f16", DIMS), ("bf16", DIMS), ("tf32", ["m16n16k8"]), ("s8", DIMS), ("u8", DIMS))
                  for shape in shapes for layout in ("row", "col")
                  for frag, ctype in (("a", itype), ("b", itype),
                                      ("c", {"f16": "f16", "s8": "s32", "u8": "s32"}.get(itype, "f32")))]


# sm_75: its integer m8n32k16 accumulators are m8n8k16's (ptx2sass/wmma.py integer_8816;
# they were the transposed sm_8x layout there), and a few others for contrast
SM75_FRAGMENT_FORMS = [("m8n32k16", t, "c", layout, "s32", "sm_75") for t in ("s8", "u8") for layout in ("row", "col")] \
    + [("m8n32k16", "f16", "c", "row", "f32", "sm_75"), ("m32n8k16", "s8", "c", "col", "s32", "sm_75"),
       ("m8n32k16", "s8", "b", "col", "s8", "sm_75")]


@pytest.mark.parametrize("shape,itype,frag,layout,ctype,arch",
                         [f + ("sm_89",) for f in FRAGMENT_FORMS] + SM75_FRAGMENT_FORMS)
def test_wmma_fragment_layout_is_ptxas(shape, itype, frag, layout, ctype, arch):
    """The registers a wmma.load fills hold what ptxas's hold, lane by lane (PTX leaves the
    layout unspecified; programs that inspect fragments see the same values under both)."""
    if frag == "c":
        n = 4 if ctype == "f16" else 8
    else:
        n = INPUT_WORDS[itype](shape)[0 if frag == "a" else 1]
    ty = ctype if frag == "c" else itype
    regs = ",".join(f"%r{i}" for i in range(n))
    stores = "\n".join(f"    st.global.b32 [%rd4+{4 * i}], %r{i};" for i in range(n))
    ptx = f"""
.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 stride)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<40>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r20, %laneid; mul.wide.u32 %rd3, %r20, 64; add.s64 %rd4, %rd2, %rd3;
    wmma.load.{frag}.sync.aligned.{layout}.{shape}.global.{ty} {{{regs}}}, [%rd1], 32;
{stores}
    ret;
}}
"""
    data = np.arange(IN_BYTES // 4, dtype=np.uint32) * np.uint32(0x01030507)
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    outs = []
    for cubin, check in ((ours, True), (oracle.ptxas(ptx, arch).output, False)):
        out = np.zeros(32 * 16, dtype=np.uint32)
        run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.uint32(32)], hazard_check=check)
        outs.append(out)
    assert (outs[0] == outs[1]).all()


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_wmma_tf32_on_hopper_and_blackwell(arch):
    """wmma m16n16k8 tf32: four HMMA.1684.F32.TF32 as ptxas writes on sm_90/100/120 (sm_100
    and sm_120 refused it: the form was thought missing from the blackwell table); random
    floats, bit-identical to ptxas's cubin."""
    rng = np.random.default_rng(11)
    data = rng.standard_normal(IN_BYTES // 4).astype(np.float32).view(np.uint32).copy()
    ptx = _kernel("row", "col", "row", "row", "f32", "global", True, 40, "m16n16k8", "tf32")
    ours, theirs = run_ours_and_ptxas(ptx, data, 40, arch)
    assert (ours == theirs).all()


@pytest.mark.parametrize("shape,itype,acc", [("m16n16k16", "f16", "f32"), ("m32n8k16", "f16", "f16"),
                                             ("m8n32k16", "f16", "f32"), ("m16n16k16", "s8", "s32"),
                                             ("m32n8k16", "u8", "s32"), ("m8n32k16", "s8", "s32")])
def test_wmma_on_sm75(shape, itype, acc):
    """sm_75 has HMMA.1688 and IMMA.8816 only: wmma's m16n8k16 mmas become two of them
    (ptx2sass/mma_forms.py; wmma.mma was refused on sm_75). Random values (f16: bit-identical
    to ptxas's chain of HMMA.1688; s8/u8: exact)."""
    rng = np.random.default_rng(12)
    if itype == "f16":
        data = np.frombuffer(rng.standard_normal(IN_BYTES // 2).astype(np.float16).tobytes(), dtype=np.uint32).copy()
        data[C_OFF // 4:] = rng.standard_normal((IN_BYTES - C_OFF) // 4).astype(np.float32).view(np.uint32)
    else:
        data = rng.integers(0, 2 ** 32, IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    ptx = _kernel("row", "col", "row", "row", acc, "global", True, 40, shape, itype).replace(
        ".target sm_89", ".target sm_75")
    ours, theirs = run_ours_and_ptxas(ptx, data, 40, "sm_75")
    assert (ours == theirs).all()
