"""An instruction as the target's disassembler spells it, where that differs from sm_8x's
spelling of the same operation (each a `Target` field; the codec's tables hold nvdisasm's
spelling):

* `Target.iadd3_carry_outputs`: IADD3 always names both carry-out predicates (`IADD3 R0,
  PT, PT, R1, R2, R3` on sm_120; sm_8x leaves PT out), and takes an immediate only as its
  second addend (the sum is the same in any order);
* `Target.minmax_type_shown`: VIMNMX names its signed type (`VIMNMX.S32`; sm_90 prints the
  signed form bare).
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Imm, Instruction, Reg

PT = Reg("P", 7)


def respell(ins: Instruction, target) -> Instruction:
    if ins.opcode == "IADD3" and target.iadd3_carry_outputs:
        ops = list(ins.operands)
        k = 1
        while k < len(ops) and isinstance(ops[k], Reg) and ops[k].file == "P":
            k += 1
        outs, rest = ops[1:k], ops[k:]
        if len(outs) < 2 and len(rest) >= 3:
            outs = outs + [PT] * (2 - len(outs))
            if isinstance(rest[2], Imm) and not isinstance(rest[1], Imm):
                rest[1], rest[2] = rest[2], rest[1]
            return replace(ins, operands=tuple([ops[0], *outs, *rest]))
    if ins.opcode == "VIMNMX" and target.minmax_type_shown \
            and not {"S32", "U32", "S16x2", "U16x2"} & set(ins.modifiers):
        return replace(ins, modifiers=("S32", *ins.modifiers))
    return ins
