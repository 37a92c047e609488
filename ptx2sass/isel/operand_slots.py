"""Immediates and constant-bank operands moved into registers where the form has no slot
for them, after selection.

The selector folds a PTX immediate or a `ld.param` value into an instruction's operand
when the value reaches it directly, without knowing every slot's kinds: `FFMA d, a, c, c`
(a multiply and an addend both kernel parameters), `LOP3.LUT d, 0x3fe00000, a, 0x7fffffff`
(`copysign.f64` of an immediate), `I2IP d, a, c[..], b` (`cvt.pack` of a parameter). SASS
has no form for these: only some slots take an immediate or a constant (FFMA's b or c,
LOP3's b, I2IP's none), at most one of them per instruction. The encoding table is the
one authority on what each form takes, so this pass asks it: an instruction with such
operands that the table cannot encode gets the fewest of them moved into fresh registers
(`MOV R, imm` / `MOV R, c[..]`; a float immediate by its binary32 bits) that make it
encodable, as ptxas does. Instructions the table encodes as they are stay untouched.
"""
from __future__ import annotations

import functools
import itertools
import math
import struct
from dataclasses import replace

from ptx2sass.encoder.model import ConstRef, Imm, Instruction, Reg
from ptx2sass.isel.target_forms import _width
from ptx2sass.mir import PSEUDOS, MFunction, MInstr, VOp

# Opcodes whose float immediates are binary32 (the 16- and 64-bit float units print
# theirs differently and are left alone).
_F32_PREFIX = "F"
_F32_OTHERS = frozenset({"MUFU"})


def legalise_operand_slots(mf: MFunction, arch: str) -> None:
    """Rewrite `mf`'s instructions whose immediate/constant operands sit in slots the
    arch's table cannot encode (see the module docstring)."""
    for b in mf.blocks:
        out: list[MInstr] = []
        for mi in b.instrs:
            movable = _movable(mi)
            if movable:
                shape = _probe(mi)
                if shape is not None and not _encodable(arch, *shape):
                    narrow = [i for i in movable if _width(mi, i) == 1]  # 64-bit ones stay
                    chosen = _fewest(arch, mi, narrow)
                    for i in chosen or ():
                        mi.operands[i] = _materialise(mf, mi, i, out)
                    if chosen:
                        mi.shown = None
            out.append(mi)
        b.instrs[:] = out


def _movable(mi: MInstr) -> list[int]:
    """Operand indices holding an immediate or constant this pass can put in a register."""
    if mi.opcode in PSEUDOS:
        return []
    return [i for i, op in enumerate(mi.operands) if i >= mi.ndefs and i not in mi.widths
            and _bits(mi, op) is not None]


def _bits(mi: MInstr, op):
    """What `MOV R, x` moves for operand `op` (an Imm or a plain ConstRef), or None."""
    if isinstance(op, ConstRef):
        return replace(op, neg=False, abs=False, inv=False, suffix=()) if op.ureg is None and op.ubank is None \
            else None
    if not isinstance(op, Imm) or op.neg or op.abs:
        return None
    if op.text is None:
        return Imm(op.value & 0xFFFFFFFF) if -(1 << 31) <= op.value < 1 << 32 else None
    if not (mi.opcode.startswith(_F32_PREFIX) or mi.opcode in _F32_OTHERS):
        return None
    text = op.text
    if text.endswith("QNAN") or text.endswith("SNAN"):
        return Imm(op.value) if op.value else None
    try:
        x = float(text.replace("INF", "inf"))
    except ValueError:
        return None
    if not math.isinf(x) and abs(x) > 3.4028234663852886e38:
        return None
    return Imm(struct.unpack("<I", struct.pack("<f", x))[0])


_PROBE_REGS: dict[tuple, Reg] = {}     # (predicate?, neg, abs, inv, suffix) -> the probe's register


def _probe_operand(op):
    if isinstance(op, VOp):
        key = (op.reg.cls == "P", op.neg, op.abs, op.inv, op.suffix)
        reg = _PROBE_REGS.get(key)
        if reg is None:
            file = "P" if key[0] else "R"
            reg = _PROBE_REGS[key] = Reg(file, 0 if file == "P" else 4, neg=op.neg, abs=op.abs,
                                         inv=op.inv, suffix=op.suffix)
        return reg
    if isinstance(op, (Reg, Imm, ConstRef)):
        return op
    return None


def _probe(mi: MInstr):
    """(opcode, modifiers, probe operands) with registers in place of virtual ones, or None
    when an operand has a kind the probe does not model (addresses, labels)."""
    ops = tuple(_probe_operand(op) for op in mi.operands)
    if any(op is None for op in ops):
        return None
    return mi.opcode, tuple(mi.modifiers), ops


@functools.lru_cache(maxsize=4096)
def _encodable(arch: str, opcode: str, modifiers: tuple, operands: tuple) -> bool:
    """Whether the table encodes the instruction, as the final encoding will try it
    (the target's spelling; a 32-bit immediate unsigned or signed)."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.arch import target
    from ptx2sass.encoder.target_spelling import respell
    ins = respell(Instruction(opcode, modifiers, operands), target(arch))
    for attempt in range(2):
        if attempt:         # the signed spelling, only when the unsigned one has no encoding
            ins = replace(ins, operands=tuple(Imm(op.value - (1 << 32)) if isinstance(op, Imm) and op.text is None
                                              and op.value >= 1 << 31 else op for op in ins.operands))
        try:
            codec.encode(ins, arch, 0, [])
            return True
        except codec.EncodeError:
            continue
        except Exception:       # a probe the codec cannot read at all: leave the instruction
            return True
    return False


def _fewest(arch: str, mi: MInstr, movable: list[int]) -> tuple[int, ...] | None:
    """The smallest set of movable operands (later slots first among equals) that, held in
    registers, makes the instruction encodable; None when none does."""
    opcode, mods, ops = _probe(mi)
    for n in range(1, len(movable) + 1):
        for chosen in itertools.combinations(reversed(movable), n):
            trial = tuple(_probe_operand(VOp(_ProbeReg)) if i in chosen else op for i, op in enumerate(ops))
            if _encodable(arch, opcode, mods, trial):
                return chosen
    return None


class _ProbeRegType:
    cls = "R"
    width = 1


_ProbeReg = _ProbeRegType()


def _materialise(mf: MFunction, mi: MInstr, i: int, out: list[MInstr]) -> VOp:
    """A fresh register loaded with operand `i`'s value (its sign/abs/inverse marks, on a
    constant, move onto the register)."""
    op = mi.operands[i]
    reg = VOp(mf.new_vreg())
    out.append(MInstr("MOV", (), [reg, _bits(mi, op)], 1, None, mi.line))
    if isinstance(op, ConstRef):
        return replace(reg, neg=op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix)
    return reg
