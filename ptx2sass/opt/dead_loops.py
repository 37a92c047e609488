"""Loops that compute nothing read after them, and that end, go.

Once invariant code has moved out (`hoist_invariants`) and dead code has gone, a loop may be
left counting its induction variable up to a bound with nothing else to do; ptxas deletes such
loops (fuzz seed 21000113: an empty loop of 3 to 6 trips, ptxas has none). A loop goes when:
- every instruction in it is pure (`dce.is_pure`: arithmetic and weak loads, no stores, atomics,
  barriers, warp collectives or calls) or a branch;
- nothing outside it reads a value defined in it;
- it has one exit edge, into a block X, and is entered from one preheader;
- it provably ends: the exit is decided in the header or the latch by an integer compare of
  the induction variable (a header phi stepped by +1 once per iteration) or its next value
  with a value defined outside the loop, and the loop continues while `i < n` or `i != n`
  (`i >= n` or `i == n` ends it). Stepping by one, i meets n within 2^width iterations
  whatever the start, so the loop always ends.
The preheader then goes straight to X."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.loop_nest import ir_loops
from ptx2sass.opt.dce import is_pure, is_strong_load
from ptx2sass.opt.hoist_invariants import _preheader

# compares that end a +1-stepped counter's loop when the counter is the first operand:
# continuing while true / exiting when true
CONTINUE_WHILE = {"lt", "lo", "ne"}
EXIT_WHEN = {"ge", "hs", "eq"}
SWAPPED = {"lt": "gt", "lo": "hi", "ne": "ne", "ge": "le", "hs": "ls", "eq": "eq"}


def _definers(blocks) -> dict[int, ir.Instr]:
    return {d.id: i for b in blocks for i in b.instrs for d in i.dests}


def _ends(h: ir.Block, latch: ir.Block, exiting: ir.Block, exit_: ir.Block, inside: set[int],
          defs: dict[int, ir.Instr]) -> bool:
    term = exiting.instrs[-1] if exiting.instrs else None
    if term is None or term.opcode != "bra" or not isinstance(term.guard, ir.Value) or len(exiting.succs) != 2:
        return False
    taken_exits = exiting.succs[0] is exit_
    setp = defs.get(term.guard.id)
    if setp is None or setp.opcode != "setp" or setp.guard is not None or len(setp.modifiers) != 1 \
            or setp.type is None or setp.type[0] not in "sub" or len(setp.srcs) != 2:
        return False
    # the branch leaves when the predicate equals `leave_when`
    leave_when = (not term.guard_negated) if taken_exits else term.guard_negated
    steps = {}                                   # id of the phi or its next value -> True
    for phi in h.phis:
        back = [v for p, v in phi.incoming if p is latch]
        nxt = defs.get(back[0].id) if back and isinstance(back[0], ir.Value) else None
        if nxt is None or nxt.opcode != "add" or nxt.guard is not None or nxt.type not in ("u32", "s32", "u64", "s64") \
                or nxt.srcs[0] != phi.dest or not isinstance(nxt.srcs[1], ir.Const) or nxt.srcs[1].value != 1 \
                or nxt.modifiers:
            continue
        steps[phi.dest.id] = steps[back[0].id] = True
    a, b = setp.srcs
    cmp = setp.modifiers[0]
    if isinstance(b, ir.Value) and b.id in steps and not (isinstance(a, ir.Value) and a.id in inside):
        a, b = b, a
        cmp = {v: k for k, v in SWAPPED.items()}.get(cmp)
    if not (isinstance(a, ir.Value) and a.id in steps) or (isinstance(b, ir.Value) and b.id in inside):
        return False
    return cmp in (EXIT_WHEN if leave_when else CONTINUE_WHILE)


def _used_in(fn: ir.Function) -> dict[int, set[int]]:
    """Value id -> ids of the blocks that read it (phis count in their own block)."""
    out: dict[int, set[int]] = {}
    for b in fn.blocks:
        for phi in b.phis:
            for _, v in phi.incoming:
                if isinstance(v, ir.Value):
                    out.setdefault(v.id, set()).add(id(b))
        for ins in b.instrs:
            for op in [*ins.srcs, ins.guard, *ins.merge]:
                v = op.base if isinstance(op, ir.Address) else op
                if isinstance(v, ir.Value):
                    out.setdefault(v.id, set()).add(id(b))
    return out


def _delete(fn: ir.Function, h: ir.Block, body: set[int], by_id: dict[int, ir.Block],
            used_in: dict[int, set[int]]) -> bool:
    pre = _preheader(h, body)
    if pre is None or h.preds.count(pre) != 1:
        return False
    blocks = [by_id[i] for i in body if i in by_id]
    edges = [(b, s) for b in blocks for s in b.succs if id(s) not in body]
    if len(edges) != 1:
        return False
    exiting, exit_ = edges[0]
    latches = [p for p in h.preds if id(p) in body]
    if len(latches) != 1 or exiting not in (h, latches[0]):
        return False
    for b in blocks:
        for ins in b.instrs:
            if ins.opcode == "bra" or (ins.opcode not in ir.TERMINATORS and is_pure(ins)
                                       and not is_strong_load(ins)):
                continue
            return False
    inside = {p.dest.id for b in blocks for p in b.phis} | {d.id for b in blocks for i in b.instrs for d in i.dests}
    if any(not used_in.get(v, set()) <= body for v in inside):
        return False                             # read after the loop
    if not _ends(h, latches[0], exiting, exit_, inside, _definers(blocks)):
        return False
    pre.succs = [exit_]
    exit_.preds = [pre if p is exiting else p for p in exit_.preds]
    for phi in exit_.phis:
        phi.incoming = [(pre if p is exiting else p, v) for p, v in phi.incoming]
    fn.blocks = [b for b in fn.blocks if id(b) not in body]
    return True


def remove_dead_loops(fn: ir.Function) -> bool:
    changed = False
    while True:
        by_id = {id(b): b for b in fn.blocks}
        used_in = _used_in(fn)
        for h, body in ir_loops(fn).innermost_first():
            if _delete(fn, h, body, by_id, used_in):
                changed = True
                break
        else:
            return changed
