"""Copy and constant propagation: an unguarded `mov d, x` of one value or one immediate of
the same width makes every use of d a use of x (the `mov` itself is then dead). `cvta` between
the generic and the global space is a copy too: global addresses are generic addresses."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import substitute


def _width(ty: str) -> int:
    return ir.type_bits(ty) if ty in ir.TYPES else -1


def copy_source(ins: ir.Instr):
    """What every use of `ins`'s result may read instead (the value or immediate it copies),
    or None where `ins` is not such a copy."""
    is_copy = ins.opcode == "mov" or (ins.opcode == "cvta" and ins.space in (None, "global"))
    if not is_copy or ins.guard is not None or len(ins.dests) != 1 or len(ins.srcs) != 1:
        return None
    d, s = ins.dests[0], ins.srcs[0]
    if isinstance(s, ir.Value):
        if _width(s.type) != _width(d.type) or (s.type == "pred") != (d.type == "pred"):
            return None
    elif isinstance(s, ir.Const):
        if d.type == "pred" or _width(s.type) != _width(d.type):
            return None
    else:
        return None
    return s


_COPY_OPCODES = frozenset(("mov", "cvta"))       # what copy_source may call a copy


def propagate_copies(fn: ir.Function) -> bool:
    subst: dict[int, object] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.opcode in _COPY_OPCODES:       # (asked first: most instructions are not)
                s = copy_source(ins)
                if s is not None:
                    subst[ins.dests[0].id] = s
    return bool(subst) and substitute(fn, subst)
