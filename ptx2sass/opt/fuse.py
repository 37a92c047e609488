"""Multiply-add fusion for address arithmetic: `mul.wide t, a, b; add.s64 d, p, t` becomes
`mad.wide d, a, b, p` (one IMAD.WIDE, which also takes the base pointer straight from the
parameter bank), for every add reading t. When t has no other readers the multiply dies;
otherwise it is kept and the adds still save their two 32-bit halves."""
from __future__ import annotations

from ptx2sass import ir

WIDE_ADD_TYPES = ("s64", "u64", "b64")


def fuse_wide_multiply_add(fn: ir.Function) -> bool:
    products: dict[int, ir.Instr] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.opcode == "mul" and ins.modifiers == ("wide",) and ins.guard is None \
                    and ins.type in ("s32", "u32") and len(ins.dests) == 1:
                products[ins.dests[0].id] = ins
    if not products:
        return False
    changed = False
    for block in fn.blocks:
        for k, ins in enumerate(block.instrs):
            if ins.opcode != "add" or ins.modifiers or ins.guard is not None or ins.type not in WIDE_ADD_TYPES:
                continue
            a, b = ins.srcs
            for product, other in ((b, a), (a, b)):
                mul = products.get(product.id) if isinstance(product, ir.Value) else None
                if mul is not None and other is not product:
                    block.instrs[k] = ir.Instr("mad", dests=ins.dests, srcs=[*mul.srcs, other],
                                               modifiers=("wide",), type=mul.type, line=ins.line)
                    changed = True
                    break
    return changed
