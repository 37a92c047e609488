"""A logic result tested for non-zero, `and.b32 t, x, 31; setp.ne.s32 p, t, 0`, is one
LOP3 with a predicate result, `LOP3.LUT P0, RZ, R2, 0x1f, RZ, 0xc0, !PT` (P = result != 0,
ORed with the last source, !PT here), as ptxas writes the lane tests of warp reductions.
Run on the machine IR after selection, before allocation.

Pattern, in one block: `LOP3.LUT t = a, b, c, lut, !PT` (unguarded, t (a register or a
word of one) written once and read only by) `ISETP.NE(.U32).AND p, PT, t, RZ, PT` (unguarded), nothing between them
writing a, b or c. The ISETP becomes the LOP3 with RZ as its register result; the first
LOP3 goes. `setp.eq` would need the inverted predicate and is left as it is."""
from __future__ import annotations

from ptx2sass.encoder.model import Reg
from ptx2sass.isel.common import RZ, register_counts
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

NE_TESTS = frozenset({("NE", "AND"), ("NE", "U32", "AND")})
NE_EX_TESTS = frozenset({("NE", "AND", "EX"), ("NE", "U32", "AND", "EX")})


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _true(op, inverted: bool) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.index == 7 and op.inv == inverted


def _plain(op) -> bool:
    """A register, or one word of a wide one (a 64-bit `and` whose high word is known zero
    writes only its low word)."""
    return isinstance(op, VOp) and (op.part is None) == (op.reg.width == 1) and not (
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


def _is_nonzero_high_test(ins: MInstr) -> bool:
    """The high word of a 64-bit non-zero test, `ISETP.NE.AND.EX p, PT, t, RZ, PT, low`:
    p = t != 0 or low."""
    return (ins.opcode == "ISETP" and ins.modifiers in NE_EX_TESTS and ins.guard is None
            and ins.ndefs == 2 and len(ins.operands) == 6 and isinstance(ins.operands[0], VOp)
            and _true(ins.operands[1], inverted=False) and _plain(ins.operands[2])
            and _zero(ins.operands[3]) and _true(ins.operands[4], inverted=False)
            and _plain(ins.operands[5]) and ins.operands[5].reg.cls == "P")


def fold_lop3_predicates(mf: MFunction) -> int:
    reads, writes = register_counts(mf)
    word_reads: dict[tuple, int] = {}       # (vreg id, part) -> reads of that operand form
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                if not is_def:
                    word_reads[op.reg.id, op.part] = word_reads.get((op.reg.id, op.part), 0) + 1
    folded = 0
    for b in mf.blocks:
        where: dict[tuple, int] = {}    # (vreg id, part) -> index of its LOP3 definition
        # vreg id -> the ((result, part), index) of the pending LOP3s that read it: a redefinition
        # drops just those (a long block of LOP3s nobody tests keeps many pending)
        readers: dict[int, list[tuple[tuple, int]]] = {}
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            high = _is_nonzero_high_test(ins)
            if high or _is_nonzero_test(ins):
                t = ins.operands[2].reg.id
                part = ins.operands[2].part
                i = where.get((t, part))
                # a word of a wide register: read by this test alone (its other words, a
                # zero high word or the other half of a 64-bit test, may be read elsewhere)
                once = reads.get(t) == 1 if part is None else (
                    word_reads.get((t, part)) == 1 and (t, None) not in word_reads)
                if (i is not None and once and (writes.get(t) == 1 or part is not None)
                        and t not in mf.precolored and b.instrs[i].operands[0].part == part):
                    lop = b.instrs[i]
                    ins.opcode, ins.modifiers, ins.ndefs = "LOP3", ("LUT",), 2
                    ins.operands = [ins.operands[0], RZ] + list(lop.operands[1:5]) + [
                        ins.operands[5] if high else lop.operands[5]]
                    dead.add(i)
                    folded += 1
            for _, op, is_def in register_operands(ins):
                if is_def:
                    # a source redefined: no LOP3 before this point may move past it
                    for key, i in readers.pop(op.reg.id, ()):
                        if where.get(key) == i:
                            del where[key]
                    for part in (None, 0, 1, 2, 3) if op.part is None else (op.part,):
                        where.pop((op.reg.id, part), None)     # the tested word rewritten
            if _is_lop3(ins):
                key = (ins.operands[0].reg.id, ins.operands[0].part)
                where[key] = j
                for _, op, is_def in register_operands(ins):
                    if not is_def:
                        readers.setdefault(op.reg.id, []).append((key, j))
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return folded
