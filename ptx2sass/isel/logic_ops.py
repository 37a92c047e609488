"""Rarely used logic instructions: `lop3` (any truth table, with or without a predicate
result) and `cnot`, as ptxas writes them for sm_8x."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ, _bits
from ptx2sass.mir import VOp

# The truth-table pattern of each LOP3 source slot (a, b, c).
_SLOT_PATTERNS = (0xF0, 0xCC, 0xAA)


def _lut3(a: int, b: int, c: int, lut: int) -> int:
    out = 0
    for i in range(8):
        if lut >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out & 0xFF


def swap_slots(lut: int, i: int, j: int) -> int:
    """The truth table that gives the same result with the sources of slots i and j swapped."""
    p = list(_SLOT_PATTERNS)
    p[i], p[j] = p[j], p[i]
    return _lut3(*p, lut)


class LogicOps:
    def sel_lop3(self, ins):
        """`LOP3.LUT d, a, b, c, lut, !PT`; an immediate source goes to slot b (b first, then
        a, then c: the table is permuted to match), further immediates into registers.
        `lop3.or/.and` with a predicate result: `LOP3.LUT[.PAND] p, d, a, b, c, lut, q`."""
        srcs = list(ins.srcs[:3])
        lut = ins.srcs[3].value & 0xFF
        imms = [k for k in (1, 0, 2) if isinstance(srcs[k], ir.Const)]
        if imms and imms[0] != 1:
            k = imms[0]
            srcs[1], srcs[k] = srcs[k], srcs[1]
            lut = swap_slots(lut, 1, k)
        a = self.reg_part(srcs[0])
        b = self.part_of(srcs[1], 0)
        c = self.reg_part(srcs[2])
        if len(ins.dests) == 1:
            self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]), a, b, c, Imm(lut), NOT_PT])
            return
        d, p = ins.dests
        q = self.pred_operand(ins.srcs[4])
        mods = ("LUT", "PAND") if "and" in ins.modifiers else ("LUT",)
        self.emit("LOP3", mods, [self.dst(p), self.dst(d), a, b, c, Imm(lut), q], ndefs=2)

    def sel_cnot(self, ins):
        """d = (a == 0): ptxas's ISETP.EQ (with .EX for 64 bits), SEL of -1, negated."""
        d, a = ins.dests[0], ins.srcs[0]
        bits = _bits(ins.type)
        p = VOp(self.mf.new_vreg("P"))
        low = self.extend(a, "u16") if bits == 16 else self.reg_part(a, 0)
        self.emit("ISETP", ("EQ", "U32", "AND"), [p, PT, low, RZ, PT], ndefs=2)
        if bits == 64:
            p2 = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("EQ", "U32", "AND", "EX"), [p2, PT, self.reg_part(a, 1), RZ, PT, p],
                      ndefs=2)
            p = p2
        t = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [t, RZ, Imm(0xFFFFFFFF), VOp(p.reg, inv=True)])
        if bits == 64:
            self.begin_wide(d)
            self.emit("IADD3", (), [self.dst(d, 0), VOp(t.reg, neg=True), RZ, RZ])
            self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1F), self.dst(d, 0)])
        else:
            self.emit("IMAD", ("MOV",), [self.dst(d), RZ, RZ, VOp(t.reg, neg=True)])

    def sel_fns(self, ins):
        """fns d, mask, base, offset: the |offset|-th set bit of mask counting up (offset > 0)
        or down (< 0) from bit `base` (offset 0: bit `base` itself), else 0xffffffff.
        Straight-line: keep the bits on the searched side of `base`, turn a downward search
        into an upward one (the (popc - n + 1)-th bit from the bottom), then a binary search
        by population counts of the low 16, 8, 4, 2, 1 bits, as ptxas does with predicated
        code (here with SELs)."""
        mask, base, offset = ins.srcs
        new = lambda cls="R": VOp(self.mf.new_vreg(cls))   # noqa: E731
        ones = new()
        self.move(ones, Imm(0xFFFFFFFF))
        b = Imm(base.value & 31) if isinstance(base, ir.Const) else self.reg_part(base)
        m = self.reg_part(mask)

        def keep(bits):
            t = new()
            self.emit("LOP3", ("LUT",), [t, m, bits, RZ, Imm(0xC0), NOT_PT])
            return t

        up_bits, down_bits, at_bits = new(), new(), new()
        self.emit("SHF", ("L", "U32"), [up_bits, ones, b, RZ])
        back = new()
        if isinstance(b, VOp):
            self.emit("IADD3", (), [back, self.negate(b), Imm(31), RZ])
        else:                               # IADD3 takes an immediate only as its b
            self.move(back, Imm(31 - b.value))
        self.emit("SHF", ("R", "U32", "HI"), [down_bits, RZ, back, ones])
        one = new()
        self.move(one, Imm(1))
        self.emit("SHF", ("L", "U32"), [at_bits, one, b, RZ])
        up, down, at = keep(up_bits), keep(down_bits), keep(at_bits)
        # choose the side and the count k (1-based, from the bottom of the kept bits)
        if isinstance(offset, ir.Const):
            off = offset.value & 0xFFFFFFFF
            off = off - (1 << 32) if off >> 31 else off
            x = up if off > 0 else down if off < 0 else at
            total = new()
            self.emit("POPC", (), [total, x])
            k = new()
            if off >= 0:
                self.move(k, Imm(max(off, 1)))
            else:
                self.emit("IADD3", (), [k, total, Imm((off + 1) & 0xFFFFFFFF), RZ])
        else:
            o = self.reg_part(offset)
            pos_p, zero_p = new("P"), new("P")
            self.emit("ISETP", ("GT", "AND"), [pos_p, PT, o, RZ, PT], ndefs=2)
            self.emit("ISETP", ("EQ", "AND"), [zero_p, PT, o, RZ, PT], ndefs=2)
            x0, x = new(), new()
            self.emit("SEL", (), [x0, up, down, pos_p])
            self.emit("SEL", (), [x, at, x0, zero_p])
            total = new()
            self.emit("POPC", (), [total, x])
            k_down, k0, k = new(), new(), new()
            self.emit("IADD3", (), [k_down, total, Imm(1), o])
            self.emit("SEL", (), [k0, o, k_down, pos_p])
            self.emit("SEL", (), [k, one, k0, zero_p])
        pos = new()
        self.move(pos, RZ)
        for w in (16, 8, 4, 2, 1):
            low, c, p = new(), new(), new("P")
            self.emit("LOP3", ("LUT",), [low, x, Imm((1 << w) - 1), RZ, Imm(0xC0), NOT_PT])
            self.emit("POPC", (), [c, low])
            self.emit("ISETP", ("LT", "U32", "AND"), [p, PT, c, k, PT], ndefs=2)
            shifted, x2, kc, k2, pw, pos2 = new(), new(), new(), new(), new(), new()
            self.emit("SHF", ("R", "U32", "HI"), [shifted, RZ, Imm(w), x])
            self.emit("SEL", (), [x2, shifted, x, p])
            self.emit("IADD3", (), [kc, k, VOp(c.reg, neg=True), RZ])
            self.emit("SEL", (), [k2, kc, k, p])
            self.emit("IADD3", (), [pw, pos, Imm(w), RZ])
            self.emit("SEL", (), [pos2, pw, pos, p])
            x, k, pos = x2, k2, pos2
        # found when the remaining count is 1 and the bit reached is set
        hit, found = new(), new("P")
        self.emit("LOP3", ("LUT",), [hit, x, Imm(1), RZ, Imm(0xC0), NOT_PT])
        ok = new("P")
        self.emit("ISETP", ("EQ", "U32", "AND"), [ok, PT, k, Imm(1), PT], ndefs=2)
        self.emit("ISETP", ("NE", "U32", "AND"), [found, PT, hit, RZ, ok], ndefs=2)
        self.emit("SEL", (), [self.dst(ins.dests[0]), pos, Imm(0xFFFFFFFF), found])
