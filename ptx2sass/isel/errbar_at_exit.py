"""-g and --make-errors-visible-at-exit: every EXIT waits for the kernel's outstanding
memory errors first.

ptxas -g writes `MEMBAR.SC.VC; ERRBAR` before each EXIT, then CGAERRBAR where the target
has clusters (sm_90 on), and marks each function with EIATTR_GEN_ERRBAR_AT_EXIT; our
reading: a fault of the kernel's last memory accesses is then reported at the
instruction, while a debugger can still see the kernel. A guarded EXIT gets a guarded
sequence: the other threads go on without waiting. --make-errors-visible-at-exit (ptxas
13.5.37, measured on sm_75/89/90/100/120) writes the same without the MEMBAR, but with it
under -c, and the same record.
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, MInstr

ERRBAR_AT_EXIT = "errbar_at_exit"      # ir.Function attribute: "membar" or "errbar" (the option's)


def errbar_at_exit(mf: MFunction, cluster: bool, membar: bool = True) -> None:
    """Before each EXIT: `MEMBAR.SC.VC` (where `membar`), ERRBAR, CGAERRBAR (where `cluster`)."""
    for b in mf.blocks:
        out: list[MInstr] = []
        for mi in b.instrs:
            if mi.opcode == "EXIT":
                if membar:
                    out.append(MInstr("MEMBAR", ("SC", "VC"), [], 0, mi.guard, mi.line))
                out.append(MInstr("ERRBAR", (), [], 0, mi.guard, mi.line))
                if cluster:
                    out.append(MInstr("CGAERRBAR", (), [], 0, mi.guard, mi.line))
            out.append(mi)
        b.instrs = out
