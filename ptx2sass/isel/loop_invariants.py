"""Where a loop-invariant computation a selection needs can go: the preheader of the
outermost loop around the instruction that its inputs do not depend on.

A 32-bit division's reciprocal estimate (I2F.RP, MUFU.RCP, F2I and a Newton step: ~40
cycles of dependent latency) depends on the divisor only. In `for (...) x = (i + k) % n`
ptxas computes it once before the loop; selected where the `rem` is, it ran on every
iteration. The natural loops come from the IR's dominators (a back edge's target dominates
its source); a loop's preheader is the one predecessor of its header from outside it (a
loop entered from two places has none, and nothing is hoisted out of it).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.loop_nest import ir_loops


class LoopNest:
    def __init__(self, fn: ir.Function):
        self.def_block: dict[int, ir.Block] = {}
        for b in fn.blocks:
            for phi in b.phis:
                self.def_block[phi.dest.id] = b
            for ins in b.instrs:
                for d in ins.dests:
                    self.def_block[d.id] = b
        # innermost first for every block: loops by size
        self.loops_of: dict[int, list[tuple[ir.Block, set[int]]]] = {}
        for h, body in ir_loops(fn).innermost_first():
            outside = [p for p in h.preds if id(p) not in body]
            if len(outside) != 1:
                continue
            for bid in body:
                self.loops_of.setdefault(bid, []).append((outside[0], body))

    def preheader_for(self, block: ir.Block, inputs) -> ir.Block | None:
        """The preheader of the outermost loop around `block` that defines none of `inputs`
        (values or constants), or None when `block` is in no such loop."""
        best = None
        for preheader, body in self.loops_of.get(id(block), []):
            if any(isinstance(v, ir.Value) and id(self.def_block.get(v.id, preheader)) in body
                   for v in inputs):
                break
            if any(not isinstance(v, (ir.Value, ir.Const)) for v in inputs):
                break
            best = preheader
        return best
