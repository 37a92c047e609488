"""Constants moved out of 32-bit integer index arithmetic, so that what the unrolled
iterations of a loop (or the elements of a vector) share is computed once:

* `mad.lo d, a, B, K` (two immediates: IMAD takes one, so this costs a MOV anyway)
  becomes `t = mul.lo a, B; d = add t, K`;
* `mad.lo d, a, b, (r + K)` becomes `t = mad.lo a, b, r; d = add t, K`;
* `add d, (r + K), y` becomes `t = add r, y; d = add t, K` (y not an immediate), and
  `add d, (r + K1), K2` becomes `add d, r, K1 + K2`.

The inner `r + K` must have no other reader (so no instruction is added; the last rule
needs none); CSE then merges
the shared parts (`x*16 + base` once, `+ k` per iteration, as ptxas writes it). A
`mad.wide` of two immediates becomes a 64-bit add of their product. Exact:
all of it is arithmetic modulo 2^32."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import use_counts
from ptx2sass.opt.fold import signed_value

TYPES = ("s32", "u32", "b32")
MASK = 0xFFFFFFFF
# 64-bit adds only join constants (`(r + K1) + K2`): a pointer stepped once per unrolled copy
# is one add of the sum, as ptxas's (`IADD3 R2, P1, R28, 0x800` for four 0x200 steps)
JOIN_WIDE = True              # switch for A/B runs (tools.tree_ab --set)
WIDE_TYPES = ("s64", "u64", "b64")
JOIN_GUARDED = True           # switch for A/B runs: a guarded add's constant joined too
WIDE_MASK = (1 << 64) - 1


def _plain(ins: ir.Instr, opcode: str, modifiers=()) -> bool:
    return (ins.opcode == opcode and ins.modifiers == modifiers and ins.guard is None
            and ins.type in TYPES and len(ins.dests) == 1)


def _wide_add(ins: ir.Instr) -> bool:
    return (ins.opcode == "add" and ins.modifiers == () and ins.guard is None
            and ins.type in WIDE_TYPES and len(ins.dests) == 1 and len(ins.srcs) == 2)


def _offset_form(ins: ir.Instr, wide: bool = False):
    """(r, K) when ins is `add r, K` / `add K, r` with r a value (a 64-bit one if `wide`)."""
    if not (_wide_add(ins) if wide else _plain(ins, "add") and len(ins.srcs) == 2):
        return None
    a, b = ins.srcs
    if isinstance(a, ir.Const):
        a, b = b, a
    if isinstance(a, ir.Value) and isinstance(b, ir.Const):
        return a, b.value & (WIDE_MASK if wide else MASK)
    return None


def reassociate_offsets(fn: ir.Function) -> bool:
    counts = use_counts(fn)
    offsets, any_offsets, wide_offsets = {}, {}, {}
    for block in fn.blocks:
        for ins in block.instrs:
            wide = _offset_form(ins, wide=True)
            if wide is not None:
                wide_offsets[ins.dests[0].id] = wide
            form = _offset_form(ins)
            if form is not None:
                any_offsets[ins.dests[0].id] = form
                if counts.get(ins.dests[0].id) == 1:
                    offsets[ins.dests[0].id] = form
    changed = False
    for block in fn.blocks:
        out = []
        for ins in block.instrs:
            new = (_rewrite(fn, ins, offsets, any_offsets) or _join_wide(ins, wide_offsets)
                   or _join_guarded(ins, any_offsets, wide_offsets))
            if new is None:
                out.append(ins)
            else:
                out.extend(new)
                changed = True
        block.instrs[:] = out
    return changed


def _split(fn, ins, opcode, modifiers, srcs, k):
    t = fn.new_value(ins.dests[0].type)
    first = ir.Instr(opcode, dests=[t], srcs=srcs, modifiers=modifiers, type=ins.type, line=ins.line)
    second = ir.Instr("add", dests=ins.dests, srcs=[t, ir.Const(k, ins.type)], type=ins.type,
                      line=ins.line)
    return [first, second]


def _wide_product(ins: ir.Instr):
    """`mad.wide.s32/u32 d, A, B, c` of two immediates: `add.s64 d, c, A*B` (the product of
    the extended immediates), which the address folding then puts in the memory operand."""
    if not (ins.opcode == "mad" and ins.modifiers == ("wide",) and ins.guard is None
            and ins.type in ("s32", "u32") and len(ins.srcs) == 3 and len(ins.dests) == 1):
        return None
    a, b, c = ins.srcs
    if not (isinstance(a, ir.Const) and isinstance(b, ir.Const) and isinstance(c, ir.Value)):
        return None
    if ins.type == "s32":
        x, y = signed_value(a.value, 32), signed_value(b.value, 32)
    else:
        x, y = a.value & MASK, b.value & MASK
    wide = "s64" if ins.type == "s32" else "u64"
    return [ir.Instr("add", dests=ins.dests, srcs=[c, ir.Const((x * y) & WIDE_MASK, wide)],
                     type=wide, line=ins.line)]


def _joined(ins: ir.Instr, table, mask: int):
    """`add d, (r + K1), K2` as `add d, r, K1 + K2` (modulo the width, exact) where `table`
    knows r + K1: one add either way, whoever else reads r + K1."""
    x, y = ins.srcs
    for p, q in ((x, y), (y, x)):
        if isinstance(p, ir.Value) and isinstance(q, ir.Const) and p.id in table:
            r, k = table[p.id]
            return [ir.Instr("add", dests=ins.dests, srcs=[r, ir.Const((k + q.value) & mask, ins.type)],
                             type=ins.type, line=ins.line, guard=ins.guard,
                             guard_negated=ins.guard_negated, merge=list(ins.merge))]
    return None


def _join_guarded(ins: ir.Instr, any_offsets, wide_offsets):
    """`@p add d, (r + K1), K2` (else m) as `@p add d, r, K1 + K2` (else m): a guarded copy's
    step after an unguarded one (opt/runtime_unroll.py's predicated remainders)."""
    if not (JOIN_GUARDED and ins.opcode == "add" and ins.guard is not None and ins.modifiers == ()
            and len(ins.dests) == 1 and len(ins.srcs) == 2):
        return None
    if ins.type in TYPES:
        return _joined(ins, any_offsets, MASK)
    if ins.type in WIDE_TYPES and JOIN_WIDE:
        return _joined(ins, wide_offsets, WIDE_MASK)
    return None


def _join_wide(ins: ir.Instr, wide_offsets):
    """The 64-bit adds' join (32-bit ones are joined in `_rewrite`)."""
    if not JOIN_WIDE or not _wide_add(ins):
        return None
    return _joined(ins, wide_offsets, WIDE_MASK)


def _rewrite(fn: ir.Function, ins: ir.Instr, offsets, any_offsets):
    wide = _wide_product(ins)
    if wide is not None:
        return wide
    if _plain(ins, "mad", ("lo",)) and len(ins.srcs) == 3:
        a, b, c = ins.srcs
        if isinstance(a, ir.Const):
            a, b = b, a
        if isinstance(a, ir.Value) and isinstance(b, ir.Const) and isinstance(c, ir.Const):
            if not c.value & MASK:
                return [ir.Instr("mul", dests=ins.dests, srcs=[a, b], modifiers=("lo",),
                                 type=ins.type, line=ins.line)]
            return _split(fn, ins, "mul", ("lo",), [a, b], c.value & MASK)
        if isinstance(c, ir.Value) and c.id in offsets:
            r, k = offsets[c.id]
            return _split(fn, ins, "mad", ("lo",), [a, b, r], k)
        return None
    if _plain(ins, "add") and len(ins.srcs) == 2:
        joined = _joined(ins, any_offsets, MASK)
        if joined is not None:
            return joined
        x, y = ins.srcs
        for p, q in ((x, y), (y, x)):
            if isinstance(p, ir.Value) and p.id in offsets and p is not q and not isinstance(q, ir.Const):
                r, k = offsets[p.id]
                return _split(fn, ins, "add", (), [r, q], k)
    return None
