"""Division, reciprocal and square root rounded toward zero, -inf or +inf (`div/rcp/sqrt
.rz/.rm/.rp`, f32 with or without .ftz, and f64), bit-identical to ptxas's sm_8x results.

The round-to-nearest sequences (isel/ieee.py) already end in one fused multiply-add whose
rounding is the result's; ptxas's directed versions are the same refinements with that
last FFMA/DFMA in the directed mode, plus edges that depend on the direction:

* overflow gives infinity only when rounding away from zero (RP for a positive result, RM
  for a negative one), otherwise the largest finite value; an underflow below the smallest
  subnormal gives that subnormal when rounding away, else zero;
* a subnormal result is rounded by hand where the refinement works in a scaled range: the
  bits come from the RZ rounding of the last step, "inexact" from the directed rounding
  and its opposite disagreeing or from bits shifted out, and one unit is added when
  inexact and rounding away from zero;
* f64 division instead scales its quotient back with a DMUL in the same mode (a second
  directed rounding in the same direction is harmless, unlike a second round-to-nearest);
* f32 division has no fast path at all (its subroutine is ptxas's whole sequence); f64
  reciprocal and square root have their own subroutines (different refinements from the
  round-to-nearest ones, read off ptxas's output), written out below.

Special operands give the round-to-nearest answers (NaN rules as in isel/ieee.py).

A mixin of `Selector` (isel/select.py), next to `IeeeFloat` whose helpers it uses.
"""
from __future__ import annotations

from ptx2sass.encoder.model import Imm
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.isel.ieee import (AND, A_OR_B_AND_C, F32_INF, F32_NAN, F64_NAN_HI, INF, OR, SIGN, hi, lo,
                                mag, neg, no)
from ptx2sass.mir import VOp

MODES = {"rz": "RZ", "rm": "RM", "rp": "RP"}
OPPOSITE = {"RM": "RP", "RP": "RM"}
F32_MAX = 0x7F7FFFFF


class DirectedRounding:
    # ------------------------------------------------------------------ entry points
    def directed_mode(self, ins) -> str:
        return next(MODES[m] for m in ins.modifiers if m in MODES)

    def directed_div(self, ins) -> None:
        mode, ftz = self.directed_mode(ins), "ftz" in ins.modifiers
        if ins.type == "f32":
            a, b = self.ieee_f32_operands(ins)
            return self.ieee_result(ins, lambda: self.div_directed_f32(a, b, ftz, mode))
        a, b = self.force_wide(ins.srcs[0]), self.force_wide(ins.srcs[1])
        self.ieee_result(ins, lambda: self.div_directed_f64(a, b, mode))

    def directed_unary(self, ins) -> None:
        """`rcp` / `sqrt` in a directed rounding."""
        mode, ftz = self.directed_mode(ins), "ftz" in ins.modifiers
        rcp = ins.opcode == "rcp"
        if ins.type == "f32":
            (x,) = self.ieee_f32_operands(ins)
            f32 = self.rcp_directed_f32 if rcp else self.sqrt_directed_f32
            return self.ieee_result(ins, lambda: f32(x, ftz, mode))
        x = self.force_wide(ins.srcs[0])
        f64 = self.rcp_directed_f64 if rcp else self.sqrt_directed_f64
        self.ieee_result(ins, lambda: f64(x, mode))

    # ------------------------------------------------------------------ direction helpers
    def away(self, sign: VOp, mode: str) -> VOp | None:
        """The lanes whose result is rounded away from zero (None for RZ: none): negative
        ones for RM, positive ones for RP. `sign` is the sign bit alone (0 or 0x80000000)."""
        if mode == "RZ":
            return None
        return self.setp("ISETP", ("NE" if mode == "RM" else "EQ") + ".U32", sign, RZ)

    def overflow_f32(self, sign: VOp, mode: str) -> VOp:
        """sign | (infinity when rounding away from zero, else the largest finite value)."""
        v = self.r32()
        self.move(v, self.i(F32_MAX))
        away = self.away(sign, mode)
        if away is not None:
            self.move_when(away, v, self.i(F32_INF))
        return self.lop(v, sign, RZ, OR)

    def underflow_f32(self, sign: VOp, mode: str) -> VOp:
        """sign | (the smallest subnormal when rounding away from zero, else zero)."""
        v = self.r32()
        self.move(v, RZ)
        away = self.away(sign, mode)
        if away is not None:
            self.move_when(away, v, self.i(1))
        return self.lop(v, sign, RZ, OR)

    # ------------------------------------------------------------------ f32 division
    def div_directed_f32(self, a: VOp, b: VOp, ftz: bool, mode: str) -> VOp:
        """ptxas's division subroutine alone: special operands, scaling of subnormal ones,
        the refinement on operands moved to exponent 0 (isel/ieee.py's slow path), the
        last step in `mode`."""
        q = self.r64_free32()
        done = self.flow_block("div_done")
        self.div_f32_slow(a, b, q, done, ftz, mode)
        self.flow_enter(done)
        return q

    def div_f32_directed_edges(self, r1, rem1, q1, qn, eo, sign, q, done, ftz: bool, mode: str) -> None:
        """The quotient qn (= r1*rem1 + q1 rounded in `mode`) whose final exponent eo is out
        of 1..254: overflow, a signed zero (.ftz), nothing left (eo < -24), or a subnormal
        rounded by hand."""
        over = self.setp("ISETP", "GT", eo, self.i(0xFE))
        self.put("IMAD", "MOV.U32", q, RZ, RZ, self.overflow_f32(sign, mode), when=over)
        self.flow_goto(done, when=over)
        if ftz:
            self.put("IMAD", "MOV.U32", q, RZ, RZ, sign)
            return
        tiny = self.setp("ISETP", "LT", eo, self.i(-24))
        self.put("IMAD", "MOV.U32", q, RZ, RZ, self.underflow_f32(sign, mode), when=tiny)
        self.flow_goto(done, when=tiny)
        m = self.lop(self.lop(self.fma(r1, rem1, q1, mods="RZ"), self.i(0x7FFFFF), RZ, AND),
                     self.i(0x800000), RZ, OR)
        kept = self.r32()
        self.put("SHF", "R.U32.HI", kept, RZ, self.add3(neg(eo), self.i(1)), m)     # m >> (1 - eo)
        if mode != "RZ":
            lost = self.r32()
            self.put("SHF", "L.U32", lost, m, self.add3(eo, self.i(31)), RZ)      # the bits shifted out
            inexact = self.setp("FSETP", "NEU.FTZ", qn, self.fma(r1, rem1, q1, mods=OPPOSITE[mode]))
            self.put("ISETP", "NE.U32.OR", inexact, PT, lost, RZ, inexact, ndefs=2)
            up = self.away(sign, mode)
            self.put("PLOP3", "LUT", up, PT, up, inexact, PT, Imm(0xC0), Imm(0), ndefs=2)   # a & b
            self.add3(kept, self.i(1), into=kept, when=up)
        self.lop(kept, sign, RZ, OR, into=q)

    # ------------------------------------------------------------------ f32 reciprocal
    def rcp_directed_f32(self, x: VOp, ftz: bool, mode: str) -> VOp:
        """isel/ieee.py's range test; the fast path's Newton step in `mode` (without .ftz its
        error term too, as ptxas does)."""
        res = self.r64_free32()
        t = self.lop(self.add3(x, self.i(0x1800000)), self.i(F32_INF), RZ, AND)
        fast_ok = self.setp("ISETP", "GT.U32", t, self.i(0x1FFFFFF))
        fast, done = self.flow_block("rcp_fast"), self.flow_block("rcp_done")
        self.flow_goto(fast, when=fast_ok)
        if ftz:
            self.rcp_f32_slow_ftz(x, t, res, done)        # the edges flush: no direction left
        else:
            self.rcp_f32_slow_directed(x, res, done, mode)
        self.flow_goto(done)
        self.flow_enter(fast)
        r = self.r32()
        self.put("MUFU", "RCP", r, x)
        e = self.fma(x, r, self.f(-1.0), mods="" if ftz else mode)
        self.put("FADD", "FTZ", e, neg(e), neg(RZ))
        self.fma(r, e, r, mods=mode, into=res)
        self.flow_enter(done)
        return res

    def rcp_newton_directed(self, x: VOp, mode: str) -> VOp:
        r = self.r32()
        self.put("MUFU", "RCP", r, x)
        e = self.fma(x, r, self.f(-1.0))
        self.put("FADD", "FTZ", e, neg(e), neg(RZ))
        return self.fma(r, e, r, mods=mode)

    def rcp_f32_slow_directed(self, x: VOp, res: VOp, done, mode: str) -> None:
        """Exponent 0: zero → signed infinity; |x| <= 2^-128 → overflow (infinity or the
        largest finite value, by direction); else x * 2^64, the Newton step, times 2^64.
        Exponent 255: MUFU's answer. Exponents 253 and 254: the reciprocal of the mantissa
        shifted to the subnormal result by hand."""
        x2 = self.r32()
        self.put("SHF", "L.U32", x2, x, self.i(1), RZ)
        ex = self.r32()
        self.put("SHF", "R.U32.HI", ex, RZ, self.i(24), x2)
        exp0 = self.setp("ISETP", "EQ.U32", ex, RZ)
        sub = self.flow_block("rcp_sub")
        self.flow_goto(sub, when=exp0)
        k = self.add3(ex, self.i(-0xFD))
        other = self.setp("ISETP", "GT.U32", k, self.i(1))
        self.put("MUFU", "RCP", res, x, when=other)
        self.flow_goto(done, when=other)
        m = self.lop(self.lop(x, self.i(0x7FFFFF), RZ, AND), self.i(0x3F800000), RZ, OR)
        r = self.r32()
        self.put("MUFU", "RCP", r, m)
        e = self.fma(m, r, self.f(-1.0))
        self.put("FADD", "FTZ", e, neg(e), neg(RZ))
        t = self.fma(r, e, r, mods="RZ")            # 1/m in (1/2, 1]: positive, RZ = RM
        mr = self.lop(self.lop(t, self.i(0x7FFFFF), RZ, AND), self.i(0x800000), RZ, OR)
        sh = self.add3(ex, self.i(-0xFC))           # 1 or 2
        q = self.r32()
        self.put("SHF", "R.U32.HI", q, RZ, sh, mr)
        sign = self.lop(x, self.i(SIGN), RZ, AND)
        if mode != "RZ":
            lost = self.r32()
            self.put("SHF", "L.U32", lost, mr, self.add3(neg(sh), self.i(32)), RZ)
            inexact = self.setp("FSETP", "NEU.FTZ", t, self.fma(r, e, r, mods="RP"))
            self.put("ISETP", "NE.U32.OR", inexact, PT, lost, RZ, inexact, ndefs=2)
            up = self.away(sign, mode)
            self.put("PLOP3", "LUT", up, PT, up, inexact, PT, Imm(0xC0), Imm(0), ndefs=2)
            self.add3(q, self.i(1), into=q, when=up)
        pow2 = self.setp("ISETP", "EQ.U32", self.lop(x, self.i(0x7FFFFF), RZ, AND), RZ)
        self.put("SHF", "L.U32", q, q, self.i(1), RZ, when=pow2)    # 1/1.0 is 1.0, not in (1/2, 1)
        self.lop(q, sign, RZ, OR, into=res)
        self.flow_goto(done)
        self.flow_enter(sub)
        big = self.setp("ISETP", "GT", x2, self.i(0x400000))
        scaled = self.flow_block("rcp_scaled")
        self.flow_goto(scaled, when=big)
        sign = self.lop(x, self.i(SIGN), RZ, AND)
        v = self.overflow_f32(sign, mode)
        zero = self.setp("ISETP", "EQ.U32", x2, RZ)
        self.lop(sign, self.i(F32_INF), RZ, OR, when=zero, into=v)
        self.put("IMAD", "MOV.U32", res, RZ, RZ, v)
        self.flow_goto(done)
        self.flow_enter(scaled)
        xs = self.fma(x, self.f(2.0 ** 64), RZ)
        self.fma(self.rcp_newton_directed(xs, mode), self.f(2.0 ** 64), RZ, into=res)

    # ------------------------------------------------------------------ f32 square root
    def sqrt_step_f32(self, x: VOp, y: VOp, mode: str, into: VOp) -> VOp:
        """sqrt(x) from y ~ rsqrt(x): s = x*y, then s + (x - s*s) * y/2 in `mode`; RM and RZ
        first refine s once more, s + s*(1/2 - s*y/2) (ptxas does: a result whose square
        root is exact must come out exact, and rounding down leaves no slack)."""
        s, h, n = self.r32(), self.r32(), self.r32()
        self.put("FMUL", "FTZ", s, x, y)
        self.put("FMUL", "FTZ", h, y, self.f(0.5))
        self.put("FADD", "FTZ", n, neg(s), neg(RZ))
        if mode in ("RM", "RZ"):
            t = self.fma(h, n, self.f(0.5))
            s = self.fma(s, t, s)
            n = self.r32()
            self.put("FADD", "FTZ", n, neg(s), neg(RZ))
        e = self.fma(s, n, x)
        return self.fma(h, e, s, mods=mode, into=into)

    def sqrt_directed_f32(self, x: VOp, ftz: bool, mode: str) -> VOp:
        """isel/ieee.py's range test and special cases; the step in `mode`."""
        slow = self.setp("ISETP", "GT.U32", self.add3(x, self.i(-0xD000000)), self.i(0x727FFFFF))
        res = self.r64_free32()
        fast, done = self.flow_block("sqrt_fast"), self.flow_block("sqrt_done")
        self.flow_goto(fast, when=no(slow))
        self.sqrt_f32_slow(x, res, done, ftz, mode)
        self.flow_goto(done)
        self.flow_enter(fast)
        y = self.r32()
        self.put("MUFU", "RSQ", y, x)
        self.sqrt_step_f32(x, y, mode, res)
        self.flow_enter(done)
        return res
