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

from ptx2sass.isel.common import NOT_PT, RZ, _bits
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
        """d = a + b (+ carry) or a - b (- borrow), setting the carry if `.cc`."""
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")
        sets = "cc" in ins.modifiers
        ra = product if product is not None else self.reg_part(a)
        rb = self.reg_part(b)
        if negate_b:
            if not isinstance(rb, VOp):       # b == 0 still takes part: a + ~0 + 1 carries
                zero = VOp(self.mf.new_vreg())
                self.move(zero, RZ)
                rb = zero
            rb = VOp(rb.reg, rb.part, inv=carry_in, neg=not carry_in)
        out_p = VOp(self.mf.new_vreg("P")) if sets else None
        d = self.dst(ins.dests[0])
        if carry_in:
            cin = self.carry_in()
            ops = [d] + ([out_p] if sets else []) + [ra, rb, RZ, cin, NOT_PT]
            self.emit("IADD3", ("X",), ops, ndefs=2 if sets else 1)
        else:
            ops = [d] + ([out_p] if sets else []) + [ra, rb, RZ]
            self.emit("IADD3", (), ops, ndefs=2 if sets else 1)
        if sets:
            self.carry_flag, self.carry_block = out_p, self.out

    def sel_addc(self, ins):
        self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=False, carry_in=True)

    def sel_subc(self, ins):
        self.carry_op(ins, ins.srcs[0], ins.srcs[1], negate_b=True, carry_in=True)

    def mad_carry(self, ins, carry_in: bool) -> None:
        mode = next((m for m in ins.modifiers if m in ("lo", "hi")), "lo")
        a, b, c = ins.srcs
        t = VOp(self.mf.new_vreg())
        self.emit("IMAD", ("HI", "U32") if mode == "hi" and ins.type.startswith("u")
                  else ("HI",) if mode == "hi" else (),
                  [t, self.reg_part(a), self.part_of(b, 0), RZ])
        self.carry_op(ins, None, c, negate_b=False, carry_in=carry_in, product=t)

    def sel_madc(self, ins):
        self.mad_carry(ins, carry_in=True)
