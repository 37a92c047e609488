"""Wide registers that are only ever touched part by part, split into one register per part.

Selection keeps a 64-bit PTX value in a pair even where every instruction that writes or
reads it takes one 32-bit half (a 64-bit xor, shift or multiply is two 32-bit operations:
`SHF.R.U64 %z.0, ...; SHF.R.U32.HI %z.1, ...`). A pair must sit at an even register with
its two halves side by side, so colouring loses registers to alignment and copies a
half into place (`IMAD.WIDE.U32` writes its own pair, whose low half then moves into the
product's pair). ptxas keeps such a value's halves in any two registers (bits_hash
splitmix_xorshift: `IMAD.WIDE.U32 R8, ...; IMAD.IADD R13, R9, 0x1, R3;
SHF.R.U64 R9, R8, 0x1b, R13`).

A register of the R file is split when every operand naming it names one part (or it is
an `IMPLICIT_DEF`'s result, the start of a value built in parts), no guarded instruction
writes it, no instruction gives it an extra footprint (`MInstr.widths`) and it is not
precoloured. Each part becomes a register of its own, each write of a part a whole write
of it, and the `IMPLICIT_DEF` goes.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.mir import IMPLICIT_DEF, MFunction, MInstr, VMem, VOp

# Off: measured on every corpus (docs/STATUS.md, branch regs33) it lowered the register
# geomeans (real-world tuning x0.9801 with the chain order) but cost SM cycles on Triton's
# (x1.0010: flash_attn_causal 3468 -> 3559, float64_ops 4203 -> 4267) and tinygrad's
# geomeans (round_float64 3382 -> 3707), its pre-scheduled orders unchanged: the cost is in
# the colouring that follows, not yet understood.
SPLIT_PARTS = False


def _splittable(mf: MFunction) -> set[int]:
    wide = {v.id for v in mf.vregs if v.cls == "R" and v.width > 1 and v.id not in mf.precolored}
    if not wide:
        return set()
    bad: set[int] = set()
    written: set[tuple[int, int]] = set()
    read: set[tuple[int, int]] = set()
    for b in mf.blocks:
        for ins in b.instrs:
            implicit = ins.opcode == IMPLICIT_DEF
            for i, op in enumerate(ins.operands):
                if isinstance(op, VOp):
                    if op.reg.id in wide and op.part is not None:
                        (written if i < ins.ndefs else read).add((op.reg.id, op.part))
                    if op.reg.id in wide and ((op.part is None and not (implicit and i == 0))
                                              or i in ins.widths or ins.shown is not None):
                        bad.add(op.reg.id)
                elif isinstance(op, VMem):
                    for base in (op.base, op.ubase):
                        if isinstance(base, VOp) and base.reg.id in wide:
                            bad.add(base.reg.id)
                elif hasattr(op, "ureg") and isinstance(getattr(op, "ureg"), VOp):
                    bad.add(op.ureg.reg.id)
            if isinstance(ins.guard, VOp) and ins.guard.reg.id in wide:
                bad.add(ins.guard.reg.id)
            if ins.guard is not None:
                # a guarded write lets the old value through: the copies that fill such a
                # register first cost more MOVs split than as a pair (tinygrad
                # idiv_const_int64's conditional negations: 281 -> 288 instructions)
                bad.update(op.reg.id for op in ins.operands[:ins.ndefs] if isinstance(op, VOp))
    # a part read but never written (an undefined half) keeps the IMPLICIT_DEF's start
    bad.update(v for v, k in read - written)
    return wide - bad


def split_parts(mf: MFunction) -> int:
    """Split every wide register touched only part by part (module docstring); returns
    how many were split."""
    if not SPLIT_PARTS:
        return 0
    ids = _splittable(mf)
    if not ids:
        return 0
    regs = {v.id: v for v in mf.vregs}
    parts = {i: [mf.new_vreg("R", 1) for _ in range(regs[i].width)] for i in sorted(ids)}

    def rename(op):
        if isinstance(op, VOp) and op.reg.id in ids:
            return replace(op, reg=parts[op.reg.id][op.part], part=None)
        return op

    for b in mf.blocks:
        out: list[MInstr] = []
        for ins in b.instrs:
            if ins.opcode == IMPLICIT_DEF and ins.operands and isinstance(ins.operands[0], VOp) \
                    and ins.operands[0].reg.id in ids:
                continue            # each part is written whole, unguarded
            if any(isinstance(op, VOp) and op.reg.id in ids for op in ins.operands):
                ins.operands = [rename(op) for op in ins.operands]
            out.append(ins)
        b.instrs = out
    return len(ids)
