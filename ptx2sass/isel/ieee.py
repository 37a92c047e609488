"""IEEE-exact float division, reciprocal and square root (`div.rn`, `rcp.rn`, `sqrt.rn` on
f32 and f64, `div.full.f32`, `rsqrt.approx`), computed as ptxas computes them for sm_8x so
that every result, NaNs and subnormals included, is the same bit pattern.

The shape is always the same: a fast path from a MUFU estimate refined by fused
multiply-adds (Newton steps whose last rounding is the correct one), guarded by a cheap
range test; lanes the test rejects (zero, subnormal, infinite, NaN operands, or exponents
whose quotient or intermediate products could overflow or underflow) branch to a slow path.
ptxas makes the slow path a subroutine after the kernel (CALL.REL / RET.REL), and so does
this module (`slow_path`, ptx2sass/slow_paths.py): the fast lanes branch over the call
(isel/flow.py); under -g it stays inline.

Why the steps are what they are (read off ptxas's output, then written here):
* the fast path's FFMAs: e = 1 - b*r is exact-ish error of the reciprocal estimate r;
  r + r*e is a reciprocal good to ~1 ulp; q = a*r, then one residual a - b*q (exact in an
  FMA) and q + r*residual give the correctly rounded quotient when no operand or result is
  near the edges of the format, which is what the range test (FCHK for f32 division)
  guarantees;
* the slow paths first sort out the special operands (NaN, 0/0, inf/inf, x/inf, x/0) in
  IEEE order, scale subnormal operands into the normal range (by 2^64, 2^106, ...),
  run the same refinement on operands whose exponents were moved next to 0, then put the
  exponent back with integer arithmetic; a result that falls into the subnormal range is
  rounded by hand from the directed-rounding variants of the last FFMA (RZ gives the
  bits, RM != RP tells that it was inexact), since the FFMA rounds at full precision;
* low words of f64 reciprocal estimates: MUFU.RCP64H/RSQ64H give a high word only, and
  ptxas fills the low word with whatever its register held (a constant 1, 0, or a word of
  the operand). The Newton steps nearly erase it, but not always to the last bit, so the
  same low words are used here.

Special results: NaN operands give FADD a+b (f32) or the operand made quiet (f64), invalid
operations the canonical NaN (0x7fffffff / 0xfff80000...), which ptxas writes as
`MUFU.RSQ -QNAN` and this module as the constant itself.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import abi, slow_paths
from ptx2sass.encoder.model import Imm, Label
from ptx2sass.encoder.sass_text import parse_operand
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.mir import COPY, IMPLICIT_DEF, MInstr, VOp

SIGN = 0x80000000
ABS = 0x7FFFFFFF
F32_INF = 0x7F800000
F32_NAN = 0x7FFFFFFF            # the GPU's canonical NaN
F64_NAN_HI = 0xFFF80000        # ptxas's invalid-operation NaN for f64 (low word 0)
INF = parse_operand("+INF")

# LOP3 truth tables over (a, b, c) = (0xF0, 0xCC, 0xAA)
AND, OR, XOR = 0xC0, 0xFC, 0x3C
A_XOR_C_AND_B = 0x48          # (a ^ c) & b: the sign of a product, b = 0x80000000
A_OR_B_AND_C = 0xF8           # a | (b & c)
A_OR_C_AND_B = 0xC8           # (a | c) & b


def neg(x):
    return replace(x, neg=not x.neg)


def mag(x):
    return replace(x, abs=True)


def no(p: VOp) -> VOp:
    return replace(p, inv=not p.inv)


def lo(x: VOp) -> VOp:
    return VOp(x.reg, 0)


def hi(x: VOp) -> VOp:
    return VOp(x.reg, 1)


class IeeeFloat:
    # ------------------------------------------------------------------ small helpers
    def put(self, opcode: str, mods: str, *ops, when: VOp | None = None, ndefs: int = 1):
        """One instruction, unguarded by the PTX guard (these sequences are computed for all
        lanes and the result moved under the guard at the end), or guarded by `when`."""
        mi = self.emit(opcode, tuple(m for m in mods.split(".") if m), list(ops), ndefs=ndefs,
                       guarded=False)
        mi.guard = when
        return mi

    def r32(self) -> VOp:
        return VOp(self.mf.new_vreg())

    def pred(self) -> VOp:
        return VOp(self.mf.new_vreg("P"))

    def i(self, value: int) -> Imm:
        return Imm(value & 0xFFFFFFFF)

    def f(self, x: float):
        return self.fimm(x)

    def setp(self, opcode: str, cmp: str, a, b, combine: str = "AND", c=PT) -> VOp:
        p = self.pred()
        self.put(opcode, f"{cmp}.{combine}", p, PT, a, b, c, ndefs=2)
        return p

    def lop(self, a, b, c, lut: int, when: VOp | None = None, into: VOp | None = None) -> VOp:
        d = into if into is not None else self.r32()
        self.put("LOP3", "LUT", d, a, b, c, Imm(lut), NOT_PT, when=when)
        return d

    def add3(self, a, b, c=RZ, into: VOp | None = None, when: VOp | None = None) -> VOp:
        d = into if into is not None else self.r32()
        self.put("IADD3", "", d, a, b, c, when=when)
        return d

    def copy(self, x) -> VOp:
        d = VOp(self.mf.new_vreg("R", x.width if isinstance(x, VOp) else 1))
        self.emit(COPY, (), [d, x], guarded=False)
        return d

    def fma(self, a, b, c, mods: str = "", into: VOp | None = None, when=None) -> VOp:
        d = into if into is not None else self.r32()
        self.put("FFMA", mods, d, a, b, c, when=when)
        return d

    def dfma(self, a, b, c, mods: str = "", into: VOp | None = None, when=None) -> VOp:
        d = into if into is not None else self.new_pair()
        self.put("DFMA", mods, d, a, b, c, when=when)
        return d

    def dmul(self, a, b, mods: str = "", into: VOp | None = None, when=None) -> VOp:
        d = into if into is not None else self.new_pair()
        self.put("DMUL", mods, d, a, b, when=when)
        return d

    def exponent_f32(self, x: VOp) -> VOp:
        """The biased exponent field (x >> 23) & 0xff."""
        t = self.r32()
        self.put("SHF", "R.U32.HI", t, RZ, self.i(23), x)
        return self.lop(t, self.i(0xFF), RZ, AND)

    def src32(self, op) -> VOp:
        """A 32-bit operand in a virtual register (immediates and zero moved in first)."""
        s = self.part_of(op, 0)
        if isinstance(s, VOp):
            return s
        t = self.r32()
        self.move(t, s)
        return t

    def ieee_result(self, ins, build) -> None:
        """Run `build()` (returns the result register) outside any PTX guard, then move the
        result into the destination: plainly, or under the guard (the else-value copy that
        `select` made keeps the other lanes' value)."""
        guard, self.guard = self.guard, None
        src = build()
        d = ins.dests[0]
        if guard is None:
            self.emit(COPY, (), [VOp(self.vreg(d)), src], guarded=False)
            return
        parts = range(2) if src.width == 2 else (None,)
        for k in parts:
            mi = self.emit("MOV", (), [VOp(self.vreg(d), k), VOp(src.reg, k)], guarded=False)
            mi.guard = guard

    # ------------------------------------------------------------------ slow paths
    def slow_body(self) -> bool:
        """Whether this function is a slow-path subroutine (ptx2sass/slow_paths.py): its one
        instruction selects the slow path alone."""
        return self.fn.attributes.get(slow_paths.SLOW_PATH) is not None

    def slow_uses(self) -> dict:
        """How many instructions of this function need each kind of slow path."""
        if getattr(self, "_slow_uses", None) is None:
            self._slow_uses = {}
            for b in self.fn.blocks:
                for ins in b.instrs:
                    kind = slow_paths.kind_of(ins)
                    if kind is not None:
                        self._slow_uses[kind] = self._slow_uses.get(kind, 0) + 1
        return self._slow_uses

    def slow_path(self, kind, args: list, result: VOp, build) -> None:
        """The slow path of `kind` for the lanes that reach here: `build()` inline (in the
        subroutine itself, and under -g), else the operands into R4.., a call of the
        kernel's subroutine (ptx2sass/slow_paths.py) and its result copied into `result`."""
        if not self.calls_slow_path(kind):
            return build()
        self.call_slow_path(kind, args, result)

    def calls_slow_path(self, kind) -> bool:
        """Whether this function calls the subroutine of `kind` (not itself one, not -g)."""
        return not (self.slow_body() or self.keep_order) and slow_paths.called(kind, self.slow_uses().get(kind, 0))

    def call_slow_path(self, kind, args: list, result: VOp) -> None:
        """The operands into R4.., a call of the kernel's subroutine of `kind`, its result
        copied into `result`."""
        sub = slow_paths.subroutine(kind, self.arch)
        uses = []
        for a, (reg, width) in zip(args, sub.args):
            r = VOp(self.mf.fixed_vreg("R", reg, width))
            self.emit(COPY, (), [r, a], guarded=False)
            uses.append(r)
        ra = self.mf.fixed_vreg("R", abi.RETURN_ADDRESS, 2)
        self.emit(IMPLICIT_DEF, (), [VOp(ra)], guarded=False)
        low = self.emit("MOV", (), [VOp(ra, 0), Imm(0)], guarded=False)
        self.emit("MOV", (), [VOp(ra, 1), RZ], guarded=False)
        d = VOp(self.mf.fixed_vreg("R", *sub.result))
        self.out.append(MInstr("CALL", ("REL", "NOINC"), [d, Label(abi.label_of(sub.name)), *uses, VOp(ra)],
                               1, None, self.line, clobbers=sub.clobbers, shown=(1,)))
        if sub.name not in self.mf.calls:
            self.mf.calls.append(sub.name)
        back = self.start_block("ret")
        low.operands[1] = Label(back.name)
        self.emit(COPY, (), [result, d], guarded=False)

    # ------------------------------------------------------------------ entry points
    def ieee_f32_operands(self, ins) -> list[VOp]:
        return [self.src32(s) for s in ins.srcs]

    def ieee_div(self, ins) -> None:
        ftz = "ftz" in ins.modifiers
        if ins.type == "f32" and "full" in ins.modifiers and len(ins.dests) == 2:
            return self.div_full_parts(ins, ftz)
        if ins.type == "f32" and "full" in ins.modifiers:
            a, b = self.ieee_f32_operands(ins)
            return self.ieee_result(ins, lambda: self.div_full_f32(a, b, ftz))
        if ins.type not in ("f32", "f64") or not any(m in ins.modifiers for m in ("rn", "rz", "rm", "rp")):
            raise self.unsupported(f"`div.{'.'.join(ins.modifiers)}.{ins.type}`")
        if "rn" not in ins.modifiers:
            return self.directed_div(ins)         # isel/rounding.py
        if ins.type == "f32":
            a, b = self.ieee_f32_operands(ins)
            return self.ieee_result(ins, lambda: self.div_rn_f32(a, b, ftz))
        a, b = self.force_wide(ins.srcs[0]), self.force_wide(ins.srcs[1])
        self.ieee_result(ins, lambda: self.div_rn_f64(a, b))

    def ieee_rcp(self, ins) -> None:
        self.ieee_unary(ins, self.rcp_rn_f32, self.rcp_rn_f64)

    def ieee_sqrt(self, ins) -> None:
        self.ieee_unary(ins, self.sqrt_rn_f32, self.sqrt_rn_f64)

    def ieee_unary(self, ins, f32_sequence, f64_sequence) -> None:
        """`rcp.rn` / `sqrt.rn` of f32 (with or without .ftz) or f64; the directed roundings
        go to isel/rounding.py."""
        if ins.type not in ("f32", "f64") or not any(m in ins.modifiers for m in ("rn", "rz", "rm", "rp")):
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        if "rn" not in ins.modifiers:
            return self.directed_unary(ins)
        if ins.type == "f32":
            (x,) = self.ieee_f32_operands(ins)
            return self.ieee_result(ins, lambda: f32_sequence(x, "ftz" in ins.modifiers))
        x = self.force_wide(ins.srcs[0])
        self.ieee_result(ins, lambda: f64_sequence(x))

    def sel_rsqrt(self, ins) -> None:
        if "approx" not in ins.modifiers or ins.type not in ("f32", "f64"):
            raise self.unsupported(f"`rsqrt.{'.'.join(ins.modifiers)}.{ins.type}`")
        ftz = "ftz" in ins.modifiers
        if ins.type == "f32":
            (x,) = self.ieee_f32_operands(ins)
            return self.ieee_result(ins, lambda: self.rsqrt_f32(x, ftz))
        x = self.force_wide(ins.srcs[0])
        self.ieee_result(ins, lambda: self.rsqrt_f64(x, ftz))

    # ------------------------------------------------------------------ f32 division
    def div_full_f32(self, a: VOp, b: VOp, ftz: bool) -> VOp:
        """div.full: rcp(b)*a with both operands scaled by 1/4 when |b| > 2^126 (its
        reciprocal would be subnormal and flushed by MUFU) and, without .ftz, by 2^24 when b
        is subnormal (MUFU would flush it)."""
        r, a = self.div_full_scaled(a, b, ftz)
        q = self.r32()
        self.put("FMUL", "FTZ" if ftz else "", q, r, a)
        return q

    def div_full_parts(self, ins, ftz: bool) -> None:
        """The two-result div.full of opt/contract.py: the reciprocal and the scaled
        numerator, whose product (a plain `mul`) may then fuse into the adds reading it."""
        a, b = self.ieee_f32_operands(ins)
        r, a = self.div_full_scaled(a, b, ftz)
        for d, v in zip(ins.dests, (r, a)):
            self.emit(COPY, (), [VOp(self.vreg(d)), v], guarded=False)

    def div_full_scaled(self, a: VOp, b: VOp, ftz: bool) -> tuple[VOp, VOp]:
        """(rcp(b'), a'): b and a scaled alike, as div_full_f32 says. Divisions of one block
        by the same denominator share its tests, scaling and reciprocal and scale only their
        numerators (ptxas: one MUFU.RCP for a softmax row's eight `div.full`; ours had eight,
        each with a copy of the denominator live: softmax_rows_w1 30 registers, ptxas 20)."""
        z = ".FTZ" if ftz else ""
        key = (id(self.out), repr(b), ftz)
        cache = self.__dict__.setdefault("_div_full_denominators", {})
        shared = cache.get(key) if self.ins is not None and self.ins.guard is None else None
        if shared is None:
            b = self.copy(b)
            huge = self.setp("FSETP", "GT" + z, mag(b), self.f(2.0 ** 126))
            self.put("FMUL", z[1:], b, b, self.f(0.25), when=huge)
            normal = None
            if not ftz:
                normal = self.setp("FSETP", "GEU", mag(b), self.f(self.FLT_MIN))
                self.put("FMUL", "", b, b, self.f(2.0 ** 24), when=no(normal))
            r = self.r32()
            self.put("MUFU", "RCP", r, b)
            shared = (huge, normal, r)
            if self.ins is not None and self.ins.guard is None:
                cache[key] = shared
        huge, normal, r = shared
        a = self.copy(a)
        self.put("FMUL", z[1:], a, a, self.f(0.25), when=huge)
        if normal is not None:
            self.put("FMUL", "", a, a, self.f(2.0 ** 24), when=no(normal))
        return r, a

    def div_rn_f32(self, a: VOp, b: VOp, ftz: bool) -> VOp:
        """Fast path: reciprocal estimate, one Newton step, quotient, one residual correction.
        FCHK flags the operand pairs for which that is not exact (see the module doc); the
        fast path is the same with and without .ftz, which only changes the slow path."""
        if self.slow_body():
            q, done = self.r32(), self.flow_block("div_done")
            self.div_f32_slow(a, b, q, done, ftz)
            self.flow_enter(done)
            return q
        r, slow = self.r32(), self.pred()
        self.put("MUFU", "RCP", r, b)
        self.put("FCHK", "", slow, a, b)
        e = self.fma(neg(b), r, self.f(1.0))
        r1 = self.fma(r, e, r)
        q0 = self.fma(a, r1, RZ)
        rem = self.fma(neg(b), q0, a)
        q = self.fma(r1, rem, q0)
        done = self.flow_block("div_done")
        self.flow_goto(done, when=no(slow))
        self.slow_path(("div", "f32", ftz), [a, b], q, lambda: self.div_f32_slow(a, b, q, done, ftz))
        self.flow_enter(done)
        return q

    def div_f32_slow(self, a: VOp, b: VOp, q: VOp, done, ftz: bool, mode: str = "RN") -> None:
        """The hard quotients. Operands with a normal exponent go straight to the scaled
        division; the others are, in this order: NaN → a + b; 0/0 and inf/inf → NaN;
        x/inf and 0/x → signed zero; inf/x and x/0 → signed infinity; else (some subnormal
        operand) scaled by 2^64 with the exponent adjustment remembered. With .ftz the
        zero tests are float compares that see subnormals as zero, and no scaling is
        needed (every remaining case was special). `mode` is the rounding of the quotient
        (isel/rounding.py sends the directed ones here: ptxas has no fast path for them)."""
        ea, eb = self.exponent_f32(a), self.exponent_f32(b)
        ea1, eb1 = self.add3(ea, self.i(-1)), self.add3(eb, self.i(-1))
        odd = self.setp("ISETP", "GT.U32", eb1, self.i(0xFD))
        self.put("ISETP", "GT.U32.OR", odd, PT, ea1, self.i(0xFD), odd, ndefs=2)
        a_s, b_s = self.copy(a), self.copy(b)
        adj = self.r32()
        self.move(adj, RZ)
        core = self.flow_block("div_core")
        self.flow_goto(core, when=no(odd))
        z = ".FTZ"
        nan = self.setp("FSETP", "GTU" + z, mag(a), INF)
        self.put("FSETP", "GTU.FTZ.OR", nan, PT, mag(b), INF, nan, ndefs=2)
        self.put("FADD", "FTZ", q, a, b, when=nan)
        self.flow_goto(done, when=nan)
        a_inf = self.setp("FSETP", "EQ" + z, mag(a), INF)
        b_inf = self.setp("FSETP", "EQ" + z, mag(b), INF)
        both_inf = self.setp("FSETP", "EQ" + z, mag(b), INF, c=a_inf)
        if ftz:
            a_zero = self.setp("FSETP", "EQ" + z, a, RZ)
            b_zero = self.setp("FSETP", "EQ" + z, b, RZ)
            invalid = self.setp("FSETP", "EQ" + z, b, RZ, c=a_zero)
        else:
            a_zero = self.setp("ISETP", "EQ.U32", self.lop(a, self.i(ABS), RZ, AND), RZ)
            b_zero = self.setp("ISETP", "EQ.U32", self.lop(b, self.i(ABS), RZ, AND), RZ)
            invalid = self.setp("ISETP", "EQ.U32", self.lop(b, self.i(ABS), a, A_OR_C_AND_B), RZ)
        self.put("PLOP3", "LUT", invalid, PT, invalid, both_inf, PT, Imm(0xFC), Imm(0), ndefs=2)
        self.move_when(invalid, q, self.i(F32_NAN))
        self.flow_goto(done, when=invalid)
        to_zero = self.pred()
        self.put("PLOP3", "LUT", to_zero, PT, b_inf, a_zero, PT, Imm(0xFC), Imm(0), ndefs=2)
        self.lop(b, self.i(SIGN), a, A_XOR_C_AND_B, when=to_zero, into=q)
        self.flow_goto(done, when=to_zero)
        to_inf = self.pred()
        self.put("PLOP3", "LUT", to_inf, PT, a_inf, b_zero, PT, Imm(0xFC), Imm(0), ndefs=2)
        self.lop(b, self.i(SIGN), a, A_XOR_C_AND_B, when=to_inf, into=q)
        self.lop(q, self.i(F32_INF), RZ, OR, when=to_inf, into=q)
        self.flow_goto(done, when=to_inf)
        if not ftz:
            a_sub = self.setp("ISETP", "LT", ea1, RZ)
            b_sub = self.setp("ISETP", "LT", eb1, RZ)
            self.fma(a, self.f(2.0 ** 64), RZ, into=a_s, when=a_sub)
            self.move_when(a_sub, adj, self.i(-64))
            self.fma(b, self.f(2.0 ** 64), RZ, into=b_s, when=b_sub)
            self.add3(adj, self.i(64), into=adj, when=b_sub)
        self.flow_enter(core)
        self.div_f32_scaled(a_s, b_s, ea, eb, adj, q, done, ftz, mode)

    def move_when(self, p: VOp, d: VOp, value) -> None:
        self.put("IMAD", "MOV.U32", d, RZ, RZ, value, when=p)

    def div_f32_scaled(self, a_s, b_s, ea, eb, adj, q, done, ftz: bool, mode: str = "RN") -> None:
        """Both operands moved to exponent 0 (b's mantissa in [1, 2)), divided with two
        residual corrections, and the exponent difference put back by integer addition.
        A result exponent outside 1..254 becomes infinity (overflow), or a subnormal rounded
        to nearest-even by hand (zero below 2^-150), or, with .ftz, a signed zero. A directed
        `mode` rounds the last step so (without FTZ) and its edges are isel/rounding.py's."""
        eb_bias = self.r32()
        self.put("LEA", "", eb_bias, eb, self.i(0xC0800000), self.i(23))      # (eb - 127) << 23
        bn = self.add3(b_s, neg(eb_bias))
        ea0 = self.add3(ea, self.i(-127))
        an = self.r32()
        self.put("IMAD", "", an, ea0, self.i(-0x800000), a_s)                 # a_s / 2^(ea-127)
        eq = self.add3(ea, neg(eb), adj)                                       # result exponent shift
        r = self.r32()
        self.put("MUFU", "RCP", r, bn)
        nb = self.r32()
        self.put("FADD", "FTZ", nb, neg(bn), neg(RZ))
        e = self.fma(r, nb, self.f(1.0))
        r1 = self.fma(r, e, r)
        q0 = self.fma(an, r1, RZ)
        rem0 = self.fma(nb, q0, an)
        q1 = self.fma(r1, rem0, q0)
        rem1 = self.fma(nb, q1, an)
        qn = self.fma(r1, rem1, q1, mods=mode if mode != "RN" else "FTZ" if ftz else "")
        eo = self.add3(self.exponent_f32(qn), eq)
        in_range = self.setp("ISETP", "LT.U32", self.add3(eo, self.i(-1)), self.i(0xFE))
        self.put("IMAD", "", q, eq, self.i(0x800000), qn, when=in_range)
        self.flow_goto(done, when=in_range)
        sign = self.lop(qn, self.i(SIGN), RZ, AND)
        if mode != "RN":
            return self.div_f32_directed_edges(r1, rem1, q1, qn, eo, sign, q, done, ftz, mode)
        over = self.setp("ISETP", "GT", eo, self.i(0xFE))
        if ftz:
            normal = self.setp("ISETP", "GE", eo, self.i(1))
            self.put("SEL", "", q, qn, sign, normal)
            self.lop(sign, self.i(F32_INF), RZ, OR, when=over, into=q)
            return
        self.lop(sign, self.i(F32_INF), RZ, OR, when=over, into=q)
        self.flow_goto(done, when=over)
        normal = self.setp("ISETP", "GE", eo, self.i(1))
        self.put("IMAD", "MOV.U32", q, RZ, RZ, qn, when=normal)
        self.flow_goto(done, when=normal)
        self.put("IMAD", "MOV.U32", q, RZ, RZ, sign)
        tiny = self.setp("ISETP", "LT", eo, self.i(-24))
        self.flow_goto(done, when=tiny)
        self.round_subnormal(r1, rem1, q1, eo, sign, q)

    def round_subnormal(self, r1, rem1, q1, eo, sign, q) -> None:
        """q = sign | the quotient r1*rem1 + q1 shifted right by 1 - eo (eo in -24..0) and
        rounded to nearest even: the bits come from the RZ rounding, the sticky bit from
        bits shifted out or from RM and RP disagreeing (inexact)."""
        tz = self.fma(r1, rem1, q1, mods="RZ")
        tm = self.fma(r1, rem1, q1, mods="RM")
        tp = self.fma(r1, rem1, q1, mods="RP")
        m = self.lop(self.lop(tz, self.i(0x7FFFFF), RZ, AND), self.i(0x800000), RZ, OR)
        lost = self.r32()
        self.put("SHF", "L.U32", lost, m, self.add3(eo, self.i(32)), RZ)      # the bits shifted out
        nonzero = self.setp("ISETP", "NE", eo, RZ)
        shift = self.r32()
        self.put("SEL", "", shift, self.add3(RZ, neg(eo)), RZ, nonzero)
        lost_any = self.setp("ISETP", "NE", lost, RZ, c=nonzero)
        sticky = self.setp("FSETP", "NEU.FTZ", tp, tm, combine="OR", c=lost_any)
        m2 = self.r32()
        self.put("SHF", "R.U32.HI", m2, RZ, shift, m)                          # kept bits + round bit
        kept = self.r32()
        self.put("SHF", "R.U32.HI", kept, RZ, self.i(1), m2)
        s = self.r32()
        self.put("SEL", "", s, RZ, self.i(1), no(sticky))
        up = self.lop(self.lop(s, self.i(1), kept, A_OR_B_AND_C), m2, RZ, AND)  # round & (sticky | lsb)
        self.lop(self.add3(kept, up), sign, RZ, OR, into=q)

    # ------------------------------------------------------------------ f32 reciprocal
    def rcp_f32_range_test(self, x: VOp):
        """(result register, the masked exponent test t, fast block, done block), having
        branched to the fast block for exponents other than 0 and 253..255."""
        res = self.r64_free32()
        t = self.lop(self.add3(x, self.i(0x1800000)), self.i(F32_INF), RZ, AND)
        fast_ok = self.setp("ISETP", "GT.U32", t, self.i(0x1FFFFFF))
        fast, done = self.flow_block("rcp_fast"), self.flow_block("rcp_done")
        self.flow_goto(fast, when=fast_ok)
        return res, t, fast, done

    def rcp_rn_f32(self, x: VOp, ftz: bool) -> VOp:
        """Fast path when the exponent is neither 0 (zero, subnormal) nor 253..255 (a
        reciprocal that is subnormal, or an infinite/NaN operand): MUFU.RCP and one Newton
        step, whose FFMA rounds correctly. (x + 3 << 23) & exponent-mask <= 3 << 23 picks
        exactly those four exponents."""
        if self.slow_body():
            res, done = self.r64_free32(), self.flow_block("rcp_done")
            t = self.lop(self.add3(x, self.i(0x1800000)), self.i(F32_INF), RZ, AND)
            self.rcp_f32_slow_ftz(x, t, res, done) if ftz else self.rcp_f32_slow(x, res, done)
            self.flow_enter(done)
            return res
        res, t, fast, done = self.rcp_f32_range_test(x)
        self.slow_path(("rcp", "f32", ftz), [x], res, lambda: self.rcp_f32_slow_ftz(x, t, res, done) if ftz
                       else self.rcp_f32_slow(x, res, done))
        self.flow_goto(done)
        self.flow_enter(fast)
        self.rcp_newton(x, res)
        self.flow_enter(done)
        return res

    def r64_free32(self) -> VOp:
        """A 32-bit result register defined on entry (its writes are guarded or in branches)."""
        t = self.r32()
        self.emit(IMPLICIT_DEF, (), [t], guarded=False)
        return t

    def rcp_newton(self, x: VOp, res: VOp, when=None) -> None:
        r = self.r32() if when is None else self.r64_free32()
        self.put("MUFU", "RCP", r, x, when=when)
        e = self.fma(x, r, self.f(-1.0), when=when, into=None if when is None else self.r64_free32())
        self.put("FADD", "FTZ", e, neg(e), neg(RZ), when=when)
        self.fma(r, e, r, into=res, when=when)

    def rcp_f32_exponent_cases(self, x: VOp, res: VOp, done):
        """The slow path's dispatch on x's biased exponent: 0 branches to a block `sub`
        (returned, not yet entered), 255 (and anything but 253/254) takes MUFU's answer and
        leaves for `done`; falls through for 253/254 with (x << 1, ex, ex - 253, x's mantissa
        as a float in [1, 2), sub)."""
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
        return x2, ex, k, m, sub

    def rcp_f32_slow(self, x: VOp, res: VOp, done) -> None:
        """Exponent 0: zero gives MUFU's signed infinity, a subnormal is scaled by 2^64 and
        the Newton result scaled back. Exponent 255: MUFU's answer (0 or NaN). Exponents 253
        and 254: the reciprocal of the mantissa (in [1, 2)), rounded by hand to the
        subnormal (or smallest normal) result, nearest-even from its RM/RP roundings."""
        x2, ex, k, m, sub = self.rcp_f32_exponent_cases(x, res, done)
        three = self.r32()
        self.move(three, self.i(3))
        mask = self.r32()
        self.put("SHF", "L.U32", mask, three, k, RZ)
        sh = self.add3(ex, self.i(-0xFC))
        r = self.r32()
        self.put("MUFU", "RCP", r, m)
        e = self.fma(m, r, self.f(-1.0))
        self.put("FADD", "FTZ", e, neg(e), neg(RZ))
        rm = self.fma(r, e, r, mods="RM")
        rp = self.fma(r, e, r, mods="RP")
        mr = self.lop(self.lop(rm, self.i(0x7FFFFF), RZ, AND), self.i(0x800000), RZ, OR)
        inexact = self.setp("FSETP", "NEU.FTZ", rm, rp)
        s = self.r32()
        self.put("SEL", "", s, RZ, self.i(1), no(inexact))
        rb = self.r32()
        self.put("SHF", "R.U32.HI", rb, RZ, k, self.lop(mask, mr, RZ, AND))     # round bit, lsb
        sticky = self.setp("ISETP", "NE.U32", self.lop(s, k, mr, A_OR_B_AND_C), RZ)
        q = self.r32()
        self.put("SHF", "R.U32.HI", q, RZ, sh, mr)
        rbit = self.setp("ISETP", "NE.U32", self.lop(rb, self.i(1), RZ, AND), RZ)
        lsb = self.setp("ISETP", "NE.U32", self.lop(rb, self.i(2), RZ, AND), RZ)
        up = self.pred()
        self.put("PLOP3", "LUT", up, PT, rbit, sticky, lsb, Imm(0xE0), Imm(0), ndefs=2)  # a & (b | c)
        self.add3(q, self.i(1), into=q, when=up)
        pow2 = self.setp("ISETP", "EQ.U32", self.lop(x, self.i(0x7FFFFF), RZ, AND), RZ)
        self.put("SHF", "L.U32", q, q, self.i(1), RZ, when=pow2)
        self.lop(q, self.i(SIGN), x, A_OR_B_AND_C, into=res)
        self.flow_goto(done)
        self.flow_enter(sub)
        nonzero = self.setp("ISETP", "NE", x2, RZ)
        self.put("MUFU", "RCP", res, x, when=no(nonzero))
        xs = self.r64_free32()
        self.fma(x, self.f(2.0 ** 64), RZ, into=xs, when=nonzero)
        r = self.r64_free32()
        self.rcp_newton(xs, r, when=nonzero)
        self.fma(r, self.f(2.0 ** 64), RZ, into=res, when=nonzero)

    def rcp_f32_slow_ftz(self, x: VOp, t: VOp, res: VOp, done) -> None:
        """With .ftz: exponent 0 → MUFU (signed infinity), 255 → MUFU, 254 → signed zero,
        253 → signed zero too, except ±2^-126 for a power of two (mantissa zero)."""
        exp0 = self.setp("ISETP", "EQ.U32", t, self.i(0x1800000))
        other = self.setp("ISETP", "NE.U32", t, RZ)
        self.put("ISETP", "NE.U32.AND", other, PT, t, self.i(0x800000), other, ndefs=2)
        self.put("PLOP3", "LUT", other, PT, other, exp0, PT, Imm(0xFC), Imm(0), ndefs=2)
        self.put("MUFU", "RCP", res, x, when=other)
        self.flow_goto(done, when=other)
        sign = self.lop(x, self.i(SIGN), RZ, AND)
        pow2 = self.setp("ISETP", "EQ.U32", self.lop(x, self.i(0x7FFFFF), RZ, AND), RZ)
        self.put("ISETP", "EQ.U32.AND", pow2, PT, t, RZ, pow2, ndefs=2)
        self.put("IMAD", "MOV.U32", res, RZ, RZ, sign)
        self.lop(sign, self.i(0x800000), RZ, OR, when=pow2, into=res)

    # ------------------------------------------------------------------ f32 square root
    def sqrt_rn_f32(self, x: VOp, ftz: bool) -> VOp:
        """Fast path for positive normal x with exponent >= 26: s = x*rsqrt(x), then one
        correction s + (x - s*s) * rsqrt(x)/2 (the FFMA residual is exact)."""
        if self.slow_body():
            res, done = self.r64_free32(), self.flow_block("sqrt_done")
            self.sqrt_f32_slow(x, res, done, ftz)
            self.flow_enter(done)
            return res
        y = self.r32()
        self.put("MUFU", "RSQ", y, x)
        slow = self.setp("ISETP", "GT.U32", self.add3(x, self.i(-0xD000000)), self.i(0x727FFFFF))
        res = self.r64_free32()
        fast, done = self.flow_block("sqrt_fast"), self.flow_block("sqrt_done")
        self.flow_goto(fast, when=no(slow))
        self.slow_path(("sqrt", "f32", ftz), [x], res, lambda: self.sqrt_f32_slow(x, res, done, ftz))
        self.flow_goto(done)
        self.flow_enter(fast)
        s, h = self.r32(), self.r32()
        self.put("FMUL", "FTZ", s, x, y)
        self.put("FMUL", "FTZ", h, y, self.f(0.5))
        e = self.fma(neg(s), s, x)
        self.fma(e, h, s, into=res)
        self.flow_enter(done)
        return res

    def sqrt_f32_slow(self, x: VOp, res: VOp, done, ftz: bool, mode: str = "RN") -> None:
        """Zero → itself (with .ftz: a subnormal → signed zero), negative → NaN, NaN →
        x + 1 (quiet), +inf → itself, otherwise (small, or with .ftz any positive subnormal
        value it did not flush) scaled by 2^64, the fast step (rounded in `mode`: see
        isel/rounding.py), and scaled back by 2^-32."""
        if ftz:
            zero = self.setp("FSETP", "EQ.FTZ", x, RZ)
            self.put("FMUL", "FTZ", res, x, self.f(1.0), when=zero)
        else:
            zero = self.setp("ISETP", "EQ.U32", self.lop(x, self.i(ABS), RZ, AND), RZ)
            self.put("IMAD", "MOV.U32", res, RZ, RZ, x, when=zero)
        self.flow_goto(done, when=zero)
        negative = self.setp("FSETP", "LT.FTZ", x, RZ)
        self.move_when(negative, res, self.i(F32_NAN))
        self.flow_goto(done, when=negative)
        nan = self.setp("FSETP", "GTU.FTZ", mag(x), INF)
        self.put("FADD", "FTZ", res, x, self.f(1.0), when=nan)
        self.flow_goto(done, when=nan)
        inf = self.setp("FSETP", "EQ.FTZ", mag(x), INF)
        self.put("IMAD", "MOV.U32", res, RZ, RZ, x, when=inf)
        self.flow_goto(done, when=inf)
        xs = self.r32()
        if ftz:
            self.put("FMUL", "FTZ", xs, x, self.f(2.0 ** 64))
        else:
            self.fma(x, self.f(2.0 ** 64), RZ, into=xs)
        y, p, h, n = self.r32(), self.r32(), self.r32(), self.r32()
        self.put("MUFU", "RSQ", y, xs)
        if mode != "RN":
            r = self.sqrt_step_f32(xs, y, mode, self.r32())
            self.put("FMUL", "FTZ", res, r, self.f(2.0 ** -32))
            return
        self.put("FMUL", "FTZ", p, xs, y)
        self.put("FMUL", "FTZ", h, y, self.f(0.5))
        self.put("FADD", "FTZ", n, neg(p), neg(RZ))
        e = self.fma(p, n, xs)
        r = self.fma(e, h, p)
        self.put("FMUL", "FTZ", res, r, self.f(2.0 ** -32))

    def rsqrt_f32(self, x: VOp, ftz: bool) -> VOp:
        """MUFU.RSQ; without .ftz a subnormal operand is scaled by 2^24 first (MUFU would
        flush it) and the result by 2^12 after."""
        y = self.r32()
        if ftz:
            self.put("MUFU", "RSQ", y, x)
            return y
        normal = self.setp("FSETP", "GEU", mag(x), self.f(self.FLT_MIN))
        xs = self.copy(x)
        self.put("FMUL", "", xs, xs, self.f(2.0 ** 24), when=no(normal))
        self.put("MUFU", "RSQ", y, xs)
        self.put("FMUL", "", y, y, self.f(4096.0), when=no(normal))
        return y

    # ------------------------------------------------------------------ f64 helpers
    def pair(self, low, high_from) -> VOp:
        """A pair whose high word is written by `high_from(hi_part)` and low word is `low`
        (a register or immediate; None: written by the caller)."""
        p = self.new_pair()
        if isinstance(low, VOp):
            self.emit(COPY, (), [lo(p), low], guarded=False)
        elif low is not None:
            self.put("IMAD", "MOV.U32", lo(p), RZ, RZ, low)
        high_from(hi(p))
        return p

    def set_pair(self, d: VOp, low, high, when: VOp | None = None) -> None:
        for part, v in ((lo(d), low), (hi(d), high)):
            self.put("IMAD", "MOV.U32", part, RZ, RZ, v, when=when)

    def quieted(self, d: VOp, x: VOp, when: VOp) -> None:
        """d = x with the quiet bit set (ptxas's answer for a NaN operand)."""
        self.put("IMAD", "MOV.U32", lo(d), RZ, RZ, lo(x), when=when)
        self.lop(hi(x), self.i(0x80000), RZ, OR, when=when, into=hi(d))

    def rcp_refine64(self, x: VOp, y: VOp) -> VOp:
        """Two Newton steps on a reciprocal estimate: e = 1 - x*y; y += y*(e + e*e), then
        y += y*(1 - x*y)."""
        e = self.dfma(neg(x), y, self.f(1.0))
        e = self.dfma(e, e, e)
        y1 = self.dfma(y, e, y)
        e2 = self.dfma(neg(x), y1, self.f(1.0))
        return self.dfma(y1, e2, y1)

    def rsqrt_refine64(self, x: VOp, y: VOp) -> VOp:
        """One high-order step on an rsqrt estimate: t = 1 - x*y*y; y + y*t*(1/2 + 3/8 t)."""
        h = self.pair(RZ, lambda d: self.move(d, self.i(0x3FD80000)))      # 0.375
        t = self.dmul(y, y)
        t = self.dfma(x, neg(t), self.f(1.0))
        h = self.dfma(t, h, self.f(0.5))
        t = self.dmul(y, t)
        return self.dfma(h, t, y)

    def fsetp_hi(self, cmp: str, x, bound: float, combine: str = "AND", c=PT) -> VOp:
        """A float compare of a double's high word read as an f32: a cheap exponent test."""
        return self.setp("FSETP", cmp, mag(x), self.f(bound), combine=combine, c=c)

    def exponent_choice(self, above: VOp) -> VOp:
        """0x634 (as a high word) where a's exponent is at or above b's, else 0x1ca."""
        low, d = self.r32(), self.r32()
        self.move(low, self.i(0x1CA00000))
        self.put("SEL", "", d, low, self.i(0x63400000), no(above))
        return d

    # ------------------------------------------------------------------ f64 division
    TINY_HI = 1.469367938527859385e-39      # f32 0x00100000: high word of 2^-1022 (DBL_MIN)

    def div_rn_f64(self, a: VOp, b: VOp) -> VOp:
        """Fast path: reciprocal refined twice, quotient, one residual correction. Taken when
        a's exponent is >= -126*8 (the high word read as a float is >= 2^-120, so a*rcp
        keeps full precision) and the result's high word, read as a float through FFMA
        0*b_hi + q_hi (NaN when b is infinite or NaN), is above the subnormal bound."""
        if self.slow_body():
            res, done = self.new_pair(), self.flow_block("ddiv_done")
            self.div_f64_slow(a, b, res, done)
            self.flow_enter(done)
            return res
        y = self.pair(self.i(1), lambda d: self.put("MUFU", "RCP64H", d, hi(b)))
        a_ok = self.fsetp_hi("GEU", hi(a), 6.5827683646048100446e-37)
        y2 = self.rcp_refine64(b, y)
        q = self.dmul(a, y2)
        r = self.dfma(neg(b), q, a)
        res = self.dfma(y2, r, q)
        t = self.fma(RZ, hi(b), hi(res))
        fast = self.fsetp_hi("GT", t, self.TINY_HI, c=a_ok)
        done = self.flow_block("ddiv_done")
        self.flow_goto(done, when=fast)
        self.slow_path(("div", "f64", False), [a, b], res, lambda: self.div_f64_slow(a, b, res, done))
        self.flow_enter(done)
        return res

    def div_f64_slow(self, a: VOp, b: VOp, res: VOp, done, mode: str = "RN") -> None:
        """Both operands with their exponents replaced: b's by 0 (b tiny: b * 2^1023 instead),
        a's by one that keeps a/b far from both ends of the range (0x634 or 0x1ca, whichever
        side a's exponent is of b's; a tiny a is first rebuilt with 2a - implicit bit). The
        refined quotient is then multiplied by 2^(true exponent difference), clamped; a
        result that comes out subnormal is re-rounded with DMUL.RP and a residual test.
        Exponent fields 0 or 0x7ff (after the scaling) are the special cases: NaN operands
        quieted, equal specials (0/0, inf/inf) NaN, x/0 and inf/x infinity, else zero.
        A directed `mode` (isel/rounding.py) instead rounds one more correction step and the
        scaling DMUL in that mode: the same direction twice rounds as once."""
        exp_mask = self.i(0x7FF00000)
        b_ok = self.fsetp_hi("GEU", hi(b), self.TINY_HI)
        a_ok = self.fsetp_hi("GEU", hi(a), self.TINY_HI)
        eb = self.lop(hi(b), exp_mask, RZ, AND)
        ea = self.lop(hi(a), exp_mask, RZ, AND)
        bn = self.pair(lo(b), lambda d: self.lop(self.lop(hi(b), self.i(0x800FFFFF), RZ, AND),
                                                 self.i(0x3FF00000), RZ, OR, into=d))
        self.dmul(b, self.f(2.0 ** 1023), into=bn, when=no(b_ok))
        a_above = self.setp("ISETP", "GE.U32", ea, eb)
        a_exp = self.exponent_choice(a_above)     # the exponent a is given
        eb_s = self.copy(eb)
        self.lop(hi(bn), exp_mask, RZ, AND, when=no(b_ok), into=eb_s)
        ea_s = self.copy(ea)
        implicit = self.pair(RZ, lambda d: self.lop(a_exp, self.i(SIGN), hi(a), A_OR_B_AND_C, into=d))
        self.lop(hi(implicit), self.i(0x100000), RZ, OR, into=hi(implicit))
        y = self.pair(self.i(1), lambda d: self.put("MUFU", "RCP64H", d, hi(bn)))
        an = self.pair(lo(a), lambda d: self.lop(a_exp, self.i(0x800FFFFF), hi(a), A_OR_B_AND_C, into=d))
        self.dfma(an, self.f(2.0), neg(implicit), into=an, when=no(a_ok))
        self.lop(hi(an), exp_mask, RZ, AND, when=no(a_ok), into=ea_s)
        e = self.dfma(y, neg(bn), self.f(1.0))
        e = self.dfma(e, e, e)
        y1 = self.dfma(y, e, y)
        e2 = self.dfma(y1, neg(bn), self.f(1.0))
        y2 = self.dfma(y1, e2, y1)
        q = self.dmul(y2, an)
        odd = self.setp("ISETP", "GT.U32", self.add3(ea_s, self.i(-1)), self.i(0x7FEFFFFE))
        self.put("ISETP", "GT.U32.OR", odd, PT, self.add3(eb_s, self.i(-1)), self.i(0x7FEFFFFE), odd, ndefs=2)
        r = self.dfma(q, neg(bn), an)
        q2 = self.dfma(y2, r, q)
        special = self.flow_block("ddiv_special")
        self.flow_goto(special, when=odd)
        if mode != "RN":
            self.div_f64_directed_tail(a_exp, ea, eb, y2, q2, bn, an, res, mode)
            self.flow_goto(done)
            return self.div_f64_special(a, b, ea_s, eb_s, exp_mask, res, done, special)
        # put the exponent back: scale = 2^(ea - eb - a's given exponent), clamped
        above = self.setp("ISETP", "GE.U32", ea, eb)
        given = self.exponent_choice(above)
        d = self.add3(ea, neg(eb))
        self.put("IMNMX", "", d, d, self.i(-0x46A00000), NOT_PT)
        self.put("IMNMX", "", d, d, self.i(0x46A00000), PT)
        d2 = self.add3(d, neg(given))
        scale = self.pair(RZ, lambda h: self.add3(d2, self.i(0x7FE00000), into=h))
        self.dmul(q2, scale, into=res)
        normal = self.fsetp_hi("GTU", hi(res), self.TINY_HI)
        self.flow_goto(done, when=normal)
        # subnormal result: the scaled product rounded once more, towards the residual's side
        rr = self.dfma(q2, neg(bn), an)
        inexact = self.setp("FSETP", "NEU", hi(rr), RZ)
        sg = self.lop(hi(rr), self.i(SIGN), hi(b), A_XOR_C_AND_B)
        scale_s = self.pair(RZ, lambda h: self.lop(sg, hi(scale), RZ, OR, into=h))
        self.flow_goto(done, when=no(inexact))
        t = self.dmul(q2, scale_s, mods="RP")
        m = self.pair(RZ, lambda h: self.add3(RZ, neg(d2), into=h))
        bound = self.add3(neg(d2), self.i(-0x43300000))
        c = self.dfma(res, neg(m), q2)
        t_hi = self.lop(hi(t), sg, RZ, XOR)
        differ = self.setp("FSETP", "NEU", mag(hi(c)), bound)
        self.put("FSEL", "", lo(res), lo(t), lo(res), no(differ))
        self.put("FSEL", "", hi(res), t_hi, hi(res), no(differ))
        self.flow_goto(done)
        self.div_f64_special(a, b, ea_s, eb_s, exp_mask, res, done, special)

    def div_f64_special(self, a, b, ea_s, eb_s, exp_mask, res, done, special) -> None:
        """Exponent fields 0 or 0x7ff: NaN operands quieted, 0/0 and inf/inf NaN, x/0 and
        inf/x signed infinity, else signed zero."""
        self.flow_enter(special)
        a_nan = self.setp("DSETP", "NAN", a, a)
        self.quieted(res, a, a_nan)
        self.flow_goto(done, when=a_nan)
        b_nan = self.setp("DSETP", "NAN", b, b)
        self.quieted(res, b, b_nan)
        self.flow_goto(done, when=b_nan)
        self.set_pair(res, RZ, self.i(F64_NAN_HI))
        same = self.setp("ISETP", "EQ", ea_s, eb_s)
        self.flow_goto(done, when=same)
        sgn = self.lop(hi(a), self.i(SIGN), hi(b), A_XOR_C_AND_B)
        to_inf = self.setp("ISETP", "EQ", ea_s, exp_mask)
        self.put("ISETP", "EQ.OR", to_inf, PT, eb_s, RZ, to_inf, ndefs=2)
        self.put("IMAD", "MOV.U32", hi(res), RZ, RZ, sgn)
        self.lop(sgn, exp_mask, RZ, OR, when=to_inf, into=hi(res))

    # ------------------------------------------------------------------ f64 reciprocal
    def rcp_rn_f64(self, x: VOp) -> VOp:
        """Fast path unless |x| is below ~2^-1022 or above ~2^1021 (its reciprocal would be
        subnormal), tested on the estimate's low word, which ptxas sets to x_hi + 0x300402:
        read as a float it is small exactly for those exponents."""
        if self.slow_body():
            res, done = self.new_pair(), self.flow_block("drcp_done")
            self.rcp_f64_slow(x, res, done)
            self.flow_enter(done)
            return res
        y = self.pair(None, lambda d: self.put("MUFU", "RCP64H", d, hi(x)))
        self.add3(hi(x), self.i(0x300402), into=lo(y))
        ok = self.setp("FSETP", "GEU", mag(lo(y)), self.f(5.8789094863358348022e-39))
        res = self.rcp_refine64(x, y)
        done = self.flow_block("drcp_done")
        self.flow_goto(done, when=ok)
        self.slow_path(("rcp", "f64", False), [x], res, lambda: self.rcp_f64_slow(x, res, done))
        self.flow_enter(done)
        return res

    def rcp_f64_slow(self, x: VOp, res: VOp, done) -> None:
        """NaN → quieted; 0, inf and |x| < 2^-1042-ish (high word 0) → inf / 0 by flipping
        the exponent bits; big x: the reciprocal of x / 2^1022, scaled back and refined once
        more against x itself (the subnormal result rounds in that last DFMA); tiny x:
        x * 2^106, reciprocal, times 2^106. The estimates' low word is |x_hi| - 2^20."""
        ax = self.lop(hi(x), self.i(ABS), RZ, AND)
        low = self.add3(ax, self.i(-0x100000))
        nan = self.setp("DSETP", "GTU", mag(x), INF)
        self.quieted(res, x, nan)
        self.flow_goto(done, when=nan)
        edge = self.setp("ISETP", "GE.U32", self.add3(ax, self.i(-1)), self.i(0x7FEFFFFF))
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, RZ, when=edge)
        self.lop(hi(x), self.i(0x7FF00000), RZ, XOR, when=edge, into=hi(res))
        self.flow_goto(done, when=edge)
        tiny = self.setp("ISETP", "LT.U32", ax, self.i(0x1000001))
        small = self.flow_block("drcp_tiny")
        self.flow_goto(small, when=tiny)
        xs = self.pair(lo(x), lambda h: self.add3(hi(x), self.i(-0x3FE00000), into=h))
        y = self.pair(low, lambda d: self.put("MUFU", "RCP64H", d, hi(xs)))
        y3 = self.dmul(self.rcp_refine64(xs, y), self.f(2.0 ** -1022))
        e = self.dfma(neg(x), y3, self.f(1.0))
        e = self.dfma(e, e, e)
        self.dfma(y3, e, y3, into=res)
        self.flow_goto(done)
        self.flow_enter(small)
        xs = self.dmul(x, self.f(2.0 ** 106))
        y = self.pair(low, lambda d: self.put("MUFU", "RCP64H", d, hi(xs)))
        self.dmul(self.rcp_refine64(xs, y), self.f(2.0 ** 106), into=res)

    # ------------------------------------------------------------------ f64 square root
    def sqrt_rn_f64(self, x: VOp) -> VOp:
        """s = x * rsqrt(x) refined, then s + (x - s*s) * rsqrt/2. The rsqrt estimate's low
        word is x_hi - 0x3500000, which is also the range test: fast for positive normal x
        with exponent >= -969 (no underflow in the steps)."""
        y = self.pair(None, lambda d: self.put("MUFU", "RSQ64H", d, hi(x)))
        self.add3(hi(x), self.i(-0x3500000), into=lo(y))
        slow = self.setp("ISETP", "GE.U32", lo(y), self.i(0x7CA00000))
        y2 = self.rsqrt_refine64(x, y)
        s = self.dmul(x, y2)
        r = self.dfma(s, neg(s), x)
        yh = self.pair(lo(y2), lambda h: self.add3(hi(y2), self.i(-0x100000), into=h))   # y2 / 2
        body = self.slow_body()       # the subroutine: the steps above, then the slow path
        res = self.new_pair() if body else self.dfma(r, yh, s)
        done = self.flow_block("dsqrt_done")
        if not body:
            self.flow_goto(done, when=no(slow))
        self.slow_path(("sqrt", "f64", False), [x], res, lambda: self.sqrt_f64_slow(x, lo(y), s, r, yh, res, done))
        self.flow_enter(done)
        return res

    def sqrt_f64_slow(self, x, key, s, r, yh, res, done) -> None:
        """Exponents just below the fast range (x_hi in [2^20, 0x3500000)): the last step in
        RM, and the next double up taken when (next * RM result) is still below x (DFMA.RP
        sign test). Else: 0 → x + x, negative → NaN, inf/NaN → x + x, subnormal-ish x →
        the fast steps on x * 2^106 and the exponent lowered by 53."""
        medium = self.setp("ISETP", "GE.U32", key, self.i(-0x3400000))
        special = self.flow_block("dsqrt_special")
        self.flow_goto(special, when=no(medium))
        tm = self.dfma(r, yh, s, mods="RM")
        t1 = self.new_pair()
        carry = self.pred()
        self.put("IADD3", "", lo(t1), carry, lo(tm), self.i(1), RZ, ndefs=2)
        self.put("IMAD", "X", hi(t1), RZ, RZ, hi(tm), carry)
        c = self.dfma(neg(tm), t1, x, mods="RP")
        up = self.setp("DSETP", "GT", c, RZ)
        self.put("FSEL", "", lo(res), lo(t1), lo(tm), up)
        self.put("FSEL", "", hi(res), hi(t1), hi(tm), up)
        self.flow_goto(done)
        self.flow_enter(special)
        twice = self.setp("DSETP", "EQU", x, RZ)         # zero or NaN
        self.put("ISETP", "GT.OR", twice, PT, hi(x), self.i(0x7FEFFFFF), twice, ndefs=2)
        negative = self.setp("ISETP", "LT", hi(x), RZ)
        self.put("PLOP3", "LUT", negative, PT, negative, twice, PT, Imm(0x30), Imm(0), ndefs=2)  # a & ~b
        self.set_pair(res, RZ, self.i(F64_NAN_HI), when=negative)
        self.flow_goto(done, when=negative)
        self.put("DADD", "", res, x, x, when=twice)
        self.flow_goto(done, when=twice)
        xs = self.dmul(x, self.f(2.0 ** 106))
        y = self.pair(RZ, lambda d: self.put("MUFU", "RSQ64H", d, hi(xs)))
        y2 = self.rsqrt_refine64(xs, y)
        s2 = self.dmul(xs, y2)
        yh2 = self.pair(lo(y2), lambda h: self.add3(hi(y2), self.i(-0x100000), into=h))
        r2 = self.dfma(s2, neg(s2), xs)
        self.dfma(yh2, r2, s2, into=res)
        self.add3(hi(res), self.i(-0x3500000), into=hi(res))

    def rsqrt_f64(self, x: VOp, ftz: bool) -> VOp:
        """.ftz: the bare estimate (low word 0). Otherwise one refinement step, and for
        exponents 0 or 0x7ff the specials (0 → signed inf, NaN → x + x, negative → NaN,
        inf → 0) or, for a subnormal, the step on x * 2^54 and the result times 2^27."""
        y = self.pair(RZ, lambda d: self.put("MUFU", "RSQ64H", d, hi(x)))
        if ftz:
            return y
        slow = self.setp("ISETP", "GE.U32", self.add3(hi(x), self.i(-0x100000)), self.i(0x7FE00000))
        res = self.rsqrt_refine64(x, y)
        done = self.flow_block("drsqrt_done")
        self.flow_goto(done, when=no(slow))
        sign = self.lop(hi(x), self.i(SIGN), RZ, AND)
        zero = self.setp("DSETP", "EQ", x, RZ)
        self.put("IMAD", "MOV.U32", lo(res), RZ, RZ, RZ, when=zero)
        self.lop(sign, self.i(0x7FF00000), RZ, OR, when=zero, into=hi(res))
        self.flow_goto(done, when=zero)
        nan = self.setp("DSETP", "GTU", mag(x), INF)
        self.put("DADD", "", res, x, x, when=nan)
        self.flow_goto(done, when=nan)
        negative = self.setp("ISETP", "NE.U32", sign, RZ)
        self.set_pair(res, RZ, self.i(F64_NAN_HI), when=negative)
        self.flow_goto(done, when=negative)
        inf = self.setp("DSETP", "EQ", mag(x), INF)
        self.set_pair(res, RZ, RZ, when=inf)
        self.flow_goto(done, when=inf)
        xs = self.dmul(x, self.f(2.0 ** 54))
        y = self.pair(RZ, lambda d: self.put("MUFU", "RSQ64H", d, hi(xs)))
        self.dmul(self.rsqrt_refine64(xs, y), self.f(2.0 ** 27), into=res)
        self.flow_enter(done)
        return res
