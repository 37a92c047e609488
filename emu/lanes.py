"""The interface semantics handlers program against: operand reads and writes over a set of
lanes of a `machine.Machine`.

A `Lanes` object stands for the lanes that execute one instruction together: every lane of
the warps (of any CTA of the batch) that stand at the same PC (`machine.Group`), or the 32
lanes of one warp (`machine.Warp`, which adds the per-warp scheduling state). Its reads
return one value per lane, shape (width,), or a one-element array where the value is the
same for every lane (immediates, constants, uniform registers of a single warp), so that
NumPy broadcasting does the rest; its writes take such arrays and a boolean (width,) mask.

Registers live in the machine as arrays over all lanes of the batch (general and predicate
registers per lane, uniform ones per warp); a group whose lanes are one contiguous run reads
them as views, any other group gathers.
"""
from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from ptx2sass.encoder.model import ConstRef, Imm, Reg

from .errors import EmuFault
from .memory import _gather, _scatter, check_alignment

FULL = 0xFFFFFFFF
_LITTLE = sys.byteorder == "little"     # a uint64 array viewed as uint32 pairs: low word first
# entries of the per-program immediate and per-run constant caches (id -> (operand, value));
# past it, values are worked out each time
OPERAND_CACHE_LIMIT = 1 << 16
U32, U64, I64 = np.uint32, np.uint64, np.int64
# Lane states.
READY, EXITED, AT_BSYNC, AT_WARPSYNC, AT_BAR = 0, 1, 2, 3, 4


_ALL: dict[int, np.ndarray] = {}
_TRUE = np.ones(1, dtype=bool)         # a run's first lane starts a warp
_TRUE.flags.writeable = False


def all_lanes(n: int) -> np.ndarray:
    """A read-only all-true mask of n lanes (shared: `mask is w.active` tells "every lane")."""
    a = _ALL.get(n)
    if a is None:
        a = _ALL[n] = np.ones(n, dtype=bool)
        a.flags.writeable = False
    return a


class PerWarp(Exception):
    """Raised by a width-agnostic handler (before any side effect) for a form it only handles
    one warp at a time; the machine then runs it once per warp of the group."""


_REGS: dict[tuple[str, int], Reg] = {}


def widen(values: np.ndarray, n: int) -> np.ndarray:
    """`values` as `n` lanes, for reading: the array itself when it has them, its one value
    repeated when it is a single (uniform) value; as `np.broadcast_to`, at a fraction of its
    cost per call."""
    if values.shape == (n,):
        return values
    if values.shape == (1,):
        return values.repeat(n)
    return np.broadcast_to(values, (n,))


def reg(file: str, index: int) -> Reg:
    """A plain register operand (shared instances: operands are immutable)."""
    r = _REGS.get((file, index))
    if r is None:
        r = _REGS[(file, index)] = Reg(file, index)
    return r


class Lanes:
    """Reads and writes over the lanes `idx` (sorted global lane numbers) of machine `m`;
    `sl` is the same lanes as a slice when they are contiguous, `warp` the warp index when
    they all belong to one warp (else -1)."""

    per_warp = False          # True for a machine.Warp: exactly one warp's 32 lanes

    def __init__(self, m, idx: np.ndarray, warp: int = -1):
        self.m = m
        self.launch = m.launch
        self.idx = idx
        n = len(idx)
        self.width = n
        first = int(idx[0]) if n else 0
        self.sl = slice(first, first + n) if n and int(idx[-1]) - first + 1 == n else None
        self.lane = first if n == 1 else -1           # the lane, for single-lane forms
        self.active = all_lanes(n)
        if warp < 0 and n and (first >> 5) == (int(idx[-1]) >> 5):
            warp = first >> 5
        self.warp = warp
        self._wl = None

    # ------------------------------------------------------------ lane facts
    @property
    def wl(self) -> np.ndarray:
        """The warp (index in the machine) of each lane."""
        if self._wl is None:
            self._wl = self.idx >> 5
        return self._wl

    def lanes(self, mask) -> np.ndarray:
        """Global lane numbers of the lanes where `mask` holds."""
        return self.idx[mask]

    def _lane(self, arr: np.ndarray) -> np.ndarray:
        return arr[self.sl] if self.sl is not None else arr[self.idx]

    def _uniform(self, arr: np.ndarray, index: int) -> np.ndarray:
        """Column `index` of a per-warp array (W, k): (1,) for one warp, else per lane."""
        if self.warp >= 0:
            return arr[self.warp, index:index + 1]
        return arr[self.wl, index]

    @property
    def tid(self) -> np.ndarray:
        return self.m.tid[:, self.sl] if self.sl is not None else self.m.tid[:, self.idx]

    @property
    def ctaid(self) -> np.ndarray:
        """(3, 1) for lanes of one CTA, else (3, width)."""
        m = self.m
        if self.warp >= 0:
            return m.ctaid_of_warp[:, self.warp:self.warp + 1]
        return m.ctaid_of_warp[:, self.wl]

    @property
    def lane_ids(self) -> np.ndarray:
        return self.idx & 31

    @property
    def warp_index(self) -> np.ndarray:
        """Each lane's warp number inside its CTA."""
        wpc = self.m.warps_per_cta
        if self.warp >= 0:
            return np.array([self.warp % wpc])
        return self.wl % wpc

    @property
    def executed(self):
        """Instructions its warp has issued (the emulated clock): per lane, or an int."""
        m = self.m
        if self.warp >= 0:
            return int(m.executed[self.warp]) + m.unflushed
        return m.executed[self.wl] + m.unflushed

    def warp_bits(self, mask: np.ndarray):
        """The lanes of `mask` as a bit set of their warp: an int when the lanes are one
        warp's, else per lane (its warp's bits)."""
        b = np.where(mask, np.left_shift(1, self.lane_ids, dtype=I64), 0)
        if self.warp >= 0:
            return int(np.bitwise_or.reduce(b)) if len(b) else 0
        wl = self.wl
        starts = np.concatenate((_TRUE, wl[1:] != wl[:-1])).nonzero()[0]
        per = np.bitwise_or.reduceat(b, starts)
        return np.repeat(per, np.diff(np.concatenate((starts, (self.width,)))))

    # ------------------------------------------------------------ control
    def set_pc(self, mask: np.ndarray, target) -> None:
        """Send the lanes of `mask` to `target` (one PC, or one per lane)."""
        if np.ndim(target):
            target = widen(np.asarray(target), self.width)[mask]
        self.m.pc[self.idx[mask]] = target

    def exit_lanes(self, mask: np.ndarray) -> None:
        """The lanes of `mask` exit; lanes of their warps waiting at BSYNC/WARPSYNC for them
        may go on."""
        m = self.m
        lanes = self.idx[mask]
        m.state[lanes] = EXITED
        m.alive -= len(lanes)
        if not m.alive:
            return                                      # nothing left to wake
        if self.warp >= 0:
            ws = [self.warp] if len(lanes) else []
        else:
            wl = lanes >> 5
            ws = wl[np.concatenate((_TRUE, wl[1:] != wl[:-1])).nonzero()[0]].tolist() if len(wl) else []
        for w in ws:
            st = m.state[w * 32:(w + 1) * 32]
            if np.count_nonzero((st == AT_BSYNC) | (st == AT_WARPSYNC)):
                m.warp(w).release_convergence()

    # ------------------------------------------------------------ memory spaces
    @property
    def shared(self) -> "SharedLanes":
        return SharedLanes(self)

    @property
    def local(self) -> "LocalLanes":
        return LocalLanes(self)

    # ------------------------------------------------------------ operand reads
    def const(self, ref: ConstRef, size: int = 4) -> int:
        """A constant operand as an int; one indexed by a uniform register must have the same
        value for every warp of the group (else PerWarp)."""
        offset = ref.offset
        if ref.ureg is not None:
            if ref.ureg.file == "UR":
                if not ref.ureg.is_zero:
                    u = self._uniform(self.m.UR, ref.ureg.index)
                    if len(u) > 1 and (u != u[0]).any():
                        raise PerWarp()
                    offset += int(u[0])
            else:
                raise EmuFault("per-lane constant index in a uniform read")
        return self.launch.const.read(ref.bank, offset, size)

    def _const_lanes(self, ref: ConstRef, size: int) -> np.ndarray | None:
        """Per-lane values of a constant indexed by a uniform register that differs between
        the warps of the group; None when it is one value."""
        if ref.ureg is None or ref.ureg.file != "UR" or ref.ureg.is_zero or self.warp >= 0:
            return None
        u = self.m.UR[self.wl, ref.ureg.index]
        if not (u != u[0]).any():
            return None
        offs = u.astype(I64) + ref.offset
        return self.launch.const.read_lanes(ref.bank, offs, size)

    def r(self, op) -> np.ndarray:
        """Raw 32-bit bits of a source (register, uniform register, immediate, constant),
        with `~` applied."""
        m = self.m
        if op.__class__ is Reg:
            if op.file == "R":                      # the common case first
                if m.tracing and op.index != 255:
                    m.reads.append(("R", op.index))
                row = m.R[op.index]
                v = row[self.sl] if self.sl is not None else row[self.idx]
                return ~v if op.inv else v
            if m.tracing and not op.is_zero and op.file == "UR":
                m.reads.append((op.file, op.index))
            if op.file == "UR":
                v = self._uniform(m.UR, op.index) if not op.is_zero else np.zeros(1, U32)
            elif op.file in ("P", "UP"):
                v = self.pred(op).astype(U32)
            else:
                raise EmuFault(f"cannot read {op.file}{op.index} as a value")
            return ~v if op.inv else v
        if op.__class__ is Imm:
            # cached by id with the operand kept: a handler's transient operand (made with
            # `replace`, say) must not meet the value of an earlier one whose id it reuses
            hit = m.imm32.get(id(op))
            if hit is not None and hit[0] is op:
                return hit[1]
            if op.text is not None and not (op.value and "NAN" in op.text):
                from ptx2sass.encoder.sass_text import float_value
                v = np.array([np.float32(float_value(op))], dtype=np.float32).view(U32)
            else:
                v = np.array([op.value & FULL], dtype=U32)   # (a NaN's payload bits)
            v.flags.writeable = False
            if len(m.imm32) < OPERAND_CACHE_LIMIT:
                m.imm32[id(op)] = (op, v)
            return v
        if op.__class__ is ConstRef:
            if op.ureg is not None and op.ureg.file == "R":
                offs = self._lane(m.R[op.ureg.index]).astype(I64) + op.offset
                v = self.launch.const.read_lanes(op.bank, offs, 4).view(U32).reshape(-1)
            elif op.ureg is None:
                hit = m.const32.get(id(op))
                if hit is not None and hit[0] is op:
                    v = hit[1]
                else:
                    v = np.array([self.const(op)], dtype=U32)
                    v.flags.writeable = False
                    if len(m.const32) < OPERAND_CACHE_LIMIT:
                        m.const32[id(op)] = (op, v)
            else:
                per_lane = self._const_lanes(op, 4)
                if per_lane is not None:
                    v = per_lane.view(U32).reshape(-1)
                else:
                    v = np.array([self.const(op)], dtype=U32)
            return ~v if op.inv else v
        raise EmuFault(f"operand {op!r} is not a value")

    def ri(self, op) -> np.ndarray:
        """Integer source with `-` (two's complement) and `~` applied."""
        v = self.r(op)
        if getattr(op, "neg", False):
            v = (U32(0) - v).astype(U32)
        return v

    def rf(self, op) -> np.ndarray:
        """FP32 source as float32 with `-` and `|.|` applied (a sign-bit operation)."""
        b = self.r(op)
        if getattr(op, "abs", False):
            b = b & U32(0x7FFFFFFF)
        if getattr(op, "neg", False):
            b = b ^ U32(0x80000000)
        return b.view(np.float32)

    def r64(self, op) -> np.ndarray:
        """A 64-bit source: an even register pair, a uniform pair, an immediate, a constant."""
        m = self.m
        if isinstance(op, Reg):
            if op.file == "R":
                if op.is_zero:
                    return np.zeros(1, U64)
                if m.tracing:
                    m.reads += [("R", op.index), ("R", op.index + 1)]
                lo = self._lane(m.R[op.index]).astype(U64)
                hi = self._lane(m.R[op.index + 1]).astype(U64) if op.index + 1 < 255 else 0
                return lo | (hi << U64(32))
            if op.file == "UR":
                if op.is_zero:
                    return np.zeros(1, U64)
                if m.tracing:
                    m.reads += [("UR", op.index), ("UR", op.index + 1)]
                lo = self._uniform(m.UR, op.index).astype(U64)
                hi = self._uniform(m.UR, op.index + 1).astype(U64)
                return lo | (hi << U64(32))
        if isinstance(op, Imm):
            return np.array([op.value & ((1 << 64) - 1)], dtype=U64)
        if isinstance(op, ConstRef):
            per_lane = self._const_lanes(op, 8)
            if per_lane is not None:
                return per_lane.view(U64).reshape(-1).copy()
            return np.array([self.const(op, 8)], dtype=U64)
        raise EmuFault(f"operand {op!r} is not a 64-bit value")

    def rd(self, op) -> np.ndarray:
        """FP64 source with `-`/`|.|`. A float immediate is the double it spells."""
        if isinstance(op, Imm) and op.text is not None and not (op.value and "NAN" in op.text):
            from ptx2sass.encoder.sass_text import float_value
            return np.array([float_value(op)], dtype=np.float64)
        if isinstance(op, Imm):
            b = np.array([(op.value & FULL) << 32], dtype=U64)   # high word of a double
        else:
            b = self.r64(op)
        if getattr(op, "abs", False):
            b = b & U64(0x7FFFFFFFFFFFFFFF)
        if getattr(op, "neg", False):
            b = b ^ U64(0x8000000000000000)
        return b.view(np.float64)

    def pred(self, op) -> np.ndarray:
        m = self.m
        if op.__class__ is Reg:
            if m.tracing and not op.is_zero and op.file in ("P", "UP"):
                m.reads.append((op.file, op.index))
            if op.file == "P":
                row = m.P[op.index]
                v = row[self.sl] if self.sl is not None else row[self.idx]
            elif op.file == "UP":
                v = self._uniform(m.UP, op.index)
            elif op.file in ("R", "UR") and "SIGN" in op.suffix:
                v = (self.r(reg(op.file, op.index)) >> U32(31)) != 0
            else:
                raise EmuFault(f"{op.file}{op.index} is not a predicate")
            return ~v if op.inv else v
        if isinstance(op, ConstRef) and "SIGN" in op.suffix:   # PLOP3's c[0x2][0x0].SIGN
            v = (self.r(replace(op, suffix=(), inv=False)) >> U32(31)) != 0
            return ~v if op.inv else v
        if isinstance(op, Imm):
            return np.array([bool(op.value)])
        raise EmuFault(f"operand {op!r} is not a predicate")

    # ------------------------------------------------------------ writes
    def w(self, dst: Reg, values, mask: np.ndarray) -> None:
        m = self.m
        if dst.file == "R":                         # the common case first
            index = dst.index
            if index == 255:
                return
            if index >= m.regcount_limit:
                raise EmuFault(f"write to R{index} beyond the kernel's register count")
            if m.tracing:
                m.writes.append(("R", index))
            self._put(m.R[index], values, mask)
            return
        if dst.is_zero:
            return
        if m.tracing and dst.file == "UR":
            m.writes.append((dst.file, dst.index))
        if dst.file == "UR":
            self._put_uniform(m.UR, dst.index, np.asarray(values, dtype=U32), mask)
        elif dst.file in ("P", "UP"):
            self.wp(dst, values, mask)
        else:
            raise EmuFault(f"cannot write {dst.file}{dst.index}")

    def _put(self, row: np.ndarray, values, mask) -> None:
        """Masked store of per-lane values into a register row over all lanes."""
        if self.sl is not None:
            if mask is self.active:
                np.copyto(row[self.sl], values, casting="unsafe")
            else:
                np.copyto(row[self.sl], values, where=mask, casting="unsafe")
        elif mask is self.active:
            row[self.idx] = values
        else:
            v = np.asarray(values)
            if v.ndim and v.shape[0] != 1:
                v = v[mask]
            row[self.idx[mask]] = v

    def _put_uniform(self, arr: np.ndarray, index: int, values: np.ndarray, mask) -> None:
        """A uniform register takes, in each warp, the value of its first lane that writes."""
        if mask is self.active and values.shape == (1,):
            # every lane writes one value: each warp takes it (no per-lane arrays)
            if self.warp >= 0:
                arr[self.warp, index] = values[0]
                return
            ws = getattr(self, "ws", None)           # a machine.Group's warps
            if ws is not None:
                arr[ws, index] = values[0]
                return
        if not np.count_nonzero(mask):
            return
        vals = widen(values, self.width)
        if self.warp >= 0:
            arr[self.warp, index] = vals[int(np.argmax(mask))]
            return
        on = mask.nonzero()[0]
        wl = self.wl[on]
        first = np.empty(len(on), dtype=bool)
        first[0] = True
        np.not_equal(wl[1:], wl[:-1], out=first[1:])
        arr[wl[first], index] = vals[on[first]]

    def w64(self, dst: Reg, values, mask: np.ndarray) -> None:
        v = np.asarray(values, dtype=U64)
        if _LITTLE and v.ndim == 1 and v.flags.c_contiguous:
            halves = v.view(U32).reshape(-1, 2)         # each value's low word, then its high
            self.w(reg(dst.file, dst.index), halves[:, 0], mask)
            if not dst.is_zero:
                self.w(reg(dst.file, dst.index + 1), halves[:, 1], mask)
            return
        self.w(reg(dst.file, dst.index), (v & U64(FULL)).astype(U32), mask)
        if not dst.is_zero:
            self.w(reg(dst.file, dst.index + 1), (v >> U64(32)).astype(U32), mask)

    def wn(self, dst: Reg, words: list, mask: np.ndarray) -> None:
        """Write consecutive registers starting at `dst`."""
        if dst.is_zero:
            return
        for i, v in enumerate(words):
            self.w(reg(dst.file, dst.index + i), v, mask)

    def wp(self, dst: Reg, values, mask: np.ndarray) -> None:
        if dst.is_zero:
            return
        m = self.m
        if m.tracing:
            m.writes.append((dst.file, dst.index))
        v = np.asarray(values, dtype=bool)
        if dst.file == "P":
            self._put(m.P[dst.index], v, mask)
        elif dst.file == "UP":
            self._put_uniform(m.UP, dst.index, v, mask)
        else:
            raise EmuFault(f"{dst.file}{dst.index} is not a predicate")


# A shared address's CTA rank in its cluster starts at this bit (sm_90+ shared::cluster)
SHARED_RANK_SHIFT = 24


class SharedLanes:
    """Shared memory as the lanes see it: each lane addresses its own CTA's."""

    def __init__(self, lanes: Lanes):
        self.lanes = lanes

    def _at(self, pos: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
        m = self.lanes.m
        offsets = offsets.astype(U64)
        check_alignment(offsets, size, "shared")
        limit = m.shared_bytes
        if m.launch.cluster_size > 1:          # bounds of the offset in the named CTA's
            over = (offsets & U64((1 << SHARED_RANK_SHIFT) - 1)).astype(I64) + size > limit
        else:
            over = offsets.astype(I64) + size > limit
        if np.count_nonzero(over):
            a = int(offsets[np.argmax(over)])
            if m.launch.cluster_size == 1 and a >> SHARED_RANK_SHIFT and not m.launch.cluster_launch:
                raise EmuFault(f"shared::cluster address 0x{a:x} names CTA rank {a >> SHARED_RANK_SHIFT}: "
                               "the launch has no clusters (each CTA a cluster of one; pass cluster=)")
            raise EmuFault(f"out-of-bounds {size}-byte shared access at offset 0x{a:x} "
                           f"(shared memory is {limit} bytes)")
        lanes = self.lanes
        if m.launch.cluster_size > 1:
            return self._cluster_at(pos, offsets)
        if lanes.warp >= 0:
            return offsets + U64(m.shared_base_of_warp[lanes.warp])
        return offsets + m.shared_base_of_warp[lanes.idx[pos] >> 5]

    def _cluster_at(self, pos: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """In a cluster launch a shared address is a shared::cluster one: the CTA's rank
        in its cluster from bit 24 (ptxas: SR_CgaCtaId << 24, `mapa`), the offset in that
        CTA's shared memory below; the cluster's CTAs sit consecutively in rank order in
        the machine (Launch.cta_order). A rank outside the cluster faults."""
        m = self.lanes.m
        lanes = self.lanes
        warps = np.full(len(offsets), lanes.warp) if lanes.warp >= 0 else lanes.idx[pos] >> 5
        rank = (offsets >> U64(SHARED_RANK_SHIFT)).astype(I64)
        low = offsets & U64((1 << SHARED_RANK_SHIFT) - 1)
        if np.count_nonzero(rank >= m.launch.cluster_size):
            a = int(offsets[np.argmax(rank >= m.launch.cluster_size)])
            raise EmuFault(f"shared::cluster address 0x{a:x} names CTA rank {a >> SHARED_RANK_SHIFT}, "
                           f"outside the cluster of {m.launch.cluster_size}")
        cta = m.cluster_first_of_warp[warps] + rank
        return low + cta.astype(U64) * U64(m.shared_stride)

    def load(self, pos: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
        m = self.lanes.m
        if m.note is not None:                  # the trace recorder (emu.timing.trace)
            m.note("shared", offsets, size)
        return _gather(m.shared_data, self._at(pos, offsets, size), size)

    def store(self, pos: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
        m = self.lanes.m
        if m.note is not None:
            m.note("shared", offsets, values.shape[1])
        _scatter(m.shared_data, self._at(pos, offsets, values.shape[1]), values)


class LocalLanes:
    """Per-thread local memory of the lanes (rows of the machine's local array)."""

    def __init__(self, lanes: Lanes):
        self.lanes = lanes

    def _rows(self, pos, offsets, size):
        """The window's offsets run from the launch's `local_base` up to the initial stack
        pointer (launch.STACK_TOP); row columns count from `local_base`. Offsets below the
        window's size address it from its start too: ptxas addresses a frameless kernel's
        locals from 0 (`STL.128 [RZ]`, sm_120 fuzz seed 41000095), as the window did when it
        began at 0."""
        data = self.lanes.m.local_data
        offsets = offsets.astype(U64)
        check_alignment(offsets, size, "local")
        base = self.lanes.launch.local_base
        cols = offsets.astype(I64)
        cols = np.where(cols < data.shape[1], cols, cols - base)
        over = (cols < 0) | (cols + size > data.shape[1])
        if over.any():
            a = int(offsets[np.argmax(over)])
            raise EmuFault(f"out-of-bounds {size}-byte local access at offset 0x{a:x} "
                           f"(local memory is {data.shape[1]} bytes per thread, "
                           f"0x{base:x}..0x{base + data.shape[1]:x})")
        rows = self.lanes.idx[np.asarray(pos)]
        return data, rows[:, None], cols[:, None] + np.arange(size)

    def load(self, pos: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
        data, rows, cols = self._rows(pos, offsets, size)
        return data[rows, cols]

    def store(self, pos: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
        data, rows, cols = self._rows(pos, offsets, values.shape[1])
        data[rows, cols] = values
