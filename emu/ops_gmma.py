"""Hopper's warpgroup MMA (PTX `wgmma.mma_async`): HGMMA (f16/bf16/tf32), IGMMA (s8/u8),
QGMMA (e4m3/e5m2), and WARPGROUP.ARRIVE / WARPGROUP.DEPBAR.LE gsb0, N.

`HGMMA.64xNxK.<D>[.<type>] D, [A,] gdesc[URn][.negA.negB.tnspA.tnspB], C[, UPp][, gsb0]`:
D = A·B + C (C ignored where the scale-d predicate UPp is false) for the warpgroup's
64 x N tile. gdesc[URn] names the shared-memory matrix descriptors: A's in URn:URn+1, B's in
URn+2:URn+3 (ptxas 13.5.37 puts B's there when A comes from registers, `gdesc[UR4]` with
B's descriptor built in UR6:UR7). The warpgroup is 4 consecutive warps of the CTA; warp w
(its index in the CTA mod 4) owns rows 16w..16w+15 of A, C and D, so each warp's share
depends on its own registers, its A rows and all of B, and is computed per warp here.

Descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29
leading dimension byte offset (LBO) >> 4, 32-45 stride dimension byte offset (SBO) >> 4,
49-51 base offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B). The canonical layouts
("Shared Memory Matrix Layout"), a matrix seen as MN x K (A as it is, B transposed):
K-major without swizzle: core matrices of 8 rows x 16 bytes, LBO between core matrices along
K, SBO between 8-row groups; K-major swizzled (W = 32/64/128 bytes): rows W bytes apart, SBO
between 8-row groups (LBO unused); MN-major (tnspA/tnspB, 16-bit types) without swizzle:
16-byte runs along MN, 8 K rows 16 bytes apart, SBO between runs, LBO between 8-row K groups;
MN-major swizzled: W-byte rows along MN, 8 K rows W bytes apart, LBO between W-byte row
groups along MN, SBO between 8-row K groups. A swizzled layout stores logical address a at
a XOR ((a >> 7) & (W/16 - 1)) << 4 (the 16-byte chunk index XOR the row within the 8-row
atom), on the shared address itself, so a start address advanced along K inside a swizzled
row reads the same atom. A non-zero base offset (a pattern not aligned to its repeat) is not
modelled: a fault.

Register fragments (PTX ISA, "Register Fragments"): D/C of warp w, lane l (g = l/4,
t = l%4): for each 8-column block j, rows g and g+8 of columns 8j+2t, 8j+2t+1 (F32/S32 one
per register, d[4j+2h+e]; F16 two per register, d[2j+h]); A from registers: the
mma.m16n8k* A layout of the warp's 16 rows (4 registers).

Asynchrony: an HGMMA reads its operands (registers, descriptors and shared memory) at issue
and its result lands in D at the WARPGROUP.DEPBAR.LE gsb0 that retires its group (a group
ends at an HGMMA carrying gsb0; DEPBAR.LE gsb0, N leaves the last N groups in flight). An
HGMMA whose C is a still-in-flight D (chained accumulation, as in one wgmma group) reads
that pending result. Reading a D before its DEPBAR is undefined in PTX: the hazard checker
(emu.hazards) flags it; the emulator gives the registers' old values.

Arithmetic: the module emu.ops_mma's tensor-core model, not checked on silicon for wgmma:
F32 accumulation of f16/bf16/tf32 as HMMA's (`_hmma_f32`: exact products aligned and
truncated to the largest exponent, summed, truncated to FP32), fp8 as QMMA's (exact sum
rounded once), F16 accumulators as A·B + C rounded once, integers exact (.SAT clamps)."""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Reg, SpecialReg

from . import fp
from .errors import EmuFault
from .ops_mma import _FP8, _MIN_EXP, _fp8_dot, _hmma_f32, _unpack
from .registry import semantics

U32 = np.uint32
LANE = np.arange(32)
G, T = LANE // 4, LANE % 4
_SWIZZLE = {0: 0, 1: 128, 2: 64, 3: 32}
_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


def _types(ins) -> tuple[str, str, str]:
    """(accumulator, A type, B type) from the modifiers."""
    mods = [m for m in ins.modifiers if "x" not in m]
    if ins.opcode == "HGMMA":
        kind = "bf16" if "BF16" in mods else "tf32" if "TF32" in mods else "f16"
        return ("f32" if "F32" in mods else "f16"), kind, kind
    if ins.opcode == "IGMMA":
        a, b = [m.lower() for m in mods if m in ("S8", "U8")][:2]
        return "s32", a, b
    if ins.opcode == "QGMMA":
        acc = "f32" if mods[0] == "F32" else "f16"
        a, b = [m.lower() for m in mods if m in ("E4M3", "E5M2")][:2]
        return acc, a, b
    raise EmuFault(f"{ins.mnemonic}: not modelled")


def _shape(ins) -> tuple[int, int, int]:
    m, n, k = next(x for x in ins.modifiers if "x" in x).split("x")
    return int(m), int(n), int(k)


def accumulator_registers(ins) -> int:
    """How many registers D (and C) take per thread: N/2 of 32-bit accumulators, N/4 of
    F16 pairs (HGMMA/QGMMA `.F16` is the modifier after the shape)."""
    n = _shape(ins)[1]
    return n // 4 if ins.modifiers[1] == "F16" else n // 2


def _ur64(w, index: int) -> int:
    lo, hi = int(w.UR[index]), int(w.UR[index + 1])
    return lo | hi << 32


def _offsets(rows: np.ndarray, k: int, esize: int, desc: int, mn_major: bool) -> np.ndarray:
    """Shared byte addresses of elements (rows[i], 0..k-1) of a descriptor's MN x K matrix."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if (desc >> 49) & 7:
        raise EmuFault("wgmma descriptor with a non-zero base offset: not modelled")
    sw = _SWIZZLE[(desc >> 62) & 3]
    mn, kk = np.meshgrid(rows, np.arange(k), indexing="ij")
    if not mn_major:
        kb = kk * esize
        if sw == 0:
            rel = (mn // 8) * sbo + (mn % 8) * 16 + (kb // 16) * lbo + kb % 16
        else:
            rel = (mn // 8) * sbo + (mn % 8) * sw + kb
    else:
        if esize != 2:
            raise EmuFault("wgmma: MN-major (transposed) operands exist for 16-bit types only")
        if sw == 0:
            t = 16 // esize
            rel = (mn % t) * esize + (mn // t) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
        else:
            per = sw // esize
            rel = (mn % per) * esize + (mn // per) * lbo + (kk % 8) * sw + (kk // 8) * sbo
    addr = start + rel
    if sw:
        bits = {32: 1, 64: 2, 128: 3}[sw]
        addr = addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)
    return addr


def _smem_matrix(w, rows, k, kind, desc, mn_major) -> np.ndarray:
    """Values of the descriptor's matrix at `rows` x K from the CTA's shared memory."""
    esize = _BYTES[kind]
    addr = _offsets(np.asarray(rows), k, esize, desc, mn_major)
    data = w.cta.shared.data
    if addr.max() + esize > len(data):
        raise EmuFault(f"wgmma descriptor reads shared memory at 0x{int(addr.max()):x}, beyond "
                       f"its {len(data)} bytes")
    bits = np.zeros(addr.shape, dtype=U32)
    for b in range(esize):
        bits |= data[addr + b].astype(U32) << U32(8 * b)
    return _unpack(bits, 0, 32, kind)


def _a_from_regs(w, op, kind, k) -> np.ndarray:
    """The warp's 16 x K share of A from its 4 fragment registers (mma.m16n8k*'s layout)."""
    esize = _BYTES[kind]
    per = 4 // esize
    A = np.zeros((16, k))
    for r in range(4):
        word = w.r(Reg("R", op.index + r)) if not op.is_zero else np.zeros(32, U32)
        for e in range(per):
            v = _unpack(word, e, 8 * esize, kind) if esize < 4 else _unpack(word, 0, 32, kind)
            A[G + 8 * (r % 2), (r // 2) * (k // 2) + T * per + e] = v
    return A


def _state(w):
    """The warp's wgmma state: in-flight groups [(closed, [(D index, words)])]."""
    m = w.m
    table = m.__dict__.setdefault("gmma_in_flight", {})
    return table.setdefault(w.wid, [])


def _pending_word(groups, index):
    """The latest in-flight value of register R`index`, or None."""
    for _, results in reversed(groups):
        for first, words in reversed(results):
            if first <= index < first + len(words):
                return words[index - first]
    return None


@semantics("HGMMA", "IGMMA", "QGMMA")
def op_gmma(w, s, active, mask):
    ins = s.ins
    if "SP" in ins.modifiers:
        # sparse A (2:4 compressed, per-thread metadata and selector): read as dense it
        # would give a wrong D, so it stops here
        raise EmuFault(f"{ins.mnemonic}: sparse wgmma not modelled")
    acc, ak, bk = _types(ins)
    _, n, k = _shape(ins)
    ops = ins.operands
    d = ops[0]
    gi = next(i for i, o in enumerate(ops) if isinstance(o, Reg) and o.gdesc)
    gdesc = ops[gi]
    a_reg = ops[1] if gi == 2 else None
    c = ops[gi + 1]
    pred = next((o for o in ops[gi + 2:] if isinstance(o, Reg) and o.file in ("P", "UP")), None)
    closes = any(isinstance(o, SpecialReg) and o.name.startswith("gsb") for o in ops)
    flags = set(gdesc.suffix)
    wi = w.index % 4
    rows = np.arange(16 * wi, 16 * wi + 16)
    desc_b = _ur64(w, gdesc.index + 2)
    if a_reg is None:
        A = _smem_matrix(w, rows, k, ak, _ur64(w, gdesc.index), "tnspA" in flags)
    else:
        A = _a_from_regs(w, a_reg, ak, k)
    B = _smem_matrix(w, np.arange(n), k, bk, desc_b, "tnspB" in flags).T
    if "negA" in flags:
        A = -A
    if "negB" in flags:
        B = -B
    groups = _state(w)
    nd = accumulator_registers(ins)
    cwords = []
    for i in range(nd):
        pending = None if c.is_zero else _pending_word(groups, c.index + i)
        cwords.append(pending if pending is not None else
                      (np.zeros(32, U32) if c.is_zero else w.r(Reg("R", c.index + i)).astype(U32)))
    scale_d = True if pred is None else bool(w.pred(pred)[0])
    integer = acc == "s32"
    C = np.zeros((16, n), dtype=np.int64 if integer else np.float64)
    if scale_d:
        for j in range(n // 8):
            for h in range(2):
                for e in range(2):
                    if acc == "f16":
                        v = _unpack(cwords[2 * j + h], e, 16, "f16")
                    elif acc == "f32":
                        v = fp.f32(cwords[4 * j + 2 * h + e]).astype(np.float64)
                    else:
                        v = cwords[4 * j + 2 * h + e].view(np.int32).astype(np.int64)
                    C[G + 8 * h, 8 * j + 2 * T + e] = v
    if integer:
        D = A.astype(np.int64) @ B.astype(np.int64) + C
        if "SAT" in ins.modifiers:
            D = np.clip(D, -(1 << 31), (1 << 31) - 1)
    elif ak in _FP8:
        D = _fp8_dot(A, B, C)
    elif acc == "f32":
        D = _hmma_f32(A, B, C, _MIN_EXP[ak])
    else:
        D = A @ B + C
    words = []
    for j in range(n // 8):
        for h in range(2):
            cols = 8 * j + 2 * T
            if acc == "f16":
                lo = fp.f64_to_half_bits(D[G + 8 * h, cols], "f16").astype(U32)
                hi = fp.f64_to_half_bits(D[G + 8 * h, cols + 1], "f16").astype(U32)
                words.append(lo | hi << U32(16))
                continue
            for e in range(2):
                v = D[G + 8 * h, cols + e]
                words.append(fp.canonicalise_f32(v.astype(np.float32)) if acc == "f32"
                             else (v.astype(np.int64) & 0xFFFFFFFF).astype(U32))
    if not groups or groups[-1][0]:
        groups.append([False, []])
    groups[-1][1].append((d.index, [np.where(mask, x, w.r(Reg("R", d.index + i)))
                                    for i, x in enumerate(words)]))
    if closes:
        groups[-1][0] = True


@semantics("WARPGROUP")
def op_warpgroup(w, s, active, mask):
    """ARRIVE orders the warpgroup's register and shared-memory accesses before the wgmma
    after it (wgmma.fence): nothing to do where operands are read at issue. DEPBAR.LE gsb0, N
    writes the results of every group but the last N closed ones."""
    ins = s.ins
    if "ARRIVE" in ins.modifiers:
        return
    if "DEPBAR" not in ins.modifiers:
        raise EmuFault(f"{ins.mnemonic}: not modelled")
    keep = next((o.value for o in ins.operands if hasattr(o, "value")), 0)
    groups = _state(w)
    closed = [g for g in groups if g[0]]
    retire = closed[:max(len(closed) - keep, 0)]
    for g in retire:
        for first, words in g[1]:
            w.wn(Reg("R", first), words, np.ones(32, dtype=bool))
        groups.remove(g)
