"""A 64-bit add of a value shifted left, `shl.b64 t, x, 2; add.s64 d, b, t` (an index
scaled to bytes and added to a pointer), is two LEAs, as ptxas writes it:
`LEA d.lo, P, x.lo, b.lo, 0x2` and `LEA.HI.X d.hi, x.lo, b.hi, x.hi, 0x2, P` (the high
word of {x.hi, x.lo} << 2, plus b.hi and the carry), not a SHF.L.U64.HI, a SHF.L.U32 and
an IADD3 pair. Run on the machine IR after selection, before allocation.

Pattern, in one block: the pair t written only by `SHF.L.U64.HI t.1 = l, k, h` and
`SHF.L.U32 t.0 = l, k, RZ` (and the IMPLICIT_DEF that starts it) and read only by
`IADD3 d.0, P = t.0, b0, RZ` and `IADD3.X d.1 = t.1, b1, RZ, P, !PT` (either source order),
with nothing from the shifts to the IADD3.X writing l, h or the carry. Only forms the
target's table encodes are written."""
from __future__ import annotations

import functools

from ptx2sass.encoder.model import ConstRef, Imm, Instruction, Reg
from ptx2sass.mir import IMPLICIT_DEF, MFunction, MInstr, VOp, register_operands

RZ = Reg("R", 255)


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _part(op, reg_id: int, part: int) -> bool:
    return isinstance(op, VOp) and op.reg.id == reg_id and op.part == part and not (
        op.neg or op.abs or op.inv or op.suffix)


def _value(op) -> bool:
    """A source LEA takes as it is: a register (not negated), RZ, an immediate, a constant."""
    if isinstance(op, VOp):
        return op.width == 1 and not (op.neg or op.abs or op.inv or op.suffix)
    if isinstance(op, Reg):
        return op.is_zero
    return isinstance(op, (Imm, ConstRef)) and not getattr(op, "neg", False)


def _kind(op) -> str:
    return "C" if isinstance(op, ConstRef) else "I" if isinstance(op, Imm) else "R"


@functools.cache
def _encodable(arch: str, low: str, high: str) -> bool:
    """Whether the arch encodes both LEAs with these kinds of added operand."""
    from ptx2sass.encoder import codec
    sample = {"R": Reg("R", 6), "C": ConstRef(0, 0x160), "I": Imm(0x10)}
    probes = [Instruction("LEA", (), (Reg("R", 2), Reg("P", 0), Reg("R", 4), sample[low], Imm(2))),
              Instruction("LEA", ("HI", "X"), (Reg("R", 3), Reg("R", 4), sample[high], Reg("R", 5), Imm(2),
                                               Reg("P", 0)))]
    try:
        for p in probes:
            codec.encode(p, arch, 0, [])
        return True
    except Exception:       # no such form in the arch's table
        return False


def _writes(ins: MInstr, ids: set) -> bool:
    return any(is_def and op.reg.id in ids for _, op, is_def in register_operands(ins))


def fold_shifted_adds(mf: MFunction) -> int:
    arch = getattr(mf.target, "name", None)
    if arch is None:
        return 0
    reads: dict[int, int] = {}
    writers: dict[int, list[MInstr]] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                if is_def:
                    writers.setdefault(op.reg.id, []).append(ins)
                else:
                    reads[op.reg.id] = reads.get(op.reg.id, 0) + 1
    folded = 0
    for b in mf.blocks:
        instrs = b.instrs
        for i, hi_shift in enumerate(instrs):
            if not (hi_shift.opcode == "SHF" and hi_shift.modifiers == ("L", "U64", "HI")
                    and hi_shift.guard is None and len(hi_shift.operands) == 4
                    and isinstance(hi_shift.operands[0], VOp) and hi_shift.operands[0].part == 1
                    and hi_shift.operands[0].reg.width == 2 and isinstance(hi_shift.operands[2], Imm)
                    and _value(hi_shift.operands[1]) and isinstance(hi_shift.operands[1], VOp)
                    and _value(hi_shift.operands[3])):
                continue
            t = hi_shift.operands[0].reg
            l, k, h = hi_shift.operands[1], hi_shift.operands[2], hi_shift.operands[3]
            found = _rest(instrs, i, t, l, k, h)
            if found is None or reads.get(t.id) != 2:
                continue
            lo_shift, lo_add, hi_add = found
            if {id(w) for w in writers.get(t.id, ())} - {id(hi_shift), id(lo_shift)} - {
                    id(x) for x in instrs if x.opcode == IMPLICIT_DEF}:
                continue
            b0 = lo_add.operands[3] if _part(lo_add.operands[2], t.id, 0) else lo_add.operands[2]
            b1 = hi_add.operands[2] if _part(hi_add.operands[1], t.id, 1) else hi_add.operands[1]
            if not (_value(b0) and _value(b1) and _encodable(arch, _kind(b0), _kind(b1))):
                continue
            lo_add.opcode, lo_add.modifiers = "LEA", ()
            lo_add.operands = [lo_add.operands[0], lo_add.operands[1], l, b0, Imm(k.value)]
            hi_add.opcode, hi_add.modifiers = "LEA", ("HI", "X")
            hi_add.operands = [hi_add.operands[0], l, b1, h, Imm(k.value), hi_add.operands[4]]
            dead = {id(hi_shift), id(lo_shift)} | {
                id(x) for x in instrs if x.opcode == IMPLICIT_DEF and len(x.operands) == 1
                and isinstance(x.operands[0], VOp) and x.operands[0].reg.id == t.id}
            b.instrs = [x for x in instrs if id(x) not in dead]
            folded += 1
            return folded + fold_shifted_adds(mf)      # indices moved: start over
    return folded


def _rest(instrs: list[MInstr], i: int, t, l: VOp, k: Imm, h):
    """(SHF.L.U32, IADD3, IADD3.X) completing the pattern after instrs[i], or None."""
    watched = {l.reg.id} | ({h.reg.id} if isinstance(h, VOp) else set())
    lo_shift = lo_add = None
    for ins in instrs[i + 1:]:
        if lo_shift is None:
            if (ins.opcode == "SHF" and ins.modifiers == ("L", "U32") and ins.guard is None
                    and len(ins.operands) == 4 and _part(ins.operands[0], t.id, 0)
                    and ins.operands[1] == l and isinstance(ins.operands[2], Imm)
                    and ins.operands[2].value == k.value and _zero(ins.operands[3])):
                lo_shift = ins
                continue
        elif lo_add is None:
            if (ins.opcode == "IADD3" and not ins.modifiers and ins.guard is None and ins.ndefs == 2
                    and len(ins.operands) == 5 and _zero(ins.operands[4])
                    and (_part(ins.operands[2], t.id, 0) != _part(ins.operands[3], t.id, 0))
                    and isinstance(ins.operands[1], VOp)):
                lo_add = ins
                continue
        else:
            carry = lo_add.operands[1]
            if (ins.opcode == "IADD3" and ins.modifiers == ("X",) and ins.guard is None
                    and ins.ndefs == 1 and len(ins.operands) == 6 and _zero(ins.operands[3])
                    and ins.operands[4] == carry and isinstance(ins.operands[5], Reg)
                    and ins.operands[5].file == "P" and ins.operands[5].index == 7 and ins.operands[5].inv
                    and (_part(ins.operands[1], t.id, 1) != _part(ins.operands[2], t.id, 1))):
                return lo_shift, lo_add, ins
            if _writes(ins, {carry.reg.id}):
                return None
        if _writes(ins, watched):
            return None
    return None
