"""Packed f32x2 arithmetic (PTX ISA 8.6, sm_100+: `add/sub/mul/fma[.rnd][.ftz][.sat].f32x2`
on .b64 registers), rewritten before selection as the f32 operation on each half with the
same modifiers: the manual defines each element's result as that operation's, and both
halves are treated alike, so which half is element 0 does not matter (ptxas 13.5: two
FADD/FMUL/FFMA on sm_120; one FADD2/FMUL2/FFMA2 on sm_100, per element the same)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.errors import CompileError

ELEMENTWISE = frozenset({"add", "sub", "mul", "fma"})


def lowers(ins: ir.Instr) -> bool:
    return ins.type == "f32x2" and ins.opcode in ELEMENTWISE and ins.dests \
        and all(isinstance(s, ir.Value) for s in ins.srcs)


def lower_f32x2(fn: ir.Function, filename: str = "<input>") -> None:
    """Rewrite, in place, every elementwise f32x2 instruction of `fn` as two f32 ones
    (`.sat` refused in ptxas's words: the f32 forms would take it)."""
    for block in fn.blocks:
        if not any(lowers(i) for i in block.instrs):
            continue
        out: list[ir.Instr] = []
        for ins in block.instrs:
            if not lowers(ins):
                out.append(ins)
                continue
            if "sat" in ins.modifiers:
                raise CompileError(f"Illegal modifier '.sat' for instruction '{ins.opcode}'", filename, ins.line)
            halves = []
            for s in ins.srcs:
                lo, hi = fn.new_value("b32"), fn.new_value("b32")
                out.append(ir.Instr("mov", [lo, hi], [s], (), "b64", line=ins.line))
                halves.append((lo, hi))
            parts = []
            for k in (0, 1):
                d = fn.new_value("f32")
                out.append(ir.Instr(ins.opcode, [d], [h[k] for h in halves], ins.modifiers, "f32",
                                    line=ins.line))
                parts.append(d)
            pack = ir.Instr("mov", [ins.dests[0]], parts, (), "b64", line=ins.line)
            pack.guard, pack.guard_negated, pack.merge = ins.guard, ins.guard_negated, list(ins.merge)
            out.append(pack)
        block.instrs = out
