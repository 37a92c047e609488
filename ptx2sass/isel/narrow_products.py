"""A wide product whose high word nothing reads becomes a 32-bit IMAD: `mul.wide.u32 %rd,
%r, 65536` masked with `0xff000000` (real-world bits_hash morton_gray's Morton spreading)
was `IMAD.WIDE.U32 R18, R0, 0x10000, RZ` writing a pair, the next instruction's high word
then copied into the pair's other register; ptxas writes `IMAD.U32 R4, R8, 0x10000, RZ`.
The low word of a product (plus a 64-bit addend's low word) does not depend on the
signedness or the high words, so `IMAD.WIDE(.U32) d, a, b, c` becomes `IMAD d', a, b,
c.lo` with d' a fresh 32-bit register that every reader of d's low word reads instead
(operands, 32-bit address bases: a local array's `LDL [R]`, and a constant bank's
register index: `LDC c[0x0][R+0x1a0]` of a `__grid_constant__` array).
Only where the pair is written once and every reader names its low word alone; run after
`remove_dead_parts` (which removes the high word's dead readers).

Products read only as the base of a local or shared access are narrowed even while the
general rule is off: those windows are 32 bits wide, so the access reads the base's low word
alone (a `.local` array indexed by `mul.wide.u32` then `add.s64` to the depot's address,
real-world dp_sequences lcs_bit_parallel: ptxas `IMAD R5, R2, 0x8, R1` then `LDL.64 R2, [R5]`,
ours was `IMAD.WIDE.U32` into a pair)."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import ConstRef, Reg
from ptx2sass.isel.integer import imad_spelling
from ptx2sass.mir import MFunction, VMem, VOp, register_operands

# Off by default: on, tinygrad's sum_uint64 (tuning part) ran 2387 -> 2679 single-warp cycles
# (branch quality33's A/B); morton_gray's gain is 2 instructions. Tests switch it on.
ENABLED = False

WINDOW_NARROWING = True     # False: only the general rule (A/B runs)
# accesses whose address is a 32-bit window offset (the base's low word alone)
WINDOW_ACCESSES = frozenset({"LDL", "STL", "LDS", "STS", "ATOMS"})


def _low_addend(op):
    """The addend's low word, or None where it has no plain one."""
    if isinstance(op, Reg) and op.is_zero:
        return op
    if isinstance(op, ConstRef) and not (op.neg or op.abs or op.inv) and op.ureg is None:
        return op
    if isinstance(op, VOp) and op.part is None and op.reg.width == 2 and not (op.neg or op.abs or op.inv or op.suffix):
        return replace(op, part=0)
    return None


def narrow_unread_high_products(mf: MFunction) -> int:
    writes: dict[int, int] = {}
    low_only: dict[int, bool] = {}
    window_only: dict[int, bool] = {}      # every reader is a local/shared access's base
    for b in mf.blocks:
        for ins in b.instrs:
            for i, op, is_def in register_operands(ins):
                r = op.reg.id
                if is_def:
                    writes[r] = writes.get(r, 0) + 1
                    if op.part is not None:
                        low_only[r] = False         # written in parts: not one product's pair
                else:
                    # (a wide address reads the pair from the part it names)
                    whole = isinstance(ins.operands[i], VMem) and ins.operands[i].wide if i >= 0 else False
                    low_only[r] = (low_only.get(r, True) and op.part == 0 and not whole
                                   and ins.widths.get(i, 1) == 1)
                    window_only[r] = (window_only.get(r, True) and ins.opcode in WINDOW_ACCESSES
                                      and i >= 0 and isinstance(ins.operands[i], VMem)
                                      and ins.operands[i].base == op)
    fresh: dict[int, VOp] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            ops = ins.operands
            if not (ins.opcode == "IMAD" and "WIDE" in ins.modifiers and ins.guard is None
                    and ins.ndefs == 1 and len(ops) == 4 and isinstance(ops[0], VOp)
                    and ops[0].part is None and ops[0].reg.width == 2 and not ins.widths):
                continue
            r = ops[0].reg.id
            c = _low_addend(ops[3])
            if writes.get(r) != 1 or not low_only.get(r, True) or c is None:
                continue
            if not ENABLED and not (WINDOW_NARROWING and window_only.get(r, False)):
                continue
            d = VOp(mf.new_vreg("R", 1))
            fresh[r] = d
            ins.modifiers = (tuple(m for m in ins.modifiers if m not in ("WIDE", "U32"))
                             or imad_spelling(ops[2], c))    # `IMAD.IADD R, R, 0x1, R` as printed
            ins.operands = [d, ops[1], ops[2], c]
    if not fresh:
        return 0
    def narrowed(op):
        if isinstance(op, VOp) and op.reg.id in fresh and op.part == 0:
            return replace(op, reg=fresh[op.reg.id].reg, part=None)
        return op

    for b in mf.blocks:
        for ins in b.instrs:
            for i, op in enumerate(ins.operands):
                if isinstance(op, VMem) and isinstance(op.base, VOp):     # an address's base
                    ins.operands[i] = replace(op, base=narrowed(op.base))
                elif isinstance(op, ConstRef) and isinstance(op.ureg, VOp):  # `c[0x0][R+off]`
                    ins.operands[i] = replace(op, ureg=narrowed(op.ureg))
                else:
                    ins.operands[i] = narrowed(op)
            if isinstance(ins.guard, VOp):
                ins.guard = narrowed(ins.guard)
    return len(fresh)
