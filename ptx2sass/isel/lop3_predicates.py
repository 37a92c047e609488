"""A logic result tested for non-zero, `and.b32 t, x, 31; setp.ne.s32 p, t, 0`, is one
LOP3 with a predicate result, `LOP3.LUT P0, RZ, R2, 0x1f, RZ, 0xc0, !PT` (P = result != 0,
ORed with the last source, !PT here), as ptxas writes the lane tests of warp reductions.
Run on the machine IR after selection, before allocation.

Pattern, in one block: `LOP3.LUT t = a, b, c, lut, !PT` (unguarded, t written once and
read only by) `ISETP.NE(.U32).AND p, PT, t, RZ, PT` (unguarded), nothing between them
writing a, b or c. The ISETP becomes the LOP3 with RZ as its register result; the first
LOP3 goes. `setp.eq` would need the inverted predicate and is left as it is."""
from __future__ import annotations

from ptx2sass.encoder.model import Reg
from ptx2sass.isel.common import RZ, register_counts
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

NE_TESTS = frozenset({("NE", "AND"), ("NE", "U32", "AND")})


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _true(op, inverted: bool) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.index == 7 and op.inv == inverted


def _plain(op) -> bool:
    return isinstance(op, VOp) and op.part is None and op.reg.width == 1 and not (
        op.neg or op.abs or op.inv or op.suffix)


def _is_lop3(ins: MInstr) -> bool:
    return (ins.opcode == "LOP3" and ins.modifiers == ("LUT",) and ins.guard is None
            and ins.ndefs == 1 and len(ins.operands) == 6 and _plain(ins.operands[0])
            and _true(ins.operands[5], inverted=True))


def _is_nonzero_test(ins: MInstr) -> bool:
    return (ins.opcode == "ISETP" and ins.modifiers in NE_TESTS and ins.guard is None
            and ins.ndefs == 2 and len(ins.operands) == 5 and isinstance(ins.operands[0], VOp)
            and _true(ins.operands[1], inverted=False) and _plain(ins.operands[2])
            and _zero(ins.operands[3]) and _true(ins.operands[4], inverted=False))


def fold_lop3_predicates(mf: MFunction) -> int:
    reads, writes = register_counts(mf)
    folded = 0
    for b in mf.blocks:
        where: dict[int, int] = {}      # vreg id -> index of its LOP3 definition
        # vreg id -> the (result, index) of the pending LOP3s that read it: a redefinition
        # drops just those (a long block of LOP3s nobody tests keeps many pending)
        readers: dict[int, list[tuple[int, int]]] = {}
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            if _is_nonzero_test(ins):
                t = ins.operands[2].reg.id
                i = where.get(t)
                if i is not None and reads.get(t) == 1 and writes.get(t) == 1 and t not in mf.precolored:
                    lop = b.instrs[i]
                    ins.opcode, ins.modifiers, ins.ndefs = "LOP3", ("LUT",), 2
                    ins.operands = [ins.operands[0], RZ] + list(lop.operands[1:])
                    dead.add(i)
                    folded += 1
            for _, op, is_def in register_operands(ins):
                if is_def:
                    # a source redefined: no LOP3 before this point may move past it
                    for t, i in readers.pop(op.reg.id, ()):
                        if where.get(t) == i:
                            del where[t]
                    where.pop(op.reg.id, None)
            if _is_lop3(ins):
                t = ins.operands[0].reg.id
                where[t] = j
                for _, op, is_def in register_operands(ins):
                    if not is_def:
                        readers.setdefault(op.reg.id, []).append((t, j))
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return folded
