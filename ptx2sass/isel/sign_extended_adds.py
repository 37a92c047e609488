"""A 64-bit add of a sign-extended 32-bit value, `cvt.s64.s32 w, x; add.s64 d, b, w`, as
ptxas writes it: `IADD3 d.lo, P, x, b.lo, RZ` and `LEA.HI.X.SX32 d.hi, x, b.hi, 0x1, P`
(the high word of sext(x) << 1 is the sign word, so the LEA adds b.hi, the sign and the
carry), not a copy of x, a SHF.R.S32.HI for the sign word and an IADD3.X. Grid-stride loops
index every access so (`v[i]` with `int i`). Run on the machine IR after selection, before
allocation.

Pattern, in one block: the pair w built by `MOV w.0 = x` and `SHF.R.S32.HI w.1 = RZ, 0x1f, x`
and read only by `IADD3 d.0, P = w.0, b0, RZ` and `IADD3.X d.1 = w.1, b1, RZ, P, !PT` (either
source order), with
nothing between the MOV and the IADD3.X writing x or the carry, or reading w."""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.isel.common import register_counts
from ptx2sass.mir import IMPLICIT_DEF, MFunction, MInstr, VOp, register_operands

SIGN_SHIFT = 0x1f


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _part(op, reg_id: int, part: int) -> bool:
    return (isinstance(op, VOp) and op.reg.id == reg_id and op.part == part
            and not (op.neg or op.abs or op.inv or op.suffix))


def _plain_reg(op) -> bool:
    return isinstance(op, VOp) and op.width == 1 and not (op.neg or op.abs or op.inv or op.suffix)


def _sign_pair(instrs: list[MInstr], i: int):
    """(x, w, index of the SHF) when instrs[i] is `MOV w.0 = x` followed (later) by
    `SHF.R.S32.HI w.1 = RZ, 0x1f, x`."""
    mov = instrs[i]
    if not (mov.opcode == "MOV" and not mov.modifiers and mov.guard is None and mov.ndefs == 1
            and len(mov.operands) == 2 and isinstance(mov.operands[0], VOp)
            and mov.operands[0].part == 0 and mov.operands[0].reg.width == 2
            and _plain_reg(mov.operands[1])):
        return None
    w, x = mov.operands[0].reg, mov.operands[1]
    for j in range(i + 1, len(instrs)):
        ins = instrs[j]
        if (ins.opcode == "SHF" and ins.modifiers == ("R", "S32", "HI") and ins.guard is None
                and len(ins.operands) == 4 and _part(ins.operands[0], w.id, 1) and _zero(ins.operands[1])
                and isinstance(ins.operands[2], Imm) and ins.operands[2].value == SIGN_SHIFT
                and ins.operands[3] == x):
            return x, w, j
        if _writes(ins, x.reg.id) or _touches(ins, w.id):
            return None
    return None


def _writes(ins: MInstr, reg_id: int) -> bool:
    return any(is_def and op.reg.id == reg_id for _, op, is_def in register_operands(ins))


def _touches(ins: MInstr, reg_id: int) -> bool:
    return any(op.reg.id == reg_id for _, op, _d in register_operands(ins))


def fold_sign_extended_adds(mf: MFunction, info) -> int:
    """The number of adds folded; none where the target has no such LEA
    (`Target.sign_extended_lea`)."""
    if not info.sign_extended_lea:
        return 0
    reads, _ = register_counts(mf)
    folded = 0
    for b in mf.blocks:
        instrs = b.instrs
        i = 0
        while i < len(instrs):
            found = _sign_pair(instrs, i)
            if found is None or reads.get(found[1].id) != 2:
                i += 1
                continue
            x, w, j = found
            rewrite = _adds(instrs, j, x, w)
            if rewrite is None:
                i += 1
                continue
            k, m = rewrite
            lo, hi = instrs[k], instrs[m]
            other = lo.operands[3] if _part(lo.operands[2], w.id, 0) else lo.operands[2]
            lo.operands = [lo.operands[0], lo.operands[1], x, other, lo.operands[4]]
            hi.opcode, hi.modifiers = "LEA", ("HI", "X", "SX32")
            high = hi.operands[2] if _part(hi.operands[1], w.id, 1) else hi.operands[1]
            hi.operands = [hi.operands[0], x, high, Imm(1), hi.operands[4]]
            dead = {id(instrs[i]), id(instrs[j])}
            dead |= {id(ins) for ins in instrs if ins.opcode == IMPLICIT_DEF
                     and len(ins.operands) == 1 and isinstance(ins.operands[0], VOp)
                     and ins.operands[0].reg.id == w.id}
            b.instrs = instrs = [ins for ins in instrs if id(ins) not in dead]
            folded += 1
    return folded


def _adds(instrs: list[MInstr], j: int, x: VOp, w) -> tuple[int, int] | None:
    """(index of the low IADD3, index of the IADD3.X) reading the pair after the SHF, with
    nothing writing x in between."""
    k = None
    for n in range(j + 1, len(instrs)):
        ins = instrs[n]
        if k is None:
            if (ins.opcode == "IADD3" and not ins.modifiers and ins.guard is None and ins.ndefs == 2
                    and len(ins.operands) == 5 and _zero(ins.operands[4])
                    and (_part(ins.operands[2], w.id, 0) or _part(ins.operands[3], w.id, 0))
                    and not (_part(ins.operands[2], w.id, 0) and _part(ins.operands[3], w.id, 0))
                    and isinstance(ins.operands[1], VOp) and ins.operands[1].reg.cls == "P"):
                other = ins.operands[3] if _part(ins.operands[2], w.id, 0) else ins.operands[2]
                if not isinstance(other, (VOp, Reg, Imm, ConstRef)) or getattr(other, "neg", False):
                    return None
                k = n
                continue
        else:
            carry = instrs[k].operands[1]
            if (ins.opcode == "IADD3" and ins.modifiers == ("X",) and ins.guard is None and ins.ndefs == 1
                    and len(ins.operands) == 6 and _zero(ins.operands[3]) and ins.operands[4] == carry
                    and isinstance(ins.operands[5], Reg) and ins.operands[5].file == "P"
                    and ins.operands[5].index == 7 and ins.operands[5].inv):
                srcs = ins.operands[1:3]
                mine = [s for s in srcs if _part(s, w.id, 1)]
                other = [s for s in srcs if not _part(s, w.id, 1)]
                if len(mine) == 1 and len(other) == 1 and not getattr(other[0], "neg", False) \
                        and not getattr(other[0], "inv", False) \
                        and isinstance(other[0], (VOp, Reg, Imm, ConstRef)):
                    return k, n
            if _touches(ins, carry.reg.id):
                return None
        if _writes(ins, x.reg.id) or (_touches(ins, w.id) and n != k):
            return None
    return None
