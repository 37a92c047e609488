"""Neighbour sets as bit masks, for interference graphs too dense for Python sets.

Where thousands of values are live at once, the interference graph is close to a clique:
n² / 2 edges. A Python set spends 30-60 bytes per member, so 5,000 simultaneously live
values took ~0.9 GB and 10,000 ~3.6 GB. Here each node's neighbours are one integer used as
a bit mask over vreg ids: n² / 8 bytes for the whole graph (3 MB for 5,000 nodes), built
with one mask operation per definition and one bit set per value live across it.

`BitSet` offers the set operations the allocator and the coalescer use, with ascending
iteration (so consumers see a deterministic order, as they do with small sets of ints).
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, VOp

# The positions of the set bits of every byte value, for iterating a mask a byte at a time.
_BYTE_BITS = tuple(tuple(i for i in range(8) if b >> i & 1) for b in range(256))


class BitSet:
    """A set of small non-negative ints (vreg ids) held as the bits of one integer."""
    __slots__ = ("bits",)

    def __init__(self, bits: int = 0):
        self.bits = bits

    @classmethod
    def of(cls, members) -> "BitSet":
        if isinstance(members, BitSet):
            return cls(members.bits)
        bits = 0
        for m in members:
            bits |= 1 << m
        return cls(bits)

    def add(self, v: int) -> None:
        self.bits |= 1 << v

    def discard(self, v: int) -> None:
        if self.bits >> v & 1:
            self.bits ^= 1 << v

    def __contains__(self, v: int) -> bool:
        return bool(self.bits >> v & 1)

    def __len__(self) -> int:
        return self.bits.bit_count()

    def __bool__(self) -> bool:
        return bool(self.bits)

    def __iter__(self):
        bits = self.bits
        data = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
        for i, byte in enumerate(data):
            if byte:
                base = 8 * i
                for k in _BYTE_BITS[byte]:
                    yield base + k

    def __or__(self, other) -> "BitSet":
        return BitSet(self.bits | BitSet.of(other).bits)

    __ror__ = __or__

    def __sub__(self, other) -> "BitSet":
        return BitSet(self.bits & ~BitSet.of(other).bits)

    def __eq__(self, other) -> bool:
        if isinstance(other, (BitSet, set, frozenset)):
            return self.bits == BitSet.of(other).bits
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"BitSet({sorted(self)})"


def dense_interference(mf: MFunction, live_out, use_def, move_source):
    """The graph `allocate.interference` builds, as BitSets (same edges, same moves)."""
    cls = [v.cls for v in mf.vregs]
    masks: dict[str, int] = {}
    for v in mf.vregs:
        masks[v.cls] = masks.get(v.cls, 0) | 1 << v.id
    adjacency = [0] * len(mf.vregs)
    moves: dict[int, list[int]] = {v.id: [] for v in mf.vregs}
    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        live_bits = 0
        for v in live:
            live_bits |= 1 << v
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins)
            defs = [op.reg.id for op in ins.operands[:ins.ndefs] if isinstance(op, VOp)]
            copy_src = None
            src = move_source(ins)
            if src is not None:
                copy_src = src.reg.id
                dst = ins.operands[0].reg.id
                if ins.operands[0].part is None and src.part is None:
                    moves[dst].append(copy_src)
                    moves[copy_src].append(dst)
                else:
                    copy_src = None          # a part copy: source and result interfere
            if defs:
                for d in defs:
                    d_bit = 1 << d
                    others = live_bits & masks[cls[d]] & ~d_bit
                    if copy_src is not None:
                        others &= ~(1 << copy_src)
                    for d2 in defs:
                        if d2 != d and cls[d2] == cls[d]:
                            others |= 1 << d2
                    adjacency[d] |= others
                    for lv in live:
                        if lv != d and lv != copy_src and cls[lv] == cls[d]:
                            adjacency[lv] |= d_bit
                    for d2 in defs:
                        if d2 != d and cls[d2] == cls[d]:
                            adjacency[d2] |= d_bit
            for k in kills:
                if k in live:
                    live.discard(k)
                    live_bits ^= 1 << k
            for u in uses:
                if u not in live:
                    live.add(u)
                    live_bits |= 1 << u
        if i == 0:
            # values live into the entry block (read before written) interfere pairwise
            for a in live:
                adjacency[a] |= (live_bits & masks[cls[a]]) & ~(1 << a)
    return {v.id: BitSet(adjacency[v.id]) for v in mf.vregs}, moves


def max_live(mf: MFunction, live_out, use_def) -> int:
    """The most values live at once anywhere in `mf` (after each instruction, backwards)."""
    most = 0
    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        most = max(most, len(live))
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins)
            for k in kills:
                live.discard(k)
            live.update(uses)
            if len(live) > most:
                most = len(live)
    return most
