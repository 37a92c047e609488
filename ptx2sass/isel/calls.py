"""Control instructions that are not branches: `nanosleep`, `trap` (and, as they grow,
calls and returns).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
What ptxas emits for sm_8x (seen with the pinned ptxas + nvdisasm):
* `nanosleep.u32 t` → `NANOSLEEP t` (register, immediate or constant-bank operand; only
  the immediate form is encoded here yet);
* `trap` → `BPT.TRAP 0x1`; a guarded `@p trap` is branched around by ptxas, here it is
  the guarded instruction itself (same effect: only the lanes with `p` trap).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm

TRAP_CODE = 0x1      # the immediate ptxas gives BPT.TRAP for PTX `trap`


class CallSelection:
    def sel_nanosleep(self, ins):
        t = ins.srcs[0]
        if not isinstance(t, ir.Const):     # the encoder knows only the immediate form so far
            raise self.unsupported("`nanosleep` with a register operand")
        self.emit("NANOSLEEP", (), [self.imm32(t.value)], ndefs=0)

    def sel_trap(self, ins):
        self.emit("BPT", ("TRAP",), [Imm(TRAP_CODE)], ndefs=0)
