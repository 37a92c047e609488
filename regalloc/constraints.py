"""Physical-register constraints on the colouring: registers clobbered across calls.

A call destroys registers that no operand names (`MInstr.clobbers`, the caller-saved
predicates of `ptx2sass.abi`). Every virtual register live across such an instruction (live
after it and not written by it) must avoid them; the colourer treats them as taken, so a
predicate live across a call is left uncoloured and spilled (kept in an R register).
Precoloured registers (`MFunction.precolored`) need nothing here: the colourer seeds them.
"""
from __future__ import annotations

from ptx2sass.mir import MFunction, register_operands
from ptx2sass.regalloc.liveness import fresh_writes, liveness, use_def


def forbidden_registers(mf: MFunction) -> dict[int, set[int]]:
    """vreg id -> physical indices (of its class) it may not take; empty when the function
    makes no calls."""
    if not any(ins.clobbers for b in mf.blocks for ins in b.instrs):
        return {}
    out: dict[int, set[int]] = {}
    fresh = fresh_writes(mf)
    live_out = liveness(mf, fresh)
    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins, fresh)
            if ins.clobbers:
                defs = {op.reg.id for _, op, d in register_operands(ins) if d}
                for vid in sorted(live - defs):
                    cls = mf.vregs[vid].cls
                    out.setdefault(vid, set()).update(k for c, k in ins.clobbers if c == cls)
            for k in kills:
                live.discard(k)
            live.update(uses)
    return out
