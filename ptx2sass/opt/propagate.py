"""Copy and constant propagation: an unguarded `mov d, x` of one value or one immediate of
the same width makes every use of d a use of x (the `mov` itself is then dead). `cvta` between
the generic and the global space is a copy too: global addresses are generic addresses."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import substitute


def _width(ty: str) -> int:
    return ir.type_bits(ty) if ty in ir.TYPES else -1


def propagate_copies(fn: ir.Function) -> bool:
    subst: dict[int, object] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            is_copy = ins.opcode == "mov" or (ins.opcode == "cvta" and ins.space in (None, "global"))
            if not is_copy or ins.guard is not None or len(ins.dests) != 1 or len(ins.srcs) != 1:
                continue
            d, s = ins.dests[0], ins.srcs[0]
            if isinstance(s, ir.Value):
                if _width(s.type) != _width(d.type) or (s.type == "pred") != (d.type == "pred"):
                    continue
            elif isinstance(s, ir.Const):
                if d.type == "pred" or _width(s.type) != _width(d.type):
                    continue
            else:
                continue
            subst[d.id] = s
    return bool(subst) and substitute(fn, subst)
