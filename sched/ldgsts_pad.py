"""Predicated-off shared loads before an LDGSTS that follows a barrier (sm_90).

ptxas 13.5 for sm_90 puts three `@!PT LDS RZ, [RZ]` before the kernel's first LDGSTS and
before the first LDGSTS after each BAR (every Triton cp.async matmul); the H200 dropped the
K-steps after the first of our cubins that lacked them (triton matmul_f16/int8: the output
is exactly the first stage's product). The count and the triggers are data
(`ldgsts_padding` in the latency table): ptxas pads too the first LDGSTS after a DEPBAR and
the first of a block (a branch target), so no path reaches an LDGSTS unpadded by skipping
the padded one before it."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Instruction, Mem, Reg

from ptx2sass.sched.control import Slot

_RZ = Reg("R", 255)
_NOT_PT = Reg("P", 7, inv=True)


def _dummy() -> Slot:
    return Slot(Instruction("LDS", (), (_RZ, Mem(base=_RZ)), guard=_NOT_PT))


def pad_ldgsts(slots: list[Slot], lat) -> list[Slot]:
    """`slots` with `lat.LDGSTS_PADDING[0]` dummy loads before each LDGSTS that is the first
    after the kernel's entry, a barrier, an `also_after` opcode (DEPBAR) or, with
    `at_block_starts`, the start of its block (in layout order); unchanged where the count is 0."""
    count, after = lat.LDGSTS_PADDING
    if not count:
        return slots
    also, at_blocks = getattr(lat, "LDGSTS_REARM", (frozenset(), False))
    out: list[Slot] = []
    armed = True
    for s in slots:
        op = s.ins.opcode
        if at_blocks and (s.block_start or s.labels):
            armed = True
        if op in after or op in also:
            armed = True
        elif op == "LDGSTS" and armed:
            pad = [_dummy() for _ in range(count)]
            pad[0].labels, s.labels = s.labels, []
            pad[0].block_start, s.block_start = s.block_start, False
            pad[0].line = s.line
            out.extend(pad)
            armed = False
        out.append(s)
    return out
