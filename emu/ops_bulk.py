"""Semantics of sm_90's bulk-copy unit as ptxas 13.5 writes the PTX ISA's `cp.async.bulk`
family ("Data Movement: cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch,
cp.async.bulk.commit_group/wait_group"), and the ELECT that picks the lane each copy is
issued for.

* `ELECT Pd, URd, Pm`: among the lanes whose guard holds and whose Pm is true, the lowest
  is the leader: Pd true there and false in the others, URd its lane number.
* `UBLKCP.<dst>.<src> [URa], [URb], URc [, desc[URd]]`: URc * 16 bytes. `.S.G` / `.S.S`:
  the uniform pair at URa holds the shared::cluster destination and the mbarrier's
  address, URb the global (a pair) or shared::cta source; the bytes land, then complete a
  transaction of their count on the mbarrier (emu.ops_syncs's object). `.G.S`: URa the
  global destination (a pair), URb the shared::cta source (a bulk-group copy).
* `UBLKCP.S.G.MULTICAST [URa], [URb], URc` (`.multicast::cluster`, sm_90a/sm_100a): URc's
  low half the count, its high half the 16-bit ctaMask; the PTX ISA: the bytes land at the
  same CTA-relative offset in the shared memory of each CTA of the cluster whose bit (its
  rank) is set, and the mbarrier's transaction completes at that same offset in each.
* `UBLKCP.G.S.DST_G_BYTE_MASK [URa], [URb], URc` (`.cp_mask`, sm_100+): URc's high half the
  16-bit byteMask; the PTX ISA: byte i of every 16-byte chunk of the source is copied where
  bit i is set, the destination's other bytes keep their value.
* `.ignore_oob` (PTX 9.2) is the plain `UBLKCP.S.G` (ptxas 13.5.37 drops ignoreBytesLeft/
  Right), so the instruction itself tolerates it: up to 15 bytes of a global source at
  either end of the copy may lie outside the allocation that holds the rest; those
  bytes of the destination keep their value (the PTX ISA: indeterminate). More faults.
* `UBLKRED.<dst>.S.<op>[.<type>]`: the same with each element combined into the
  destination (ADD/MIN/MAX/INC/DEC/AND/OR/XOR on 32-bit words by default, `.U64`/`.S64`
  on 64-bit ones, `.S32` signed).
* `UMEMSETS.64 [URa], URZ, URc` (st.bulk, sm_100+): URc 8-byte zero words into shared::cta
  memory at URa.
* `UBLKPF.L2 [URa], URb` (prefetch), `UTMACMDFLUSH` (commit_group), `UTMACCTL.PF [URa]`
  (prefetch.tensormap: the descriptor at the generic address into the cache),
  `UTMACCTL.IV` (fence.proxy.tensormap::generic.acquire), `UTMAPF.L2` (the tensor
  prefetch): nothing to model.
* `UTMALDG`/`UTMASTG`/`UTMAREDG` (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor):
  an EmuFault naming the opcode (the tensor map's format is not public).

The unit's copies complete when they are issued here (an order the PTX ISA allows: the
bulk-group waits, DEPBAR.LE SB0, and the mbarrier waits then find them done). The size's
unit (16 bytes) is read off ptxas's code (1024 bytes: URc 0x40); a model from the manual
and ptxas's code, not hardware-checked.
"""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Reg

from . import fp
from .errors import EmuFault
from .memory import check_alignment
from .lanes import PerWarp
from .ops_memory import _load, _store
from .ops_syncs import _read64, _write64, update
from .registry import semantics

M32 = 0xFFFFFFFF
EDGE_SLACK = 15         # a global source's bytes that may lie past its allocation, at each end
SPACES = {"S": "shared", "G": "global"}


def _ureg(mem) -> Reg:
    r = mem.ubase if mem.ubase is not None else mem.base
    if r is None or r.file != "UR":
        raise EmuFault(f"bulk-copy address {mem} is not a uniform register")
    return r


def _uvalue(w, r: Reg, lane: int) -> int:
    return int(np.broadcast_to(w.r(r), (w.width,))[lane]) if not r.is_zero else 0


def _upair(w, r: Reg, lane: int) -> int:
    return _uvalue(w, r, lane) | _uvalue(w, Reg("UR", r.index + 1), lane) << 32


def _one_lane(w, lane: int) -> np.ndarray:
    sel = np.zeros(w.width, bool)
    sel[lane] = True
    return sel


def _endpoints(w, s, lane: int):
    """(destination space, its address, mbarrier address or None, source space, its
    address, bytes) of a UBLKCP/UBLKRED."""
    ins = s.ins
    dst_space, src_space = (SPACES[m] for m in ins.modifiers[:2])
    dst, src, size = ins.operands[:3]
    count = _uvalue(w, size, lane)
    if _MASKED.intersection(ins.modifiers):       # the mask in the high half
        count &= 0xFFFF
    nbytes = count * 16
    d = _upair(w, _ureg(dst), lane) + dst.offset
    bar = None
    if dst_space == "shared":        # a pair: the shared::cluster destination, the mbarrier
        bar, d = d >> 32, (d & M32)
    s_addr = (_upair(w, _ureg(src), lane) if src_space == "global" else _uvalue(w, _ureg(src), lane) & M32) \
        + src.offset
    return dst_space, d, bar, src_space, s_addr, nbytes


def _bytes(w, space: str, at: int, n: int, lane: int) -> np.ndarray:
    if not n:
        return np.zeros(0, np.uint8)
    return np.asarray(_load(w, space, np.array([at] * w.width, np.uint64), n, _one_lane(w, lane))[0])


def _put(w, space: str, at: int, raw: np.ndarray, lane: int) -> None:
    if len(raw):
        _store(w, space, np.array([at] * w.width, np.uint64), np.ascontiguousarray(raw[None, :]),
               _one_lane(w, lane))


def _complete(w, bar: int | None, nbytes: int, lane: int) -> None:
    if bar is None:
        return
    bars = np.array([bar] * w.width, np.uint64)
    _write64(w, bars, lane, update(_read64(w, bars, lane), 0, -nbytes, False))


def _combine(op: str, kind: str, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    if op == "ADD":
        return old + new
    if op in ("MIN", "MAX"):
        if kind == "s":
            o, n = old.view(f"i{old.itemsize}"), new.view(f"i{old.itemsize}")
            return (np.minimum(o, n) if op == "MIN" else np.maximum(o, n)).view(old.dtype)
        return np.minimum(old, new) if op == "MIN" else np.maximum(old, new)
    if op == "AND":
        return old & new
    if op == "OR":
        return old | new
    if op == "XOR":
        return old ^ new
    if op == "INC":
        return np.where(old >= new, 0, old + 1).astype(old.dtype)
    if op == "DEC":
        return np.where((old == 0) | (old > new), new, old - 1).astype(old.dtype)
    raise EmuFault(f"UBLKRED operation {op} not modelled")


_FLOATS = {"F16": ("f16", 2), "BF16": ("bf16", 2), "F32": ("f32", 4), "F64": ("f64", 8)}


def _reduce_float(op: str, kind: str, old_raw: np.ndarray, new_raw: np.ndarray) -> np.ndarray:
    """Element-wise ADD (rounded to nearest even) / MIN / MAX (a NaN loses, as fmin) of
    F16/BF16/F32/F64 elements: the exact f64 result rounded once to the element type.
    Subnormals kept (PTX: multimem's half adds are `.noftz`; for f32 not checked on a GPU)."""
    if kind in ("f16", "bf16"):
        x, y = (fp.half_to_f64(r.view(np.uint16), kind) for r in (old_raw, new_raw))
    else:
        dtype = np.float32 if kind == "f32" else np.float64
        x, y = (r.view(dtype).astype(np.float64) for r in (old_raw, new_raw))
    if op == "ADD":
        r = fp.add_rto(x, y) if kind != "f64" else x + y
    elif op in ("MIN", "MAX"):
        r = np.fmin(x, y) if op == "MIN" else np.fmax(x, y)
    else:
        raise EmuFault(f"UBLKRED operation {op} on {kind} not modelled")
    if kind in ("f16", "bf16"):
        return fp.f64_to_half_bits(np.asarray(r, np.float64), kind).astype(np.uint16).view(np.uint8)
    if kind == "f32":
        return fp.narrow_f64(np.asarray(r, np.float64)).astype(np.float32).view(np.uint8)
    return np.asarray(r, np.float64).view(np.uint8)


def _reduce(mods, old_raw: np.ndarray, new_raw: np.ndarray) -> np.ndarray:
    op = mods[2]
    ty = next((m for m in mods[3:] if m in ("U32", "S32", "U64", "S64") or m in _FLOATS), "U32")
    if ty in _FLOATS:
        return _reduce_float(op, _FLOATS[ty][0], old_raw, new_raw)
    dtype = np.uint64 if ty.endswith("64") else np.uint32
    out = _combine(op, ty[0].lower(), old_raw.view(dtype), new_raw.view(dtype))
    return out.astype(dtype).view(np.uint8)


def _per_warp_once(w, mask) -> int | None:
    """The lane whose uniform registers an instruction of the uniform datapath reads (it runs
    once for the warp), or None where no lane runs it."""
    if not w.per_warp:
        raise PerWarp()
    return int(np.argmax(mask)) if mask.any() else None


_MASKED = frozenset({"MULTICAST", "DST_G_BYTE_MASK"})
CLUSTER_OFFSET = (1 << 24) - 1      # a shared::cluster address: rank << 24 | CTA-relative offset


@semantics("UBLKCP", "UBLKRED", vector=True)
def op_bulk_copy(w, s, active, mask):
    lane = _per_warp_once(w, mask)
    if lane is None:
        return
    dst_space, d, bar, src_space, src, n = _endpoints(w, s, lane)
    mods = s.ins.modifiers
    if s.ins.opcode == "UBLKCP" and (dst_space, src_space) == ("shared", "global") \
            and "MULTICAST" not in mods and n:
        # `.ignore_oob` is this same instruction (ptxas 13.5.37): a source chunk partly
        # past its allocation reads what is inside; the destination's other bytes keep
        # their value (the PTX ISA: indeterminate)
        check_alignment(np.array([src], np.uint64), 16, "global")
        raw, first, end = w.launch.gmem.load_edges_outside(src, n, EDGE_SLACK)
        if first or end < n:
            old = _bytes(w, dst_space, d, n, lane)
            raw[:first], raw[end:] = old[:first], old[end:]
    else:
        raw = _bytes(w, src_space, src, n, lane)
    high = _uvalue(w, s.ins.operands[2], lane) >> 16 & 0xFFFF
    if s.ins.opcode == "UBLKRED":
        raw = _reduce(mods, _bytes(w, dst_space, d, n, lane).copy(), raw.copy())
    elif "DST_G_BYTE_MASK" in mods:           # byte i of each 16-byte chunk where bit i is set
        keep = np.array([high >> (k % 16) & 1 for k in range(n)], bool)
        raw = np.where(keep, raw, _bytes(w, dst_space, d, n, lane)).astype(np.uint8)
    if "MULTICAST" in mods:
        size = w.m.launch.cluster_size
        if high >> size:
            raise EmuFault(f"UBLKCP.MULTICAST CTA mask {high:#06x} names a CTA outside the cluster "
                           f"of {size}")
        for rank in range(size):
            if high >> rank & 1:
                _put(w, "shared", (d & CLUSTER_OFFSET) | rank << 24, raw, lane)
                _complete(w, (bar & CLUSTER_OFFSET) | rank << 24, n, lane)
        return
    _put(w, dst_space, d, raw, lane)
    _complete(w, bar, n, lane)


@semantics("UGETNEXTWORKID", vector=True)
def op_get_next_work_id(w, s, active, mask):
    """`UGETNEXTWORKID.SELFCAST|BROADCAST [URa], [URa+1]` (clusterlaunchcontrol.try_cancel,
    sm_100+; BROADCAST: `.multicast::cluster::all`, every CTA of the cluster):
    asks to cancel a cluster not yet launched and writes the 16-byte response at the shared
    address URa, completing 16 transaction bytes on the mbarrier at URa+1. The emulator's
    launches start every CTA they will run, so nothing is left to cancel: the response is the
    PTX ISA's failed request (`is_canceled` false, all 128 bits zero), which the hardware may
    always answer."""
    lane = _per_warp_once(w, mask)
    if lane is None:
        return
    mods = tuple(s.ins.modifiers)
    if mods not in (("SELFCAST",), ("BROADCAST",)):
        raise EmuFault(f"{s.ins.opcode}.{'.'.join(mods)} not modelled")
    response = _uvalue(w, _ureg(s.ins.operands[0]), lane) + s.ins.operands[0].offset
    bar = _uvalue(w, _ureg(s.ins.operands[1]), lane) + s.ins.operands[1].offset
    if mods == ("BROADCAST",):
        # `.multicast::cluster::all`: the response, and its 16 transaction bytes, reach the
        # same offsets in every CTA of the cluster (shared::cluster addresses, rank << 24)
        low = (1 << 24) - 1
        for rank in range(w.m.launch.cluster_size):
            _put(w, "shared", (response & low) | rank << 24, np.zeros(16, np.uint8), lane)
            _complete(w, (bar & low) | rank << 24, 16, lane)
        return
    _put(w, "shared", response & M32, np.zeros(16, np.uint8), lane)
    _complete(w, bar & M32, 16, lane)


@semantics("UMEMSETS", vector=True)
def op_shared_memset(w, s, active, mask):
    """`UMEMSETS.64 [URa], URb, URc` (st.bulk, sm_100+): URc 8-byte words, each the value of
    the pair URb (ptxas: URZ, the PTX's initval 0), from the shared::cta address URa (the
    size's unit read off ptxas's code: 128 bytes are URc 0x10)."""
    lane = _per_warp_once(w, mask)
    if lane is None:
        return
    mem, value, count = s.ins.operands[:3]
    at = (_uvalue(w, _ureg(mem), lane) + mem.offset) & M32
    word = _upair(w, value, lane) if not value.is_zero else 0
    words = _uvalue(w, count, lane)
    _put(w, "shared", at, np.full(words, word, np.uint64).view(np.uint8), lane)


@semantics("UBLKPF", "UTMACMDFLUSH", "UTMACCTL", "UTMAPF", vector=True)
def op_bulk_nothing(w, s, active, mask):
    """The L2 and tensor-map prefetches (UBLKPF, UTMAPF: a hint, whatever the tensor map
    holds), the tensor-map cache's prefetch and invalidation (UTMACCTL.PF/.IV: the emulator
    keeps no such cache, every copy would read the map from memory) and the commit of bulk
    groups change no value."""
    return None


# The tensor copies read the tensor map (CUtensorMap, 128 bytes the driver's
# cuTensorMapEncode* writes): its layout is not public, so the copy it describes cannot be
# modelled; such a kernel stops here, by name, rather than running on wrong data.
TENSOR_COPIES = {"UTMALDG": "cp.async.bulk.tensor (global -> shared)",
                 "UTMASTG": "cp.async.bulk.tensor (shared -> global)",
                 "UTMAREDG": "cp.reduce.async.bulk.tensor"}


@semantics(*TENSOR_COPIES, vector=True)
def op_tensor_copy(w, s, active, mask):
    op = s.ins.opcode
    raise EmuFault(f"{op} ({TENSOR_COPIES[op]}) not modelled: the tensor map's (CUtensorMap) "
                   "format is the driver's and not public")


@semantics("ELECT", vector=True)
def op_elect(w, s, active, mask):
    if not w.per_warp:
        raise PerWarp()
    pd, ud, pm = s.ins.operands
    candidates = mask & np.broadcast_to(w.pred(pm), (w.width,))
    leader = np.zeros(w.width, bool)
    if candidates.any():
        first = int(np.argmax(candidates))
        leader[first] = True
        if not ud.is_zero:
            w.w(ud, np.full(w.width, first, np.uint32), mask)
    w.wp(pd, leader, mask)


@semantics("REDAS", vector=True)
def op_redas(w, s, active, mask):
    """`REDAS.<op>[.S32|.64] [Ra.64], Rb` (red.async…mbarrier::complete_tx::bytes): lane by
    lane, the reduction of Rb into the shared::cluster word at Ra, then the word's bytes
    complete a transaction on the mbarrier at Ra+1 (emu.ops_syncs's object)."""
    from .ops_memory import _atom_type, _scalar_apply
    ins = s.ins
    mem, b_op = ins.operands[:2]
    mods = ins.modifiers
    op = mods[0]
    ty = _atom_type(mods)
    size = 8 if ty in ("64", "S64", "U64") else 4
    base = mem.base
    addrs = np.broadcast_to(w.r(base), (w.width,)).astype(np.uint64) + np.uint64(mem.offset)
    bars = np.broadcast_to(w.r(Reg(base.file, base.index + 1)), (w.width,)).astype(np.uint64)
    bvals = np.broadcast_to(w.r64(b_op) if size == 8 else w.r(b_op), (w.width,))
    for lane in np.nonzero(mask)[0]:
        lane = int(lane)
        old = int.from_bytes(_bytes(w, "shared", int(addrs[lane]), size, lane).tobytes(), "little")
        new = _scalar_apply(op, ty, old, int(bvals[lane]), None)
        _put(w, "shared", int(addrs[lane]), np.frombuffer(new.to_bytes(size, "little"), np.uint8), lane)
        _complete(w, int(bars[lane]), size, lane)
