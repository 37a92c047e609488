"""Tensor memory (sm_100a's tcgen05, PTX ISA "Tensor Memory") and the SASS forms ptxas 13.5
writes for tcgen05.alloc/dealloc/relinquish_alloc_permit/ld/st/wait/fence/commit.

This is a model written from the manual and from the code ptxas writes around these
instructions; it has not been checked against silicon.

The memory: per CTA 128 lanes x 512 columns of 32-bit cells. An address (the value
tcgen05.alloc writes to shared memory) holds the lane in bits 31..16 and the column in bits
15..0. Warp w of a CTA may reach lanes 32*(w%4) .. 32*(w%4)+31 only (the manual's access
restriction); anything else is a fault here.

* `UTCATOMSWS.FIND_AND_SET.ALIGN UPd, URa, URb`: the allocator. The CTA's columns come in
  sixteen 32-column granules; URb granules (a power of two, ptxas writes ncols/32) are taken
  at the lowest free place aligned to their count, URa gets the first granule's number and
  UPd is true, or UPd is false (no room) and URa is left. After the CTA relinquished its
  permit an allocation is a fault (the manual: undefined behaviour).
* `UTCATOMSWS.AND URZ, URb`: the granule bitmap ANDed with URb (ptxas passes the complement
  of the granules a dealloc frees).
* `UVIRTCOUNT.DEALLOC.SMPOOL n`: relinquish_alloc_permit (recorded; later allocations fault).
* `STTM[.shape][.xN][.EXPAND16BIT] tmem[URa+imm], Rb` / `LDTM[...] Rd, tmem[URa+imm]`:
  32x32b only (the plain form): lane i of the warp reaches tensor lane lane(a)+i and its
  register j column col(a)+j; with .PACK16BIT (ld.pack::16b) register j holds the low halves
  of columns 2j and 2j+1, with .EXPAND16BIT (st.unpack::16b) the halves of register j go to
  columns 2j and 2j+1 (their high halves zero: the manual leaves them unspecified). The
  16-lane shapes (16dp64bit...) are not modelled: a fault names them.
* `FENCE.VIEW.ASYNC.T` (tcgen05.wait::st; ops_int's no-op) and the waits and fences:
  nothing (loads and stores take effect at once here).
* `UTCBAR[.MULTICAST] [URa], URb[, URc]` (tcgen05.commit): the warp's earlier asynchronous
  tcgen05 operations (`TensorMemory.pending`: emu.ops_utcmma's MMAs) complete here, in issue
  order, then the commit is one arrive-on of the mbarrier at URa (URc: the CTA mask of
  .multicast: the mbarrier at the same offset in each CTA of the cluster the mask names).
* `UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN` (tcgen05.alloc.cta_group::2, run by the even CTA of
  a pair, ranks 2k and 2k+1 of a cluster launch): the lowest aligned place free in both
  CTAs' tensor memory, taken in both; `UTCATOMSWS.2CTA.AND` ANDs both bitmaps. The rest of
  the pair's allocation is ordinary code (isel/tcgen05.py's `tmem_alloc_pair`): the granule
  sent to the odd CTA by STAS on its partition mbarrier, which the driver's at-entry
  fragment TMEM_CTA2 (EIATTR_AT_ENTRY_FRAGMENTS 7) prepares. That fragment is the driver's
  and not public; `at_entry` models its effect as ptxas's code needs it: each CTA's
  mbarrier at the partition's +0x8 expects one arrival, the odd CTA's in phase 0 (the even
  one's first granule completes it) and the even CTA's with phase 0 already complete (its
  first allocation has no earlier granule to wait for), the phase words at +0x10 zero.
* `UTCCP.T.S[.<shape>][.2CTA] tmem[URa], gdesc[URb]` (tcgen05.cp, `op_utccp`): queued on the
  issuing warp and run at its commit, in order with its MMAs: the descriptor's rows x 8 (or
  4) 32-bit words, read as the MMA operands' K-major canonical layout, into the shape's lanes
  (128x256b / 128x128b: lanes lane(a)+r; 4x256b: lane(a)+32r; the warpx2/warpx4 multicasts:
  the PTX ISA's replicas), word j into column col(a)+j; `.2CTA`: each CTA of the pair from
  its own shared memory into its own tensor memory. Decompression (.U6x16P32/.U4x16P64) and
  UTCSHIFT are not modelled: a fault.
* UTC*MMA.2CTA: emu/ops_utcmma.py (M = 256).
"""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Mem, Reg

from .errors import EmuFault
from .lanes import SHARED_RANK_SHIFT, reg
from .ops_memory import address
from .ops_syncs import _read64, _write64, update
from .registry import semantics

LANES, COLUMNS, GRANULE = 128, 512, 32
GRANULES = COLUMNS // GRANULE


class TensorMemory:
    """One CTA's tensor memory and its allocator's state."""

    def __init__(self):
        self.cells = np.zeros((LANES, COLUMNS), np.uint32)
        self.granules = 0             # bit g: granule g allocated
        self.relinquished = False
        # warp index -> its asynchronous operations (emu.ops_utcmma's MMAs) not yet completed
        self.pending: dict[int, list] = {}

    def allocate(self, count: int, peers=()) -> int | None:
        """The first of `count` granules taken at the lowest aligned place free here and in
        `peers` (the CTA pair's other tensor memory), or None."""
        if count < 1 or count > GRANULES or count & (count - 1):
            raise EmuFault(f"tensor-memory allocation of {count} granules (a power of two <= 16)")
        want = (1 << count) - 1
        held = self.granules
        for t in peers:
            held |= t.granules
        for first in range(0, GRANULES, count):
            if not held & (want << first):
                for t in (self, *peers):
                    t.granules |= want << first
                return first
        return None


def tensor_memory(w) -> TensorMemory:
    cta = w.cta
    tm = getattr(cta, "tmem", None)
    if tm is None:
        tm = cta.tmem = TensorMemory()
    return tm


def _single_cta(s) -> None:
    if "2CTA" in s.ins.modifiers:
        raise EmuFault(f"{s.ins.opcode}.2CTA: cta_group::2 needs a CTA pair (not launched here)")


def peer_cta(w, opcode: str = "UTCATOMSWS"):
    """The other CTA of w's pair (cluster ranks 2k, 2k+1)."""
    m = w.m
    index = w.wid // m.warps_per_cta
    rank = int(m.cta_rank[index]) if m.launch.cluster_size > 1 else 0
    if rank ^ 1 >= m.launch.cluster_size:
        raise EmuFault(f"{opcode}.2CTA: CTA rank {rank} has no peer in a cluster of "
                       f"{m.launch.cluster_size} (cta_group::2 needs a cluster launch of CTA pairs)")
    return m.ctas[index - rank + (rank ^ 1)]


def peer_memory(w, opcode: str = "UTCATOMSWS") -> TensorMemory:
    """The tensor memory of the other CTA of w's pair."""
    peer = peer_cta(w, opcode)
    tm = getattr(peer, "tmem", None)
    if tm is None:
        tm = peer.tmem = TensorMemory()
    return tm


# the CTA pair's objects in the tcgen05 partition (isel/tcgen05.py: PAIR_MBARRIER)
TMEM_CTA2_FRAGMENT, PAIR_MBARRIER = 7, 0x8


def at_entry(m, data: np.ndarray) -> None:
    """The driver's at-entry fragment TMEM_CTA2 as this model has it (the docstring above):
    the pair's mbarriers in every CTA's shared memory `data`."""
    if TMEM_CTA2_FRAGMENT not in getattr(m.program, "at_entry_fragments", ()):
        return
    from ptx2sass.encoder.arch import arch_info
    from .ops_syncs import pack
    base = arch_info(m.program.arch).tmem_partition_offset + PAIR_MBARRIER
    for index in range(len(m.ctaids)):
        rank = int(m.cta_rank[index]) if m.launch.cluster_size > 1 else 0
        word = pack(1, 1, 1 if rank % 2 == 0 else 0, 0)
        at = index * m.shared_stride + base
        data[at:at + 8] = np.frombuffer(word.to_bytes(8, "little"), np.uint8)


def _uniform(w, op) -> int:
    return int(np.atleast_1d(w.r(op))[0])


@semantics("UTCATOMSWS")
def op_utcatomsws(w, s, active, mask):
    if not mask.any():
        return
    tm = tensor_memory(w)
    mods, ops = s.ins.modifiers, s.ins.operands
    both = [tm, peer_memory(w)] if "2CTA" in mods else [tm]
    if "FIND_AND_SET" in mods:
        if any(t.relinquished for t in both):
            raise EmuFault("tcgen05.alloc after the CTA relinquished its allocation permit")
        p, d, b = ops
        first = tm.allocate(_uniform(w, b), both[1:])
        if first is not None:
            w.w(d, np.full(w.width, first, np.uint32), mask)
        w.wp(p, np.full(w.width, first is not None), mask)
        return
    if "AND" in mods:
        d, b = ops
        for t in both:
            t.granules &= _uniform(w, b) & ((1 << GRANULES) - 1)
        if not (isinstance(d, Reg) and d.is_zero):
            w.w(d, np.full(w.width, tm.granules, np.uint32), mask)
        return
    raise EmuFault(f"unsupported UTCATOMSWS form {'.'.join(mods)}")


@semantics("UVIRTCOUNT")
def op_uvirtcount(w, s, active, mask):
    if "DEALLOC" not in s.ins.modifiers:
        raise EmuFault(f"unsupported UVIRTCOUNT form {'.'.join(s.ins.modifiers)}")
    if mask.any():
        tensor_memory(w).relinquished = True


def _shape(s) -> tuple[int, bool]:
    """(registers, 16-bit packing) of a 32x32b LDTM/STTM; other shapes fault."""
    count, packed = 1, False
    for m in s.ins.modifiers:
        if m.startswith("x") and m[1:].isdigit():
            count = int(m[1:])
        elif m in ("PACK16BIT", "EXPAND16BIT"):
            packed = True
        elif m.startswith("16dp"):
            raise EmuFault(f"{s.ins.opcode}.{m}: the 16-lane tensor-memory shapes are not modelled")
        else:
            raise EmuFault(f"unsupported {s.ins.opcode} form {m}")
    return count, packed


def _window(w, mem: Mem, count: int) -> tuple[int, int]:
    """(first tensor lane, first column) this warp reaches; faults outside its lanes or
    outside the memory."""
    a = int(address(w, mem, False)[0])
    lane, col = a >> 16, a & 0xFFFF
    base = 32 * (w.index % 4)
    if lane != base:
        raise EmuFault(f"warp {w.index} reaches tensor-memory lanes {base}..{base + 31} only "
                       f"(address 0x{a:08x} names lane {lane})")
    if col + count > COLUMNS:
        raise EmuFault(f"tensor-memory columns {col}..{col + count - 1} beyond {COLUMNS}")
    return lane, col


def _check_allocated(tm: TensorMemory, col: int, count: int) -> None:
    for g in range(col // GRANULE, (col + count - 1) // GRANULE + 1):
        if not tm.granules >> g & 1:
            raise EmuFault(f"tensor-memory columns {g * GRANULE}..{g * GRANULE + 31} are not allocated")


def _reach(w, s, mask, mem: Mem) -> tuple[np.ndarray, int, int, bool]:
    """(the warp's 32 tensor lanes, first column, registers, 16-bit packing) of an
    LDTM/STTM, after the checks: every lane present, its lanes, allocated columns."""
    count, packed = _shape(s)
    if not mask.all():
        raise EmuFault(f"{s.ins.opcode} needs every lane of the warp (.sync.aligned)")
    columns = 2 * count if packed else count
    tm = tensor_memory(w)
    lane, col = _window(w, mem, columns)
    _check_allocated(tm, col, columns)
    return tm.cells[lane:lane + 32], col, count, packed


@semantics("STTM")
def op_sttm(w, s, active, mask):
    mem, src = s.ins.operands
    rows, col, count, packed = _reach(w, s, mask, mem)
    for j in range(count):
        v = np.broadcast_to(w.r(reg("R", src.index + j)), (32,)).astype(np.uint32)
        if packed:
            rows[:, col + 2 * j] = v & 0xFFFF
            rows[:, col + 2 * j + 1] = v >> 16
        else:
            rows[:, col + j] = v


@semantics("LDTM")
def op_ldtm(w, s, active, mask):
    dst, mem = s.ins.operands
    rows, col, count, packed = _reach(w, s, mask, mem)
    for j in range(count):
        if packed:
            v = (rows[:, col + 2 * j] & 0xFFFF) | (rows[:, col + 2 * j + 1] & 0xFFFF) << 16
        else:
            v = rows[:, col + j]
        w.w(reg("R", dst.index + j), v.astype(np.uint32), mask)


@semantics("UTCBAR")
def op_utcbar(w, s, active, mask):
    """tcgen05.commit (`.2CTA`: cta_group::2's, the same here: the pair's MMAs are not
    modelled): the warp's pending operations complete, then one arrive-on of the mbarrier at
    the shared::cluster address, or with .MULTICAST of the mbarrier at its offset in each
    CTA whose rank the mask names (ranks outside the cluster: none)."""
    if not mask.any():
        return
    for complete in tensor_memory(w).pending.pop(w.index, ()):
        complete()
    lane = int(np.argmax(mask))
    addrs = address(w, s.ins.operands[0], False)
    targets = [int(addrs[lane])]
    if "MULTICAST" in s.ins.modifiers:
        ctas = _uniform(w, s.ins.operands[2])
        offset = targets[0] & ((1 << SHARED_RANK_SHIFT) - 1)
        targets = [offset | rank << SHARED_RANK_SHIFT for rank in range(max(1, w.m.launch.cluster_size))
                   if ctas >> rank & 1]
    for target in targets:
        at = np.array(addrs, dtype=np.uint64, copy=True)
        at[lane] = target
        _write64(w, at, lane, update(_read64(w, at, lane), 1, 0, False))


# UTCCP's shape suffix -> (rows, 32-bit words per row, the tensor lanes row r goes to, as
# offsets from the address's lane): PTX ISA tcgen05.cp's shapes and warp multicasts
def _copy_lanes(suffix: str):
    r = np.arange(128)
    return {"": (128, 8, [r]), "4dp256bit": (4, 8, [np.arange(4) * 32]),
            "128dp128bit": (128, 4, [r]),
            "2x64dp128bit_lw02_lw13": (64, 4, [np.arange(64), np.arange(64) + 64]),
            "2x64dp128bit_lw01_lw23": (64, 4, [64 * (np.arange(64) // 32) + np.arange(64) % 32,
                                               64 * (np.arange(64) // 32) + np.arange(64) % 32 + 32]),
            "4x32dp128bit": (32, 4, [np.arange(32) + 32 * q for q in range(4)])}.get(suffix)


def _copy(tm, cta, opcode, suffix, desc, addr) -> None:
    """One UTCCP, run when the issuing warp's commit completes it: the descriptor's rows x
    words matrix (K-major canonical layout, the MMA operands' `emu.ops_gmma._offsets` with
    32-bit elements) into tensor memory, row r to the shape's lanes, word j to column col+j."""
    from .ops_gmma import _offsets
    from .ops_utcmma import wgmma_descriptor
    rows, words, lanes = _copy_lanes(suffix)
    lane, col = addr >> 16, addr & 0xFFFF
    _check_allocated(tm, col, words)
    at = _offsets(np.arange(rows), words, 4, wgmma_descriptor(desc), False)
    data = cta.shared.data
    if at.max() + 4 > len(data):
        raise EmuFault(f"{opcode}: the descriptor reads shared memory at 0x{int(at.max()):x}, beyond "
                       f"its {len(data)} bytes")
    values = np.zeros(at.shape, np.uint32)
    for b in range(4):
        values |= data[at + b].astype(np.uint32) << np.uint32(8 * b)
    for where in lanes:
        if lane + where.max() >= LANES or col + words > COLUMNS:
            raise EmuFault(f"{opcode}: lanes/columns beyond tensor memory")
        tm.cells[lane + where, col:col + words] = values


@semantics("UTCCP")
def op_utccp(w, s, active, mask):
    """tcgen05.cp (`UTCCP.T.S[.<shape>][.2CTA] tmem[URa], gdesc[URb]`): queued on the
    issuing warp like an MMA (the tensor pipe runs them in order) and completed at its commit.
    `.2CTA`: each CTA of the pair copies from its own shared memory into its own tensor
    memory (same descriptor and address). Decompression (.U6x16P32/.U4x16P64) is not
    modelled (a fault)."""
    ins = s.ins
    mods = [m for m in ins.modifiers if m not in ("T", "S", "2CTA")]
    if any(m.startswith(("U6x", "U4x")) for m in mods) or len(mods) > 1 or _copy_lanes(mods[0] if mods else "") is None:
        raise EmuFault(f"UTCCP.{'.'.join(ins.modifiers)}: not modelled")
    if not mask.any():
        return
    mem, b = ins.operands[:2]
    base = mem.ubase
    addr = ((_uniform(w, base) if base is not None and not base.is_zero else 0) + mem.offset) & 0xFFFFFFFF
    index = b.ubase.index if isinstance(b, Mem) else b.index
    desc = _uniform(w, Reg("UR", index)) | _uniform(w, Reg("UR", index + 1)) << 32
    suffix = mods[0] if mods else ""
    targets = [(tensor_memory(w), w.cta)]
    if "2CTA" in ins.modifiers:
        peer = peer_cta(w, "UTCCP")
        targets.append((peer_memory(w, "UTCCP"), peer))
    queue = tensor_memory(w).pending.setdefault(w.index, [])
    for tm, cta in targets:
        queue.append(lambda tm=tm, cta=cta: _copy(tm, cta, "UTCCP", suffix, desc, addr))
