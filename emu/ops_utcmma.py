"""sm_100a's tcgen05.mma: UTCHMMA (kind::f16 and kind::tf32), UTCQMMA (kind::f8f6f4, e4m3 and
e5m2) and UTCIMMA (kind::i8), as ptxas 13.5 writes them:

`UTC?MMA A, gdesc[URb], tmem[URd], tmem[URs], idesc[URi][, URm], UPe[, scale]`

* A: `gdesc[URa]` (the 64-bit shared-memory descriptor in URa:URa+1) or `tmem[URa]` (A in
  tensor memory); B: `gdesc[URb]`; D: `tmem[URd]`, the accumulator in tensor memory.
* `tmem[URs], idesc[URi]`: a register pair (URs = URi - 1, one field); URi is the PTX
  instruction descriptor; URs is 0 in every form ptxas writes for a dense MMA (another value
  is a fault here).
* URm..URm+3: disable-output-lane (bit l of the 128-bit mask: D's lane l is left alone).
* UPe: enable-input-d (false: D = A·B); scale: scale-input-d (D = A·B + D·2^-scale).
The kind is the opcode, the element types come from the instruction descriptor at run time
(kind::f16 and kind::tf32 give the same word).

A model written from the PTX ISA text ("Instruction descriptor", "Shared memory descriptor",
"Matrix descriptors", "Data path layout organization"); **not checked on silicon**:

* Instruction descriptor (32 bits): 2 sparsity, 3 saturate (i8), 4-5 D type (0 F16, 1 F32,
  2 S32), 7-9 A type, 10-12 B type (f16 0 f16, 1 bf16, 2 tf32; f8f6f4 0 e4m3, 1 e5m2; i8 0 u8,
  1 s8), 13/14 negate A/B, 15/16 transpose A/B (MN-major), 17-22 N >> 3, 24-28 M >> 4.
* Shared-memory descriptor: the wgmma descriptor's fields (start, LBO, SBO >> 4, base offset
  49-51) plus bits 46-48 = 0b001, bit 52 the leading-dimension mode, and the swizzle in bits
  61-63 (0 none, 2 128B, 4 64B, 6 32B). The canonical layouts are wgmma's: the matrix is read
  by emu.ops_gmma's descriptor decoding after the swizzle code is translated.
* D (M = 128, cta_group::1): row i in lane lane(d)+i, column j in column col(d)+j, one 32-bit
  F32 or S32 cell each. A in tensor memory: row i in lane lane(a)+i, its K elements packed
  low-first into 32-bit columns from col(a) (one row of K is 32 bytes: 8 columns).
* K is 32 bytes of elements: 16 (f16/bf16), 8 (tf32), 32 (8-bit).
* Arithmetic: emu.ops_mma's tensor-core model (HMMA's F32 accumulation for f16/bf16/tf32,
  QMMA's exactly rounded fp8 sum, exact integers, saturated with idesc bit 3).
* Asynchrony: the operands in registers (descriptors, addresses, enable, scale, mask) are
  read at issue; the matrices are read and D written when the issuing warp's next
  tcgen05.commit (UTCBAR) completes (emu.ops_tmem runs the warp's pending operations there, in
  issue order, before the mbarrier arrive-on). Reading D before that is undefined in PTX.

`.WS` (tcgen05.mma.ws): `UTC?MMA.WS A, gdesc[URb], tmem[URd], tmem[URs], idesc[URi][, URz],
UPe`, URz:URz+1 the zero-column mask descriptor (no lane mask, no scale); M = 32 / 64 / 128,
N = 64 / 128 / 256; D in the data-path layouts G / E / D (N split into 128/M column groups,
group g's rows in lanes g*M.., `d_layout`); B's columns from the descriptor's column shift on,
the masked ones taken as 0 (`zero_column_mask`). Layouts E and G are read from the manual's
figures as open-source Blackwell kernels use them: not silicon-checked either.

`.2CTA` (cta_group::2, issued by the even CTA of a pair), M = 256 (data-path layout A) and
M = 128 (layout B) (`_compute_pair`): A's first M/2 rows from the even CTA's shared memory
and the rest from the odd one's, B's columns 0..N/2-1 from the even CTA's and the rest from
the odd one's, both at the same descriptors; each CTA's tensor memory holds its M/2 rows of
D at the same address (layout B: 64 rows, column halves in lanes 0..63 / 64..127).
Read from the PTX ISA's description of the CTA pair (as open-source Blackwell kernels use
it); not silicon-checked.

Not modelled (a fault naming it): M = 64 and M = 256 without .ws, A in tensor memory with
.ws M < 128, .2CTA with A in tensor memory, a lane mask or collector usage, .ASHIFT, sparsity (.sp: the metadata address is the low
half of the idesc pair), F16 accumulators in tensor memory, the 6- and 4-bit f8f6f4 types,
block scaling (`.block_scale`: UTCQMMA with a scale-factor address pair `tmem[URf]` after the
idesc, UTCOMMA[.4X]; both registers are read before the fault), MN-major operands of types other than 16-bit, a non-zero base offset, the
absolute leading-dimension mode.

Collector buffers (`collector_usage`, `_collected`): A's one buffer and B's four (`.BUFFERn`)
hold the matrix as read (B after the column shift, before the zero-column mask): `fill`
(`.X_KEEP`) reads memory and keeps it, `use` (`.X_REUSE.X_KEEP`) and `lastuse` (`.X_REUSE`)
read the buffer (a fault without a valid fill), `lastuse` and `discard` (no suffix, the
default) leave it invalid. What silicon does with a buffered matrix of another shape is not
known here (a fault)."""
from __future__ import annotations

import numpy as np

from types import SimpleNamespace

from ptx2sass.encoder.model import Imm, Mem, Reg

from . import fp
from .errors import EmuFault
from .ops_gmma import _smem_matrix
from .ops_mma import _FP8, _MIN_EXP, _fp8_dot, _hmma_f32, _unpack
from .ops_tmem import COLUMNS, LANES, _check_allocated, tensor_memory
from .registry import semantics

U32 = np.uint32
_TYPES = {"UTCHMMA": {0: "f16", 1: "bf16", 2: "tf32"},
          "UTCQMMA": {0: "e4m3", 1: "e5m2"},
          "UTCIMMA": {0: "u8", 1: "s8"}}
_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "u8": 1, "s8": 1}
# tcgen05 swizzle code (descriptor bits 61-63) -> wgmma's (bits 62-63)
_SWIZZLE = {0: 0, 2: 1, 4: 2, 6: 3}


def _ur(w, index: int) -> int:
    """A uniform register's value, read through the warp (so the hazard checker sees it)."""
    return int(np.atleast_1d(w.r(Reg("UR", index)))[0])


def _tmem_address(w, mem: Mem) -> int:
    a = (_ur(w, mem.ubase.index) if mem.ubase is not None and not mem.ubase.is_zero else 0)
    return (a + mem.offset) & 0xFFFFFFFF


def decode_idesc(opcode: str, idesc: int) -> dict:
    """The instruction descriptor's fields (PTX ISA table "Instruction descriptor format for
    .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8")."""
    if idesc & 0b100:
        raise EmuFault(f"{opcode}: sparse tcgen05.mma (instruction descriptor bit 2) is not modelled")
    types = _TYPES[opcode]
    a, b = (idesc >> 7) & 7, (idesc >> 10) & 7
    if a not in types or b not in types:
        raise EmuFault(f"{opcode}: A/B type codes {a}/{b} of the instruction descriptor are not "
                       f"modelled (known: {types})")
    dtype = {0: "f16", 1: "f32", 2: "s32"}.get((idesc >> 4) & 3)
    want = "s32" if opcode == "UTCIMMA" else "f32"
    if dtype != want:
        raise EmuFault(f"{opcode}: D type code {(idesc >> 4) & 3} (only {want.upper()} accumulators "
                       f"are modelled)")
    return {"a": types[a], "b": types[b], "sat": bool(idesc >> 3 & 1),
            "neg_a": bool(idesc >> 13 & 1), "neg_b": bool(idesc >> 14 & 1),
            "mn_a": bool(idesc >> 15 & 1), "mn_b": bool(idesc >> 16 & 1),
            "n": ((idesc >> 17) & 0x3F) << 3, "m": ((idesc >> 24) & 0x1F) << 4}


def wgmma_descriptor(desc: int) -> int:
    """A tcgen05 shared-memory descriptor as the wgmma descriptor ops_gmma decodes (the same
    start/LBO/SBO/base-offset fields; the swizzle code moved to bits 62-63)."""
    if (desc >> 46) & 7 != 1:
        raise EmuFault(f"tcgen05 shared-memory descriptor 0x{desc:016x}: bits 46-48 must be 0b001")
    if desc >> 52 & 1:
        raise EmuFault("tcgen05 shared-memory descriptor: the absolute leading-dimension mode is not modelled")
    code = desc >> 61
    if code not in _SWIZZLE:
        raise EmuFault(f"tcgen05 shared-memory descriptor: swizzle code {code} is not modelled"
                       + (" (128B with 32B atoms)" if code == 1 else " (invalid)"))
    return (desc & ((1 << 52) - 1)) | _SWIZZLE[code] << 62


def _smem_operand(w, rows: int, k: int, kind: str, desc: int, mn_major: bool, first: int = 0) -> np.ndarray:
    if mn_major and _BYTES[kind] != 2:
        raise EmuFault(f"tcgen05.mma: MN-major {kind} operands are not modelled")
    return _smem_matrix(w, np.arange(first, first + rows), k, kind, wgmma_descriptor(desc), mn_major)


def _tmem_a(cells: np.ndarray, lane: int, col: int, m: int, k: int, kind: str) -> np.ndarray:
    """A (m x k) from tensor memory: row i in lane lane+i, elements packed low-first."""
    esize = _BYTES[kind]
    per = 4 // esize
    words = cells[lane:lane + m, col:col + k // per]
    A = np.zeros((m, k))
    for e in range(per):
        A[:, e::per] = _unpack(words, e, 8 * esize, kind) if esize < 4 else _unpack(words, 0, 32, kind)
    return A


def zero_column_mask(desc: int, m: int, n: int) -> np.ndarray:
    """The N-bit zero-column mask (True: B's column is taken as 0) of a tcgen05.mma.ws
    zero-column mask descriptor (PTX ISA "Zero-Column Mask Descriptor"): 128/M sub-masks of
    N/(128/M) bits each; sub-mask i starts with the value first-span bit 32+i, alternates
    spans of (bits 48-55) + 1 zeros (B used) and (bits 40-47) + 1 ones (zeros used), its first
    start-count (bits 8i..8i+7) bits dropped; all clear when bit 39 (non-zero mask) is 0. (The
    manual's field table names the two span fields the other way round; its worked examples
    read as here.)"""
    mask = np.zeros(n, dtype=bool)
    if not desc >> 39 & 1:
        return mask
    ones, zeros = (desc >> 40 & 0xFF) + 1, (desc >> 48 & 0xFF) + 1
    parts = 128 // m
    size = n // parts
    for i in range(parts):
        start, value = desc >> (8 * i) & 0xFF, bool(desc >> (32 + i) & 1)
        bits = []
        while len(bits) < start + size:
            bits += [value] * (ones if value else zeros)
            value = not value
        mask[i * size:(i + 1) * size] = bits[start:start + size]
    return mask


def d_layout(m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(lane, column) offsets of D's element (i, j) (PTX ISA "Data path layout organization"):
    M = 128 layout D (row i in lane i, column j); the .ws layouts E (M = 64) and G (M = 32)
    split N into 128/M column groups of N/(128/M) columns, group g's rows in lanes g*M + i.
    Layouts E and G are read from the manual's figures as open-source Blackwell kernels use
    them (tilelang's TMEM layout for its .ws GEMMs); not silicon-checked here."""
    size = n // (128 // m)
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return i + m * (j // size), j % size


def collector_usage(op) -> tuple[str, int]:
    """(usage, buffer) of a UTC*MMA operand's collector suffixes as ptxas 13.5 writes them:
    `.X_KEEP` fill, `.X_REUSE.X_KEEP` use, `.X_REUSE` lastuse, none discard; `.BUFFERn`."""
    suffix = getattr(op, "suffix", ()) or ()
    keep = any(x.endswith("_KEEP") for x in suffix)
    reuse = any(x.endswith("_REUSE") for x in suffix)
    buffer = next((int(x[6:]) for x in suffix if x.startswith("BUFFER")), 0)
    return {(True, False): "fill", (True, True): "use", (False, True): "lastuse",
            (False, False): "discard"}[(keep, reuse)], buffer


def _collected(tm, opcode, key, usage, read):
    """A matrix through the collector buffer `key` (PTX ISA, tcgen05.mma's collector usage):
    fill reads memory and keeps it there, use/lastuse read the buffer (a previous fill must
    still be valid: a fault otherwise), lastuse and discard leave the buffer invalid."""
    buffers = tm.__dict__.setdefault("collector", {})
    op, _ = usage
    if op in ("use", "lastuse"):
        if key not in buffers:
            raise EmuFault(f"{opcode}: collector buffer {key[0]}{key[1]} `::{op}` without a valid "
                           "previous `::fill` (undefined in PTX)")
        matrix = buffers[key]
    else:
        matrix = read()
    if op in ("fill", "use"):
        buffers[key] = matrix
    else:
        buffers.pop(key, None)
    return matrix.copy()


def _compute(tm, opcode, f, a_src, desc_b, d_addr, enable, scale, keep, w, zero_mask=0,
             usage=(("discard", 0), ("discard", 0))):
    """The MMA itself, run when the commit completes it: reads the operands and writes D."""
    m, n = f["m"], f["n"]
    k = 32 // _BYTES[f["a"]]
    lane, col = d_addr >> 16, d_addr & 0xFFFF
    width = n // (128 // m)                 # D's columns in tensor memory
    if lane + min(m * (128 // m), LANES) > LANES or col + width > COLUMNS:
        raise EmuFault(f"{opcode}: D (lane {lane}, column {col}, {m} x {n}) beyond tensor memory")
    _check_allocated(tm, col, width)
    def read_a():
        if a_src[0] == "tmem":
            a_lane, a_col = a_src[1] >> 16, a_src[1] & 0xFFFF
            _check_allocated(tm, a_col, 8)
            return _tmem_a(tm.cells, a_lane, a_col, m, k, f["a"])
        return _smem_operand(w, m, k, f["a"], a_src[1], f["mn_a"])
    shift = zero_mask >> 56 & 0x3F            # .ws: B's columns from the column shift on
    A = _collected(tm, opcode, ("A", 0), usage[0], read_a)
    B = _collected(tm, opcode, ("B", usage[1][1]), usage[1],
                   lambda: _smem_operand(w, n, k, f["b"], desc_b, f["mn_b"], shift).T)
    if A.shape != (m, k) or B.shape != (k, n):
        raise EmuFault(f"{opcode}: a collector buffer holds a {A.shape} / {B.shape} matrix, "
                       f"this MMA reads {m} x {k} / {k} x {n}")
    B[:, zero_column_mask(zero_mask, m, n)] = 0
    _write_d(tm, opcode, f, A, B, lane, col, m, n, enable, scale, keep)


def _write_d(tm, opcode, f, A, B, lane, col, m, n, enable, scale, keep):
    """D = A·B (+ D·2^-scale where enabled) into `tm` at (lane, col) in the data-path layout of
    M = m, the lanes `keep` names only."""
    if f["neg_a"]:
        A = -A
    if f["neg_b"]:
        B = -B
    dl, dc = d_layout(m, n)
    dl, dc = dl + lane, dc + col
    cells = tm.cells[dl, dc]
    integer = opcode == "UTCIMMA"
    if not enable:
        C = np.zeros((m, n), dtype=np.int64 if integer else np.float64)
    elif integer:
        C = cells.view(np.int32).astype(np.int64)
    else:
        C = fp.f32(cells).astype(np.float64) * 2.0 ** -scale
    if integer:
        D = A.astype(np.int64) @ B.astype(np.int64) + C
        if f["sat"]:
            D = np.clip(D, -(1 << 31), (1 << 31) - 1)
        out = (D & 0xFFFFFFFF).astype(U32)
    elif f["a"] in _FP8:
        out = fp.canonicalise_f32(_fp8_dot(A, B, C).astype(np.float32))
    else:
        out = fp.canonicalise_f32(_hmma_f32(A, B, C, _MIN_EXP[f["a"]]).astype(np.float32))
    cells[keep] = out[keep]
    tm.cells[dl, dc] = cells


def _compute_pair(tms, ctas, opcode, f, desc_a, desc_b, d_addr, enable, scale):
    """cta_group::2: A's first M/2 rows are in the even CTA's shared memory and the rest in
    the odd one's, at the same descriptor; B's columns 0..N/2-1 in the even CTA's and
    N/2..N-1 in the odd one's; each CTA's tensor memory gets its M/2 rows of D at the same
    address: M = 256 data-path layout A (row i in lane i), M = 128 layout B (64 rows, the
    column halves in lanes 0..63 and 64..127, as the .ws layout E: `d_layout`)."""
    n, rows = f["n"], f["m"] // 2             # each CTA's rows of A and D
    k = 32 // _BYTES[f["a"]]
    lane, col = d_addr >> 16, d_addr & 0xFFFF
    width = n * rows // 128                   # D's columns in tensor memory (layout B: N/2)
    if lane or col + width > COLUMNS:
        raise EmuFault(f"{opcode}.2CTA: D (lane {lane}, column {col}, {rows} x {n} per CTA) beyond "
                       "tensor memory or not from lane 0")
    for tm in tms:
        _check_allocated(tm, col, width)
    halves = [_smem_operand(c, n // 2, k, f["b"], desc_b, f["mn_b"]).T for c in ctas]
    B = np.concatenate(halves, axis=1)
    keep = np.ones(rows, dtype=bool)
    for tm, c in zip(tms, ctas):
        A = _smem_operand(c, rows, k, f["a"], desc_a, f["mn_a"])
        _write_d(tm, opcode, f, A, B.copy(), 0, col, rows, n, enable, scale, keep)


def _pair_mma(w, op, ins, f, a, b, d, lanes_op, enable_op, scale):
    """A .2CTA MMA (cta_group::2) issued by the even CTA of the pair: queued on the issuing
    warp as cta_group::1's, completed at its commit (UTCBAR.2CTA)."""
    from .ops_tmem import peer_cta, peer_memory
    if f["m"] not in (128, 256):
        raise EmuFault(f"{op}.2CTA: M = {f['m']} is not a cta_group::2 shape (128, 256)")
    if f["n"] < 32 or f["n"] > 256 or f["n"] % 32:
        raise EmuFault(f"{op}.2CTA: N = {f['n']} is not a tcgen05.mma N for M = 256")
    if isinstance(a, Mem):
        raise EmuFault(f"{op}.2CTA: A in tensor memory is not modelled")
    if any(collector_usage(x)[0] != "discard" for x in (a, b)):
        raise EmuFault(f"{op}.2CTA: collector buffers are not modelled")
    if lanes_op is not None and any(_ur(w, lanes_op.index + i) for i in range(8)):
        raise EmuFault(f"{op}.2CTA: a disable-output-lane mask is not modelled")
    rank = int(w.m.cta_rank[w.wid // w.m.warps_per_cta]) if w.m.launch.cluster_size > 1 else 0
    if rank & 1:
        raise EmuFault(f"{op}.2CTA issued by the odd CTA of the pair (rank {rank})")
    desc_a = _ur(w, a.index) | _ur(w, a.index + 1) << 32
    desc_b = _ur(w, b.index) | _ur(w, b.index + 1) << 32
    d_addr = _tmem_address(w, d)
    enable = bool(np.atleast_1d(w.pred(enable_op))[0])
    tms = [tensor_memory(w), peer_memory(w, op)]
    ctas = [SimpleNamespace(cta=w.cta), SimpleNamespace(cta=peer_cta(w, op))]
    tms[0].pending.setdefault(w.index, []).append(
        lambda: _compute_pair(tms, ctas, op, f, desc_a, desc_b, d_addr, enable, scale))


def block_scale_operand(ins):
    """The scale-factor address pair of a block-scaled MMA (tcgen05.mma.block_scale:
    `UTCQMMA`/`UTCOMMA[.4X] A, gdesc[URb], tmem[URd], tmem[URs], idesc[URi], tmem[URf], UPe`,
    scale-A's tensor-memory address in URf, scale-B's in URf+1, ptxas 13.5's form), or None."""
    ops = ins.operands
    if len(ops) > 5 and isinstance(ops[5], Mem) and ops[5].space == "tmem":
        return ops[5]
    return None


@semantics("UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA")
def op_utcmma(w, s, active, mask):
    ins = s.ins
    op = ins.opcode
    scales = block_scale_operand(ins)
    if scales is not None or op == "UTCOMMA":
        if mask.any() and scales is not None:       # read both (the hazard checker sees them)
            _ur(w, scales.ubase.index), _ur(w, scales.ubase.index + 1)
        raise EmuFault(f"{op}{''.join('.' + m for m in ins.modifiers)}: block scaling "
                       "(tcgen05.mma.block_scale, kind::mxf8f6f4/mxf4/mxf4nvf4) is not modelled: the "
                       "scale-factor layouts in tensor memory are figures of the PTX ISA not read here")
    ws = "WS" in ins.modifiers
    pair = "2CTA" in ins.modifiers
    if "ASHIFT" in ins.modifiers:
        raise EmuFault(f"{op}.ASHIFT: not modelled (tcgen05.mma.ashift)")
    if not mask.any():
        return
    ops = ins.operands
    a, b, d, low, idesc = ops[:5]
    rest = list(ops[5:])
    scale = rest.pop().value if rest and isinstance(rest[-1], Imm) else 0
    enable_op = rest.pop()
    lanes_op = rest.pop() if rest and not ws else None
    mask_op = rest.pop() if rest else None          # .WS: the zero-column mask descriptor pair
    f = decode_idesc(op, _ur(w, idesc.ubase.index))      # faults on a sparse MMA first
    if pair and _tmem_address(w, low) == 0:
        return _pair_mma(w, op, ins, f, a, b, d, lanes_op, enable_op, scale)
    if _tmem_address(w, low):
        raise EmuFault(f"{op}: a non-zero low half of the instruction-descriptor pair "
                       f"(tmem[UR{low.ubase.index}], the .sp metadata address) with a dense "
                       "instruction descriptor (ptxas writes 0 for dense MMAs)")
    if ws:
        if f["m"] not in (32, 64, 128) or f["n"] not in (64, 128, 256):
            raise EmuFault(f"{op}.WS: M = {f['m']}, N = {f['n']} is not a tcgen05.mma.ws shape "
                           "(M 32/64/128, N 64/128/256)")
        if f["m"] != 128 and isinstance(a, Mem):
            raise EmuFault(f"{op}.WS: A in tensor memory with M = {f['m']} is not modelled")
    elif f["m"] != 128:
        raise EmuFault(f"{op}: M = {f['m']} (only M = 128 of cta_group::1 is modelled)")
    elif f["n"] < 8 or f["n"] > 256 or f["n"] % 16:
        raise EmuFault(f"{op}: N = {f['n']} is not a valid tcgen05.mma N for M = 128")
    if isinstance(a, Mem):
        a_src = ("tmem", _tmem_address(w, a))
    else:
        a_src = ("smem", _ur(w, a.index) | _ur(w, a.index + 1) << 32)
    desc_b = _ur(w, b.index) | _ur(w, b.index + 1) << 32
    d_addr = _tmem_address(w, d)
    if ws and d_addr >> 16:
        raise EmuFault(f"{op}.WS: D's lane {d_addr >> 16} (the .ws layouts start at lane 0)")
    zero_mask = 0
    if mask_op is not None:
        zero_mask = _ur(w, mask_op.index) | _ur(w, mask_op.index + 1) << 32
        if zero_mask & 0xC000_0070_0000_0000:
            raise EmuFault(f"{op}.WS: reserved bits of the zero-column mask descriptor 0x{zero_mask:016x}")
    enable = bool(np.atleast_1d(w.pred(enable_op))[0])
    keep = np.ones(f["m"], dtype=bool)
    if lanes_op is not None:
        disabled = sum(_ur(w, lanes_op.index + i) << (32 * i) for i in range(4))
        keep = np.array([not disabled >> i & 1 for i in range(f["m"])])
    tm = tensor_memory(w)
    cta = SimpleNamespace(cta=w.cta)         # shared memory, read when the commit completes it
    tm.pending.setdefault(w.index, []).append(
        lambda: _compute(tm, op, f, a_src, desc_b, d_addr, enable, scale, keep, cta, zero_mask,
                         (collector_usage(a), collector_usage(b))))
