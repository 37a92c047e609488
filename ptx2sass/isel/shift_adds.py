"""A 32-bit add of a shifted value is one instruction, as ptxas writes it: `x << k` added
to y is `LEA d, x, y, k` for k < 16 (Triton flash_attn's `LEA R12, R41, R37, 0x9`) and
`IMAD d, x, 2^k, y` from 16 (simd_video's lanes: `IMAD R19, R22, 0x10000, R19`), and `x >> k` (logical) added to y is `LEA.HI d, x, y, RZ,
32 - k` (the high word of {0, x} << (32 - k), plus y). The SIMD-in-a-word expansions
(isel/simd_video.py: `__vaddus2`, `__vsubus2`, `__vmaxu2` take lanes apart with shifts and
join them with adds) wrote SHF then IADD3 for each: real-world simd_video sw_pairs had 21
SHF.L.U32 and 20 SHF.R.U32.HI where ptxas has 16 IMADs and 16 LEA.HIs. Run on the
machine IR after selection, before allocation.

Pattern, in one block: `SHF.L.U32 t = x, k, RZ`, or `SHF.R.U32.HI t = RZ, k, x` /
`SHF.R.U32 t = x, k, RZ` (0 < k < 32), unguarded, t written only there and read only by
a later unguarded `IADD3 d = t, y, RZ` (either order; no carry out) with x not written in
between. y: a register or RZ for the IMAD; for the LEA and LEA.HI also a negated register
or an immediate, where the target's table encodes that form."""
from __future__ import annotations

import functools

from ptx2sass.encoder.model import Imm, Instruction, Reg
from ptx2sass.mir import MFunction, MInstr, VOp, register_operands

ENABLED = True      # (A/B runs turn it off)


def _zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


def _plain(op) -> bool:
    return isinstance(op, VOp) and op.reg.cls == "R" and op.width == 1 and not (
        op.neg or op.abs or op.inv or op.suffix)


def _shift(ins: MInstr):
    """(x, k, left) of a 32-bit logical shift by an immediate, else None."""
    ops = ins.operands
    if ins.opcode != "SHF" or ins.guard is not None or ins.ndefs != 1 or len(ops) != 4:
        return None
    if not (_plain(ops[0]) and isinstance(ops[2], Imm) and 0 < ops[2].value < 32):
        return None
    if ins.modifiers == ("L", "U32") and _plain(ops[1]) and _zero(ops[3]):
        return ops[1], ops[2].value, True
    if ins.modifiers == ("R", "U32", "HI") and _zero(ops[1]) and _plain(ops[3]):
        return ops[3], ops[2].value, False
    if ins.modifiers == ("R", "U32") and _plain(ops[1]) and _zero(ops[3]):
        return ops[1], ops[2].value, False
    return None


def _kind(op) -> str | None:
    if _plain(op) or _zero(op):
        return "R"
    if isinstance(op, VOp) and op.reg.cls == "R" and op.width == 1 and op.neg and not (
            op.abs or op.inv or op.suffix):
        return "-R"
    if isinstance(op, Imm) and op.text is None and not (op.neg or op.abs):
        return "I"
    return None


IMAD_FROM = 16      # left shifts by this much or more add as IMADs, shorter ones as LEAs


@functools.cache
def _encodable(arch: str, form: str, kind: str) -> bool:
    from ptx2sass.encoder import codec
    y = {"R": Reg("R", 6), "-R": Reg("R", 6, neg=True), "I": Imm(0xFFFFFFFE)}[kind]
    if form == "IMAD":
        probe = Instruction("IMAD", (), (Reg("R", 2), Reg("R", 4), Imm(0x10000), y))
    elif form == "LEA":
        probe = Instruction("LEA", (), (Reg("R", 2), Reg("R", 4), y, Imm(0x9)))
    else:
        probe = Instruction("LEA", ("HI",), (Reg("R", 2), Reg("R", 4), y, Reg("R", 255), Imm(0x10)))
    try:
        codec.encode(probe, arch, 0, [])
        return True
    except Exception:       # no such form in the arch's table
        return False


def fold_shift_adds(mf: MFunction) -> int:
    arch = getattr(mf.target, "name", None)
    if not ENABLED or arch is None:
        return 0
    reads: dict[int, int] = {}
    writes: dict[int, int] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                counts = writes if is_def else reads
                counts[op.reg.id] = counts.get(op.reg.id, 0) + 1
    folded = 0
    for b in mf.blocks:
        shifts: dict[int, tuple[int, tuple]] = {}       # t -> (index of its SHF, (x, k, left))
        dead: set[int] = set()
        for j, ins in enumerate(b.instrs):
            got = _shift(ins)
            if got is not None:
                t = ins.operands[0].reg.id
                if writes.get(t) == 1 and reads.get(t) == 1:
                    shifts[t] = (j, got)
            elif (ins.opcode == "IADD3" and ins.modifiers == () and ins.guard is None and ins.ndefs == 1
                  and len(ins.operands) == 4 and _zero(ins.operands[3])):
                for s in (1, 2):
                    t_op, y = ins.operands[s], ins.operands[3 - s]
                    if not (_plain(t_op) and t_op.reg.id in shifts):
                        continue
                    i, (x, k, left) = shifts[t_op.reg.id]
                    kind = _kind(y)
                    form = ("IMAD" if k >= IMAD_FROM else "LEA") if left else "LEA.HI"
                    if kind is None or (form == "IMAD" and kind != "R") or not _encodable(arch, form, kind):
                        continue
                    if any(is_def and op.reg.id == x.reg.id for m in b.instrs[i + 1:j]
                           for _, op, is_def in register_operands(m)):
                        continue
                    if form == "IMAD":
                        ins.opcode, ins.modifiers = "IMAD", ()
                        ins.operands = [ins.operands[0], x, Imm(1 << k), y]
                    elif form == "LEA":
                        ins.opcode, ins.modifiers = "LEA", ()
                        ins.operands = [ins.operands[0], x, y, Imm(k)]
                    else:
                        ins.opcode, ins.modifiers = "LEA", ("HI",)
                        ins.operands = [ins.operands[0], x, y, Reg("R", 255), Imm(32 - k)]
                    dead.add(i)
                    del shifts[t_op.reg.id]
                    folded += 1
                    break
            # a write of a pending shift's source: the shift's value is still its own (t is
            # read once, so the fold reads x at the add: checked above between the two)
        if dead:
            b.instrs = [ins for j, ins in enumerate(b.instrs) if j not in dead]
    return folded
