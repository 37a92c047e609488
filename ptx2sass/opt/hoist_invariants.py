"""Loop-invariant code motion: operations a loop recomputes from values defined outside it
move to the loop's preheader, as ptxas moves them.

A loop that reloads a constant-bank table or recomputes an address from invariant registers on
every iteration pays each time for what one computation gives (fuzz seed 21000113: four
`ld.const` per iteration, ptxas loads them once before the loop and then drops the loop).
Compilers from LLVM hoist before they write PTX; hand-written and generated PTX often does not.

Moved: pure operations (`dce.is_pure`'s arithmetic), unguarded, without a carry, whose operands
are constants, symbols, launch-invariant special registers or values defined outside the loop
(or already moved). They compute the same value on every iteration and cannot trap, so running
them once before the loop, even where the loop would have skipped them, changes nothing.
Weak loads (not relaxed, acquire, volatile or mmio: those read again each time) move only from blocks that every iteration runs before the loop can leave (they
dominate every exiting block, and nothing in the loop exits the thread), so no load runs that
the loop would not have run; from the constant bank (nothing in a kernel writes it) always,
from other spaces where nothing in the loop writes memory or synchronises (every instruction
in it pure or a branch: the loaded value is the same on every iteration, unless another thread
races with it unsynchronised, which the memory model leaves undefined). Loops need a preheader: the header's one
predecessor outside the loop, with the header as its only successor.

A top-tested loop that provably runs at most once (its counter stepped past its bound after
one iteration: `i < (n & 1)`) is left alone: moving work out of it saves no iteration and
runs it where the loop would not have (fuzz seed 21000186: an f64 `min` and NaN test of a
0-or-1-trip loop, 323 -> 378 emulated cycles when moved).

In a loop that runs its body at least once, a header phi whose value from the latch is
now invariant holds that value after the loop: reads after the loop take it directly (and the
loop may then be left with nothing to do, for `dead_loops`)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.loop_nest import ir_loops
from ptx2sass.opt.dce import PURE, is_pure, is_strong_load
from ptx2sass.opt.uses import substitute

# special registers whose value does not change during a thread's life
INVARIANT_SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%lanemask", "%nsmid", "%gridid",
                      "%cluster", "%is_explicit_cluster", "%nclusterid", "%clusterid", "%aggr_smem_size",
                      "%dynamic_smem_size", "%total_smem_size")
# pure opcodes left in place: texture/surface reads (a surface may be written in the loop)
# and the stack pointer
NOT_MOVED = frozenset({"tex", "tld4", "txq", "suq", "suld", "istypep", "stacksave"})


def _preheader(h: ir.Block, body: set[int]) -> ir.Block | None:
    outside = [p for p in h.preds if id(p) not in body]
    if len(outside) != 1 or outside[0].succs != [h]:
        return None
    pre = outside[0]
    last = pre.instrs[-1] if pre.instrs else None
    if last is not None and last.opcode in ir.TERMINATORS and (last.opcode != "bra" or last.guard is not None):
        return None
    return pre


def _invariant_operand(op, inside: set[int]) -> bool:
    if isinstance(op, ir.Value):
        return op.id not in inside
    if isinstance(op, ir.Address):
        return not isinstance(op.base, ir.Value) or op.base.id not in inside
    if isinstance(op, ir.SpecialReg):
        return op.name.startswith(INVARIANT_SPECIALS)
    return True                                  # Const, Symbol


_LOADS = ("ld", "ldu")      # the opcodes `_movable` asks `dominates_exits` about


def _stays(ins: ir.Instr, inside: set[int], fixed: set[int]) -> bool:
    """Whether `ins`, not movable out of the loop at hand, stays in every loop holding it:
    for what it is (guarded, impure, an opcode never moved, a strong load), or for reading a
    value defined in this loop by a phi or by an instruction that stays (`fixed`), which
    stays in every enclosing loop too. (A load kept for the loop's exits or stores may
    still leave an enclosing loop.)"""
    if ins.guard is not None or ins.merge or not is_pure(ins) or ins.opcode in NOT_MOVED:
        return True
    if ins.opcode in _LOADS:
        if is_strong_load(ins):
            return True
    elif ins.opcode not in PURE:
        return True
    for op in ins.srcs:
        if isinstance(op, ir.Address):
            op = op.base
        if isinstance(op, ir.Value) and op.id in inside and op.id in fixed:
            return True
    return False


def _movable(ins: ir.Instr, inside: set[int], dominates_exits: bool, read_only: bool) -> bool:
    if ins.guard is not None or ins.merge or not is_pure(ins) or ins.opcode in NOT_MOVED:
        return False
    if ins.opcode in _LOADS:
        if is_strong_load(ins) or not dominates_exits or not (ins.space == "const" or read_only):
            return False
    elif ins.opcode not in PURE:
        return False
    return all(_invariant_operand(s, inside) for s in ins.srcs)


MASK32 = 0xFFFFFFFF


def _range(v, defs: dict[int, ir.Instr], depth: int = 0) -> tuple[int, int]:
    """Unsigned 32-bit bounds of a value (from constants, `and`, `or`, `add`, `shr`, `min`)."""
    if isinstance(v, ir.Const):
        return v.value & MASK32, v.value & MASK32
    ins = defs.get(v.id) if isinstance(v, ir.Value) and depth < 8 else None
    if ins is None or ins.guard is not None or ins.type not in ("u32", "s32", "b32") or len(ins.srcs) != 2 \
            or ins.modifiers:
        return 0, MASK32
    a, b = (_range(s, defs, depth + 1) for s in ins.srcs)
    if ins.opcode == "and":
        return 0, min(a[1], b[1])
    if ins.opcode == "or":
        return max(a[0], b[0]), MASK32
    if ins.opcode == "add" and a[1] + b[1] <= MASK32:
        return a[0] + b[0], a[1] + b[1]
    if ins.opcode == "shr" and ins.type != "s32" and b[0] == b[1] and b[0] < 32:
        return a[0] >> b[0], a[1] >> b[0]
    if ins.opcode == "min" and ins.type != "s32":
        return min(a[0], b[0]), min(a[1], b[1])
    return 0, MASK32


def _header_test(h: ir.Block, defs: dict[int, ir.Instr]):
    """(setp, bra) of a header that ends in a branch on an unguarded 32-bit unsigned compare
    made in the header, else None."""
    term = h.instrs[-1] if h.instrs else None
    if term is None or term.opcode != "bra" or not isinstance(term.guard, ir.Value) or len(h.succs) != 2:
        return None
    setp = defs.get(term.guard.id)
    if setp is None or setp.opcode != "setp" or setp.guard is not None or len(setp.modifiers) != 1 \
            or setp.type not in ("u32", "b32") or len(setp.srcs) != 2 or setp not in h.instrs:
        return None
    return setp, term


def _test_stays(h: ir.Block, body: set[int], setp: ir.Instr, term: ir.Instr, a: tuple[int, int],
                b: tuple[int, int]) -> bool | None:
    """Whether the header's test, its operands within unsigned bounds `a` and `b`, provably
    stays in the loop (True), provably leaves it (False), or either (None)."""
    (alo, ahi), (blo, bhi) = a, b
    holds = {"lt": ahi < blo, "lo": ahi < blo, "le": ahi <= blo, "ls": ahi <= blo, "gt": alo > bhi,
             "hi": alo > bhi, "ge": alo >= bhi, "hs": alo >= bhi,
             "ne": ahi < blo or alo > bhi}.get(setp.modifiers[0], False)
    fails = {"lt": alo >= bhi, "lo": alo >= bhi, "ge": ahi < blo, "hs": ahi < blo,
             "eq": ahi < blo or alo > bhi}.get(setp.modifiers[0], False)
    taken_exits = id(h.succs[0]) not in body
    # the branch is taken when the predicate differs from the guard's negation
    taken = (not term.guard_negated) if holds else (term.guard_negated if fails else None)
    return None if taken is None else taken != taken_exits


def _first_test_continues(fn: ir.Function, h: ir.Block, pre: ir.Block, body: set[int],
                          defs: dict[int, ir.Instr]) -> bool:
    """The header's first exit test (on entry from the preheader) provably stays in the loop."""
    test = _header_test(h, defs)
    if test is None:
        return False
    setp, term = test
    entry = {p.dest.id: dict((id(b), x) for b, x in p.incoming).get(id(pre)) for p in h.phis}
    a, b = (_range(entry.get(s.id, s) if isinstance(s, ir.Value) else s, defs) for s in setp.srcs)
    return _test_stays(h, body, setp, term, a, b) is True


def _second_test_leaves(h: ir.Block, pre: ir.Block, latch: ir.Block, body: set[int],
                        defs: dict[int, ir.Instr], inside: set[int]) -> bool:
    """The header's second test (after one iteration) provably leaves the loop: its left operand
    is a header phi stepped by an unguarded `add` of a constant, its right one defined outside
    the loop (not in `inside`) (`i = 0; L: setp.lt p, i, (n & 1); @!p bra END; ...; i += 1`: at most one
    iteration)."""
    test = _header_test(h, defs)
    if test is None:
        return False
    setp, term = test
    counter, bound = setp.srcs
    phi = next((p for p in h.phis if isinstance(counter, ir.Value) and p.dest.id == counter.id), None)
    if phi is None or (isinstance(bound, ir.Value) and bound.id in inside):
        return False
    incoming = dict((id(b), x) for b, x in phi.incoming)
    start, step = incoming.get(id(pre)), incoming.get(id(latch))
    add = defs.get(step.id) if isinstance(step, ir.Value) else None
    if add is None or add.opcode != "add" or add.guard is not None or add.modifiers \
            or add.type not in ("u32", "s32", "b32") or len(add.srcs) != 2 \
            or not (isinstance(add.srcs[0], ir.Value) and add.srcs[0].id == phi.dest.id) \
            or not isinstance(add.srcs[1], ir.Const):
        return False
    c = add.srcs[1].value & MASK32
    lo, hi = _range(start, defs)
    if hi + c > MASK32:
        return False
    return _test_stays(h, body, setp, term, (lo + c, hi + c), _range(bound, defs)) is False


def _values_after_loop(fn: ir.Function, h: ir.Block, latch: ir.Block, body: set[int], inside: set[int]) -> bool:
    """Reads after the loop of header phis whose latch value is invariant take that value."""
    subst = {}
    for phi in h.phis:
        back = [v for p, v in phi.incoming if p is latch]
        if len(back) == 1 and not (isinstance(back[0], ir.Value) and back[0].id in inside):
            subst[phi.dest.id] = back[0]
    if not subst:
        return False
    return substitute(_Outside(fn, body), subst)


class _Outside:
    """The blocks of `fn` outside a loop, for `substitute`."""

    def __init__(self, fn: ir.Function, body: set[int]):
        self.blocks = [b for b in fn.blocks if id(b) not in body]


class _Summary:
    """What a block's code says for hoisting, while its instruction list stays the same
    object of the same length (hoisting only replaces lists it took instructions from and
    inserts into preheaders' lists)."""
    __slots__ = ("instrs", "count", "phis", "exits", "read_only", "loads", "defined")

    def __init__(self, b: ir.Block):
        self.instrs, self.count, self.phis = b.instrs, len(b.instrs), len(b.phis)
        self.exits = any(i.opcode in ("exit", "ret", "trap_exit") for i in b.instrs)
        self.read_only = all(i.opcode == "bra" or is_pure(i) for i in b.instrs)
        self.loads = any(i.opcode in _LOADS for i in b.instrs)
        self.defined = frozenset([p.dest.id for p in b.phis] + [d.id for i in b.instrs for d in i.dests])


def _summary(summaries: dict[int, _Summary], b: ir.Block) -> _Summary:
    got = summaries.get(id(b))
    if got is None or got.instrs is not b.instrs or got.count != len(b.instrs) or got.phis != len(b.phis):
        got = summaries[id(b)] = _Summary(b)
    return got


def hoist_loop_invariants(fn: ir.Function) -> bool:
    # moving instructions leaves the CFG as it is: dominators and the block order hold throughout
    nest = ir_loops(fn)
    dominates = ir.dominance(nest.idom)
    rpo = ir.reverse_postorder(fn)
    order = {id(b): k for k, b in enumerate(rpo)}
    defs = {d.id: i for b in fn.blocks for i in b.instrs for d in i.dests}
    changed = False
    # Loops come innermost first: what stays in an inner loop for good (`_stays`) is not
    # looked at again for the enclosing ones (N nested loops asked `_movable` ~N^2/2 times).
    phis = {p.dest.id for b in fn.blocks for p in b.phis}
    stuck: set[int] = set()            # ids of those instructions
    fixed = set(phis)                  # phi results and those instructions' results
    # Each enclosing loop of a nest looks at the inner loops' blocks again (~N^2/2 block
    # visits for N nested loops): what a block's code says (`_Summary`) is kept while its
    # instruction list stays the same, and a block whose every instruction stays for good
    # (`settled`) is not walked again until what stayed may move.
    summaries: dict[int, _Summary] = {}
    settled: set[int] = set()          # ids of such blocks
    succ_ids = {id(b): {id(s) for s in b.succs} for b in fn.blocks}
    for h, body in nest.innermost_first():
        pre = _preheader(h, body)
        if pre is None:
            continue
        blocks = list(map(rpo.__getitem__, sorted(map(order.__getitem__, body & order.keys()))))
        exiting = [b for b in blocks if not body.issuperset(succ_ids[id(b)])]
        latches = [p for p in h.preds if id(p) in body]
        # a top-tested loop whose body runs at least once: blocks every iteration passes
        at_least_once = (exiting == [h] and len(latches) == 1
                         and _first_test_continues(fn, h, pre, body, defs))
        facts = [_summary(summaries, b) for b in blocks]
        if any(f.exits for f in facts):
            exiting = []                         # a thread may leave anywhere: no loads move
        read_only = all(f.read_only for f in facts)
        # values defined inside the loop (phis and instructions); shrinks as operations move
        inside = set().union(*(f.defined for f in facts))
        if (not at_least_once and exiting == [h] and len(latches) == 1
                and _second_test_leaves(h, pre, latches[0], body, defs, inside)):
            continue                             # runs once or never: moving saves nothing
        moved: list[ir.Instr] = []
        for b, f in zip(blocks, facts):          # reverse postorder: definitions before uses
            if id(b) in settled:
                continue                         # (every instruction would stay, as it is)
            # only loads ask it: worked out for blocks that hold one (every block of every
            # enclosing loop's body asked it for every exit: quadratic in the nesting)
            dominates_exits = bool(exiting) and f.loads and (
                all(dominates(b, e) for e in exiting) or (at_least_once and dominates(b, latches[0])))
            keep = []
            for ins in b.instrs:
                if id(ins) in stuck:
                    keep.append(ins)
                elif _movable(ins, inside, dominates_exits, read_only):
                    moved.append(ins)
                    inside.difference_update(d.id for d in ins.dests)
                else:
                    keep.append(ins)
                    if _stays(ins, inside, fixed):
                        stuck.add(id(ins))
                        fixed.update(d.id for d in ins.dests)
            if len(keep) != len(b.instrs):
                b.instrs = keep
            elif all(id(ins) in stuck for ins in keep):
                settled.add(id(b))
        if at_least_once and _values_after_loop(fn, h, latches[0], body, inside):
            changed = True
            stuck.clear()                # operands replaced: what stayed may move now
            settled.clear()
            summaries.clear()
            fixed = set(phis)
        if not moved:
            continue
        settled.discard(id(pre))
        last = pre.instrs[-1] if pre.instrs else None
        at = len(pre.instrs) - 1 if last is not None and last.opcode == "bra" else len(pre.instrs)
        pre.instrs[at:at] = moved
        changed = True
    return changed
