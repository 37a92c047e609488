"""Control instructions that are not branches: `trap` (and, as they grow, calls and
returns; `nanosleep` is selected in isel/memory.py).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
What ptxas emits for sm_8x (seen with the pinned ptxas + nvdisasm):
* `trap` → `BPT.TRAP 0x1`; a guarded `@p trap` is branched around by ptxas, here it is
  the guarded instruction itself (same effect: only the lanes with `p` trap).
"""
from __future__ import annotations

from ptx2sass.encoder.model import Imm

TRAP_CODE = 0x1      # the immediate ptxas gives BPT.TRAP for PTX `trap`


class CallSelection:
    def sel_trap(self, ins):
        self.emit("BPT", ("TRAP",), [Imm(TRAP_CODE)], ndefs=0)
