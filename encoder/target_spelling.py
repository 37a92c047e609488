"""An instruction as the target's disassembler spells it, where that differs from sm_8x's
spelling of the same operation (each a `Target` field; the codec's tables hold nvdisasm's
spelling):

* `Target.iadd3_carry_outputs`: IADD3 always names both carry-out predicates (`IADD3 R0,
  PT, PT, R1, R2, R3` on sm_120; sm_8x leaves PT out; UIADD3 likewise names UPT, UPT), and takes an immediate only as its
  second addend (the sum is the same in any order); a sum of two (third addend RZ, at most
  one carry out, `.X` reading one carry in) is the two-input IADD ptxas writes there
  (`IADD.X R5, R7, -0x1, P0`: the table has no IADD3.X with an immediate) where
  `Target.two_input_iadd` (sm_120; sm_100 has no IADD);
* `Target.uniform_move_is_mov`: a uniform register moved into R is `MOV R, UR` (sm_120 has
  no `IMAD.MOV.U32 R, RZ, RZ, UR` form);
* `Target.minmax_type_shown`: VIMNMX names its signed type (`VIMNMX.S32`; sm_90 prints the
  signed form bare);
* `Target.minmax_predicate_outputs`: VIMNMX names two predicate outputs, both PT
  (`VIMNMX R0, PT, PT, R0, R4, PT` on sm_100, its signed form bare).
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Imm, Instruction, Reg

PT = Reg("P", 7)
UPT = Reg("UP", 7)
NOT_PT = Reg("P", 7, inv=True)
RZ = Reg("R", 255)


def respell(ins: Instruction, target) -> Instruction:
    if ins.opcode == "IADD3" and target.iadd3_carry_outputs:
        ops = list(ins.operands)
        k = 1
        while k < len(ops) and isinstance(ops[k], Reg) and ops[k].file == "P":
            k += 1
        outs, rest = [p for p in ops[1:k] if p != PT], ops[k:]
        if len(outs) < 2 and len(rest) >= 3:
            if isinstance(rest[2], Imm) and not isinstance(rest[1], Imm):
                rest[1], rest[2] = rest[2], rest[1]
            a, b, c, cins = rest[0], rest[1], rest[2], rest[3:]
            extended = "X" in ins.modifiers
            if target.two_input_iadd and c == RZ and not c.neg and not c.inv and (not extended or (len(cins) == 2 and cins[1] == NOT_PT)):
                return replace(ins, opcode="IADD", operands=tuple([ops[0], *outs, a, b, *cins[:1]]))
            return replace(ins, operands=tuple([ops[0], *outs, *[PT] * (2 - len(outs)), *rest]))
    if ins.opcode == "UIADD3" and target.iadd3_carry_outputs:
        # (the 64-bit uniform adds of isel/uniform_datapath.py: `UIADD3 UR4, UP0, UPT, ...`)
        ops = list(ins.operands)
        k = 1
        while k < len(ops) and isinstance(ops[k], Reg) and ops[k].file == "UP":
            k += 1
        outs, rest = [p for p in ops[1:k] if p != UPT], ops[k:]
        if len(outs) < 2 and len(rest) >= 3:
            return replace(ins, operands=(ops[0], *outs, *[UPT] * (2 - len(outs)), *rest))
    if ins.opcode == "IMAD" and target.uniform_move_is_mov and set(ins.modifiers) <= {"MOV", "U32"} \
            and len(ins.operands) == 4 and ins.operands[1] == RZ and ins.operands[2] == RZ \
            and isinstance(ins.operands[3], Reg) and ins.operands[3].file == "UR":
        return replace(ins, opcode="MOV", modifiers=(), operands=(ins.operands[0], ins.operands[3]))
    if ins.opcode == "VIMNMX" and target.minmax_type_shown \
            and not {"S32", "U32", "S16x2", "U16x2"} & set(ins.modifiers):
        return replace(ins, modifiers=("S32", *ins.modifiers))
    if ins.opcode == "VIMNMX" and target.minmax_predicate_outputs \
            and not (len(ins.operands) > 1 and isinstance(ins.operands[1], Reg) and ins.operands[1].file == "P"):
        return replace(ins, operands=(ins.operands[0], PT, PT, *ins.operands[1:]))
    return ins
