"""Predicate rematerialisation: recompute a compare right before each instruction that
reads its predicate, so that no predicate stays live across long stretches of code.

Why: sm_8x has seven predicate registers. tinygrad (and other generators) write every
`setp` of a kernel first and the `selp`s that read them afterwards; allocated in program
order that needs dozens of predicates at once. ptxas schedules each compare next to its
users instead. Until the list scheduler does that, the allocator falls back on this pass
when it runs out of predicates: a compare whose sources are never written again after it
(written once, or built in parts just before it in its block) has the same inputs wherever
its predicate is read (the compare dominates the read), so a copy placed just before the read
computes the same predicate, and that predicate lives for one instruction.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Reg
from ptx2sass.mir import MFunction, MInstr, VMem, VOp, register_operands

COMPARES = frozenset({"ISETP", "FSETP", "DSETP", "HSETP2", "PLOP3"})


def _definition_sites(mf: MFunction) -> dict[int, list[tuple[int, int]]]:
    """vreg id -> every (block index, instruction index) that writes it."""
    sites: dict[int, list[tuple[int, int]]] = {}
    for bi, b in enumerate(mf.blocks):
        for ii, ins in enumerate(b.instrs):
            for _, op, is_def in register_operands(ins):
                if is_def:
                    sites.setdefault(op.reg.id, []).append((bi, ii))
    return sites


def _sources_fixed(ins: MInstr, at: tuple[int, int], sites) -> bool:
    """Each source keeps its value from the compare on: written once (that write dominates
    the compare), or written only in the compare's block before it (a value built in parts,
    a 64-bit pair), so nothing anywhere writes it again."""
    for op in ins.uses:
        base = op.base if isinstance(op, VMem) else op
        if not isinstance(base, VOp):
            continue
        where = sites.get(base.reg.id, [])
        if len(where) != 1 and not all(bi == at[0] and ii < at[1] for bi, ii in where):
            return False
    return True


def rematerialise_predicates(mf: MFunction, only: set[int] | None = None) -> bool:
    """Rewrite `mf` in place; True if anything changed. `only`: the predicates (vreg ids)
    whose compares are recomputed (default: every compare that may be)."""
    sites = _definition_sites(mf)
    compare_of: dict[int, MInstr] = {}
    for bi, b in enumerate(mf.blocks):
        for ii, ins in enumerate(b.instrs):
            if (ins.opcode in COMPARES and ins.guard is None and ins.ndefs == 2
                    and isinstance(ins.operands[0], VOp) and ins.operands[0].reg.cls == "P"
                    and isinstance(ins.operands[1], Reg)
                    and (only is None or ins.operands[0].reg.id in only)
                    and len(sites.get(ins.operands[0].reg.id, [])) == 1
                    and _sources_fixed(ins, (bi, ii), sites)):
                compare_of[ins.operands[0].reg.id] = ins
    if not compare_of:
        return False

    def clone_before(op: VOp, out: list[MInstr]) -> VOp:
        """A fresh predicate computed into `out` (just before its reader), same polarity."""
        original = compare_of[op.reg.id]
        operands = list(original.operands)
        for i in range(original.ndefs, len(operands)):
            operands[i] = fresh(operands[i], out)
        p = VOp(mf.new_vreg("P"))
        operands[0] = p
        out.append(MInstr(original.opcode, original.modifiers, operands, original.ndefs, None,
                          original.line, dict(original.widths)))
        return replace(p, inv=op.inv)

    def fresh(op, out):
        if isinstance(op, VOp) and op.reg.id in compare_of:
            return clone_before(op, out)
        return op

    originals = set(compare_of.values())
    changed = False
    for b in mf.blocks:
        rewritten: list[MInstr] = []
        for ins in b.instrs:
            if ins in originals:
                rewritten.append(ins)        # dropped below if nothing reads it any more
                continue
            pre: list[MInstr] = []
            operands = [op if i < ins.ndefs else fresh(op, pre) for i, op in enumerate(ins.operands)]
            guard = fresh(ins.guard, pre) if isinstance(ins.guard, VOp) else ins.guard
            if pre:
                changed = True
                ins.operands, ins.guard = operands, guard
            rewritten += pre
            rewritten.append(ins)
        b.instrs = rewritten
    # the originals are dead now, unless something outside the rewrite still reads them
    # (a dropped compare can be the last reader of another: repeat to a fixpoint)
    while True:
        read: set[int] = set()
        for b in mf.blocks:
            for ins in b.instrs:
                for _, op, is_def in register_operands(ins):
                    if not is_def:
                        read.add(op.reg.id)
        dropped = False
        for b in mf.blocks:
            kept = [ins for ins in b.instrs
                    if not (ins.opcode in COMPARES and isinstance(ins.operands[0], VOp)
                            and ins.operands[0].reg.id in compare_of
                            and ins.operands[0].reg.id not in read)]
            dropped |= len(kept) != len(b.instrs)
            b.instrs = kept
        if not dropped:
            return changed
