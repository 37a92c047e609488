"""Tensor-core matrix multiply-accumulate (HMMA, IMMA, QMMA, DMMA, BMMA) with the fragment layouts of PTX's
`mma.sync` (PTX ISA, "Matrix fragments for mma.m16n8k*"): with g = lane / 4 and t = lane % 4,
A rows are g and g+8, B columns are g, C/D rows g and g+8 with columns 2t, 2t+1.

HMMA with FP32 accumulators and f16, bf16 or tf32 operands is the H200's inner product (`_hmma_f32`):
each product exact, aligned to the largest exponent among the products (counted as the sum
of the two operands' exponents, so a product's significand lies in [1, 4)) and C, truncated
toward zero to multiples of 2^(emax - 25), summed exactly, and the sum truncated to FP32;
an overflow is infinite (tf32: GPU run 24's fuzz 9400200, whose 30-ulp and subnormal
differences from the exactly rounded sum this model gives). Other floating-point products
(F16 accumulators: rounded to nearest, see F16_ACCUMULATION) are exact in FP64 and summed
there, then rounded once.

QMMA (sm_89's fp8 `mma.sync`, E4M3/E5M2 operands, F32 or F16 accumulators) is modelled as
the exact A·B + C rounded once to nearest even: each fp8 product is exact in FP64 (at most
4 x 4 significant bits), the products are summed in FP64 in a fixed order (exact whenever
their magnitudes span at most 53 bits: always for E4M3 x E4M3, whose products are multiples
of 2^-18 below 2^18; E5M2 products range over 2^-32 .. 2^32), C is added rounded to odd
and the sum narrowed once to F32 or F16. NaN codes (E4M3 0x7f/0xff, E5M2 exponent 31 with
a mantissa) and Inf - Inf give the canonical NaN; E5M2 infinities stay infinite. Published
measurements of FP8 tensor cores (H100, RTX 40xx) report products aligned to the largest
exponent and truncated to about 13 fraction bits before accumulation, so the hardware can
differ from this model below about 2^-13 relative to the largest term; that was not
calibrated here (no sm_89 device), as for HMMA.

DMMA.884 (`mma.m8n8k4.f64`): A row g column t, B row t column g, C/D row g columns 2t and
2t+1, each element a register pair; D = C + A·B as four fused multiply-adds in k order, each
rounded (to nearest even, or .RZ/.RM/.RP as wmma's `.rz/.rm/.rp` ask), as an H200 does. BMMA.88128
(`mma.m8n8k128.b1`): the b1 fragments of IMMA.8832's layout with 32 bits per register;
D = C + popc(A_row XOR B_col) (.XOR.POPC) or popc(A_row AND B_col) (.AND.POPC), wrapping
at 32 bits."""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ptx2sass.encoder.model import Reg

from . import fp, narrow_float
from .errors import EmuFault
from .lanes import EXITED, PerWarp
from .registry import semantics

U32 = np.uint32
LANES = 32
LANE = np.arange(LANES)
G, T = LANE // 4, LANE % 4


def _regs(w, op, n):
    """`n` consecutive registers from `op` (RZ: zeros), a row of the warp's 32 lanes each."""
    out = np.zeros((n, 32), dtype=U32)
    if not op.is_zero:
        for i in range(n):
            out[i] = w.r(Reg("R", op.index + i))
    return out


def _whole_warps(w) -> int:
    """How many warps `w` is: 1 for a warp; for a group of the machine, its warps when it
    holds every lane of each (a fragment spans its warp's 32 lanes), else PerWarp."""
    if w.per_warp:
        return 1
    nw = len(w.warps)
    if w.width != LANES * nw:
        raise PerWarp()
    return nw


def _warp_regs(w, op, n, nw):
    """`_regs` of each of the `nw` whole warps of `w`: (warp, register, lane). The `n` rows
    are read as one block where they are general registers below RZ (recording the reads
    `w.r` would, in its order); otherwise register by register through `w.r`."""
    if op.is_zero:
        return np.zeros((nw, n, 32), dtype=U32)
    m = w.m
    first = op.index
    if first + n <= 255:
        if m.tracing:
            m.reads += [("R", first + i) for i in range(n)]
        rows = m.R[first:first + n]
        out = rows[:, w.sl] if w.sl is not None else rows[:, w.idx]
        return out.reshape(n, nw, 32).transpose(1, 0, 2).copy()
    out = np.zeros((n, nw * 32), dtype=U32)
    for i in range(n):
        out[i] = w.r(Reg("R", first + i))
    return out.reshape(n, nw, 32).transpose(1, 0, 2)


def _a_coords(m, k, elem_bits):
    """(reg, position-in-reg) → (row, col) per lane for the A fragment, as index arrays."""
    per_reg = 32 // elem_bits
    coords = []
    nregs = m * k // (32 * per_reg)
    for r in range(nregs):
        for e in range(per_reg):
            row = G + 8 * (r % 2) if m == 16 else G
            kblock = r // 2 if m == 16 else r
            col = kblock * (per_reg * 4) + T * per_reg + e
            coords.append((r, e, row, col))
    return nregs, per_reg, coords


def _b_coords(k, elem_bits):
    per_reg = 32 // elem_bits
    nregs = k // (4 * per_reg)
    coords = []
    for r in range(nregs):
        for e in range(per_reg):
            coords.append((r, e, r * (per_reg * 4) + T * per_reg + e, G))
    return nregs, per_reg, coords


def _unpack(word, e, elem_bits, kind):
    bits = (word >> U32(e * elem_bits)) & U32((1 << elem_bits) - 1) if elem_bits < 32 else word
    if kind == "f16":
        return fp.half_to_f64(bits.astype(np.uint16), "f16")
    if kind == "bf16":
        return fp.half_to_f64(bits.astype(np.uint16), "bf16")
    if kind == "tf32":
        # TF32 operands are FP32 registers of which the tensor core uses the sign, exponent
        # and top 10 mantissa bits (PTX ISA, "Alternate floating-point data formats").
        return (bits & U32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if kind == "s8":
        return bits.astype(np.int64) - ((bits.astype(np.int64) & 0x80) << 1)
    if kind == "u8":
        return bits.astype(np.int64)
    if kind == "s4":
        return bits.astype(np.int64) - ((bits.astype(np.int64) & 0x8) << 1)
    if kind in ("u4", "b1"):
        return bits.astype(np.int64)
    if kind in _FP8:
        return _FP8[kind][bits.astype(np.intp)]
    raise EmuFault(f"unsupported MMA element type {kind}")


# fp8 code -> value (OCP FP8: E4M3 bias 7, no infinities; E5M2 bias 15, IEEE-like).
_FP8 = {kind: np.array([fp.fp8_decode(c, kind) for c in range(256)], dtype=np.float64)
        for kind in ("e4m3", "e5m2")}
# kind::f8f6f4's fp6/fp4 elements, one a byte (PTX ISA, mma: e2m1 in the central four bits,
# bits 2-5; e2m3/e3m2 in the low six bits; the rest padding), values as OCP MX defines them
# (emu/narrow_float.py, cvt's decoder). The padding bits are ignored: what the tensor core does
# with non-zero padding was not measured (no sm_120 device).
_FP8.update({"e2m1": np.array([narrow_float.decode(c >> 2 & 0xF, "E2M1") for c in range(256)]),
             "e2m3": np.array([narrow_float.decode(c & 0x3F, "E2M3") for c in range(256)]),
             "e3m2": np.array([narrow_float.decode(c & 0x3F, "E3M2") for c in range(256)])})


def _shape(mods):
    for m in mods:
        if m.isdigit() and len(m) >= 3:
            if m.startswith("16816"):
                return 16, 8, 16
            if m == "1684":
                return 16, 8, 4
            if m.startswith("1688"):
                return 16, 8, 8
            if m.startswith("16832"):
                return 16, 8, 32
            if m.startswith("8816"):
                return 8, 8, 16
            if m.startswith("16864"):
                return 16, 8, 64
            if m.startswith("8832"):
                return 8, 8, 32
            if m.startswith("88128"):
                return 8, 8, 128
            if m == "168128":
                return 16, 8, 128
            if m == "168256":
                return 16, 8, 256
    raise EmuFault(f"unsupported MMA shape in {'.'.join(mods)}")


def _fp8_dot(A, B, C):
    """A·B + C for fp8 A and B, as FP64 rounded to odd (so one narrowing rounds correctly).

    Every fp8 product is a multiple of 2^-32 below 2^32 with at most 6 significant bits: the
    products below 2^16 sum exactly in FP64 (multiples of 2^-32 below 2^21), and so do those
    above (multiples of 2^11 below 2^37). Where those two sums do not add exactly, the few
    elements go through exact rational arithmetic."""
    with np.errstate(invalid="ignore", over="ignore"):
        p = A[:, :, None] * B[None, :, :]
        big = np.abs(p) >= 2.0 ** 16
        hi = np.where(big, p, 0.0).sum(axis=1)
        lo = np.where(big, 0.0, p).sum(axis=1)
        s = hi + lo
        bb = s - hi
        err = (hi - (s - bb)) + (lo - bb)
        D = fp.add_rto(s, C)
    inexact = np.isfinite(err) & (err != 0) & np.isfinite(C)     # a NaN or infinite C decides D
    for i, j in zip(*np.nonzero(inexact)):
        exact = Fraction(hi[i, j]) + Fraction(lo[i, j]) + Fraction(C[i, j])
        D[i, j] = fp.round_rational(exact, "f64", "RN") if exact == 0 else _odd(exact)
    return D


# The operand types `_hmma_f32` models, with their smallest normal exponent: a subnormal's
# exponent as the tensor core aligns it (significand below 1). TF32 has FP32's exponent range.
_MIN_EXP = {"f16": -14, "bf16": -126, "tf32": -126}
_NO_EXP = -(1 << 20)


def _exponent(x: np.ndarray, min_exp: int) -> np.ndarray:
    """floor(log2 |x|), at least `min_exp`; _NO_EXP for zeros."""
    e = np.frexp(x)[1].astype(np.int64) - 1
    return np.where(x != 0, np.maximum(e, min_exp), _NO_EXP)


def _each(f, A, B, C):
    """`f(A, B, C)` of matrices, or of each warp's where they have a leading warp axis (one
    call per warp: FP64 matrix products keep the summation order of one)."""
    if A.ndim == 2:
        return f(A, B, C)
    return np.stack([f(a, b, c) for a, b, c in zip(A, B, C)])


def _hmma_f32(A, B, C, min_exp):
    """C + A·B (matrices, or one per warp along a leading axis) as an H200's HMMA with FP32 accumulators computes it (fitted on run 14's fuzz
    9301524, docs/gpu/2026-11-27-h200-sm90.md: 29 of 29 finite outputs of two chained
    HMMA.16816.F32 and an FADD, 14 of them 1-2 ulp below the exactly rounded sum, which the
    emulator gave before; bf16: run 11's 9300879, 28 of 28 located outputs and its overflows
    to infinity): every product is exact; the terms (products and C) are aligned to
    emax, the largest of C's exponent and the products' exponents taken as the sum of the two
    operands' exponents (a product's significand lies in [1, 4)); each term is truncated
    toward zero to a multiple of 2^(emax - 25); the terms are summed exactly and the sum is
    truncated to FP32. With products below 2^(emax + 2) the truncated terms are integers
    below 2^27 in units of 2^(emax - 25), so FP64 sums them exactly. NaN or infinite
    operands and an exactly zero sum (its sign), which the fits say nothing about, keep IEEE
    arithmetic (A·B + C in FP64), as does an overflow (infinite, as on the H200)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        P = A[..., :, :, None] * B[..., None, :, :]                # (m, k, n), exact
        ep = _exponent(A, min_exp)[..., :, :, None] + _exponent(B, min_exp)[..., None, :, :]
        ep = np.where(P != 0, ep, _NO_EXP)
        emax = np.maximum(ep.max(axis=-2), _exponent(C, -126))
        q = np.ldexp(1.0, np.maximum(emax, -1000) - 25)
        s = (np.trunc(P / q[..., :, None, :]) * q[..., :, None, :]).sum(axis=-2) + np.trunc(C / q) * q
        rounded = s.astype(np.float32)
        above = np.abs(rounded.astype(np.float64)) > np.abs(s)
        near = np.where(above, np.nextafter(rounded, np.float32(0)), rounded)    # toward zero
        # a nonzero sum below FP32's least subnormal truncates to +0 whatever its sign (GPU
        # run 27, fuzz 9500703: HMMA.16816.F32.BF16 of products summing to -2.1e-52, C = +0)
        near = np.where(near == 0, np.float32(0), near)
    finite = np.isfinite(A).all(axis=-1)[..., :, None] & np.isfinite(B).all(axis=-2)[..., None, :] & np.isfinite(C)
    # an overflow is infinite, as an H200 gives it (run 11's 9300879: bf16 sums past FP32's range)
    keep = finite & (s != 0) & np.isfinite(rounded)
    if keep.all():
        return near.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ieee = _each(lambda a, b, c: a @ b + c, A, B, C)
    return np.where(keep, near.astype(np.float64), ieee)


# How HMMA with F16 operands and accumulators sums: "exact" (A·B + C in FP64, rounded once
# to F16), "trunc_rn" (`_hmma_f32`'s truncated sum, then rounded to nearest F16) or
# "trunc_rz" (the same narrowed toward zero). Recorded H200 bytes of the 7 fuzz launches
# with HMMA.16816.F16 that differ from the emulator (runs 5, 10, 14; both cubins): exact and
# trunc_rn leave the same 2985 words, trunc_rz 3521 (`tools/gpu_bytes_rerun
# --f16-accumulation`): rounded to nearest, the truncation before it not visible in them
F16_ACCUMULATION = "exact"


def _hmma_f16(A, B, C):
    D = _hmma_f32(A, B, C, _MIN_EXP["f16"])
    if F16_ACCUMULATION == "trunc_rn":
        return D
    bits = fp.f64_to_half_bits(D.ravel(), "f16", "RZ").reshape(D.shape)
    return np.where(np.isfinite(D), fp.half_to_f64(bits.astype(np.uint16), "f16"), D)


def _odd(x: Fraction) -> float:
    """x rounded to odd in FP64 (x is within FP64's normal range here)."""
    r = fp.round_rational(x, "f64", "RZ")
    if Fraction(r) != x and not int(np.float64(r).view(np.uint64)) & 1:
        r = float(np.nextafter(r, math.copysign(math.inf, x)))
    return r


@lru_cache(maxsize=None)
def _fragment(coords_of, *args):
    """A fragment layout as flat index arrays over (coordinate, lane): register, bit shift,
    lane, row, column (the fragments place every matrix element exactly once)."""
    nregs, per_reg, coords = coords_of(*args)
    bits = 32 // per_reg
    reg = np.repeat([c[0] for c in coords], 32)
    shift = np.repeat([c[1] * bits for c in coords], 32).astype(U32)
    lane = np.tile(LANE, len(coords))
    row = np.concatenate([np.broadcast_to(c[2], (32,)) for c in coords])
    col = np.concatenate([np.broadcast_to(c[3], (32,)) for c in coords])
    return nregs, reg, shift, lane, row, col


def _fill(matrix, w, op, layout, bits, kind):
    """Scatter each warp's fragment elements (unpacked) into its `matrix` (warp, row, col)."""
    nregs, reg, shift, lane, row, col = layout
    words = _warp_regs(w, op, nregs, len(matrix))[:, reg, lane]
    if bits < 32:
        words = (words >> shift) & U32((1 << bits) - 1)
    matrix[:, row, col] = _unpack(words, 0, 32, kind)


# the metadata's unit where it is not the element: tf32's 1:2 sparsity is written as 2:4 over
# 16-bit halves (indices 0,1 or 2,3 of a chunk of two elements), s4/u4's pair-wise 4:8 as 2:4
# over bytes of two elements (PTX ISA, sparse matrix storage); the registers and metadata are
# then those of the 16-bit / 8-bit form with as many A registers
_SPARSE_UNIT = {32: 16, 4: 8}


def _fill_sparse(matrix, w, s, op, bits, kind):
    """A of a 2:4 sparse mma (HMMA.SP/IMMA.SP/QMMA.SP, and sm_120a's QMMA.SP.16864 whose
    fp8/fp6/fp4 elements sit one a byte as s8's do): the registers hold the compressed m x k/2
    matrix in the dense fragment layout of that shape, two non-zero units of each chunk of
    four (compressed columns 2c, 2c+1 come from chunk c of the row; a unit is an element, or
    `_SPARSE_UNIT`'s half of a tf32 / byte of two s4/u4). Each unit's position in its chunk is
    a 2-bit index of the metadata register (the operand after C): the indices are ordered
    register by register, within a register thread by thread of the quad, then unit by unit,
    16 to a metadata thread; the quad's metadata threads are sparsity selector `sel`'s:
    thread sel (16 indices a quad), threads 2 sel, 2 sel + 1 (32), all four (64). (PTX ISA,
    sparse mma metadata; the CUTLASS comments on sparse HMMA metadata spell out the same
    order.) Returns the stored elements as an m x k/2 matrix and the column of A each one
    is at: the unit multiplies those alone (`_mma`)."""
    m, k = matrix.shape
    unit = _SPARSE_UNIT.get(bits, bits)
    ku = k * bits // unit                # a dense row's units
    meta_op, sel_op = s.ins.operands[4], s.ins.operands[5]
    meta = _regs(w, meta_op, 1)[0].astype(np.uint32)
    sel = sel_op.value if hasattr(sel_op, "value") else 0
    nregs, reg, shift, lane, row, ccol = _fragment(_a_coords, m, ku // 2, unit)
    per_reg = 32 // unit
    n_per_reg = 4 * per_reg              # stream positions of one register of the quad
    first = sel * (nregs * n_per_reg // 16)     # the quad's first metadata thread
    t = lane % 4
    e = (shift // unit).astype(np.int64)
    pos = reg * n_per_reg + t * per_reg + e
    if first + nregs * n_per_reg // 16 > 4:
        raise EmuFault(f"{s.ins.mnemonic}: sparsity selector {sel} names metadata threads outside "
                       "the quad (undefined in PTX)")
    source = (lane - t) + first + pos // 16
    index = (meta[source] >> (2 * (pos % 16)).astype(U32)) & U32(3)
    words = np.stack(_regs(w, op, nregs))[reg, lane]
    if unit < 32:
        words = (words >> shift) & U32((1 << unit) - 1)
    col = 4 * (ccol // 2) + index.astype(np.int64)
    packed = np.zeros((m, k // 2))                # the stored elements, and their columns of A
    where = np.zeros((m, k // 2), np.int64)
    if unit == bits:
        value = _unpack(words, 0, 32, kind)
        np.add.at(matrix, (row, col), value)
        packed[row, ccol], where[row, ccol] = value, col
        return packed, where
    # metadata PTX leaves undefined (one position named twice, a tf32 chunk other than
    # 0b0100/0b1110) is given the element path's convention: what lands on one element adds
    if bits == 32:                       # tf32: both halves, at the element its low half names
        low = e % 2 == 0
        value = _unpack(words[low] | (words[~low] << U32(16)), 0, 32, kind)
        np.add.at(matrix, (row[low], col[low] // 2), value)
        packed[row[low], ccol[low] // 2], where[row[low], ccol[low] // 2] = value, col[low] // 2
        return packed, where
    for half in range(2):                # 4-bit: two elements a byte, the low one first
        value = _unpack((words >> U32(4 * half)) & U32(0xF), 0, 32, kind)
        np.add.at(matrix, (row, 2 * col + half), value)
        packed[row, 2 * ccol + half], where[row, 2 * ccol + half] = value, 2 * col + half
    return packed, where


def _negate_sources(s, A, B, a_op, b_op, bits) -> None:
    """HMMA's `-R` on A or B (bits 72, 63) negates every element of the register: one TF32
    element, or both 16-bit elements. Checked on an H200 (2026-11-27, docs/gpu): ptxas
    13.5.37 writes a constant B fragment 0xbc00bc00 as `-R` with R = 0x3c00bc00, and
    `mma.m16n8k8.f16` with A all 1.0, C = 0 gave D = 0 everywhere (per-element negation of
    (-1, +1)), not -8: ptxas's code departs from the PTX value there (campaign 7 seed 845013)."""
    for name, op, matrix in (("A", a_op, A), ("B", b_op, B)):
        if not getattr(op, "neg", False):
            continue
        matrix *= -1


def _mma(w, s, mask, a_kind, b_kind, acc_kind):
    """D = A·B + C of each whole warp of `w`: one NumPy operation over all of them, the
    matrices with a leading warp axis (sparse A: one warp at a time)."""
    sparse = "SP" in s.ins.modifiers
    if sparse and not w.per_warp:
        raise PerWarp()
    if sparse and np.any(w.m.state[w.idx] == EXITED):
        # a warp that lacks lanes (threads the CTA does not have, or that exited): mma.sp
        # is .sync.aligned, undefined by the PTX manual unless every thread of the warp runs
        # it, and an H200 left D as it was there (GPU run 27: fuzz 9500435, 9500547 and
        # 9500692's 17-thread CTAs read back D's registers as they were before the HMMA.SP /
        # IMMA.SP, in both warps). Dense mma in such a warp was not run on silicon.
        return
    nw = _whole_warps(w)
    m, n, k = _shape(s.ins.modifiers)
    d, a_op, b_op, c_op = s.ins.operands[:4]
    bits = {"tf32": 32, "f16": 16, "bf16": 16, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
            "e4m3": 8, "e5m2": 8, "e2m1": 8, "e2m3": 8, "e3m2": 8, "b1": 1}[a_kind]
    dtype = np.float64 if acc_kind in ("f32", "f16") else np.int64
    A = np.zeros((nw, m, k), dtype=dtype)
    B = np.zeros((nw, k, n), dtype=dtype)
    if sparse:
        packed, where = _fill_sparse(A[0], w, s, a_op, bits, a_kind)
    else:
        _fill(A, w, a_op, _fragment(_a_coords, m, k, bits), bits, a_kind)
    _fill(B, w, b_op, _fragment(_b_coords, k, bits), bits, b_kind)
    _negate_sources(s, A, B, a_op, b_op, bits)
    if sparse and getattr(a_op, "neg", False):
        packed = -packed
    # C/D: rows g (+8), columns 2t, 2t+1.
    C = np.zeros((nw, m, n), dtype=dtype)
    halves = m // 8
    if acc_kind == "f16":
        creg = _warp_regs(w, c_op, halves, nw)
        for h in range(halves):
            for e in range(2):
                C[:, G + 8 * h, 2 * T + e] = _unpack(creg[:, h], e, 16, "f16")
    else:
        # register 2h + e of a lane holds C[g + 8h, 2t + e]: every register at once
        creg = _warp_regs(w, c_op, 2 * halves, nw)
        rows, cols = _cd_rows_cols(halves)
        C[:, rows, cols] = fp.f32(creg).astype(np.float64) if acc_kind == "f32" \
            else creg.view(np.int32).astype(np.int64)
    if sparse and dtype is np.float64:
        # the sparse unit multiplies each stored element of A by the row of B its metadata
        # names, and nothing else: B's NaN or infinity in a row A leaves out does not reach
        # D, and two elements the metadata puts on one column are two products (GPU run 27,
        # fuzz 9500743: HMMA.SP.16832.F32 gave finite D where the dense A's zeros times B's
        # NaNs made NaN, and a last bit that the summed element's one product missed).
        # Each row of D as the product of the row's stored elements and B's rows gathered.
        D = np.stack([_dense_product(s, packed[None, i:i + 1], B[:, where[i], :], C[:, i:i + 1],
                                     a_kind, acc_kind, dtype)[:, 0]
                      for i in range(m)], axis=1)
    else:
        D = _dense_product(s, A, B, C, a_kind, acc_kind, dtype)
    out = []
    if acc_kind == "f16":
        for h in range(halves):
            lo = fp.f64_to_half_bits(D[:, G + 8 * h, 2 * T].reshape(-1), "f16").astype(U32)
            hi = fp.f64_to_half_bits(D[:, G + 8 * h, 2 * T + 1].reshape(-1), "f16").astype(U32)
            out.append(lo | (hi << U32(16)))
    else:
        # D's registers as C's: (register, warp, lane) gathered at once, each register's
        # values warp after warp as the group's lanes run
        rows, cols = _cd_rows_cols(halves)
        v = D[:, rows, cols].transpose(1, 0, 2).reshape(2 * halves, -1)
        if acc_kind == "f32":
            words = fp.canonicalise_f32(v.astype(np.float32))
        else:
            if "SAT" in s.ins.modifiers:
                v = np.clip(v, -(1 << 31), (1 << 31) - 1)
            words = (v.astype(np.int64) & 0xFFFFFFFF).astype(U32)
        out = list(words)
    w.wn(d, out, mask)


@lru_cache(maxsize=None)
def _cd_rows_cols(halves: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of C/D (FP32 or S32 elements) that register 2h + e holds per lane:
    (g + 8h, 2t + e), as (register, lane) index arrays."""
    rows = np.stack([G + 8 * h for h in range(halves) for e in range(2)])
    cols = np.stack([2 * T + e for h in range(halves) for e in range(2)])
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def _dense_product(s, A, B, C, a_kind, acc_kind, dtype):
    """D = A·B + C of matrices with a leading warp axis, by the arithmetic of `a_kind`'s unit."""
    if a_kind in _FP8:
        D = _each(_fp8_dot, A, B, C)
    elif acc_kind == "f32" and a_kind in _MIN_EXP:
        D = _hmma_f32(A, B, C, _MIN_EXP[a_kind])
    elif acc_kind == "f16" and a_kind == "f16" and F16_ACCUMULATION != "exact":
        D = _each(_hmma_f16, A, B, C)
    elif a_kind == "b1":
        # popc(a XOR b) = a + b - 2ab over bits; popc(a AND b) = ab
        both = A @ B
        D = C + (both if "AND" in s.ins.modifiers else
                 A.sum(axis=2)[:, :, None] + B.sum(axis=1)[:, None, :] - 2 * both)
    elif dtype is np.int64:
        D = A @ B + C                               # integers: exact in any order
    else:
        D = _each(lambda a, b, c: a @ b + c, A, B, C)
    return D


@semantics("HMMA", vector=True)
def op_hmma(w, s, active, mask):
    mods = s.ins.modifiers
    if "884" in mods:
        if not w.per_warp:
            raise PerWarp()
        _hmma_884(w, s, mask)
        return
    kind = "bf16" if "BF16" in mods else "tf32" if "TF32" in mods else "f16"
    acc = "f32" if "F32" in mods else "f16"
    _mma(w, s, mask, kind, kind, acc)


def _hmma_884(w, s, mask):
    """HMMA.884.<D>.<C>.STEPk (sm_75's `mma.m8n8k4` f16): one step of the warp's four
    independent 8x8x4 products, one per quad-pair (lanes 4q..4q+3 and 16+4q..16+4q+3), with
    the PTX ISA's m8n8k4 fragment layouts (lane l, t = l % 4, hi = l >= 16, element i):
      A .ROW: A[t + 4hi][i]   .COL: A[i + 4hi][t]      (a register pair, 2 halves each)
      B .ROW: B[t][i + 4hi]   .COL: B[i][t + 4hi]
      C/D f16: [t + 4hi][i]   C/D f32: [(l&1) + (i&2) + 4hi][(i&4) + (l&2) + (i&1)]
    A step writes one register pair of D: f16 D elements 4k..4k+3 (STEP0/1), f32 D
    elements 2k, 2k+1 (STEP0..3); its C operand is the pair holding the C elements those
    need: f32 C elements 2k, 2k+1, or f16 C elements 4h..4h+3 (h = k, or k // 2 for an f32
    D), as ptxas 13.5 passes them (`HMMA.884.F32.F16.STEP1 R14, R4.ROW, R6.COL, R8`). The
    arithmetic is the module's tensor-core model (`_hmma_f32`, or A·B + C rounded once to
    f16); no sm_75 device has checked it."""
    mods = s.ins.modifiers
    step = int(next(m for m in mods if m.startswith("STEP"))[4:])
    dt, ct = [m for m in mods if m in ("F16", "F32")][:2]
    d, a_op, b_op, c_op = s.ins.operands[:4]
    hi = (LANE >= 16).astype(np.int64)
    quad = (LANE % 16) // 4
    a, b, c = _regs(w, a_op, 2), _regs(w, b_op, 2), _regs(w, c_op, 2)
    A, B, C = np.zeros((4, 8, 4)), np.zeros((4, 4, 8)), np.zeros((4, 8, 8))
    for i in range(4):
        av = _unpack(a[i // 2], i % 2, 16, "f16")
        bv = _unpack(b[i // 2], i % 2, 16, "f16")
        if "COL" in a_op.suffix:
            A[quad, i + 4 * hi, T] = av
        else:
            A[quad, T + 4 * hi, i] = av
        if "COL" in b_op.suffix:
            B[quad, i, T + 4 * hi] = bv
        else:
            B[quad, T, i + 4 * hi] = bv

    def f32_at(i):
        return (LANE & 1) + (i & 2) + 4 * hi, (i & 4) + (LANE & 2) + (i & 1)

    if ct == "F32":
        for e in range(2):
            row, col = f32_at(2 * step + e)
            C[quad, row, col] = fp.f32(c[e]).astype(np.float64)
    else:
        half = step if dt == "F16" else step // 2
        for j in range(4):
            C[quad, T + 4 * hi, 4 * half + j] = _unpack(c[j // 2], j % 2, 16, "f16")
    if dt == "F32":
        D = np.stack([_hmma_f32(A[q], B[q], C[q], _MIN_EXP["f16"]) for q in range(4)])
        out = []
        for e in range(2):
            row, col = f32_at(2 * step + e)
            out.append(fp.canonicalise_f32(D[quad, row, col].astype(np.float32)))
    else:
        D = np.stack([_hmma_f16(A[q], B[q], C[q]) if F16_ACCUMULATION != "exact" else A[q] @ B[q] + C[q]
                      for q in range(4)])
        halves = [fp.f64_to_half_bits(D[quad, T + 4 * hi, 4 * step + j], "f16").astype(U32) for j in range(4)]
        out = [halves[0] | (halves[1] << U32(16)), halves[2] | (halves[3] << U32(16))]
    w.wn(d, out, mask)


@semantics("IMMA", vector=True)
def op_imma(w, s, active, mask):
    types = [m.lower() for m in s.ins.modifiers if m in ("S8", "U8", "S4", "U4")]
    a_kind, b_kind = (types + ["s8", "s8"])[:2]
    _mma(w, s, mask, a_kind, b_kind, "s32")


@semantics("BMMA", vector=True)
def op_bmma(w, s, active, mask):
    if "POPC" not in s.ins.modifiers:
        raise EmuFault(f"{s.ins.mnemonic}: only BMMA .XOR/.AND .POPC is modelled")
    _mma(w, s, mask, "b1", "b1", "s32")


def _pairs(w, op, n):
    """n f64 values from consecutive register pairs at `op` (RZ: zeros), per lane."""
    regs = _regs(w, op, 2 * n)
    return [(regs[2 * i].astype(np.uint64) | (regs[2 * i + 1].astype(np.uint64) << np.uint64(32)))
            .view(np.float64) for i in range(n)]


@semantics("DMMA")
def op_dmma(w, s, active, mask):
    """DMMA.884 (see the module docstring); the sm_90 spelling DMMA.8x8x4 is the same."""
    if not {"884", "8x8x4"} & set(s.ins.modifiers):
        raise EmuFault(f"{s.ins.mnemonic}: only DMMA.884 is modelled")
    mode = next((m for m in s.ins.modifiers if m in ("RZ", "RM", "RP")), "RN")
    d, a_op, b_op, c_op = s.ins.operands[:4]
    a, b = _pairs(w, a_op, 1)[0], _pairs(w, b_op, 1)[0]
    c = _pairs(w, c_op, 2)
    A = np.zeros((8, 4))
    B = np.zeros((4, 8))
    A[G, T] = a
    B[T, G] = b
    C = np.zeros((8, 8))
    C[G, 2 * T], C[G, 2 * T + 1] = c
    out = []
    for e in range(2):
        j = 2 * T + e
        vals = np.array([_exact_dot(A[G[l]], B[:, j[l]], C[G[l], j[l]], mode) for l in range(32)])
        bits = vals.view(np.uint64)
        out += [(bits & np.uint64(0xFFFFFFFF)).astype(U32), (bits >> np.uint64(32)).astype(U32)]
    w.wn(d, out, mask)


def _exact_dot(a_row, b_col, c, mode: str) -> float:
    """c + a_row · b_col as four fused multiply-adds in k order, each rounded in `mode`:
    fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, c)))). An H200 (run 11, fuzz 9300912 and
    9300803: wmma m8n8k4 .rm/.rz/.rn) gave exactly this where one rounding of the exact sum
    was off by 1-2 ulps, and an intermediate infinity's sign where the exact sum had none.
    The same chain with infinite operands: a product of finite operands is exact, so it never
    overflows into an infinity of its own (run 25's fuzz 9500198: -inf*2^149 + 1/3*10 +
    4e283*2^1022 + C gave -inf where summing rounded products gave inf - inf = NaN). A NaN
    result takes _dmma_nan's bits."""
    acc = float(c)
    for x, y in zip(a_row, b_col):
        acc = _fma(float(x), float(y), acc, mode)
    return _dmma_nan(a_row, b_col, c) if math.isnan(acc) else acc


def _dmma_nan(a_row, b_col, c) -> float:
    """The NaN a DMMA gives, as an H200 does (GPU run 24's fuzz 9400208 and 9400210, 31 lanes
    with NaN operands): the accumulation runs from C through k = 0..3, and at each step a NaN
    in B wins, then the NaN carried so far, then a NaN in A; the payload kept, quiet bit set.
    So a later B's NaN replaces C's, while C's outlives a NaN in A. With no NaN operand the
    NaN comes from an invalid operation (inf * 0, inf - inf): the default 0xfff8000000000000."""
    carried = float(c) if math.isnan(float(c)) else None
    for x, y in zip(a_row, b_col):
        if math.isnan(float(y)):
            carried = float(y)
        elif carried is None and math.isnan(float(x)):
            carried = float(x)
    if carried is None:
        return float(np.uint64(fp.F64_DEFAULT_NAN).view(np.float64))
    bits = np.float64(carried).view(np.uint64) | np.uint64(fp.F64_QUIET)
    return float(bits.view(np.float64))


def _fma(x: float, y: float, z: float, mode: str) -> float:
    """x * y + z rounded once in `mode` (IEEE 754 fusedMultiplyAdd)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z
    if not math.isfinite(z):        # the exact product is finite: an infinite z (or NaN) wins
        return z
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:      # IEEE's sign of an exact zero sum
        product_negative = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
        if x * y == 0 and z == 0 and product_negative == (math.copysign(1, z) < 0):
            return -0.0 if product_negative else 0.0
        return -0.0 if mode == "RM" else 0.0
    return fp.round_rational(exact, "f64", mode)


@semantics("QMMA")
def op_qmma(w, s, active, mask):
    """fp8 (sm_89/sm_120) and kind::f8f6f4's fp6/fp4 (sm_120a: .E3M2/.E2M3/.E2M1) operands, the
    exact sum rounded once as for fp8; QMMA.SP.16864 (sparse kind::f8f6f4) decompresses A by
    its metadata as IMMA.SP.16864 does (_fill_sparse). Block scaling (QMMA.SF, QMMA.SF.SP)
    faults: see op_omma."""
    if "SF" in s.ins.modifiers:
        _block_scaled(s)
    types = [m.lower() for m in s.ins.modifiers if m in ("E4M3", "E5M2", "E3M2", "E2M3", "E2M1")]
    a_kind, b_kind = (types + ["e4m3", "e4m3"])[:2]
    _mma(w, s, mask, a_kind, b_kind, "f32" if "F32" in s.ins.modifiers else "f16")


@semantics("OMMA")
def op_omma(w, s, active, mask):
    """OMMA.SF and OMMA.SF.SP (sm_120a's kind::mxf4 / mxf4nvf4 mma.sync, dense and sparse)
    fault, as QMMA.SF does."""
    _block_scaled(s)


def _block_scaled(s):
    """Block-scaled mma.sync is not modelled: which lane and byte of scale-a/scale-b holds
    the scale factor of each row of A and column of B (the selectors byte-id/thread-id) is a
    figure of the PTX ISA ("Block Scaling for mma.sync") that was not read here, and the
    m16n8k64 fp4 fragment layout likewise; a fault rather than a guess (branch mma120_31)."""
    raise EmuFault(f"{s.ins.mnemonic}: block-scaled mma (scale-factor layout) is not modelled")


@semantics("MOVM")
def op_movm(w, s, active, mask):
    """MOVM.16.MT88 d, a (PTX's movmatrix.m8n8.trans.b16): the warp's a registers hold an 8x8
    matrix of 16-bit elements, lane l row l/4, elements 2(l%4) and 2(l%4)+1 (low half first);
    d receives its transpose in the same layout. MOVM.U4TO8.M832: below."""
    ins = s.ins
    if {"U4TO8", "M832"} <= set(ins.modifiers):
        return _movm_u4_to_u8(w, s, mask)
    if not {"16", "MT88"} <= set(ins.modifiers):
        raise EmuFault(f"{ins.mnemonic}: only MOVM.16.MT88 and MOVM.U4TO8.M832 are modelled")
    d, a = ins.operands[:2]
    word = _regs(w, a, 1)[0].astype(U32)
    elems = np.empty((8, 8), dtype=np.uint32)
    elems[G, 2 * T] = word & U32(0xFFFF)
    elems[G, 2 * T + 1] = word >> U32(16)
    t = elems.T
    w.w(d, t[G, 2 * T] | (t[G, 2 * T + 1] << U32(16)), mask)


def _movm_u4_to_u8(w, s, mask):
    """MOVM.U4TO8.M832 d, a: each lane's eight nibbles zero-extended to eight bytes, nibbles
    0..3 to d's bytes 0..3 and nibbles 4..7 to d+1's. Lane by lane, no exchange between lanes:
    ptxas 13.5's sm_100 b1 mma copies the result of a uniform input to uniform registers
    with R2UR (fuzz 28000077), which is right only if a uniform input gives a uniform
    result. Read as fragments, lane 4g + t's u4 elements (row g, k 8t..8t+7) become u8
    elements k 4t..4t+3 and 16 + 4t..16 + 4t + 3 of IMMA.16832's layout; A and B move alike,
    so a u8 mma of two converted fragments sums the same products as the u4 mma. Which
    nibble lands in which byte is not observable that way (no device has checked it)."""
    d, a = s.ins.operands[:2]
    word = _regs(w, a, 1)[0].astype(U32)
    words = []
    for half in range(2):
        out = np.zeros(32, dtype=np.uint32)
        for j in range(4):
            out |= ((word >> U32(4 * (4 * half + j))) & U32(0xF)) << U32(8 * j)
        words.append(out)
    w.wn(d, words, mask)
