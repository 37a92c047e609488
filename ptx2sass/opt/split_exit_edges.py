"""The fall-through edge of a conditional branch into a block with phis gets a block of its
own, so the phi copies for that edge run on that edge only.

Instruction selection puts the copies into a phi's input registers at the end of the
predecessor. When the predecessor is a loop's latch (`@p bra LOOP` falling through to the
exit) and the exit merges the loop's result with the value of a path that skipped the loop,
those copies ran on every iteration, and waited for the value they copy (a DADD: 8+ cycles
per iteration). ptxas's loops have no such copies. The new block sits between the two, so
it costs no branch; taken edges (a back edge's copies are needed on every iteration anyway)
are left alone."""
from __future__ import annotations

from ptx2sass import ir


def split_exit_edges(fn: ir.Function) -> bool:
    changed = False
    k = 0
    while k < len(fn.blocks) - 1:
        b, nxt = fn.blocks[k], fn.blocks[k + 1]
        last = b.instrs[-1] if b.instrs else None
        if (len(b.succs) == 2 and b.succs[1] is nxt and nxt is not b and nxt.phis and len(nxt.preds) > 1
                and last is not None and last.opcode == "bra" and last.guard is not None):
            edge = ir.Block(f"{b.name}$exit{k}")
            edge.preds, edge.succs = [b], [nxt]
            b.succs[1] = edge
            nxt.preds = [edge if p is b else p for p in nxt.preds]
            for phi in nxt.phis:
                phi.incoming = [(edge if p is b else p, v) for p, v in phi.incoming]
            fn.blocks.insert(k + 1, edge)
            changed = True
            k += 1
        k += 1
    return changed
