"""Arithmetic whose result only the fall-through successor reads moves into it, as ptxas
does: in `x += shfl(x, 1); if (lane != 0) return; out[w] = x;` the last add goes past the
`@P0 EXIT`, so the exit issues without waiting for the shuffle and the lanes that leave
skip the add. Run on the machine IR after selection, before scheduling.

A block B that ends in a guarded EXIT and whose fall-through successor S has B as its only
predecessor (elsewhere, moving work into a successor only lengthens its sources' live
ranges: triton `dropout` took 1.10x the SM cycles so); an unguarded pure
instruction of B (sched.list_schedule.PURE) writing one whole register that is written
nowhere else and read only in S; nothing after it in B writing what it reads, and no fixed uniform register among its sources
(this pass tracks virtual registers only; and a uniform register written between
`WARPSYNC.EXCLUSIVE m` and the WARPSYNC that joins the groups holds the last group's value
once they join, so its reader must stay inside: a run-time-mask `redux.sync`). Taken from
the end of B backwards, so a chain that feeds only S moves whole; it goes first in S after
S's leading convergence instructions (BSYNC), in its order."""
from __future__ import annotations

from ptx2sass.encoder.model import Reg
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands
from ptx2sass.sched.list_schedule import PURE

LEADING = frozenset({"BSYNC", "WARPSYNC"})
UNIFORM_FILES = frozenset({"UR", "UP"})


def _single_result(ins: MInstr) -> VOp | None:
    if ins.opcode not in PURE or ins.guard is not None or ins.widths or ins.clobbers:
        return None
    if any(type(op) is Reg and op.file in UNIFORM_FILES and op.index not in (7, 255)   # UPT, URZ
           for op in ins.operands[ins.ndefs:]):
        return None
    defs = [op for _, op, is_def in register_operands(ins) if is_def]
    if len(defs) != 1 or defs[0].part is not None:
        return None
    # every result operand of the instruction must be that register (no PT/RZ carry-outs)
    return defs[0] if ins.ndefs == 1 else None


def _exits_early(b) -> bool:
    """The block ends in a guarded EXIT: the lanes that leave skip what moves past it."""
    return bool(b.instrs) and b.instrs[-1].opcode == "EXIT" and b.instrs[-1].guard is not None


def sink_to_successor(mf: MFunction) -> int:
    writes: dict[int, int] = {}
    reads: dict[tuple[int, str], int] = {}         # (register, block) -> readers there
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                if is_def:
                    writes[op.reg.id] = writes.get(op.reg.id, 0) + 1
                else:
                    reads[op.reg.id, b.name] = reads.get((op.reg.id, b.name), 0) + 1
    readers_in: dict[int, int] = {}
    for (r, _), n in reads.items():
        readers_in[r] = readers_in.get(r, 0) + n
    moved = 0
    for b in mf.blocks:
        s = b.fallthrough
        if s is None or s is b or [p.name for p in s.preds] != [b.name] or not _exits_early(b):
            continue
        sunk: list[MInstr] = []
        written_after: set[int] = set()
        for ins in reversed(b.instrs):
            d = _single_result(ins)
            srcs = [op.reg.id for _, op, is_def in register_operands(ins) if not is_def]
            if (d is not None and writes.get(d.reg.id) == 1 and d.reg.id not in mf.precolored
                    and reads.get((d.reg.id, s.name), 0) > 0
                    and reads.get((d.reg.id, s.name), 0) == readers_in.get(d.reg.id, 0)
                    and not (set(srcs) & written_after)):
                sunk.append(ins)
                for r in srcs:          # its reads move with it
                    reads[r, b.name] -= 1
                    reads[r, s.name] = reads.get((r, s.name), 0) + 1
                continue
            for _, op, is_def in register_operands(ins):
                if is_def:
                    written_after.add(op.reg.id)
        if not sunk:
            continue
        ids = {id(x) for x in sunk}
        b.instrs = [x for x in b.instrs if id(x) not in ids]
        at = 0
        while at < len(s.instrs) and s.instrs[at].opcode in LEADING:
            at += 1
        s.instrs[at:at] = list(reversed(sunk))
        moved += len(sunk)
    return moved
