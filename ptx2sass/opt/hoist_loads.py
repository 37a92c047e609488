"""Read-only loads of a block that runs whenever its dominator runs move up into that
dominator, as ptxas issues them (across branch regions, loops and barriers).

NVVM writes a kernel's later phases as blocks after a region one thread runs (`if (t == 0)
{ serial scan }`) or a loop; a `ld.global.nc` of the phase after it then waits its whole
latency where the region's end reaches it. ptxas 13.5.37 issues such a load in the kernel's
first block, before the region and its barriers (radix_merge binary_search_ranks: `LDG.E.CONSTANT
R2, [R6.64]` of `queries[t]` at 0x90, before `BAR.SYNC` and thread 0's scan; ours waited for it
after the scan).

A block B whose immediate dominator D it post-dominates runs exactly when D runs (each path
from D reaches B, and B is reached only through D); with both in the same loops, as often.
A plain `ld.global.nc` of B (unguarded; `.nc` promises the bytes are not written while the
kernel runs, so no store or barrier orders it) whose address is computed before B, or by
pure arithmetic of B on such values, then reads the same bytes at the end of D, and no lane
loads what it would not have: the load and that arithmetic move there (at most MAX_LOADS
loads a block), and the blocks are visited from the last, so a load climbs as far as this
holds. Not moved past code that may end the thread early (an exit, trap or call between D
and B: a lane leaving there would not have loaded), nor where a path from D comes back to D
before B (a loop around D that B ends: D would load on values B never reads). The schedulers then place the load in D,
above a barrier too (sched.memory_order: a read-only load passes every earlier access but
loads).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.loop_nest import ir_loops
from ptx2sass.opt.dce import is_strong_load

ENABLED = True           # A/B switch
MAX_LOADS = 4            # loads moved out of one block (each holds a register across the region)
# the address arithmetic that may move with a load (pure, cannot trap, no carry)
ARITHMETIC = frozenset({"mov", "cvt", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24", "and",
                        "or", "xor", "not", "shl", "shr", "min", "max", "bfe", "prmt", "selp"})
# instructions that may end a thread (or not return) before the load would have run
LEAVING = frozenset({"ret", "exit", "trap", "trap_exit", "brkpt", "call", "pmevent"})


def _read_only_load(ins: ir.Instr) -> bool:
    return (ins.opcode == "ld" and ins.space == "global" and "nc" in ins.modifiers and ins.guard is None
            and not ins.merge and bool(ins.dests) and not is_strong_load(ins))


def _operands(ins: ir.Instr):
    for v in ins.srcs:
        yield v.base if isinstance(v, ir.Address) else v


def _leaves_between(d: ir.Block, b: ir.Block) -> bool:
    """Whether a block reached from D before B holds an instruction that may end the thread,
    or a path from D comes back to D before B (D would load again, on values B never reads)."""
    seen = {id(b)}
    work = list(d.succs)
    while work:
        x = work.pop()
        if x is d:
            return True
        if id(x) in seen:
            continue
        seen.add(id(x))
        if any(i.opcode in LEAVING for i in x.instrs):
            return True
        work.extend(x.succs)
    return False


def hoist_read_only_loads(fn: ir.Function) -> bool:
    if not ENABLED or not fn.blocks or fn.entry is None \
            or not any(_read_only_load(i) for b in fn.blocks if b is not fn.entry for i in b.instrs):
        return False
    loops = ir_loops(fn)
    idom = loops.idom
    exits = [b for b in fn.blocks if not b.succs and b in idom]
    if not exits:
        return False
    by_id = {id(b): b for b in fn.blocks}
    ipdom = ir.immediate_dominators(exits, lambda x: x.preds, lambda x: x.succs)
    post_dominates = ir.dominance({by_id[k]: v for k, v in ipdom.items() if k in by_id})
    nest: dict[int, frozenset] = {}
    for header, body in loops.by_header.values():
        for bid in body:
            nest[bid] = nest.get(bid, frozenset()) | {id(header)}
    changed = False
    for b in reversed(ir.reverse_postorder(fn)):
        d = idom.get(b)
        if d is None or id(d) not in ipdom or id(b) not in ipdom \
                or nest.get(id(b), frozenset()) != nest.get(id(d), frozenset()):
            continue
        moved = _moved(b)
        if not moved or not post_dominates(b, d) or _leaves_between(d, b):
            continue
        ids = {id(i) for i in moved}
        b.instrs = [i for i in b.instrs if id(i) not in ids]
        at = len(d.instrs) - 1 if d.instrs and d.instrs[-1].opcode in ir.TERMINATORS else len(d.instrs)
        d.instrs[at:at] = moved
        changed = True
    return changed


def _moved(b: ir.Block) -> list[ir.Instr]:
    """B's read-only loads that may move (with the arithmetic of B computing their
    addresses), in B's order; empty if none."""
    here = {d.id for p in b.phis for d in (p.dest,)}
    defined: dict[int, ir.Instr] = {}
    for ins in b.instrs:
        for d in ins.dests:
            defined[d.id] = ins
    take: dict[int, ir.Instr] = {}
    loads = 0

    def chain(ins: ir.Instr, acc: dict) -> bool:
        for v in _operands(ins):
            if not isinstance(v, ir.Value) or v.id not in defined and v.id not in here:
                continue
            if v.id in here:
                return False
            src = defined[v.id]
            if id(src) in acc or id(src) in take:
                continue
            if (src.opcode not in ARITHMETIC or src.guard is not None or src.merge
                    or "cc" in src.modifiers or len(src.dests) != 1 or src.dests[0].type == "pred"):
                return False
            acc[id(src)] = src
            if not chain(src, acc):
                return False
        return True

    for ins in b.instrs:
        if loads >= MAX_LOADS:
            break
        if not _read_only_load(ins):
            continue
        acc: dict = {}
        if chain(ins, acc):
            take.update(acc)
            take[id(ins)] = ins
            loads += 1
    return [i for i in b.instrs if id(i) in take]
