"""Reconvergence: BSSY/BSYNC around divergent control flow, as ptxas writes them for sm_8x.

Since Volta, lanes that take different ways at a branch are not guaranteed to run together
again where the paths meet: the code must say so. ptxas brackets every divergent region with
a convergence barrier: `BSSY Bk, <after>` records the lanes entering it and `BSYNC Bk`, the
first instruction of the reconvergence block, holds them until every one has arrived (or
exited); `<after>` is the instruction after the BSYNC. Without it, a later warp-collective
operation (SHFL, VOTE, …, HMMA) with a full member mask may run with part of the warp.

What ptxas does (read off its output for if/else, nested ifs, loops with breaks, early
exits):
* a conditional branch (or BRX switch) on a value that may differ between lanes
  (ptx2sass.divergence; the selector marks the others `uniform`) gets a region; a uniform
  branch does not;
* the region ends at the branch's immediate post-dominator (past a block of phi copies on
  one edge, which lanes may run before they meet), where paths that only lead to
  an EXIT of their own do not count: lanes that exit count as arrived, so `if (c) return;`
  needs no barrier, and a side that returns early does not push the meeting point to the
  end of the kernel. A branch whose sides share no exit (each ends in its own EXIT) gets none;
* the BSSY sits just before the branch, or, when the branch is in a loop that the
  reconvergence block is outside of (a divergent exit), before the outermost such loop
  (its preheader), so that the lanes leaving early wait for those still looping; branches
  with the same start and end share one region, and so does a region inside another that
  ends at the same block (an else-if chain, a slow path's several exits);
* the BSYNC gets a block of its own in front of the reconvergence block, which only the
  edges from inside the region enter (regions ending at the same block: innermost first);
* barriers are numbered by nesting: a region gets the lowest barrier no region overlapping
  it holds (sequential regions reuse B0). B0..B15 are no general registers: they appear as
  physical `Reg("B", k)` operands, which the allocator and the footprints ignore; where all
  16 are held (17 nested divergent regions; ptxas has no limit), a region inside them takes
  one an enclosing region holds: `BMOV.32.CLEAR Rs, Bk` before its BSSY keeps the outer
  mask in a register, `BMOV.32 Bk, Rs` after its BSYNC puts it back;
* calls: B6..B15 are callee-saved, B0..B5 not. A region with a CALL inside gets a barrier
  from B6 up (innermost first: the innermost B6, the one around it B7); the others count
  from B0. An out-of-line function that uses a callee-saved barrier keeps its caller's
  mask: `BMOV.32.CLEAR Rs, Bk` on entry (highest first), `BMOV.32 Bk, Rs` before its RET;
  its several `ret`s leave by one RET (isel/calls.py), where its regions end. Without the
  save, a recursive callee's BSSY would replace the mask its caller's lanes wait on
  (tests/test_emu_calls.py: ptxas's cubins and ours, explicit reconvergence);
* a `.sync` collective with the full member mask inside a region, or anywhere after a
  divergent branch that has no region, may find the warp split (ptxas tests that with
  `BRA.CONV` and calls a slow path that starts with `WARPSYNC 0xffffffff`): it gets that
  WARPSYNC in front; so does one that may follow a YIELD, which lets lanes pass a BSYNC
  without the others (ptx2sass/loop_yield.py).

Out-of-line functions get regions like kernels (their `.reg` and `.param` arguments are
lane-varying); in-selection loops and slow paths (isel/flow.py, CAS loops,
64-bit division) are divergent branches like any other.
"""
from __future__ import annotations

from ptx2sass import barrier_routine
from ptx2sass.encoder.model import Imm, Label, Reg
from ptx2sass.errors import CompileError
from ptx2sass.ir import components, immediate_dominators, reverse_postorder_from
from ptx2sass.loop_nest import natural_loops
from ptx2sass.mir import PSEUDOS, MBlock, MFunction, MInstr, VOp

NUM_BARRIERS = 16
FIRST_CALLEE_SAVED = 6       # B6..B15 survive a call; B0..B5 do not
# tex.grad's quad sequences keep the active mask in B15 (isel/texture.py) and, as ptxas's,
# an out-of-line function's do not save it: a caller whose region holds B15 across a call
# (ten call-containing regions deep) keeps its mask in a register around the CALL instead
QUAD_BARRIER = NUM_BARRIERS - 1


class _Region:
    def __init__(self, start: MBlock, end: MBlock, in_branch_block: bool):
        self.start = start              # where the BSSY goes
        self.end = end                  # the reconvergence block
        self.in_branch_block = in_branch_block    # BSSY before the start's final branch
        self.body: set[int] = set()
        self.barrier = -1
        self.spilled = False            # the barrier is also an enclosing region's (BMOV)
        self.bssy: MInstr | None = None
        self.sync_block: MBlock | None = None
        self.put: list[MInstr] = []     # the BSSY (after a BMOV where spilled)


def _last_real(b: MBlock) -> MInstr | None:
    for mi in reversed(b.instrs):
        if mi.opcode not in PSEUDOS:
            return mi
    return None


def _divergent_branch(b: MBlock) -> bool:
    if len({id(s) for s in b.succs}) < 2:
        return False
    mi = _last_real(b)
    if mi is None:
        return False
    if mi.opcode == "BRX":
        return not mi.uniform
    return mi.opcode == "BRA" and mi.guard is not None and not mi.uniform


def reachable(*starts: MBlock) -> list[MBlock]:
    """The blocks reached from any of `starts` (them included)."""
    seen, order, work = {id(b) for b in starts}, [], list(dict.fromkeys(starts))
    while work:
        b = work.pop()
        order.append(b)
        for s in b.succs:
            if id(s) not in seen:
                seen.add(id(s))
                work.append(s)
    return order


def _dominance(entry: MBlock):
    """(`dominates(a, b)`, block id -> reverse-postorder index) for the blocks reached from
    the entry: a dominator comes first in reverse postorder, so only then is the dominator
    tree walked (the sets of every block's dominators were quadratic in the number of
    blocks)."""
    idom = immediate_dominators([entry], lambda b: b.succs, lambda b: b.preds)
    rpo = {id(b): k for k, b in enumerate(reverse_postorder_from(entry))}

    def dominates(a: MBlock, b: MBlock) -> bool:
        if rpo[id(a)] > rpo[id(b)]:
            return False
        node = b
        while node is not None:
            if node is a:
                return True
            node = idom[id(node)]
        return False
    return dominates, rpo


class _PostDominators:
    """Immediate post-dominators towards a virtual exit reached from a given set of exit
    blocks (the others are dead ends: paths into them do not count); cached per exit set."""

    def __init__(self, blocks: list[MBlock], exits: list[MBlock]):
        self.blocks = blocks
        self.exits = exits
        self.index = {id(b): i for i, b in enumerate(blocks)}
        self.cache: dict[int, dict[int, MBlock | None]] = {}

    def immediate(self, exits: int) -> dict[int, MBlock | None]:
        """Block id -> its immediate post-dominator (None: the virtual exit) for the blocks
        that reach one of `exits` (a bit mask over the exit blocks)."""
        got = self.cache.get(exits)
        if got is None:
            index = self.index
            got = self.cache[exits] = immediate_dominators(
                [x for k, x in enumerate(self.exits) if exits >> k & 1],
                lambda b: [p for p in b.preds if id(p) in index], lambda b: b.succs)
        return got


def _exit_sets(blocks: list[MBlock], dead: dict):
    """The exit blocks, and `exits_from(b)`: a bit mask over them of the exits reachable from `b`, not counting those only reached
    through a dead end (`_dead_end`: panics, whose lanes leave for good). Worked out for
    every block at once over the strongly connected components (sinks first), as bit masks
    over the exits (a walk per branch was quadratic)."""
    def onward(x: MBlock):
        if len(x.succs) > 1:
            return [t for t in x.succs if not dead.get((id(x), id(t)))]
        return x.succs
    component = components(blocks, onward)
    members: dict[int, list[MBlock]] = {}
    for b in blocks:
        members.setdefault(component[id(b)], []).append(b)
    exits = [b for b in blocks if not b.succs]
    bit = {id(x): 1 << k for k, x in enumerate(exits)}
    mask: dict[int, int] = {}
    for c in sorted(members):
        m = 0
        for b in members[c]:
            m |= bit.get(id(b), 0)
            for t in onward(b):
                if component[id(t)] != c:
                    m |= mask[component[id(t)]]
        mask[c] = m
    return exits, lambda b: mask[component[id(b)]]


def _dead_end(s: MBlock, b: MBlock) -> bool:
    """Whether `s` is a panic side of branch block `b`, whose lanes never meet the others
    again: straight-line code from `s` to an EXIT, entered only through `s`, that calls a
    function (LLVM: a `.noreturn` panic handler, then EXIT) and never comes back to `b`. Zig's safety checks
    inside loops are such sides; the loop's back edge makes their EXIT reachable from the
    other side too, which must neither make it the meeting point nor keep the other exits
    from counting (ptxas gives them no barrier)."""
    calls, x, seen = False, s, set()
    if {id(p) for p in s.preds} - {id(b)}:
        return False              # the other side's lanes enter `s` too: they meet there
    while x is not b and id(x) not in seen:
        if x is not s and len({id(p) for p in x.preds}) > 1:
            return False          # the other side's lanes come here too: a meeting point
        seen.add(id(x))
        calls = calls or any(mi.opcode == "CALL" for mi in x.instrs)
        if not x.succs:
            return calls
        if len(x.succs) > 1:
            return False
        x = x.succs[0]
    return False


def _reconvergence_block(b: MBlock, pdoms: _PostDominators, exits_from) -> MBlock | None:
    """The branch's immediate post-dominator, counting only exits every successor reaches."""
    common = None
    for s in b.succs:
        e = exits_from(s)
        common = e if common is None else common & e
    if not common:
        return None
    return pdoms.immediate(common).get(id(b))


def _only_copies_on_one_edge(b: MBlock) -> bool:
    """A block of phi copies on one edge (opt/split_exit_edges.py's loop exits): lanes may
    run its copies before they meet, so the region ends at the block it leads to, where it
    would have ended without the split (and the loop's region can join an enclosing one)."""
    return (len(b.preds) == 1 and len(b.succs) == 1 and b.succs[0] is not b
            and all(mi.opcode in PSEUDOS for mi in b.instrs))


def _redirect(mf: MFunction, p: MBlock, old: MBlock, new: MBlock) -> None:
    """Make p's edges to `old` go to `new` (successor lists, fall-through, branch labels,
    jump tables)."""
    n = sum(1 for s in p.succs if s is old)
    p.succs = [new if s is old else s for s in p.succs]
    old.preds[:] = [q for q in old.preds if q is not p]
    new.preds.extend([p] * n)
    if p.fallthrough is old:
        p.fallthrough = new
    for mi in p.instrs:
        if any(isinstance(op, Label) and op.name == old.name for op in mi.operands):
            mi.operands = [Label(new.name, op.offset) if isinstance(op, Label) and op.name == old.name else op
                           for op in mi.operands]
    if any(mi.opcode == "BRX" for mi in p.instrs):
        k = sum(1 for b in mf.blocks[:mf.blocks.index(p)] for mi in b.instrs if mi.opcode == "BRX")
        mf.jump_tables[k] = [new.name if t == old.name else t for t in mf.jump_tables[k]]


def _body(region: _Region) -> set[int]:
    """Blocks reachable from the region's start without passing its end."""
    body: set[int] = set()
    work = list(region.start.succs)
    while work:
        b = work.pop()
        if b is region.end or id(b) in body:
            continue
        body.add(id(b))
        work.extend(b.succs)
    return body


def _single_entry_start(start: MBlock, end: MBlock, idom: dict, by_id: dict,
                        bodies: dict | None = None) -> MBlock:
    """Where the BSSY of a region from `start` to `end` must go so that no lane reaches its
    BSYNC without having passed it. Paths from the branch may run into a block that other
    paths enter too before meeting at `end` (a uniform switch's cases sharing one
    `endswitch` block, one case holding the divergent branch): lanes coming those other
    ways would reach the BSYNC on a barrier they never set up, and wait forever. Then the
    BSSY moves up the dominator tree to the first block whose paths into the region all
    start below it, as long as every path from there meets at `end` (no exit or return on
    the way); where there is none it stays at `start`. `by_id`: the reachable blocks.
    `bodies`: (id(start), id(end)) -> `_body`, kept while the blocks stay as they are."""
    bodies = {} if bodies is None else bodies

    def body_of(x: MBlock) -> set[int]:
        known = bodies.get((id(x), id(end)))
        if known is None:
            known = bodies[(id(x), id(end))] = _body(_Region(x, end, True))
        return known
    node = start
    while True:
        body = body_of(node)
        inside = body | {id(node)}
        if all(id(p) in inside or id(p) not in by_id for k in body for p in by_id[k].preds):
            return node
        up = idom.get(id(node))
        if up is None or up is end or id(up) in body:
            return start
        if any(not by_id[k].succs for k in body_of(up)):
            return start
        node = up


def _conflict(x: _Region, y: _Region) -> bool:
    """Do the two regions hold their barriers at some common point? A block is covered
    whole by a region's body, at its top by the region's end (the BSYNC), at its bottom by
    its start (the BSSY)."""
    if x.start is y.start or x.end is y.end:
        return True
    if id(x.start) in y.body or id(x.end) in y.body or id(y.start) in x.body or id(y.end) in x.body:
        return True
    return not x.body.isdisjoint(y.body)      # (the costly test last: nested regions stop above)


def _barrier_to_spill(r: _Region, near, first: int) -> int | None:
    """A barrier for a region when all 16 are held around it (ptxas has no nesting limit:
    it moves masks to general registers with BMOV). The region may take a barrier whose
    every holder among the regions it meets encloses it (their BSSY and BSYNC lie outside
    it: the mask is saved at its BSSY and put back after its BSYNC; each lane keeps its own
    copy of a barrier, so the enclosing region's other lanes still see theirs) or lies
    inside it and saves the barrier itself."""
    holders: dict[int, list[_Region]] = {}
    for o in near:
        if o is not r and _conflict(r, o):
            holders.setdefault(o.barrier, []).append(o)

    def encloses(o: _Region, x: _Region) -> bool:
        # x's body lies in o's then too: a block of x's body is reached from x's start
        # through x's body only, which does not hold o's end, and x's start is in o's body
        # (so `x.body <= o.body` need not be tested: it made this cubic in loop nesting)
        return (id(x.start) in o.body and id(x.end) in o.body and id(o.start) not in x.body
                and id(o.end) not in x.body)

    for k in range(first, NUM_BARRIERS):
        if all(encloses(o, r) or (encloses(r, o) and o.spilled) for o in holders.get(k, ())):
            return k
    return None


def _preheader_of(header: MBlock, body: set[int]) -> MBlock | None:
    """The block every entry into the loop passes last, if it is one that ends in nothing
    but a fall-through into the header."""
    outside = [p for p in header.preds if id(p) not in body]
    if len({id(p) for p in outside}) != 1:
        return None
    p = outside[0]
    last = _last_real(p)
    if len(p.succs) == 1 and (last is None or last.opcode not in ("BRA", "BRX", "CALL", "RET", "EXIT")):
        return p
    return None


def _make_preheader(mf: MFunction, header: MBlock, body: set[int]) -> None:
    pre = MBlock(f"{header.name}$pre{len(mf.blocks)}")
    for p in list(dict.fromkeys(p for p in header.preds if id(p) not in body)):
        _redirect(mf, p, header, pre)
    pre.succs.append(header)
    header.preds.append(pre)
    pre.fallthrough = header
    mf.blocks.insert(mf.blocks.index(header), pre)


def _divergent_regions(mf: MFunction):
    """(branch block, reconvergence block, header of the outermost loop the branch leaves
    or None) for each divergent branch with a reconvergence block; and the loops."""
    entry = mf.blocks[0]
    reach = {id(x) for x in reachable(entry)}
    blocks = [b for b in mf.blocks if id(b) in reach]
    dominates, rpo = _dominance(entry)
    loops = {h: body for h, (_, body) in natural_loops(blocks, rpo, dominates, lambda p: id(p) in rpo).items()}
    found, unjoined = [], []
    dead = {(id(b), id(s)): _dead_end(s, b) for b in blocks if len(b.succs) > 1
            for s in b.succs}
    exits, exits_from = _exit_sets(blocks, dead)
    pdoms = _PostDominators(blocks, exits)
    loops_around: dict[int, list[int]] = {}      # block id -> headers of the loops holding it
    for h, body in loops.items():
        for k in body:
            loops_around.setdefault(k, []).append(h)
    for b in blocks:
        if not _divergent_branch(b):
            continue
        if len({id(s) for s in b.succs if not dead[(id(b), id(s))]}) <= 1:
            unjoined.append(b)    # the lanes of the other sides never come back
            continue
        end = _reconvergence_block(b, pdoms, exits_from)
        if end is None:
            unjoined.append(b)
            continue
        while _only_copies_on_one_edge(end):
            end = end.succs[0]
        left = [h for h in loops_around.get(id(b), ()) if id(end) not in loops[h]]
        header = max(left, key=lambda h: len(loops[h])) if left else None
        found.append((b, end, header))
    return found, unjoined, loops, {id(b): b for b in blocks}


def insert_reconvergence(mf: MFunction, function: bool = False) -> None:
    """Add BSSY/BSYNC pairs around the divergent regions of a kernel's machine code, or of
    an out-of-line function's (`function`: it also saves the callee-saved barriers it uses)."""
    if any(mi.opcode in ("BSSY", "BSYNC") for b in mf.blocks for mi in b.instrs):
        raise CompileError(f"kernel {mf.name}: internal error: convergence barriers before the reconvergence pass")
    found, unjoined, loops, by_id = _divergent_regions(mf)
    # 1. Loops left by a divergent branch need a preheader for the BSSY; made where there is
    # none, then everything is worked out again (a region may now end at the preheader).
    missing = {h for _, _, h in found if h is not None and _preheader_of(by_id[h], loops[h]) is None}
    if missing:
        for h in missing:
            _make_preheader(mf, by_id[h], loops[h])
        found, unjoined, loops, by_id = _divergent_regions(mf)
    if not found and not unjoined:
        return
    # 2. One region per (start, end).
    regions: dict[tuple[int, int], _Region] = {}
    idom = immediate_dominators([mf.blocks[0]], lambda x: x.succs, lambda x: x.preds)
    bodies: dict[tuple[int, int], set[int]] = {}    # `_body` by (start, end): no block changes here
    for b, end, header in found:
        start = b if header is None else _preheader_of(by_id[header], loops[header])
        if start is None:
            raise CompileError(f"kernel {mf.name}: internal error: loop {by_id[header].name} has no preheader")
        hoisted = _single_entry_start(start, end, idom, by_id, bodies)
        if hoisted is not start:
            last = _last_real(hoisted)
            start, in_branch = hoisted, last is not None and last.opcode in ("BRA", "BRX")
        else:
            in_branch = header is None
        key = (id(start), id(end))
        if key not in regions:
            regions[key] = _Region(start, end, in_branch)
    ordered = list(regions.values())
    for r in ordered:
        r.body = bodies.get((id(r.start), id(r.end)))
        if r.body is None:
            r.body = _body(r)
    del bodies
    # A region inside another that ends at the same block adds nothing (its lanes wait at
    # the outer BSYNC with the rest): ptxas gives an else-if chain one barrier.
    by_end: dict[int, list[_Region]] = {}
    for r in ordered:
        by_end.setdefault(id(r.end), []).append(r)
    ordered = [r for r in ordered
               if not any(o is not r and id(r.start) in o.body for o in by_end[id(r.end)])]
    # 3. Barriers. Regions with a call inside: innermost first, the lowest callee-saved one
    # (B6 up) no overlapping region holds; then the others, outermost first, the lowest one.
    position = {id(b): k for k, b in enumerate(mf.blocks)}
    calls = {id(b) for b in mf.blocks if any(mi.opcode == "CALL" for mi in b.instrs)}
    around_calls = [r for r in ordered if r.body & calls]
    around_calls.sort(key=lambda r: (len(r.body), position[id(r.start)]))
    others = [r for r in ordered if not r.body & calls]
    others.sort(key=lambda r: (-len(r.body), position[id(r.start)]))
    done: list[_Region] = []
    # block id -> the regions given a barrier that touch it; blocks touched by the same
    # regions share one tuple, so a region's neighbours are gathered per distinct tuple,
    # not per block (per block it was cubic in the nesting depth of loops)
    touching: dict[int, tuple[_Region, ...]] = {}
    for r in around_calls + others:
        # regions that conflict share a block: only those are compared
        cover = (*r.body, id(r.start), id(r.end))
        near: dict[int, _Region] = {}
        seen: set[int] = set()
        for k in cover:
            holders = touching.get(k, ())
            if id(holders) not in seen:
                seen.add(id(holders))
                for o in holders:
                    near[id(o)] = o
        taken = {o.barrier for o in near.values() if _conflict(r, o)}
        first = FIRST_CALLEE_SAVED if r in around_calls else 0
        r.barrier = next((k for k in range(first, NUM_BARRIERS) if k not in taken), None)
        if r.barrier is None:
            r.barrier, r.spilled = _barrier_to_spill(r, near.values(), first), True
            if r.barrier is None:
                raise CompileError(f"kernel {mf.name}: internal error: no convergence barrier to spill "
                                   f"for a divergent region crossing {NUM_BARRIERS - first} others")
        done.append(r)
        grown: dict[int, tuple] = {}        # id of a block's old tuple -> (it, it + r)
        for k in set(cover):
            holders = touching.get(k, ())
            pair = grown.get(id(holders))
            if pair is None:
                pair = grown[id(holders)] = (holders, (*holders, r))
            touching[k] = pair[1]
    ordered = done
    # 4. BSSY at the start: just before its branch, or last in a preheader (outer first).
    # A spilled region keeps the enclosing region's mask in a register meanwhile.
    for r in ordered:
        r.bssy = MInstr("BSSY", (), [Reg("B", r.barrier), None], 0)
        put = [r.bssy]
        if r.spilled:
            r.saved = mf.new_vreg("R")
            put.insert(0, MInstr("BMOV", ("32", "CLEAR"), [VOp(r.saved), Reg("B", r.barrier)], 1))
        r.put = put
        if r.in_branch_block:
            last = _last_real(r.start)
            at = next(k for k, mi in enumerate(r.start.instrs) if mi is last)
            r.start.instrs[at:at] = put
    for r in ordered:
        if r.barrier == QUAD_BARRIER and r in around_calls:
            _keep_around_calls(mf, r.body, QUAD_BARRIER)
        if r.barrier == QUAD_BARRIER:
            _keep_around_quads(mf, r.body, QUAD_BARRIER)
    # 5. BSYNC blocks in front of the ends, innermost first; the edges from inside go there.
    count = 0
    syncs: dict[int, list[MBlock]] = {}      # end id -> its BSYNC blocks, in the order made
    made_here: set[int] = set()
    for r in sorted(ordered, key=lambda r: (len(r.body), position[id(r.start)])):
        count += 1
        sync = MBlock(f"{r.end.name}$sync{count}")
        sync.instrs.append(MInstr("BSYNC", (), [Reg("B", r.barrier)], 0))
        if r.spilled:
            sync.instrs.append(MInstr("BMOV", ("32",), [Reg("B", r.barrier), VOp(r.saved)], 0))
        for p in list(dict.fromkeys(r.end.preds)):
            if p is r.start or id(p) in r.body or (id(p) in made_here and _reached_now(p, r, made_here)):
                _redirect(mf, p, r.end, sync)
        made_here.add(id(sync))
        sync.succs.append(r.end)
        r.end.preds.append(sync)
        sync.fallthrough = r.end
        syncs.setdefault(id(r.end), []).append(sync)
        r.sync_block = sync
    if syncs:             # each end's BSYNC blocks just before it (one pass: not a search per block)
        mf.blocks[:] = [x for b in mf.blocks for x in (*syncs.get(id(b), ()), b)]
    # A BSSY last in a preheader goes after the BSYNCs its lanes pass on the way into the
    # loop: a loop that ends a divergent region (one loop right after another, the second's
    # preheader the first's exit) must start with the warp met again. A BSSY run by the
    # lanes apart records each group's mask alone, and its BSYNC lets the groups leave
    # apart: a warp collective after it ran split (fuzz 28000375: IMMA after a divergent
    # loop and an atom.shared.min.u64 CAS loop).
    # The BSSY gets a block of its own there: the BSYNC's lanes resume at the instruction
    # after it, which the BSYNC's region names in its BSSY (step 6).
    made = {id(x) for blocks in syncs.values() for x in blocks}
    for r in ordered:
        if r.in_branch_block:
            continue
        at = _past_syncs(r.start, made - {id(r.sync_block)})
        if at is not r.start:
            sync, header = at, at.fallthrough
            at = MBlock(f"{header.name}$enter{len(mf.blocks)}")
            _redirect(mf, sync, header, at)
            at.succs.append(header)
            header.preds.append(at)
            at.fallthrough = header
            mf.blocks.insert(mf.blocks.index(header), at)
        at.instrs.extend(r.put)
    # 6. Each BSSY names the instruction after its BSYNC.
    for r in ordered:
        r.bssy.operands[1] = Label(r.sync_block.fallthrough.name)
    # 7. Full-mask collectives inside a region, or after a divergent branch that has none
    # (its sides end in EXITs of their own), may run with the warp split: make it meet.
    collectives = {id(mi) for mi in mf.warp_sync if mi.opcode in COLLECTIVES}
    if collectives or mf.nonaligned_barriers:        # (without any, nothing to find inside)
        inside = set().union(*(_body(r) for r in ordered), {id(x) for x in reachable(*unjoined)})
        for b in mf.blocks:
            if id(b) in inside:
                meet_before_collectives(b, collectives)
        # non-aligned barriers there: the warp meets in a routine first (as ptxas)
        if mf.nonaligned_barriers:
            calling = barrier_routine.expand(mf, inside)
            if calling and mf.target.diverged_warp_test == "div":
                barrier_routine.clear_before(mf, [r.bssy for r in ordered if r.body & calling])
    # 8. An out-of-line function keeps its caller's callee-saved barriers.
    if function:
        _save_barriers(mf, sorted({r.barrier for r in ordered if r.barrier >= FIRST_CALLEE_SAVED}))


def _reached_now(sync: MBlock, r: _Region, made: set[int]) -> bool:
    """Is BSYNC block `sync` (one of `made`, each put on the edges into a region's end)
    reached from r's start without passing r's end, as `_body(r)` would find it now? The
    BSYNC blocks only sit on edges, so the blocks reached otherwise are still `r.body`'s:
    `sync` is reached when one of its predecessors is r's start, in `r.body`, or another
    such block reached (walked back instead of walking the whole body again)."""
    seen = {id(sync)}
    work = [sync]
    while work:
        for q in work.pop().preds:
            if q is r.start or id(q) in r.body:
                return True
            if id(q) in made and id(q) not in seen:
                seen.add(id(q))
                work.append(q)
    return False


def _past_syncs(b: MBlock, syncs: set[int]) -> MBlock:
    """The last of the BSYNC blocks (`syncs`) that `b` runs straight into, one after
    another, each entered from the one before only; `b` itself if none."""
    while len(b.succs) == 1 and b.fallthrough is b.succs[0] and id(b.fallthrough) in syncs \
            and all(p is b for p in b.fallthrough.preds):
        b = b.fallthrough
    return b


def _keep_around_calls(mf: MFunction, body: set[int], k: int) -> None:
    """`BMOV.32.CLEAR Rs, Bk` before each CALL of the region's body, `BMOV.32 Bk, Rs` first
    where it returns (a CALL ends its block: the next block is its return address)."""
    for b in mf.blocks:
        at = next((i for i, mi in enumerate(b.instrs) if mi.opcode == "CALL"), None)
        if id(b) not in body or at is None:
            continue
        saved = mf.new_vreg("R")
        b.instrs.insert(at, MInstr("BMOV", ("32", "CLEAR"), [VOp(saved), Reg("B", k)], 1))
        back = b.fallthrough
        first = next((i for i, mi in enumerate(back.instrs) if mi.opcode not in PSEUDOS), len(back.instrs))
        back.instrs.insert(first, MInstr("BMOV", ("32",), [Reg("B", k), VOp(saved)], 0))


def _is_bmov(mi: MInstr, dst, src) -> bool:
    return mi.opcode == "BMOV" and mi.modifiers == ("32",) and len(mi.operands) == 2 \
        and mi.operands[0] == dst and getattr(mi.operands[1], "name", mi.operands[1]) == src


def _keep_around_quads(mf: MFunction, body: set[int], k: int) -> None:
    """A tex.grad quad step of the function's own (isel/texture.py: `BMOV.32 B15, MACTIVE`
    ... `BMOV.32 MACTIVE, B15`, in one block) inside a region holding Bk: the region's mask
    in a register across it (`BMOV.32.CLEAR Rs, Bk` before, `BMOV.32 Bk, Rs` after)."""
    barrier = Reg("B", k)
    for b in mf.blocks:
        if id(b) not in body:
            continue
        out, saved = [], None
        for mi in b.instrs:
            if saved is None and _is_bmov(mi, barrier, "MACTIVE"):
                saved = mf.new_vreg("R")
                out.append(MInstr("BMOV", ("32", "CLEAR"), [VOp(saved), barrier], 1))
            out.append(mi)
            if saved is not None and mi.opcode == "BMOV" and mi.modifiers == ("32",) \
                    and getattr(mi.operands[0], "name", None) == "MACTIVE" and mi.operands[1] == barrier:
                out.append(MInstr("BMOV", ("32",), [barrier, VOp(saved)], 0))
                saved = None
        b.instrs[:] = out


def _save_barriers(mf: MFunction, barriers: list[int]) -> None:
    """`BMOV.32.CLEAR Rs, Bk` on entry (the caller's mask kept in a register, the
    barrier emptied for the function's own regions), `BMOV.32 Bk, Rs` before each RET;
    ptxas's order: the highest barrier saved first and restored last."""
    if not barriers:
        return
    entry = mf.blocks[0]
    at = next((k for k, mi in enumerate(entry.instrs) if mi.opcode not in PSEUDOS), len(entry.instrs))
    saved = {}
    for k in reversed(barriers):
        saved[k] = mf.new_vreg("R")
        entry.instrs.insert(at, MInstr("BMOV", ("32", "CLEAR"), [VOp(saved[k]), Reg("B", k)], 1))
        at += 1
    for b in mf.blocks:
        for i in [i for i, mi in enumerate(b.instrs) if mi.opcode == "RET"][::-1]:
            b.instrs[i:i] = [MInstr("BMOV", ("32",), [Reg("B", k), VOp(saved[k])], 0) for k in barriers]


COLLECTIVES = {"SHFL", "VOTE", "REDUX", "MATCH"}
# instructions the whole warp runs together (tensor cores, the matrix loads and moves): no
# member mask, so nothing of theirs says which lanes must meet
WHOLE_WARP = frozenset({"HMMA", "IMMA", "QMMA", "OMMA", "DMMA", "BMMA", "LDSM", "MOVM"})
FULL_MASK = 0xFFFFFFFF


def meet_before_collectives(b: MBlock, collectives: set[int]) -> None:
    """`WARPSYNC 0xffffffff` before each full-mask collective of the block (one with a
    partial mask already has its WARPSYNC, isel/memory.py), as ptxas's slow path does."""
    out: list[MInstr] = []
    synced = False
    for mi in b.instrs:
        if mi.opcode == "WARPSYNC":
            synced = True
        elif id(mi) in collectives:
            if not synced:
                out.append(MInstr("WARPSYNC", (), [Imm(FULL_MASK)], 0))
            synced = mi.opcode in WHOLE_WARP          # a run of MMAs needs one WARPSYNC
        out.append(mi)
    b.instrs[:] = out
