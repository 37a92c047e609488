"""Common-subexpression elimination over the dominator tree: a pure instruction that
computes what a dominating one already computed (same opcode, modifiers, types and
operands) reuses that result. tinygrad's PTX re-derives each address from the same index
(`cvt.s64.s32` of one value three times), and NVVM repeats `%tid`-based arithmetic.

Guarded instructions take part too: `@p y = f(a)` keeping `m` where `p` is false equals a
dominating `@p x = f(a)` (same guard and sense) when `m` is `x` itself or `x`'s own kept
value, since both then agree whether or not `p` holds. An unrolled loop whose body guards
the same computation (`@p vmad r3, r1, r2, r0` with loop-invariant sources) leaves a chain
of such copies, each merging the one before; ptxas computes it once, and kept apart each
copy held its own registers (fuzz seed 28001850: 131 registers to ptxas's 30)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.contract import ORIGIN
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
    if len(ins.dests) != 1 or ins.opcode not in PURE or "cc" in ins.modifiers:
        return None
    if ins.guard is not None:
        if not isinstance(ins.guard, ir.Value) or len(ins.merge) != 1:
            return None
        guard = (ins.guard.id, ins.guard_negated)
    else:
        guard = None
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
    # part of what is computed; the block an instruction was written in is not
    attrs = ins.attrs
    if attrs:
        attrs = tuple(sorted((k, v) for k, v in attrs.items() if k != ORIGIN))
        try:
            hash(attrs)
        except TypeError:
            return None
    else:
        attrs = ()
    return (ins.opcode, ins.modifiers, ins.type, ins.types, ins.space,
            tuple(operands), ins.dests[0].type, attrs, guard)


def _same_kept(ins: ir.Instr, earlier: ir.Instr, subst: dict[int, ir.Value]) -> bool:
    """Whether guarded `ins` keeps what `earlier` (same computation and guard) results in
    where the guard is false: `earlier`'s result itself, or the value `earlier` kept."""
    kept = ins.merge[0]
    while isinstance(kept, ir.Value) and kept.id in subst:      # a copy merged this walk
        kept = subst[kept.id]
    if isinstance(kept, ir.Value) and kept.id == earlier.dests[0].id:
        return True
    before = earlier.merge[0]
    if isinstance(kept, ir.Value) or isinstance(before, ir.Value):
        return isinstance(kept, ir.Value) and isinstance(before, ir.Value) and kept.id == before.id
    return kept == before


def eliminate_common_subexpressions(fn: ir.Function) -> bool:
    idom = ir.dominators(fn)
    children: dict[int, list[ir.Block]] = {}
    for b, parent in idom.items():
        if parent is not None and parent is not b:
            children.setdefault(id(parent), []).append(b)
    subst: dict[int, ir.Value] = {}
    available: dict[tuple, ir.Instr] = {}
    stack = [(fn.entry, None)]
    while stack:                 # preorder walk; (block, None) enters, (None, undo) leaves
        block, undo = stack.pop()
        if block is None:
            for k, shadowed in reversed(undo):
                if shadowed is None:
                    del available[k]
                else:
                    available[k] = shadowed
            continue
        added = []
        keep = []
        for ins in block.instrs:
            k = _key(ins)
            if k is not None and k in available:
                earlier = available[k]
                if ins.guard is None or _same_kept(ins, earlier, subst):
                    subst[ins.dests[0].id] = earlier.dests[0]
                    continue
                # a guarded copy keeping something else: it is the one later copies chain on
                available[k] = ins
                added.append((k, earlier))
            elif k is not None:
                available[k] = ins
                added.append((k, None))
            keep.append(ins)
        block.instrs = keep
        stack.append((None, added))
        for child in reversed(children.get(id(block), [])):
            stack.append((child, None))
    return bool(subst) and substitute(fn, subst)
