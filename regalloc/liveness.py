"""Liveness over the machine IR: which virtual registers each instruction reads and kills,
and the set live out of every block.

The machine IR is not SSA: a write of one part of a wide register, or a guarded write,
leaves the rest of the register (or its old value where the guard is false) live, so it
counts as a use and a def; only an unguarded whole write kills. Sets hold vreg ids (ints),
so nothing here depends on object identity or hash seeds.
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, MInstr, register_operands


def use_def(ins: MInstr) -> tuple[list[int], list[int]]:
    """Virtual registers read (for liveness) and killed (fully written) by `ins`."""
    uses, kills = [], []
    guarded = ins.guard is not None
    for _, op, is_def in register_operands(ins):
        if is_def and op.part is None and not guarded:
            kills.append(op.reg.id)
        else:
            uses.append(op.reg.id)
    return uses, kills


def liveness(mf: MFunction) -> dict[int, set[int]]:
    """Live-out vreg ids per block (keyed by block index)."""
    n = len(mf.blocks)
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    gen, kill = [set() for _ in range(n)], [set() for _ in range(n)]
    for i, b in enumerate(mf.blocks):
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins)
            for k in kills:
                gen[i].discard(k)
                kill[i].add(k)
            gen[i].update(uses)
    live_in = [set() for _ in range(n)]
    live_out = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            b = mf.blocks[i]
            out = set()
            for s in b.succs:
                out |= live_in[index[id(s)]]
            inn = gen[i] | (out - kill[i])
            if out != live_out[i] or inn != live_in[i]:
                live_out[i], live_in[i] = out, inn
                changed = True
    return {i: live_out[i] for i in range(n)}
