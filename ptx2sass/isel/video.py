"""`sad` and the scalar video instructions (vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr,
vmad, vset) for sm_8x, which has no video unit: like ptxas, each becomes integer code on a
64-bit intermediate (lo, hi). What ptxas computes, checked in the emulator (its cubins are
the reference; the PTX manual's pseudo-code leaves the width of the intermediate open):

* operands: the selected byte/half/word, zero- or sign-extended by its type;
* the operation is exact in 64 bits; vshl's intermediate keeps 34 bits (sign-extended from
  bit 33) where it is saturated;
* `.sat`, signed destination: clamp to s32. Unsigned: vshl and vmad clamp to [0, U32_MAX],
  the others only below (hi < 0 gives 0). With a destination selector (not the shifts,
  which saturate to 32 bits): a non-zero hi gives all ones, then an unsigned min with the
  part's maximum (0xFF/0x7F, 0xFFFF/0x7FFF);
* `.min`/`.max` compare 64-bit values, signed as the destination type (vset: as atype):
  the 32-bit result sign-extended for vadd/vsub (and a saturated vshr), the others'
  intermediate as it is (saturated: clamped below at 0 or to s32), with c extended by the
  destination type;
* `d.dsel`: the result's low byte/half replaces that part of c.

A mixin of `Selector` (isel/select.py)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.mir import COPY, VOp
from ptx2sass.isel.common import LUT, NOT_PT, PT, RZ, _bits, _signed

M32 = 0xFFFFFFFF
# PRMT selectors extracting a part (byte k, half k) zero- or sign-extended; the third
# operand is RZ, so nibble 7 reads a zero byte.
_PART_PRMT = {
    ("b", False): lambda k: 0x7770 | k,
    ("b", True): lambda k: ((8 | k) * 0x111) << 4 | k,
    ("h", False): lambda k: 0x7700 | (2 * k + 1) << 4 | 2 * k,
    ("h", True): lambda k: ((9 + 2 * k) * 0x11) << 8 | (2 * k + 1) << 4 | 2 * k,
}


def _is_zero(op) -> bool:
    """RZ or an immediate 0."""
    return (isinstance(op, Imm) and op.value == 0) or bool(getattr(op, "is_zero", False))


_SASS_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


class VideoSelection:
    # ------------------------------------------------------------------ small helpers
    def _v_new(self, cls: str = "R") -> VOp:
        return VOp(self.mf.new_vreg(cls))

    def _v_reg(self, src):
        """A register (or RZ) holding a 32-bit source (immediate, parameter…)."""
        if isinstance(src, VOp) or (hasattr(src, "is_zero") and src.is_zero):
            return src
        t = self._v_new()
        self.move(t, src)
        return t

    def _v_sign(self, lo) -> VOp:
        t = self._v_new()
        self.emit("SHF", ("R", "S32", "HI"), [t, RZ, Imm(0x1F), lo])
        return t

    def _v_operand(self, op, ty: str, sel: str | None):
        """(lo, hi) of the operand's selected part, extended by `ty` to 64 bits."""
        signed = _signed(ty)
        if isinstance(op, ir.Const):
            v = op.value & M32
            if sel is not None:
                width = 8 if sel[0] == "b" else 16
                v = (v >> (width * int(sel[1]))) & ((1 << width) - 1)
                if signed and v >> (width - 1):
                    v -= 1 << width
            elif signed and v >> 31:
                v -= 1 << 32
            lo, hi = v & M32, (v >> 32) & M32
            return (RZ if lo == 0 else self._v_reg(Imm(lo))), (RZ if hi == 0 else self._v_reg(Imm(hi)))
        src = self._v_reg(self.part_of(op, 0))
        if sel is not None:
            t = self._v_new()
            self.emit("PRMT", (), [t, src, Imm(_PART_PRMT[(sel[0], signed)](int(sel[1]))), RZ])
            src = t
        return src, (self._v_sign(src) if signed else RZ)

    def _v_c(self, op, signed: bool):
        lo = self._v_reg(self.part_of(op, 0))
        return lo, (self._v_sign(lo) if signed and lo is not RZ else RZ)

    def _v_compare(self, cmp: str, a, b, signed: bool) -> VOp:
        """A predicate: 64-bit (lo, hi) pairs compared."""
        p = self._v_new("P")
        self.emit("ISETP", (cmp, "U32", "AND"), [p, PT, a[0], b[0], PT], ndefs=2)
        self.emit("ISETP", (cmp,) + (() if signed else ("U32",)) + ("AND", "EX"),
                  [p, PT, a[1], b[1], PT, p], ndefs=2)
        return p

    def _v_select(self, a, b, p: VOp):
        lo, hi = self._v_new(), self._v_new()
        self.emit("SEL", (), [lo, a[0], b[0], p])
        self.emit("SEL", (), [hi, a[1], b[1], p])
        return lo, hi

    def _v_add64(self, a, b, negate_b: bool = False):
        lo, hi, carry = self._v_new(), self._v_new(), self._v_new("P")
        if negate_b and _is_zero(b[0]):
            # a + ~b + 1 with b.lo = 0: the low half always carries into the high half, which
            # `a.lo + -0` would not, so the high half is a.hi - b.hi
            self.emit("IADD3", (), [lo, a[0], RZ, RZ])
            self.emit("IADD3", (), [hi, a[1], self.negate(b[1]), RZ])
            return lo, hi
        blo = self.negate(b[0]) if negate_b else b[0]
        bhi = self.invert(b[1]) if negate_b else b[1]
        if isinstance(bhi, Imm):
            bhi = self._v_reg(bhi)
        self.emit("IADD3", (), [lo, carry, a[0], blo, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [hi, a[1], bhi, RZ, carry, NOT_PT])
        return lo, hi

    # ------------------------------------------------------------------ sad
    def sel_sad(self, ins):
        """|a - b| + c: VABSDIFF (signed unless .U32) for 8..32 bits, whose b or c (not
        both) may be an immediate; 16-bit operands are extended first."""
        ty = ins.type
        a, b, c = ins.srcs
        if _bits(ty) == 64:
            return self._sad64(ins)
        if _bits(ty) < 32:
            a, b = self.extend(a, ty), self.extend(b, ty)
        else:
            a, b = self.part_of(a, 0), self.part_of(b, 0)
        a = self._v_reg(a)
        b = b if isinstance(b, Imm) else self._v_reg(b)
        c = self.part_of(c, 0)
        if not self.arch.absdiff_instruction:
            # max - min + c, as ptxas writes it where there is no VABSDIFF (sm_120)
            mods = () if _signed(ty) else ("U32",)
            hi, lo, diff = self._v_new(), self._v_new(), self._v_new()
            self.emit("IMNMX", mods, [hi, a, b, NOT_PT])
            self.emit("IMNMX", mods, [lo, a, b, PT])
            if isinstance(c, Imm):
                self.emit("IADD3", (), [diff, hi, self.negate(lo), RZ])
                self.emit("IADD3", (), [self.dst(ins.dests[0]), diff, c, RZ])
            else:
                self.emit("IADD3", (), [self.dst(ins.dests[0]), self._v_reg(c), hi, self.negate(lo)])
            return
        c = c if isinstance(c, Imm) and not isinstance(b, Imm) else self._v_reg(c)
        self.emit("VABSDIFF", () if _signed(ty) else ("U32",), [self.dst(ins.dests[0]), a, b, c])

    def _sad64(self, ins):
        """|a - b| + c on register pairs: both differences, the one a >= b picks, then + c."""
        signed = _signed(ins.type)
        a = tuple(self.reg_part(ins.srcs[0], k) for k in range(2))
        b = tuple(self.reg_part(ins.srcs[1], k) for k in range(2))
        ge = self._v_compare("GE", a, b, signed)
        diff = self._v_add64(a, b, negate_b=True)
        back = self._v_add64(b, a, negate_b=True)
        lo, hi = self._v_select(diff, back, ge)
        d = ins.dests[0]
        self.begin_wide(d)
        carry = self._v_new("P")
        self.emit("IADD3", (), [self.dst(d, 0), carry, lo, self.part_of(ins.srcs[2], 0), RZ], ndefs=2)
        self.emit("IADD3", ("X",), [self.dst(d, 1), hi, self.reg_part(ins.srcs[2], 1), RZ, carry, NOT_PT])

    # ------------------------------------------------------------------ video
    def sel_vadd(self, ins):
        self.video(ins)

    sel_vsub = sel_vabsdiff = sel_vmin = sel_vmax = sel_vshl = sel_vshr = sel_vset = sel_vadd

    def video(self, ins):
        op = ins.opcode
        sel = ins.attrs.get("sel", (None, None, None))
        dsel = ins.attrs.get("dsel")
        mods = ins.modifiers
        if op == "vset":
            atype, btype = ins.type, ins.types[0]
            signed = _signed(atype)
            cmp, mods = mods[0], mods[1:]
        else:
            dtype, atype, btype = ins.type, *ins.types
            signed = _signed(dtype)
        op2 = next((m for m in mods if m in ("add", "min", "max")), None)
        sat = "sat" in mods
        a = self._v_operand(ins.srcs[0], atype, sel[0])
        b = self._v_operand(ins.srcs[1], btype, sel[1])
        if op == "vset":
            p = self._v_compare(_SASS_CMP[cmp], a, b, True)     # both extended to 64 bits
            one = self._v_new()
            self.emit("SEL", (), [one, RZ, Imm(1), VOp(p.reg, inv=True)])
            tmp = (one, RZ)
        elif op in ("vadd", "vsub"):
            tmp = self._v_add64(a, b, negate_b=op == "vsub")
        elif op == "vabsdiff":
            diff = self._v_add64(a, b, negate_b=True)
            neg = self._v_add64((RZ, RZ), diff, negate_b=True)
            p = self._v_new("P")
            self.emit("ISETP", ("LT", "AND"), [p, PT, diff[1], RZ, PT], ndefs=2)
            tmp = self._v_select(neg, diff, p)
        elif op in ("vmin", "vmax"):
            p = self._v_compare("LT" if op == "vmin" else "GT", a, b, True)
            tmp = self._v_select(a, b, p)
        else:
            tmp = self._v_shift(op, a, b, mods)
        # saturation
        wide = op not in ("vadd", "vsub")
        cmp_value = None
        if sat and dsel is not None and op not in ("vshl", "vshr"):
            r = self._v_sat_part(tmp, signed, dsel)
        elif sat and signed:
            r = self._v_sat_s32(tmp)
            cmp_value = (r, self._v_sign(r)) if op2 in ("min", "max") else None
        elif sat:
            p = self._v_new("P")
            r = self._v_new()
            self.emit("ISETP", ("GE", "AND"), [p, PT, tmp[1], RZ, PT], ndefs=2)
            if op == "vshl":     # clamped to [0, U32_MAX]
                above, t = self._v_new("P"), self._v_new()
                self.emit("ISETP", ("GT", "AND"), [above, PT, tmp[1], RZ, PT], ndefs=2)
                self.emit("SEL", (), [t, self._v_reg(Imm(M32)), tmp[0], above])
                self.emit("SEL", (), [r, t, RZ, p])
            else:                # clamped below only
                self.emit("SEL", (), [r, tmp[0], RZ, p])
                if wide and op != "vshr" and op2 in ("min", "max"):
                    hi = self._v_new()
                    self.emit("SEL", (), [hi, tmp[1], RZ, p])
                    cmp_value = (r, hi)
        else:
            r = tmp[0]
            if wide:
                cmp_value = tmp
        # secondary operation / merge
        d = self.dst(ins.dests[0])
        if op2 == "add":
            self.emit("IADD3", (), [d, r, self._v_reg(self.part_of(ins.srcs[2], 0)), RZ])
        elif op2 is not None:
            v = cmp_value if cmp_value is not None else (r, self._v_sign(r))
            c = self._v_c(ins.srcs[2], signed)
            p = self._v_compare("LT" if op2 == "min" else "GT", v, c, signed)
            self.emit("SEL", (), [d, v[0], c[0], p])
        elif dsel is not None:
            k = int(dsel[1])
            if dsel[0] == "b":
                nib = [4 + i for i in range(4)]
                nib[k] = 0
            else:
                nib = [4 + i for i in range(4)]
                nib[2 * k], nib[2 * k + 1] = 0, 1
            selector = sum(n << (4 * i) for i, n in enumerate(nib))
            self.emit("PRMT", (), [d, r, Imm(selector), self._v_reg(self.part_of(ins.srcs[2], 0))])
        elif isinstance(r, VOp):
            self.emit(COPY, (), [d, r])
        else:
            self.move(d, r)

    def _v_shift(self, op, a, b, mods):
        """vshl/vshr: shift count clamped to 32 or wrapped to 5 bits."""
        count = self._v_new()
        if "clamp" in mods:
            self.emit("IMNMX", ("U32",), [count, b[0], Imm(32), PT])
        else:
            self.emit("LOP3", ("LUT",), [count, b[0], Imm(0x1F), RZ, Imm(LUT["and"]), NOT_PT])
        lo = self._v_new()
        if op == "vshr":
            self.emit("SHF", ("R", "S64"), [lo, a[0], count, a[1]])
            return lo, a[1]
        hi = self._v_new()
        self.emit("SHF", ("L", "U32"), [lo, a[0], count, RZ])
        self.emit("SHF", ("L", "U64", "HI"), [hi, a[0], count, a[1]])
        if "sat" in mods:          # saturation sees a 34-bit intermediate
            top = self._v_new()
            self.emit("SGXT", (), [top, hi, Imm(2)])
            hi = top
        return lo, hi

    def _v_sat_s32(self, tmp):
        """Clamp a 64-bit (lo, hi) to s32: it fits when hi is lo's sign."""
        lo, hi = tmp
        fits, positive = self._v_new("P"), self._v_new("P")
        self.emit("ISETP", ("EQ", "AND"), [fits, PT, hi, self._v_sign(lo), PT], ndefs=2)
        self.emit("ISETP", ("GE", "AND"), [positive, PT, hi, RZ, PT], ndefs=2)
        bound, r = self._v_new(), self._v_new()
        self.emit("SEL", (), [bound, self._v_reg(Imm(0x7FFFFFFF)), Imm(0x80000000), positive])
        self.emit("SEL", (), [r, lo, bound, fits])
        return r

    def _v_sat_part(self, tmp, signed: bool, dsel: str):
        lo, hi = tmp
        nonzero = self._v_new("P")
        self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, hi, RZ, PT], ndefs=2)
        x, r = self._v_new(), self._v_new()
        self.emit("SEL", (), [x, self._v_reg(Imm(M32)), lo, nonzero])
        top = (0x7F if signed else 0xFF) if dsel[0] == "b" else (0x7FFF if signed else 0xFFFF)
        self.emit("IMNMX", ("U32",), [r, x, Imm(top), PT])
        return r

    # ------------------------------------------------------------------ vmad
    def sel_vmad(self, ins):
        """a*b + c in 64 bits: a negated product is its complement plus one (likewise a
        negated c, or `.po`'s plus one), then the `.shr7`/`.shr15` shift and `.sat` to s32
        or u32 (signed when any operand is signed or negated). Unlike the PTX manual's
        pseudo-code, ptxas multiplies the parts and extends c as s32 whatever their types."""
        _, atype, btype = ins.type, *ins.types
        mods = ins.modifiers
        sel = ins.attrs.get("sel", (None, None, None))
        neg = ins.attrs.get("neg", (False, False, False))
        signed = _signed(atype) or _signed(btype) or neg[0] != neg[1] or neg[2]
        a = self._v_operand(ins.srcs[0], atype, sel[0])
        b = self._v_operand(ins.srcs[1], btype, sel[1])
        # ptxas multiplies the selected parts as s32 (IMAD.WIDE) whatever their types
        wide = VOp(self.mf.new_vreg("R", 2))
        self.emit("IMAD", ("WIDE",), [wide, a[0], b[0], RZ])
        lo, hi = VOp(wide.reg, 0), VOp(wide.reg, 1)
        c = self._v_reg(self.part_of(ins.srcs[2], 0))
        plus_one = "po" in mods or neg[0] != neg[1] or neg[2]
        if "po" not in mods and neg[0] != neg[1]:
            lo, hi = self._v_not(lo), self._v_not(hi)
        elif "po" not in mods and neg[2]:
            c = self._v_not(c)
        tmp = self._v_add64((lo, hi), (c, self._v_sign(c) if c is not RZ else RZ))    # c as s32
        if plus_one:
            tmp = self._v_add64(tmp, (self._v_reg(Imm(1)), RZ))
        shift = 7 if "shr7" in mods else 15 if "shr15" in mods else 0
        if shift:
            lo, hi = self._v_new(), self._v_new()
            kind = "S" if signed else "U"
            self.emit("SHF", ("R", kind + "64"), [lo, tmp[0], Imm(shift), tmp[1]])
            self.emit("SHF", ("R", kind + "32", "HI"), [hi, RZ, Imm(shift), tmp[1]])
            tmp = (lo, hi)
        d = self.dst(ins.dests[0])
        if "sat" not in mods:
            self.emit(COPY, (), [d, tmp[0]])
        elif signed:
            self.emit(COPY, (), [d, self._v_sat_s32(tmp)])
        else:
            self.emit(COPY, (), [d, self._v_sat_u32(tmp)])

    def _v_not(self, x):
        t = self._v_new()
        self.emit("LOP3", ("LUT",), [t, x, RZ, RZ, Imm(0x0F), NOT_PT])
        return t

    def _v_sat_u32(self, tmp):
        """Clamp a 64-bit (lo, hi) to [0, U32_MAX]."""
        lo, hi = tmp
        above, nonneg = self._v_new("P"), self._v_new("P")
        self.emit("ISETP", ("GT", "AND"), [above, PT, hi, RZ, PT], ndefs=2)
        self.emit("ISETP", ("GE", "AND"), [nonneg, PT, hi, RZ, PT], ndefs=2)
        t, r = self._v_new(), self._v_new()
        self.emit("SEL", (), [t, self._v_reg(Imm(M32)), lo, above])
        self.emit("SEL", (), [r, t, RZ, nonneg])
        return r
