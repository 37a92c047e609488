"""The markers inlined calls leave (ptx2sass/inline.py) go, and the function remembers
whether one was still reachable: ptxas writes a kernel's CRS_STACK_SIZE (0) when its code
keeps a call it then inlines, not when the call was unreachable or under a branch that is
never taken. Taken after the first round of folding, before any pass that moves code."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.inline import INLINED_CALL

KEPT = "inlined_calls"      # fn.attributes' key: a reachable inlined call survived


def take_inline_marks(fn: ir.Function) -> None:
    for block in fn.blocks:
        kept = [ins for ins in block.instrs if ins.opcode != INLINED_CALL]
        if len(kept) != len(block.instrs):
            fn.attributes[KEPT] = True
            block.instrs[:] = kept
