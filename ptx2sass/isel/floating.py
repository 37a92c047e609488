"""Floating-point arithmetic and the MUFU-based approximations with ptxas's range handling.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.encoder.sass_text import float_bits_text, float_text, parse_operand
from ptx2sass.mir import COPY, IMPLICIT_DEF, VOp
from ptx2sass.isel.common import FLOAT_COMPARE, LUT, NOT_PT, PT, ROUNDING, RZ, _bits


def negated_float_text(text: str) -> str:
    """nvdisasm's spelling of a float immediate with its sign flipped (`1.5` <-> `-1.5`,
    `+INF` <-> `-INF`, `0` <-> `-0.0`)."""
    if text.startswith("-"):
        body = text[1:]
        return "0" if body == "0.0" else ("+" + body if body[0].isalpha() else body)
    body = text.lstrip("+")
    return "-0.0" if body == "0" else "-" + body


class FloatSelection:
    # ------------------------------------------------------------------ floating point
    def float_mods(self, ins) -> tuple[str, ...]:
        mods = []
        if "ftz" in ins.modifiers:
            mods.append("FTZ")
        rnd = next((ROUNDING[m] for m in ins.modifiers if m in ROUNDING), None)
        if rnd:
            mods.append(rnd)
        if "sat" in ins.modifiers:
            mods.append("SAT")
        return tuple(mods)

    HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")

    def half_operand(self, op, ty: str, neg: bool = False, abs_: bool = False):
        """A 16-bit float source: the low half broadcast (`.H0_H0`) for scalar types, the
        whole register for the x2 types."""
        r = self.reg_part(op)
        suffix = ("H0_H0",) if ty in ("f16", "bf16") else ()
        return replace(r, suffix=suffix, neg=neg != getattr(r, "neg", False),
                       abs=abs_ or getattr(r, "abs", False))

    def half_mods(self, ins) -> tuple[str, ...]:
        extra = [m for m in ins.modifiers if m not in ("rn", "ftz", "sat", "relu", "oob")]
        if extra or "oob" in ins.modifiers and ins.opcode != "fma":
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        # fma.rn.oob (sm_90): HFMA2[.BF16_V2].OOB[.RELU], as ptxas
        return (("FTZ",) if "ftz" in ins.modifiers else ()) + \
            (("BF16_V2",) if ins.type.startswith("bf16") else ()) + \
            (("SAT",) if "sat" in ins.modifiers else ()) + \
            (("OOB",) if "oob" in ins.modifiers else ()) + \
            (("RELU",) if "relu" in ins.modifiers else ())

    def half_arith(self, ins, opcode: str, negate_b: bool = False, negate=()):
        """f16/f16x2 add, sub, mul, fma as HADD2/HMUL2/HFMA2 (bf16 ones only for fma on sm_8x:
        the others are sm_90 features the frontend refuses); `negate`: source positions."""
        ty = ins.type
        mods = self.half_mods(ins)
        srcs = [self.half_operand(op, ty) for op in ins.srcs]
        for k in set(negate) | ({1} if negate_b else set()):
            srcs[k] = replace(srcs[k], neg=not srcs[k].neg)
        self.emit(opcode, mods, [self.dst(ins.dests[0])] + srcs)

    def float_binary(self, ins, opcode: str, negate_b: bool = False):
        ty = ins.type
        if ty in self.HALF_TYPES:
            return self.half_arith(ins, {"FADD": "HADD2", "FMUL": "HMUL2"}[opcode], negate_b)
        bits = _bits(ty)
        if ty != "f32" and ty != "f64":
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        a, b = ins.srcs[0], ins.srcs[1]
        if not negate_b and isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        d = ins.dests[0]
        if bits == 64:
            dop = {"FADD": "DADD", "FMUL": "DMUL"}[opcode]
            sb = self.f64_src(b)
            if negate_b:
                sb = self.negate_float(sb)        # x - 0 is x + (-0): -0 - 0 stays -0
            mods = tuple(m for m in self.float_mods(ins) if m != "FTZ")
            self.emit(dop, mods, [self.dst(d), self.wide_reg(a), sb])
            return
        sb = self.fsrc(b)
        if negate_b:
            sb = self.negate_float(sb)
        self.emit(opcode, self.float_mods(ins), [self.dst(d), self.reg_part(a), sb])

    def float_min_max(self, ins, which: Reg):
        """min/max: FMNMX for f32, HMNMX2 on the low halves for f16/bf16 (whole registers for
        the x2 types), and ptxas's DSETP.MIN/MAX sequence for f64 (no 64-bit FMNMX on sm_8x):
        select each half on the first predicate, and where both inputs were NaN (the second
        predicate) return the second input quietened."""
        ty = ins.type
        extra = [m for m in ins.modifiers if m not in ("ftz", "NaN", "xorsign", "abs")]
        if extra:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ty}`")
        # .xorsign.abs: the min/max of |a| and |b|, its sign the xor of theirs (XORSIGN, as ptxas)
        xorsign = "xorsign" in ins.modifiers
        nan = (("NAN",) if "NaN" in ins.modifiers else ()) + (("XORSIGN",) if xorsign else ())
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        a, b = ins.srcs[0], ins.srcs[1]
        d = ins.dests[0]
        if ty == "f32":
            if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
                a, b = b, a
            if xorsign:
                ra, rb = self.reg_part(a), self.reg_part(b)
                self.emit("FMNMX", ftz + nan, [self.dst(d), replace(ra, abs=True),
                                                replace(rb, abs=True), which])
                return
            self.emit("FMNMX", ftz + nan, [self.dst(d), self.reg_part(a), self.fsrc(b), which])
            return
        if ty in ("f16", "bf16", "f16x2", "bf16x2"):
            if ty.startswith("bf16") and ftz:
                raise self.unsupported(f"`{ins.opcode}.ftz.{ty}`")
            half = ("H0_H0",) if ty in ("f16", "bf16") else ()
            mods = ftz + (("BF16_V2",) if ty.startswith("bf16") else ()) + nan
            ra, rb = self.reg_part(a), self.reg_part(b)
            if half:
                ra, rb = replace(ra, suffix=half), replace(rb, suffix=half)
            if xorsign:
                ra, rb = replace(ra, abs=True), replace(rb, abs=True)
            self.emit("HMNMX2", mods, [self.dst(d), ra, rb, which])
            return
        if ty == "f64" and not nan:
            if self.guard is not None:
                raise self.unsupported(f"guarded `{ins.opcode}.f64`")
            wa, wb = self.force_wide(a), self.force_wide(b)
            pick, both_nan = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
            self.emit("DSETP", ("MIN" if which == PT else "MAX", "AND"),
                      [pick, both_nan, wa, wb, PT], ndefs=2)
            self.begin_wide(d)
            hi, lo = self.dst(d, 1), self.dst(d, 0)
            self.emit("FSEL", (), [hi, VOp(wa.reg, 1), VOp(wb.reg, 1), pick])
            self.emit("SEL", (), [lo, VOp(wa.reg, 0), VOp(wb.reg, 0), pick])
            self.guarded(both_nan, False, "LOP3", ("LUT",),
                         [hi, VOp(wb.reg, 1), Imm(0x80000), RZ, Imm(LUT["or"]), NOT_PT])
            return
        raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers + (ty,))}`")

    def f64_src(self, op):
        """A 64-bit float source: an immediate where the constant's low word is zero (the
        instruction's 32-bit field holds the high word, as ptxas writes `DFMA R4, R4, R6, 2`),
        else a register pair."""
        if isinstance(op, ir.Const) and op.value and not op.value & 0xFFFFFFFF:
            text = float_bits_text(op.value & (1 << 64) - 1, 64)
            if "NAN" not in text:
                return parse_operand(text)
        return self.wide_reg(op)

    def force_wide(self, op) -> VOp:
        """A 64-bit operand in a register pair, even a zero constant."""
        r = self.wide_reg(op)
        return r if isinstance(r, VOp) else self.pair_of(op)

    def half_setp(self, ins, cmp, bool_mod, p, second, combine):
        """setp on 16-bit floats: HSETP2, whose two results compare the low and the high
        halves. A scalar type compares the low halves (`.H0_H0`); a pair type's `p|q` get
        the low and the high compare."""
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        bf = ("BF16_V2",) if ins.type.startswith("bf16") else ()
        half = ("H0_H0",) if ins.type in ("f16", "bf16") else ()
        ra, rb = self.reg_part(ins.srcs[0]), self.reg_part(ins.srcs[1])
        # nvdisasm spells the bf16 type before the comparison (`HSETP2.BF16_V2.NEU.AND`); the
        # tables know only that order
        self.emit("HSETP2", bf + (FLOAT_COMPARE[cmp],) + ftz + (bool_mod,),
                  [p, second, replace(ra, suffix=half), replace(rb, suffix=half), combine], ndefs=2)

    def negate_float(self, op):
        """-op for a float source. A float immediate has no negation bit (FADD's `-` applies
        to registers and constants): its own sign flips, in its text."""
        if isinstance(op, Imm):
            return Imm(op.value, negated_float_text(op.text)) if op.text is not None else self.negate(op)
        if isinstance(op, Reg) and op.is_zero:
            return Reg("R", 255, neg=True)
        return self.negate(op)

    def sel_fma(self, ins):
        """fma, also as made by contraction (opt/contract.py), whose `negate` attribute names
        the sources to negate (the first is then always a register)."""
        ty = ins.type
        a, b, c = ins.srcs
        d = ins.dests[0]
        negate = ins.attrs.get("negate", ())
        if ty == "f64":
            mods = tuple(m for m in self.float_mods(ins) if m != "FTZ")
            if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
                a, b = b, a
                negate = tuple({0: 1, 1: 0}.get(k, k) for k in negate)
            imm_b = not isinstance(c, ir.Const) or c.value == 0    # one immediate: B, else C
            srcs = [self.wide_reg(a), self.f64_src(b) if imm_b else self.wide_reg(b), self.f64_src(c)]
            srcs = [self.negate_float(s) if k in negate and isinstance(s, Imm)
                    else self.negate(s) if k in negate else s for k, s in enumerate(srcs)]
            self.emit("DFMA", mods, [self.dst(d)] + srcs)
            return
        if ty in self.HALF_TYPES:
            return self.half_arith(ins, "HFMA2", negate=negate)
        if ty != "f32":
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        srcs = [self.reg_part(a), self.fsrc(b), self.fsrc(c, allow_imm=False)]
        srcs = [self.negate_float(s) if k in negate else s for k, s in enumerate(srcs)]
        self.emit("FFMA", self.float_mods(ins), [self.dst(d)] + srcs)

    def sel_copysign(self, ins):
        if ins.type == "f64":
            # as ptxas: the low word of b, the high word merged with a's sign bit
            a, b, d = ins.srcs[0], ins.srcs[1], ins.dests[0]
            self.emit(COPY, (), [self.dst(d, 0), self.part_of(b, 0)])
            self.emit("LOP3", ("LUT",), [self.dst(d, 1), self.part_of(b, 1), Imm(0x80000000),
                                         self.part_of(a, 1), Imm(0xB8), NOT_PT])
            return
        if ins.type != "f32":
            raise self.unsupported(f"`copysign.{ins.type}`")
        # copysign(a, b): the sign of a, the rest of b (LUT: a ? c : b over (b, imm, a)).
        a, b = self.reg_part(ins.srcs[0]), self.reg_part(ins.srcs[1])
        self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]), b, Imm(0x80000000), a, Imm(0xB8), NOT_PT])

    def sel_abs(self, ins):
        ty = ins.type
        d, a = ins.dests[0], ins.srcs[0]
        if ty == "f32":
            src = self.in_register(a)       # a zero immediate: not RZ, which takes no |.|
            self.emit("FADD", ("FTZ",) if "ftz" in ins.modifiers else (),
                      [self.dst(d), VOp(src.reg, src.part, abs=True), Reg("R", 255, neg=True)])
            return
        if ty == "f64":               # ptxas: DADD d, -RZ, |a|
            src = self.wide_reg(a)
            self.emit("DADD", (), [self.dst(d), Reg("R", 255, neg=True), replace(src, abs=True)])
            return
        if ty in self.HALF_TYPES:
            return self.half_sign(ins, neg=False)
        if ty == "f64":           # ptxas: DADD -RZ, |x| (NaN payloads kept, like FADD's)
            x = self.force_wide(a)
            self.emit("DADD", (), [self.dst(d), Reg("R", 255, neg=True), replace(x, abs=True)])
            return
        if _bits(ty) == 32:
            self.emit("IABS", (), [self.dst(d), self.reg_part(a)])
            return
        if _bits(ty) == 16:           # the sign-extended value's absolute value
            self.emit("IABS", (), [self.dst(d), self.extend(a, "s16")])
            return
        # s64, as ptxas: -a with a borrow, the sign from the high word, SEL per half
        neg, borrow = VOp(self.mf.new_vreg("R", 2)), VOp(self.mf.new_vreg("P"))
        negative = VOp(self.mf.new_vreg("P"))
        self.emit(IMPLICIT_DEF, (), [neg], guarded=False)
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        if (isinstance(lo, Reg) and lo.is_zero) or (isinstance(lo, Imm) and lo.value == 0):
            # a known-zero low word (abs of -2^63, folded): -0 carries into the high word,
            # which `RZ - RZ` would not say
            self.emit("IADD3", (), [VOp(neg.reg, 0), RZ, RZ, RZ])
            borrow = PT
        else:
            self.emit("IADD3", (), [VOp(neg.reg, 0), borrow, RZ, self.negate(lo), RZ], ndefs=2)
        self.emit("ISETP", ("LT", "AND"), [negative, PT, hi, RZ, PT], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(neg.reg, 1), RZ, self.invert(hi), RZ, borrow, NOT_PT])
        self.begin_wide(d)
        for k, x in enumerate((lo, hi)):
            self.emit("SEL", (), [self.dst(d, k), VOp(neg.reg, k), x, negative])

    def half_sign(self, ins, neg: bool):
        """neg/abs on 16-bit float types as ptxas does: HADD2 of the operand (negated or
        absolute) and -0 for f16, HFMA2.BF16_V2 -0 * 0 + operand for bf16."""
        ty = ins.type
        mods = self.half_mods(ins)
        x = self.half_operand(ins.srcs[0], ty, neg=neg, abs_=not neg)
        if ty.startswith("bf16"):     # no bf16 HADD2 on sm_8x: -0 * 0 + x
            self.emit("HFMA2", mods, [self.dst(ins.dests[0]), Reg("R", 255, neg=True, suffix=("H0_H0",)),
                                      Reg("R", 255, suffix=("H0_H0",)), x])
            return
        minus_zero = Reg("R", 255, neg=True, suffix=("H0_H0",) if ty == "f16" else ())
        self.emit("HADD2", mods, [self.dst(ins.dests[0]), x, minus_zero])

    # ------------------------------------------------------------------ MUFU approximations
    # ptxas's range handling around the multi-function unit: inputs that MUFU would flush
    # (subnormals, huge values) are scaled first and the result corrected after, unless
    # the PTX asked for .ftz.
    def fimm(self, x: float) -> Imm:
        return parse_operand(float_text(x))

    def mufu(self, func: str, d: VOp, x) -> None:
        self.emit("MUFU", (func,), [d, x])

    def guarded(self, p: VOp, negate: bool, opcode, mods, operands) -> None:
        mi = self.emit(opcode, mods, operands)
        if self.guard is not None:
            raise self.unsupported(f"guarded `{self.ins.opcode}`")
        mi.guard = VOp(p.reg, inv=negate)

    def scaled_input(self, x: VOp, threshold, compare: str, scale) -> tuple[VOp, VOp]:
        """p = (x cmp threshold); where !p, x' = x * scale (else x' = x)."""
        p = VOp(self.mf.new_vreg("P"))
        self.emit("FSETP", (compare, "AND"), [p, PT, x, threshold, PT], ndefs=2)
        xs = VOp(self.mf.new_vreg())
        self.emit(COPY, (), [xs, x], guarded=False)
        self.guarded(p, True, "FMUL", (), [xs, xs, scale])
        return p, xs

    FLT_MIN = 1.1754943508222875e-38

    def half_mufu(self, ins, func: str) -> None:
        """MUFU.<func>.F16 (.BF16) on an f16 (bf16), or on each half of an f16x2 (bf16x2)
        joined by PRMT, the high half read as `R.H1` (ptxas)."""
        x = self.reg_part(ins.srcs[0])
        kind = "BF16" if ins.type.startswith("bf16") else "F16"
        if ins.type in ("f16", "bf16"):
            self.emit("MUFU", (func, kind), [self.dst(ins.dests[0]), x])
            return
        lo, hi = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("MUFU", (func, kind), [lo, x])
        if func == "TANH" and kind == "F16":
            # the encoding table reads no `MUFU.TANH.F16 R, R.H1` yet (ptxas's form): shift the
            # high half down first
            top = VOp(self.mf.new_vreg())
            self.emit("SHF", ("R", "U32", "HI"), [top, RZ, Imm(0x10), x])
            self.emit("MUFU", (func, "F16"), [hi, top])
        else:
            self.emit("MUFU", (func, kind), [hi, replace(x, suffix=("H1",))])
        self.emit("PRMT", (), [self.dst(ins.dests[0]), lo, Imm(0x5410), hi])

    def sel_ex2(self, ins):
        if ins.type in ("f16x2", "bf16x2") and self.arch.packed_ex2:
            kind = "BF16x2" if ins.type == "bf16x2" else "F16x2"
            return self.emit("MUFU", ("EX2", kind), [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])
        if ins.type in ("f16", "f16x2", "bf16", "bf16x2"):   # MUFU's half forms, as ptxas
            return self.half_mufu(ins, "EX2")
        self.approx_check(ins)
        d, x = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])
        if "ftz" in ins.modifiers:
            return self.mufu("EX2", d, x)
        p, xs = self.scaled_input(x, self.fimm(-126.0), "GEU", self.fimm(0.5))
        r = VOp(self.mf.new_vreg())
        self.mufu("EX2", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FMUL", (), [d, r, r])

    def sel_lg2(self, ins):
        self.approx_check(ins)
        d = self.dst(ins.dests[0])
        if "ftz" in ins.modifiers:
            return self.mufu("LG2", d, self.reg_part(ins.srcs[0]))
        x = self.in_register(ins.srcs[0])      # |x| below: a known zero needs a register (not RZ)
        p, xs = self.scaled_input(VOp(x.reg, x.part, abs=True), self.fimm(self.FLT_MIN), "GEU",
                                  self.fimm(16777216.0))
        self.fix_abs_copy(xs, x)
        r = VOp(self.mf.new_vreg())
        self.mufu("LG2", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FADD", (), [d, r, self.fimm(-24.0)])

    def fix_abs_copy(self, xs: VOp, x: VOp) -> None:
        """scaled_input copied |x| as a register: make that copy read plain x."""
        for mi in self.out:
            if mi.opcode == COPY and mi.operands[0] == xs:
                mi.operands[1] = x

    def sel_sqrt(self, ins):
        if "approx" not in ins.modifiers:
            return self.ieee_sqrt(ins)        # isel/ieee.py
        if ins.type != "f32":
            raise self.unsupported(f"`sqrt.{'.'.join(ins.modifiers)}.{ins.type}`")
        d = self.dst(ins.dests[0])
        if "ftz" in ins.modifiers:
            return self.mufu("SQRT", d, self.reg_part(ins.srcs[0]))
        x = self.in_register(ins.srcs[0])      # |x| below: a known zero needs a register (not RZ)
        p, xs = self.scaled_input(VOp(x.reg, x.part, abs=True), self.fimm(self.FLT_MIN), "GEU",
                                  self.fimm(16777216.0))
        self.fix_abs_copy(xs, x)
        r = VOp(self.mf.new_vreg())
        self.mufu("SQRT", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FMUL", (), [d, r, self.fimm(0.000244140625)])

    def sel_sin(self, ins):
        self.trig(ins, "SIN")

    def sel_cos(self, ins):
        self.trig(ins, "COS")

    def trig(self, ins, func: str):
        self.approx_check(ins)
        t = VOp(self.mf.new_vreg())
        self.emit("FMUL", ("RZ",), [t, self.reg_part(ins.srcs[0]), self.fimm(0.15915493667125701904)])
        self.mufu(func, self.dst(ins.dests[0]), t)

    def sel_tanh(self, ins):
        if ins.type in ("f16", "f16x2", "bf16", "bf16x2"):
            return self.half_mufu(ins, "TANH")
        self.approx_check(ins)
        self.mufu("TANH", self.dst(ins.dests[0]), self.reg_part(ins.srcs[0]))

    def sel_rcp(self, ins):
        if "approx" not in ins.modifiers:
            return self.ieee_rcp(ins)         # isel/ieee.py
        if ins.type == "f64":       # rcp.approx.ftz.f64: MUFU.RCP64H's high word, low word 0
            d = ins.dests[0]
            self.begin_wide(d)
            self.move(self.dst(d, 0), RZ)
            self.emit("MUFU", ("RCP64H",), [self.dst(d, 1), self.reg_part(ins.srcs[0], 1)])
            return
        self.approx_check(ins)
        d = self.dst(ins.dests[0])
        if "ftz" in ins.modifiers:
            return self.mufu("RCP", d, self.reg_part(ins.srcs[0]))
        x = self.in_register(ins.srcs[0])      # |x| below: a known zero needs a register (not RZ)
        # scale = |x| < FLT_MIN ? 2^24 : (|x| > 2^126 ? 0.25 : 1); rcp(x) = rcp(x*scale)*scale
        big = VOp(self.mf.new_vreg())
        self.move(big, Imm(0x4B800000))
        small_ok, huge = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        xa = VOp(x.reg, x.part, abs=True)
        self.emit("FSETP", ("GEU", "AND"), [small_ok, PT, xa, self.fimm(self.FLT_MIN), PT], ndefs=2)
        self.emit("FSETP", ("GT", "AND"), [huge, PT, xa, self.fimm(8.50705917302346158658e+37), PT], ndefs=2)
        s1, s2 = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("FSEL", (), [s1, big, self.fimm(1.0), VOp(small_ok.reg, inv=True)])
        self.emit("FSEL", (), [s2, s1, self.fimm(0.25), VOp(huge.reg, inv=True)])
        xs, r = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("FMUL", (), [xs, x, s2])
        self.mufu("RCP", r, xs)
        self.emit("FMUL", (), [d, s2, r])

    def float_div(self, ins):
        if "approx" not in ins.modifiers:
            return self.ieee_div(ins)         # isel/ieee.py
        if ins.type != "f32":
            raise self.unsupported(f"`div.{'.'.join(ins.modifiers)}.{ins.type}`")
        d, a, b = self.dst(ins.dests[0]), self.in_register(ins.srcs[0]), self.in_register(ins.srcs[1])
        if "ftz" in ins.modifiers:
            # ptxas: a * MUFU.RCP(b) with the product flushed (MUFU flushes its input)
            r = VOp(self.mf.new_vreg())
            self.mufu("RCP", r, b)
            self.emit("FMUL", ("FTZ",), [d, a, r])
            return
        p = VOp(self.mf.new_vreg("P"))
        self.emit("FSETP", ("GEU", "AND"), [p, PT, VOp(b.reg, b.part, abs=True), self.fimm(self.FLT_MIN), PT],
                  ndefs=2)
        bs, as_ = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit(COPY, (), [bs, b], guarded=False)
        self.emit(COPY, (), [as_, a], guarded=False)
        self.guarded(p, True, "FMUL", (), [bs, bs, self.fimm(16777216.0)])
        self.guarded(p, True, "FMUL", (), [as_, as_, self.fimm(16777216.0)])
        if len(ins.dests) == 2:       # (reciprocal, scaled numerator): opt/contract.py
            self.mufu("RCP", self.dst(ins.dests[0]), bs)
            self.emit(COPY, (), [self.dst(ins.dests[1]), as_], guarded=False)
            return
        r = VOp(self.mf.new_vreg())
        self.mufu("RCP", r, bs)
        self.emit("FMUL", (), [d, r, as_])

    def approx_check(self, ins):
        if ins.type != "f32":
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")
