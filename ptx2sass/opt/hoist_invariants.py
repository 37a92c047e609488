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
Loads move only from blocks that every iteration runs before the loop can leave (they
dominate every exiting block, and nothing in the loop exits the thread), so no load runs that
the loop would not have run; from the constant bank (nothing in a kernel writes it) always,
from other spaces where nothing in the loop writes memory or synchronises (every instruction
in it pure or a branch: the loaded value is the same on every iteration, unless another thread
races with it unsynchronised, which the memory model leaves undefined). Loops need a preheader: the header's one
predecessor outside the loop, with the header as its only successor."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dce import PURE, is_pure

# special registers whose value does not change during a thread's life
INVARIANT_SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%lanemask", "%nsmid", "%gridid",
                      "%cluster", "%is_explicit_cluster", "%nclusterid", "%clusterid", "%aggr_smem_size",
                      "%dynamic_smem_size", "%total_smem_size")
# pure opcodes left in place: texture/surface reads (a surface may be written in the loop)
# and the stack pointer
NOT_MOVED = frozenset({"tex", "tld4", "txq", "suq", "suld", "istypep", "stacksave"})


def _loops(fn: ir.Function, idom) -> list[tuple[ir.Block, set[int]]]:
    """(header, block ids) of the natural loops, innermost first (fewest blocks)."""
    rpo = {id(b): k for k, b in enumerate(ir.reverse_postorder(fn))}
    by_header: dict[int, tuple[ir.Block, set[int]]] = {}
    for b in fn.blocks:
        if b not in idom:
            continue
        for s in b.succs:
            if rpo[id(s)] <= rpo[id(b)] and ir.dominates(idom, s, b):
                _, body = by_header.setdefault(id(s), (s, {id(s)}))
                ir.reach_backwards([b], lambda p: p in idom, body)
    return sorted(by_header.values(), key=lambda hb: len(hb[1]))


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


def _movable(ins: ir.Instr, inside: set[int], dominates_exits: bool, read_only: bool) -> bool:
    if ins.guard is not None or ins.merge or not is_pure(ins) or ins.opcode in NOT_MOVED:
        return False
    if ins.opcode in ("ld", "ldu"):
        if not dominates_exits or not (ins.space == "const" or read_only):
            return False
    elif ins.opcode not in PURE:
        return False
    return all(_invariant_operand(s, inside) for s in ins.srcs)


def hoist_loop_invariants(fn: ir.Function) -> bool:
    idom = ir.dominators(fn)
    changed = False
    for h, body in _loops(fn, idom):
        pre = _preheader(h, body)
        if pre is None:
            continue
        blocks = [b for b in ir.reverse_postorder(fn) if id(b) in body]
        exiting = [b for b in blocks if any(id(s) not in body for s in b.succs)]
        instrs = [i for b in blocks for i in b.instrs]
        if any(i.opcode in ("exit", "ret", "trap_exit") for i in instrs):
            exiting = []                         # a thread may leave anywhere: no loads move
        read_only = all(i.opcode == "bra" or is_pure(i) for i in instrs)
        # values defined inside the loop (phis and instructions); shrinks as operations move
        inside = {p.dest.id for b in blocks for p in b.phis}
        inside |= {d.id for b in blocks for i in b.instrs for d in i.dests}
        moved: list[ir.Instr] = []
        for b in blocks:                         # reverse postorder: definitions before uses
            dominates_exits = bool(exiting) and all(ir.dominates(idom, b, e) for e in exiting)
            keep = []
            for ins in b.instrs:
                if _movable(ins, inside, dominates_exits, read_only):
                    moved.append(ins)
                    inside.difference_update(d.id for d in ins.dests)
                else:
                    keep.append(ins)
            b.instrs = keep
        if not moved:
            continue
        last = pre.instrs[-1] if pre.instrs else None
        at = len(pre.instrs) - 1 if last is not None and last.opcode == "bra" else len(pre.instrs)
        pre.instrs[at:at] = moved
        changed = True
        idom = ir.dominators(fn)
    return changed
