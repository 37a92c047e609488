"""A LOP3 that passes one of its register inputs through unchanged becomes a COPY (which
the allocator coalesces): `LOP3.LUT d, x, RZ, RZ, 0xfc` (`x | 0`) is left where an input
folded to zero. Real-world bits_hash morton_gray: `or.b64` of a value and a 64-bit mask
product whose high word the mask zeroes gave three `LOP3 ... RZ, RZ, 0xfc` and three MOVs
into them; ptxas writes neither.

The table is evaluated on the slot patterns (0xF0, 0xCC, 0xAA) with zero for RZ (and for
an immediate 0, all ones for 0xffffffff): when the result is one register slot's pattern,
the output is that register. Run after `fold_lop3_chains` (a chain may fold into such a
LOP3) and before allocation."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm
from ptx2sass.isel.lop3_chains import _SLOT_PATTERNS, _apply, _general, _lop3_slots_ok, _zero
from ptx2sass.mir import MFunction

ENABLED = True      # (A/B runs turn it off)


def _pattern(op, slot: int) -> int | None:
    if _zero(op):
        return 0
    if _general(op):
        return _SLOT_PATTERNS[slot]
    if isinstance(op, Imm) and op.text is None and not (op.neg or op.abs):
        return {0: 0, 0xFFFFFFFF: 0xFF}.get(op.value)
    return None


def lop3_copies(mf: MFunction) -> int:
    if not ENABLED:
        return 0
    done = 0
    for b in mf.blocks:
        for ins in b.instrs:
            if not _lop3_slots_ok(ins):
                continue
            slots = ins.operands[1:4]
            patterns = [_pattern(op, k) for k, op in enumerate(slots)]
            if None in patterns:
                continue
            out = _apply(ins.operands[4].value, *patterns)
            for k, op in enumerate(slots):
                if _general(op) and out == _SLOT_PATTERNS[k]:
                    ins.opcode, ins.modifiers = "COPY", ()
                    ins.operands = [ins.operands[0], op]
                    done += 1
                    break
    return done
