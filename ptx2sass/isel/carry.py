"""Extended-precision arithmetic: `add.cc`/`addc`, `sub.cc`/`subc`, `mad.cc`/`madc`, with the
PTX carry flag (CC.CF) held in a predicate register between the instruction that sets it and
the ones that read it, as ptxas does (IADD3 with a carry-out predicate, IADD3.X with a
carry-in). Subtraction adds the one's complement with the carry (a - b = a + ~b + 1), so
its flag is PTX's "no borrow", as the hardware's.

The flag is tracked within a block; a reader in another block than the setter is refused
(no producer writes that). A kernel that reads the flag before any `.cc` gets it clear.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from ptx2sass.isel.common import NOT_PT, RZ, _bits, _signed
from ptx2sass.mir import VOp


class CarryArithmetic:
    carry_flag = None          # VOp (a predicate) or None: the current CC.CF
    carry_block = None

    def carry_in(self):
        if self.carry_flag is None:
            return NOT_PT      # never set in this kernel: clear
        if self.carry_block is not self.out:
            raise self.unsupported(f"`{self.ins.opcode}` reading a carry set in another block")
        return self.carry_flag

    def carry_op(self, ins, a, b, negate_b: bool, carry_in: bool, product=None) -> None:
        """d = a + b (+ carry) or a - b (- borrow), setting the carry if `.cc`; 64-bit
        operands word by word, the low word's carry into the high word's IADD3.X."""
        bits = max(_bits(ins.type), 32)    # 16-bit addc/subc/madc (no .cc): a 32-bit word
        if bits not in (32, 64):
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")
        sets = "cc" in ins.modifiers
        words = bits // 32
        d = ins.dests[0]
        if "sat" in ins.modifiers and product is None:
            # addc/subc.sat.s32 (no .cc) as ptxas; its madc.hi.sat.s32 wraps (ptxas 13.5.37
            # drops the .sat there: so do we)
            return self.saturating_carry_op(ins, a, b, negate_b, product)
        if words > 1:
            self.begin_wide(d)
        carry = self.carry_in() if carry_in else None
        for k in range(words):
            if product is not None:
                ra = VOp(product.reg, k) if words > 1 else product
            else:
                ra = self.reg_part(a, k)
            rb = self.reg_part(b, k)
            if negate_b:
                if not isinstance(rb, VOp):       # b == 0 still takes part: a + ~0 + 1 carries
                    zero = VOp(self.mf.new_vreg())
                    self.move(zero, RZ)
                    rb = zero
                rb = VOp(rb.reg, rb.part, inv=carry is not None, neg=carry is None)
            out_p = VOp(self.mf.new_vreg("P")) if sets or k + 1 < words else None
            dk = self.dst(d, k) if words > 1 else self.dst(d)
            flag = [out_p] if out_p is not None else []
            if carry is not None:
                self.emit("IADD3", ("X",), [dk] + flag + [ra, rb, RZ, carry, NOT_PT],
                          ndefs=1 + len(flag))
            else:
                self.emit("IADD3", (), [dk] + flag + [ra, rb, RZ], ndefs=1 + len(flag))
            carry = out_p
        if sets:
            self.carry_flag, self.carry_block = carry, self.out

    def saturating_carry_op(self, ins, a, b, negate_b: bool, product) -> None:
        """s32 a + b + carry (a - b - borrow), saturated: the wrapped sum with the carry
        in (IADD3.X), clamped from the operands' and the sum's sign bits as add.sat."""
        ra = product if product is not None else self.in_register(a)
        rb = self.in_register(b)
        s = VOp(self.mf.new_vreg())
        addend = VOp(rb.reg, rb.part, inv=True) if negate_b else rb
        self.emit("IADD3", ("X",), [s, ra, addend, RZ, self.carry_in(), NOT_PT])
        self.saturate_sum(self.dst(ins.dests[0]), ra, rb, s, negate_b)

    def sel_addc(self, ins):
        self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=False, carry_in=True)

    def sel_subc(self, ins):
        self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=True, carry_in=True)

    def mad_carry(self, ins, carry_in: bool) -> None:
        """mad[c].{lo,hi}[.cc]: the product's low or high half (32 or 64 bits), then the
        carry addition of c."""
        mode = next((m for m in ins.modifiers if m in ("lo", "hi")), "lo")
        a, b, c = ins.srcs
        if _bits(ins.type) == 64:
            if mode == "hi":
                t = self.mul_hi64_pair(a, b, _signed(ins.type))
            else:
                t = self.new_pair()
                wide = VOp(self.mf.new_vreg("R", 2))
                self.emit("IMAD", ("WIDE", "U32"), [wide, self.reg_part(a, 0), self.part_of(b, 0), RZ])
                cross = VOp(self.mf.new_vreg())
                self.imad((), cross, self.reg_part(a, 0), self.part_of(b, 1), VOp(wide.reg, 1))
                self.imad((), VOp(t.reg, 1), self.reg_part(a, 1), self.part_of(b, 0), cross)
                self.emit("MOV", (), [VOp(t.reg, 0), VOp(wide.reg, 0)])
            self.carry_op(ins, None, c, negate_b=False, carry_in=carry_in, product=t)
            return
        t = VOp(self.mf.new_vreg())
        if mode == "hi" and _bits(ins.type) == 16:
            # ptxas 13.5.37 takes madc.hi.{u,s}16 as the high word of the extended operands'
            # 32-bit product (IMAD.HI[.U32]: 0 or -1), plus c and the carry
            ra, sb = self.as_reg(self.extend(a, ins.type)), self.extend(b, ins.type)
        else:
            ra, sb = self.reg_part(a), self.part_of(b, 0)
        if mode == "hi":
            self.emit("IMAD", ("HI", "U32") if ins.type.startswith("u") else ("HI",),
                      [t, ra, sb, RZ])
        else:
            # a zero factor (`madc.lo` of a register known to be 0) has no plain IMAD
            # form (nvdisasm reads it as IMAD.MOV): `imad` writes the addend instead
            self.imad((), t, ra, sb, RZ)
        self.carry_op(ins, None, c, negate_b=False, carry_in=carry_in, product=t)

    def sel_madc(self, ins):
        self.mad_carry(ins, carry_in=True)
