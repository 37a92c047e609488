"""Hopper's warpgroup MMA (`wgmma.mma_async`: HGMMA, IGMMA, QGMMA) in the emulator, checked on
ptxas's own cubins: each kernel copies a shared-memory image built here (A and B placed as the
PTX ISA's "Shared Memory Matrix Layout" and matrix-descriptor sections define: K-major or
MN-major, no swizzle or 32B/64B/128B swizzle) into shared memory, builds the two 64-bit
descriptors, loads the accumulator fragment (and A's fragment where A comes from registers)
from global memory, runs one or two wgmma and stores D's fragment. The reference is NumPy's
A @ B + C, exact here: every input is a small integer or a short fraction, so every product
and partial sum is exact in the accumulator's type.

The fragment layouts below (D across the warpgroup's 128 threads, A from registers) are the
PTX ISA's ("Register Fragments and Shared Memory Matrix Layouts" of wgmma), written here
independently of emu/ops_gmma.py."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

# element type -> (bytes per element, K of one wgmma, PTX type name)
ELEM = {"f16": (2, 16), "bf16": (2, 16), "tf32": (4, 8), "e4m3": (1, 32), "e5m2": (1, 32),
        "s8": (1, 32), "u8": (1, 32)}
SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}          # descriptor bits 62-63
THREADS = 128


# --- shared-memory placement (PTX ISA: core matrices, swizzle atoms, LBO/SBO) -------------

def swizzle(addr: np.ndarray, width: int) -> np.ndarray:
    """The byte address a swizzled layout stores logical address `addr` at: the 16-byte chunk
    index within a `width`-byte row (address bits 4..) XOR the row index within the
    8-row atom (bits 7..), as many bits as the row has chunks (1, 2 or 3)."""
    if width == 0:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[width]
    return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)


def place(mat: np.ndarray, esize: int, sw: int, mn_major: bool, lbo: int, sbo: int):
    """Byte offsets (relative to the descriptor's start address, before swizzling) of the
    elements of `mat` (MN x K: A as it is, B transposed), for the canonical layouts.
    K-major: rows of K; no swizzle: core matrices of 8 rows x 16 bytes, LBO between the two
    core matrices along K, SBO between 8-row groups; swizzled: rows `sw` bytes apart, SBO
    between 8-row groups. MN-major: no swizzle: 16-byte runs along MN, 8 K rows 16 bytes
    apart, SBO between MN runs, LBO between 8-row K groups; swizzled: `sw`-byte rows along
    MN, 8 K rows `sw` bytes apart, LBO between MN row groups, SBO between 8-row K groups."""
    mn, k = np.meshgrid(np.arange(mat.shape[0]), np.arange(mat.shape[1]), indexing="ij")
    t = 16 // esize                                   # elements in 16 bytes
    if not mn_major:
        kb = k * esize
        if sw == 0:
            return (mn // 8) * sbo + (mn % 8) * 16 + (kb // 16) * lbo + kb % 16
        return (mn // 8) * sbo + (mn % 8) * sw + kb
    if sw == 0:
        return (mn % t) * esize + (mn // t) * sbo + (k % 8) * 16 + (k // 8) * lbo
    per_row = sw // esize
    return (mn % per_row) * esize + (mn // per_row) * lbo + (k % 8) * sw + (k // 8) * sbo


def descriptor(start: int, lbo: int, sbo: int, sw: int) -> int:
    return ((start >> 4) & 0x3FFF) | ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 \
        | SWIZZLE_CODE[sw] << 62


def encode(vals: np.ndarray, kind: str) -> np.ndarray:
    """Element bit patterns (uint32) of exactly representable values."""
    if kind == "f16":
        return vals.astype(np.float16).view(np.uint16).astype(np.uint32)
    if kind == "bf16":
        return (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)
    if kind == "tf32":
        return vals.astype(np.float32).view(np.uint32)
    if kind in ("s8", "u8"):
        return (vals.astype(np.int64) & 0xFF).astype(np.uint32)
    return np.array([FP8_CODE[kind][float(v)] for v in vals.ravel()], dtype=np.uint32).reshape(vals.shape)


def _fp8_codes(kind):
    ebits, bias = (4, 7) if kind == "e4m3" else (5, 15)
    mbits = 7 - ebits
    table = {}
    for c in range(256):
        e, m = (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
        if e == (1 << ebits) - 1 and (kind == "e5m2" or m == (1 << mbits) - 1):
            continue
        v = (m / (1 << mbits)) * 2.0 ** (1 - bias) if e == 0 else (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        table.setdefault(-v if c & 0x80 else v, c)
    return table


FP8_CODE = {k: _fp8_codes(k) for k in ("e4m3", "e5m2")}


def write_matrix(img: np.ndarray, base: int, mat: np.ndarray, kind: str, sw: int, mn_major: bool,
                 lbo: int, sbo: int) -> None:
    esize = ELEM[kind][0]
    off = base + place(mat, esize, sw, mn_major, lbo, sbo)
    off = swizzle(off, sw)
    bits = encode(mat, kind)
    for b in range(esize):
        img[off + b] = (bits >> (8 * b)) & 0xFF


# --- register fragments (PTX ISA: wgmma D and A fragments across the warpgroup) -----------

def d_coords(n: int, acc: str):
    """(thread, register, half) -> (row, col) of the accumulator: warp w holds rows
    16w..16w+15; lane l (g = l/4, t = l%4) holds, for each 8-column block j, rows g and g+8
    of columns 8j + 2t, 8j + 2t + 1 (f32/s32: one per register, d[4j..4j+3]; f16: packed
    in pairs, d[2j], d[2j+1])."""
    out = []
    for tid in range(THREADS):
        w, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        for j in range(n // 8):
            for h in range(2):
                for e in range(2):
                    row, col = 16 * w + g + 8 * h, 8 * j + 2 * t + e
                    if acc == "f16":
                        out.append((tid, 2 * j + h, e, row, col))
                    else:
                        out.append((tid, 4 * j + 2 * h + e, 0, row, col))
    return out


def a_coords(kind: str):
    """(thread, register, element) -> (row, col) of A from registers: warp w's rows
    16w..16w+15 in mma.m16n8k*'s A layout (a0: row g, a1: row g+8, a2: row g with the second
    half of K, a3: row g+8 with it; each register holds 4 bytes of consecutive K)."""
    esize, k = ELEM[kind]
    per = 4 // esize
    out = []
    for tid in range(THREADS):
        w, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        for r in range(4):
            for e in range(per):
                out.append((tid, r, e, 16 * w + g + 8 * (r % 2), (r // 2) * (k // 2) + t * per + e))
    return out


# --- the kernel ----------------------------------------------------------------------------

def kernel(n: int, acc: str, ak: str, bk: str, *, a_regs=False, smem=4096, scale_a=1, scale_b=1,
           tnsp_a=0, tnsp_b=0, twice=False, satfinite=False) -> str:
    """One warpgroup: smem <- image; descriptors = templates + (smem address >> 4); C (and A)
    fragments from global; one wgmma (two chained, B's descriptor advanced by the second
    template's offset, with `twice`); wait; D's fragment to global."""
    k = ELEM[ak][1]
    nd = n // 4 if acc == "f16" else n // 2
    dregs = ", ".join(f"%d{i}" for i in range(nd))
    acc_t = "s32" if acc == "s32" else acc
    sat = ".satfinite" if satfinite else ""
    if ak in ("s8", "u8"):
        tail = ""
    elif ak in ("f16", "bf16"):
        tail = f", {scale_a}, {scale_b}" + ("" if a_regs else f", {tnsp_a}") + f", {tnsp_b}"
    else:
        tail = f", {scale_a}, {scale_b}"
    a_op = "{%a0, %a1, %a2, %a3}" if a_regs else "%rd3"
    mma = (f"wgmma.mma_async.sync.aligned.m64n{n}k{k}{sat}.{acc_t}.{ak}.{bk} "
           f"{{{dregs}}}, {a_op}, %rd5, %p1{tail};")
    second = (f"wgmma.mma_async.sync.aligned.m64n{n}k{k}{sat}.{acc_t}.{ak}.{bk} "
              f"{{{dregs}}}, {a_op}, %rd9, 1{tail};") if twice else ""
    loads = "\n".join(f"ld.global.b32 %d{i}, [%rd6+{4 * i}];" for i in range(nd))
    stores = "\n".join(f"st.global.b32 [%rd8+{4 * i}], %d{i};" for i in range(nd))
    aload = "\n".join(f"ld.global.b32 %a{i}, [%rd10+{4 * i}];" for i in range(4)) if a_regs else ""
    return f""".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pimg, .param .u64 pc, .param .u64 pd, .param .u64 da, .param .u64 db,
                  .param .u32 scd, .param .u64 pa, .param .u64 db2)
{{
.reg .b32 %r<8>, %d<{max(nd, 1)}>, %a<4>;
.reg .b64 %rd<12>;
.reg .pred %p<2>;
.shared .align 1024 .b8 smem[{smem}];
mov.u32 %r0, %tid.x;
ld.param.u64 %rd0, [pimg];
cvta.to.global.u64 %rd0, %rd0;
mov.u32 %r1, smem;
shl.b32 %r2, %r0, 2;
LOOP:
setp.ge.u32 %p0, %r2, {smem};
@%p0 bra DONE;
cvt.u64.u32 %rd1, %r2;
add.u64 %rd2, %rd0, %rd1;
ld.global.u32 %r3, [%rd2];
add.u32 %r4, %r1, %r2;
st.shared.u32 [%r4], %r3;
add.u32 %r2, %r2, {4 * THREADS};
bra LOOP;
DONE:
bar.sync 0;
fence.proxy.async.shared::cta;
shr.u32 %r5, %r1, 4;
cvt.u64.u32 %rd4, %r5;
ld.param.u64 %rd3, [da];
add.u64 %rd3, %rd3, %rd4;
ld.param.u64 %rd5, [db];
add.u64 %rd5, %rd5, %rd4;
ld.param.u64 %rd9, [db2];
add.u64 %rd9, %rd9, %rd4;
ld.param.u64 %rd6, [pc];
cvta.to.global.u64 %rd6, %rd6;
mul.wide.u32 %rd7, %r0, {4 * nd};
add.u64 %rd6, %rd6, %rd7;
ld.param.u64 %rd10, [pa];
cvta.to.global.u64 %rd10, %rd10;
mul.wide.u32 %rd11, %r0, 16;
add.u64 %rd10, %rd10, %rd11;
{loads}
{aload}
ld.param.u32 %r6, [scd];
setp.ne.u32 %p1, %r6, 0;
wgmma.fence.sync.aligned;
{mma}
{second}
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
ld.param.u64 %rd8, [pd];
cvta.to.global.u64 %rd8, %rd8;
add.u64 %rd8, %rd8, %rd7;
{stores}
ret;
}}
"""


# --- a case: matrices, image, launch --------------------------------------------------------

RNG = np.random.default_rng(20261128)


def values(shape, kind, rng):
    """Small exactly representable inputs: every product and sum below is exact."""
    if kind in ("s8",):
        return rng.integers(-8, 8, shape).astype(np.float64)
    if kind == "u8":
        return rng.integers(0, 16, shape).astype(np.float64)
    if kind in ("e4m3", "e5m2"):
        return rng.choice([-2.0, -1.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0], shape)
    return rng.integers(-4, 5, shape).astype(np.float64)


def layout_strides(mn: int, esize: int, sw: int, mn_major: bool, k: int):
    """(LBO, SBO, bytes) of a compact canonical layout of an MN x K operand."""
    if not mn_major:
        if sw == 0:
            return 128 * (mn // 8), 128, 256 * (mn // 8)      # K core matrices after all MN
        return 1, 8 * sw, (mn // 8) * 8 * sw
    if sw == 0:
        t = 16 // esize
        return 128 * (mn // t), 128, 256 * (mn // t)          # LBO: K groups, SBO: MN runs
    per = sw // esize
    groups = -(-mn // per)
    return 8 * sw * 2, 8 * sw, groups * 8 * sw * 2            # LBO: MN groups, SBO: K groups


def run_case(n=8, acc="f32", ak="f16", bk="f16", *, a_regs=False, sw_a=0, sw_b=0, tnsp_a=0,
             tnsp_b=0, scale_d=1, scale_a=1, scale_b=1, kofs=0, twice=False, satfinite=False,
             hazard_check=True, ours=False):
    """Run the case in the emulator on ptxas's cubin (ours=True: ptx2sass's); (D from the
    emulator, NumPy's D, the run)."""
    esa, k = ELEM[ak][0], ELEM[ak][1]
    esb = ELEM[bk][0]
    A = values((64, k), ak, RNG)
    B = values((k, n), bk, RNG)
    B2 = values((k, n), bk, RNG)
    C = values((64, n), "f16", RNG) if acc != "s32" else RNG.integers(-1000, 1000, (64, n)).astype(np.float64)
    if satfinite:        # C within 200 of s32's limits: A·B (|.| up to 2048) overflows in places
        low = RNG.random((64, n)) < 0.5
        C = np.where(low, -(2.0 ** 31) + np.abs(C) % 200, 2.0 ** 31 - 1 - np.abs(C) % 200)
    lbo_a, sbo_a, size_a = layout_strides(64, esa, sw_a, bool(tnsp_a), k)
    lbo_b, sbo_b, size_b = layout_strides(n, esb, sw_b, bool(tnsp_b), k)
    base_b = -(-(size_a + kofs) // 1024) * 1024
    base_b2 = base_b + -(-(size_b + kofs) // 1024) * 1024
    smem = base_b2 + -(-(size_b + kofs) // 1024) * 1024
    img = np.zeros(smem, dtype=np.uint8)
    # kofs: the start address advanced along K inside a swizzled row (descriptor start + kofs)
    write_matrix(img, kofs, A, ak, sw_a, bool(tnsp_a), lbo_a, sbo_a)
    write_matrix(img, base_b + kofs, B.T, bk, sw_b, bool(tnsp_b), lbo_b, sbo_b)
    write_matrix(img, base_b2 + kofs, B2.T, bk, sw_b, bool(tnsp_b), lbo_b, sbo_b)
    da = descriptor(kofs, lbo_a, sbo_a, sw_a)
    db = descriptor(base_b + kofs, lbo_b, sbo_b, sw_b)
    db2 = descriptor(base_b2 + kofs, lbo_b, sbo_b, sw_b)
    nd = n // 4 if acc == "f16" else n // 2
    cfrag = np.zeros((THREADS, nd), dtype=np.uint32)
    for tid, r, e, row, col in d_coords(n, acc):
        if acc == "f16":
            cfrag[tid, r] |= int(np.float16(C[row, col]).view(np.uint16)) << (16 * e)
        elif acc == "f32":
            cfrag[tid, r] = np.float32(C[row, col]).view(np.uint32)
        else:
            cfrag[tid, r] = np.int64(C[row, col]).astype(np.int32).view(np.uint32)
    afrag = np.zeros((THREADS, 4), dtype=np.uint32)
    if a_regs:
        abits = encode(A, ak)
        for tid, r, e, row, col in a_coords(ak):
            afrag[tid, r] |= int(abits[row, col]) << (8 * esa * e)
    ptx = kernel(n, acc, ak, bk, a_regs=a_regs, smem=smem, scale_a=scale_a, scale_b=scale_b,
                 tnsp_a=tnsp_a, tnsp_b=tnsp_b, twice=twice, satfinite=satfinite)
    if ours:
        import ptx2sass
        cubin = ptx2sass.compile(ptx, "sm_90a")
    else:
        res = oracle.ptxas(ptx, "sm_90a")
        assert res.ok, res
        cubin = res.output
    out = np.zeros((THREADS, nd), dtype=np.uint32)
    img32 = img.view(np.uint32).copy()
    result = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1),
                 [img32, cfrag, out, np.uint64(da), np.uint64(db), np.uint32(scale_d), afrag,
                  np.uint64(db2)], hazard_check=hazard_check)
    want = scale_a * scale_b * (A @ B) + (C if scale_d else 0)
    if twice:
        want = want + scale_a * scale_b * (A @ B2)
    if acc == "s32" and satfinite:
        want = np.clip(want, -(1 << 31), (1 << 31) - 1)
    got = np.zeros((64, n))
    for tid, r, e, row, col in d_coords(n, acc):
        word = int(out[tid, r])
        if acc == "f16":
            got[row, col] = float(np.uint16((word >> (16 * e)) & 0xFFFF).view(np.float16))
        elif acc == "f32":
            got[row, col] = float(np.uint32(word).view(np.float32))
        else:
            got[row, col] = float(np.uint32(word).view(np.int32))
    return got, want, result


# --- the tests ---------------------------------------------------------------------------

def check(**case):
    got, want, result = run_case(**case)
    assert result.hazards == [], result.hazards
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("sw_a,sw_b,kofs", [(0, 0, 0), (128, 128, 0), (64, 64, 0), (32, 32, 0),
                                            (128, 64, 32), (128, 128, 64), (64, 32, 32), (0, 128, 0)])
def test_k_major_layouts_f16_f32(sw_a, sw_b, kofs):
    """K-major A and B, each swizzle mode; kofs: the start address advanced along K inside
    the swizzled row, as a kernel steps K with one atom."""
    check(n=16, sw_a=sw_a, sw_b=sw_b, kofs=kofs)


@pytest.mark.parametrize("sw", [0, 128, 64, 32])
def test_mn_major_layouts(sw):
    """tnspA/tnspB: MN-major A and B (16-bit types only)."""
    check(n=16, ak="bf16", bk="bf16", sw_a=sw, sw_b=sw, tnsp_a=1, tnsp_b=1)


@pytest.mark.parametrize("acc,ak,bk,n", [
    ("f32", "bf16", "bf16", 32), ("f16", "f16", "f16", 32), ("f32", "tf32", "tf32", 16),
    ("f32", "e4m3", "e5m2", 16), ("f16", "e5m2", "e4m3", 16), ("f32", "e4m3", "e4m3", 8),
    ("s32", "s8", "s8", 16), ("s32", "u8", "s8", 8), ("s32", "s8", "u8", 8), ("s32", "u8", "u8", 8),
    ("f32", "f16", "f16", 256)])
def test_types_and_widths(acc, ak, bk, n):
    check(n=n, acc=acc, ak=ak, bk=bk, sw_a=128, sw_b=64)


@pytest.mark.parametrize("acc,ak,bk", [("f32", "f16", "f16"), ("f16", "f16", "f16"), ("f32", "bf16", "bf16"),
                                       ("f32", "tf32", "tf32"), ("f32", "e5m2", "e4m3"),
                                       ("s32", "s8", "u8")])
def test_a_from_registers(acc, ak, bk):
    check(n=32, acc=acc, ak=ak, bk=bk, a_regs=True, sw_b=128)


def test_a_from_registers_b_transposed():
    check(n=16, a_regs=True, sw_b=64, tnsp_b=1)


@pytest.mark.parametrize("ak", ["f16", "tf32", "e4m3"])
def test_scale_d_zero_and_negated_operands(ak):
    """scale-d false ignores C; imm-scale-a/b = -1 (negA/negB) negate A and B."""
    check(n=8, ak=ak, bk=ak, scale_d=0, scale_a=-1, scale_b=1)
    check(n=8, ak=ak, bk=ak, scale_a=-1, scale_b=-1, sw_a=32, sw_b=32)


def test_integer_saturation():
    """.satfinite (IGMMA .SAT) clamps to s32; C near the limit so the sum overflows."""
    got, want, _ = run_case(n=8, acc="s32", ak="s8", bk="s8", satfinite=True)
    np.testing.assert_array_equal(got, want)
    assert ((want == 2 ** 31 - 1) | (want == -(2 ** 31))).sum() > 10     # it did saturate


def test_chained_accumulation_in_one_group():
    """Two wgmma into the same accumulators before one wait: the second reads the first's
    in-flight result (ptxas changes B's descriptor register between them: read at issue)."""
    check(n=8, twice=True, sw_a=128, sw_b=128)
    check(n=8, acc="f16", twice=True)


@pytest.mark.parametrize("case", [
    dict(n=16, sw_a=128, sw_b=64, kofs=32), dict(n=16, ak="bf16", bk="bf16", sw_a=64, sw_b=64, tnsp_a=1, tnsp_b=1),
    dict(n=32, acc="f16"), dict(n=16, ak="tf32", bk="tf32", sw_a=128, sw_b=128),
    dict(n=16, ak="e4m3", bk="e5m2", sw_a=128, sw_b=64), dict(n=8, acc="s32", ak="s8", bk="u8"),
    dict(n=256, sw_a=128, sw_b=64), dict(n=32, a_regs=True, sw_b=128),
    dict(n=8, ak="f16", bk="f16", scale_d=0, scale_a=-1, scale_b=1), dict(n=8, twice=True, sw_a=128, sw_b=128),
    dict(n=8, acc="s32", ak="s8", bk="s8", satfinite=True)], ids=str)
def test_our_cubins_give_numpys_d(case):
    """The same kernels compiled by ptx2sass (branch wgmma20's HGMMA/QGMMA/IGMMA code):
    NumPy's D, hazard-free, in the emulator that runs ptxas's cubins above."""
    got, want, result = run_case(**case, ours=True)
    assert result.hazards == [], result.hazards
    np.testing.assert_array_equal(got, want)


def test_checker_flags_accumulator_read_before_wait():
    """Reading D before wgmma.wait_group is undefined (PTX ISA, wgmma.wait_group); ptxas
    injects a WARPGROUP.DEPBAR for such a read (its info C7517). Its cubin with that first
    DEPBAR made a NOP: the checker flags the STG of R24 as a read of an in-flight
    accumulator; ptxas's own cubin gives no finding."""
    ptx = kernel(8, "f32", "f16", "f16")
    early = ("ld.param.u64 %rd8, [pd];\ncvta.to.global.u64 %rd8, %rd8;\nadd.u64 %rd8, %rd8, %rd7;\n"
             "st.global.b32 [%rd8+64], %d0;\n")
    ptx = ptx.replace("wgmma.commit_group.sync.aligned;\n", "wgmma.commit_group.sync.aligned;\n" + early)
    res = oracle.ptxas(ptx, "sm_90a")
    assert res.ok, res
    depbar = (0x00008000000079c5).to_bytes(8, "little")      # WARPGROUP.DEPBAR.LE gsb0, 0x0
    at = res.output.find(depbar)
    assert at > 0 and res.output.count(depbar) == 2
    hi = int.from_bytes(res.output[at + 8:at + 16], "little")
    nop = (0x7918).to_bytes(8, "little") + (hi & (0x1FFFFF << 41)).to_bytes(8, "little")
    patched = res.output[:at] + nop + res.output[at + 16:]
    args = lambda: [np.zeros(4096 // 4, np.uint32), np.zeros((THREADS, 4), np.uint32),  # noqa: E731
                    np.zeros((THREADS, 20), np.uint32), np.uint64(descriptor(0, 128, 256, 0)),
                    np.uint64(descriptor(2048, 128, 256, 0)), np.uint32(1), np.zeros((THREADS, 4), np.uint32),
                    np.uint64(0)]
    clean = run(res.output, "k", (1, 1, 1), (THREADS, 1, 1), args())
    assert clean.hazards == []
    early_read = run(patched, "k", (1, 1, 1), (THREADS, 1, 1), args())
    messages = [h.message for h in early_read.hazards]
    assert any("R24" in m and "in flight" in m for m in messages), messages
