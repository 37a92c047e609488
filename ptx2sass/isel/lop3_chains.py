"""Chains of logic operations over at most three values become one LOP3, as ptxas writes
them: `xor t, a, b; xor d, t, c` is `LOP3.LUT d, a, b, c, 0x96, !PT`, and
`not t, b; and u, t, c; or d, u, a` one LOP3 too. Selection gives each PTX logic
instruction its own two-input LOP3; a LOP3 computes any function of three inputs, so an
inner LOP3 whose result only one outer LOP3 reads folds into it whenever the two together
read at most three distinct values. The combined truth table is the outer table evaluated
on the inner one's (each table applied to the slot patterns 0xF0, 0xCC, 0xAA).
Run on the machine IR after selection, before allocation (and before
`fold_lop3_predicates`, which may then fold the whole chain into a predicate test).

Pattern, in one block: `LOP3.LUT t = a, b, c, lut, !PT` (unguarded, t written once and read
only by) a later unguarded `LOP3.LUT d = ..., t, ..., !PT`, nothing between them writing a,
b or c. A non-register value (an immediate, a constant-bank word, a uniform register) can
only sit in slot b: a combination with two of them is left alone."""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.isel.common import RZ
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

_SLOT_PATTERNS = (0xF0, 0xCC, 0xAA)


def _apply(lut: int, a: int, b: int, c: int) -> int:
    """The 8-bit pattern of `lut` applied bitwise to the input patterns a, b, c."""
    out = 0
    for i in range(8):
        if lut >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out & 0xFF


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _true(op, inverted: bool) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.index == 7 and op.inv == inverted


def _general(op) -> bool:
    """A plain general-register value: it may sit in any of the three slots."""
    return isinstance(op, VOp) and op.reg.cls == "R" and op.width == 1 and not (
        op.neg or op.abs or op.inv or op.suffix)


def _lop3_slots_ok(ins: MInstr) -> bool:
    ops = ins.operands
    if not (ins.modifiers == ("LUT",) and ins.guard is None and ins.ndefs == 1 and len(ops) == 6
            and _general(ops[0]) and isinstance(ops[4], Imm)
            and _true(ops[5], inverted=True)):
        return False
    return all(_general(o) or _zero(o) for o in (ops[1], ops[3])) and (
        _general(ops[2]) or _zero(ops[2]) or _other(ops[2]))


def _other(op) -> bool:
    """A value only slot b takes: an immediate, a constant-bank word, a uniform register."""
    if isinstance(op, Imm):
        return not (op.neg or op.abs) and op.text is None
    if isinstance(op, ConstRef):
        return not (op.neg or op.abs or op.inv)
    return isinstance(op, VOp) and op.reg.cls == "UR" and op.width == 1 and not (
        op.neg or op.abs or op.inv or op.suffix)


def _combine(outer: MInstr, k: int, inner: MInstr) -> list | None:
    """The operands of one LOP3 computing `outer` with its slot k (1-3) replaced by `inner`'s
    result, or None when the two read more than three values or two slot-b-only ones."""
    leaves: list = []
    for op in [o for j, o in enumerate(outer.operands[1:4], 1) if j != k] + list(inner.operands[1:4]):
        if not _zero(op) and op not in leaves:
            leaves.append(op)
    if len(leaves) > 3:
        return None
    others = [op for op in leaves if not _general(op)]
    if len(others) > 1:
        return None
    slots = [RZ, RZ, RZ]
    if others:
        slots[1] = others[0]
    free = [j for j in (0, 1, 2) if slots[j] is RZ]
    for op in leaves:
        if op not in others:
            slots[free.pop(0)] = op
    pattern = {op: _SLOT_PATTERNS[j] for j, op in enumerate(slots) if not _zero(op)}

    t = _apply(inner.operands[4].value & 0xFF,
               *(0 if _zero(o) else pattern[o] for o in inner.operands[1:4]))
    outs = [t if j == k else 0 if _zero(o) else pattern[o] for j, o in enumerate(outer.operands[1:4], 1)]
    lut = _apply(outer.operands[4].value & 0xFF, *outs)
    return [outer.operands[0], *slots, Imm(lut), outer.operands[5]]


def _part_counts(mf: MFunction) -> tuple[dict, dict]:
    """(reads, writes) of each 32-bit part, keyed (register id, part): a whole wide operand
    counts for each of its parts (a 64-bit XOR is two LOP3s, one a half). IMPLICIT_DEF, the
    placeholder in front of a wide value's part-wise definitions, writes no value."""
    reads: dict = {}
    writes: dict = {}
    for b in mf.blocks:
        for ins in b.instrs:
            if ins.opcode == "IMPLICIT_DEF":
                continue
            for _, op, is_def in register_operands(ins):
                table = writes if is_def else reads
                parts = range(op.reg.width) if op.part is None and op.reg.width > 1 else (op.part,)
                for p in parts:
                    table[op.reg.id, p] = table.get((op.reg.id, p), 0) + 1
    return reads, writes


def _key(op: VOp) -> tuple:
    return op.reg.id, op.part


# `x & c2` of `x = y & c1` folded too (`_fold_masks`)
MASKS = True


def _and_mask(ins: MInstr) -> tuple | None:
    """(value, mask) of selection's `x & imm`, `LOP3.LUT d, x, imm, RZ, 0xc0, !PT`."""
    ops = ins.operands
    if (_lop3_slots_ok(ins) and _general(ops[1]) and isinstance(ops[2], Imm) and _other(ops[2])
            and _zero(ops[3]) and ops[4].value & 0xFF == 0xC0):
        return ops[1], ops[2].value & 0xFFFFFFFF
    return None


def _fold_masks(ins: MInstr, masks: dict, where: dict, dead: set, reads: dict, writes: dict) -> bool:
    """`x & c2` of `x = y & c1` (tinygrad's `and 127` then `cvt.u16.u8` then `cvt.u32.u16`):
    a COPY of x when c2 keeps every bit c1 can set (the allocator coalesces it), else
    `y & (c1 & c2)`, the inner going when this was its one reader."""
    own = _and_mask(ins)
    if own is None:
        return False
    x, c2 = own
    t = _key(x)
    inner = masks.get(t)
    if inner is None or writes.get(t) != 1:
        return False
    y, c1, i, first = inner
    if c1 & ~c2 == 0:
        ins.opcode, ins.modifiers = "COPY", ()
        ins.operands = [ins.operands[0], x]
        masks[_key(ins.operands[0])] = inner      # the copy is `y & c1` too
        return True
    if where.get(first) != i:        # y redefined since: keep reading x
        return False
    ins.operands = [ins.operands[0], y, Imm(c1 & c2), RZ, ins.operands[4], ins.operands[5]]
    if reads.get(t) == 1:
        dead.add(i)
    return True


def fold_lop3_chains(mf: MFunction) -> int:
    reads, writes = _part_counts(mf)
    folded = 0
    for b in mf.blocks:
        where: dict[tuple, int] = {}      # (vreg id, part) -> index of its LOP3 definition
        # vreg id -> the (result, index) of the pending LOP3s that read it (any part): a
        # redefinition drops just those, as in lop3_predicates.py
        readers: dict[int, list[tuple[tuple, int]]] = {}
        dead: set[int] = set()
        # (vreg id, part) -> (y, c1, index, key of the LOP3's result) of a value `y & c1`
        masks: dict[tuple, tuple] = {}
        for j, ins in enumerate(b.instrs):
            if MASKS and _fold_masks(ins, masks, where, dead, reads, writes):
                folded += 1
            elif (ins.opcode == "COPY" and ins.guard is None and len(ins.operands) == 2
                  and isinstance(ins.operands[1], VOp) and _key(ins.operands[1]) in masks
                  and _general(ins.operands[0]) and writes.get(_key(ins.operands[0])) == 1):
                masks[_key(ins.operands[0])] = masks[_key(ins.operands[1])]
            again = _lop3_slots_ok(ins)
            while again:        # the slots change with each fold: look at all three again
                again = False
                for k in (1, 2, 3):
                    op = ins.operands[k]
                    if not _general(op):
                        continue
                    t = _key(op)
                    i = where.get(t)
                    if i is None or reads.get(t) != 1 or writes.get(t) != 1 or t[0] in mf.precolored:
                        continue
                    combined = _combine(ins, k, b.instrs[i])
                    if combined is None:
                        continue
                    ins.operands = combined
                    dead.add(i)
                    del where[t]
                    folded += 1
                    again = True
                    break
            for _, op, is_def in register_operands(ins):
                if is_def:
                    for t, i in readers.pop(op.reg.id, ()):
                        if where.get(t) == i:
                            del where[t]
                    parts = range(op.reg.width) if op.part is None and op.reg.width > 1 else (op.part,)
                    for p in parts:
                        where.pop((op.reg.id, p), None)
            if _lop3_slots_ok(ins):
                t = _key(ins.operands[0])
                where[t] = j
                own = _and_mask(ins)
                if own is not None:
                    masks[t] = (own[0], own[1], j, t)
                for _, op, is_def in register_operands(ins):
                    if not is_def:
                        readers.setdefault(op.reg.id, []).append((t, j))
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return folded
