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
