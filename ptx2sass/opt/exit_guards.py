"""What a guarded exit decided holds after it: past `@!p exit` the predicate p is true, past
`@p exit` false, in every block the exit's fall-through dominates.

Instructions guarded by such a predicate lose their guard or go, a later `@p exit` becomes the
thread's last instruction (what follows it is unreachable and goes), guarded branches become
unconditional or fall through, and `selp` on the predicate picks its operand. ptxas folds
`@!p exit; ...; @p exit` so (fuzz seed 21000055: our code computed an inline division and its
slow path that no thread reaches, 2.4x ptxas's emulated cycles).

An integer `setp` of a value with itself is decided everywhere (`setp.le.u64 p, x, x` is
true): its predicate is known in every block, as ptxas folds it (fuzz seed 28001599: an
`@p exit` so decided left a hundred loads and stores no thread reaches, 117 registers
against ptxas's 32)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import substitute


def _facts(fn: ir.Function) -> list[tuple[ir.Block, int, bool]]:
    """(first block past the exit, predicate id, its value there) per guarded exit."""
    out = []
    for b in fn.blocks:
        last = b.instrs[-1] if b.instrs else None
        if last is None or last.opcode != "exit" or not isinstance(last.guard, ir.Value):
            continue
        if len(b.succs) == 1 and b.succs[0].preds == [b] and b.succs[0] is not b:
            out.append((b.succs[0], last.guard.id, last.guard_negated))
    return out


# comparisons of a value with itself: true for these, false for the others
_REFLEXIVE = frozenset({"eq", "le", "ge", "ls", "hs"})
_IRREFLEXIVE = frozenset({"ne", "lt", "gt", "lo", "hi"})


def _self_comparisons(fn: ir.Function) -> dict[int, bool]:
    """predicate id -> its value, for unguarded integer `setp`s comparing a value with
    itself (`setp.op.t p|q, a, a`: q is not p)."""
    out = {}
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.opcode != "setp" or ins.guard is not None or len(ins.modifiers) != 1 \
                    or len(ins.srcs) != 2 or ir.TYPES.get(ins.type, ("f",))[0] not in ("b", "u", "s"):
                continue
            a, c = ins.srcs
            if not (isinstance(a, ir.Value) and isinstance(c, ir.Value) and a.id == c.id):
                continue
            cmp = ins.modifiers[0]
            if cmp not in _REFLEXIVE and cmp not in _IRREFLEXIVE:
                continue
            for k, d in enumerate(ins.dests[:2]):
                out[d.id] = (cmp in _REFLEXIVE) != (k == 1)
    return out


def _drop_edge(pred: ir.Block, succ: ir.Block) -> None:
    pred.succs = [s for s in pred.succs if s is not succ]
    succ.preds = [p for p in succ.preds if p is not pred]
    for phi in succ.phis:
        phi.incoming = [(p, v) for p, v in phi.incoming if p is not pred]


def apply_decided(b: ir.Block, known: dict[int, bool], subst: dict[int, object]) -> bool:
    changed = False
    keep = []
    for ins in b.instrs:
        g = ins.guard
        if isinstance(g, ir.Value) and g.id in known:
            holds = known[g.id] != ins.guard_negated
            if ins.opcode == "bra" and not (len(b.succs) == 2 and b.succs[0] is not b.succs[1]):
                keep.append(ins)             # both edges to one block: leave it
                continue
            if ins.dests and not holds and len(ins.merge) != len(ins.dests):
                keep.append(ins)             # no else-values recorded: leave it
                continue
            changed = True
            if ins.opcode == "bra":
                taken, fall = b.succs
                if holds:
                    _drop_edge(b, fall)
                    ins.guard, ins.guard_negated = None, False
                    keep.append(ins)
                else:
                    _drop_edge(b, taken)
                continue
            if holds:
                ins.guard, ins.guard_negated, ins.merge = None, False, []
                keep.append(ins)
                if ins.opcode in ("exit", "ret", "trap_exit"):
                    for s in list(b.succs):
                        _drop_edge(b, s)
            else:
                for d, m in zip(ins.dests, ins.merge):
                    subst[d.id] = m
            continue
        if ins.opcode == "selp" and len(ins.srcs) == 3 and isinstance(ins.srcs[2], ir.Value) \
                and ins.srcs[2].id in known and ins.guard is None:
            pick = ins.srcs[0] if known[ins.srcs[2].id] else ins.srcs[1]
            ins.opcode, ins.srcs = "mov", [pick]
            changed = True
        keep.append(ins)
    b.instrs = keep
    return changed


def remove_unreachable(fn: ir.Function) -> None:
    live = {id(b) for b in ir.reverse_postorder(fn)}
    for b in fn.blocks:
        if id(b) not in live:
            for s in list(b.succs):
                _drop_edge(b, s)
    fn.blocks = [b for b in fn.blocks if id(b) in live]
    subst = {}
    for b in fn.blocks:
        single = [p for p in b.phis if len(p.incoming) == 1]
        copies = []
        for p in single:
            value = p.incoming[0][1]
            if isinstance(value, ir.Value):
                subst[p.dest.id] = value
            else:
                # a constant cannot stand in a guard, an address or a guarded write's
                # else-value (`substitute` keeps the value there), so the value keeps a
                # definition: a copy of the constant, which propagation folds elsewhere
                copies.append(ir.Instr("mov", [p.dest], [value], type=p.dest.type))
        b.phis = [p for p in b.phis if len(p.incoming) != 1]
        b.instrs[:0] = copies
    if subst:
        substitute(fn, subst)


def propagate_exit_guards(fn: ir.Function) -> bool:
    facts = _facts(fn)
    decided = _self_comparisons(fn)
    if not facts and not decided:
        return False
    idom = ir.dominators(fn)
    changed = False
    subst: dict[int, object] = {}
    for b in list(fn.blocks):
        if b not in idom:
            continue
        known = dict(decided)
        known.update((pid, val) for start, pid, val in facts if ir.dominates(idom, start, b))
        if known and apply_decided(b, known, subst):
            changed = True
    if not changed:
        return False
    if subst:
        substitute(fn, subst)
    remove_unreachable(fn)
    return True
