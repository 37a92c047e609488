"""`abs.f32`/`neg.f32` read by one float add, multiply or fused multiply-add become that
instruction's operand modifiers, as ptxas writes `fabsf(x) * s + b` as
`FFMA R0, |R0|, R15, 0.05` (we wrote `FADD R0, |R0|, -RZ` first). Run on the machine IR
after selection, before allocation.

Pattern, in one block: `FADD t = ±|a|, -RZ` (unguarded, no modifier but `.FTZ`; t one
32-bit register written once and read once) read by an `FADD`/`FMUL`/`FFMA` operand. The
reader takes a's register with the composed sign and absolute flags. Exact: x + -0 is x for
every x, signed zeros included; a NaN input gives the reader's canonical NaN either way. A
flushing FADD folds only into a reader that flushes its inputs too."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Reg
from ptx2sass.isel.common import register_counts, sources_unchanged
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

READERS = frozenset({"FADD", "FMUL", "FFMA"})


def _minus_zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero and op.neg and not op.abs


def _is_sign_op(ins: MInstr) -> bool:
    return (ins.opcode == "FADD" and ins.modifiers in ((), ("FTZ",)) and ins.guard is None
            and ins.ndefs == 1 and len(ins.operands) == 3 and isinstance(ins.operands[0], VOp)
            and ins.operands[0].part is None and ins.operands[0].reg.width == 1
            and isinstance(ins.operands[1], VOp) and ins.operands[1].reg.cls == "R"
            and ins.operands[1].reg.width == 1 and not (ins.operands[1].inv or ins.operands[1].suffix)
            and _minus_zero(ins.operands[2]))


def _composed(read: VOp, inner: VOp) -> VOp:
    """The operand the reader takes for `read` (its flags on t) when t = inner's value."""
    if read.abs:
        return replace(inner, neg=read.neg, abs=True)
    return replace(inner, neg=read.neg != inner.neg)


def fold_float_signs(mf: MFunction) -> int:
    reads, writes = register_counts(mf)
    folded = 0
    for b in mf.blocks:
        where: dict[int, int] = {}          # vreg id -> index of its sign-op FADD
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            if ins.opcode in READERS and where:
                for k in range(ins.ndefs, len(ins.operands)):
                    op = ins.operands[k]
                    if not (isinstance(op, VOp) and op.part is None and op.reg.id in where
                            and reads.get(op.reg.id) == 1 and not (op.inv or op.suffix)):
                        continue
                    i = where[op.reg.id]
                    inner = b.instrs[i]
                    if "FTZ" in inner.modifiers and "FTZ" not in ins.modifiers:
                        continue
                    if not sources_unchanged(b.instrs, i, j, inner):
                        continue
                    ins.operands = list(ins.operands)
                    ins.operands[k] = _composed(op, inner.operands[1])
                    del where[op.reg.id]
                    dead.add(i)
                    folded += 1
            for _, op, is_def in register_operands(ins):
                if is_def:
                    where.pop(op.reg.id, None)
            if _is_sign_op(ins):
                t = ins.operands[0]
                if t.reg.cls == "R" and writes.get(t.reg.id) == 1 and t.reg.id not in mf.precolored:
                    where[t.reg.id] = j
        if dead:
            b.instrs = [x for n, x in enumerate(b.instrs) if n not in dead]
    return folded
