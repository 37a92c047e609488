"""Floating-point classification and sign-selected choice: `testp.*` and `slct`, with the
integer compares of the magnitude bits ptxas uses (no FP unit involved)."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.isel.common import LUT, NOT_PT, PT, RZ, _bits
from ptx2sass.mir import VOp

# (compare, bound) of the magnitude bits for the single-compare classes; the others combine.
_F32 = {"finite": ("LT", 0x7F800000), "infinite": ("EQ", 0x7F800000),
        "number": ("LE", 0x7F800000), "notanumber": ("GT", 0x7F800000)}
# f64: the same on the high word of the magnitude (the low word joins through .EX)
_F64_HI = {"finite": ("LT", 0x7FF00000), "infinite": ("EQ", 0x7FF00000),
           "number": ("LE", 0x7FF00000), "notanumber": ("GT", 0x7FF00000)}


class Classify:
    def sel_testp(self, ins):
        """Compares of |a|'s bits: normal counts zero as normal (PTX); subnormal excludes it."""
        (cls,) = [m for m in ins.modifiers if m in ("finite", "infinite", "number", "notanumber",
                                                    "normal", "subnormal")]
        d, a = ins.dests[0], ins.srcs[0]
        wide = _bits(ins.type) == 64
        mag = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [mag, self.reg_part(a, 1 if wide else 0), Imm(0x7FFFFFFF), RZ,
                                     Imm(LUT["and"]), NOT_PT])
        lo = self.reg_part(a, 0) if wide else None

        def cmp(op, bound, out=None, combine=PT, how="AND"):
            """mag (with the low word for f64) <op> bound, `how`-combined with `combine`."""
            out = out or VOp(self.mf.new_vreg("P"))
            b = RZ if bound == 0 else Imm(bound)
            if not wide:
                self.emit("ISETP", (op, "U32", how), [out, PT, mag, b, combine], ndefs=2)
                return out
            low = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", (op, "U32", "AND"), [low, PT, lo, RZ, PT], ndefs=2)
            self.emit("ISETP", (op, "U32", how, "EX"), [out, PT, mag, b, combine, low], ndefs=2)
            return out

        p = self.dst(d)
        table, small = (_F64_HI, 0x100000) if wide else (_F32, 0x800000)
        if cls in table:
            op, bound = table[cls]
            cmp(op, bound, p)
        elif cls == "normal":
            finite = cmp("LT", table["finite"][1])
            big = cmp("GE", small, combine=finite)
            cmp("EQ", 0, p, combine=big, how="OR")
        else:
            tiny = cmp("LT", small)
            cmp("NE", 0, p, combine=tiny)

    def sel_slct(self, ins):
        """d = c >= 0 ? a : b: ISETP.GE (s32 c) or FSETP.GE (f32 c; .ftz flushes c first with
        an FADD.FTZ, as ptxas does), then SEL per 32-bit part."""
        d = ins.dests[0]
        a, b, c = ins.srcs
        p = VOp(self.mf.new_vreg("P"))
        if ins.types and ins.types[-1] == "f32":
            cv = self.reg_part(c)
            if "ftz" in ins.modifiers:
                t = VOp(self.mf.new_vreg())
                self.emit("FADD", ("FTZ",), [t, cv, Reg("R", 255, neg=True)])
                cv = t
            self.emit("FSETP", ("GE", "AND"), [p, PT, cv, RZ, PT], ndefs=2)
        else:
            self.emit("ISETP", ("GE", "AND"), [p, PT, self.reg_part(c), RZ, PT], ndefs=2)
        r = self.vreg(d)
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("SEL", (), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), p])
