"""Arithmetic whose results no instruction reads goes, down to single words of wide registers.

The IR's dead-code elimination works on whole PTX values; a 64-bit value whose high word
nobody reads still gets that word written. nvcc's 64-bit shuffles and joins
(`cvt.u64.u32 %rd, %r` then `bfi.b64 ... 32, 32`, `shr.u64 %rd, %x, 32` then
`cvt.u32.u64`) leave a `MOV R, RZ` per high word that the selection of the reader never
looks at; ptxas writes none. A part is read by an operand naming it or the whole register
(an operand's `widths` entry extends it over the following parts). Only unguarded pure
arithmetic and copies go; repeated, since a removed instruction's operands may be the last
readers of others.
"""
from __future__ import annotations

from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, VOp, register_operands
from ptx2sass.sched.list_schedule import PURE

REMOVABLE = (PURE - {"CS2R"}) | {COPY}


def _reads(mf: MFunction) -> tuple[set[int], set[tuple[int, int]]]:
    whole: set[int] = set()
    parts: set[tuple[int, int]] = set()
    for b in mf.blocks:
        for ins in b.instrs:
            for i, op, is_def in register_operands(ins):
                if is_def:
                    continue
                if op.part is None:
                    whole.add(op.reg.id)
                else:
                    for k in range(ins.widths.get(i, 1)):
                        parts.add((op.reg.id, op.part + k))
    return whole, parts


def _dead(ins, whole, parts, part_regs) -> bool:
    if (ins.opcode not in REMOVABLE or ins.guard is not None or ins.clobbers or ins.shown is not None
            or ins.warp_combine is not None or ins.ndefs == 0):
        return False
    for i, op, is_def in register_operands(ins):
        if not is_def:
            continue
        r = op.reg.id
        if r in whole:
            return False
        if op.part is None:
            if r in part_regs:
                return False
        elif any((r, op.part + k) in parts for k in range(ins.widths.get(i, 1))):
            return False
    return True


def remove_dead_parts(mf: MFunction) -> int:
    removed = 0
    while True:
        whole, parts = _reads(mf)
        part_regs = {r for r, _ in parts}
        read_regs = whole | part_regs
        n = 0
        for b in mf.blocks:
            keep = []
            for ins in b.instrs:
                if _dead(ins, whole, parts, part_regs):
                    n += 1
                    continue
                keep.append(ins)
            b.instrs = keep
        # a wide register nobody reads and nothing writes any more needs no start
        written = {op.reg.id for b in mf.blocks for ins in b.instrs if ins.opcode != IMPLICIT_DEF
                   for _, op, is_def in register_operands(ins) if is_def}
        for b in mf.blocks:
            keep = [ins for ins in b.instrs if not (
                ins.opcode == IMPLICIT_DEF and isinstance(ins.operands[0], VOp)
                and ins.operands[0].reg.id not in read_regs and ins.operands[0].reg.id not in written)]
            n += len(b.instrs) - len(keep)
            b.instrs = keep
        removed += n
        if not n:
            return removed
