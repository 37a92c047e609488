"""`createpolicy`: a 64-bit L2 cache-policy descriptor (read off ptxas 13.5's code for sm_8x
and sm_90; the low word is always zero).

* `.fractional`: the high word holds a marker bit 28, the primary policy's code plus one for
  a secondary `evict_first` in bits 24..27, and the fraction in sixteenths less one in bits
  20..23: ceil(16 * fraction) - 1 for a constant (folded), trunc(fraction * 15.99f) for a
  register (ptxas's run-time sequence: FMUL, F2I.U32.TRUNC.NTZ).
* `.range [a], primary-size, total-size`: blocks of 2^e bytes, e = max(ceil(log2(total)) - 7,
  12) (I2FP, MUFU.LG2, F2I.U32.CEIL.NTZ; for a constant total, e is folded); the high word is
  (0x18 | code) << 24 | (e - 12) << 20 | (a >> e & 0x7f) << 12 | min(count, 0x7f) << 5 with
  count = ((a + primary + 2^e - 1) >> e) - (a >> e) (64-bit); a total size of 0 gives
  0x18000000 whatever the policy. ptxas 13.5 for sm_90 computes part of it in uniform
  registers (R2UR of one lane): the same value where the operands are the same in every
  lane, as they are in real code; ours is per lane everywhere.

A mixin of `Selector` (isel/select.py).
"""
from __future__ import annotations

import math
import struct

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.mir import VOp

LUT_AND = 0xC0                # a & b
LUT_OR = 0xFC                 # a | b
LUT_OR_AND = 0xF8             # a | (b & c)

PRIMARY_CODE = {"L2::evict_unchanged": 0, "L2::evict_first": 2, "L2::evict_last": 4,
                "L2::evict_normal": 6}
SECONDARY_FIRST = 1         # added when the secondary policy is evict_first
MARKER = 1 << 28


def fractional_policy(primary: str, secondary: str | None, fraction: float) -> int:
    steps = max(0, math.ceil(16 * fraction) - 1)
    code = PRIMARY_CODE[primary] + (SECONDARY_FIRST if secondary == "L2::evict_first" else 0)
    return (MARKER | code << 24 | min(steps, 15) << 20) << 32


RANGE_MARKER = 0x18            # bits 27..28 of the high word of a range policy
EMPTY_RANGE = 0x18000000      # the high word for a total size of 0
FRACTION_SCALE = 15.99        # ptxas's factor for a run-time fraction (an f32 immediate)


def policy_code(policies: list[str]) -> int:
    return PRIMARY_CODE[policies[0]] + (SECONDARY_FIRST if policies[1:2] == ["L2::evict_first"] else 0)


def range_block_log2(total: int) -> float:
    """log2 of the total size as an f32 (ptxas's folded MUFU.LG2 of a constant)."""
    t = struct.unpack("<f", struct.pack("<f", float(total)))[0]
    return struct.unpack("<f", struct.pack("<f", math.log2(t)))[0]


class CachePolicy:
    def sel_createpolicy(self, ins):
        if "cvt" in ins.modifiers:      # an access property is already a policy: a copy
            return self.copy_policy(ins)
        policies = [m for m in ins.modifiers if m.startswith("L2::")]
        if not policies or policies[0] not in PRIMARY_CODE:
            raise self.unsupported(f"`createpolicy.{'.'.join(ins.modifiers)}`")
        if "range" in ins.modifiers:
            return self.range_policy(ins, policy_code(policies))
        if "fractional" not in ins.modifiers or len(ins.srcs) > 1:
            raise self.unsupported(f"`createpolicy.{'.'.join(ins.modifiers)}`")
        if ins.srcs and not isinstance(ins.srcs[0], ir.Const):
            return self.run_time_fraction(ins, policy_code(policies))
        fraction = 1.0
        if ins.srcs:
            bits = ins.srcs[0].value
            fraction = struct.unpack("<d", struct.pack("<Q", bits))[0] if bits >> 32 else \
                struct.unpack("<f", struct.pack("<I", bits))[0]
        if not 0.0 < fraction <= 1.0:
            raise self.unsupported(f"`createpolicy` fraction {fraction}")
        value = fractional_policy(policies[0], policies[1] if len(policies) > 1 else None, fraction)
        d = ins.dests[0]
        self.begin_wide(d)
        self.move(self.dst(d, 0), Imm(value & 0xFFFFFFFF))
        self.move(self.dst(d, 1), Imm(value >> 32))

    def copy_policy(self, ins) -> None:
        """createpolicy.cvt.L2: ptxas 13.5 writes no instruction for it on sm_80..sm_120 (the
        destination is the source's 64 bits), so a 64-bit copy that the optimiser folds."""
        d = ins.dests[0]
        self.begin_wide(d)
        self.move(self.dst(d, 0), self.part_of(ins.srcs[0], 0))
        self.move(self.dst(d, 1), self.part_of(ins.srcs[0], 1))

    def high_word_only(self, d: ir.Value, hi) -> None:
        self.begin_wide(d)
        self.move(self.dst(d, 0), RZ)
        self.move(self.dst(d, 1), hi)

    def run_time_fraction(self, ins, code: int) -> None:
        t = VOp(self.mf.new_vreg())
        self.emit("FMUL", (), [t, self.reg_part(ins.srcs[0]), self.fimm(FRACTION_SCALE)])
        self.emit("F2I", ("U32", "TRUNC", "NTZ"), [t, t])
        self.emit("IMAD", ("SHL", "U32"), [t, t, Imm(1 << 20), RZ])
        self.emit("LOP3", ("LUT",), [t, t, Imm(0xF00000), RZ, Imm(LUT_AND), NOT_PT])
        hi = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [hi, t, Imm(MARKER | code << 24), RZ, Imm(LUT_OR), NOT_PT])
        self.high_word_only(ins.dests[0], hi)

    def range_policy(self, ins, code: int) -> None:
        addr, primary, total = ins.srcs
        d = ins.dests[0]
        total_value = self.known_constant(total)
        if total_value == 0:
            return self.high_word_only(d, Imm(EMPTY_RANGE))
        space = "global" if ins.space == "global" else "generic"
        mem = self.offset_added(self.memory_operand(addr, space))
        a_lo, a_hi = (VOp(mem.base.reg, 0), VOp(mem.base.reg, 1)) if mem.base is not None else (RZ, RZ)
        if total_value is None:
            e = VOp(self.mf.new_vreg())
            lg = VOp(self.mf.new_vreg())
            self.emit("I2FP", ("F32", "U32"), [lg, self.reg_part(total)])
            self.emit("MUFU", ("LG2",), [lg, lg])
            self.emit("F2I", ("U32", "CEIL", "NTZ"), [e, lg])
            self.emit("IADD3", (), [e, e, Imm(-7 & 0xFFFFFFFF), RZ])
            self.emit("IMNMX", (), [e, e, Imm(12), NOT_PT])                 # max(., 12)
            block = VOp(self.mf.new_vreg())
            one = VOp(self.mf.new_vreg())
            self.move(one, Imm(1))
            self.emit("SHF", ("L", "U32"), [block, one, e, RZ])
        else:                      # a constant total: the block size is known, nothing to hold
            e_value = max(math.ceil(range_block_log2(total_value)) - 7, 12)
            e, block = Imm(e_value), Imm(1 << e_value)
        size = self.known_constant(primary)
        if size is None:                                                 # primary + 2^e - 1
            end_add = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [end_add, self.reg_part(primary), Imm(0xFFFFFFFF), block])
        elif isinstance(block, Imm):
            end_add = self.imm32(size - 1 + block.value)
        else:
            end_add = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [end_add, block, self.imm32(size - 1), RZ])
        end = self.new_pair()
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(end.reg, 0), carry, a_lo, end_add, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(end.reg, 1), a_hi, RZ, RZ, carry, NOT_PT])
        first, last = self.new_pair(), self.new_pair()                   # block numbers
        for out, (lo, hi) in ((first, (a_lo, a_hi)), (last, (VOp(end.reg, 0), VOp(end.reg, 1)))):
            self.emit("SHF", ("R", "U64"), [VOp(out.reg, 0), lo, e, hi])
            self.emit("SHF", ("R", "U32", "HI"), [VOp(out.reg, 1), RZ, e, hi])
        count = self.new_pair()
        borrow = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(count.reg, 0), borrow, VOp(first.reg, 0, neg=True),
                                VOp(last.reg, 0), RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(count.reg, 1), VOp(last.reg, 1), VOp(first.reg, 1, inv=True),
                                    RZ, borrow, NOT_PT])
        small = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("LT", "U32", "AND"), [small, PT, VOp(count.reg, 0), Imm(0x7F), PT], ndefs=2)
        self.emit("ISETP", ("LT", "U32", "AND", "EX"), [small, PT, VOp(count.reg, 1), RZ, PT, small],
                  ndefs=2)
        blocks = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [blocks, VOp(count.reg, 0), Imm(0x7F), small])
        # blocks <= 0x7f: its field needs no mask, and the two low fields do not overlap (the
        # IMAD's add is an OR); no register holds the marker or a mask
        low, count_field, hi = (VOp(self.mf.new_vreg()) for _ in range(3))
        self.emit("LOP3", ("LUT",), [low, VOp(first.reg, 0), Imm(0x7F), RZ, Imm(LUT_AND), NOT_PT])
        self.emit("IMAD", ("SHL", "U32"), [count_field, blocks, Imm(1 << 5), RZ])
        self.emit("IMAD", (), [hi, low, Imm(1 << 12), count_field])
        marker = (RANGE_MARKER | code) << 24
        if isinstance(e, Imm):
            marker |= (e.value - 12) << 20 & 0xF00000
        else:
            scale = VOp(self.mf.new_vreg())                              # (e - 12) << 20
            self.emit("IADD3", (), [scale, e, Imm(-12 & 0xFFFFFFFF), RZ])
            self.emit("IMAD", ("SHL", "U32"), [scale, scale, Imm(1 << 20), RZ])
            self.emit("LOP3", ("LUT",), [hi, hi, Imm(0xF00000), scale, Imm(LUT_OR_AND), NOT_PT])
        self.emit("LOP3", ("LUT",), [hi, hi, Imm(marker), RZ, Imm(LUT_OR), NOT_PT])
        if total_value is None:                                          # total 0: EMPTY_RANGE
            nonzero = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, self.reg_part(total), RZ, PT],
                      ndefs=2)
            self.emit("SEL", (), [hi, hi, Imm(EMPTY_RANGE), nonzero])
        self.high_word_only(d, hi)
