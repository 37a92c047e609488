"""Common-subexpression elimination over the dominator tree: a pure instruction that
computes what a dominating one already computed (same opcode, modifiers, types and
operands) reuses that result. tinygrad's PTX re-derives each address from the same index
(`cvt.s64.s32` of one value three times), and NVVM repeats `%tid`-based arithmetic."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dce import PURE
from ptx2sass.opt.uses import substitute


def _operand_key(op):
    if isinstance(op, ir.Value):
        return ("v", op.id)
    if isinstance(op, ir.Address):
        return ("a", _operand_key(op.base) if op.base is not None else None, op.offset)
    return ("c", op)        # Const, Symbol and SpecialReg are frozen dataclasses


# special registers that change while a thread runs: every read is its own value
TIME_VARYING = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi")


def _key(ins: ir.Instr):
    # is_pure's test, in the order that rejects the commonest instructions first
    if ins.guard is not None or len(ins.dests) != 1 or ins.opcode not in PURE \
            or "cc" in ins.modifiers:
        return None
    operands = []
    for s in ins.srcs:
        t = type(s)
        if t is ir.Value:
            operands.append(("v", s.id))
        elif t is ir.Const:
            operands.append(("c", s))
        elif t is ir.SpecialReg and (s.name in TIME_VARYING or s.name.startswith("%pm")):
            return None
        else:
            operands.append(_operand_key(s))
    # per-opcode extras (a video instruction's selectors, contraction's negations) are
    # part of what is computed
    attrs = ins.attrs
    if attrs:
        attrs = tuple(sorted(attrs.items()))
        try:
            hash(attrs)
        except TypeError:
            return None
    else:
        attrs = ()
    return (ins.opcode, ins.modifiers, ins.type, ins.types, ins.space,
            tuple(operands), ins.dests[0].type, attrs)


def eliminate_common_subexpressions(fn: ir.Function) -> bool:
    idom = ir.dominators(fn)
    children: dict[int, list[ir.Block]] = {}
    for b, parent in idom.items():
        if parent is not None and parent is not b:
            children.setdefault(id(parent), []).append(b)
    subst: dict[int, ir.Value] = {}
    available: dict[tuple, ir.Value] = {}
    stack = [(fn.entry, None)]
    while stack:                 # preorder walk; (block, None) enters, (None, undo) leaves
        block, undo = stack.pop()
        if block is None:
            for k in undo:
                del available[k]
            continue
        added = []
        keep = []
        for ins in block.instrs:
            k = _key(ins)
            if k is not None and k in available:
                subst[ins.dests[0].id] = available[k]
                continue
            if k is not None:
                available[k] = ins.dests[0]
                added.append(k)
            keep.append(ins)
        block.instrs = keep
        stack.append((None, added))
        for child in reversed(children.get(id(block), [])):
            stack.append((child, None))
    return bool(subst) and substitute(fn, subst)
