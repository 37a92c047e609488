"""32-bit (and narrower) integer division and remainder, with the sequence ptxas uses on
sm_8x: a reciprocal estimate of the divisor from MUFU.RCP, one Newton step in integer
arithmetic, the quotient from the high word of a product, and two conditional corrections,
which make the result exact whatever the estimate's last-bit error. Division by zero gives
all ones (ptxas's `~divisor`), signed operands go through their absolute values.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ, _bits, _signed
from ptx2sass.mir import COPY, IMPLICIT_DEF, VOp

NOT_B = 0x33          # LOP3 truth table of ~b over (a, b, c)
XOR_AB = 0x3C         # a ^ b


class IntDivision:
    def sel_div(self, ins):
        if ir.TYPES[ins.type][0] == "f":
            return self.float_div(ins)
        self.int_divide(ins, remainder=False)

    def sel_rem(self, ins):
        self.int_divide(ins, remainder=True)

    def int_divide(self, ins, remainder: bool):
        ty = ins.type
        if _bits(ty) > 32:
            raise self.unsupported(f"`{ins.opcode}.{ty}` (64-bit division)")
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")
        signed = _signed(ty)
        n = self.as_reg(self.extend(ins.srcs[0], ty))
        d = self.as_reg(self.extend(ins.srcs[1], ty))
        if signed:
            n_abs, d_abs = self.new(), self.new()
            self.emit("IABS", (), [d_abs, d])
            self.emit("IABS", (), [n_abs, n])
        else:
            n_abs, d_abs = n, d
        q, r = self.unsigned_divide(n_abs, d_abs, remainder)
        result = r if remainder else q
        if signed:
            # the remainder takes the dividend's sign, the quotient the product of the signs
            sign_source = n
            if not remainder:
                sign_source = self.new()
                self.emit("LOP3", ("LUT",), [sign_source, n, d, RZ, Imm(XOR_AB), NOT_PT])
            positive = self.new_p()
            self.emit("ISETP", ("GE", "AND"), [positive, PT, sign_source, RZ, PT], ndefs=2)
            self.guarded_op(positive, True, "IADD3", (), [result, RZ, VOp(result.reg, neg=True), RZ])
        nonzero = self.new_p()
        self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, d, RZ, PT], ndefs=2)
        self.guarded_op(nonzero, True, "LOP3", ("LUT",), [result, RZ, d, RZ, Imm(NOT_B), NOT_PT])
        self.emit(COPY, (), [self.dst(ins.dests[0]), result], guarded=False)

    def unsigned_divide(self, n: VOp, d: VOp, remainder: bool) -> tuple[VOp, VOp]:
        """(quotient, remainder) registers of n / d for d != 0 (garbage for d == 0)."""
        f = self.new()
        self.emit("I2F", ("U32", "RP"), [f, d])
        self.emit("MUFU", ("RCP",), [f, f])
        self.emit("IADD3", (), [f, f, Imm(0x0FFFFFFE), RZ])
        q = self.new()
        self.emit("F2I", ("FTZ", "U32", "TRUNC", "NTZ"), [q, f])
        # one Newton step: q += hi(q * (-d * q)), the addend as the high word of a pair
        minus_d, e = self.new(), self.new()
        self.emit("IADD3", (), [minus_d, RZ, VOp(d.reg, neg=True), RZ])
        self.emit("IMAD", (), [e, minus_d, q, RZ])
        pair = VOp(self.mf.new_vreg("R", 2))
        self.emit(IMPLICIT_DEF, (), [pair], guarded=False)
        self.move(VOp(pair.reg, 0), RZ)
        self.emit(COPY, (), [VOp(pair.reg, 1), q], guarded=False)
        self.emit("IMAD", ("HI", "U32"), [q, q, e, pair])
        self.emit("IMAD", ("HI", "U32"), [q, q, n, RZ])
        minus_q, r = self.new(), self.new()
        self.emit("IADD3", (), [minus_q, RZ, VOp(q.reg, neg=True), RZ])
        self.emit("IMAD", (), [r, d, minus_q, n])
        for _ in range(2):        # at most two corrections
            p = self.new_p()
            self.emit("ISETP", ("GE", "U32", "AND"), [p, PT, r, d, PT], ndefs=2)
            self.guarded_op(p, False, "IADD3", (), [r, r, VOp(d.reg, neg=True), RZ])
            if not remainder:
                self.guarded_op(p, False, "IADD3", (), [q, q, Imm(1), RZ])
        return q, r

    def new(self) -> VOp:
        return VOp(self.mf.new_vreg())

    def new_p(self) -> VOp:
        return VOp(self.mf.new_vreg("P"))

    def guarded_op(self, p: VOp, negate: bool, opcode, mods, operands) -> None:
        """An instruction under a predicate of the sequence (the register keeps its value
        where the predicate is false)."""
        mi = self.emit(opcode, mods, operands, guarded=False)
        mi.guard = VOp(p.reg, inv=negate)
