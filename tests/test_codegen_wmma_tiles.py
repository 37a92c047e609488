"""wmma on the 8x8 tiles: f64 m8n8k4 (DMMA.884, with wmma's .rn/.rz/.rm/.rp), s4/u4 m8n8k32
(IMMA.8832, .satfinite) and b1 m8n8k128 (BMMA.88128 .xor/.and .popc), sm_80/86/89. Our cubin
and ptxas's run in the emulator on the same inputs and must store the same bits; D must equal
NumPy's A @ B + C (b1: C + popc(A op B)) read from the matrices in memory with the layouts
and stride the kernel names."""

import numpy as np
import pytest

from ptx2sass import codegen
from ptx2sass.errors import CompileError
from test_codegen_wmma import SHARED_COPY_IN, SHARED_COPY_OUT, run_ours_and_ptxas

A_OFF, B_OFF, C_OFF, IN_BYTES = 0, 4096, 8192, 16384


def _kernel(arch, shape, itype, ctype, mma_mods, la, lb, lc, ld, space, stride, stride_reg):
    """Loads A, B, C from `in` (copied to shared first for .shared), multiplies, stores D to
    `out` (through shared for .shared)."""
    s = "%r30" if stride_reg else str(stride)
    reg = "%fd" if ctype == "f64" else "%r"
    sp = {"global": ".global", "shared": ".shared", "generic": ""}[space]
    if space == "shared":
        pa, pb, pc, pd = "[%r40]", "[%r40+4096]", "[%r40+8192]", "[%r41]"
        prologue, epilogue = SHARED_COPY_IN, SHARED_COPY_OUT
    else:
        pa, pb, pc, pd = "[%rd1]", "[%rd1+4096]", "[%rd1+8192]", "[%rd2]"
        prologue = epilogue = ""
    return f"""
.version {"8.7" if arch in ("sm_100", "sm_120") else "7.8"}
.target {arch}
.address_size 64
.shared .align 16 .b8 sm[16384];
.shared .align 16 .b8 sd[8192];
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 stride)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<60>; .reg .f64 %fd<8>; .reg .pred %p<2>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in]; ld.param.u32 %r30, [stride];
    mov.u32 %r44, %tid.x; shl.b32 %r44, %r44, 2;{prologue}
    wmma.load.a.sync.aligned.{la}.{shape}{sp}.{itype} {{{reg}0}}, {pa}, {s};
    wmma.load.b.sync.aligned.{lb}.{shape}{sp}.{itype} {{{reg}1}}, {pb}, {s};
    wmma.load.c.sync.aligned.{lc}.{shape}{sp}.{ctype} {{{reg}2, {reg}3}}, {pc}, {s};
    wmma.mma{mma_mods} {{{reg}4, {reg}5}}, {{{reg}0}}, {{{reg}1}}, {{{reg}2, {reg}3}};
    wmma.store.d.sync.aligned.{ld}.{shape}{sp}.{ctype} {pd}, {{{reg}4, {reg}5}}, {s};{epilogue}
    ret;
}}
"""


def _matrix(flat, layout, stride, rows, cols, offset=0):
    if layout == "row":
        return np.array([[flat[offset + r * stride + c] for c in range(cols)] for r in range(rows)])
    return np.array([[flat[offset + c * stride + r] for c in range(cols)] for r in range(rows)])


F64_CASES = [("sm_89", "row", "col", "row", "row", "global", False, ""),
             ("sm_89", "col", "row", "col", "col", "shared", True, ".rn"),
             ("sm_80", "row", "row", "col", "row", "generic", True, ".rz"),
             ("sm_86", "col", "col", "row", "col", "global", False, ".rm"),
             ("sm_89", "row", "col", "col", "row", "shared", False, ".rp"),
             ("sm_90", "col", "row", "row", "col", "global", True, ".rz"),
             ("sm_90", "row", "col", "col", "row", "shared", False, ""),
             ("sm_120", "col", "row", "row", "col", "global", True, ".rm"),
             ("sm_100", "row", "col", "col", "row", "shared", False, "")]


@pytest.mark.parametrize("arch,la,lb,lc,ld,space,stride_reg,rounding", F64_CASES)
def test_wmma_f64(arch, la, lb, lc, ld, space, stride_reg, rounding):
    stride = 12 if stride_reg else 8
    mods = f".sync.aligned.{la}.{lb}.m8n8k4{rounding}.f64.f64.f64.f64"
    ptx = _kernel(arch, "m8n8k4", "f64", "f64", mods, la, lb, lc, ld, space, stride, stride_reg)
    rng = np.random.default_rng(sum(map(ord, arch + la + lb + lc + ld + space + rounding)))
    mode = {"": "RN", ".rn": "RN", ".rz": "RZ", ".rm": "RM", ".rp": "RP"}[rounding]
    for values in (rng.integers(-50, 51, IN_BYTES // 8).astype(np.float64),
                   rng.standard_normal(IN_BYTES // 8)):
        ours, theirs = run_ours_and_ptxas(ptx, values.view(np.uint32).copy(), stride, arch)
        assert (ours == theirs).all()
        a = _matrix(values, la, stride, 8, 4, A_OFF // 8)
        b = _matrix(values, lb, stride, 4, 8, B_OFF // 8)
        c = _matrix(values, lc, stride, 8, 8, C_OFF // 8)
        d = _matrix(ours.view(np.float64), ld, stride, 8, 8)
        from codegen_harness import dmma_chain
        want = np.array([[dmma_chain(a[i, :], b[:, j], c[i, j], mode) for j in range(8)] for i in range(8)])
        assert (d == want).all()


def _sub_byte(words, bits, signed):
    """The elements of little-endian packed words, low bits first."""
    per = 32 // bits
    e = ((words[:, None] >> (bits * np.arange(per, dtype=np.uint32))) & ((1 << bits) - 1)).astype(np.int64)
    if signed:
        e = np.where(e >= 1 << (bits - 1), e - (1 << bits), e)
    return e.reshape(-1)


INT_CASES = [("sm_89", "s4", "", "row", "row", "global", False),
             ("sm_89", "u4", ".satfinite", "col", "row", "shared", True),
             ("sm_80", "s4", ".satfinite", "row", "col", "generic", True),
             ("sm_86", "u4", "", "col", "col", "global", False),
             ("sm_89", "b1", ".xor", "row", "row", "global", True),
             ("sm_89", "b1", ".and", "col", "col", "shared", False),
             ("sm_80", "b1", ".xor", "row", "col", "generic", False),
             ("sm_86", "b1", ".and", "col", "row", "global", True),
             ("sm_90", "b1", ".and", "row", "col", "shared", True),
             # sm_90: nibbles widened to bytes, xor as two and-popc mmas (mma_forms.py)
             ("sm_90", "s4", ".satfinite", "row", "col", "global", True),
             ("sm_90", "u4", "", "col", "row", "shared", False),
             ("sm_90", "b1", ".xor", "col", "col", "global", False),
             # sm_75: IMMA.8832 and BMMA.88128.XOR (.and is sm_80+)
             ("sm_75", "s4", ".satfinite", "col", "row", "global", True),
             ("sm_75", "u4", "", "row", "row", "shared", False),
             ("sm_75", "b1", ".xor", "row", "col", "global", True),
             # sm_100/120: no BMMA, b1 as bit planes on u8 IMMAs (mma_forms.py)
             ("sm_120", "b1", ".xor", "row", "row", "global", True),
             ("sm_120", "b1", ".and", "col", "col", "shared", False),
             ("sm_100", "b1", ".and", "row", "col", "global", False),
             ("sm_100", "b1", ".xor", "col", "row", "shared", True)]


@pytest.mark.parametrize("arch,itype,extra,lc,ld,space,stride_reg", INT_CASES)
def test_wmma_sub_byte(arch, itype, extra, lc, ld, space, stride_reg):
    """A .row and B .col (the only layouts PTX allows); C/D s32 in either layout. The
    stride is in elements: s4 rows of 32 elements (16 bytes) or 64; b1 rows of 128 or 256."""
    bits = 1 if itype == "b1" else 4
    k = 128 if itype == "b1" else 32
    stride = 2 * k if stride_reg else k
    shape = f"m8n8k{k}"
    if itype == "b1":
        mods = f"{extra}.popc.sync.aligned.row.col.{shape}.s32.b1.b1.s32"
    else:
        mods = f".sync.aligned.row.col.{shape}.s32.{itype}.{itype}.s32{extra}"
    ptx = _kernel(arch, shape, itype, "s32", mods, "row", "col", lc, ld, space, stride, stride_reg)
    rng = np.random.default_rng(sum(map(ord, arch + itype + extra + lc + ld + space)))
    data = rng.integers(0, 2 ** 32, IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    if extra == ".satfinite":    # C near the limits: saturates (or wraps without .satfinite)
        data[C_OFF // 4:] = np.where(rng.random((IN_BYTES - C_OFF) // 4) < 0.5, 0x7FFFFFF0, 0x80000010)
    ours, theirs = run_ours_and_ptxas(ptx, data, stride, arch)
    assert (ours == theirs).all()
    elements = _sub_byte(data[:B_OFF // 4 * 2], bits, itype == "s4")
    per_byte = 8 // bits
    a = _matrix(elements, "row", stride, 8, k, A_OFF * per_byte)
    b = _matrix(elements, "col", stride, k, 8, B_OFF * per_byte)
    c = _matrix(data.view(np.int32).astype(np.int64), lc, stride, 8, 8, C_OFF // 4)
    d = _matrix(ours.view(np.int32).astype(np.int64), ld, stride, 8, 8)
    if itype == "b1":
        both = a @ b
        prod = both if extra == ".and" else a.sum(1)[:, None] + b.sum(0)[None, :] - 2 * both
    else:
        prod = a @ b
    want = prod + c
    want = np.clip(want, -2 ** 31, 2 ** 31 - 1) if extra == ".satfinite" else (want + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert (d == want).all()


@pytest.mark.parametrize("arch,itype,message", [("sm_75", "f64", "requires .target sm_80 or higher")])
def test_wmma_tiles_refused_where_not_generated(arch, itype, message):
    """sm_75 has no f64 wmma (ptxas's words): refused at the line, not miscompiled."""
    ptx = _kernel(arch, "m8n8k4", "f64", "f64", ".sync.aligned.row.col.m8n8k4.f64.f64.f64.f64",
                  "row", "col", "row", "row", "global", 8, False)
    with pytest.raises(CompileError, match=rf"k.ptx, line \d+; error.*{message}"):
        codegen.compile_ptx(ptx, arch, "k.ptx")
