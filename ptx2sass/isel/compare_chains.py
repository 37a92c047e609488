"""A compare ORed or ANDed into another predicate is one ISETP with that predicate as its
accumulator, `ISETP.GE.OR P0, PT, R0, R2, P0`, as ptxas writes bounds tests
(`setp.lt.s32 p1, x, 1; or.pred p3, p1, p2` is `ISETP.LT.OR p3, PT, x, 1, p2`), not an
ISETP and a PLOP3. Run on the machine IR after selection, before allocation.

Pattern, in one block: `PLOP3.LUT d, PT, a, b, PT, lut, 0x0` with lut 0xfc (a | b) or 0xc0
(a & b), a and b plain predicates, where a (or b) is written once, by an unguarded
`ISETP.<cmp>.AND a, PT, x, y, PT` read only by the PLOP3, and nothing between the ISETP
and the PLOP3 writes x or y. The PLOP3 becomes `ISETP.<cmp>.OR|AND d, PT, x, y, other`;
the first ISETP goes. Of two such compares, the later one is folded, so a chain of
tests folds one link at a time into a chain of ISETPs."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.isel.common import register_counts
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

JOINS = {0xFC: "OR", 0xC0: "AND"}


def _pt(op, inverted: bool = False) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.index == 7 and op.inv == inverted


def _plain_pred(op) -> bool:
    return isinstance(op, VOp) and op.reg.cls == "P" and op.part is None and not (
        op.neg or op.abs or op.inv or op.suffix)


def _join(ins: MInstr) -> str | None:
    if not (ins.opcode == "PLOP3" and ins.modifiers == ("LUT",) and ins.guard is None
            and ins.ndefs in (1, 2) and len(ins.operands) == 7 and _plain_pred(ins.operands[0])
            and _pt(ins.operands[1]) and _plain_pred(ins.operands[2]) and _plain_pred(ins.operands[3])
            and _pt(ins.operands[4]) and isinstance(ins.operands[5], Imm)
            and isinstance(ins.operands[6], Imm) and ins.operands[6].value == 0
            and ins.operands[2].reg.id != ins.operands[3].reg.id):
        return None
    return JOINS.get(ins.operands[5].value)


def _plain_compare(ins: MInstr) -> bool:
    return (ins.opcode == "ISETP" and ins.modifiers and ins.modifiers[-1] == "AND"
            and "EX" not in ins.modifiers and ins.guard is None and ins.ndefs == 2
            and len(ins.operands) == 5 and _plain_pred(ins.operands[0]) and _pt(ins.operands[1])
            and _pt(ins.operands[4]))


def fold_compare_chains(mf: MFunction) -> int:
    reads, writes = register_counts(mf)
    folded = 0
    for b in mf.blocks:
        where: dict[int, int] = {}       # predicate id -> index of its plain ISETP
        # register id -> the pending predicates whose ISETP reads it (a write of the register
        # retires them; a reverse index keeps a long block's work linear)
        readers: dict[int, list[tuple[int, int]]] = {}
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            join = _join(ins)
            if join is not None:
                a, c = ins.operands[2], ins.operands[3]
                hits = [(where[p.reg.id], p, other) for p, other in ((a, c), (c, a))
                        if p.reg.id in where and reads.get(p.reg.id) == 1 and writes.get(p.reg.id) == 1
                        and p.reg.id not in mf.precolored]
                if hits:
                    i, _, other = max(hits, key=lambda h: h[0])
                    cmp = b.instrs[i]
                    ins.opcode, ins.ndefs = "ISETP", 2
                    ins.modifiers = cmp.modifiers[:-1] + (join,)
                    ins.operands = [ins.operands[0], ins.operands[1], cmp.operands[2], cmp.operands[3], other]
                    dead.add(i)
                    del where[cmp.operands[0].reg.id]
                    folded += 1
            for _, op, is_def in register_operands(ins):
                if is_def:
                    for p, i in readers.pop(op.reg.id, ()):
                        if where.get(p) == i:
                            del where[p]
                    where.pop(op.reg.id, None)
            if _plain_compare(ins) and j not in dead:
                p = ins.operands[0].reg.id
                where[p] = j
                for _, o, d in register_operands(ins):
                    if not d:
                        readers.setdefault(o.reg.id, []).append((p, j))
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return folded
