"""Arithmetic whose results no instruction reads goes, down to single words of wide registers.

The IR's dead-code elimination works on whole PTX values; a 64-bit value whose high word
nobody reads still gets that word written. nvcc's 64-bit shuffles and joins
(`cvt.u64.u32 %rd, %r` then `bfi.b64 ... 32, 32`, `shr.u64 %rd, %x, 32` then
`cvt.u32.u64`) leave a `MOV R, RZ` per high word that the selection of the reader never
looks at; ptxas writes none. A part is read by an operand naming it or the whole register
(an operand's `widths` entry extends it over the following parts). Only unguarded pure
arithmetic and copies go, and with them everything only they read (`remove_dead_parts`).
"""
from __future__ import annotations

from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, VOp, register_operands
from ptx2sass.sched.list_schedule import PURE

REMOVABLE = (PURE - {"CS2R"}) | {COPY}


def _removable(ins) -> bool:
    return not (ins.opcode not in REMOVABLE or ins.guard is not None or ins.clobbers
                or ins.shown is not None or ins.warp_combine is not None or ins.ndefs == 0)


class _Live:
    """The register parts some kept instruction reads (a whole register: every part)."""

    def __init__(self):
        self.whole: set[int] = set()
        self.parts: set[tuple[int, int]] = set()
        self.part_regs: set[int] = set()
        self.newly: list[int] = []            # registers with a part that just became live

    def mark_reads(self, ins) -> None:
        for i, op, is_def in register_operands(ins):
            if is_def:
                continue
            r = op.reg.id
            if op.part is None:
                if r not in self.whole:
                    self.whole.add(r)
                    self.newly.append(r)
                continue
            for k in range(ins.widths.get(i, 1)):
                if (r, op.part + k) not in self.parts:
                    self.parts.add((r, op.part + k))
                    self.part_regs.add(r)
                    self.newly.append(r)

    def defines_live(self, ins) -> bool:
        for i, op, is_def in register_operands(ins):
            if not is_def:
                continue
            r = op.reg.id
            if r in self.whole:
                return True
            if op.part is None:
                if r in self.part_regs:
                    return True
            elif any((r, op.part + k) in self.parts for k in range(ins.widths.get(i, 1))):
                return True
        return False


def remove_dead_parts(mf: MFunction) -> int:
    """Mark and sweep: what the kept instructions read is live, starting from those that
    cannot go; a removable instruction is kept once it writes a live part. A value read only
    by its own update (`LOP3 R, R, ...` accumulating a word in place) or by other dead
    instructions goes with them."""
    live = _Live()
    candidates: list = []
    defining: dict[int, list[int]] = {}       # register id -> candidates writing it
    for b in mf.blocks:
        for ins in b.instrs:
            if not _removable(ins):
                live.mark_reads(ins)
                continue
            n = len(candidates)
            candidates.append(ins)
            for _, op, is_def in register_operands(ins):
                if is_def:
                    defining.setdefault(op.reg.id, []).append(n)
    kept = [False] * len(candidates)
    while live.newly:
        for n in defining.get(live.newly.pop(), ()):
            if not kept[n] and live.defines_live(candidates[n]):
                kept[n] = True
                live.mark_reads(candidates[n])
    dead = {id(ins) for n, ins in enumerate(candidates) if not kept[n]}
    removed = len(dead)
    for b in mf.blocks:
        if dead:
            b.instrs = [ins for ins in b.instrs if id(ins) not in dead]
    # a wide register nobody reads and nothing writes any more needs no start
    read_regs = live.whole | live.part_regs
    written = {op.reg.id for b in mf.blocks for ins in b.instrs if ins.opcode != IMPLICIT_DEF
               for _, op, is_def in register_operands(ins) if is_def}
    for b in mf.blocks:
        keep = [ins for ins in b.instrs if not (
            ins.opcode == IMPLICIT_DEF and isinstance(ins.operands[0], VOp)
            and ins.operands[0].reg.id not in read_regs and ins.operands[0].reg.id not in written)]
        removed += len(b.instrs) - len(keep)
        b.instrs = keep
    return removed
