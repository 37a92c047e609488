"""`cvt` in all its forms.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Reg
from ptx2sass.mir import COPY, VOp
from ptx2sass.isel.common import (F2I_MODE, FRND_MODE, NOT_PT, PT, ROUNDING, RZ, _bits,
                                  _is_float, _signed)


# Float pairs F2F converts directly (dest, source).
F2F_PAIRS = {("f16", "f32"), ("f16", "f64"), ("f32", "f64"), ("f64", "f32"), ("f64", "f16"),
             ("bf16", "f32"), ("f16", "bf16"), ("bf16", "f16"), ("bf16", "f64"),
             ("f64", "bf16")}     # the last four: sm_90+ (F2F.F64.BF16, as ptxas)
# The integer-type selector of I2F's source / F2I's destination (s32 is the default).
INT_SELECTOR = {"s8": ("S8",), "u8": ("U8",), "s16": ("S16",), "u16": ("U16",), "s32": (),
                "u32": ("U32",), "s64": ("S64",), "u64": ("U64",), "b8": ("U8",),
                "b16": ("U16",), "b32": ("U32",), "b64": ("U64",)}


# narrow float pair types -> F2FP's name for the format
NARROW_FORMATS = {"e4m3x2": "E4M3", "e5m2x2": "E5M2", "e2m1x2": "E2M1", "e2m3x2": "E2M3",
                  "e3m2x2": "E3M2", "ue8m0x2": "E8"}
FP8_PAIRS = {t: NARROW_FORMATS[t] for t in ("e4m3x2", "e5m2x2")}
# cvt.rs's four-element narrowings (sm_100a/sm_103a) -> F2FP's format
QUAD_FORMATS = {"e4m3x4": "E4M3", "e5m2x4": "E5M2", "e2m3x4": "E2M3", "e3m2x4": "E3M2",
                "e2m1x4": "E2M1"}


@dataclass(frozen=True)
class NarrowForm:
    """How one (destination, source) pair of a narrow-float cvt becomes an F2FP."""
    wide: str                   # F2FP's name for the wide side: F32, F16, BF16
    layout: str                 # PACK_AB_MERGE_C (two f32), UNPACK_B_MERGE_C (a half pair), UNPACK_B
    sources: int
    roundings: tuple            # (PTX rounding, F2FP's suffix) pairs accepted
    satfinite: bool | None      # required (True), refused (False), either (None)
    relu: bool

    def __post_init__(self):
        object.__setattr__(self, "roundings", dict(self.roundings))


_RN = (("rn", ()),)
# the largest finite bf16 as F2FP's immediate half, as nvdisasm prints it (an f32 of those bits)
BF16_BOUND = 0x7F7F
BF16_BOUND_TEXT = "4.5736980577097704378e-41.H0"
_RZ_RP = (("rz", ("RZ",)), ("rp", ("RP",)))
_FP = ("e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2")
# (PTX destination type, PTX source type) -> the F2FP form (ptxas 13.5.37, sm_100a/sm_120a;
# the fp6/fp4 pairs and ue8m0x2 are sm_100a+ `a`/`f` targets, which the frontend checks)
NARROW_FORMS: dict[tuple[str, str], NarrowForm] = {
    **{(t, "f32"): NarrowForm("F32", "PACK_AB_MERGE_C", 2, _RN, True, True) for t in _FP},
    **{(t, "f16x2"): NarrowForm("F16", "UNPACK_B_MERGE_C", 1, _RN, True, True) for t in _FP},
    **{(t, "bf16x2"): NarrowForm("BF16", "UNPACK_B_MERGE_C", 1, _RN, True, True) for t in _FP},
    **{("f16x2", t): NarrowForm("F16", "UNPACK_B", 1, _RN, False, True) for t in _FP},
    # PTX 9.2: `F2FP[.SATFINITE][.RELU].BF16.E4M3.UNPACK_B d, a, 0x7f7f.H0` (the source in
    # Ra; ptxas always writes the largest finite bf16 as the third operand)
    **{("bf16x2", t): NarrowForm("BF16", "UNPACK_B_BOUND", 1, _RN, None, True) for t in _FP},
    ("ue8m0x2", "f32"): NarrowForm("F32", "PACK_AB_MERGE_C", 2, _RZ_RP, None, False),
    ("ue8m0x2", "bf16x2"): NarrowForm("BF16", "UNPACK_B_MERGE_C", 1, _RZ_RP, None, False),
    ("bf16x2", "ue8m0x2"): NarrowForm("BF16", "UNPACK_B", 1, _RN, False, False),
}


class ConvertSelection:
    # ------------------------------------------------------------------ conversions
    def sel_cvt(self, ins):
        dty, sty = ins.type, ins.types[0]
        d, a = ins.dests[0], ins.srcs[0]
        if "pack" in ins.modifiers:
            return self.pack_saturated(ins)
        if not _is_float(dty) and _bits(d.type) > _bits(dty):
            return self.convert_into_wider_register(ins)
        if any(m == "sat" for m in ins.modifiers):
            if _is_float(sty) and not _is_float(dty):
                # float to integer saturates anyway (F2I/F2IP clamp to the type's range)
                return self.sel_cvt(replace(ins, modifiers=tuple(m for m in ins.modifiers if m != "sat")))
            if dty == sty == "f32":
                return self.saturate_f32(ins)
            if dty == "f32":
                return self.saturate_to_f32(ins)
            if dty == "f16":
                return self.saturate_to_f16(ins)
            if dty == "f64":
                return self.saturate_to_f64(ins)
            if sty in ("s64", "u64") and _bits(dty) <= 32 and not _is_float(dty):
                return self.saturate_from_64(d, a, dty, sty)
            if _bits(dty) in (8, 16) and sty == "s32":
                # I2I clamps a 32-bit integer into an 8/16-bit range
                self.emit("I2I", (INT_SELECTOR[dty][0], "S32", "SAT"),
                          [self.dst(d), self.reg_part(a)])
                return
            if dty == "u32" and sty == "s32":      # clamp negatives to zero
                a32 = self.reg_part(a)
                p = VOp(self.mf.new_vreg("P"))
                self.emit("ISETP", ("LT", "AND"), [p, PT, a32, RZ, PT], ndefs=2)
                self.emit("SEL", (), [self.dst(d), a32, RZ, VOp(p.reg, inv=True)])
                return
            if not _is_float(dty) and not _is_float(sty) and not (_bits(sty) == 64 and _bits(dty) < 64):
                return self.saturate_integer(d, a, dty, sty)
            raise self.unsupported(f"`cvt.sat.{dty}.{sty}`")
        if not _is_float(dty) and not _is_float(sty):
            return self.int_convert(d, a, dty, sty)
        if dty in ("f16x2", "bf16x2") and sty == "f32":
            return self.pack_pair(ins)
        if dty in QUAD_FORMATS and sty == "f32":
            return self.narrow_quad(ins)
        if dty == "tf32" and sty == "f32":
            return self.round_to_tf32(ins)
        if dty in NARROW_FORMATS or sty in NARROW_FORMATS:
            form = NARROW_FORMS.get((dty, sty))
            if form is None:
                raise self.unsupported(f"`cvt.{dty}.{sty}`")
            return self.narrow_pair(ins, form)
        rnd = next((m for m in ins.modifiers if m in FRND_MODE or m in ROUNDING), None)
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        if dty == "f32" and sty == "f32":
            if rnd in FRND_MODE:
                mode = FRND_MODE[rnd]
                self.emit("FRND", ftz + ((mode,) if mode else ()), [self.dst(d), self.reg_part(a)])
                return
            if not ftz:            # no rounding, nothing to flush: the same bits (NaNs kept)
                self.move(self.dst(d), self.reg_part(a))
                return
            self.emit("FADD", ftz, [self.dst(d), self.reg_part(a), Reg("R", 255, neg=True)])
            return
        if sty == "f32" and not _is_float(dty) and _bits(dty) in (16, 32):
            mode = F2I_MODE.get(rnd if rnd in FRND_MODE else None)
            signed = {"u32": ("U32",), "s32": (), "u16": ("U16",), "s16": ("S16",)}[
                dty.replace("b", "u")]
            self.emit("F2I", ftz + signed + ((mode,) if mode else ()) + ("NTZ",),   # nvdisasm's order
                      [self.dst(d), self.reg_part(a)])
            return
        if ftz and (dty, sty) in (("f32", "f16"), ("f16", "f32")):
            ftz = ()       # ptxas ignores .ftz on these (f16 has no subnormal flushing here)
        if ftz and (dty, sty) == ("bf16", "f32"):
            # F2F.FTZ.BF16.F32, as ptxas: the convert flushes (a NaN keeps its payload, which
            # an FMUL.FTZ first would make the canonical one)
            round_to = ROUNDING.get(rnd) if rnd in ROUNDING else None
            self.emit("F2F", ftz + ("BF16", "F32") + ((round_to,) if round_to else ()),
                      [self.dst(d), self.reg_part(a)])
            return
        if ftz and sty == "f32" and dty != "f32":
            # ptxas flushes the source first (FMUL.FTZ by one), then converts as usual
            flushed = VOp(self.mf.new_vreg())
            self.emit("FMUL", ("FTZ",), [flushed, self.reg_part(a), self.fimm(1.0)])
            a = flushed
            ftz = ()
        if ftz and not _is_float(sty):
            ftz = ()       # an integer converts to a normal float or zero: nothing to flush
        if ftz and (dty, sty) == ("f32", "f64"):
            return self.narrow_f64_flushing(d, a, rnd)
        if ftz and (dty, sty) == ("f32", "bf16") and rnd is None:
            # sm_90+ (the frontend refuses it below, in ptxas's words): F2F.FTZ.F32.BF16, as
            # ptxas (a subnormal bf16 widens to a signed zero)
            self.emit("F2F", ("FTZ", "F32", "BF16"), [self.dst(d), self.reg_part(a)])
            return
        if not ftz and dty in ("f16", "bf16") and sty == "f32" and rnd in ("rn", "rz") and \
                self.arch.packed_half_converts and not (self.only_zero_extended(d) and
                                                        not ("relu" in ins.modifiers or "satfinite" in ins.modifiers)):
            return self.pack_one(ins, a, rnd)
        if ftz or any(m in ("relu", "satfinite") for m in ins.modifiers):
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.{dty}.{sty}`")
        return self.table_convert(d, a, dty, sty, rnd)

    def only_zero_extended(self, v: ir.Value) -> bool:
        """Every reader of `v` widens it as an unsigned integer (cvt.u32/u64.u16): ptxas then
        converts with F2F, which writes the upper half zero, instead of F2FP."""
        if not hasattr(self, "_readers"):
            from ptx2sass.opt.uses import reads
            self._readers = {}
            for _, who, value in reads(self.fn):
                self._readers.setdefault(value.id, []).append(who)
        who = self._readers.get(v.id, [])
        return bool(who) and all(
            w is not None and w.opcode == "cvt" and w.types and w.types[0] in ("u16", "b16")
            and w.type in ("u32", "u64", "b32", "b64") for w in who)

    def pack_one(self, ins, a, rnd: str) -> None:
        """cvt.{rn,rz}[.relu|.satfinite].{f16,bf16}.f32 as ptxas writes it: the packing convert
        into the low half, F2FP.PACK_AB d, RZ, a (F2FP.{RELU,SATFINITE}….MERGE_C d, a, RZ for
        the clamping forms); a NaN gives the canonical one (F2F would keep its payload)."""
        clamp = tuple(m.upper() for m in ("satfinite", "relu") if m in ins.modifiers)
        kind = self.f2fp_types(ins.type)
        if clamp:
            self.emit("F2FP", clamp + kind + ("MERGE_C",) + (("RZ",) if rnd == "rz" else ()),
                      [self.dst(ins.dests[0]), self.reg_part(a), RZ])
            return
        self.emit("F2FP", kind + ("PACK_AB",) + (("RZ",) if rnd == "rz" else ()),
                  [self.dst(ins.dests[0]), RZ, self.reg_part(a)])

    def convert_into_wider_register(self, ins) -> None:
        """A destination register wider than cvt's integer type (`cvt.u8.u32` into a .b32,
        `cvt.s16.f32` into a .b64) holds the result zero- or sign-extended by that type
        (PTX's rule for cvt's destination operand): convert at the type's width, then extend."""
        d, dty = ins.dests[0], ins.type
        narrow = self.fresh_value(dty)
        self.sel_cvt(replace(ins, dests=[narrow]))
        wide = ("s" if _signed(dty) else "u") + str(_bits(d.type))
        self.int_convert(d, narrow, wide, dty)

    # cvt.r?.ftz.f32.f64 flushes a result that is tiny after rounding (rounded to 24 bits
    # with an unbounded exponent, below FLT_MIN), as ptxas decides it: |x| below a
    # threshold in FP64 that depends on the rounding (to nearest: FLT_MIN - 2^-151; toward
    # zero, or toward FLT_MIN from a side rounding towards zero: FLT_MIN; from the side
    # rounding away from zero: just above FLT_MIN - 2^-150).
    FTZ_THRESHOLD = {"near": 0x380FFFFFF0000000, "toward": 0x3810000000000000, "away": 0x380FFFFFE0000001}

    def narrow_f64_flushing(self, d, a, rnd) -> None:
        """cvt.r?.ftz.f32.f64: F2F, then, where the result is tiny, that result multiplied
        by FLT_MIN, which underflows it to a zero of its sign (ptxas's trick)."""
        x = self.force_wide(a)
        r = VOp(self.mf.new_vreg())
        round_to = ROUNDING.get(rnd) if rnd in ROUNDING else None
        self.emit("F2F", ("F32", "F64") + ((round_to,) if round_to else ()), [r, x])
        t = self.new_pair()
        if round_to in ("RM", "RP"):
            # RM rounds negative values away from zero, RP positive ones
            neg = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("LT", "AND"), [neg, PT, VOp(x.reg, 1), RZ, PT], ndefs=2)
            away, toward = self.FTZ_THRESHOLD["away"], self.FTZ_THRESHOLD["toward"]
            first, second = (away, toward) if round_to == "RM" else (toward, away)
            for k in range(2):
                w1, w2 = (first >> 32 * k) & 0xFFFFFFFF, (second >> 32 * k) & 0xFFFFFFFF
                self.emit("SEL", (), [VOp(t.reg, k), self.reg_part(ir.Const(w1, "u32")),
                                      Imm(w2) if w2 else RZ, neg])
        else:
            value = self.FTZ_THRESHOLD["toward" if round_to == "RZ" else "near"]
            for k in range(2):
                self.move(VOp(t.reg, k), self.imm32(value >> 32 * k) if (value >> 32 * k) & 0xFFFFFFFF else RZ)
        normal = VOp(self.mf.new_vreg("P"))        # |x| >= threshold, or NaN
        self.emit("DSETP", ("GEU", "AND"), [normal, PT, VOp(x.reg, abs=True), t, PT], ndefs=2)
        self.emit(COPY, (), [self.dst(d), r], guarded=self.guard is not None)
        flush = VOp(normal.reg, inv=True)
        if self.guard is not None:     # the instruction's guard and the test, for every lane
            flush = VOp(self.mf.new_vreg("P"))
            self.emit("PLOP3", ("LUT",), [flush, PT, self.guard, VOp(normal.reg), PT, Imm(0x30), Imm(0)],
                      guarded=False)
        mi = self.emit("FMUL", (), [self.dst(d), r, self.fimm(self.FLT_MIN)])
        mi.guard = flush

    def narrow_pair(self, ins, form: "NarrowForm") -> None:
        """cvt between a narrow float pair (fp8, fp6, fp4, ue8m0) and f32 / f16x2 / bf16x2:
        one F2FP, as ptxas writes it. A pack puts a (or the source's high half) in the high
        element and merges over zero (RZ as Rc); an unpack widens the low 16 bits of a."""
        dty, sty = ins.type, ins.types[0]
        mods = set(ins.modifiers)
        rounding = [m for m in ins.modifiers if m in ROUNDING or m in FRND_MODE or m in ("rna", "rs")]
        extra = mods - set(form.roundings) - {"satfinite", "relu"}
        satfinite_wrong = form.satfinite is not None and ("satfinite" in mods) != form.satfinite
        if len(rounding) != 1 or rounding[0] not in form.roundings or extra or satfinite_wrong \
                or ("relu" in mods and not form.relu) or len(ins.srcs) != form.sources:
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.{dty}.{sty}`")
        suffix = form.roundings[rounding[0]]
        flags = (("SATFINITE",) if "satfinite" in mods else ()) + (("RELU",) if "relu" in mods else ())
        d = self.dst(ins.dests[0])
        srcs = [self.reg_part(a) for a in ins.srcs]
        if form.layout == "UNPACK_B":
            self.emit("F2FP", flags + (form.wide, NARROW_FORMATS[sty], "UNPACK_B"), [d] + srcs)
            return
        if form.layout == "UNPACK_B_BOUND":
            self.emit("F2FP", flags + (form.wide, NARROW_FORMATS[sty], "UNPACK_B"),
                      [d] + srcs + [Imm(BF16_BOUND, text=BF16_BOUND_TEXT)])
            return
        self.emit("F2FP", flags + (NARROW_FORMATS[dty], form.wide, form.layout) + suffix, [d] + srcs + [RZ])

    def round_to_tf32(self, ins) -> None:
        """cvt.rna{.satfinite}.tf32.f32: round to 10 mantissa bits, ties away from zero, by
        adding half a unit of the last kept bit to the pattern of a finite value, then clearing
        the 13 dropped bits (NaN and infinity only lose those bits), as ptxas does;
        .satfinite: a result that is not finite (|r| >= inf, unordered: NaN too) steps down
        one tf32 unit, so an infinity becomes the largest finite value (ptxas's sequence)."""
        mods = set(ins.modifiers)
        if mods - {"relu", "satfinite"} in ({"rn"}, {"rz"}):
            # sm_90+ (the frontend refuses it before; .satfinite sm_100+):
            # F2FP[.SATFINITE][.RELU].TF32.F32.PACK_B[.RZ], as ptxas
            flags = tuple(m.upper() for m in ("satfinite", "relu") if m in mods)
            self.emit("F2FP", flags + ("TF32", "F32", "PACK_B") + (("RZ",) if "rz" in mods else ()),
                      [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])
            return
        if "rna" not in ins.modifiers or any(m not in ("rna", "satfinite") for m in ins.modifiers):
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.tf32.f32`")
        x = self.in_register(ins.srcs[0])      # |x| below: a known zero needs a register (not RZ)
        special = VOp(self.mf.new_vreg("P"))
        self.emit("FSETP", ("GEU", "AND"), [special, PT, VOp(x.reg, x.part, abs=True),
                                            self.fimm(float("inf")), PT], ndefs=2)
        rounded = VOp(self.mf.new_vreg())
        self.emit(COPY, (), [rounded, x], guarded=False)
        self.guarded(special, True, "IADD3", (), [rounded, rounded, Imm(0x1000), RZ])
        dst = self.dst(ins.dests[0])
        self.emit("LOP3", ("LUT",), [dst, rounded, Imm(0xFFFFE000), RZ, Imm(0xC0), NOT_PT])
        if "satfinite" in ins.modifiers:
            huge = VOp(self.mf.new_vreg("P"))
            self.emit("FSETP", ("GEU", "AND"), [huge, PT, VOp(dst.reg, dst.part, abs=True),
                                                self.fimm(float("inf")), PT], ndefs=2)
            self.guarded(huge, False, "IADD3", (), [dst, dst, Imm(0xFFFFE000), RZ])

    def saturate_from_64(self, d, a, dty: str, sty: str) -> None:
        """cvt.sat from a 64-bit integer: clamp to the 32-bit range of the destination's
        signedness first (ptxas: the low word when the high word is its extension, else the
        bound on the value's side), then narrow further with I2I.SAT."""
        if self.guard is not None:
            raise self.unsupported(f"guarded `cvt.sat.{dty}.{sty}`")
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        fits, above = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        clamped = VOp(self.mf.new_vreg())
        if _signed(dty):
            if sty == "s64":
                ext = VOp(self.mf.new_vreg())
                self.emit("SHF", ("R", "S32", "HI"), [ext, RZ, Imm(0x1F), lo])
                self.emit("ISETP", ("EQ", "AND"), [fits, PT, hi, ext, PT], ndefs=2)
                self.emit("ISETP", ("GE", "AND"), [above, PT, hi, RZ, PT], ndefs=2)
            else:       # u64: fits when the high word is zero and the low one is below 2^31
                self.emit("ISETP", ("EQ", "U32", "AND"), [fits, PT, hi, RZ, PT], ndefs=2)
                self.emit("ISETP", ("GE", "AND"), [fits, PT, lo, RZ, fits], ndefs=2)
                self.emit("PLOP3", ("LUT",), [above, PT, PT, PT, PT, Imm(0xFF), Imm(0)])
            bound = VOp(self.mf.new_vreg())
            self.move(bound, Imm(0x7FFFFFFF))
            self.emit("SEL", (), [bound, bound, Imm(0x80000000), above])
            self.emit("SEL", (), [clamped, lo, bound, fits])
            narrow = INT_SELECTOR[dty][0] if _bits(dty) < 32 else None
            if narrow:
                self.emit("I2I", (narrow, "S32", "SAT"), [self.dst(d), clamped])
            else:
                self.emit(COPY, (), [self.dst(d), clamped], guarded=False)
            return
        # unsigned: zero below, all ones above, else the low word; narrower ones then take
        # the smaller of that and their largest value
        self.emit("ISETP", ("EQ", "U32", "AND"), [fits, PT, hi, RZ, PT], ndefs=2)
        self.emit("ISETP", ("GE", "AND") if sty == "s64" else ("GE", "U32", "AND"),
                  [above, PT, hi, RZ, PT], ndefs=2)
        high = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [high, RZ, Imm(0xFFFFFFFF), VOp(above.reg, inv=True)])
        if _bits(dty) == 32:
            self.emit("SEL", (), [self.dst(d), lo, high, fits])
            return
        self.emit("SEL", (), [clamped, lo, high, fits])
        self.emit("IMNMX", ("U32",), [self.dst(d), clamped, Imm((1 << _bits(dty)) - 1), PT])

    # cvt.pack.sat.{u,s}{2,4}: c's low bits move up by the two packed fields, so I2IP reads
    # its top 32 - 2 * width bits (`R.28`, `R.24` in ptxas's words); bytes take c whole
    PACK_C_BITS = {"u2": "28", "s2": "28", "u4": "24", "s4": "24"}

    def pack_saturated(self, ins) -> None:
        """cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c: a and b saturated to the
        narrow type over c's low bits shifted up; cvt.pack.sat.{u16,s16}.s32 d, a, b: the two
        halves. One I2IP as ptxas does."""
        # the sub-byte types are no IR types: they stay modifiers, the IR type is then `s32`
        narrow = next((m for m in ins.modifiers if m in self.PACK_C_BITS), None)
        dty, stypes = (narrow, (ins.type, *ins.types)) if narrow else (ins.type, tuple(ins.types))
        three = dty in ("u2", "s2", "u4", "s4", "u8", "s8") and stypes == ("s32", "b32") and len(ins.srcs) == 3
        two = dty in ("u16", "s16") and stypes == ("s32",) and len(ins.srcs) == 2
        if not (three or two) or "sat" not in ins.modifiers:
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.{ins.type}.{'.'.join(ins.types)}`")
        a, b = ins.srcs[:2]
        c = self.reg_part(ins.srcs[2]) if three else RZ
        if dty in self.PACK_C_BITS:
            c = replace(c, suffix=(self.PACK_C_BITS[dty],))
        self.emit("I2IP", (dty.upper(), "S32", "SAT"), [self.dst(ins.dests[0]), self.reg_part(a),
                                                        self.part_of(b, 0), c])

    def f2fp_types(self, half: str) -> tuple[str, ...]:
        """F2FP's type modifiers for an f16/bf16 result from f32, as the target's nvdisasm
        spells them."""
        if self.arch.f2fp_type_names:
            return (half.upper(), "F32")
        return ("BF16",) if half == "bf16" else ()

    def pack_pair(self, ins) -> None:
        """cvt.{rn,rz}{.satfinite}{.relu}.{f16x2,bf16x2}.f32 d, a, b: one F2FP.PACK_AB, a
        into the high half and b into the low one (.satfinite: infinities to the largest
        finite value of their sign)."""
        extra = [m for m in ins.modifiers if m not in ("rn", "rz", "rs", "relu", "satfinite")]
        stochastic = "rs" in ins.modifiers
        if extra or not any(m in ("rn", "rz", "rs") for m in ins.modifiers) \
                or len(ins.srcs) != 2 + stochastic:
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.{ins.type}.f32`")
        mods = (("SATFINITE",) if "satfinite" in ins.modifiers else ()) + \
            (("RELU",) if "relu" in ins.modifiers else ()) + \
            self.f2fp_types(ins.type[:-2]) + ("PACK_AB",) + (("RZ",) if "rz" in ins.modifiers else ()) \
            + (("RS",) if stochastic else ())
        a, b = ins.srcs[:2]
        # .rs: `F2FP.F16.F32.PACK_AB.RS d, a, b, rbits` (sm_100a/sm_103a, as ptxas)
        rbits = [self.reg_part(ins.srcs[2])] if stochastic else []
        b = self.reg_part(b) if stochastic else self.part_of(b, 0)
        self.emit("F2FP", mods, [self.dst(ins.dests[0]), self.reg_part(a), b] + rbits)

    def narrow_quad(self, ins) -> None:
        """cvt.rs.satfinite{.relu}.{e4m3x4,...,e2m1x4}.f32 d, {a, b, e, f}, rbits: two
        chained F2FP.PACK_AB_MERGE_C.RS, as ptxas writes them: t = (a, b) rounded with rbits,
        then d = (e, f) rounded with t (which carries rbits' other random bits up, and
        the first pair above the second: emu/stochastic.py)."""
        mods = set(ins.modifiers)
        if mods - {"rs", "satfinite", "relu"} or not {"rs", "satfinite"} <= mods or len(ins.srcs) != 5:
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.{ins.type}.f32`")
        flags = ("SATFINITE",) + (("RELU",) if "relu" in mods else ()) + \
            (QUAD_FORMATS[ins.type], "F32", "PACK_AB_MERGE_C", "RS")
        a, b, e, f, rbits = ins.srcs
        first = VOp(self.mf.new_vreg())
        self.emit("F2FP", flags, [first, self.reg_part(a), self.reg_part(b), self.reg_part(rbits)])
        self.emit("F2FP", flags, [self.dst(ins.dests[0]), self.reg_part(e), self.reg_part(f), first])

    def saturate_f32(self, ins) -> None:
        """cvt.sat.f32.f32: clamp to [0, 1] (NaN to 0) by adding zero with .SAT, after the
        rounding to an integer if one is asked for (FRND), as ptxas does."""
        d, a = ins.dests[0], self.reg_part(ins.srcs[0])
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        rnd = next((m for m in ins.modifiers if m in FRND_MODE), None)
        if rnd is not None:
            rounded, mode = VOp(self.mf.new_vreg()), FRND_MODE[rnd]
            self.emit("FRND", ftz + ((mode,) if mode else ()), [rounded, a])
            a = rounded
        elif any(m in ROUNDING for m in ins.modifiers):
            raise self.unsupported(f"`cvt.{'.'.join(ins.modifiers)}.f32.f32`")
        self.emit("FADD", ftz + ("SAT",), [self.dst(d), RZ, a])

    def saturate_to_f32(self, ins) -> None:
        """cvt.sat.f32 from another type: the conversion, then clamped to [0, 1] (NaN to 0)
        by adding zero with .SAT, as ptxas does (I2FP.F32.U32.RZ, FADD.SAT); a guard
        guards the clamp only."""
        t = self.fn.new_value("f32")
        guard, self.guard = self.guard, None
        self.sel_cvt(replace(ins, dests=[t], modifiers=tuple(m for m in ins.modifiers if m != "sat")))
        self.guard = guard
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        self.emit("FADD", ftz + ("SAT",), [self.dst(ins.dests[0]), RZ, VOp(self.vreg(t))])

    def saturate_integer(self, d, a, dty: str, sty: str) -> None:
        """cvt.sat between integer types (64-bit sources into narrower ones: saturate_from_64):
        the source as an exact 32-bit value, then IMNMX against the destination's bounds
        where the source's range passes them; u64/s64 into each other by the sign word."""
        db, sb = _bits(dty), _bits(sty)
        if db == sb == 64:
            hi, lo = self.part_of(a, 1), self.part_of(a, 0)
            top = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("LT", "AND"), [top, PT, self.as_reg(hi), RZ, PT], ndefs=2)
            self.begin_wide(d)
            if dty == "u64":          # negative → 0
                self.emit("SEL", (), [self.dst(d, 0), RZ, self.as_reg(lo), top])
                self.emit("SEL", (), [self.dst(d, 1), RZ, self.as_reg(hi), top])
            else:                     # 2^63 and above → 2^63 - 1
                self.emit("SEL", (), [self.dst(d, 0), self.as_reg(Imm(0xFFFFFFFF)), self.as_reg(lo), top])
                self.emit("SEL", (), [self.dst(d, 1), self.as_reg(Imm(0x7FFFFFFF)), self.as_reg(hi), top])
            return
        bounds = [(-(1 << (b - 1)), (1 << (b - 1)) - 1) if _signed(t) else (0, (1 << b) - 1)
                  for t, b in ((sty, sb), (dty, db))]
        (smin, smax), (dmin, dmax) = bounds
        if dmin <= smin and smax <= dmax:
            return self.int_convert(d, a, dty, sty)
        value = self.extend(a, sty) if sb < 32 else self.reg_part(a)
        unsigned = () if _signed(sty) else ("U32",)
        if dmax < smax:
            t = VOp(self.mf.new_vreg())
            self.emit("IMNMX", unsigned, [t, self.as_reg(value), self.imm32(dmax), PT])
            value = t
        if dmin > smin:
            t = VOp(self.mf.new_vreg())
            self.emit("IMNMX", (), [t, self.as_reg(value), self.imm32(dmin), NOT_PT])
            value = t
        if db == 64:
            self.begin_wide(d)
            self.move(self.dst(d, 0), value)
            self.move(self.dst(d, 1), RZ)         # saturated at zero or above
            return
        self.move(self.dst(d), value)

    def saturate_to_f64(self, ins) -> None:
        """cvt.sat.f64: the conversion (or rounding), then max(+0, x) and min(x, 1.0) as the
        PTX min/max define them (a NaN gives +0), the DSETP.MAX/MIN selections ptxas writes."""
        if self.guard is not None:
            raise self.unsupported(f"guarded `cvt.sat.f64.{ins.types[0]}`")
        t, u = self.fn.new_value("f64"), self.fn.new_value("f64")
        self.sel_cvt(replace(ins, dests=[t], modifiers=tuple(m for m in ins.modifiers if m != "sat")))
        self.sel_max(ir.Instr("max", dests=[u], srcs=[ir.Const(0, "f64"), t], type="f64", line=ins.line))
        self.sel_min(ir.Instr("min", dests=[ins.dests[0]], srcs=[u, ir.Const(0x3FF0000000000000, "f64")],
                              type="f64", line=ins.line))

    def saturate_to_f16(self, ins) -> None:
        """cvt.sat.f16: the conversion, then clamped to [0, 1] by HADD2.SAT with -0 (the
        low half broadcast), as ptxas does; a guard guards the clamp only."""
        t = self.fn.new_value("f16")
        guard, self.guard = self.guard, None
        self.sel_cvt(replace(ins, dests=[t], modifiers=tuple(m for m in ins.modifiers if m != "sat")))
        self.guard = guard
        self.emit("HADD2", ("SAT",), [self.dst(ins.dests[0]), VOp(self.vreg(t), suffix=("H0_H0",)),
                                      Reg("R", 255, neg=True, suffix=("H0_H0",))])

    def table_convert(self, d, a, dty: str, sty: str, rnd: str | None) -> None:
        """The conversions ptxas does in one instruction (F2F, I2F/I2FP, F2I, FRND, and the
        f16/bf16 widenings done with HADD2.F32 and a shift), spelled as ptxas spells them."""
        dst = self.dst(d)
        if _bits(dty) == 64:
            self.begin_wide(d)
        if isinstance(a, VOp):
            src = a
        elif _bits(sty) == 64:
            src = self.force_wide(a)
        elif _is_float(dty) and not _is_float(sty) and _bits(sty) == 32:
            # I2F/I2FP read a kernel parameter or `__constant__` word in place, as ptxas
            # (`I2FP.F32.S32 R24, c[0x3][0x5c]`); slots that cannot are legalised later
            src = self.part_of(a, 0)
        else:
            src = self.reg_part(a)
        round_to = ROUNDING.get(rnd) if rnd in ROUNDING else None
        if _is_float(dty) and _is_float(sty):
            if dty == sty:
                if rnd in FRND_MODE and dty in ("f16", "bf16", "f64"):
                    mode = FRND_MODE[rnd]
                    self.emit("FRND", (dty.upper(),) + ((mode,) if mode else ()), [dst, src])
                elif rnd is None and dty == "f64":
                    self.emit(COPY, (), [dst, src], guarded=self.guard is not None)
                elif rnd is None and dty == "f16":
                    self.emit("HADD2", (), [dst, replace(src, suffix=("H0_H0",)),
                                            Reg("R", 255, neg=True, suffix=("H0_H0",))])
                else:
                    raise self.unsupported(f"`cvt.{rnd}.{dty}.{sty}`")
                return
            if dty == "f32" and sty == "f16":
                self.emit("HADD2", ("F32",), [dst, Reg("R", 255, neg=True),
                                              replace(src, suffix=("H0_H0",))])
                return
            if dty == "f32" and sty == "bf16":
                self.emit("SHF", ("L", "U32"), [dst, src, Imm(0x10), RZ])
                return
            if (dty, sty) not in F2F_PAIRS:
                raise self.unsupported(f"`cvt.{dty}.{sty}`")
            self.emit("F2F", (dty.upper(), sty.upper()) + ((round_to,) if round_to else ()),
                      [dst, src])
            return
        if _is_float(dty):          # from an integer
            if dty == "bf16" and not self.arch.bf16_integer_converts:
                raise self.unsupported(f"`cvt.{dty}.{sty}`")
            if dty == "f32" and sty in ("s32", "u32") and round_to is None and self.arch.packed_converts:
                # I2FP and F2IP are sm_86+; sm_80's ptxas writes I2F / F2I.U8
                self.emit("I2FP", ("F32", sty.upper()), [dst, src])
                return
            mods = (() if dty == "f32" else (dty.upper(),)) + INT_SELECTOR[sty]
            self.emit("I2F", mods + ((round_to,) if round_to else ()), [dst, src])
            return
        # to an integer
        if sty == "bf16" and not self.arch.bf16_integer_converts:
            raise self.unsupported(f"`cvt.{dty}.{sty}`")
        mode = F2I_MODE.get(rnd if rnd in FRND_MODE else None)
        if dty in ("u8", "b8") and sty == "f32" and mode in ("TRUNC", None) and self.arch.packed_converts:
            # ptxas's packed convert (the byte lands in the low byte, the rest zero), for
            # .rzi and .rni (round to nearest: no rounding token); .rmi/.rpi are F2I.U8
            self.emit("F2IP", ("U8", "F32") + ((mode,) if mode else ()) + ("NTZ",),
                      [dst, RZ, src, RZ])
            return
        mods = INT_SELECTOR[dty] + (() if sty == "f32" else (sty.upper(),)) + \
            ((mode,) if mode else ())
        if sty != "f64" and _bits(dty) < 64:
            mods += ("NTZ",)
        self.emit("F2I", mods, [dst, src])

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
                self.note_zero_word(d, 1)
            return
        if db > sb:
            src = self.extend(a, sty)
        else:
            src = self.part_of(a, 0)
        if isinstance(src, VOp) and self.guard is None:
            self.emit(COPY, (), [self.dst(d), src], guarded=False)
        else:
            self.move(self.dst(d), src)
