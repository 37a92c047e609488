"""YIELD in the PTX's loops where ptxas writes one: loops that may wait on other threads.

With independent thread scheduling, the lanes of a warp that took different ways run one
path at a time; YIELD lets the warp switch to another path, so a lane spinning on a lock
or a flag that a lane of its own warp must still set does not keep that lane from running.
ptxas 13.5 (read off its code for spin locks, flag handoffs, atomic histograms, CAS loops,
and loops of plain, volatile, relaxed and acquire accesses with and without divergence, on
sm_75 to sm_120):
* a loop with an `atom` or a strong memory access (`.volatile`, `.relaxed`, `.acquire`,
  `.release`; a load or a store, global or shared) gets one when it may run while other
  lanes of its warp are elsewhere: its header lies in the divergent region of a branch
  (between the branch and where its paths meet). In a kernel, lanes that branch off to a
  bare `ret` have left and do not count (`if (tid == 0) return;` before a polling loop:
  none), lanes that still have work to do on their way out do; in a function a `ret` goes
  back to the caller, and the lanes there count. Here a load from a uniform global or
  shared address is uniform (a flag polled by the whole warp: none);
* a loop's own divergent exit counts on sm_75-89; on sm_90 and later
  (`Target.loop_yield_own_exit == "waits"`) only for a loop with a strong store or whose
  exit depends on what its atomics and strong loads read (it may wait for another thread),
  and an enclosing loop's divergent exit is no divergent region there either;
* a loop that waits on an mbarrier (`mbarrier.test_wait`, `mbarrier.try_wait`: the phase
  another thread completes) counts as one with a strong load, whatever the wait's `.sem`
  (a `.relaxed` test_wait on sm_90 gets one too);
* loops of `red`, of plain loads and stores, or with only a fence get none, and neither do
  the compare-and-swap loops ptxas makes itself for atomics the hardware lacks (16-bit CAS,
  shared f64 add): hence loops of the IR, not of the machine code.

A YIELD also undoes what a BSYNC promises: lanes waiting there may go on without the others
(the H200, GPU run 12), so every full-mask collective a YIELD may precede gets a WARPSYNC.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.divergence import divergent_values
from ptx2sass.mir import PSEUDOS, MFunction, MInstr
from ptx2sass.reconverge import COLLECTIVES, WHOLE_WARP, meet_before_collectives, reachable

ATOMICS = ("atom",)          # a loop of `red` gets none (ptxas 13.5)
# CTA barriers a YIELD may precede: ptxas 13.5 puts `WARPSYNC 0xffffffff` (WARPSYNC.ALL on
# sm_90+) before BAR.SYNC, BAR.ARV and BAR.RED after a yielding loop on sm_80-90. Without it
# the H200 ran our histogram kernel's BAR.SYNC with the warp still split (GPU runs 25-26:
# CUDA_ERROR_ILLEGAL_INSTRUCTION once, every bin counted twice the next time)
CTA_BARRIERS = frozenset({"BAR"})
_WHOLE_WARP_AFTER_YIELD = WHOLE_WARP | CTA_BARRIERS
STRONG = ("volatile", "relaxed", "acquire", "release")
STRONG_ACCESSES = ("ld", "st")
MBARRIER_WAITS = ("test_wait", "try_wait")


def _atomic(ins: ir.Instr) -> bool:
    return ins.opcode in ATOMICS


def _strong(ins: ir.Instr) -> bool:
    return (ins.opcode in STRONG_ACCESSES and any(m in STRONG for m in ins.modifiers)) or _waits(ins)


def _waits(ins: ir.Instr) -> bool:
    """An mbarrier wait: reads the phase other threads' arrivals complete (a strong load)."""
    return ins.opcode == "mbarrier" and bool(ins.modifiers) and ins.modifiers[0] in MBARRIER_WAITS


def insert_loop_yields(mf: MFunction, fn: ir.Function) -> int:
    """Put a YIELD first in the machine block of each such loop's header; returns how many."""
    instrs = [ins for b in fn.blocks for ins in b.instrs]
    if not any(_atomic(ins) or _strong(ins) for ins in instrs):
        return 0
    idom = ir.dominators(fn)
    bodies: dict[int, set[int]] = {}
    headers: dict[int, ir.Block] = {}
    for b in fn.blocks:
        for s in b.succs:
            if b in idom and s in idom and ir.dominates(idom, s, b):        # a back edge
                headers[id(s)] = s
                ir.reach_backwards([b], lambda p: p in idom, bodies.setdefault(id(s), {id(s)}))
    by_id = {id(b): b for b in fn.blocks}
    own_exit_waits = mf.target.loop_yield_own_exit == "waits"
    # "waits": an enclosing loop's divergent exit does not count as a divergent region either
    loop_exits = {k for body in bodies.values() for k in body if any(id(s) not in body for s in by_id[k].succs)}
    chosen = []
    regions = None
    for h, body in bodies.items():
        ops = [ins for k in body for ins in by_id[k].instrs]
        if not any(_atomic(ins) or _strong(ins) for ins in ops):
            continue
        if regions is None:
            regions = _divergent_regions(fn, idom)
        outer = [(at, region) for at, region in regions.items() if at not in body and h in region]
        if any(not (own_exit_waits and (at in loop_exits or _guards(region, body, by_id)))
               for at, region in outer):
            chosen.append(h)          # inside another branch's divergent region
            continue
        leaving = [at for at in body if len(by_id[at].succs) > 1 and any(id(s) not in body for s in by_id[at].succs)]
        exits = [at for at in leaving if at in regions]
        if not exits and any(at not in loop_exits for at, _ in outer):
            exits = leaving           # a divergent test before the loop is its own exit (sm_90+)
        if not exits:
            continue
        if not own_exit_waits or any(_strong(ins) and ins.opcode == "st" for ins in ops):
            chosen.append(h)
            continue
        read = _results_of_accesses(fn, ops)
        if any(_selector(by_id[at]).id in read for at in exits):
            chosen.append(h)
    machine = {mb.name: mb for mb in mf.blocks}
    count = 0
    yielded = []
    for h in chosen:
        mb = machine.get(headers[h].name)
        if mb is None:
            continue
        at = next((k for k, mi in enumerate(mb.instrs)
                   if mi.opcode not in PSEUDOS and mi.opcode != "BSYNC"), len(mb.instrs))
        mb.instrs.insert(at, MInstr("YIELD", (), [], 0))
        yielded.append(mb)
        count += 1
    _meet_after_yields(mf, yielded)
    return count


def _meet_after_yields(mf: MFunction, yielded: list) -> None:
    """A YIELD lets lanes waiting at a BSYNC go on before the others arrive (the H200 ran
    our full-mask `match.any.sync` after such a loop with the warp still split in two, GPU
    run 12), so a BSYNC no longer makes the warp whole: ptxas guards each full-mask
    collective that may follow a YIELD (BRA.DIV to a `WARPSYNC 0xffffffff` path); ours gets
    that WARPSYNC in front; CTA barriers too (ptxas: a WARPSYNC before each). The whole-warp
    tensor-core instructions too (ptxas: `WARPSYNC 0xffffffff` before the MOVM/HMMA of a
    wmma.mma after such a loop; fuzz campaign 9 seed 20008960, our HMMA run by part of the
    warp under explicit reconvergence)."""
    if not yielded:
        return
    after = reachable(*yielded)
    collectives = {id(mi) for mi in mf.warp_sync if mi.opcode in COLLECTIVES}
    collectives |= {id(mi) for b in after for mi in b.instrs if mi.opcode in _WHOLE_WARP_AFTER_YIELD}
    if collectives:
        for b in after:
            meet_before_collectives(b, collectives)


def _guards(region: set[int], body: set[int], by_id) -> bool:
    """Whether a divergent branch only decides whether the loop runs at all (the test before
    a rotated loop, `if (i < n) do ... while (i < n)`): everything its region holds outside
    the loop leads into the loop. That divergence is the loop's own exit taken before the
    first trip, and on sm_90+ ptxas counts it as such (no YIELD in CUDA's grid-stride
    histogram loop there; one on sm_75-89)."""
    outside = region - body
    return all(by_id[k].succs and all(id(s) in body or id(s) in outside for s in by_id[k].succs)
               for k in outside)


def _selector(b: ir.Block):
    term = b.instrs[-1]
    return term.guard if term.opcode == "bra" else term.srcs[0]


def _results_of_accesses(fn: ir.Function, ops: list[ir.Instr]) -> set[int]:
    """Ids of the values computed from what the loop's atomics and strong loads read."""
    found = {d.id for ins in ops if _atomic(ins) or (_strong(ins) and ins.opcode != "st") for d in ins.dests}
    changed = True
    while changed:
        changed = False
        for b in fn.blocks:
            for phi in b.phis:
                if phi.dest.id not in found and any(isinstance(v, ir.Value) and v.id in found
                                                    for _, v in phi.incoming):
                    found.add(phi.dest.id)
                    changed = True
            for ins in b.instrs:
                used = [*ins.srcs, ins.guard, *ins.merge]
                if any(isinstance(v, ir.Value) and v.id in found for v in used) \
                        and any(d.id not in found for d in ins.dests):
                    found.update(d.id for d in ins.dests)
                    changed = True
    return found


def _divergent_regions(fn: ir.Function, idom) -> dict[int, set[int]]:
    """Per divergent branch (its block's id), the ids of the blocks that may run while other
    live lanes of the warp are elsewhere: those reached from it before its paths meet (its
    immediate post-dominator, counting no path that goes straight to a bare return: lanes
    there have left)."""
    blocks = [b for b in fn.blocks if b in idom]
    div = divergent_values(fn, loads_by_address=True)
    gone = _bare_exits(blocks, ("ret", "exit") if fn.is_entry else ("exit",))   # a function's ret: back to the caller
    succs = {id(b): [s for s in b.succs if s in idom and id(s) not in gone] for b in blocks}
    pdom = _post_dominators(blocks, succs)
    position = {id(b): k for k, b in enumerate(blocks)}
    regions: dict[int, set[int]] = {}
    for b in blocks:
        term = b.instrs[-1] if b.instrs and b.instrs[-1].is_terminator else None
        if term is None or len(b.succs) < 2:
            continue
        sel = term.guard if term.opcode == "bra" else (term.srcs[0] if term.opcode == "brx" else None)
        if not (isinstance(sel, ir.Value) and sel.id in div):
            continue
        meet = _nearest(pdom, id(b), position)
        work = [s for s in succs[id(b)] if id(s) != meet]
        seen: set[int] = set()
        while work:
            n = work.pop()
            if id(n) in seen or id(n) == meet:
                continue
            seen.add(id(n))
            work.extend(succs[id(n)])
        regions[id(b)] = seen
    return regions


def _bare_exits(blocks, leaving) -> set[int]:
    """Blocks that do nothing but end the thread (an instruction of `leaving`, or branches to
    such blocks)."""
    gone: set[int] = set()
    changed = True
    while changed:
        changed = False
        for b in blocks:
            if id(b) in gone or b.phis:
                continue
            if all(ins.opcode in leaving or (ins.opcode == "bra" and ins.guard is None)
                   for ins in b.instrs) and all(id(s) in gone for s in b.succs) \
                    and (b.succs or (b.instrs and b.instrs[-1].opcode in leaving)):
                gone.add(id(b))
                changed = True
    return gone


def _post_dominators(blocks, succs) -> dict[int, set[int]]:
    """Per block id, the ids of the blocks on every path from it to a return (itself
    included); a block with no successor left is a return."""
    every = {id(b) for b in blocks}
    pdom = {id(b): ({id(b)} if not succs[id(b)] else set(every)) for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            ss = succs[id(b)]
            if not ss:
                continue
            new = set.intersection(*(pdom[id(s)] for s in ss)) | {id(b)}
            if new != pdom[id(b)]:
                pdom[id(b)] = new
                changed = True
    return pdom


def _nearest(pdom: dict[int, set[int]], b: int, position: dict[int, int]) -> int | None:
    """The immediate post-dominator of block `b` (None: its paths meet only at the end).
    Blocks from which no path returns (a loop with no way out) keep every block as their
    post-dominators, so several may tie: the first in block order is taken (the set's own
    order, by address, made `-g` cubins of cub_device.sm_86 differ between processes)."""
    strict = pdom[b] - {b}
    return max(strict, key=lambda k: (len(pdom[k]), -position[k]), default=None)
