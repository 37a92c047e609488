"""`cvt` in all its forms.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.mir import COPY, VOp
from ptx2sass.isel.common import (F2I_MODE, FRND_MODE, PT, ROUNDING, RZ, _bits,
                                  _is_float, _signed)


class ConvertSelection:
    # ------------------------------------------------------------------ conversions
    def sel_cvt(self, ins):
        dty, sty = ins.type, ins.types[0]
        d, a = ins.dests[0], ins.srcs[0]
        if any(m == "sat" for m in ins.modifiers):
            if dty == "u32" and sty == "s32":      # clamp negatives to zero
                a32 = self.reg_part(a)
                p = VOp(self.mf.new_vreg("P"))
                self.emit("ISETP", ("LT", "AND"), [p, PT, a32, RZ, PT], ndefs=2)
                self.emit("SEL", (), [self.dst(d), a32, RZ, VOp(p.reg, inv=True)])
                return
            raise self.unsupported(f"`cvt.sat.{dty}.{sty}`")
        if not _is_float(dty) and not _is_float(sty):
            return self.int_convert(d, a, dty, sty)
        rnd = next((m for m in ins.modifiers if m in FRND_MODE or m in ROUNDING), None)
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        if dty == "f32" and sty == "f32":
            if rnd in FRND_MODE:
                mode = FRND_MODE[rnd]
                self.emit("FRND", ftz + ((mode,) if mode else ()), [self.dst(d), self.reg_part(a)])
                return
            self.emit("FADD", ftz, [self.dst(d), self.reg_part(a), Reg("R", 255, neg=True)])
            return
        if sty == "f32" and not _is_float(dty) and _bits(dty) in (16, 32):
            mode = F2I_MODE.get(rnd if rnd in FRND_MODE else None)
            signed = {"u32": ("U32",), "s32": (), "u16": ("U16",), "s16": ("S16",)}[
                dty.replace("b", "u")]
            self.emit("F2I", signed + ftz + ((mode,) if mode else ()) + ("NTZ",),
                      [self.dst(d), self.reg_part(a)])
            return
        if dty == "f32" and not _is_float(sty) and _bits(sty) == 32:
            signed = () if _signed(sty) else ("U32",)
            r = ROUNDING.get(rnd) if rnd in ROUNDING else None
            self.emit("I2F", signed + ((r,) if r else ()), [self.dst(d), self.reg_part(a)])
            return
        if dty == "f64" and sty == "f32":
            self.emit("F2F", ("F64", "F32"), [self.dst(d), self.reg_part(a)])
            return
        raise self.unsupported(f"`cvt.{dty}.{sty}`")

    def int_convert(self, d: ir.Value, a, dty: str, sty: str) -> None:
        db, sb = _bits(dty), _bits(sty)
        if db == 64:
            self.begin_wide(d)
            if sb == 64:
                self.move(self.dst(d, 0), self.part_of(a, 0))
                self.move(self.dst(d, 1), self.part_of(a, 1))
                return
            lo = self.extend(a, sty)
            self.move(self.dst(d, 0), lo)
            if _signed(sty):
                self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1f), self.as_reg(lo)])
            else:
                self.move(self.dst(d, 1), RZ)
            return
        if db > sb:
            src = self.extend(a, sty)
        else:
            src = self.part_of(a, 0)
        if isinstance(src, VOp) and self.guard is None:
            self.emit(COPY, (), [self.dst(d), src], guarded=False)
        else:
            self.move(self.dst(d), src)
