"""Which earlier memory accesses of a region a memory access must stay ordered after.

Both schedulers (`sched.list_schedule` after allocation, `sched.pre_schedule` before it) order
accesses whose state spaces may meet (`list_schedule.memory_spaces`). Two of them need no
order when their bytes cannot overlap: the same space reached through the same base register,
unchanged between them, or both absolute, with disjoint [offset, offset + size) ranges
(`if (tid < 16) { g[0][k] = g[16][k]; g[17][k] = g[1][k]; }`: ptxas issues both shared loads
before the stores). The address is the same value for both, so this is exact. Only a load and
a store pass each other so: loads keep their order among themselves as they did (a scheduler
may let plain loads pass each other: its `passing` accesses, or only the `passable` ones), and so do stores (letting
disjoint stores pass each other too reordered Triton's matmul_masked tile stores and its
loads' predicates: SM-model cycles 2905 -> 3371, docs/STATUS.md "Branch smem32"); strong and
MMIO accesses, atomics, barriers and collectives have no range and keep every order they had.
A read-only load (`ld.global.nc`, LDG.CONSTANT: the bytes stay unwritten for the kernel's
whole run) needs no order after any earlier store, atomic or arrival, only after loads
(float_asm's restrict-const halfword loads waited behind its first result's stores).
A strong store (`.relaxed`, `.volatile`, or a cache operator ptxas writes as one: STRONG.SM
for `.wb`, .GPU for `.cg`, .SYS for `.wt`; not MMIO) needs no order after an earlier plain
store whose bytes it cannot overlap (a weak store orders nothing for other threads); ptxas
issues those before the plain store of a loaded sum (intrinsics_misc k_ldcv, SM 1.33x).
Strong accesses keep their order among themselves and with every other access.
"""
from __future__ import annotations

# access opcodes whose operands name one plain address and whose width the size modifiers give
RANGED = frozenset({"LDS", "STS", "LDG", "STG", "LDL", "STL", "LD", "ST"})
LOADS = frozenset({"LDS", "LDG", "LDL", "LD", "LDC", "LDGMC"})
_SIZES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}
_SINGLE = ("STRONG", "MMIO", "ARRIVE")


STORES = frozenset({"STS", "STG", "STL", "ST"})
STRONG_STORES_PASS = True       # False: strong stores keep every order they had (A/B runs)


def strong_store(opcode: str, modifiers) -> bool:
    """A strong (not MMIO) store of one address: ordered after earlier plain stores only
    where their bytes may overlap."""
    return (STRONG_STORES_PASS and opcode in STORES and "STRONG" in modifiers
            and not any(m in ("MMIO", "ARRIVE") for m in modifiers))


def read_only_load(opcode: str, modifiers) -> bool:
    """A load of bytes no access of the kernel writes (the non-coherent path)."""
    return opcode == "LDG" and "CONSTANT" in modifiers


def access_size(modifiers) -> int:
    """Bytes a plain load or store moves: 32 bits unless a size modifier says otherwise."""
    size = 4
    for m in modifiers:
        size = _SIZES.get(m, size)
    return size


def ranged(opcode: str, modifiers) -> bool:
    """Whether an access may be disambiguated by its address at all."""
    return (opcode in RANGED and not any(m in _SINGLE for m in modifiers)) or strong_store(opcode, modifiers)


def disjoint(a, b) -> bool:
    """Whether two accesses' (base key, offset, size) ranges surely do not overlap."""
    if a is None or b is None or a[0] != b[0]:
        return False
    return a[1] + a[2] <= b[1] or b[1] + b[2] <= a[1]


class MemoryOrder:
    """Per state space, the accesses seen so far; `before` gives the ones a new access must
    follow. An access needs no order with an earlier one when both are `passing` (loads a
    scheduler lets pass each other), or when one is a load, the other a store, and their
    ranges are disjoint. An access ordered (directly or through others) after every earlier access of a
    space is `total` there: a later access that follows it needs no edge from what precedes it."""

    def __init__(self) -> None:
        self.history: dict[str, list[int]] = {}
        self.info: dict[int, tuple] = {}        # index -> (range, is load, passing, total spaces, strong)
        self.ancestors: dict[int, int] = {}     # index -> bit set of memory accesses before it

    def before(self, j: int, spaces, rng, load: bool, passing: bool, passable: bool | None = None,
               read_only: bool = False, strong: bool = False) -> set[int]:
        """`passable`: whether a later `passing` access may pass this one (default: `passing`);
        `read_only`: a read-only load, which passes every earlier access but loads; `strong`:
        a strong store (`strong_store`), which passes earlier plain stores it cannot overlap
        and is passed by nothing on its range."""
        preds: set[int] = set()
        covered = 0
        total = set()
        for sp in spaces:
            whole = True
            for i in reversed(self.history.get(sp, ())):
                if (covered >> i) & 1:
                    continue
                ri, li, pi, ti, si = self.info[i]
                if passing and pi:
                    whole = False
                    continue
                if (load != li and not strong and not si and disjoint(rng, ri)) or (read_only and not li) \
                        or (strong and not si and not li and disjoint(rng, ri)):
                    whole = False
                    continue
                preds.add(i)
                covered |= self.ancestors[i] | (1 << i)
                if sp in ti:
                    break
            if whole:
                total.add(sp)
            self.history.setdefault(sp, []).append(j)
        self.info[j] = (rng, load, passing if passable is None else passable, frozenset(total), strong)
        self.ancestors[j] = covered
        return preds
