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
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")
        if _bits(ty) == 64:
            return self.int_divide64(ins, remainder)
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
            self.guarded(positive, True, "IADD3", (), [result, RZ, VOp(result.reg, neg=True), RZ])
        nonzero = self.new_p()
        self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, d, RZ, PT], ndefs=2)
        self.guarded(nonzero, True, "LOP3", ("LUT",), [result, RZ, d, RZ, Imm(NOT_B), NOT_PT])
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
            self.guarded(p, False, "IADD3", (), [r, r, VOp(d.reg, neg=True), RZ])
            if not remainder:
                self.guarded(p, False, "IADD3", (), [q, q, Imm(1), RZ])
        return q, r

    # --- 64 bits ---------------------------------------------------------------------------
    # ptxas calls a subroutine with the same method as the 32-bit sequence, widened: an
    # estimate x of 2^64/d from MUFU.RCP of the divisor rounded up (I2F.U64.RP; 0x1ffffffe
    # added to the bits scales by 2^64 less two ulps, so x stays below 2^64/d), two Newton
    # steps x += hi64(x * -(d*x)) that keep it below while squaring its error, the quotient
    # hi64(x * n), and two corrections. Here the same is inline: straight-line, so no lane
    # diverges. By zero the quotient is all ones, as ptxas's; the remainder too (set below).

    def int_divide64(self, ins, remainder: bool) -> None:
        signed = _signed(ins.type)
        n, d = self.pair_of(ins.srcs[0]), self.pair_of(ins.srcs[1])
        n_orig, d_orig = n, d
        if signed:
            n_neg, d_neg = self.new_p(), self.new_p()
            self.emit("ISETP", ("LT", "AND"), [n_neg, PT, VOp(n.reg, 1), RZ, PT], ndefs=2)
            self.emit("ISETP", ("LT", "AND"), [d_neg, PT, VOp(d.reg, 1), RZ, PT], ndefs=2)
            n, d = self.absolute64(n, n_neg), self.absolute64(d, d_neg)
        q, r = self.newton_divide64(n, d)
        result = r if remainder else q
        if signed:
            # the signs again, from the operands, so no predicate lives across the division
            n_neg, d_neg = self.new_p(), self.new_p()
            self.emit("ISETP", ("LT", "AND"), [n_neg, PT, VOp(n_orig.reg, 1), RZ, PT], ndefs=2)
            self.emit("ISETP", ("LT", "AND"), [d_neg, PT, VOp(d_orig.reg, 1), RZ, PT], ndefs=2)
            negate = n_neg
            if not remainder:
                negate = self.new_p()
                self.emit("PLOP3", ("LUT",), [negate, PT, n_neg, d_neg, PT, Imm(0x3C), Imm(0)], ndefs=2)
            result = self.negate64_where(result, negate)
        if remainder:      # by zero: all ones, as ptxas's subroutine gives
            low, zero = self.new_p(), self.new_p()
            self.emit("ISETP", ("EQ", "U32", "AND"), [low, PT, VOp(d.reg, 0), RZ, PT], ndefs=2)
            self.emit("ISETP", ("EQ", "U32", "AND", "EX"), [zero, PT, VOp(d.reg, 1), RZ, PT, low],
                      ndefs=2)
            for k in range(2):
                self.guarded(zero, False, "IADD3", (), [VOp(result.reg, k), RZ, Imm(0xFFFFFFFF), RZ])
        out = ins.dests[0]
        self.begin_wide(out)
        for k in range(2):
            self.emit(COPY, (), [self.dst(out, k), VOp(result.reg, k)], guarded=False)

    def guarded_carry(self) -> VOp:
        """A carry predicate written under a guard: IMPLICIT_DEF first, or liveness would see
        a partial write of a value live since the function's entry."""
        carry = self.new_p()
        self.emit(IMPLICIT_DEF, (), [carry], guarded=False)
        return carry

    def negate64(self, x: VOp, into: VOp, guard: VOp | None) -> None:
        carry = self.guarded_carry() if guard is not None else self.new_p()
        lo = self.emit("IADD3", (), [VOp(into.reg, 0), carry, RZ, VOp(x.reg, 0, neg=True), RZ],
                       ndefs=2, guarded=False)
        hi = self.emit("IADD3", ("X",), [VOp(into.reg, 1), RZ, VOp(x.reg, 1, inv=True), RZ, carry,
                                         NOT_PT], guarded=False)
        if guard is not None:
            lo.guard = hi.guard = guard

    def absolute64(self, x: VOp, negative: VOp) -> VOp:
        t = self.pair_of_copy(x)
        self.negate64(x, t, negative)
        return t

    def negate64_where(self, x: VOp, p: VOp) -> VOp:
        t = self.pair_of_copy(x)
        self.negate64(x, t, p)
        return t

    def pair_of_copy(self, x: VOp) -> VOp:
        t = self.new_pair()
        for k in range(2):
            self.emit(COPY, (), [VOp(t.reg, k), VOp(x.reg, k)], guarded=False)
        return t

    def newton_divide64(self, n: VOp, d: VOp) -> tuple[VOp, VOp]:
        """(quotient, remainder) pairs of n / d, unsigned."""
        f = self.new()
        self.emit("I2F", ("U64", "RP"), [f, d])
        self.emit("MUFU", ("RCP",), [f, f])
        self.emit("IADD3", (), [f, f, Imm(0x1FFFFFFE), RZ])
        x = VOp(self.mf.new_vreg("R", 2))
        self.emit("F2I", ("U64", "TRUNC"), [x, f])
        for _ in range(2):
            error = self.negated64(self.mul_lo64(d, x))
            x = self.add64(x, self.unsigned_mul_hi64(VOp(x.reg, 0), VOp(x.reg, 1),
                                                     VOp(error.reg, 0), VOp(error.reg, 1)))
        q = self.unsigned_mul_hi64(VOp(x.reg, 0), VOp(x.reg, 1), VOp(n.reg, 0), VOp(n.reg, 1))
        r = self.sub64(n, self.mul_lo64(q, d))
        for _ in range(2):
            fits = self.at_least64(r, d)
            r = self.select64(fits, self.sub64(r, d), r)
            q = self.select64(fits, self.add64(q, None, one=True), q)
        nonzero, low_nonzero = self.new_p(), self.new_p()
        self.emit("ISETP", ("NE", "U32", "AND"), [low_nonzero, PT, VOp(d.reg, 0), RZ, PT], ndefs=2)
        self.emit("ISETP", ("NE", "AND", "EX"), [nonzero, PT, VOp(d.reg, 1), RZ, PT, low_nonzero],
                  ndefs=2)
        quotient = self.new_pair()
        for k in range(2):
            self.emit("SEL", (), [VOp(quotient.reg, k), VOp(q.reg, k), Imm(0xFFFFFFFF), nonzero])
        return quotient, r

    def mul_lo64(self, a: VOp, b: VOp) -> VOp:
        """A fresh pair: a * b modulo 2^64."""
        out = VOp(self.mf.new_vreg("R", 2))
        self.emit("IMAD", ("WIDE", "U32"), [out, VOp(a.reg, 0), VOp(b.reg, 0), RZ])
        for x, y in ((a, b), (b, a)):       # the cross products into the high word
            self.emit("IMAD", (), [VOp(out.reg, 1), VOp(x.reg, 0), VOp(y.reg, 1), VOp(out.reg, 1)])
        return out

    def negated64(self, x: VOp) -> VOp:
        t = self.new_pair()
        self.negate64(x, t, None)
        return t

    def add64(self, a: VOp, b: VOp | None, one: bool = False) -> VOp:
        """A fresh pair: a + b (or a + 1)."""
        out, carry = self.new_pair(), self.new_p()
        b0 = Imm(1) if one else VOp(b.reg, 0)
        self.emit("IADD3", (), [VOp(out.reg, 0), carry, VOp(a.reg, 0), b0, RZ], ndefs=2)
        b1 = RZ if one else VOp(b.reg, 1)
        self.emit("IADD3", ("X",), [VOp(out.reg, 1), VOp(a.reg, 1), b1, RZ, carry, NOT_PT])
        return out

    def sub64(self, a: VOp, b: VOp) -> VOp:
        """A fresh pair: a - b."""
        out, borrow = self.new_pair(), self.new_p()
        self.emit("IADD3", (), [VOp(out.reg, 0), borrow, VOp(a.reg, 0), VOp(b.reg, 0, neg=True), RZ],
                  ndefs=2)
        self.emit("IADD3", ("X",), [VOp(out.reg, 1), VOp(a.reg, 1), VOp(b.reg, 1, inv=True), RZ, borrow,
                                    NOT_PT])
        return out

    def at_least64(self, a: VOp, b: VOp) -> VOp:
        low, p = self.new_p(), self.new_p()
        self.emit("ISETP", ("GE", "U32", "AND"), [low, PT, VOp(a.reg, 0), VOp(b.reg, 0), PT], ndefs=2)
        self.emit("ISETP", ("GE", "U32", "AND", "EX"), [p, PT, VOp(a.reg, 1), VOp(b.reg, 1), PT, low],
                  ndefs=2)
        return p

    def select64(self, p: VOp, a: VOp, b: VOp) -> VOp:
        out = self.new_pair()
        for k in range(2):
            self.emit("SEL", (), [VOp(out.reg, k), VOp(a.reg, k), VOp(b.reg, k), p])
        return out

    def new(self) -> VOp:
        return VOp(self.mf.new_vreg())

    def new_p(self) -> VOp:
        return VOp(self.mf.new_vreg("P"))
