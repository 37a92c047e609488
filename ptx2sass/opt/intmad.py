"""Integer multiply-add fusion: `mul.lo.s32 p, a, b` read only by adds and subtracts becomes one
`mad.lo` per reader (IMAD), as ptxas writes it: `x - (x / 5) * 5` is `IMAD q, -0x5, x`, and
`a * b - 3` is `IMAD a, b, -0x3`. Exact: modulo 2^32, a*b + c and (a*(-b)) + c are the same
sums. A subtraction is fused only where a constant takes the minus sign (the multiplier
of `c - p`, the addend of `p - c`); otherwise the multiply stays.

`shl.b32 p, a, k` read by two or more adds of registers is the product `a * 2^k` too: ptxas
13.5 writes `IMAD R22, R41, 0x200, R38` for flash attention's `shl.b32 %r85, %r197, 9` read
by two adds, on the FMA pipe beside an integer ALU busy with the loop's addresses and
compares, where a shift and two IADD3 would take three ALU issues. A shift read once stays
(the add then absorbs it on the ALU)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import readers as uses_of

TYPES = ("s32", "u32")
ADD_TYPES = ("s32", "u32", "b32")
MASK = 0xFFFFFFFF


def _negated(c: ir.Const, ty: str) -> ir.Const:
    return ir.Const((-c.value) & MASK, ty)


def _fused(reader: ir.Instr, product: ir.Instr):
    """The mad.lo replacing `reader`, or None when it cannot absorb the product."""
    if (reader.opcode not in ("add", "sub") or reader.modifiers or reader.guard is not None
            or reader.type not in ADD_TYPES or len(reader.srcs) != 2 or len(reader.dests) != 1):
        return None
    p = product.dests[0]
    x, y = reader.srcs
    if (x is p) == (y is p):
        return None
    a, b = product.srcs
    if isinstance(x if y is p else y, ir.Const) and (isinstance(a, ir.Const) or isinstance(b, ir.Const)):
        return None          # IMAD takes one immediate: a*B + K stays IMAD + IADD3 (opt/reassociate)
    ty = product.type
    if reader.opcode == "add":
        srcs = [a, b, y if x is p else x]
    elif y is p:                                   # c - a*b
        if isinstance(b, ir.Const):
            srcs = [a, _negated(b, ty), x]
        elif isinstance(a, ir.Const):
            srcs = [b, _negated(a, ty), x]
        else:
            return None
    elif isinstance(y, ir.Const):                  # a*b - c
        srcs = [a, b, _negated(y, ty)]
    else:
        return None
    return ir.Instr("mad", dests=reader.dests, srcs=srcs, modifiers=("lo",), type=ty,
                    line=reader.line)


def _as_product(ins: ir.Instr) -> ir.Instr | None:
    """`ins` as a `mul.lo` (a `shl.b32` by a constant as its multiply by 2^k), or None."""
    if ins.guard is not None or len(ins.dests) != 1 or len(ins.srcs) != 2:
        return None
    if ins.opcode == "mul" and ins.modifiers == ("lo",) and ins.type in TYPES:
        return ins
    k = ins.srcs[1]
    if (ins.opcode == "shl" and not ins.modifiers and ins.type == "b32" and isinstance(k, ir.Const)
            and 0 <= k.value < 32 and not isinstance(ins.srcs[0], ir.Const)):
        return ir.Instr("mul", dests=ins.dests, srcs=[ins.srcs[0], ir.Const(1 << k.value, "u32")],
                        modifiers=("lo",), type="u32", line=ins.line)
    return None


def fuse_integer_multiply_add(fn: ir.Function) -> bool:
    readers = None
    changed = False
    for block in fn.blocks:
        for ins in block.instrs:
            product = _as_product(ins)
            if product is None:
                continue
            if readers is None:
                readers = uses_of(fn)
            users = readers.get(ins.dests[0].id, [])
            if not users or any(u is None for u in users) or (product is not ins and len(users) < 2):
                continue
            fused = [_fused(u, product) for u in users]
            if any(f is None for f in fused):
                continue
            replace = {id(u): f for u, f in zip(users, fused)}
            for b in fn.blocks:
                b.instrs[:] = [replace.get(id(i), i) for i in b.instrs]
            readers = None
            changed = True
    return changed
