"""64-bit bit operations (`popc/brev/clz/bfe/bfi` on .b64/.u64/.s64) as pairs of 32-bit
instructions, in the shapes ptxas 13.5 emits for sm_8x.

A mixin of `Selector` (isel/select.py). The 64-bit bit fields follow ptxas, not a literal
reading of the PTX manual: the field mask is `(1 << len) - 1` built with the 64-bit funnel
shifts, whose amounts clamp at 64, and `pos`/`len` are not first reduced to their low byte
(the 32-bit forms are). Matching ptxas bit for bit on every input is what the tests check.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.mir import VOp

LUT_AND = 0xC0            # a & b
LUT_OR_ANDNOT = 0xF4      # a | (b & ~c)
LUT_OR_NOT = 0xF3         # a | ~b
LUT_SELECT = 0xE2         # (a & b) | (c & ~b): a's bits where b is set, c's elsewhere
WORD = 0xFFFFFFFF


class Bits64:
    def no_guard_for(self, ins) -> None:
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}.{ins.type}`")

    def popc64(self, ins):
        self.no_guard_for(ins)
        lo, hi = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("POPC", (), [lo, self.reg_part(ins.srcs[0], 0)])
        self.emit("POPC", (), [hi, self.reg_part(ins.srcs[0], 1)])
        self.emit("IADD3", (), [self.dst(ins.dests[0]), lo, hi, RZ])

    def brev64(self, ins):
        self.no_guard_for(ins)
        d, a = ins.dests[0], ins.srcs[0]
        self.begin_wide(d)
        self.emit("BREV", (), [self.dst(d, 1), self.reg_part(a, 0)])
        self.emit("BREV", (), [self.dst(d, 0), self.reg_part(a, 1)])

    def clz64(self, ins):
        """Leading zeros of the high word when it is non-zero, else 32 + those of the low
        word; FLO of zero is -1, so an all-zero input gives 63 - (-1) = 64."""
        self.no_guard_for(ins)
        lo, hi = self.reg_part(ins.srcs[0], 0), self.reg_part(ins.srcs[0], 1)
        high_set = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [high_set, PT, hi, RZ, PT], ndefs=2)
        word, first = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("SEL", (), [word, lo, hi, VOp(high_set.reg, inv=True)])
        self.emit("FLO", ("U32",), [first, word])
        in_high, in_low = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [in_high, self.negate(first), Imm(0x1F), RZ])
        self.emit("IADD3", (), [in_low, self.negate(first), Imm(0x3F), RZ])
        self.emit("SEL", (), [self.dst(ins.dests[0]), in_high, in_low, high_set])

    def field_mask64(self, length) -> VOp:
        """(1 << length) - 1 as a register pair."""
        one, mask = VOp(self.mf.new_vreg()), self.new_pair()
        self.move(one, Imm(1))
        self.emit("SHF", ("L", "U32"), [VOp(mask.reg, 0), one, length, RZ])
        self.emit("SHF", ("L", "U64", "HI"), [VOp(mask.reg, 1), one, length, RZ])
        borrow = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(mask.reg, 0), borrow, VOp(mask.reg, 0), Imm(0xFFFFFFFF), RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(mask.reg, 1), VOp(mask.reg, 1), Imm(0xFFFFFFFF), RZ, borrow, NOT_PT])
        return mask

    def shift_left64(self, x: VOp, by) -> VOp:
        out = self.new_pair()
        self.emit("SHF", ("L", "U32"), [VOp(out.reg, 0), VOp(x.reg, 0), by, RZ])
        self.emit("SHF", ("L", "U64", "HI"), [VOp(out.reg, 1), VOp(x.reg, 0), by, VOp(x.reg, 1)])
        return out

    def bfe64(self, ins, signed: bool):
        """The value shifted down, masked to `len` bits; signed: if the field's top bit
        (bit len-1 of the masked value) is set, every bit above the field is set."""
        self.no_guard_for(ins)
        d, a, pos, length = ins.dests[0], *ins.srcs
        p, n = self.reg_part(pos, 0), self.reg_part(length, 0)
        mask = self.field_mask64(n)
        down = self.new_pair()
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        self.emit("SHF", ("R", "S64" if signed else "U64"), [VOp(down.reg, 0), lo, p, hi])
        self.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [VOp(down.reg, 1), RZ, p, hi])
        self.begin_wide(d)
        for k in range(2):
            self.emit("LOP3", ("LUT",), [self.dst(d, k), VOp(mask.reg, k), VOp(down.reg, k), RZ,
                                         Imm(LUT_AND), NOT_PT])
        if not signed:
            return
        top = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [top, n, Imm(0xFFFFFFFF), RZ])
        sign_lo, sign_hi = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("SHF", ("R", "U64"), [sign_lo, self.dst(d, 0), top, self.dst(d, 1)])
        self.emit("SHF", ("R", "U32", "HI"), [sign_hi, RZ, top, self.dst(d, 1)])
        negative = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [negative, PT, sign_lo, RZ, PT], ndefs=2)
        self.emit("ISETP", ("NE", "U32", "AND", "EX"), [negative, PT, sign_hi, RZ, PT, negative], ndefs=2)
        for k in range(2):
            self.guarded(negative, False, "LOP3", ("LUT",), [self.dst(d, k), self.dst(d, k),
                                                             VOp(mask.reg, k), RZ, Imm(LUT_OR_NOT), NOT_PT])

    def bfi64(self, ins):
        """a's low `len` bits moved up to `pos`, over b: (a & mask) << pos | b & ~(mask << pos)."""
        self.no_guard_for(ins)
        d, a, b, pos, length = ins.dests[0], *ins.srcs
        if isinstance(pos, ir.Const) and isinstance(length, ir.Const):
            return self.bfi64_constant_field(d, a, b, pos.value & WORD, length.value & WORD)
        p, n = self.reg_part(pos, 0), self.reg_part(length, 0)
        mask = self.field_mask64(n)
        field = self.new_pair()
        for k in range(2):
            self.emit("LOP3", ("LUT",), [VOp(field.reg, k), VOp(mask.reg, k), self.reg_part(a, k), RZ,
                                         Imm(LUT_AND), NOT_PT])
        placed_mask, placed = self.shift_left64(mask, p), self.shift_left64(field, p)
        self.begin_wide(d)
        for k in range(2):
            self.emit("LOP3", ("LUT",), [self.dst(d, k), VOp(placed.reg, k), self.reg_part(b, k),
                                         VOp(placed_mask.reg, k), Imm(LUT_OR_ANDNOT), NOT_PT])

    def bfi64_constant_field(self, d, a, b, pos: int, length: int):
        """bfi64 with both field bounds known: the masks are immediates, a word the field
        does not touch is b's word, a word it covers is a's (shifted) word, so nvcc's
        `bfi.b64 d, hi, lo, 32, 32` (two 32-bit halves joined) is two copies, as in ptxas's
        code. Same clamping as the register form: len and pos beyond 64 take every bit /
        place nothing."""
        mask = ((1 << min(length, 64)) - 1) & (2 ** 64 - 1)
        placed_mask = (mask << pos) & (2 ** 64 - 1) if pos < 64 else 0
        words = [(placed_mask >> (32 * k)) & WORD for k in range(2)]

        def masked(k):
            """word k of a & mask (RZ where the mask clears it)."""
            m = (mask >> (32 * k)) & WORD
            if m == 0:
                return RZ
            if m == WORD:
                return self.reg_part(a, k)
            t = VOp(self.mf.new_vreg())
            self.emit("LOP3", ("LUT",), [t, self.reg_part(a, k), Imm(m), RZ, Imm(LUT_AND), NOT_PT])
            return t

        def placed(k):
            """word k of (a & mask) << pos, where placed_mask's word k is not zero."""
            if pos == 0:
                return masked(k)
            if pos == 32:
                return masked(0) if k == 1 else RZ
            if pos > 32:
                if k == 0:
                    return RZ
                t = VOp(self.mf.new_vreg())
                self.emit("SHF", ("L", "U32"), [t, masked(0), Imm(pos - 32), RZ])
                return t
            t = VOp(self.mf.new_vreg())
            if k == 0:
                self.emit("SHF", ("L", "U32"), [t, masked(0), Imm(pos), RZ])
            else:
                self.emit("SHF", ("L", "U64", "HI"), [t, masked(0), Imm(pos), masked(1)])
            return t

        self.begin_wide(d)
        for k in range(2):
            if words[k] == 0:
                self.move(self.dst(d, k), self.part_of(b, k))
            elif words[k] == WORD:
                self.move(self.dst(d, k), placed(k))
            else:
                self.emit("LOP3", ("LUT",), [self.dst(d, k), placed(k), Imm(words[k]),
                                             self.reg_part(b, k), Imm(LUT_SELECT), NOT_PT])
