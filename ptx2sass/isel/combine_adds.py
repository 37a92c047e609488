"""Three-input adds: `IADD3 t = a, b, RZ` read only by `IADD3 d = t, c, RZ` becomes
`IADD3 d = a, b, c`, as ptxas sums index arithmetic (`x + y + z`, `a - b + c`). Run on the
machine IR after selection, before allocation.

Conditions: both unguarded, plain (no carry in or out), in one block with nothing between
them writing a, b; t is one 32-bit register written once and read once. A negated t negates
a and b. The sum keeps at most one immediate, constant-bank or uniform-register operand (it goes in
the middle slot, the only one that takes it) and at most one negated operand."""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.isel.common import RZ, register_counts, sources_unchanged
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands


def _plain(ins: MInstr) -> bool:
    return (ins.opcode == "IADD3" and not ins.modifiers and ins.guard is None and ins.ndefs == 1
            and len(ins.operands) == 4 and not ins.widths and isinstance(ins.operands[0], VOp)
            and ins.operands[0].part is None and isinstance(ins.operands[3], Reg)
            and ins.operands[3].is_zero)


def _negated(op):
    if isinstance(op, VOp):
        return VOp(op.reg, op.part, neg=not op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix)
    if isinstance(op, Imm) and op.text is None and not op.neg:
        return Imm((-op.value) & 0xFFFFFFFF)
    if isinstance(op, ConstRef):
        return ConstRef(op.bank, op.offset, neg=not op.neg, reloc=op.reloc)
    if isinstance(op, Reg) and op.is_zero:
        return op
    return None


def _is_negated(op) -> bool:
    return bool(getattr(op, "neg", False))


def _middle_only(op) -> bool:
    """An operand only IADD3's middle slot takes: an immediate, a constant, a uniform
    register (`target_forms` loads sm_90's constants into URs before this runs)."""
    return isinstance(op, (Imm, ConstRef)) or (isinstance(op, VOp) and op.reg.cls == "UR")


def _arrange(ops: list):
    """(a, b, c) for IADD3, or None."""
    nonreg = [o for o in ops if _middle_only(o)]
    regs = [o for o in ops if not _middle_only(o)]
    if len(nonreg) > 1 or sum(_is_negated(o) for o in ops) > 1:
        return None
    if any(not isinstance(o, (VOp, Reg)) for o in regs) or any(
            isinstance(o, VOp) and (o.abs or o.inv or o.suffix) for o in regs):
        return None
    if nonreg:
        return regs[0], nonreg[0], regs[1]
    return tuple(regs)


def combine_adds(mf: MFunction) -> int:
    reads, writes = register_counts(mf)
    combined = 0
    for b in mf.blocks:
        where: dict[int, int] = {}          # vreg id -> index of its plain IADD3 definition
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            if _plain(ins):
                srcs = ins.operands[1:3]
                hit = [k for k, o in enumerate(srcs) if isinstance(o, VOp) and o.part is None
                       and o.reg.id in where and reads.get(o.reg.id) == 1]
                if hit:
                    k = hit[0]
                    t = srcs[k]
                    i = where[t.reg.id]
                    inner = b.instrs[i]
                    parts = list(inner.operands[1:3])
                    if t.neg:
                        parts = [_negated(p) for p in parts]
                    other = srcs[1 - k]
                    arranged = None if any(p is None for p in parts) else _arrange(
                        [p for p in parts + [other] if not (isinstance(p, Reg) and p.is_zero)]
                        + [RZ] * 3)
                    if arranged is not None and t.reg.width == 1 and t.reg.id not in mf.precolored \
                            and sources_unchanged(b.instrs, i, j, inner):
                        a, bb, c = arranged[:3]
                        ins.operands = [ins.operands[0], a, bb, c]
                        dead.add(i)
                        del where[t.reg.id]
                        combined += 1
            for _, op, is_def in register_operands(ins):
                if is_def:
                    where.pop(op.reg.id, None)
            if _plain(ins) and writes.get(ins.operands[0].reg.id) == 1 \
                    and ins.operands[0].reg.cls == "R":
                where[ins.operands[0].reg.id] = j
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return combined
