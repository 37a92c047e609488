"""Dead-code elimination: operations without side effects whose results nobody reads, and
phis nobody reads, go (repeatedly, since removing one frees its inputs)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import use_counts

# Opcodes that only compute their results. Memory reads are kept except from .param and
# .const (a dead global load may still fault, and ptxas keeps volatile ones).
PURE = frozenset({
    "mov", "cvt", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24", "fma", "div", "rem",
    "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "lop3", "setp", "set", "selp",
    "slct", "neg", "abs", "min", "max", "bfe", "bfi", "brev", "clz", "popc", "prmt", "bfind",
    "fns", "sad", "dp4a", "dp2a", "copysign", "testp", "sqrt", "rsqrt", "rcp", "ex2", "lg2",
    "sin", "cos", "tanh", "bmsk", "szext",
    # video instructions (their selectors live in `ins.attrs`, which CSE's key includes)
    "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
    "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
    "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
})
PURE_SPACES = frozenset({"param", "const"})
CARRY = ("cc",)       # add.cc & co. set the carry flag a later addc reads: not pure


def is_pure(ins: ir.Instr) -> bool:
    if not ins.dests or any(m in CARRY for m in ins.modifiers):
        return False
    if ins.opcode == "ld":
        return ins.space in PURE_SPACES and "volatile" not in ins.modifiers
    return ins.opcode in PURE


def remove_dead_code(fn: ir.Function) -> bool:
    changed = False
    while True:
        counts = use_counts(fn)
        removed = False
        for block in fn.blocks:
            kept = [p for p in block.phis if counts.get(p.dest.id, 0)]
            if len(kept) != len(block.phis):
                block.phis, removed = kept, True
            instrs = [i for i in block.instrs
                      if not (is_pure(i) and not any(counts.get(d.id, 0) for d in i.dests))]
            if len(instrs) != len(block.instrs):
                block.instrs, removed = instrs, True
        if not removed:
            return changed
        changed = True
