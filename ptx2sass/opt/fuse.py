"""Multiply-add fusion for address arithmetic.

* `mul.wide t, a, b; add.s64 d, p, t` becomes `mad.wide d, a, b, p` (one IMAD.WIDE, which
  also takes the base pointer straight from the parameter bank), for every add reading t.
  When t has no other readers the multiply dies; otherwise the adds still save their halves.
* A 64-bit `mul.lo`/`mad.lo` of a widened 32-bit value by a constant that fits 32 bits
  (`cvt.s64.s32 x, a; mad.lo.s64 d, x, 8, p`, tinygrad's indexing) is the 32x32->64 wide
  form of the same product: `mad.wide.s32 d, a, 8, p`. Modulo 2^64 the two are equal
  because sign- (zero-) extending a and the constant commutes with the multiply."""
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


def _narrow_constant(c, signed: bool):
    """The 32-bit constant whose extension is `c`, if there is one."""
    if not isinstance(c, ir.Const):
        return None
    v = c.value & 0xFFFFFFFFFFFFFFFF
    if signed:
        ok = v < 1 << 31 or v >= (1 << 64) - (1 << 31)
    else:
        ok = v < 1 << 32
    return ir.Const(v & 0xFFFFFFFF, "s32" if signed else "u32") if ok else None


def narrow_wide_products(fn: ir.Function) -> bool:
    widened: dict[int, tuple[object, bool]] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.opcode == "cvt" and ins.guard is None and not ins.modifiers and len(ins.dests) == 1 \
                    and ins.type in ("s64", "u64") and ins.types and ins.types[0] in ("s32", "u32") \
                    and ins.type[0] == ins.types[0][0]:
                widened[ins.dests[0].id] = (ins.srcs[0], ins.types[0] == "s32")
    if not widened:
        return False
    changed = False
    for block in fn.blocks:
        for k, ins in enumerate(block.instrs):
            if ins.opcode not in ("mul", "mad") or ins.modifiers != ("lo",) or ins.guard is not None \
                    or ins.type not in ("s64", "u64", "b64"):
                continue
            x, c = ins.srcs[0], ins.srcs[1]
            if not (isinstance(x, ir.Value) and x.id in widened):
                x, c = c, x
            if not (isinstance(x, ir.Value) and x.id in widened):
                continue
            narrow, signed = widened[x.id]
            c32 = _narrow_constant(c, signed)
            if c32 is None:
                continue
            ty = "s32" if signed else "u32"
            block.instrs[k] = ir.Instr(ins.opcode, dests=ins.dests, srcs=[narrow, c32, *ins.srcs[2:]],
                                       modifiers=("wide",), type=ty, line=ins.line)
            changed = True
    return changed
