"""Straight-line blocks joined: a block whose only successor has it as its only predecessor
absorbs that successor (an unconditional `bra` between them goes). Unrolled loops leave such
chains (the loop's exit block, the next loop's straight-line copy), and scheduling works
within blocks: joined, the next loop's loads can issue while the previous one's sums wait."""
from __future__ import annotations

from ptx2sass import ir


def merge_blocks(fn: ir.Function) -> bool:
    changed = False
    i = 0
    while i < len(fn.blocks):
        a = fn.blocks[i]
        if len(a.succs) != 1:
            i += 1
            continue
        b = a.succs[0]
        last = a.instrs[-1] if a.instrs else None
        jumps = last is not None and last.opcode in ir.TERMINATORS
        if (b is a or b is fn.entry or b.preds != [a]
                or (jumps and (last.opcode != "bra" or last.guard is not None))):
            i += 1
            continue
        body = a.instrs[:-1] if jumps else list(a.instrs)
        for phi in b.phis:
            (_, v), = phi.incoming
            body.append(ir.Instr("mov", dests=[phi.dest], srcs=[v], type=phi.dest.type))
        a.instrs = body + b.instrs
        a.succs = list(b.succs)
        for s in b.succs:
            s.preds = [a if p is b else p for p in s.preds]
            for phi in s.phis:
                phi.incoming = [(a if p is b else p, v) for p, v in phi.incoming]
        fn.blocks.remove(b)
        changed = True
    return changed
