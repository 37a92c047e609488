"""`cvt.f32.f16` of the high half of a word reads that half in place: `HADD2.F32 d, -RZ,
w.H1_H1`, as ptxas writes it, not a shift or PRMT of the half into a register of its own
and `HADD2.F32 d, -RZ, t.H0_H0` (a register and an instruction per half; the f16 fragments
the emulated m8n8k4 mma shuffles between lanes unpack both halves of every word). Run on the
machine IR after selection, before the dead-part sweep removes the unread extraction.

Pattern, in one block: t written only by an unguarded `SHF.R.U32.HI t, RZ, 0x10, w` or
`PRMT t, w, 0x..32, x` (low half of t = high half of w), read by `HADD2.F32 d, -RZ,
t.H0_H0` (through copies), with w written by one instruction in the function, not between the two. Only
where the target reads high halves in place (`Target.f32_from_high_half`)."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.mir import COPY, MFunction, MInstr, VOp, register_operands
from ptx2sass.mir import writers as register_writers


def _plain(op) -> bool:
    return isinstance(op, VOp) and op.width == 1 and not (op.neg or op.abs or op.inv or op.suffix)


def _high_half_of(ins: MInstr) -> VOp | None:
    """w where `ins` writes w's high half into the low half of its one destination."""
    if ins.guard is not None or ins.ndefs != 1 or len(ins.operands) != 4 or not _plain(ins.operands[0]):
        return None
    _, a, b, c = ins.operands
    if (ins.opcode == "SHF" and ins.modifiers == ("R", "U32", "HI") and isinstance(a, Reg) and a.is_zero
            and isinstance(b, Imm) and b.value == 16 and _plain(c)):
        return c
    if ins.opcode == "PRMT" and not ins.modifiers and _plain(a) and isinstance(b, Imm) and b.value & 0xFF == 0x32:
        return a
    return None


def read_high_halves(mf: MFunction) -> int:
    if not getattr(mf.target, "f32_from_high_half", False):     # no target: no table to ask
        return 0
    writers = register_writers(mf)
    rewritten = 0
    for b in mf.blocks:
        position = {id(ins): k for k, ins in enumerate(b.instrs)}
        for k, ins in enumerate(b.instrs):
            if ins.opcode != "HADD2" or ins.modifiers != ("F32",) or len(ins.operands) != 3:
                continue
            t = ins.operands[2]
            if not (isinstance(t, VOp) and t.width == 1 and t.suffix == ("H0_H0",)
                    and not (t.neg or t.abs or t.inv)):
                continue
            extract, last = writers.get(t.reg.id, []), k
            # the half moved to a b16 value: copies in this block, in order, before the HADD2
            while (len(extract) == 1 and extract[0].opcode == COPY and extract[0].guard is None
                   and _plain(extract[0].operands[1]) and position.get(id(extract[0]), last) < last):
                last = position[id(extract[0])]
                extract = writers.get(extract[0].operands[1].reg.id, [])
            if len(extract) != 1 or position.get(id(extract[0]), last) >= last:
                continue
            w = _high_half_of(extract[0])
            if w is None or len(writers.get(w.reg.id, [])) != 1 or any(
                    is_def and op.reg.id == w.reg.id
                    for between in b.instrs[position[id(extract[0])] + 1:k]
                    for _, op, is_def in register_operands(between)):
                continue
            ins.operands[2] = VOp(w.reg, w.part, suffix=("H1_H1",))
            rewritten += 1
    return rewritten
