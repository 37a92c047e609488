"""A register move whose copy is only ever read as the original goes: its readers read the
source instead, so the two values stop holding two registers.

The selector writes moves as MOV or IMAD.MOV.U32 (ptxas's alternation), not as the
allocator's COPY, so the allocator never coalesces them. Most matter where a 32-bit value
is widened into the low word of a 64-bit register (`cvt.u64.u32 %rd, %r`): once
`remove_dead_parts` has dropped the high word's `MOV RZ` (its readers use RZ), the pair's
low word is a second copy of `%r`. Triton's matmul_masked widens three loop-invariant
lane indices so, all three live across its loop next to the originals (ptxas keeps one).

A move goes when it is unguarded, plain (no negation/absolute/inversion), writes one
32-bit part that nothing else writes (the register's IMPLICIT_DEF aside), every reader of
its register reads exactly that part (no whole-register read, no operand whose `widths`
spans more), its source is a 32-bit part written by exactly one instruction whose block
dominates the move (earlier in the same block), and every reader is dominated by the move.
Then the source's value at each reader is the one the move copied (a path from the move
to a reader through the source's writer would reach the reader without the move).
Precoloured registers (calling convention) stay as they are.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.mir import IMPLICIT_DEF, MBlock, MFunction, MInstr, VMem, VOp, register_operands
from ptx2sass.encoder.model import ConstRef, Reg

RZ_INDEX = 255


def _move_source(ins: MInstr) -> VOp | None:
    """The register a plain 32-bit move reads, or None when `ins` is no such move."""
    if ins.guard is not None or ins.ndefs != 1 or ins.widths or ins.clobbers or ins.shown is not None:
        return None
    ops = ins.operands
    if ins.opcode == "MOV" and ins.modifiers == () and len(ops) == 2:
        src = ops[1]
    elif (ins.opcode == "IMAD" and ins.modifiers == ("MOV", "U32") and len(ops) == 4
          and all(type(o) is Reg and o.file == "R" and o.index == RZ_INDEX and not o.neg for o in ops[1:3])):
        src = ops[3]
    else:
        return None
    if type(src) is not VOp or src.reg.cls != "R" or src.width != 1 or src.neg or src.abs or src.inv or src.suffix:
        return None
    d = ops[0]
    if type(d) is not VOp or d.reg.cls != "R" or d.width != 1 or d.suffix:
        return None
    return src


def _dominators(mf: MFunction) -> dict[str, set[str]]:
    """Block name -> the names of the blocks that dominate it (itself included)."""
    names = [b.name for b in mf.blocks]
    if not names:
        return {}
    entry = names[0]
    every = set(names)
    dom = {n: set(every) for n in names}
    dom[entry] = {entry}
    preds = {b.name: [p.name for p in b.preds] for b in mf.blocks}
    changed = True
    while changed:
        changed = False
        for n in names[1:]:
            ps = [dom[p] for p in preds[n] if p in dom]
            new = set.intersection(*ps) if ps else set()
            new = new | {n}
            if new != dom[n]:
                dom[n] = new
                changed = True
    return dom


def _substitute(op, old: int, part: int, new: VOp):
    """`op` reading `old`'s `part` as `new` (keeping the reader's own modifiers)."""
    if type(op) is VOp and op.reg.id == old:
        return replace(new, neg=op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix)
    if type(op) is VMem and op.ubase is not None and op.ubase.reg.id == old:
        op = replace(op, ubase=_substitute(op.ubase, old, part, new))
    if type(op) is VMem and type(op.base) is VOp and op.base.reg.id == old:
        return replace(op, base=_substitute(op.base, old, part, new))
    if type(op) is ConstRef and type(op.ureg) is VOp and op.ureg.reg.id == old:
        return replace(op, ureg=_substitute(op.ureg, old, part, new))
    return op


def forward_moves(mf: MFunction) -> int:
    """Readers of single-part moves read the source; the moves go. Returns how many went."""
    where: dict[int, tuple[MBlock, int]] = {}          # id(instr) -> (block, index)
    writes: dict[int, list[tuple[MInstr, int | None]]] = {}
    reads: dict[int, list[tuple[MInstr, int, VOp]]] = {}
    for b in mf.blocks:
        for k, ins in enumerate(b.instrs):
            where[id(ins)] = (b, k)
            for i, op, is_def in register_operands(ins):
                if is_def:
                    writes.setdefault(op.reg.id, []).append((ins, op.part))
                else:
                    reads.setdefault(op.reg.id, []).append((ins, i, op))
            if ins.warp_combine is not None:        # registers a later pass reads: keep
                from ptx2sass.isel.warp_aggregated_atomics import combine_registers
                for op in combine_registers(ins):
                    reads.setdefault(op.reg.id, []).append((ins, -2, op))
    dom: dict[str, set[str]] | None = None

    def dominates(a: MInstr, b: MInstr) -> bool:
        (ba, ka), (bb, kb) = where[id(a)], where[id(b)]
        if ba is bb:
            return ka < kb
        return ba.name in dom[bb.name]

    removed = 0
    for b in mf.blocks:
        for ins in list(b.instrs):
            src = _move_source(ins)
            if src is None:
                continue
            d: VOp = ins.operands[0]
            dreg, dpart = d.reg.id, d.part
            if dreg in mf.precolored or src.reg.id in mf.precolored or dreg == src.reg.id:
                continue
            dwrites = writes.get(dreg, [])
            if [w for w, _ in dwrites if w.opcode != IMPLICIT_DEF] != [ins]:
                continue
            swrites = [w for w, part in writes.get(src.reg.id, [])
                       if w.opcode != IMPLICIT_DEF and (part is None or part == src.part)]
            if len(swrites) != 1:
                continue
            readers = reads.get(dreg, [])
            if any(i < 0 or op.part != dpart or i in r.widths or (op.part is None and d.reg.width != 1)
                   for r, i, op in readers):
                continue
            if dom is None:
                dom = _dominators(mf)
            if not dominates(swrites[0], ins) or not all(dominates(ins, r) for r, _, _ in readers):
                continue
            new = VOp(src.reg, src.part)
            for r, i, _ in readers:
                r.operands[i] = _substitute(r.operands[i], dreg, dpart, new)
                reads.setdefault(src.reg.id, []).append((r, i, new))
            reads[dreg] = []
            b.instrs.remove(ins)
            writes[dreg] = [(w, p) for w, p in dwrites if w is not ins]
            for w, _ in writes[dreg]:           # the register's IMPLICIT_DEF: nothing reads it now
                wb, _ = where[id(w)]
                if w in wb.instrs:
                    wb.instrs.remove(w)
            writes[dreg] = []
            # indices in `b` moved: recompute positions of this block
            for k, x in enumerate(b.instrs):
                where[id(x)] = (b, k)
            removed += 1
    return removed
