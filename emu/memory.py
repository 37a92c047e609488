"""Emulated memory spaces: global buffers, per-CTA shared memory, per-thread local memory
and constant banks, each with bounds and alignment checks that name what was touched.

Accesses are vectorised over the lanes of a warp: an address vector (uint64) and a lane
mask go in, a (lanes, bytes) uint8 array comes out (or is written).

Multimem addresses (PTX `multimem.*`, sm_90+): on a GPU the driver maps one onto the copies
of a multicast object on every member device. The emulator is one GPU, so a multimem
address is a plain global address naming the one local copy: `multimem.st`/`multimem.red`
(STG/REDG in ptxas's code and ours) write or reduce that word, and a `multimem.ld_reduce`
(LDGMC) reduces over that one copy, i.e. returns its value.
"""
from __future__ import annotations

from bisect import bisect_right
import numpy as np

from .errors import EmuFault

# Where things sit in the emulated 64-bit generic address space. Global buffers start high
# and apart so that a stray pointer rarely lands in a neighbour; the shared and local windows
# are the generic ranges that map onto the CTA's shared memory and the thread's local memory
# (the driver reports the shared window base in c[0x0][0x18] and the local one at 0x20).
GLOBAL_BASE = 0x7F00_0000_0000
GLOBAL_GAP = 0x1_0000          # between buffers, also their alignment
SHARED_WINDOW = 0x7FF0_0000_0000
LOCAL_WINDOW = 0x7FF8_0000_0000
WINDOW_SIZE = 1 << 32


class Buffer:
    """A global buffer: `data` is a uint8 view of `backing`, which is padded to 16 bytes;
    `views` keeps typed() views. (A plain class with slots: a launch makes two or three, and
    a dataclass's generated __init__ with a default factory costs more than the rest of
    an allocation.)"""
    __slots__ = ("name", "base", "data", "backing", "views")

    def __init__(self, name: str, base: int, data: np.ndarray, backing: np.ndarray | None = None):
        self.name = name
        self.base = base
        self.data = data
        self.backing = backing
        self.views = {}

    def __repr__(self) -> str:
        return f"Buffer({self.name!r}, 0x{self.base:x}, {len(self.data)} bytes)"

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def typed(self, size: int) -> np.ndarray:
        """The buffer as elements of `size` bytes (16: pairs of uint64), for aligned access."""
        views = self.views
        v = views.get(size)
        if v is None:
            raw = self.backing if self.backing is not None else self.data
            v = raw[:len(raw) // 16 * 16].view(np.uint64).reshape(-1, 2) if size == 16 else \
                raw[:len(raw) // size * size].view(_ELEMENT[size])
            views[size] = v
        return v


_ELEMENT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}


def _gather(data: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
    idx = offsets[:, None].astype(np.int64) + np.arange(size, dtype=np.int64)
    return data[idx]


def _scatter(data: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
    size = values.shape[1]
    idx = offsets[:, None].astype(np.int64) + np.arange(size, dtype=np.int64)
    data[idx] = values       # later lanes win on overlap, as one store of a warp would


def check_alignment(addresses: np.ndarray, size: int, space: str) -> None:
    align = min(size, 16)
    if align == 1:
        return
    bad = addresses & np.uint64(align - 1)
    if np.count_nonzero(bad):
        a = int(addresses[np.argmax(bad != 0)])
        raise EmuFault(f"misaligned {size}-byte {space} access at address 0x{a:x}")


class GlobalMemory:
    """Named buffers at fixed device addresses."""

    def __init__(self):
        self.buffers: list[Buffer] = []
        self._next = GLOBAL_BASE
        self._base_list: list[int] = []        # increasing, as allocated
        self._bases = None
        # (base, end, buffer) of the buffer the last single-lane access found (buffers
        # neither move nor resize, so it stays true)
        self.last_hit = (0, 0, None)

    def allocate(self, name: str, size: int, contents: bytes | np.ndarray | None = None,
                 fill: int = 0) -> Buffer:
        size = max(size, 0)
        padded = -(-size // 16) * 16
        if not fill and contents.__class__ is bytes:
            # the common case (a launch's parameters, a buffer's initial bytes): one
            # writable copy, no zero-fill then overwrite
            raw = bytearray(contents[:size])
            if len(raw) < padded:
                raw += bytes(padded - len(raw))
            backing = np.frombuffer(raw, dtype=np.uint8)
            contents = None
        else:
            backing = np.zeros(padded, dtype=np.uint8) if not fill else np.full(padded, fill, dtype=np.uint8)
        data = backing[:size]
        if contents is not None:
            if isinstance(contents, np.ndarray):
                raw = contents.reshape(-1).view(np.uint8)
            else:
                raw = np.frombuffer(contents if isinstance(contents, (bytes, bytearray, memoryview))
                                    else bytes(contents), dtype=np.uint8)
            data[:len(raw)] = raw[:size]
        buf = Buffer(name, self._next, data, backing)
        self.buffers.append(buf)
        self._base_list.append(self._next)
        self._next += -(-max(size, 1) // GLOBAL_GAP) * GLOBAL_GAP + GLOBAL_GAP
        self._bases = None
        return buf

    def reserve(self, size: int) -> int:
        """The base an allocation of `size` bytes would get, passed over with no buffer
        there: later allocations land where they would have had it been made."""
        base = self._next
        self._next += -(-max(size, 1) // GLOBAL_GAP) * GLOBAL_GAP + GLOBAL_GAP
        return base

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def _locate(self, addresses: np.ndarray, size: int) -> np.ndarray:
        """Index of the buffer holding each access, faulting on any out-of-bounds one."""
        if self._bases is None:
            self._bases = np.array(self._base_list, dtype=np.uint64)
        which = np.searchsorted(self._bases, addresses, side="right").astype(np.int64) - 1
        for lane in range(len(addresses)):
            i = int(which[lane])
            a = int(addresses[lane])
            if i < 0 or a + size > self.buffers[i].end:
                raise EmuFault(self._describe_oob(a, size))
        return which

    def _describe_oob(self, address: int, size: int) -> str:
        nearest = None
        for b in self.buffers:
            if b.base <= address < b.end + GLOBAL_GAP:
                nearest = b
        if nearest is None:
            return f"out-of-bounds {size}-byte global access at address 0x{address:x} (no buffer there)"
        return (f"out-of-bounds {size}-byte global access at address 0x{address:x}: buffer "
                f"'{nearest.name}' is 0x{nearest.base:x}..0x{nearest.end:x} ({len(nearest.data)} bytes), "
                f"access at byte {address - nearest.base}")

    def _fast_single(self, addresses: np.ndarray, size: int):
        """The buffer when every address is inside one buffer (the common case), else None."""
        if len(addresses) == 1:
            lo = hi = int(addresses[0])
        else:
            lo, hi = int(addresses.min()), int(addresses.max())
        i = bisect_right(self._base_list, lo) - 1
        if i >= 0:
            b = self.buffers[i]
            if hi + size <= b.end:
                return b
        return None

    def gather(self, addresses: np.ndarray, size: int) -> np.ndarray:
        """Aligned loads of `size` bytes as (k,) elements (uint8 … uint64; 16: (k, 2) uint64),
        with the faults of `load`."""
        if len(addresses) == 1:
            a = int(addresses[0])
            i = bisect_right(self._base_list, a) - 1
            if not a & (min(size, 16) - 1) and i >= 0:
                b = self.buffers[i]
                if a + size <= b.base + len(b.data):
                    k = (a - b.base) >> _SHIFT[size]
                    return b.typed(size)[k:k + 1].copy()
        check_alignment(addresses, size, "global")
        b = self._fast_single(addresses, size)
        if b is None:
            raw = self.load(addresses, size)
            return raw.view(np.uint64).reshape(-1, 2) if size == 16 else raw.view(_ELEMENT[size]).reshape(-1)
        return b.typed(size)[(addresses - np.uint64(b.base)) >> np.uint64(_SHIFT[size])]

    def scatter(self, addresses: np.ndarray, values: np.ndarray, size: int) -> None:
        """Aligned stores of (k,) elements of `size` bytes (16: (k, 2) uint64), as `store`."""
        if len(addresses) == 1:
            a = int(addresses[0])
            i = bisect_right(self._base_list, a) - 1
            if not a & (min(size, 16) - 1) and i >= 0:
                b = self.buffers[i]
                if a + size <= b.base + len(b.data):
                    k = (a - b.base) >> _SHIFT[size]
                    b.typed(size)[k:k + 1] = values
                    return
        check_alignment(addresses, size, "global")
        b = self._fast_single(addresses, size)
        if b is None:
            self.store(addresses, np.ascontiguousarray(values).view(np.uint8).reshape(len(addresses), size))
            return
        b.typed(size)[(addresses - np.uint64(b.base)) >> np.uint64(_SHIFT[size])] = values

    def load(self, addresses: np.ndarray, size: int) -> np.ndarray:
        if len(addresses) == 0:
            return np.zeros((0, size), dtype=np.uint8)
        check_alignment(addresses, size, "global")
        b = self._fast_single(addresses, size)
        if b is not None:
            return _gather(b.data, addresses - np.uint64(b.base), size)
        which = self._locate(addresses, size)
        out = np.empty((len(addresses), size), dtype=np.uint8)
        for i in np.unique(which):
            sel = which == i
            buf = self.buffers[int(i)]
            out[sel] = _gather(buf.data, addresses[sel] - np.uint64(buf.base), size)
        return out

    def load_edges_outside(self, address: int, size: int, slack: int) -> tuple[np.ndarray, int, int]:
        """The bytes of [address, address + size) inside the buffer that holds its last byte,
        as (data, first, end) offsets into the range, where up to `slack` bytes at either
        end may lie outside it (read as zero); more, or no byte inside, faults as `load`."""
        i = bisect_right(self._base_list, address + size - 1) - 1
        if i >= 0:
            b = self.buffers[i]
            lo, hi = max(address, b.base), min(address + size, b.end)
            if lo < hi and lo - address <= slack and address + size - hi <= slack:
                out = np.zeros(size, dtype=np.uint8)
                out[lo - address:hi - address] = b.data[lo - b.base:hi - b.base]
                return out, lo - address, hi - address
        return self.load(np.array([address], dtype=np.uint64), size)[0], 0, size

    def store(self, addresses: np.ndarray, values: np.ndarray) -> None:
        if len(addresses) == 0:
            return
        size = values.shape[1]
        check_alignment(addresses, size, "global")
        b = self._fast_single(addresses, size)
        if b is not None:
            _scatter(b.data, addresses - np.uint64(b.base), values)
            return
        which = self._locate(addresses, size)
        for i in np.unique(which):
            sel = which == i
            buf = self.buffers[int(i)]
            _scatter(buf.data, addresses[sel] - np.uint64(buf.base), values[sel])

    def view(self, address: int, size: int) -> tuple[Buffer, int]:
        """The buffer and byte offset of a scalar access (atomics use this lane by lane)."""
        self._locate(np.array([address], dtype=np.uint64), size)
        check_alignment(np.array([address], dtype=np.uint64), size, "global")
        for b in self.buffers:
            if b.base <= address < b.end:
                return b, address - b.base
        raise EmuFault(self._describe_oob(address, size))


class FlatMemory:
    """One byte array addressed from 0: a CTA's shared memory (`data`: a view of it in a
    machine's shared memory of every CTA, else its own)."""

    def __init__(self, size: int, space: str, data: np.ndarray | None = None):
        self.data = np.zeros(size, dtype=np.uint8) if data is None else data
        self.space = space

    def _check(self, offsets: np.ndarray, size: int) -> None:
        check_alignment(offsets, size, self.space)
        over = offsets.astype(np.int64) + size > len(self.data)
        if over.any():
            a = int(offsets[np.argmax(over)])
            raise EmuFault(f"out-of-bounds {size}-byte {self.space} access at offset 0x{a:x} "
                           f"({self.space} memory is {len(self.data)} bytes)")

    def load(self, offsets: np.ndarray, size: int) -> np.ndarray:
        offsets = offsets.astype(np.uint64)
        self._check(offsets, size)
        return _gather(self.data, offsets, size)

    def store(self, offsets: np.ndarray, values: np.ndarray) -> None:
        offsets = offsets.astype(np.uint64)
        self._check(offsets, values.shape[1])
        _scatter(self.data, offsets, values)


class LocalMemory:
    """Per-thread local memory of one warp: (lanes, size) bytes."""

    def __init__(self, lanes: int, size: int):
        self.data = np.zeros((lanes, size), dtype=np.uint8)

    def _check(self, offsets: np.ndarray, size: int) -> None:
        check_alignment(offsets, size, "local")
        over = offsets.astype(np.int64) + size > self.data.shape[1]
        if over.any():
            a = int(offsets[np.argmax(over)])
            raise EmuFault(f"out-of-bounds {size}-byte local access at offset 0x{a:x} "
                           f"(local memory is {self.data.shape[1]} bytes per thread)")

    def load(self, lanes: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
        offsets = offsets.astype(np.uint64)
        self._check(offsets, size)
        idx = offsets[:, None].astype(np.int64) + np.arange(size)
        return self.data[lanes[:, None], idx]

    def store(self, lanes: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
        offsets = offsets.astype(np.uint64)
        self._check(offsets, values.shape[1])
        idx = offsets[:, None].astype(np.int64) + np.arange(values.shape[1])
        self.data[lanes[:, None], idx] = values


class ConstantBanks:
    """c[bank][offset]: read-only, out-of-range reads fault (hardware returns 0, but a read
    past what the driver wrote is a compiler bug we want to see)."""

    def __init__(self, banks: dict[int, bytes]):
        self.raw = {k: bytes(v) for k, v in banks.items()}
        self._arrays: dict[int, np.ndarray] = {}
        self._words: dict[int, int] = {}       # read()'s answers, by offset, bank and size

    @property
    def banks(self) -> dict[int, np.ndarray]:
        """The banks as read-only uint8 arrays."""
        for k, v in self.raw.items():
            if k not in self._arrays:
                self._arrays[k] = np.frombuffer(v, dtype=np.uint8)
        return self._arrays

    def read(self, bank: int, offset: int, size: int = 4) -> int:
        key = (offset << 12) | (bank << 6) | size         # bank < 64, size <= 32
        v = self._words.get(key)
        if v is not None:
            return v
        data = self.raw.get(bank)
        if data is None or offset < 0 or offset + size > len(data):
            n = 0 if data is None else len(data)
            raise EmuFault(f"constant read c[0x{bank:x}][0x{offset:x}] outside the bank ({n} bytes)")
        v = int.from_bytes(data[offset:offset + size], "little")
        if 0 <= bank < 64 and 0 < size <= 32:
            self._words[key] = v
        return v

    def read_lanes(self, bank: int, offsets: np.ndarray, size: int) -> np.ndarray:
        data = self.banks.get(bank)
        n = 0 if data is None else len(data)
        offsets = offsets.astype(np.int64)
        if data is None or (offsets < 0).any() or (offsets + size > n).any():
            bad = int(offsets.max()) if len(offsets) else 0
            raise EmuFault(f"constant read c[0x{bank:x}][0x{bad:x}] outside the bank ({n} bytes)")
        return _gather(data, offsets, size)
