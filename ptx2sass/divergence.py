"""Divergence analysis on the SSA IR: which values may differ between the lanes of a warp.

A conditional branch on a value that is the same in every lane (a kernel parameter, the
block index, a loop counter advanced in lockstep) keeps the warp together; one on a
lane-varying value splits it, and the code generator must then make the lanes meet again
(BSSY/BSYNC, ptx2sass/reconverge.py). Being wrong in the divergent direction costs two
instructions; in the other it loses reconvergence, so everything not known uniform is
divergent.

Sources of divergence: the per-lane special registers (%tid, %laneid, %lanemask_*, the
clocks), memory reads other than `.param`/`.const` (local memory is per thread; the
others are treated alike, conservatively), atomics, shuffles, matches, matrix fragments
and call results. It spreads through data (any divergent operand or address), through a
divergent guard, and through control:
* a phi at a join of a divergent branch (two disjoint paths from the branch meet there)
  merges lane-dependent choices;
* a value defined in a loop that lanes leave at different iterations (a divergent exit)
  differs between lanes where it is read after the loop.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.loop_nest import ir_loops

DIVERGENT_SPECIALS = ("%tid", "%laneid", "%lanemask", "%clock", "%globaltimer", "%pm")
UNIFORM_SPACES = ("param", "const")
# Spaces every lane of a warp sees alike (not `.local`, nor a generic address, which may be
# local): a load there from a uniform address reads one value (`loads_by_address`)
SHARED_SPACES = ("global", "shared", "shared::cluster")
ALWAYS_DIVERGENT = {"atom", "shfl", "match", "mma", "wmma", "ldmatrix", "call", "tex", "tld4",
                    "suld", "cp", "mbarrier", "prmt_lane"}
# Warp-wide results: the same in every lane that computes them (a phi or a loop exit
# makes them divergent where lanes computed them apart).
WARP_UNIFORM = {"vote", "redux", "activemask"}
# Results that differ between lanes whatever the operands, by position among the dests:
# elect.sync's predicate is true in the elected lane alone (its `d`, the leader's lane,
# is the same in every lane of the mask).
PER_LANE_DESTS = {"elect": (1,)}
UNIFORM_PHASE_TESTS = True      # mbarrier test_wait/try_wait uniform through their operands (A/B flag)


def _operands(ins: ir.Instr):
    for s in ins.srcs:
        if isinstance(s, ir.Address):
            if isinstance(s.base, ir.Value):
                yield s.base
        else:
            yield s


def _source_divergent(ins: ir.Instr, kernel: bool, loads_by_address: bool = False) -> bool:
    op = ins.opcode
    if op in WARP_UNIFORM:
        return False
    if op == "mbarrier" and (loads_by_address or UNIFORM_PHASE_TESTS) and ins.space in SHARED_SPACES \
            and ins.modifiers[:1] in (("test_wait",), ("try_wait",)):
        # the phase of one object, read by one instruction for the lanes together:
        # divergent only through its operands (ptxas's wait loops have no BSSY)
        return False
    if op in ALWAYS_DIVERGENT or op.startswith(("wmma", "tex", "sust", "suld", "atom")):
        return True
    if op in ("ld", "ldu") and loads_by_address and ins.space in SHARED_SPACES:
        return False     # one address, one value: divergent only through the address
    if op in ("ld", "ldu") and (ins.space not in UNIFORM_SPACES or (ins.space == "param" and not kernel)):
        return True      # a function's parameters are per-thread arguments
    if op == "param" and not kernel:
        return True      # so are its `.reg` parameters
    return any(isinstance(s, ir.SpecialReg) and s.name.startswith(DIVERGENT_SPECIALS) for s in ins.srcs)


def _walk(branch: ir.Block, stop: ir.Block | None) -> list[ir.Block]:
    """Reverse postorder of what the branch's successors reach, not passing the branch
    again, nor past `stop` (which is included)."""
    return ir.reverse_postorder_from(branch, stop)[1:]


def _joins(branch: ir.Block, meet: ir.Block | None = None, component=None, limit: int = 0) -> set[int]:
    """Blocks where paths from different successors of `branch` first meet. In reverse
    postorder of what the successors reach (not passing the branch again), each block takes
    the label its incoming edges agree on (an edge from the branch labels with its target);
    where they disagree the block is a join and labels onward with itself.

    `meet` (the branch's immediate post-dominator) bounds the walk: every path from the
    branch to an exit passes it, and past it every path carries meet's label. Where
    nothing past it flows back before it, every predecessor of a block up to `meet` is the
    branch, a block up to `meet`, or one `meet` cannot reach (its strongly connected
    component, in `component`, comes before meet's), and the labels up to it are those of
    the whole walk. Where something does (a predecessor in meet's component: meet reaches
    it without passing the branch again, as the enclosing loops re-enter a nested loop's
    header), that predecessor brings meet's label, if the first round's labels and joins
    are final (a second round changes nothing); otherwise, or without `meet`, the whole of
    what the branch reaches is walked (N nested loops' latches each walked the whole nest:
    quadratic). `limit` bounds the rounds of a bounded walk as the whole walk's length
    would."""
    order = None
    past: set[int] = set()                 # predecessors past `meet` that meet reaches
    if meet is not None:
        order = _walk(branch, meet)
        inside = {id(b) for b in order}
        bound = component.get(id(meet))
        for b in order:
            for p in b.preds:
                c = component.get(id(p))
                if p is branch or id(p) in inside or c is None or c > bound:
                    continue
                if c < bound:              # b reaches no exit: meet may or may not reach p
                    order = None
                    break
                past.add(id(p))
            if order is None:
                break
        if order is not None and past:
            joins = _sweep(branch, order, past, meet, 1)
            if joins is not None:
                return joins
            order = None                   # labels settled late: walk everything
    if order is None:
        order = _walk(branch, None)
        limit = len(order)
        past = set()
    return _sweep(branch, order, past, meet, limit + 2)


def _sweep(branch: ir.Block, order: list[ir.Block], past: set[int], meet, rounds: int):
    """`_joins`' labelling over `order` (reverse postorder). A predecessor in `past` brings
    meet's label. With `rounds` = 1, None unless the first round's labels and joins are
    final (a second round changes nothing)."""
    inside = {id(b) for b in order}
    mid = id(meet)
    label: dict[int, int] = {}
    joins: set[int] = set()
    for round in range(max(rounds, 2)):
        changed = False
        before = len(joins)
        for b in order:
            bid = id(b)
            if bid in joins:
                continue
            new = None                      # the one label the edges in agree on
            for p in b.preds:
                pid = id(p)
                came = (bid if p is branch else label.get(pid) if pid in inside
                        else label.get(mid) if pid in past else None)
                if came is None or came == new:
                    continue
                if new is not None:         # a second label came in
                    joins.add(bid)
                    new = None
                    break
                new = came
            if new is None:
                new = bid
            if label.get(bid) != new:
                label[bid] = new
                changed = True
        if not changed and len(joins) == before:
            break
        if round >= 1 and rounds == 1:
            return None
    return joins


def _exits_reached(blocks: list[ir.Block], component: dict[int, int]) -> dict[int, int]:
    """Block id -> bit mask of the exit blocks (no successors) it reaches, worked out over
    the strongly connected components, sinks first."""
    bit = {id(b): 1 << k for k, b in enumerate(b for b in blocks if not b.succs)}
    members: dict[int, list[ir.Block]] = {}
    for b in blocks:
        members.setdefault(component[id(b)], []).append(b)
    by_component: dict[int, int] = {}
    for c in sorted(members):
        m = 0
        for b in members[c]:
            m |= bit.get(id(b), 0)
            for t in b.succs:
                m |= by_component.get(component[id(t)], 0)
        by_component[c] = m
    return {id(b): by_component[component[id(b)]] for b in blocks}


def _apart(branch: ir.Block, exit_mask: dict[int, int]) -> bool:
    """Whether no two successors of `branch` reach a common exit: then no block is reached
    from two of them (where every block reaches an exit), and only such a block can be a
    join (a block reached from one successor only ever takes that successor's label)."""
    seen = 0
    for s in dict.fromkeys(branch.succs):
        m = exit_mask[id(s)]
        if seen & m:
            return False
        seen |= m
    return True


def after_divergent_branches(fn: ir.Function, divergent: set[int]) -> set[ir.Block]:
    """The blocks a branch on a `divergent` value may lead to: all after it (no
    reconvergence is assumed, so it errs towards the warp being diverged there)."""
    seen, work = set(), []
    for b in fn.blocks:
        term = b.instrs[-1] if b.instrs else None
        if term is not None and term.guard is not None and term.guard.id in divergent:
            work += b.succs
    while work:
        b = work.pop()
        if b not in seen:
            seen.add(b)
            work += b.succs
    return seen


def divergent_values(fn: ir.Function, loads_by_address: bool = False) -> set[int]:
    """Ids of the values that may differ between the lanes of a warp. `loads_by_address`:
    a load from global or shared memory at a uniform address is uniform (as ptxas judges a
    polling loop's exit, ptx2sass/loop_yield.py), not divergent as for reconvergence; so is
    an mbarrier wait's result (test_wait, try_wait) on a uniform address and phase."""
    nest = ir_loops(fn)
    idom, loops = nest.idom, nest.bodies()
    blocks = [b for b in fn.blocks if b in idom]
    ipdom = ir.immediate_dominators([b for b in blocks if not b.succs],
                                    lambda b: [p for p in b.preds if p in idom], lambda b: b.succs)
    component = ir.components([fn.entry], lambda b: b.succs)
    exit_mask = _exits_reached(blocks, component)
    stuck = not all(exit_mask.values())      # a block that reaches no exit (an endless loop)
    block_of: dict[int, ir.Block] = {}
    for b in blocks:
        for phi in b.phis:
            block_of[phi.dest.id] = b
        for ins in b.instrs:
            for d in ins.dests:
                block_of[d.id] = b
    div: set[int] = set()
    done_branches: set[int] = set()
    join_blocks: set[int] = set()
    leaky_around: dict[int, list[set[int]]] = {}     # block id -> the leaky loops holding it
    loops_holding: dict[int, list[set[int]]] = {}    # block id -> the loops holding it, in order
    for body in loops:
        for k in body:
            loops_holding.setdefault(k, []).append(body)

    def leaky(v: ir.Value, b: ir.Block) -> bool:
        """Is `v` read in `b` outside a loop with a divergent exit that defines it?"""
        where = block_of.get(v.id)
        return where is not None and any(id(b) not in body for body in leaky_around.get(id(where), ()))

    changed = True
    while changed:
        changed = False
        for b in blocks:
            if id(b) in join_blocks:
                for phi in b.phis:
                    if phi.dest.id not in div:
                        div.add(phi.dest.id)
                        changed = True
            for phi in b.phis:
                if phi.dest.id not in div and any(isinstance(v, ir.Value) and (v.id in div or leaky(v, b))
                                                  for _, v in phi.incoming):
                    div.add(phi.dest.id)
                    changed = True
            for ins in b.instrs:
                if not ins.dests or all(d.id in div for d in ins.dests):
                    continue
                for k in PER_LANE_DESTS.get(ins.opcode, ()):
                    if k < len(ins.dests) and ins.dests[k].id not in div:
                        div.add(ins.dests[k].id)
                        changed = True
                from_data = ins.opcode not in WARP_UNIFORM and any(
                    isinstance(v, ir.Value) and (v.id in div or leaky(v, b)) for v in _operands(ins))
                if (from_data or _source_divergent(ins, fn.is_entry, loads_by_address)
                        or (ins.guard is not None and ins.guard.id in div)
                        or any(isinstance(m, ir.Value) and m.id in div for m in ins.merge)):
                    for d in ins.dests:
                        div.add(d.id)
                    changed = True
            # Divergent branches: their joins, and the loops they leave.
            term = b.instrs[-1] if b.instrs and b.instrs[-1].is_terminator else None
            if term is None or id(b) in done_branches or len(b.succs) < 2:
                continue
            sel = term.guard if term.opcode == "bra" else (term.srcs[0] if term.opcode == "brx" else None)
            if not (isinstance(sel, ir.Value) and (sel.id in div or leaky(sel, b))):
                continue
            done_branches.add(id(b))
            if stuck or not _apart(b, exit_mask):       # (sides that never meet have no joins)
                join_blocks |= _joins(b, ipdom.get(id(b)), component, len(blocks))
            for body in loops_holding.get(id(b), ()):
                if any(id(s) not in body for s in b.succs) \
                        and all(body is not other for other in leaky_around.get(id(b), ())):
                    for k in body:
                        leaky_around.setdefault(k, []).append(body)
            changed = True
    return div

