"""Integer arithmetic, logic, shifts, comparisons and selects.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, VOp
from ptx2sass.isel.common import (BOOL_OPS, FLOAT_COMPARE, INT_COMPARE, LUT, NOT_PT, PT,
                                  RZ, _bits, _is_float, _signed)


# a < b is b > a: the comparison with its operands swapped (the symmetric ones map to themselves)
MIRRORED_COMPARE = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "ltu": "gtu", "gtu": "ltu",
                    "leu": "geu", "geu": "leu", "lo": "hi", "hi": "lo", "ls": "hs", "hs": "ls"}



def imad_spelling(b, c) -> tuple:
    """The modifiers nvdisasm prints for a plain `IMAD d, a, b, c` (the encoder takes the text
    as printed): by an immediate 1, `.IADD` (`.MOV` with c = RZ); by another power of two
    below 2^31 but 2^16 with c = RZ, `.SHL`; otherwise none."""
    if not isinstance(b, Imm) or b.text is not None or b.neg:
        return ()
    c_zero = isinstance(c, Reg) and c.is_zero
    factor = b.value & 0xFFFFFFFF
    if factor == 1:
        return ("MOV",) if c_zero else ("IADD",)
    if c_zero and factor & (factor - 1) == 0 and factor < 0x80000000 and factor != 0x10000:
        return ("SHL",)            # (nvdisasm prints 2^31 as `IMAD R, R, -0x80000000, RZ` and
    return ()                      # 2^16 as a plain IMAD, on sm_75 through sm_120)

class IntegerSelection:
    # ------------------------------------------------------------------ integer arithmetic
    def in_place(self, op) -> bool:
        """An operand the second source slot can take as it is (immediate or c[0x0][…])."""
        return isinstance(op, ir.Const) or (isinstance(op, ir.Value) and op.id in self.param_values)

    def two_sources(self, ins, commutative: bool = True):
        a, b = ins.srcs[0], ins.srcs[1]
        if commutative and self.in_place(a) and not self.in_place(b):
            a, b = b, a
        return a, b

    def sel_add(self, ins):
        ty = ins.type
        if ty in ("u16x2", "s16x2"):
            # sm_90+ (the frontend refuses them below): one VIADD.16x2 adding each 16-bit half,
            # as ptxas (both operands registers: ptxas refuses an immediate)
            a, b = self.two_sources(ins)
            self.emit("VIADD", ("16x2",), [self.dst(ins.dests[0]), self.as_reg(self.reg_part(a)),
                                           self.as_reg(self.reg_part(b))])
            return
        if _is_float(ty):
            return self.float_binary(ins, "FADD")
        if ins.modifiers == ("sat",) and ty == "s32":
            return self.add_sat(ins)
        if "cc" in ins.modifiers:
            return self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=False, carry_in=False)
        if "sat" in ins.modifiers:
            raise self.unsupported(f"`add.{'.'.join(ins.modifiers)}`")
        a, b = self.two_sources(ins)
        self.int_add(ins.dests[0], a, b, negate_b=False)

    def sel_sub(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.float_binary(ins, "FADD", negate_b=True)
        if "cc" in ins.modifiers:
            return self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=True, carry_in=False)
        if ins.modifiers == ("sat",) and ty == "s32":
            return self.add_sat(ins, negate_b=True)
        if "sat" in ins.modifiers:
            raise self.unsupported(f"`sub.{'.'.join(ins.modifiers)}`")
        self.int_add(ins.dests[0], ins.srcs[0], ins.srcs[1], negate_b=True)

    def add_sat(self, ins, negate_b: bool = False):
        x, y = ins.srcs[0], ins.srcs[1]
        zero = lambda v: isinstance(v, ir.Const) and v.value == 0   # noqa: E731
        if zero(y) or (zero(x) and not negate_b):      # a ± 0 cannot overflow
            self.move(self.dst(ins.dests[0]), self.part_of(x if zero(y) else y, 0))
            return
        self.saturating_sum(self.dst(ins.dests[0]), self.reg_part(x), self.reg_part(y), negate_b)

    def saturating_sum(self, d, a: VOp, b: VOp, negate_b: bool = False) -> None:
        """Signed saturating a + b (or a - b) as ptxas does it: the wrapped sum, then
        overflow detected from the operands' and the sum's sign bits."""
        if not isinstance(a, VOp):       # RZ (0 - b): the sign test reads a register
            a = VOp(self.mf.new_vreg())
            self.move(a, RZ)
        if not isinstance(b, VOp):       # RZ or an immediate (mad.hi.sat's addend 0) likewise
            t = VOp(self.mf.new_vreg())
            self.move(t, b)
            b = t
        if self.arch.saturating_viadd:
            self.emit("VIADD", ("S32", "ISAT"), [d, a, self.negate(b) if negate_b else b])
            return
        s = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [s, a, self.negate(b) if negate_b else b, RZ])
        self.saturate_sum(d, a, b, s, negate_b)

    def saturate_sum(self, d, a: VOp, b: VOp, s: VOp, negate_b: bool) -> None:
        """d = the wrapped sum s of a + b (or a - b, with or without a carry in) clamped
        to the s32 range where the operands' and the sum's sign bits say it overflowed."""
        pos, neg = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        sign = lambda v: VOp(v.reg, v.part, suffix=("SIGN",))   # noqa: E731
        # LUT index (a, b, s) sign bits. add: + + - overflows up (bit 1), - - + down (bit 6);
        # sub: + - - up (bit 3), - + + down (bit 4)
        up, down = (0x8, 0x10) if negate_b else (0x2, 0x40)
        self.emit("PLOP3", ("LUT",), [pos, PT, sign(a), sign(b), sign(s), Imm(up), Imm(0)], ndefs=2)
        self.emit("PLOP3", ("LUT",), [neg, PT, sign(a), sign(b), sign(s), Imm(down), Imm(0)], ndefs=2)
        t = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [t, s, Imm(0x7FFFFFFF), VOp(pos.reg, inv=True)])
        self.emit("SEL", (), [d, t, Imm(0x80000000), VOp(neg.reg, inv=True)])

    def int_add(self, d: ir.Value, a, b, negate_b: bool) -> None:
        r = self.vreg(d)
        if r.width == 1:
            ra = self.reg_part(a, 0)
            sb = self.part_of(b, 0)
            if negate_b:
                sb = self.negate(sb)
            self.emit("IADD3", (), [self.dst(d), ra, sb, RZ])
            return
        if isinstance(b, ir.Const) and negate_b:
            b, negate_b = ir.Const((-b.value) & 0xFFFFFFFFFFFFFFFF, b.type), False
        self.begin_wide(d)
        carry = VOp(self.mf.new_vreg("P"))
        lo_b = self.part_of(b, 0)
        hi_b = self.part_of(b, 1)
        if negate_b and isinstance(lo_b, Reg) and lo_b.is_zero:
            # b's low word is known zero (`shl.b64 b, x, 40`): a + ~0 + 1 always carries, so
            # the low word is a's and the high word a.hi - b.hi (an IADD3 with no carry-in;
            # the carry-chain form below would add ~b.hi without the +1)
            self.move(self.dst(d, 0), self.reg_part(a, 0))
            self.emit("IADD3", (), [self.dst(d, 1), self.reg_part(a, 1), self.negate(hi_b), RZ])
            return
        if negate_b:   # a - b = a + ~b + 1: the low half adds -b.lo, the high half ~b.hi + carry
            lo_b = self.negate(lo_b)
            hi_b = self.invert(self.reg_part(b, 1))
        self.emit("IADD3", (), [self.dst(d, 0), carry, self.reg_part(a, 0), lo_b, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [self.dst(d, 1), self.reg_part(a, 1), hi_b, RZ, carry, NOT_PT])

    def negate(self, op):
        if isinstance(op, VOp):
            return VOp(op.reg, op.part, neg=not op.neg)
        if isinstance(op, Imm):
            return Imm((-op.value) & 0xFFFFFFFF)
        if isinstance(op, Reg) and op.is_zero:
            return op
        if isinstance(op, ConstRef):
            return ConstRef(op.bank, op.offset, neg=not op.neg, reloc=op.reloc)
        raise self.unsupported("negating this operand")

    def invert(self, op):
        if isinstance(op, VOp):
            return VOp(op.reg, op.part, inv=not op.inv)
        if isinstance(op, Reg) and op.is_zero:
            return Imm(0xFFFFFFFF)
        raise self.unsupported("inverting this operand")

    def sel_mul(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.float_binary(ins, "FMUL")
        mode = next((m for m in ins.modifiers if m in ("lo", "hi", "wide")), "lo")
        a, b = self.two_sources(ins)
        d = ins.dests[0]
        unsigned = ("U32",) if not _signed(ty) else ()
        bits = _bits(ty)
        if bits == 64 and mode == "lo":
            return self.mul64(d, a, b, None)
        if bits == 64 and mode == "hi":
            return self.mul_hi64(d, a, b, _signed(ty))
        if bits > 32:
            raise self.unsupported(f"`mul.{mode}.{ty}`")
        if bits < 32 and mode != "lo":
            a, b = self.extend(a, ty), self.extend(b, ty)
            if mode == "wide":
                self.imad((), self.dst(d), self.as_reg(a), b, RZ)
                return
            # mul.hi of 8/16-bit values: the extended operands' 32-bit product shifted down
            # by the width, arithmetically when signed (ptxas: IMAD, then SHF.R.S32/U32.HI).
            t = VOp(self.mf.new_vreg())
            self.imad((), t, self.as_reg(a), b, RZ)
            shift = ("R", "S32" if _signed(ty) else "U32", "HI")
            self.emit("SHF", shift, [self.dst(d), RZ, Imm(bits), t])
            return
        ra, sb = self.reg_part(a), self.part_of(b, 0)
        if mode == "lo":
            self.imad((), self.dst(d), ra, sb, RZ)
        elif mode == "hi":
            self.emit("IMAD", ("HI",) + unsigned, [self.dst(d), ra, sb, RZ])
        else:
            self.emit("IMAD", ("WIDE",) + unsigned, [self.dst(d), ra, sb, RZ])

    def mul_hi64(self, d, a, b, signed: bool) -> None:
        hi = self.mul_hi64_pair(a, b, signed)
        self.begin_wide(d)
        for k in range(2):        # guarded as the PTX instruction: the result lands only where it holds
            self.emit(COPY, (), [self.dst(d, k), VOp(hi.reg, k)])

    def mul_hi64_pair(self, a, b, signed: bool) -> VOp:
        """A fresh pair: the high 64 bits of a 64x64 product, as ptxas builds it from four 32x32 wide
        products: the two cross terms summed with their carry, the low product's high word
        added for its carry only, then the high product with all of it. Signed: subtract
        the other operand from the unsigned result for each negative one (tested at run
        time unless its sign is known: a constant's costs no compare and no select)."""
        pair = lambda: VOp(self.mf.new_vreg("R", 2))   # noqa: E731
        # a constant factor goes in IMAD.WIDE's b slot as immediates (ptxas's
        # `IMAD.WIDE.U32 R8, R5, -0x3b13b13b, RZ`), holding no registers; the other in a
        x, y = (b, a) if isinstance(a, ir.Const) and not isinstance(b, ir.Const) else (a, b)
        word = (lambda v, k: self.part_of(v, k)) if isinstance(y, ir.Const) else self.reg_part
        hi = self.unsigned_mul_hi64(self.reg_part(x, 0), self.reg_part(x, 1), word(y, 0), word(y, 1))
        if signed:
            for x, y in ((a, b), (b, a)):      # if y < 0: hi -= x
                sign = self._known_sign64(y)
                if sign == 0:
                    continue
                negative = None
                if sign is None:
                    negative = VOp(self.mf.new_vreg("P"))
                    self.emit("ISETP", ("LT", "AND"), [negative, PT, self.reg_part(y, 1), RZ, PT], ndefs=2)
                diff, borrow = pair(), VOp(self.mf.new_vreg("P"))
                self.emit(IMPLICIT_DEF, (), [diff], guarded=False)
                if isinstance(x, ir.Const) and x.value & 0xFFFFFFFF:
                    # a constant's -x0 and ~x1 as immediates (ptxas's `IADD3 R, P0, PT, R,
                    # 0x3b13b13b, RZ; IADD3.X R, PT, PT, R, -0x4ec4ec4f, RZ, P0`)
                    neg_x0 = self.imm32(-x.value & 0xFFFFFFFF)
                    inv_x1 = ~(x.value >> 32) & 0xFFFFFFFF
                    inv_x1 = self.imm32(inv_x1) if inv_x1 else RZ
                else:
                    x0 = self.reg_part(x, 0)
                    if not isinstance(x0, VOp):       # a zero low word still borrows: ~0 + 1
                        x0 = VOp(self.mf.new_vreg())
                        self.move(x0, RZ)
                    neg_x0, inv_x1 = self.negate(x0), self.invert(self.reg_part(x, 1))
                self.emit("IADD3", (), [VOp(diff.reg, 0), borrow, VOp(hi.reg, 0), neg_x0, RZ], ndefs=2)
                self.emit("IADD3", ("X",), [VOp(diff.reg, 1), VOp(hi.reg, 1), inv_x1, RZ, borrow, NOT_PT])
                if negative is None:           # a negative constant: always subtracted
                    hi = diff
                    continue
                chosen = pair()
                self.emit(IMPLICIT_DEF, (), [chosen], guarded=False)
                for k in range(2):
                    self.emit("SEL", (), [VOp(chosen.reg, k), VOp(diff.reg, k), VOp(hi.reg, k),
                                          negative])
                hi = chosen
        return hi

    def _known_sign64(self, y) -> int | None:
        """The sign bit of a 64-bit operand where selection knows it (a constant, a high
        word written zero), else None."""
        if isinstance(y, ir.Const):
            return (y.value >> 63) & 1
        return 0 if self.is_zero_word(y, 1) else None

    def unsigned_mul_hi64(self, a0, a1, b0, b1) -> VOp:
        """A fresh pair holding the high 64 bits of (a1:a0) * (b1:b0), unsigned."""
        pair = lambda: VOp(self.mf.new_vreg("R", 2))   # noqa: E731
        t, u, low, top = pair(), pair(), pair(), pair()
        self.emit("IMAD", ("WIDE", "U32"), [t, a1, b0, RZ])
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IMAD", ("WIDE", "U32"), [u, carry, a0, b1, t], ndefs=2)
        self.emit(IMPLICIT_DEF, (), [top], guarded=False)
        self.emit(COPY, (), [VOp(top.reg, 0), VOp(u.reg, 1)], guarded=False)
        self.emit("IADD3", ("X",), [VOp(top.reg, 1), RZ, RZ, RZ, carry, NOT_PT])
        self.emit("IMAD", ("WIDE", "U32"), [low, a0, b0, RZ])
        carry2, scratch = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [scratch, carry2, VOp(low.reg, 1), VOp(u.reg, 0), RZ], ndefs=2)
        hi = pair()
        self.emit("IMAD", ("WIDE", "U32", "X"), [hi, a1, b1, top, carry2])
        return hi

    def imad(self, mods, d, a, b, c) -> None:
        """IMAD d = a * b + c; a zero factor has no IMAD form, and needs none.

        With an immediate factor nvdisasm prints some plain IMADs under an alias
        (`IMAD.IADD R, R, 0x1, R`, `IMAD.SHL R, R, 0x4, RZ`) and
        the encoder takes the text as printed, so the alias is spelled here."""
        if isinstance(b, Reg) and b.is_zero or isinstance(a, Reg) and a.is_zero:
            self.emit("IADD3", (), [d, self.as_reg(c) if not isinstance(c, Reg) else c, RZ, RZ])
            return
        if isinstance(b, Imm) and b.value == 0:
            self.emit("IADD3", (), [d, self.as_reg(c) if not isinstance(c, Reg) else c, RZ, RZ])
            return
        if not mods:
            mods = imad_spelling(b, c)
            if mods == ("MOV",):           # printed `IMAD.MOV R, R, 0x1, RZ`: a plain move
                self.move(d, a)
                return
        self.emit("IMAD", mods, [d, a, b, c])

    def as_reg(self, op):
        """`op` in a register: immediates and constant-bank words are moved into one."""
        if isinstance(op, (Imm, ConstRef)):
            t = VOp(self.mf.new_vreg())
            self.move(t, op)
            return t
        return op

    def mul64(self, d, a, b, c) -> None:
        """64-bit multiply(-add) from 32-bit pieces: lo*lo wide, plus both cross products
        into the high half."""
        self.begin_wide(d)
        t = VOp(self.mf.new_vreg("R", 2))
        if isinstance(c, ir.Const) and c.value & 0xFFFFFFFFFFFFFFFF:     # the addend in a pair
            acc = VOp(self.mf.new_vreg("R", 2))
            self.emit(IMPLICIT_DEF, (), [acc], guarded=False)
            for half in range(2):
                self.move(VOp(acc.reg, half), self.part_of(c, half))
        elif isinstance(c, ir.Const):
            acc = RZ
        else:
            acc = RZ if c is None else VOp(self.vreg(c)) if isinstance(c, ir.Value) else None
        if acc is None:
            raise self.unsupported("`mad.lo.64` with this addend")
        self.emit("IMAD", ("WIDE", "U32"), [t, self.reg_part(a, 0), self.part_of(b, 0), acc])
        b1 = self.part_of(b, 1)
        if isinstance(b1, Reg) and b1.is_zero or isinstance(b1, Imm) and b1.value == 0:
            hi = VOp(t.reg, 1)              # a zero high factor adds nothing (a 32-bit constant)
        else:
            hi = VOp(self.mf.new_vreg())
            self.imad((), hi, self.reg_part(a, 0), b1, VOp(t.reg, 1))
        self.imad((), self.dst(d, 1), self.reg_part(a, 1), self.part_of(b, 0), hi)
        self.emit("MOV", (), [self.dst(d, 0), VOp(t.reg, 0)])

    def sel_mad(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.sel_fma(ins)
        mode = next((m for m in ins.modifiers if m in ("lo", "hi", "wide")), "lo")
        if "cc" in ins.modifiers:
            return self.mad_carry(ins, carry_in=False)
        if "sat" in ins.modifiers:       # mad.hi.sat.s32: IMAD.HI, then a saturating add
            t = VOp(self.mf.new_vreg())
            a, b, c = ins.srcs
            self.emit("IMAD", ("HI",), [t, self.reg_part(a), self.reg_part(b), RZ])
            self.saturating_sum(self.dst(ins.dests[0]), t, self.reg_part(c))
            return
        a, b, c = ins.srcs
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        d = ins.dests[0]
        bits = _bits(ty)
        unsigned = ("U32",) if not _signed(ty) else ()
        if bits == 64 and mode == "lo":
            return self.mul64(d, a, b, c)
        if bits == 64 and mode == "hi":
            return self.mad_hi64(d, a, b, c, _signed(ty))
        if bits == 16 and mode == "lo":     # the low 16 bits do not depend on the high ones
            self.imad((), self.dst(d), self.reg_part(a), self.part_of(b, 0), self.reg_part(c))
            return
        if bits == 16:
            # the extended operands' 32-bit product: .wide adds c to all of it, .hi adds c to
            # its high half (LEA.HI: c + product >> 16; only the low 16 bits are the result)
            a, b = self.extend(a, ty), self.extend(b, ty)
            if mode == "wide":
                self.imad((), self.dst(d), self.as_reg(a), b, self.reg_part(c))
                return
            t = VOp(self.mf.new_vreg())
            self.imad((), t, self.as_reg(a), b, RZ)
            self.emit("LEA", ("HI",), [self.dst(d), t, self.reg_part(c), RZ, Imm(16)])
            return
        if bits != 32:
            raise self.unsupported(f"`mad.{mode}.{ty}`")
        ra, sb = self.reg_part(a), self.part_of(b, 0)
        if mode == "wide":
            if isinstance(c, ir.Value) and c.id in self.param_values:   # c[0x0][…] as the addend
                self.emit("IMAD", ("WIDE",) + unsigned, [self.dst(d), ra, self.reg_part(b),
                                                         self.param_values[c.id][0]])
                return
            self.emit("IMAD", ("WIDE",) + unsigned, [self.dst(d), ra, sb, self.wide_reg(c)])
        elif mode == "hi":
            # IMAD.HI adds a register pair to the 64-bit product: {0, c} adds c to the high word
            pair = VOp(self.mf.new_vreg("R", 2))
            self.emit(IMPLICIT_DEF, (), [pair], guarded=False)
            self.move(VOp(pair.reg, 0), RZ)
            self.move(VOp(pair.reg, 1), self.part_of(c, 0))
            self.emit("IMAD", ("HI",) + unsigned, [self.dst(d), ra, sb, pair])
        else:
            # a register factor leaves the addend slot free for an immediate (`IMAD R, R, R, -0x3`)
            addend = self.part_of(c, 0) if isinstance(c, ir.Const) and isinstance(sb, VOp) else None
            self.imad((), self.dst(d), ra, sb, addend if addend is not None else self.reg_part(c))

    def mad_hi64(self, d, a, b, c, signed: bool) -> None:
        """The high 64 bits of a * b (as mul.hi), plus c with a carry between the halves."""
        hi = self.mul_hi64_pair(a, b, signed)
        self.begin_wide(d)
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [self.dst(d, 0), carry, VOp(hi.reg, 0), self.part_of(c, 0), RZ],
                  ndefs=2)
        self.emit("IADD3", ("X",), [self.dst(d, 1), VOp(hi.reg, 1), self.part_of(c, 1), RZ, carry,
                                    NOT_PT])

    def wide_reg(self, op):
        if isinstance(op, ir.Value):
            return VOp(self.vreg(op))
        if isinstance(op, ir.Const) and op.value == 0:
            return RZ
        if isinstance(op, ir.Const) and self.guard is None:
            # one pair per constant and machine block, as reg_part keeps 32-bit ones
            key = ("pair", id(self.current), op.value & (1 << 64) - 1)
            if key not in self.const_regs:
                self.const_regs[key] = self.pair_of(op)
            return self.const_regs[key]
        return self.pair_of(op)

    def sel_neg(self, ins):
        ty = ins.type
        d, a = ins.dests[0], ins.srcs[0]
        if ty in self.HALF_TYPES:
            return self.half_sign(ins, neg=True)
        # floats: -0 + -a, which is -a for every a, signed zeros included (a = +0 gives -0:
        # the sign flips even when a is the zero register, so `negate_float` writes -RZ)
        if ty == "f64":               # ptxas: DADD d, -RZ, -a
            self.emit("DADD", (), [self.dst(d), Reg("R", 255, neg=True), self.negate_float(self.wide_reg(a))])
            return
        if _is_float(ty):
            if _bits(ty) != 32:
                raise self.unsupported(f"`neg.{ty}`")
            mods = ("FTZ",) if "ftz" in ins.modifiers else ()
            self.emit("FADD", mods, [self.dst(d), self.negate_float(self.reg_part(a)), Reg("R", 255, neg=True)])
            return
        self.int_add(d, ir.Const(0, ty), a, negate_b=True) if _bits(ty) == 64 else \
            self.emit("IADD3", (), [self.dst(d), self.negate(self.reg_part(a)), RZ, RZ])

    def sel_min(self, ins):
        self.min_max(ins, PT)

    def sel_max(self, ins):
        self.min_max(ins, NOT_PT)

    def min_max(self, ins, which: Reg):
        ty = ins.type
        if ty in ("u16x2", "s16x2") or (ins.modifiers == ("relu",) and ty == "s32"):
            # sm_90+ (the frontend refuses them below): VIMNMX per 16-bit half / with .RELU
            # (IMNMX here; the target's spelling from Target.renamed_opcodes)
            a, b = self.two_sources(ins)
            mods = ((ty.upper().replace("X2", "x2"),) if ty != "s32" else ()) + \
                (("RELU",) if "relu" in ins.modifiers else ())
            self.emit("IMNMX", mods, [self.dst(ins.dests[0]), self.as_reg(self.reg_part(a)),
                                      self.reg_part(b), which])
            return
        if _is_float(ty) or ty in ("bf16", "bf16x2"):
            return self.float_min_max(ins, which)
        if ins.modifiers:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ty}`")
        if _bits(ty) == 64:
            return self.min_max64(ins, which)
        if _bits(ty) > 32:
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        a, b = self.two_sources(ins)
        mods = () if _signed(ty) else ("U32",)
        self.emit("IMNMX", mods, [self.dst(ins.dests[0]), self.as_reg(self.extend(a, ty)),
                                  self.extend(b, ty), which])

    def min_max64(self, ins, which: Reg):
        """ptxas: a 64-bit compare (ISETP lo, then .EX on hi) and a SEL per half."""
        op = "LT" if which == PT else "GT"
        unsigned = () if _signed(ins.type) else ("U32",)
        a, b = self.two_sources(ins)
        lo = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", (op, "U32", "AND"), [lo, PT, self.reg_part(a, 0), self.part_of(b, 0), PT],
                  ndefs=2)
        p = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", (op,) + unsigned + ("AND", "EX"),
                  [p, PT, self.reg_part(a, 1), self.part_of(b, 1), PT, lo], ndefs=2)
        d = ins.dests[0]
        self.begin_wide(d)
        for k in range(2):
            self.emit("SEL", (), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), p])

    # ------------------------------------------------------------------ logic and shifts
    def sel_and(self, ins):
        self.logic(ins, "and")

    def sel_or(self, ins):
        self.logic(ins, "or")

    def sel_xor(self, ins):
        self.logic(ins, "xor")

    def logic(self, ins, op: str):
        d = ins.dests[0]
        r = self.vreg(d)
        a, b = self.two_sources(ins)
        if r.cls == "P":
            pa, pb = self.pred_operand(a), self.pred_operand(b)
            self.emit("PLOP3", ("LUT",), [VOp(r), PT, pa, pb, PT, Imm(LUT[op]), Imm(0)])
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            zero = r.width == 2 and ((op == "and" and (self.is_zero_word(a, k) or self.is_zero_word(b, k)))
                                     or (self.is_zero_word(a, k) and self.is_zero_word(b, k)))
            if zero:
                self.move(self.dst(d, k), RZ)
                self.note_zero_word(d, k)
                continue
            self.emit("LOP3", ("LUT",), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), RZ,
                                         Imm(LUT[op]), NOT_PT])

    def pred_operand(self, op):
        if isinstance(op, ir.Value):
            return VOp(self.vreg(op))
        if isinstance(op, ir.Const):
            return PT if op.value else Reg("P", 7, inv=True)
        raise self.unsupported("this predicate operand")

    def sel_not(self, ins):
        d, a = ins.dests[0], ins.srcs[0]
        r = self.vreg(d)
        if r.cls == "P":
            self.emit("PLOP3", ("LUT",), [VOp(r), PT, self.pred_operand(a), PT, PT, Imm(0x08), Imm(0)])
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("LOP3", ("LUT",), [self.dst(d, k), RZ, self.reg_part(a, k), RZ, Imm(0x33), NOT_PT])

    def sel_shl(self, ins):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        if _bits(ins.type) == 64:
            return self.shift64(ins, left=True)
        self.emit("SHF", ("L", "U32"), [self.dst(d), self.reg_part(a), self.shift_amount(n, 32), RZ])

    def shift_amount(self, n, limit: int):
        if isinstance(n, ir.Const):
            return Imm(min(n.value & 0xFFFFFFFF, limit))
        return self.part_of(n, 0)

    def sel_shr(self, ins):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        ty = ins.type
        if _bits(ty) == 64:
            return self.shift64(ins, left=False)
        mode = ("S32",) if _signed(ty) else ("U32",)
        src = self.as_reg(self.extend(a, ty))
        self.emit("SHF", ("R",) + mode + ("HI",), [self.dst(d), RZ, self.shift_amount(n, 32), src])

    def shift64(self, ins, left: bool):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        if not isinstance(n, ir.Const):
            return self.shift64_by_register(ins, left)
        s = n.value & 0xFFFFFFFF
        signed = _signed(ins.type)
        self.begin_wide(d)
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        if s == 0:
            self.move(self.dst(d, 0), lo)
            self.move(self.dst(d, 1), hi)
        elif left and s < 32:
            self.emit("SHF", ("L", "U64", "HI"), [self.dst(d, 1), lo, Imm(s), hi])
            self.emit("SHF", ("L", "U32"), [self.dst(d, 0), lo, Imm(s), RZ])
        elif left and s == 32:          # the low word moves up: a copy, not a shift by 0
            self.move(self.dst(d, 1), lo)
            self.move(self.dst(d, 0), RZ)
            self.note_zero_word(d, 0)
        elif left:
            self.emit("SHF", ("L", "U32"), [self.dst(d, 1), lo, Imm(min(s - 32, 32)), RZ])
            self.move(self.dst(d, 0), RZ)
            self.note_zero_word(d, 0)
        elif s < 32:
            self.emit("SHF", ("R", "U64"), [self.dst(d, 0), lo, Imm(s), hi])
            self.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [self.dst(d, 1), RZ, Imm(s), hi])
        else:
            mode = "S32" if signed else "U32"
            if s == 32:
                self.move(self.dst(d, 0), hi)
            else:
                self.emit("SHF", ("R", mode, "HI"), [self.dst(d, 0), RZ, Imm(min(s - 32, 32)), hi])
            if signed:
                self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1f), hi])
            else:
                self.move(self.dst(d, 1), RZ)
                self.note_zero_word(d, 1)

    def shift64_by_register(self, ins, left: bool):
        """ptxas's pair of funnel shifts: the 64-bit SHF modes take any amount (0..64 and
        beyond, clamped as PTX says), so no range checks are needed."""
        d, a = ins.dests[0], ins.srcs[0]
        amount = ins.srcs[1]
        # a parameter or fixed constant word is read in place (`SHF.L.U32 R, R, c[0x3][..]`)
        n = self.part_of(amount, 0) if self.in_place(amount) else self.reg_part(amount, 0)
        self.begin_wide(d)
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        if left:
            self.emit("SHF", ("L", "U64", "HI"), [self.dst(d, 1), lo, n, hi])
            self.emit("SHF", ("L", "U32"), [self.dst(d, 0), lo, n, RZ])
        else:
            signed = _signed(ins.type)
            self.emit("SHF", ("R", "S64" if signed else "U64"), [self.dst(d, 0), lo, n, hi])
            self.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [self.dst(d, 1), RZ, n, hi])

    def sel_shf(self, ins):
        d, a, b, c = ins.dests[0], *ins.srcs
        left = "l" in ins.modifiers
        wrap = ("W",) if "wrap" in ins.modifiers else ()
        mods = ("L",) + wrap + ("U32", "HI") if left else ("R",) + wrap + ("U32",)
        self.emit("SHF", mods, [self.dst(d), self.reg_part(a), self.part_of(c, 0), self.reg_part(b)])

    def sel_prmt(self, ins):
        mode = tuple(m.upper() for m in ins.modifiers if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"))
        d, a, b, c = ins.dests[0], *ins.srcs
        self.emit("PRMT", mode, [self.dst(d), self.reg_part(a), self.part_of(c, 0), self.reg_part(b)])

    def sel_popc(self, ins):
        if _bits(ins.type) == 64:
            return self.popc64(ins)
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`popc.{ins.type}`")
        self.emit("POPC", (), [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])

    def sel_bfind(self, ins):
        shift = ("SH",) if "shiftamt" in ins.modifiers else ()
        mods = (() if _signed(ins.type) else ("U32",)) + shift
        if _bits(ins.type) == 32:
            self.emit("FLO", mods, [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])
            return
        # 64 bits: FLO of the high word (signed FLO finds the highest bit unlike the sign);
        # where it finds none, FLO.U32 of the low word (inverted for a negative value)
        a = ins.srcs[0]
        hi, lo = self.reg_part(a, 1), self.reg_part(a, 0)
        hi_r, lo_r = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("FLO", mods, [hi_r, hi])
        if _signed(ins.type):
            sign, flipped = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("SHF", ("R", "S32", "HI"), [sign, RZ, Imm(0x1F), hi])
            self.emit("LOP3", ("LUT",), [flipped, lo, sign, RZ, Imm(LUT["xor"]), NOT_PT])
            lo = flipped
        self.emit("FLO", ("U32",) + shift, [lo_r, lo])
        found_hi = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [found_hi, PT, hi_r, Imm(0xFFFFFFFF), PT], ndefs=2)
        d = self.dst(ins.dests[0])
        if not shift:           # a bit of the high word is bit 32 + its index
            t = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [t, hi_r, Imm(0x20), RZ])
            self.emit("SEL", (), [d, t, lo_r, found_hi])
            return
        # shift amounts: the high word's count stands; the low word's is 32 more
        found_lo, t, u = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("ISETP", ("NE", "U32", "AND"), [found_lo, PT, lo_r, Imm(0xFFFFFFFF), PT], ndefs=2)
        self.emit("IADD3", (), [t, lo_r, Imm(0x20), RZ])
        self.emit("SEL", (), [u, t, Imm(0xFFFFFFFF), found_lo])
        self.emit("SEL", (), [d, hi_r, u, found_hi])

    def sel_bmsk(self, ins):
        a, b = ins.srcs
        mods = ("W",) if "wrap" in ins.modifiers else ()
        self.emit("BMSK", mods, [self.dst(ins.dests[0]), self.reg_part(a), self.reg_part(b)])

    def sel_szext(self, ins):
        """SGXT keeps the low b bits, sign- (.s32) or zero-extended (.u32); .W takes b mod 32."""
        a, b = ins.srcs
        mods = (("W",) if "wrap" in ins.modifiers else ()) + (() if _signed(ins.type) else ("U32",))
        n = Imm(b.value & 0xFFFFFFFF) if isinstance(b, ir.Const) and b.value & 0xFFFFFFFF < 256 \
            else self.reg_part(b)
        self.emit("SGXT", mods, [self.dst(ins.dests[0]), self.reg_part(a), n])

    def byte_operand(self, op):
        """The low byte of a position/length operand (PTX reads only bits 0..7)."""
        if isinstance(op, ir.Const):
            return Imm(op.value & 0xFF)
        t = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [t, self.reg_part(op), Imm(0xFF), RZ, Imm(LUT["and"]), NOT_PT])
        return t

    def sel_bfe(self, ins):
        """ptxas: shift the field down (an arithmetic shift for signed types, which also
        fills past the top), then SGXT keeps `len` bits, zero- or sign-extended."""
        if _bits(ins.type) == 64:
            return self.bfe64(ins, _signed(ins.type))
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`bfe.{ins.type}`")
        a, pos, length = ins.srcs
        signed = _signed(ins.type)
        t = VOp(self.mf.new_vreg())
        self.emit("SHF", ("R", "S32" if signed else "U32", "HI"),
                  [t, RZ, self.byte_operand(pos), self.reg_part(a)])
        self.emit("SGXT", () if signed else ("U32",), [self.dst(ins.dests[0]), t, self.byte_operand(length)])

    def sel_bfi(self, ins):
        """ptxas: the field's mask from BMSK, the inserted value shifted into place, and one
        LOP3 choosing between them (a & mask | b & ~mask)."""
        if _bits(ins.type) == 64:
            return self.bfi64(ins)
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`bfi.{ins.type}`")
        a, b, pos, length = ins.srcs
        p, n = self.byte_operand(pos), self.byte_operand(length)
        if isinstance(p, Imm) and isinstance(n, Imm):
            width = min(n.value, 32)
            mask = Imm((((1 << width) - 1) << p.value) & 0xFFFFFFFF) if p.value < 32 else RZ
        else:
            mask = VOp(self.mf.new_vreg())
            self.emit("BMSK", (), [mask, self.as_reg(p), self.as_reg(n)])
        shifted = VOp(self.mf.new_vreg())
        self.emit("SHF", ("L", "U32"), [shifted, self.reg_part(a), p, RZ])
        self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]), shifted, mask, self.reg_part(b),
                                     Imm(0xE2), NOT_PT])

    def sel_brev(self, ins):
        if _bits(ins.type) == 64:
            return self.brev64(ins)
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`brev.{ins.type}`")
        self.emit("BREV", (), [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])

    def sel_clz(self, ins):
        if _bits(ins.type) == 64:
            return self.clz64(ins)
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`clz.{ins.type}`")
        t = VOp(self.mf.new_vreg())
        self.emit("FLO", ("U32",), [t, self.reg_part(ins.srcs[0])])
        self.emit("IADD3", (), [self.dst(ins.dests[0]), self.negate(t), Imm(0x1f), RZ])

    # ------------------------------------------------------------------ compare and select
    def sel_setp(self, ins):
        ty = ins.type
        cmp = next(m for m in ins.modifiers if m in INT_COMPARE or m in FLOAT_COMPARE)
        boolop = next((m for m in ins.modifiers if m in BOOL_OPS), None)
        combine = self.pred_operand(ins.srcs[2]) if boolop else PT
        bool_mod = BOOL_OPS.get(boolop, "AND")
        dests = [VOp(self.vreg(v)) for v in ins.dests]
        second = dests[1] if len(dests) > 1 else PT
        a, b = ins.srcs[0], ins.srcs[1]
        if _is_float(ty) or ty in ("bf16", "bf16x2"):
            if ty == "f64":
                self.emit("DSETP", (FLOAT_COMPARE[cmp], bool_mod),
                          [dests[0], second, self.wide_reg(a), self.wide_reg(b), combine], ndefs=2)
                return
            if ty in ("f16", "bf16", "f16x2", "bf16x2"):
                return self.half_setp(ins, cmp, bool_mod, dests[0], second, combine)
            if _bits(ty) != 32:
                raise self.unsupported(f"`setp.{ty}`")
            ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
            if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
                a, b, cmp = b, a, MIRRORED_COMPARE.get(cmp, cmp)   # the immediate goes second
            self.emit("FSETP", (FLOAT_COMPARE[cmp],) + ftz + (bool_mod,),
                      [dests[0], second, self.reg_part(a), self.fsrc(b), combine], ndefs=2)
            return
        if cmp not in INT_COMPARE:
            raise self.unsupported(f"`setp.{cmp}.{ty}`")
        if self.in_place(a) and (not self.in_place(b) or (
                isinstance(b, ir.Const) and b.value == 0 and not isinstance(a, ir.Const))):
            # the in-place operand goes second; against zero too, where the first slot
            # reads RZ (`ISETP.NE.AND P0, PT, RZ, c[0x3][0x1c0]`, as ptxas): no register
            a, b, cmp = b, a, MIRRORED_COMPARE.get(cmp, cmp)
        op, unsigned = INT_COMPARE[cmp]
        unsigned = unsigned if unsigned is not None else not _signed(ty)
        if _bits(ty) == 64 and self.part_of(a, 1) == RZ and self.part_of(b, 1) == RZ:
            # both high words known zero (a zero-extended value against a 32-bit constant,
            # as ptxas's `ISETP.NE.U32` for `setp.ne.s64 (cvt.u64.u16 x), 0`): the low words
            # decide, unsigned, whatever the signedness
            self.emit("ISETP", (op, "U32", bool_mod),
                      [dests[0], second, self.reg_part(a, 0), self.part_of(b, 0), combine], ndefs=2)
            return
        if _bits(ty) == 64:
            # the .EX compare's second result is the complement (combined likewise): q of p|q
            lo = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", (op, "U32", "AND"), [lo, PT, self.reg_part(a, 0), self.part_of(b, 0), PT],
                      ndefs=2)
            self.emit("ISETP", (op,) + (("U32",) if unsigned else ()) + (bool_mod, "EX"),
                      [dests[0], second, self.reg_part(a, 1), self.part_of(b, 1), combine, lo], ndefs=2)
            return
        a_ext, b_ext = self.extend(a, ty), self.extend(b, ty)
        self.emit("ISETP", (op,) + (("U32",) if unsigned else ()) + (bool_mod,),
                  [dests[0], second, self.as_reg(a_ext), b_ext, combine], ndefs=2)

    def sel_mad24(self, ins):
        """mul24 into a temporary, then + c (saturating for .hi.sat.s32)."""
        t = VOp(self.mf.new_vreg())
        self.sel_mul24(ins, into=t)
        c = ins.srcs[2]
        if "sat" in ins.modifiers:
            self.saturating_sum(self.dst(ins.dests[0]), t, self.reg_part(c))
        else:
            self.emit("IADD3", (), [self.dst(ins.dests[0]), t, self.part_of(c, 0), RZ])

    def sel_mul24(self, ins, into=None):
        """The low 24 bits of each input (sign-extended for .s32) multiplied: .lo keeps bits
        0..31 of the 48-bit product, .hi bits 16..47."""
        hi = "hi" in ins.modifiers
        a, b = ins.srcs[:2]
        dest = into if into is not None else self.dst(ins.dests[0])
        ext = []
        for v in (a, b):
            t = VOp(self.mf.new_vreg())
            if _signed(ins.type):
                self.emit("SGXT", (), [t, self.reg_part(v), Imm(24)])
            else:
                self.emit("LOP3", ("LUT",), [t, self.reg_part(v), Imm(0xFFFFFF), RZ, Imm(LUT["and"]), NOT_PT])
            ext.append(t)
        if not hi:
            self.emit("IMAD", (), [dest, ext[0], ext[1], RZ])
            return
        product = VOp(self.mf.new_vreg("R", 2))
        self.emit("IMAD", ("WIDE",) if _signed(ins.type) else ("WIDE", "U32"), [product, ext[0], ext[1], RZ])
        self.emit("SHF", ("R", "U64"), [dest, VOp(product.reg, 0), Imm(0x10), VOp(product.reg, 1)])

    # `set`'s true value per destination type (false is zero): all ones, or 1.0
    # the value a true compare gives: all ones for integers (of 16 bits too: the high half
    # of a 16-bit value's register is free), 1.0 in the destination's float format
    SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "b32": 0xFFFFFFFF, "u16": 0xFFFFFFFF,
                "s16": 0xFFFFFFFF, "b16": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}

    def sel_set(self, ins):
        """`set` is `setp` into a fresh predicate, then the predicate as a value: all ones
        or zero for an integer destination, 1.0 or +0.0 for f32/f16/bf16 (a guarded `set`
        guards only that last step)."""
        dty, sty = ins.type, ins.types[0] if ins.types else ins.type
        if sty in ("f16x2", "bf16x2"):
            return self.set_halves(ins, sty, dty)
        if dty not in self.SET_TRUE:
            raise self.unsupported(f"`set` into .{dty}")
        if sty.endswith("x2"):
            raise self.unsupported(f"`set` of .{sty}")
        if dty == "f32" and sty == "f32":
            return self.set_float(ins)
        p = self.fn.new_value("pred")
        guard, self.guard = self.guard, None
        self.sel_setp(ir.Instr("setp", dests=[p], srcs=ins.srcs, modifiers=ins.modifiers, type=sty,
                               line=ins.line))
        self.guard = guard
        true = self.fimm(1.0) if dty == "f32" else Imm(self.SET_TRUE[dty])
        self.emit("FSEL" if dty == "f32" else "SEL", (), [self.dst(ins.dests[0]), RZ, true,
                                                          VOp(self.vreg(p), inv=True)])

    def set_float(self, ins) -> None:
        """`set.<cmp>.f32.f32`: one FSET.BF (1.0 or +0.0), as ptxas writes it."""
        cmp = next(m for m in ins.modifiers if m in FLOAT_COMPARE)
        boolop = next((m for m in ins.modifiers if m in BOOL_OPS), None)
        combine = self.pred_operand(ins.srcs[2]) if boolop else PT
        a, b = ins.srcs[0], ins.srcs[1]
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b, cmp = b, a, MIRRORED_COMPARE.get(cmp, cmp)   # the immediate goes second
        mods = ("BF", FLOAT_COMPARE[cmp]) + (("FTZ",) if "ftz" in ins.modifiers else ()) + \
            (BOOL_OPS.get(boolop, "AND"),)
        self.emit("FSET", mods, [self.dst(ins.dests[0]), self.reg_part(a), self.fsrc(b), combine])

    def set_halves(self, ins, sty: str, dty: str) -> None:
        """`set` of f16x2/bf16x2: one result per half, all ones (integer destination) or 1.0
        (a pair destination, HSET2's .BF), in one HSET2 (`.BF16_V2` first for bf16x2, as
        nvdisasm spells it)."""
        if dty not in ("u32", "s32", "b32", sty):
            raise self.unsupported(f"`set` into .{dty}")
        cmp = next(m for m in ins.modifiers if m in FLOAT_COMPARE)
        boolop = next((m for m in ins.modifiers if m in BOOL_OPS), None)
        combine = self.pred_operand(ins.srcs[2]) if boolop else PT
        mods = (("BF16_V2",) if sty == "bf16x2" else ()) + (("BF",) if dty == sty else ()) + \
            (FLOAT_COMPARE[cmp],) + \
            (("FTZ",) if "ftz" in ins.modifiers else ()) + (BOOL_OPS.get(boolop, "AND"),)
        a, b = ins.srcs[0], ins.srcs[1]
        self.emit("HSET2", mods, [self.dst(ins.dests[0]), self.reg_part(a), self.reg_part(b), combine])

    def sel_dp4a(self, ins):
        """Four 8-bit products summed into c: IDP.4A, each input's byte signedness from its type."""
        a_ty, b_ty = ins.type, ins.types[0] if ins.types else ins.type
        self.dot_product(ins, ("4A", f"{a_ty[0].upper()}8", f"{b_ty[0].upper()}8"))

    def sel_dp2a(self, ins):
        """Two 16-bit x 8-bit products (a's halves, b's low or high byte pair) summed into c."""
        a_ty, b_ty = ins.type, ins.types[0] if ins.types else ins.type
        half = "HI" if "hi" in ins.modifiers else "LO"
        self.dot_product(ins, ("2A", half, f"{a_ty[0].upper()}16", f"{b_ty[0].upper()}8"))

    def dot_product(self, ins, mods):
        """IDP takes b from a register or constant bank, never an immediate (ptxas puts
        one in c[0x2]; here it goes through a register)."""
        a, b, c = ins.srcs
        sb = self.part_of(b, 0)
        self.emit("IDP", mods, [self.dst(ins.dests[0]), self.reg_part(a),
                                self.reg_part(b) if isinstance(sb, Imm) else sb, self.reg_part(c)])

    def sel_selp(self, ins):
        d = ins.dests[0]
        a, b, p = ins.srcs
        r = self.vreg(d)
        cond = self.pred_operand(p)
        # the immediate goes in the second slot: `SEL d, RZ, 0x1, !P` for selp 1, 0 (as ptxas)
        if isinstance(a, ir.Const) and (not isinstance(b, ir.Const) or (b.value == 0 and a.value != 0)):
            a, b = b, a
            cond = VOp(cond.reg, inv=not cond.inv) if isinstance(cond, VOp) else Reg("P", 7, inv=not cond.inv)
        if ins.type == "f32":
            # FSEL, a bitwise select on the FMA pipe, as ptxas writes selp.f32 (`FSEL R15, R14,
            # -INF, !P0`): it leaves the integer ALU, which SEL shares with the address and
            # compare arithmetic beside it (flash attention's causal mask)
            self.emit("FSEL", (), [self.dst(d), self.reg_part(a, 0), self.fsrc(b), cond])
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("SEL", (), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), cond])
