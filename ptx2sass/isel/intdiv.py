"""32-bit (and narrower) integer division and remainder, with the sequence ptxas uses on
sm_8x: a reciprocal estimate of the divisor from MUFU.RCP, one Newton step in integer
arithmetic, the quotient from the high word of a product, and two conditional corrections,
which make the result exact whatever the estimate's last-bit error. Division by zero gives
all ones (ptxas's `~divisor`), signed operands go through their absolute values.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from ptx2sass import ir, slow_paths
from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ, _bits, _signed
from ptx2sass.mir import COPY, IMPLICIT_DEF, VOp

NOT_B = 0x33          # LOP3 truth table of ~b over (a, b, c)


def divisor_key(d):
    """What identifies a divisor in the keys of shared reciprocals and quotients: a
    constant's value and a value's id apart (a constant 96 and the value numbered 96 once
    shared one reciprocal: fuzz36, sm_90a seed 48200369), None for anything else."""
    if isinstance(d, ir.Const):
        return ("const", d.value)
    if isinstance(d, ir.Value):
        return ("value", d.id)
    return None
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
        divisor = ins.srcs[1]
        # a constant divisor stays an immediate (ptxas: `IMAD R2, R11, -0x7, R12`), and its
        # magnitude, sign and non-zeroness are known here
        constant = self.extend(divisor, ty) if isinstance(divisor, ir.Const) else None
        constant = constant.value if isinstance(constant, Imm) else None    # (zero is RZ)
        if constant is not None:
            constant = constant - (1 << 32) if signed and constant >> 31 else constant
            if constant == 0 or constant == -(1 << 31):
                constant = None
        key = (id(self.current), ty, divisor_key(divisor))
        # a loop-invariant divisor's reciprocal is computed before the loop, as ptxas does
        hoist = self.hoist_target([divisor]) if key[2] is not None else None
        recip_key = (("before", id(hoist)),) + key[1:] if hoist is not None else key
        shared = self.reciprocals.get(recip_key) if key[2] is not None else None
        if shared is None and hoist is not None:
            with self.emitting_at_end_of(hoist):
                shared = self.divisor_reciprocal(divisor, constant, ty, signed)
            self.reciprocals[recip_key] = shared
        if shared is None:
            shared = self.divisor_reciprocal(divisor, constant, ty, signed)
            if key[2] is not None:
                self.reciprocals[key] = shared
        d, d_abs, recip = shared
        # div and rem of the same operands in a block share one quotient and remainder
        pair_key = key + (ins.srcs[0].id if isinstance(ins.srcs[0], ir.Value) else None,)
        both = pair_key[2] is not None and pair_key[3] is not None and self.divides_both(pair_key[3], key[2], ty)
        done = self.quotients.get(pair_key) if both else None
        if done is None:
            n_abs = n
            if signed:
                n_abs = self.new()
                self.emit("IABS", (), [n_abs, n])
            done = self.unsigned_divide(n_abs, d_abs, recip, remainder and not both)
            if both:
                self.quotients[pair_key] = done
        q, r = done
        result = r if remainder else q
        if signed:
            # the remainder takes the dividend's sign, the quotient the product of the signs
            sign_source = n
            if not remainder and (constant is None or constant < 0):
                sign_source = self.new()
                divisor_bits = self.imm32(constant) if constant is not None else d
                self.emit("LOP3", ("LUT",), [sign_source, n, divisor_bits, RZ, Imm(XOR_AB), NOT_PT])
            positive = self.new_p()
            self.emit("ISETP", ("GE", "AND"), [positive, PT, sign_source, RZ, PT], ndefs=2)
            negated = self.new()
            self.emit("SEL", (), [negated, result, self.negate_reg(result), positive])
            result = negated
        if constant is None:
            nonzero = self.new_p()
            self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, d, RZ, PT], ndefs=2)
            by_zero = self.new()
            self.emit("LOP3", ("LUT",), [by_zero, RZ, d, RZ, Imm(NOT_B), NOT_PT])
            checked = self.new()
            self.emit("SEL", (), [checked, result, by_zero, nonzero])
            result = checked
        self.emit(COPY, (), [self.dst(ins.dests[0]), result], guarded=False)

    def divisor_reciprocal(self, divisor, constant, ty: str, signed: bool):
        """(divisor, |divisor|, reciprocal estimate of |divisor|) registers (immediates for
        a constant divisor)."""
        if constant is not None:
            d = d_abs = Imm(abs(constant))
        else:
            d = d_abs = self.as_reg(self.extend(divisor, ty))
            if not isinstance(d, VOp):          # a zero divisor (RZ): ptxas's ~0 result
                d = d_abs = self.new()
                self.move(d, RZ)
            if signed:
                d_abs = self.new()
                self.emit("IABS", (), [d_abs, d])
        return d, d_abs, self.reciprocal_estimate(d_abs)

    def negate_reg(self, x: VOp) -> VOp:
        t = self.new()
        self.emit("IADD3", (), [t, RZ, VOp(x.reg, neg=True), RZ])
        return t

    def divides_both(self, dividend: int, divisor, ty: str) -> bool:
        """Whether the function has both `div` and `rem` of these operands (then one
        selection computes the quotient and the remainder for both)."""
        if self.divrem_pairs is None:
            seen: dict[tuple, set[str]] = {}
            for b in self.fn.blocks:
                for i in b.instrs:
                    if i.opcode in ("div", "rem") and i.type and ir.TYPES[i.type][0] in "su" \
                            and isinstance(i.srcs[0], ir.Value):
                        dk = divisor_key(i.srcs[1])
                        seen.setdefault((i.srcs[0].id, dk, i.type), set()).add(i.opcode)
            self.divrem_pairs = {k for k, ops in seen.items() if len(ops) == 2}
        return (dividend, divisor, ty) in self.divrem_pairs

    def reciprocal_estimate(self, d: VOp) -> VOp:
        """2^32 / d less a little, for d != 0: MUFU.RCP of d rounded up, scaled, and one
        Newton step in integer arithmetic (the addend as the high word of a pair)."""
        f = self.new()
        self.emit("I2F", ("U32", "RP"), [f, d])
        self.emit("MUFU", ("RCP",), [f, f])
        self.emit("IADD3", (), [f, f, Imm(0x0FFFFFFE), RZ])
        q = self.new()
        self.emit("F2I", ("FTZ", "U32", "TRUNC", "NTZ"), [q, f])
        e = self.new()
        if isinstance(d, Imm):
            self.emit("IMAD", (), [e, q, self.imm32(-d.value), RZ])
        else:
            minus_d = self.new()
            self.emit("IADD3", (), [minus_d, RZ, VOp(d.reg, neg=True), RZ])
            self.emit("IMAD", (), [e, minus_d, q, RZ])
        pair = VOp(self.mf.new_vreg("R", 2))
        self.emit(IMPLICIT_DEF, (), [pair], guarded=False)
        self.move(VOp(pair.reg, 0), RZ)
        self.emit(COPY, (), [VOp(pair.reg, 1), q], guarded=False)
        recip = self.new()
        self.emit("IMAD", ("HI", "U32"), [recip, q, e, pair])
        return recip

    def unsigned_divide(self, n: VOp, d: VOp, recip: VOp, remainder: bool) -> tuple[VOp, VOp]:
        """(quotient, remainder) registers of n / d for d != 0 (garbage for d == 0), from
        d's reciprocal estimate: the quotient from its product with n, then at most two
        corrections."""
        q = self.new()
        self.emit("IMAD", ("HI", "U32"), [q, recip, n, RZ])
        r = self.new()
        if isinstance(d, Imm):
            self.emit("IMAD", (), [r, q, self.imm32(-d.value), n])
            minus_d = self.imm32(-d.value)
        else:
            minus_q = self.new()
            self.emit("IADD3", (), [minus_q, RZ, VOp(q.reg, neg=True), RZ])
            self.emit("IMAD", (), [r, d, minus_q, n])
            minus_d = VOp(d.reg, neg=True)
        for _ in range(2):        # at most two corrections
            p = self.new_p()
            self.emit("ISETP", ("GE", "U32", "AND"), [p, PT, r, d, PT], ndefs=2)
            self.guarded(p, False, "IADD3", (), [r, r, minus_d, RZ])
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
        kind = slow_paths.kind_of(ins)        # (None for a constant divisor)
        if kind is not None and self.divrem_key(ins) is None and self.calls_slow_path(kind):
            # ptxas's form: a call of the kernel's one copy (ptx2sass/slow_paths.py), whose
            # body is the expansion below
            n, d, result = self.pair_of(ins.srcs[0]), self.pair_of(ins.srcs[1]), self.new_pair()
            self.call_slow_path(kind, [n, d], result)
            return self.write_pair(ins.dests[0], result)
        # div and rem of the same operands in a block share one unsigned division (ptxas
        # calls its subroutine twice; one straight-line expansion gives both results)
        key = self.divrem_key(ins)
        done = self.quotients.get(key) if key is not None else None
        if done is None:
            n, d = self.pair_of(ins.srcs[0]), self.pair_of(ins.srcs[1])
            n_orig, d_orig = n, d
            magnitude = self.constant_divisor64(ins.srcs[1], signed)
            if signed:
                n_neg, d_neg = self.new_p(), self.new_p()
                self.emit("ISETP", ("LT", "AND"), [n_neg, PT, VOp(n.reg, 1), RZ, PT], ndefs=2)
                n = self.absolute64(n, n_neg)
                if magnitude is None:
                    self.emit("ISETP", ("LT", "AND"), [d_neg, PT, VOp(d.reg, 1), RZ, PT], ndefs=2)
                    d = self.absolute64(d, d_neg)
                elif magnitude != ins.srcs[1].value & (1 << 64) - 1:
                    d = self.pair_of(ir.Const(magnitude, "u64"))
            q, r = self.newton_divide64(n, d, magnitude)
            done = (n_orig, d_orig, d, q, r, magnitude)
            if key is not None:
                self.quotients[key] = done
        n_orig, d_orig, d, q, r, magnitude = done
        result = r if remainder else q
        if remainder and not signed and key is not None and magnitude is None:
            result = self.pair_of_copy(result)      # written under a guard below; q, r shared
        if signed:
            # the signs again, from the operands, so no predicate lives across the division
            n_neg, d_neg = self.new_p(), self.new_p()
            # a constant divisor's sign is known: the quotient's sign is the dividend's, or not
            flip = magnitude is not None and not remainder and ins.srcs[1].value >> 63 & 1
            self.emit("ISETP", ("GE" if flip else "LT", "AND"), [n_neg, PT, VOp(n_orig.reg, 1), RZ, PT],
                      ndefs=2)
            negate = n_neg
            if not remainder and magnitude is None:
                self.emit("ISETP", ("LT", "AND"), [d_neg, PT, VOp(d_orig.reg, 1), RZ, PT], ndefs=2)
                negate = self.new_p()
                self.emit("PLOP3", ("LUT",), [negate, PT, n_neg, d_neg, PT, Imm(0x3C), Imm(0)], ndefs=2)
            result = self.negate64_where(result, negate)
        if remainder and magnitude is None:    # by zero: all ones, as ptxas's subroutine gives
            low, zero = self.new_p(), self.new_p()
            self.emit("ISETP", ("EQ", "U32", "AND"), [low, PT, VOp(d.reg, 0), RZ, PT], ndefs=2)
            self.emit("ISETP", ("EQ", "U32", "AND", "EX"), [zero, PT, VOp(d.reg, 1), RZ, PT, low],
                      ndefs=2)
            for k in range(2):
                self.guarded(zero, False, "IADD3", (), [VOp(result.reg, k), RZ, Imm(0xFFFFFFFF), RZ])
        self.write_pair(ins.dests[0], result)

    def write_pair(self, out, result: VOp) -> None:
        self.begin_wide(out)
        for k in range(2):
            self.emit(COPY, (), [self.dst(out, k), VOp(result.reg, k)], guarded=False)

    def divrem_key(self, ins):
        """The key under which a 64-bit div and rem of the same operands in this block share
        their division, or None when the function has not both."""
        n, d = ins.srcs
        if not isinstance(n, ir.Value):
            return None
        dk = divisor_key(d)
        if dk is None or not self.divides_both(n.id, dk, ins.type):
            return None
        return (id(self.current), ins.type, dk, n.id)

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

    def constant_divisor64(self, divisor, signed: bool) -> int | None:
        """A non-zero constant divisor's magnitude (unsigned), else None."""
        if not isinstance(divisor, ir.Const) or not isinstance(divisor.value, int):
            return None
        v = divisor.value & (1 << 64) - 1
        if v == 0:
            return None
        return (1 << 64) - v if signed and v >> 63 else v

    def newton_divide64(self, n: VOp, d: VOp, constant: int | None = None) -> tuple[VOp, VOp]:
        """(quotient, remainder) pairs of n / d, unsigned. A non-zero `constant` d's estimate
        is floor((2^64 - 1) / d), known here: below 2^64/d by less than 1 + 1/d, so the
        quotient from it is short by at most two, as the Newton estimate's."""
        if constant is not None:
            x = self.pair_of(ir.Const(((1 << 64) - 1) // constant, "u64"))
        else:
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
        r = self.add64(n, self.mul_lo64(q, d), negate_b=True)
        for _ in range(2):
            fits = self.at_least64(r, d)
            r = self.select64(fits, self.add64(r, d, negate_b=True), r)
            q = self.select64(fits, self.add64(q, 1), q)
        if constant is not None:
            return q, r
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

    def add64(self, a: VOp, b: VOp | int, negate_b: bool = False) -> VOp:
        """A fresh pair: a + b, or a - b (`negate_b`); `b` a pair or a small constant."""
        out, carry = self.new_pair(), self.new_p()
        if isinstance(b, int):
            b0, b1 = Imm(b), RZ
        else:
            b0, b1 = VOp(b.reg, 0, neg=negate_b), VOp(b.reg, 1, inv=negate_b)
        self.emit("IADD3", (), [VOp(out.reg, 0), carry, VOp(a.reg, 0), b0, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(out.reg, 1), VOp(a.reg, 1), b1, RZ, carry, NOT_PT])
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
