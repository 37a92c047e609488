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
from ptx2sass.isel.ieee import AND, F32_INF, F64_NAN_HI, INF, OR, SIGN, hi, lo, mag, neg, no
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
        res, t, fast, done = self.rcp_f32_range_test(x)
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
        x2, ex, k, m, sub = self.rcp_f32_exponent_cases(x, res, done)
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

    # ------------------------------------------------------------------ f64 helpers
    def exponent_f64(self, x_hi: VOp) -> VOp:
        """The biased exponent field of a double, from its high word: (hi << 1) >> 21."""
        t, e = self.r32(), self.r32()
        self.put("SHF", "L.U32", t, x_hi, self.i(1), RZ)
        self.put("SHF", "R.U32.HI", e, RZ, self.i(21), t)
        return e

    def edge_f64(self, res: VOp, sign: VOp, mode: str, low, high, low_away, high_away, when: VOp) -> None:
        """res = sign | (high:low), or (high_away:low_away) on the lanes rounded away from zero."""
        h, l = self.r32(), self.r32()
        self.move(h, self.i(high))
        self.move(l, self.i(low))
        away = self.away(sign, mode)
        if away is not None:
            self.move_when(away, h, self.i(high_away))
            self.move_when(away, l, self.i(low_away))
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, l, when=when)
        self.lop(h, sign, RZ, OR, when=when, into=hi(res))

    # ------------------------------------------------------------------ f64 division
    def div_directed_f64(self, a: VOp, b: VOp, mode: str) -> VOp:
        """isel/ieee.py's slow path (ptxas has no fast one here) with a directed tail."""
        res = self.new_pair()
        done = self.flow_block("ddiv_done")
        self.div_f64_slow(a, b, res, done, mode)
        self.flow_enter(done)
        return res

    def div_f64_directed_tail(self, a_exp, ea, eb, y2, q2, bn, an, res, mode: str) -> None:
        """One more correction q2 + y2*(an - q2*bn) in `mode`, then times 2^(exponent
        difference, clamped) in `mode`: overflow and subnormal results round there."""
        d = self.add3(ea, neg(eb))
        self.put("IMNMX", "", d, d, self.i(-0x46A00000), NOT_PT)
        self.put("IMNMX", "", d, d, self.i(0x46A00000), PT)
        scale = self.pair(RZ, lambda h: self.add3(d, self.i(0x7FE00000), neg(a_exp), into=h))
        r = self.dfma(q2, neg(bn), an, mods=mode)
        q3 = self.dfma(y2, r, q2, mods=mode)
        self.dmul(scale, q3, mods=mode, into=res)

    # ------------------------------------------------------------------ f64 reciprocal
    def rcp_directed_f64(self, x: VOp, mode: str) -> VOp:
        """Special operands (NaN quieted, ±inf → ±0, ±0 → ±inf) and subnormals (times 2^54)
        first; then x with its exponent replaced by 0, a reciprocal refined in three steps
        (the last in `mode`), and the exponent put back: overflow to infinity or the largest
        finite value, underflow to zero or the smallest subnormal, a subnormal result
        shifted by hand (64-bit)."""
        res = self.new_pair()
        done, core = self.flow_block("drcp_done"), self.flow_block("drcp_core")
        e = self.exponent_f64(hi(x))
        sign = self.lop(hi(x), self.i(SIGN), RZ, AND)
        xs = self.copy(x)
        adj = self.r32()
        self.move(adj, RZ)
        odd = self.setp("ISETP", "GT.U32", self.add3(e, self.i(-1)), self.i(0x7FD))
        self.flow_goto(core, when=no(odd))
        nan = self.setp("DSETP", "GTU", mag(x), INF)
        self.quieted(res, x, nan)
        self.flow_goto(done, when=nan)
        inf = self.setp("DSETP", "EQ", mag(x), INF)
        self.set_pair(res, RZ, sign, when=inf)
        self.flow_goto(done, when=inf)
        zero = self.setp("DSETP", "EQ", x, RZ)
        self.set_pair(res, RZ, self.lop(sign, self.i(0x7FF00000), RZ, OR), when=zero)
        self.flow_goto(done, when=zero)
        self.dmul(x, self.f(2.0 ** 54), into=xs)
        self.move(adj, self.i(54))
        self.flow_enter(core)
        xn = self.pair(lo(xs), lambda h: self.put("IMAD", "", h, self.add3(e, self.i(-0x3FF)),
                                                  self.i(-0x100000), hi(xs)))
        y0 = self.pair(self.i(1), lambda h: self.put("MUFU", "RCP64H", h, hi(xn)))
        ee = self.dfma(neg(xn), y0, self.f(1.0))
        t = self.dfma(y0, ee, y0)
        t2 = self.dfma(t, self.dmul(ee, ee), t)
        e3 = self.dfma(neg(xn), t2, self.f(1.0))
        y1 = self.dfma(ee, t2, y0)
        t3 = self.dfma(t2, e3, t2)
        e4 = self.dfma(neg(xn), y1, self.f(1.0))
        rm = self.dfma(t3, e4, y1, mods=mode)
        er = self.exponent_f64(hi(rm))
        eo = self.add3(adj, er, neg(e))                 # result exponent - 0x3ff
        in_range = self.setp("ISETP", "LE.U32", self.add3(eo, self.i(0x3FE)), self.i(0x7FD))
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, lo(rm), when=in_range)
        self.put("LEA", "", hi(res), self.add3(eo, self.i(0x3FF), neg(er)), hi(rm), self.i(20), when=in_range)
        self.flow_goto(done, when=in_range)
        over = self.setp("ISETP", "GT", eo, self.i(0x3FF))
        self.edge_f64(res, sign, mode, 0xFFFFFFFF, 0x7FEFFFFF, 0, 0x7FF00000, when=over)
        self.flow_goto(done, when=over)
        tiny = self.setp("ISETP", "LT", eo, self.i(-0x434))
        self.edge_f64(res, sign, mode, 0, 0, 1, 0, when=tiny)
        self.flow_goto(done, when=tiny)
        tz = self.dfma(t3, e4, y1, mods="RZ")
        m_hi = self.lop(self.lop(hi(tz), self.i(0xFFFFF), RZ, AND), self.i(0x100000), RZ, OR)
        shift = self.add3(neg(eo), self.i(-0x3FE))      # 1..54
        kept = self.new_pair()
        self.put("SHF", "R.U64", lo(kept), lo(tz), shift, m_hi)
        self.put("SHF", "R.U32.HI", hi(kept), RZ, shift, m_hi)
        if mode != "RZ":
            back = self.add3(eo, self.i(0x43E))         # 64 - shift
            lost_lo, lost_hi = self.r32(), self.r32()
            self.put("SHF", "L.U32", lost_lo, lo(tz), back, RZ)
            self.put("SHF", "L.U64.HI", lost_hi, lo(tz), back, m_hi)
            inexact = self.setp("DSETP", "NE", rm, self.dfma(t3, e4, y1, mods=OPPOSITE[mode]))
            self.put("ISETP", "NE.U32.OR", inexact, PT, lost_lo, RZ, inexact, ndefs=2)
            self.put("ISETP", "NE.U32.OR", inexact, PT, lost_hi, RZ, inexact, ndefs=2)
            up = self.away(sign, mode)
            self.put("PLOP3", "LUT", up, PT, up, inexact, PT, Imm(0xC0), Imm(0), ndefs=2)   # a & b
            carry = self.pred()
            self.put("IADD3", "", lo(kept), carry, lo(kept), self.i(1), RZ, ndefs=2, when=up)
            self.put("IMAD", "X", hi(kept), RZ, RZ, hi(kept), carry, when=up)
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, lo(kept))
        self.lop(hi(kept), sign, RZ, OR, into=hi(res))
        self.flow_enter(done)
        return res

    # ------------------------------------------------------------------ f64 square root
    def sqrt_directed_f64(self, x: VOp, mode: str) -> VOp:
        """Negative → NaN, ±0 and +inf → x, NaN quieted, subnormal → times 2^54; then x with
        its exponent brought to 0 or 1 (even difference), an f32 rsqrt estimate widened
        and refined (s and y/2 together, Goldschmidt style), the last correction in `mode`,
        and half the exponent difference put back (no overflow or underflow possible)."""
        res = self.new_pair()
        done, core = self.flow_block("dsqrt_done"), self.flow_block("dsqrt_core")
        e1 = self.add3(self.exponent_f64(hi(x)), self.i(-1))
        xs = self.copy(x)
        adj = self.r32()
        self.move(adj, RZ)
        odd = self.setp("ISETP", "GT.U32", e1, self.i(0x7FD))
        self.put("ISETP", "LT.OR", odd, PT, hi(x), RZ, odd, ndefs=2)
        self.flow_goto(core, when=no(odd))
        negative = self.setp("DSETP", "LT", x, RZ)
        self.set_pair(res, RZ, self.i(F64_NAN_HI), when=negative)
        self.flow_goto(done, when=negative)
        keep = self.setp("DSETP", "EQ", mag(x), INF)
        self.put("DSETP", "EQ.OR", keep, PT, x, RZ, keep, ndefs=2)
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, lo(x), when=keep)
        self.put("IMAD", "MOV.U32", hi(res), RZ, RZ, hi(x), when=keep)
        self.flow_goto(done, when=keep)
        nan = self.setp("DSETP", "NAN", x, x)
        self.quieted(res, x, nan)
        self.flow_goto(done, when=nan)
        self.dmul(x, self.f(2.0 ** 54), into=xs)
        self.move(adj, self.i(54))
        self.flow_enter(core)
        ev = self.lop(e1, self.i(0xFFFFFFFE), RZ, AND)
        k = self.add3(ev, self.i(-0x3FE))
        half = self.add3(k, neg(adj))
        xn = self.pair(lo(xs), lambda h: self.put("IMAD", "", h, k, self.i(-0x100000), hi(xs)))
        xh = self.pair(lo(xs), lambda h: self.add3(hi(xn), self.i(-0x100000), into=h))     # xn / 2
        f = self.r32()
        self.put("F2F", "F32.F64", f, xn)
        self.put("MUFU", "RSQ", f, f)
        y = self.new_pair()
        self.put("F2F", "F64.F32", y, f)
        t = self.dfma(xh, neg(self.dmul(y, y)), self.f(0.5))
        y1 = self.dfma(y, t, y)
        s = self.dmul(xn, y1)
        hy = self.dmul(xh, y1)
        yh = self.pair(lo(y1), lambda h: self.add3(hi(y1), self.i(-0x100000), into=h))     # y1 / 2
        r = self.dfma(neg(s), s, xn)
        t2 = self.dfma(y1, neg(hy), self.f(0.5))
        s1 = self.dfma(r, yh, s)
        yh2 = self.dfma(yh, t2, yh)
        r2 = self.dfma(neg(s1), s1, xn)
        self.dfma(r2, yh2, s1, mods=mode, into=res)
        self.put("IMAD", "", hi(res), half, self.i(0x80000), hi(res))
        self.flow_enter(done)
        return res
