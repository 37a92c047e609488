"""-g: every EXIT waits for the kernel's outstanding memory errors first.

ptxas -g writes `MEMBAR.SC.VC; ERRBAR` before each EXIT (and marks each function with
EIATTR_GEN_ERRBAR_AT_EXIT; our reading: a fault of the kernel's last memory accesses is
then reported at the instruction, while a debugger can still see the kernel). A guarded
EXIT gets a guarded pair: the other threads go on without waiting.
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, MInstr


def errbar_at_exit(mf: MFunction) -> None:
    for b in mf.blocks:
        out: list[MInstr] = []
        for mi in b.instrs:
            if mi.opcode == "EXIT":
                out += [MInstr("MEMBAR", ("SC", "VC"), [], 0, mi.guard, mi.line),
                        MInstr("ERRBAR", (), [], 0, mi.guard, mi.line)]
            out.append(mi)
        b.instrs = out
