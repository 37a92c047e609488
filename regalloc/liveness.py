"""Liveness over the machine IR: which virtual registers each instruction reads and kills,
and the set live out of every block.

The machine IR is not SSA: a write of one part of a wide register, or a guarded write,
leaves the rest of the register (or its old value where the guard is false) live, so it
counts as a use and a def; only an unguarded whole write kills. Sets hold vreg ids (ints),
so nothing here depends on object identity or hash seeds.

A guarded write of a register that no path has written before (`fresh_writes`: the carry
of a guarded 64-bit add, a guarded compare, the temporaries of a guarded vector load or of
an expansion selected under a guard) keeps nothing alive: the old value is undefined, so
the write kills. Counting it as a use would keep the register live from the function's
entry, where every such register interferes with every other: a few guarded 64-bit adds
then need more predicates than the file has, and an unrolled loop's guarded `suld.v4`
copies each held their own four registers from the entry (fuzz seed 28001610, sm_100:
132 registers, ptxas 40).
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, MInstr, register_operands


def use_def(ins: MInstr, fresh: frozenset | set = frozenset()) -> tuple[list[int], list[int]]:
    """Virtual registers read (for liveness) and killed (fully written) by `ins`; `fresh`
    is `fresh_writes(mf)` (writes of undefined registers, which kill even when guarded)."""
    uses, kills = [], []
    guarded = ins.guard is not None
    for _, op, is_def in register_operands(ins):
        if is_def and ((op.part is None and not guarded) or (id(ins), op.reg.id) in fresh):
            kills.append(op.reg.id)
        else:
            uses.append(op.reg.id)
    return uses, kills


def fresh_writes(mf: MFunction) -> set[tuple[int, int]]:
    """(id(instruction), vreg id) of guarded or partial writes of a register that no path
    from the entry has written before (precoloured registers count as written at entry).
    Recompute after any change to the function: the keys are object ids."""
    # each instruction's registers listed once, for all walks (this pass runs before each
    # liveness solution of the allocator and the schedulers)
    operands = [[register_operands(ins) for ins in b.instrs] for b in mf.blocks]
    # only a register that some guarded or partial write defines can be fresh: the others
    # get no bit (whether a register was written depends on its own writes only)
    guarded = {op.reg.id for b, ops_of in zip(mf.blocks, operands) for ins, ops in zip(b.instrs, ops_of)
               for _, op, d in ops if d and (ins.guard is not None or op.part is not None)}
    # register sets as bit masks (bit k: the k-th such register): one set per block each of
    # hundreds of registers was this pass's memory where loops nest hundreds deep; a bit
    # for every register made the masks' sizes grow as the square of the register count
    # (bench/memory_scaling.py's lineops:40000: 88 MB of its peak)
    bit = {v.id: 1 << k for k, v in enumerate(
        v for v in mf.vregs if v.id in guarded and v.id not in mf.precolored)}
    if not bit:
        return set()
    n = len(mf.blocks)
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    written = [0] * n
    for i, b in enumerate(mf.blocks):
        for ops in operands[i]:
            for _, op, d in ops:
                if d:
                    written[i] |= bit.get(op.reg.id, 0)
    # predicates some path may have written, into each block (forward, union)
    into = [0] * n
    changed = True
    while changed:
        changed = False
        for i, b in enumerate(mf.blocks):
            out = into[i] | written[i]
            for s in b.succs:
                j = index[id(s)]
                if out & ~into[j]:
                    into[j] |= out
                    changed = True
    fresh = set()
    for i, b in enumerate(mf.blocks):
        seen = into[i]
        for ins, ops in zip(b.instrs, operands[i]):
            for _, op, d in ops:
                if d:
                    m = bit.get(op.reg.id, 0)
                    if m and not seen & m and (ins.guard is not None or op.part is not None):
                        fresh.add((id(ins), op.reg.id))
            for _, op, d in ops:
                if d:
                    seen |= bit.get(op.reg.id, 0)
    return fresh


def liveness(mf: MFunction, fresh: set | None = None) -> dict[int, set[int]]:
    """Live-out vreg ids per block (keyed by block index); `fresh` as `fresh_writes(mf)`
    returns (computed here when not given)."""
    if fresh is None:
        fresh = fresh_writes(mf)
    n = len(mf.blocks)
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    gen, kill = [set() for _ in range(n)], [set() for _ in range(n)]
    for i, b in enumerate(mf.blocks):
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins, fresh)
            for k in kills:
                gen[i].discard(k)
                kill[i].add(k)
            gen[i].update(uses)
    return _solve(mf, index, gen, kill)


def _solve(mf: MFunction, index: dict[int, int], gen: list[set], kill: list[set]) -> dict[int, set]:
    """Backward dataflow: live-out per block index from each block's gen and kill sets.
    Round-robin in reverse block order until a pass changes nothing; a block none of
    whose successors' live-in sets changed since it was last worked out is skipped (it
    would give the sets it has: in deep loop nests each pass re-unioned hundreds of
    values per block to find them equal)."""
    n = len(mf.blocks)
    succs = [[index[id(s)] for s in b.succs] for b in mf.blocks]
    live_in = [set() for _ in range(n)]
    live_out = [set() for _ in range(n)]
    done = [0] * n              # the step at which each block was last worked out (0: never)
    moved = [0] * n             # the step at which its live-in last changed
    step = 0
    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            if done[i] and all(moved[j] < done[i] for j in succs[i]):
                continue
            step += 1
            done[i] = step
            out = set()
            for j in succs[i]:
                out |= live_in[j]
            inn = gen[i] | (out - kill[i])
            if out != live_out[i] or inn != live_in[i]:
                live_out[i], live_in[i] = out, inn
                moved[i] = step
                changed = True
    return {i: live_out[i] for i in range(n)}


# Liveness per 32-bit part ("unit") of a register, for the allocator's interference: a
# quad whose parts are read at different times is live only in the parts still to be read,
# so a value written after one part's last read may take that part's register (ptxas's
# `FADD R16, R20, R16` into a dying 128-bit load). A unit is `vid << UNIT_BITS | part`.
UNIT_BITS = 7                 # widths up to 128 parts (a warpgroup MMA accumulator)


def operand_units(ins: MInstr, index: int, op) -> range:
    """The parts of `op.reg` operand `index` of `ins` names: all of them for the whole
    register; a part and, with an extra footprint (`ins.widths`), the parts it covers."""
    if op.part is None:
        return range(op.reg.width)
    return range(op.part, min(op.part + ins.widths.get(index, 1), op.reg.width))


def unit_use_def(ins: MInstr, fresh: frozenset | set = frozenset()
                 ) -> tuple[list[int], list[int], list[int]]:
    """(units read, units killed, units written) by `ins`: as `use_def`, per part. An
    unguarded write of a part kills that part only; a guarded one (unless fresh) keeps the
    old value alive, so its parts count as read too."""
    uses, kills, defs = [], [], []
    guarded = ins.guard is not None
    for index, op, is_def in register_operands(ins):
        base = op.reg.id << UNIT_BITS
        if op.part is None and op.reg.width == 1:       # (most operands: one unit, part 0)
            units = [base]
        else:
            units = [base | k for k in operand_units(ins, index, op)]
        if not is_def:
            uses.extend(units)
            continue
        defs.extend(units)
        if not guarded or (id(ins), op.reg.id) in fresh:
            kills.extend(units)
        else:
            uses.extend(units)
    return uses, kills, defs


def unit_liveness(mf: MFunction, fresh: set, keep: dict | None = None) -> dict[int, set[int]]:
    """Live-out units per block (keyed by block index), as `liveness` per part. `keep`,
    where given, receives block index -> `unit_use_def` of its instructions, last first
    (for a walk of the code that follows, so that it need not list them again)."""
    n = len(mf.blocks)
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    gen, kill = [set() for _ in range(n)], [set() for _ in range(n)]
    for i, b in enumerate(mf.blocks):
        found = [unit_use_def(ins, fresh) for ins in reversed(b.instrs)]
        if keep is not None:
            keep[i] = found
        for uses, kills, _ in found:
            for k in kills:
                gen[i].discard(k)
                kill[i].add(k)
            gen[i].update(uses)
    return _solve(mf, index, gen, kill)
