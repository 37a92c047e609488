"""Seeded random PTX programs over the instruction set (see program.py for the model).

`generate(seed)` is deterministic. Each program enables a random subset of the feature
groups below (so one refused instruction does not hide everything else), picks a launch
shape and a register-pressure level, and grows nested statements within a budget.
Every instruction generator keeps its instruction defined: integer divisors are made
non-zero (and never -1 for signed types), float multiplies carry a rounding mode unless the
program is compiled with `--fmad=false` (ptxas may contract an unrounded mul into an add),
approximate results go to registers that are only compared within a bound, collectives
run under exact member masks, barriers only in uniform control flow.
"""
from __future__ import annotations

import functools
import random
import re
import struct
from dataclasses import dataclass, field

from ptx2sass.fuzz.program import (FULL_MASK, GLOBAL_COUNTER_OPS, LOCAL_ARRAY_WORDS, SHARED_COUNTER_OPS,
                                   SHARED_WORDS_PER_THREAD, Break, Call, Exit, Func, If, Loop, Op, Program,
                                   Reg, Return, Store, Switch)

# Feature groups: name -> probability that a program enables it.
FEATURES: dict[str, float] = {
    "int32": 0.9, "int16": 0.35, "int64": 0.45, "int8": 0.3, "carry": 0.25, "intdiv": 0.3,
    "bits": 0.4, "cvt": 0.45, "f32": 0.6, "f64": 0.35, "fspecial": 0.3, "approx": 0.25,
    "f16": 0.3, "bf16": 0.2, "fp8": 0.15, "pred": 0.5, "guard": 0.4, "branch": 0.7,
    "divergent": 0.5, "loop": 0.5, "break": 0.25, "call": 0.2, "exit": 0.15, "store": 0.3,
    "global": 0.3, "vector": 0.25, "shared": 0.25, "barrier": 0.25, "local": 0.2,
    "atomic": 0.3, "contended": 0.25, "warp": 0.3, "mma": 0.12, "video": 0.15, "special": 0.25,
    "fmadoff": 0.2, "switch": 0.2, "forms": 0.95, "texture": 0.35,
}
ALWAYS = ("int32",)
# how a `.func` body reads each `.param` argument: the same bits under another type of its
# width (`ld.param.KIND` when ""), or its low byte, extended
PARAM_FUNC_TYPES = {"b16": ("", "b16", "u16", "s16", "b8", "u8", "s8"),
                    "b32": ("", "b32", "u32", "s32", "f32", "b8", "u8", "s8"),
                    "b64": ("", "b64", "u64", "s64", "f64")}

VIEWS = {"pred": ("pred",), "b16": ("u16", "s16", "f16", "bf16"),
         "b32": ("u32", "s32", "f32", "f16x2", "bf16x2"), "b64": ("u64", "s64", "f64")}
# load types the prelude may use for a register of each kind and view
IN_LOADS = {
    "b16": {"u16": ("u16", "u8", "b16"), "s16": ("s16", "s8"), "f16": ("b16",), "bf16": ("b16",)},
    "b32": {"u32": ("u32", "b32", "u16", "u8"), "s32": ("s32", "s16", "s8"), "f32": ("f32", "b32"),
            "f16x2": ("b32",), "bf16x2": ("b32",)},
    "b64": {"u64": ("u64", "b64", "u32"), "s64": ("s64", "s32"), "f64": ("f64", "b64")},
}
PARAM_TYPES = {
    "b16": {"u16": ("u16", "u8"), "s16": ("s16", "s8"), "f16": ("b16",), "bf16": ("b16",)},
    "b32": {"u32": ("u32", "u8", "u16", "b32"), "s32": ("s32", "s8", "s16"), "f32": ("f32",),
            "f16x2": ("b32",), "bf16x2": ("b32",)},
    "b64": {"u64": ("u64", "b64"), "s64": ("s64",), "f64": ("f64",)},
}
INT_KIND = {16: "b16", 32: "b32", 64: "b64"}
ROUND = (".rn", ".rz", ".rm", ".rp")
IROUND = (".rni", ".rzi", ".rmi", ".rpi")
CMP_INT = ("eq", "ne", "lt", "le", "gt", "ge")
CMP_UINT = ("eq", "ne", "lo", "ls", "hi", "hs", "lt", "le", "gt", "ge")
CMP_F = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")

# Error bounds of approximate instructions, as a relative (or, near zero, absolute) bound;
# the PTX manual's figures with room for the compilers' different range reductions.
# The .f64 approximations give a double's high word (20 mantissa bits, the low word zero):
# its last bit alone is up to 2^-20 relative, and ptxas's constant folding and the MUFU's
# RCP64H round it apart (fresh seed 20100381: ...2a where the MUFU gives ...2b).
TOL = {"sin": 2 ** -18, "cos": 2 ** -18, "lg2": 2 ** -20, "ex2": 2 ** -20, "rcp": 2 ** -21,
       "sqrt": 2 ** -21, "rsqrt": 2 ** -20, "div": 2 ** -20, "tanh": 2 ** -10, "f16": 2 ** -9,
       "rcp64": 2 ** -19, "rsqrt64": 2 ** -19}

SPECIAL_REGS_32 = ("%tid.x", "%tid.y", "%ntid.x", "%ntid.y", "%ctaid.x", "%ctaid.y", "%nctaid.x",
                   "%laneid", "%warpid", "%nwarpid", "%lanemask_eq", "%lanemask_le",
                   "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%smid", "%nsmid",
                   "%dynamic_smem_size", "%total_smem_size")
UNIFORM_SPECIALS = ("%ntid.x", "%ntid.y", "%ctaid.x", "%ctaid.y", "%nctaid.x", "%nwarpid", "%nsmid",
                    "%dynamic_smem_size", "%total_smem_size")
NONDETERMINISTIC = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%clock_hi")
# values that differ between runs of one program on one GPU: the SM a CTA runs on, the warp
# slot it got (an H200 gave %warpid 3 to a CTA's first warp; PTX: "volatile", not tid/32), the
# launch's number (%gridid: 0x47e on the H200, 1 in the emulator). They go to sinks; run-5
# programs (tools/gpu_truth.py) were made with none of them here.
RUN_DEPENDENT = ("%smid", "%warpid", "%gridid")

LAUNCHES_FULL_WARPS = [((1, 1, 1), (32, 1, 1)), ((1, 1, 1), (64, 1, 1)), ((2, 1, 1), (32, 1, 1)),
                       ((1, 1, 1), (128, 1, 1)), ((2, 1, 1), (64, 1, 1)), ((1, 1, 1), (32, 2, 1)),
                       ((2, 2, 1), (32, 1, 1)), ((1, 1, 1), (16, 4, 1)), ((3, 1, 1), (96, 1, 1)),
                       ((1, 1, 1), (8, 4, 2))]
LAUNCHES_ANY = [((1, 1, 1), (40, 1, 1)), ((2, 1, 1), (17, 1, 1)), ((1, 1, 1), (7, 3, 1)),
                ((3, 1, 1), (50, 1, 1)), ((1, 2, 1), (33, 1, 1))]
PRESSURE = {"low": (3, 6), "medium": (8, 16), "high": (24, 40), "extreme": (70, 110)}


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


@dataclass
class Ctx:
    """Where a statement is being generated."""
    uniform: bool = True          # every thread of the CTA gets here together
    full: bool = True             # the member mask is the full warp
    masked: bool = True           # collectives allowed (the member mask is known exactly)
    loop: Loop | None = None
    loop_has_barrier: bool = False
    depth: int = 0
    func: Func | None = None
    breaks_divergent_ok: bool = True

    def inner(self, **kw) -> "Ctx":
        d = dict(self.__dict__)
        d.update(kw)
        return Ctx(**d)


class Builder:
    """Collects one Op's operands; destinations are chosen last, once it is known whether
    the result may be uniform."""

    def __init__(self, g: "Generator", ctx: Ctx):
        self.g, self.ctx = g, ctx
        self.uses: list[Reg] = []
        self.defs: list[Reg | tuple] = []
        self.temps: list[Reg] = []
        self.uniform_inputs = True

    def src(self, kind: str, view: str | None = None, imm=None, uniform: bool = False) -> str:
        if imm is not None and self.g.rng.random() < 0.2:
            return imm() if callable(imm) else imm
        r = self.g.pick_src(kind, view, self.ctx, uniform)
        self.uniform_inputs &= r.uniform
        self.uses.append(r)
        return f"$a{len(self.uses) - 1}"

    def other_src(self, first: str, kind: str, view: str | None = None, imm=None) -> str:
        """A source that is not the register `first` names: float min/max of one register
        twice is a NaN's payload the manual leaves open when that register is a NaN (ptxas
        folds min(x, x) to x; the instruction returns the canonical NaN)."""
        first_reg = self.uses[int(first[2:])] if first.startswith("$a") else None
        for attempt in range(6):
            text = self.src(kind, view if attempt < 3 else None, imm)
            if not text.startswith("$a") or self.uses[int(text[2:])] is not first_reg:
                return text
            self.uses.pop()
        return self.reg(self.g.new_reg(kind, view, uniform=False))

    def reg(self, r: Reg) -> str:
        self.uniform_inputs &= r.uniform
        self.uses.append(r)
        return f"$a{len(self.uses) - 1}"

    def dst(self, kind: str, view: str | None = None) -> str:
        self.defs.append((kind, view))
        return f"$d{len(self.defs) - 1}"

    def approx(self, kind: str, view: str) -> str:
        self.defs.append(self.g.new_reg(kind, view, role="approx"))
        return f"$d{len(self.defs) - 1}"

    def sink(self, kind: str) -> str:
        self.defs.append(self.g.new_reg(kind, "u32" if kind == "b32" else VIEWS[kind][0], role="sink"))
        return f"$d{len(self.defs) - 1}"

    def tmp(self, kind: str) -> str:
        self.temps.append(Reg(kind, VIEWS[kind][0], role="temp"))
        return f"$t{len(self.temps) - 1}"

    def build(self, text: str, key: str, uniform_ok: bool = True, guard_ok: bool = True, **kw) -> Op | None:
        """The statement, or None where an instruction of it is not on the program's target
        (`Generator.text_on_target`: the caller's op is then drawn again)."""
        g, ctx = self.g, self.ctx
        if not g.text_on_target(text):
            return None
        guard = None
        if guard_ok and g.on("guard") and g.rng.random() < 0.3 and not kw.get("collective") \
                and not kw.get("barrier"):
            p = g.pick_src("pred", None, ctx, False)
            guard = (p, g.rng.random() < 0.4)
        may_uniform = (uniform_ok and self.uniform_inputs and ctx.uniform
                       and (guard is None or guard[0].uniform))
        defs = []
        for d in self.defs:
            if isinstance(d, Reg):
                defs.append(d)
            else:
                kind, view = d
                defs.append(g.pick_dst(kind, view, may_uniform, avoid=defs))
        if "@@" not in text:
            lines = text.split("\n")
            lines[-1] = "@@" + lines[-1]
            text = "\n".join(lines)
        return Op(text, defs, list(self.uses), list(self.temps), key, guard, **kw)



# ------------------------------------------------------------------------ unspecified NaNs

# Float instructions whose NaN result the PTX manual leaves open: abs/neg ("NaN inputs
# yield an unspecified NaN") and min/max of two NaNs (which NaN is returned is not said;
# with `.NaN` it is the canonical NaN). ptxas folds them into FSEL/LOP3 (payload and sign
# kept), sign flips or operand swaps as it likes; an integer instruction reading such a
# register sees those bits. Every such result is made the canonical NaN of its type (each
# half of a packed pair apart), so only what the manual fixes is compared.
UNSPECIFIED_NAN = ("abs", "neg", "min", "max")
CANONICAL_NAN = {"f32": "0x7fffffff", "f64": "0x7fffffffffffffff"}
HALF_EXPONENT = {"f16": 0x7C00, "bf16": 0x7F80}      # |bits| above it: a NaN


def unspecified_nan(opcode: str, modifiers, t: str) -> bool:
    """Whether `opcode.modifiers.t` may give a NaN whose bits the manual leaves open."""
    return opcode in UNSPECIFIED_NAN and t in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2") \
        and "NaN" not in {m.lstrip(".") for m in modifiers}


# Arithmetic whose NaN result, when two sources are NaNs, depends on the operands' order:
# DADD/DMUL/DFMA return the last NaN source's payload (emu/fp.py, as the H200 does) and
# ptxas orders commutative operands (and a - b as -b + a) by context (GPU run 20, fuzz
# 9301650: `sub.rp.f64` of two NaNs). The manual does not say which NaN comes out. FP32 and
# the 16-bit types always give the canonical NaN on the GPU, so only f64 needs this.
TWO_NAN_ARITHMETIC = ("add", "sub", "mul", "fma", "mad", "div")
LAST_NAN_PAYLOAD_TYPES = ("f64",)


def two_nan_unspecified(opcode: str, t: str, sources) -> bool:
    """Whether `opcode.t` with these source operands ($aN registers, immediates) may get
    two different NaNs and so a NaN whose payload the manual leaves open."""
    regs = {s.lstrip("-!") for s in sources if s.lstrip("-!").startswith("$a")}
    return opcode in TWO_NAN_ARITHMETIC and t in LAST_NAN_PAYLOAD_TYPES and len(regs) >= 2


# Conversions between float types: the manual gives the NaN of `cvt` only with `.relu` (the
# canonical NaN); ptxas and ptx2sass pick different instructions (F2F keeps the sign and
# the payload's top, F2FP.PACK_AB and HADD2.F32 give the canonical NaN: campaign 9,
# seed 20000241, `cvt.rz.bf16.f32` of a negative NaN 0xffff vs 0x7fff).
CANONICAL_NAN_TYPES = ("f16", "bf16", "f32", "f64")


def cvt_nan_unspecified(opcode: str, dst: str, src: str | None) -> bool:
    """Whether `cvt.dst.src` converts one float type to another (a NaN's bits open)."""
    return opcode == "cvt" and dst in CANONICAL_NAN_TYPES + ("f16x2", "bf16x2") and src in CANONICAL_NAN_TYPES \
        and dst != src


def canonical_nan(b: "Builder", d: str, t: str) -> str:
    """Lines (each after a newline) that replace a NaN in `d` (type `t`) by the canonical
    NaN and leave any other value as it is; integer tests for the 16-bit types (setp.bf16
    needs sm_90)."""
    p = b.tmp("pred")
    if t in CANONICAL_NAN:
        bits = t[1:]
        return f"\ntestp.notanumber.{t} {p}, {d};\nselp.b{bits} {d}, {CANONICAL_NAN[t]}, {d}, {p};"
    lim = HALF_EXPONENT[t.rstrip("x2")]
    if t in ("f16", "bf16"):
        x = b.tmp("b16")
        return (f"\nand.b16 {x}, {d}, 0x7fff;\nsetp.gt.u16 {p}, {x}, {lim:#x};\n"
                f"selp.b16 {d}, 0x7fff, {d}, {p};")
    lo, hi, x = b.tmp("b32"), b.tmp("b32"), b.tmp("b32")
    return (f"\nand.b32 {lo}, {d}, 0xffff;\nand.b32 {hi}, {d}, 0xffff0000;\n"
            f"and.b32 {x}, {lo}, 0x7fff;\nsetp.gt.u32 {p}, {x}, {lim:#x};\nselp.b32 {lo}, 0x7fff, {lo}, {p};\n"
            f"and.b32 {x}, {hi}, 0x7fff0000;\nsetp.gt.u32 {p}, {x}, {lim << 16:#x};\n"
            f"selp.b32 {hi}, 0x7fff0000, {hi}, {p};\nor.b32 {d}, {lo}, {hi};")


# ------------------------------------------------------------------------------ immediates

def _int_imm(g: "Generator", bits: int, signed: bool):
    def make():
        rng = g.rng
        choice = rng.random()
        if choice < 0.3:
            v = rng.choice([0, 1, 2, 3, 7, 8, 31, 32, 255, 1000])
        elif choice < 0.5:
            v = rng.choice([-1, -2, -8, -128]) if signed else (1 << bits) - rng.choice([1, 2, 8])
        elif choice < 0.65:
            v = (1 << (bits - 1)) if not signed else rng.choice([-(1 << (bits - 1)), (1 << (bits - 1)) - 1])
        else:
            v = rng.getrandbits(bits)
            if signed and v >= 1 << (bits - 1):
                v -= 1 << bits
        if signed:
            return str(v)
        return hex(v & ((1 << bits) - 1))
    return make


def _f32_imm(g: "Generator"):
    def make():
        v = g.rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e-3, 65504.0, 1e30, 3.0e-39, float("inf")])
        return f"0f{f32_bits(v):08X}"
    return make


def _f64_imm(g: "Generator"):
    def make():
        v = g.rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 1e-3, 1e300, 5e-310, float("-inf")])
        return f"0d{f64_bits(v):016X}"
    return make


# ------------------------------------------------------------------------------ instructions
# Each takes (generator, ctx) and returns an Op or None (when the context rules it out).

def op_int_arith(g, ctx, bits=None):
    rng = g.rng
    bits = bits or 32
    k = INT_KIND[bits]
    sign = rng.choice("us")
    t = f"{sign}{bits}"
    b = Builder(g, ctx)
    imm = _int_imm(g, bits, sign == "s")
    form = rng.choice(["add", "sub", "mul.lo", "mul.hi", "mad.lo", "mad.hi", "min", "max", "sad",
                       "neg", "abs", "mul.wide", "mad.wide", "addsat", "subsat", "madhisat"])
    if form in ("addsat", "subsat"):
        if bits != 32:
            form = "add"
        else:
            d = b.dst(k)
            op = form[:3]
            return b.build(f"{op}.sat.s32 {d}, {b.src(k, 's32')}, {b.src(k, 's32', _int_imm(g, 32, True))};",
                           f"{op}.sat.s32")
    if form == "madhisat":
        if bits != 32:
            form = "mad.hi"
        else:
            d = b.dst(k)
            return b.build(f"mad.hi.sat.s32 {d}, {b.src(k)}, {b.src(k, None, imm)}, {b.src(k, None, imm)};",
                           "mad.hi.sat.s32")
    if form in ("neg", "abs"):
        t = f"s{bits}"
        d = b.dst(k)
        return b.build(f"{form}.{t} {d}, {b.src(k)};", f"{form}.{t}")
    if form in ("mul.wide", "mad.wide"):
        if bits == 64:
            form = form.replace(".wide", ".lo")
        else:
            wk = INT_KIND[bits * 2]
            d = b.dst(wk)
            a, c = b.src(k), b.src(k, None, imm)
            if form == "mul.wide":
                return b.build(f"mul.wide.{t} {d}, {a}, {c};", f"mul.wide.{t}")
            e = b.src(wk, None, _int_imm(g, bits * 2, sign == "s"))
            return b.build(f"mad.wide.{t} {d}, {a}, {c}, {e};", f"mad.wide.{t}")
    d = b.dst(k)
    if form in ("mad.lo", "mad.hi", "sad"):
        return b.build(f"{form}.{t} {d}, {b.src(k)}, {b.src(k, None, imm)}, {b.src(k, None, imm)};",
                       f"{form}.{t}")
    return b.build(f"{form}.{t} {d}, {b.src(k)}, {b.src(k, None, imm)};", f"{form}.{t}")


def op_int16(g, ctx):
    return op_int_arith(g, ctx, 16)


def op_int64(g, ctx):
    return op_int_arith(g, ctx, 64)


def op_int24(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    t = rng.choice(("u32", "s32"))
    hl = rng.choice((".lo", ".hi"))
    d = b.dst("b32")
    imm = _int_imm(g, 32, t == "s32")
    if rng.random() < 0.5:
        return b.build(f"mul24{hl}.{t} {d}, {b.src('b32')}, {b.src('b32', None, imm)};", f"mul24{hl}.{t}")
    sat = ".sat" if hl == ".hi" and t == "s32" and rng.random() < 0.5 else ""
    return b.build(f"mad24{hl}{sat}.{t} {d}, {b.src('b32')}, {b.src('b32', None, imm)}, {b.src('b32', None, imm)};",
                   f"mad24{hl}{sat}.{t}")


def op_logic(g, ctx, bits=None):
    rng = g.rng
    bits = bits or rng.choice((16, 32, 32, 64))
    k = INT_KIND[bits]
    b = Builder(g, ctx)
    imm = _int_imm(g, bits, False)
    form = rng.choice(["and", "or", "xor", "not", "cnot", "shl", "shr", "shr.s", "shr.u"])
    d = b.dst(k)
    if form in ("not", "cnot"):
        return b.build(f"{form}.b{bits} {d}, {b.src(k)};", f"{form}.b{bits}")
    if form.startswith("sh"):
        t = {"shl": f"b{bits}", "shr": f"b{bits}", "shr.s": f"s{bits}", "shr.u": f"u{bits}"}[form]
        name = form[:3]
        amount = b.src("b32", None, lambda: str(rng.choice([0, 1, 5, bits - 1, bits, bits + 3, 200])))
        if bits == 64 and amount.startswith("$"):
            # ptxas 13.5 converts a float-written amount of a 64-bit shift to an integer
            # (F2I) instead of using its bits (tests/test_fuzz.py): pass it through an integer op
            t0 = b.tmp("b32")
            return b.build(f"and.b32 {t0}, {amount}, 255;\n{name}.{t} {d}, {b.src(k)}, {t0};", f"{name}.{t}")
        return b.build(f"{name}.{t} {d}, {b.src(k)}, {amount};", f"{name}.{t}")
    return b.build(f"{form}.b{bits} {d}, {b.src(k)}, {b.src(k, None, imm)};", f"{form}.b{bits}")


def op_bits(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    form = rng.choice(["popc", "clz", "bfind", "brev", "bfe", "bfi", "prmt", "lop3", "lop3p", "shf",
                       "bmsk", "szext", "fns", "dp4a", "dp2a"])
    bits = rng.choice((32, 64))
    k = INT_KIND[bits]
    small = lambda: str(rng.choice([0, 1, 4, 8, 13, 31, 32, 40, 255]))  # noqa: E731
    if form in ("popc", "clz"):
        d = b.dst("b32")
        return b.build(f"{form}.b{bits} {d}, {b.src(k)};", f"{form}.b{bits}")
    if form == "bfind":
        t = rng.choice("us") + str(bits)
        sh = ".shiftamt" if rng.random() < 0.4 else ""
        d = b.dst("b32")
        return b.build(f"bfind{sh}.{t} {d}, {b.src(k)};", f"bfind{sh}.{t}")
    if form == "brev":
        d = b.dst(k)
        return b.build(f"brev.b{bits} {d}, {b.src(k)};", f"brev.b{bits}")
    if form == "bfe":
        t = rng.choice("us") + str(bits)
        d = b.dst(k)
        return b.build(f"bfe.{t} {d}, {b.src(k)}, {b.src('b32', None, small)}, {b.src('b32', None, small)};",
                       f"bfe.{t}")
    if form == "bfi":
        d = b.dst(k)
        return b.build(f"bfi.b{bits} {d}, {b.src(k)}, {b.src(k)}, {b.src('b32', None, small)}, "
                       f"{b.src('b32', None, small)};", f"bfi.b{bits}")
    if form == "prmt":
        mode = rng.choice(["", "", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
        d = b.dst("b32")
        sel = b.src("b32", None, lambda: hex(rng.getrandbits(16)))
        return b.build(f"prmt.b32{mode} {d}, {b.src('b32')}, {b.src('b32')}, {sel};", f"prmt.b32{mode}")
    if form == "lop3":
        d = b.dst("b32")
        return b.build(f"lop3.b32 {d}, {b.src('b32')}, {b.src('b32')}, {b.src('b32')}, {rng.getrandbits(8)};",
                       "lop3.b32")
    if form == "lop3p":
        bop = rng.choice((".or", ".and"))
        d, p = b.dst("b32"), b.dst("pred")
        q = b.src("pred")
        return b.build(f"lop3{bop}.b32 {d}|{p}, {b.src('b32')}, {b.src('b32')}, {b.src('b32')}, "
                       f"{rng.getrandbits(8)}, {q};", f"lop3{bop}.b32")
    if form == "shf":
        lr, mode = rng.choice((".l", ".r")), rng.choice((".clamp", ".wrap"))
        d = b.dst("b32")
        return b.build(f"shf{lr}{mode}.b32 {d}, {b.src('b32')}, {b.src('b32')}, {b.src('b32', None, small)};",
                       f"shf{lr}{mode}.b32")
    if form == "bmsk":
        mode = rng.choice((".clamp", ".wrap"))
        d = b.dst("b32")
        return b.build(f"bmsk{mode}.b32 {d}, {b.src('b32', None, small)}, {b.src('b32', None, small)};",
                       f"bmsk{mode}.b32")
    if form == "szext":
        mode, t = rng.choice((".clamp", ".wrap")), rng.choice(("u32", "s32"))
        d = b.dst("b32")
        a, n = b.src('b32'), b.src('b32', None, small)
        pre = ""
        if n.startswith("$"):
            # ptxas 13.5.37 writes `szext` of a parameter as SGXT with a constant whose word
            # reads c[0x1c..0x1e][..], the same word for .s32 and .u32
            # (tests/test_fuzz_generator_szext.py): the width goes through an integer op
            w = b.tmp("b32")
            pre, n = f"and.b32 {w}, {n}, 63;\n", w
        return b.build(f"{pre}@@szext{mode}.{t} {d}, {a}, {n};", f"szext{mode}.{t}")
    if form == "fns":
        d = b.dst("b32")
        off = b.src("b32", None, lambda: str(rng.choice([0, 1, 3, -1, -2, 5])))
        base = str(rng.randrange(32))      # the manual: base > 31 is undefined
        if off.startswith("$"):
            # ptxas 13.5 gives 0 for offset -2^31 (tests/test_fuzz.py): any offset below -33
            # finds nothing, as -33 does
            t0 = b.tmp("b32")
            return b.build(f"max.s32 {t0}, {off}, -33;\nfns.b32 {d}, {b.src('b32')}, {base}, {t0};", "fns.b32")
        return b.build(f"fns.b32 {d}, {b.src('b32')}, {base}, {off};", "fns.b32")
    if form == "dp4a":
        ta, tb = rng.choice(("u32", "s32")), rng.choice(("u32", "s32"))
        d = b.dst("b32")
        return b.build(f"dp4a.{ta}.{tb} {d}, {b.src('b32')}, {b.src('b32', None, _int_imm(g, 32, False))}, "
                       f"{b.src('b32')};", f"dp4a.{ta}.{tb}")
    ta, tb, hl = rng.choice(("u32", "s32")), rng.choice(("u32", "s32")), rng.choice((".lo", ".hi"))
    d = b.dst("b32")
    return b.build(f"dp2a{hl}.{ta}.{tb} {d}, {b.src('b32')}, {b.src('b32')}, {b.src('b32')};",
                   f"dp2a{hl}.{ta}.{tb}")


def op_carry(g, ctx):
    rng = g.rng
    bits = rng.choice((32, 32, 64))
    k = INT_KIND[bits]
    t = rng.choice("us") + str(bits)
    b = Builder(g, ctx)
    imm = _int_imm(g, bits, t[0] == "s")
    form = rng.choice(("add", "sub", "mad"))
    d0, d1 = b.dst(k), b.dst(k)
    if form == "mad":
        half = rng.choice(("hi", "lo"))
        cc = ".cc" if rng.random() < 0.4 else ""
        text = (f"mad.lo.cc.{t} {d0}, {b.src(k)}, {b.src(k)}, {b.src(k, None, imm)};\n"
                f"madc.{half}{cc}.{t} {d1}, {b.src(k)}, {b.src(k)}, {b.src(k, None, imm)};")
        if cc:
            d2 = b.dst(k)
            text += f"\naddc.{t} {d2}, {b.src(k)}, {b.src(k, None, imm)};"
        return b.build(text, f"madc.{half}{cc}.{t}", guard_ok=False)
    mid = ""
    if rng.random() < 0.4:
        d2 = b.dst(k)
        mid = f"\n{form}c.cc.{t} {d2}, {b.src(k)}, {b.src(k, None, imm)};"
    text = (f"{form}.cc.{t} {d0}, {b.src(k)}, {b.src(k, None, imm)};{mid}\n"
            f"{form}c.{t} {d1}, {b.src(k)}, {b.src(k, None, imm)};")
    return b.build(text, f"{form}c.{t}", guard_ok=False)


def op_intdiv(g, ctx):
    rng = g.rng
    bits = rng.choice((16, 32, 32, 64))
    k = INT_KIND[bits]
    sign = rng.choice("us")
    t = f"{sign}{bits}"
    form = rng.choice(("div", "rem"))
    b = Builder(g, ctx)
    d = b.dst(k)
    a = b.src(k)
    if rng.random() < 0.25:
        v = rng.choice([1, 2, 3, 7, 10, 16, 255, 1 << (bits - 2)])
        if sign == "s" and rng.random() < 0.5:
            v = -v if v != 1 else -3
        return b.build(f"{form}.{t} {d}, {a}, {v};", f"{form}.{t}")
    x = b.src(k)
    if sign == "u":
        fix = b.tmp(k)
        return b.build(f"max.u{bits} {fix}, {x}, 1;\n{form}.{t} {d}, {a}, {fix};", f"{form}.{t}")
    p, fix = b.tmp("pred"), b.tmp(k)
    text = (f"setp.eq.s{bits} {p}, {x}, 0;\nsetp.eq.or.s{bits} {p}, {x}, -1, {p};\n"
            f"selp.b{bits} {fix}, 7, {x}, {p};\n{form}.{t} {d}, {a}, {fix};")
    return b.build(text, f"{form}.{t}")


def _float_round(g, allow_none: bool) -> str:
    if allow_none and g.rng.random() < 0.35:
        return ""
    return g.rng.choice(ROUND)


def op_f32(g, ctx):
    return _op_float(g, ctx, 32)


def op_f64(g, ctx):
    return _op_float(g, ctx, 64)


def _op_float(g, ctx, bits):
    rng = g.rng
    k = INT_KIND[bits]
    t = f"f{bits}"
    b = Builder(g, ctx)
    imm = _f32_imm(g) if bits == 32 else _f64_imm(g)
    ftz = (".ftz" if bits == 32 and rng.random() < 0.3 else "")
    sat = (".sat" if bits == 32 and rng.random() < 0.15 else "")
    form = rng.choice(("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "min", "max", "abs", "neg",
                       "frnd", "add", "mul", "fma"))
    d = b.dst(k, t)
    if form in ("add", "sub", "mul", "fma", "mad", "div"):
        if form in ("add", "sub", "mul"):
            rnd = _float_round(g, allow_none=(form != "mul" or not g.prog_fmad))
        else:
            rnd = rng.choice(ROUND)
        srcs = [b.src(k, t)] + [b.src(k, t, imm) for _ in range(2 if form in ("fma", "mad") else 1)]
        spelling = f"{form}{rnd}{ftz}{sat if form != 'div' else ''}.{t}"
        text = f"@@{spelling} {d}, {', '.join(srcs)};"
        if two_nan_unspecified(form, t, srcs):
            text += canonical_nan(b, d, t)
        return b.build(text, spelling)
    if form in ("rcp", "sqrt"):
        rnd = rng.choice(ROUND)
        return b.build(f"{form}{rnd}{ftz}.{t} {d}, {b.src(k, t)};", f"{form}{rnd}{ftz}.{t}")
    if form in ("min", "max"):
        mods = ""
        if bits == 32:
            options = ("", "", ".NaN", ".xorsign.abs")
            mods = g.redraw(rng.choice(options), options, lambda m: f"{form}{ftz}{m}.{t}")
            if mods is None:        # (none on the target)
                return None
            mods = ftz + mods
        a = b.src(k, t)
        text = f"@@{form}{mods}.{t} {d}, {a}, {b.other_src(a, k, t, imm)};"
        if unspecified_nan(form, mods.split("."), t):
            # seeds 845221, 841270: ptxas's DSETP.MIN/MAX sequence returns its second
            # operand's payload, and ptxas orders the two as it likes
            text += canonical_nan(b, d, t)
        return b.build(text, f"{form}{mods}.{t}")
    if form in ("abs", "neg"):
        # ptxas keeps the payload where it folds them into FSEL, canonicalises with FADD
        return b.build(f"@@{form}{ftz}.{t} {d}, {b.src(k, t)};" + canonical_nan(b, d, t), f"{form}{ftz}.{t}")
    rnd = rng.choice(IROUND)
    return b.build(f"cvt{rnd}{ftz}.{t}.{t} {d}, {b.src(k, t)};", f"cvt{rnd}{ftz}.{t}.{t}")


def op_fspecial(g, ctx):
    rng = g.rng
    bits = rng.choice((32, 64))
    k, t = INT_KIND[bits], f"f{bits}"
    b = Builder(g, ctx)
    form = rng.choice(("testp", "copysign", "slct", "selp"))
    if form == "testp":
        cls = rng.choice((".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"))
        p = b.dst("pred")
        return b.build(f"testp{cls}.{t} {p}, {b.src(k, t)};", f"testp{cls}.{t}",
                       guard_ok=False)      # see forms.guard_miscompiled
    if form == "copysign":
        d = b.dst(k, t)
        return b.build(f"copysign.{t} {d}, {b.src(k, t)}, {b.src(k, t)};", f"copysign.{t}")
    if form == "slct":
        ct = rng.choice(("s32", "f32"))
        ftz = ".ftz" if ct == "f32" and rng.random() < 0.3 else ""
        dt = rng.choice((t, f"b{bits}", f"s{bits}", f"u{bits}"))
        d = b.dst(k, t)
        return b.build(f"slct{ftz}.{dt}.{ct} {d}, {b.src(k, t)}, {b.src(k, t)}, {b.src('b32', ct)};",
                       f"slct{ftz}.{dt}.{ct}")
    d = b.dst(k, t)
    return b.build(f"selp.{t} {d}, {b.src(k, t)}, {b.src(k, t, _f32_imm(g) if bits == 32 else _f64_imm(g))}, "
                   f"{b.src('pred')};", f"selp.{t}")


def op_approx(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    form = rng.choice(("sin", "cos", "lg2", "ex2", "rcp", "sqrt", "rsqrt", "div", "divfull", "tanh",
                       "rcp64", "rsqrt64", "ex2h", "tanhh"))
    ftz = ".ftz" if rng.random() < 0.4 else ""
    if form == "rcp64":
        d = b.approx("b64", "f64")
        return b.build(f"rcp.approx.ftz.f64 {d}, {b.src('b64', 'f64')};", "rcp.approx.ftz.f64",
                       tolerance=TOL["rcp64"])
    if form == "rsqrt64":
        d = b.approx("b64", "f64")
        return b.build(f"rsqrt.approx{ftz}.f64 {d}, {b.src('b64', 'f64')};", f"rsqrt.approx{ftz}.f64",
                       tolerance=TOL["rsqrt64"])
    if form in ("ex2h", "tanhh"):
        t = rng.choice(("f16", "f16x2"))
        k = "b16" if t == "f16" else "b32"
        name = form[:-1]
        d = b.approx(k, t)
        return b.build(f"{name}.approx.{t} {d}, {b.src(k, t)};", f"{name}.approx.{t}", tolerance=TOL["f16"])
    d = b.approx("b32", "f32")
    if form == "div":
        return b.build(f"div.approx{ftz}.f32 {d}, {b.src('b32', 'f32')}, {b.src('b32', 'f32', _f32_imm(g))};",
                       f"div.approx{ftz}.f32", tolerance=TOL["div"])
    if form == "divfull":
        return b.build(f"div.full{ftz}.f32 {d}, {b.src('b32', 'f32')}, {b.src('b32', 'f32', _f32_imm(g))};",
                       f"div.full{ftz}.f32", tolerance=TOL["div"])
    if form == "tanh":
        return b.build(f"tanh.approx.f32 {d}, {b.src('b32', 'f32')};", "tanh.approx.f32", tolerance=TOL["tanh"])
    return b.build(f"{form}.approx{ftz}.f32 {d}, {b.src('b32', 'f32')};", f"{form}.approx{ftz}.f32",
                   tolerance=TOL[form])


def op_f16(g, ctx):
    rng = g.rng
    t = rng.choice(("f16", "f16x2"))
    k = "b16" if t == "f16" else "b32"
    b = Builder(g, ctx)
    form = rng.choice(("add", "sub", "mul", "fma", "fma", "min", "max", "neg", "abs", "setp", "set", "cvt"))
    ftz = ".ftz" if rng.random() < 0.3 else ""
    sat = ".sat" if rng.random() < 0.2 else ""
    if form in ("add", "sub", "mul"):
        rnd = ".rn" if (form == "mul" and g.prog_fmad) or rng.random() < 0.6 else ""
        d = b.dst(k, t)
        return b.build(f"{form}{rnd}{ftz}{sat}.{t} {d}, {b.src(k, t)}, {b.src(k, t)};", f"{form}{rnd}{ftz}{sat}.{t}")
    if form == "fma":
        relu = ".relu" if rng.random() < 0.25 else ""
        mods = f"{ftz}{sat}" if not relu else ""
        d = b.dst(k, t)
        return b.build(f"fma.rn{mods}{relu}.{t} {d}, {b.src(k, t)}, {b.src(k, t)}, {b.src(k, t)};",
                       f"fma.rn{mods}{relu}.{t}")
    if form in ("min", "max"):
        options = ("", ".NaN", ".xorsign.abs")
        mods = g.redraw(rng.choice(options), options, lambda m: f"{form}{ftz}{m}.{t}")
        if mods is None:        # (sm_75: no half-precision min/max)
            return None
        mods = ftz + mods
        d = b.dst(k, t)
        a = b.src(k, t)
        text = f"@@{form}{mods}.{t} {d}, {a}, {b.other_src(a, k, t)};"
        if unspecified_nan(form, mods.split("."), t):
            text += canonical_nan(b, d, t)
        return b.build(text, f"{form}{mods}.{t}")
    if form in ("neg", "abs"):
        d = b.dst(k, t)
        return b.build(f"@@{form}{ftz}.{t} {d}, {b.src(k, t)};" + canonical_nan(b, d, t), f"{form}{ftz}.{t}")
    cmp = rng.choice(CMP_F)
    if form == "setp":
        if t == "f16x2":
            p, q = b.dst("pred"), b.dst("pred")
            return b.build(f"setp.{cmp}{ftz}.f16x2 {p}|{q}, {b.src(k, t)}, {b.src(k, t)};", f"setp.{cmp}{ftz}.f16x2")
        p = b.dst("pred")
        return b.build(f"setp.{cmp}{ftz}.f16 {p}, {b.src(k, t)}, {b.src(k, t)};", f"setp.{cmp}{ftz}.f16")
    if form == "set":
        dt = rng.choice(("f16x2", "u32", "s32") if t == "f16x2" else ("f16", "u16", "s16", "u32", "s32"))
        dk = "b16" if dt in ("f16", "u16", "s16") else "b32"
        d = b.dst(dk)
        return b.build(f"set.{cmp}{ftz}.{dt}.{t} {d}, {b.src(k, t)}, {b.src(k, t)};", f"set.{cmp}{ftz}.{dt}.{t}",
                       guard_ok=False)     # see forms.guard_miscompiled
    return op_cvt_half(g, ctx)


def op_bf16(g, ctx):
    rng = g.rng
    t = rng.choice(("bf16", "bf16x2"))
    k = "b16" if t == "bf16" else "b32"
    b = Builder(g, ctx)
    form = rng.choice(("fma", "min", "max", "neg", "abs", "cvt"))
    if form == "fma":
        relu = ".relu" if rng.random() < 0.3 else ""
        d = b.dst(k, t)
        return b.build(f"fma.rn{relu}.{t} {d}, {b.src(k, t)}, {b.src(k, t)}, {b.src(k, t)};", f"fma.rn{relu}.{t}")
    if form in ("min", "max"):
        options = ("", ".NaN", ".xorsign.abs")
        mods = g.redraw(rng.choice(options), options, lambda m: f"{form}{m}.{t}")
        if mods is None:
            return None
        d = b.dst(k, t)
        a = b.src(k, t)
        text = f"@@{form}{mods}.{t} {d}, {a}, {b.other_src(a, k, t)};"
        if unspecified_nan(form, mods.split("."), t):
            text += canonical_nan(b, d, t)
        return b.build(text, f"{form}{mods}.{t}")
    if form in ("neg", "abs"):
        d = b.dst(k, t)
        return b.build(f"@@{form}.{t} {d}, {b.src(k, t)};" + canonical_nan(b, d, t), f"{form}.{t}")
    return op_cvt_half(g, ctx, bf=True)


def op_cvt_half(g, ctx, bf=False):
    rng = g.rng
    b = Builder(g, ctx)
    h = "bf16" if bf or rng.random() < 0.3 else "f16"
    form = rng.choice(("to", "from", "pack", "fromint", "toint"))
    if form == "to":
        src = rng.choice(("f32", "f64")) if h == "f16" else "f32"
        rnd = rng.choice(ROUND) if h == "f16" else rng.choice((".rn", ".rz", ".rn"))
        mods = rng.choice(("", "", ".relu", ".satfinite", ".relu.satfinite")) if src == "f32" else ""
        if h == "f16" and mods and rnd != ".rn":
            mods = ""
        if h == "bf16" and mods and rnd != ".rn":
            mods = ""
        d = b.dst("b16", h)
        sk = "b32" if src == "f32" else "b64"
        return b.build(f"@@cvt{rnd}{mods}.{h}.{src} {d}, {b.src(sk, src)};" + canonical_nan(b, d, h),
                       f"cvt{rnd}{mods}.{h}.{src}")
    if form == "from":
        dt = rng.choice(("f32", "f64")) if h == "f16" else "f32"
        dk = "b32" if dt == "f32" else "b64"
        d = b.dst(dk, dt)
        return b.build(f"@@cvt.{dt}.{h} {d}, {b.src('b16', h)};" + canonical_nan(b, d, dt), f"cvt.{dt}.{h}")
    if form == "pack":
        relu = rng.choice(("", ".relu", ".satfinite", ""))
        d = b.dst("b32", h + "x2")
        return b.build(f"@@cvt.rn{relu}.{h}x2.f32 {d}, {b.src('b32', 'f32')}, {b.src('b32', 'f32')};"
                       + canonical_nan(b, d, h + "x2"), f"cvt.rn{relu}.{h}x2.f32")
    it = rng.choice(("s32", "u32", "s16", "u16", "s64", "u64"))
    ik = INT_KIND[int(it[1:])]
    if h == "bf16":
        h = "f16"
    if form == "fromint":
        d = b.dst("b16", h)
        rnd = rng.choice(ROUND)
        return b.build(f"cvt{rnd}.{h}.{it} {d}, {b.src(ik)};", f"cvt{rnd}.{h}.{it}")
    d = b.dst(ik)
    sat = ".sat" if rng.random() < 0.2 else ""
    rnd = rng.choice(IROUND)
    return b.build(f"cvt{rnd}{sat}.{it}.{h} {d}, {b.src('b16', h)};", f"cvt{rnd}{sat}.{it}.{h}")


def op_fp8(g, ctx):
    rng = g.rng
    if not g.has("cvt.rn.satfinite.e4m3x2.f32"):     # (FP8 conversions: sm_89 on)
        return None
    b = Builder(g, ctx)
    e = rng.choice(("e4m3", "e5m2"))
    form = rng.choice(("from_f32", "from_f16x2", "to_f16x2"))
    if form == "from_f32":
        relu = ".relu" if rng.random() < 0.3 else ""
        d = b.dst("b16")
        return b.build(f"cvt.rn.satfinite{relu}.{e}x2.f32 {d}, {b.src('b32', 'f32')}, {b.src('b32', 'f32')};",
                       f"cvt.rn.satfinite{relu}.{e}x2.f32")
    if form == "from_f16x2":
        relu = ".relu" if rng.random() < 0.3 else ""
        d = b.dst("b16")
        return b.build(f"cvt.rn.satfinite{relu}.{e}x2.f16x2 {d}, {b.src('b32', 'f16x2')};",
                       f"cvt.rn.satfinite{relu}.{e}x2.f16x2")
    relu = ".relu" if rng.random() < 0.3 else ""
    d = b.dst("b32", "f16x2")
    return b.build(f"cvt.rn{relu}.f16x2.{e}x2 {d}, {b.src('b16')};", f"cvt.rn{relu}.f16x2.{e}x2")


INT_TYPES = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
TYPE_KIND = {"u8": "b16", "s8": "b16", "u16": "b16", "s16": "b16", "u32": "b32", "s32": "b32",
             "u64": "b64", "s64": "b64", "f32": "b32", "f64": "b64", "f16": "b16", "bf16": "b16"}


def _int_contains(dt: str, st: str) -> bool:
    """Every value of integer type `st` fits `dt` (then ptxas refuses `.sat`)."""
    dbits, sbits = int(dt[1:]), int(st[1:])
    if dt[0] == st[0]:
        return sbits <= dbits
    return st[0] == "u" and sbits < dbits


def op_cvt(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    form = rng.choice(("ii", "ii", "fi", "if", "ff"))
    if form == "ii":
        dt, st = rng.choice(INT_TYPES), rng.choice(INT_TYPES)
        sat = ".sat" if rng.random() < 0.25 and not _int_contains(dt, st) else ""
        dk = TYPE_KIND[dt] if rng.random() < 0.6 else rng.choice(("b16", "b32", "b64"))
        if int(dt[1:]) > {"b16": 16, "b32": 32, "b64": 64}[dk]:
            dk = TYPE_KIND[dt]
        sk = TYPE_KIND[st]
        d = b.dst(dk)
        return b.build(f"cvt{sat}.{dt}.{st} {d}, {b.src(sk)};", f"cvt{sat}.{dt}.{st}")
    if form == "fi":
        dt, st = rng.choice(INT_TYPES), rng.choice(("f32", "f64"))
        ftz = ".ftz" if st == "f32" and rng.random() < 0.3 else ""
        sat = ".sat" if rng.random() < 0.2 else ""
        d = b.dst(TYPE_KIND[dt])
        rnd = rng.choice(IROUND)
        return b.build(f"cvt{rnd}{ftz}{sat}.{dt}.{st} {d}, {b.src(TYPE_KIND[st], st)};",
                       f"cvt{rnd}{ftz}{sat}.{dt}.{st}")
    if form == "if":
        dt, st = rng.choice(("f32", "f64")), rng.choice(INT_TYPES)
        d = b.dst(TYPE_KIND[dt], dt)
        rnd = rng.choice(ROUND)
        return b.build(f"cvt{rnd}.{dt}.{st} {d}, {b.src(TYPE_KIND[st])};", f"cvt{rnd}.{dt}.{st}")
    if rng.random() < 0.5:
        d = b.dst("b64", "f64")
        ftz = ".ftz" if rng.random() < 0.3 else ""
        return b.build(f"@@cvt{ftz}.f64.f32 {d}, {b.src('b32', 'f32')};" + canonical_nan(b, d, "f64"),
                       f"cvt{ftz}.f64.f32")
    d = b.dst("b32", "f32")
    ftz = ".ftz" if rng.random() < 0.3 else ""
    sat = ".sat" if rng.random() < 0.2 else ""
    rnd = rng.choice(ROUND)
    return b.build(f"@@cvt{rnd}{ftz}{sat}.f32.f64 {d}, {b.src('b64', 'f64')};" + canonical_nan(b, d, "f32"),
                   f"cvt{rnd}{ftz}{sat}.f32.f64")


def op_int8(g, ctx):
    """8-bit values: conversions to and from bytes, byte loads from the input."""
    rng = g.rng
    b = Builder(g, ctx)
    if rng.random() < 0.15:
        dt = rng.choice(("u8", "s8", "u16", "s16", "u4", "s4"))
        d = b.dst("b32")
        if dt in ("u16", "s16"):
            return b.build(f"cvt.pack.sat.{dt}.s32 {d}, {b.src('b32')}, {b.src('b32')};", f"cvt.pack.sat.{dt}.s32")
        return b.build(f"cvt.pack.sat.{dt}.s32.b32 {d}, {b.src('b32')}, {b.src('b32')}, {b.src('b32')};",
                       f"cvt.pack.sat.{dt}.s32.b32")
    t = rng.choice(("u8", "s8"))
    if rng.random() < 0.6:
        st = rng.choice(("u16", "s16", "u32", "s32", "u64", "s64"))
        dk = rng.choice(("b16", "b32"))
        sat = ".sat" if rng.random() < 0.3 and not _int_contains(t, st) else ""
        d = b.dst(dk)
        return b.build(f"cvt{sat}.{t}.{st} {d}, {b.src(TYPE_KIND[st])};", f"cvt{sat}.{t}.{st}")
    dt = rng.choice(("u16", "s16", "u32", "s32", "u64", "s64"))
    d = b.dst(TYPE_KIND[dt])
    return b.build(f"cvt.{dt}.{t} {d}, {b.src(rng.choice(('b16', 'b32')))};", f"cvt.{dt}.{t}")


def op_pred(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    form = rng.choice(("setp", "setp", "setp2", "selp", "plogic", "set", "setpbool"))
    if form in ("setp", "setp2", "setpbool"):
        kind = rng.choice(("i", "i", "f"))
        if kind == "i":
            bits = rng.choice((16, 32, 32, 64))
            sign = rng.choice("usb")
            cmp = rng.choice(CMP_UINT if sign == "u" else CMP_INT if sign == "s" else ("eq", "ne"))
            t = f"{sign}{bits}"
            imm = _int_imm(g, bits, sign == "s")
            k = INT_KIND[bits]
            ftz = ""
        else:
            bits = rng.choice((32, 64))
            cmp = rng.choice(CMP_F)
            t = f"f{bits}"
            imm = _f32_imm(g) if bits == 32 else _f64_imm(g)
            k = INT_KIND[bits]
            ftz = ".ftz" if bits == 32 and rng.random() < 0.3 else ""
        p = b.dst("pred")
        a, c = b.src(k, t), b.src(k, t, imm)
        if form == "setp":
            return b.build(f"setp.{cmp}{ftz}.{t} {p}, {a}, {c};", f"setp.{cmp}{ftz}.{t}")
        bop = rng.choice((".and", ".or", ".xor"))
        q = b.src("pred")
        neg = "!" if rng.random() < 0.3 else ""
        if form == "setp2":
            p2 = b.dst("pred")
            return b.build(f"setp.{cmp}{bop}{ftz}.{t} {p}|{p2}, {a}, {c}, {neg}{q};", f"setp.{cmp}{bop}{ftz}.{t}")
        return b.build(f"setp.{cmp}{bop}{ftz}.{t} {p}, {a}, {c}, {neg}{q};", f"setp.{cmp}{bop}{ftz}.{t}")
    if form == "selp":
        bits = rng.choice((16, 32, 64))
        t = rng.choice(("b", "u", "s")) + str(bits)
        k = INT_KIND[bits]
        d = b.dst(k)
        imm = _int_imm(g, bits, t[0] == "s")
        return b.build(f"selp.{t} {d}, {b.src(k, None, imm)}, {b.src(k, None, imm)}, {b.src('pred')};", f"selp.{t}")
    if form == "plogic":
        op = rng.choice(("and", "or", "xor", "not"))
        p = b.dst("pred")
        if op == "not":
            return b.build(f"not.pred {p}, {b.src('pred')};", "not.pred")
        return b.build(f"{op}.pred {p}, {b.src('pred')}, {b.src('pred')};", f"{op}.pred")
    dt = rng.choice(("u32", "s32", "f32"))
    st = rng.choice(("u32", "s32", "u64", "f32", "f64", "u16"))
    cmp = rng.choice(CMP_F if st[0] == "f" else CMP_UINT if st[0] == "u" else CMP_INT)
    d = b.dst("b32")
    k = TYPE_KIND[st]
    return b.build(f"set.{cmp}.{dt}.{st} {d}, {b.src(k, st)}, {b.src(k, st)};", f"set.{cmp}.{dt}.{st}",
                   guard_ok=False)         # see forms.guard_miscompiled


def op_mov(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    form = rng.choice(("mov", "pack", "unpack", "movimm"))
    if form == "mov":
        k = rng.choice(("b16", "b32", "b64", "pred"))
        d = b.dst(k)
        t = "pred" if k == "pred" else k
        return b.build(f"mov.{t} {d}, {b.src(k)};", f"mov.{t}")
    if form == "movimm":
        bits = rng.choice((16, 32, 64))
        d = b.dst(INT_KIND[bits])
        return b.build(f"mov.b{bits} {d}, {_int_imm(g, bits, False)()};", f"mov.b{bits}")
    if form == "pack":
        if rng.random() < 0.5:
            d = b.dst("b32")
            return b.build(f"mov.b32 {d}, {{{b.src('b16')}, {b.src('b16')}}};", "mov.b32.pack")
        d = b.dst("b64")
        return b.build(f"mov.b64 {d}, {{{b.src('b32')}, {b.src('b32')}}};", "mov.b64.pack")
    if rng.random() < 0.5:
        # the source through an xor with a constant of nonzero high half: ptxas 13.5.37 takes
        # the upper half of a register an `ld.u8/s8/u16/s16` wrote as the loaded value itself
        # (tests/test_fuzz_ptxas_departures.py -k unpack_high_half; seed 101007: a call
        # argument `mov.b32 {h0, h1}` of an `ld.global.s8` register); any other value unpacks
        d0, d1 = b.dst("b16"), b.dst("b16")
        t = b.tmp("b32")
        k = rng.randrange(1, 1 << 16) << 16 | rng.getrandbits(16)
        return b.build(f"xor.b32 {t}, {b.src('b32')}, {k:#x};\nmov.b32 {{{d0}, {d1}}}, {t};", "mov.b32.unpack",
                       guard_ok=False)
    d0, d1 = b.dst("b32"), b.dst("b32")
    return b.build(f"mov.b64 {{{d0}, {d1}}}, {b.src('b64')};", "mov.b64.unpack", guard_ok=False)


def op_special(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    if rng.random() < 0.2:
        sreg = rng.choice(NONDETERMINISTIC)
        k = "b64" if sreg in ("%clock64", "%globaltimer") else "b32"
        d = b.sink(k)
        return b.build(f"mov.u{64 if k == 'b64' else 32} {d}, {sreg};", f"mov.special.{sreg[1:]}", uniform_ok=False)
    if rng.random() < 0.1:
        d = b.sink("b64") if "%gridid" in RUN_DEPENDENT else b.dst("b64")
        return b.build(f"mov.u64 {d}, %gridid;", "mov.special.gridid", uniform_ok=False)
    sreg = rng.choice(SPECIAL_REGS_32)
    d = b.sink("b32") if sreg in RUN_DEPENDENT else b.dst("b32")
    return b.build(f"mov.u32 {d}, {sreg};", f"mov.special.{sreg[1:].split('.')[0]}",
                   uniform_ok=sreg in UNIFORM_SPECIALS)


# ---- memory

LD_CACHE = ("", "", "", ".ca", ".cg", ".cs", ".lu", ".cv", ".L1::evict_last", ".L1::evict_first",
            ".L1::no_allocate", ".L2::64B", ".L2::128B", ".L2::256B", ".L1::evict_normal.L2::256B")
LD_SEM = ("", "", "", ".volatile", ".relaxed.gpu", ".relaxed.cta", ".acquire.gpu", ".acquire.sys", ".weak")
ST_CACHE = ("", "", "", ".wb", ".cg", ".cs", ".wt", ".L1::no_allocate", ".L1::evict_last")
ST_SEM = ("", "", "", ".volatile", ".relaxed.gpu", ".release.gpu", ".release.cta", ".weak")


def op_global(g, ctx):
    """Loads from anywhere in the input buffer at a data-dependent index; module .const and
    .global arrays; generic addressing through cvta; isspacep."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    form = rng.choice(("ld", "ld", "ldnc", "const", "glob", "generic", "generic", "isspacep", "prefetch", "ldu",
                       "fence", "cvta", "policy"))
    if form == "ldu":
        t = rng.choice(("u32", "b32", "f32", "u64", "b16", "u8", "s8", "s16", "u16", "s32", "s64", "b64", "f64",
                        "b8"))
        kind_of = {"b32": "b32", "b16": "b16", "b64": "b64", "b8": "b16"}
        d = b.dst(TYPE_KIND.get(t, kind_of.get(t)))
        if rng.random() < 0.3:
            d2 = b.dst(TYPE_KIND.get(t, kind_of.get(t)))
            return b.build(f"ldu.global.v2.{t} {{{d}, {d2}}}, [$inb+{16 * rng.randrange(64)}];", f"ldu.global.v2.{t}",
                           spaces=("global",), guard_ok=False)
        return b.build(f"ldu.global.{t} {d}, [$inb+{8 * rng.randrange(64)}];", f"ldu.global.{t}", spaces=("global",))
    if form == "fence":
        f = rng.choice(("membar.cta", "membar.gl", "membar.sys", "fence.sc.cta", "fence.acq_rel.gpu",
                        "fence.sc.sys", "fence.acq_rel.cta", "nanosleep.u32 20"))
        return b.build(f"{f};", f.split(" ")[0])
    if form == "cvta":
        a, a2 = b.tmp("b64"), b.tmp("b64")
        d = b.dst("b64")
        text = f"cvta.global.u64 {a}, $inb;\ncvta.to.global.u64 {a2}, {a};\nsub.s64 {d}, {a2}, $inb;"
        return b.build(text, "cvta.to.global.u64", spaces=("generic", "global"))
    if form in ("ld", "ldnc"):
        t = rng.choice(("u8", "s8", "u16", "s16", "u32", "s32", "b32", "f32", "u64", "b64", "f64"))
        size = int(t[1:]) // 8
        k = TYPE_KIND.get(t, {"b32": "b32", "b64": "b64"}.get(t))
        idx, off = b.tmp("b32"), b.tmp("b64")
        d = b.dst(k)
        if form == "ldnc":
            sem, cache = "", ".nc" + rng.choice(("", "", ".L1::evict_last", ".L2::128B"))
        else:
            sem = rng.choice(LD_SEM)
            cache = rng.choice(LD_CACHE) if not sem or sem == ".weak" else ""
        text = (f"and.b32 {idx}, {b.src('b32')}, {g.in_words() - 1};\nmul.wide.u32 {off}, {idx}, {max(size, 4)};\n"
                f"add.s64 {off}, {off}, $inb;\nld{sem}.global{cache}.{t} {d}, [{off}];")
        return b.build(text, f"ld{sem}.global{cache}.{t}", uniform_ok=True, spaces=("global",))
    if form in ("const", "glob"):
        idx, addr, off = b.tmp("b32"), b.tmp("b64"), b.tmp("b64")
        d = b.dst("b32")
        sym, space = ("$cst", "const") if form == "const" else ("$glb", "global")
        text = (f"and.b32 {idx}, {b.src('b32')}, 15;\nmul.wide.u32 {off}, {idx}, 4;\n"
                f"mov.u64 {addr}, {sym};\nadd.s64 {addr}, {addr}, {off};\nld.{space}.u32 {d}, [{addr}];")
        return b.build(text, f"ld.{space}.u32", spaces=(space,))
    if form == "generic":
        which = rng.choice(("local", "global", "shared"))
        if which == "local" and ctx.func is None and g.on("local"):
            arr = f"$loc{rng.randrange(g.local_arrays())}"
            a = b.tmp("b64")
            d = b.dst("b32")
            off = 4 * rng.randrange(16)
            if rng.random() < 0.3:      # there and back: cvta.to.local gives the window address
                a2 = b.tmp("b64")
                text = (f"mov.u64 {a}, {arr};\ncvta.local.u64 {a2}, {a};\ncvta.to.local.u64 {a}, {a2};\n"
                        f"ld.local.u32 {d}, [{a}+{off}];")
                return b.build(text, "cvta.to.local.u64", spaces=("local", "generic"))
            text = f"mov.u64 {a}, {arr};\ncvta.local.u64 {a}, {a};\nld.u32 {d}, [{a}+{off}];"
            return b.build(text, "ld.u32.generic_local", spaces=("local", "generic"))
        if which == "shared" and g.on("shared"):
            a = b.tmp("b64")
            d = b.dst("b32")
            sp = rng.choice(("shared", "shared", "shared::cta"))
            text = f"cvt.u64.u32 {a}, $shp;\ncvta.{sp}.u64 {a}, {a};\nld.u32 {d}, [{a}];"
            return b.build(text, "ld.u32.generic_shared", spaces=("shared", "generic"), uniform_ok=False)
        if which == "global" and rng.random() < 0.3:
            # a generic load from the .const window (cvta.const), or through cvta.to
            a, a2 = b.tmp("b64"), b.tmp("b64")
            d = b.dst("b32")
            if rng.random() < 0.5:
                text = f"mov.u64 {a}, $cst;\ncvta.const.u64 {a2}, {a};\nld.u32 {d}, [{a2}+{4 * rng.randrange(16)}];"
                return b.build(text, "cvta.const.u64", spaces=("const", "generic"))
            sp = rng.choice(("shared", "shared", "shared::cta"))
            text = (f"cvt.u64.u32 {a}, $shp;\ncvta.{sp}.u64 {a2}, {a};\ncvta.to.{sp}.u64 {a}, {a2};\n"
                    f"ld.shared.u32 {d}, [{a}];")
            return b.build(text, "cvta.to.shared.u64", spaces=("shared", "generic"), uniform_ok=False)
        a = b.tmp("b64")
        t = rng.choice(("u32", "u64", "b8", "u8", "s8", "u16", "s16", "b16", "s32", "b32", "f32", "s64", "b64",
                        "f64"))
        d = b.dst(TYPE_KIND.get(t, {"b8": "b16", "b16": "b16", "b32": "b32", "b64": "b64"}.get(t)))
        if rng.random() < 0.4:
            src = b.src(TYPE_KIND.get(t, {"b8": "b16", "b16": "b16", "b32": "b32", "b64": "b64"}.get(t)))
            text = f"cvta.global.u64 {a}, $priv;\nst.{t} [{a}+48], {src};\nld.{t} {d}, [{a}+48];"
            return b.build(text, f"st.{t}", spaces=("global", "generic"), uniform_ok=False, guard_ok=False)
        text = f"cvta.global.u64 {a}, $inp;\nld.{t} {d}, [{a}+{rng.choice((0, 8))}];"
        return b.build(text, f"ld.{t}", spaces=("global", "generic"), uniform_ok=False)
    if form == "policy":
        pol, off, idx = b.tmp("b64"), b.tmp("b64"), b.tmp("b32")
        d = b.dst("b32")
        if rng.random() < 0.5:
            frac = rng.choice(("", ", 0.5", ", 1.0"))
            make = (f"createpolicy.fractional.L2::{rng.choice(('evict_last', 'evict_first', 'evict_normal'))}"
                    f".b64 {pol}{frac};")
        else:
            make = (f"createpolicy.range.L2::evict_last.L2::evict_unchanged.b64 {pol}, [$inb], 4096, 8192;")
        text = (f"{make}\nand.b32 {idx}, {b.src('b32')}, 1023;\nmul.wide.u32 {off}, {idx}, 4;\n"
                f"add.s64 {off}, {off}, $inb;\nld.global.L2::cache_hint.b32 {d}, [{off}], {pol};")
        return b.build(text, "createpolicy", spaces=("global",))
    if form == "prefetch":
        what = rng.choice(("prefetch.global.L1", "prefetch.global.L2", "prefetch.L1", "prefetchu.L1",
                           "prefetch.global.L2::evict_last", "prefetch.global.L2::evict_normal", "prefetch.local.L1"))
        if what.endswith("local.L1") and g.on("local"):
            return b.build(f"{what} [$loc0];", what, spaces=("local",))
        if what.endswith("local.L1"):
            what = "prefetch.global.L1"
        return b.build(f"{what} [$inp];", what, spaces=("global",))
    space = rng.choice(("global", "shared", "local", "const", "param", "shared::cta", "shared::cluster",
                        "param::entry"))
    a, p = b.tmp("b64"), b.dst("pred")
    if rng.random() < 0.5 or not g.on("shared"):
        text = f"cvta.global.u64 {a}, $inp;\nisspacep.{space} {p}, {a};"
    else:
        text = f"cvt.u64.u32 {a}, $shp;\ncvta.shared.u64 {a}, {a};\nisspacep.{space} {p}, {a};"
    from ptx2sass.fuzz.forms import valid
    if not valid(f"isspacep.{space} %p0, %d0;", ".reg .pred %p0;\n.reg .b64 %d0;"):
        space = "global"
        text = text.replace(text.rsplit("isspacep.", 1)[1].split(" ")[0], "global")
    return b.build(text, f"isspacep.{space}", uniform_ok=False, spaces=("generic",))


def op_vector(g, ctx):
    """Vector loads from the input buffer; vector stores and loads through the thread's
    private global words ($priv + 32..63)."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    t = rng.choice(("b32", "f32", "u32", "b64", "b16", "u16"))
    k = TYPE_KIND.get(t, {"b32": "b32", "b64": "b64", "b16": "b16"}.get(t))
    size = int(t[1:]) // 8
    n = rng.choice((2, 4)) if size < 8 else 2
    if rng.random() < 0.5:
        ds = [b.dst(k) for _ in range(n)]
        idx, off = b.tmp("b32"), b.tmp("b64")
        cache = rng.choice(("", "", ".nc", ".cg", ".cs"))
        stride = 16
        text = (f"and.b32 {idx}, {b.src('b32')}, {g.in_words() // 4 - 1};\nmul.wide.u32 {off}, {idx}, {stride};\n"
                f"add.s64 {off}, {off}, $inb;\nld.global{cache}.v{n}.{t} {{{', '.join(ds)}}}, [{off}];")
        return b.build(text, f"ld.global{cache}.v{n}.{t}", spaces=("global",), guard_ok=False)
    srcs = [b.src(k) for _ in range(n)]
    ds = [b.dst(k) for _ in range(n)]
    off = 32 if n * size <= 16 else 32
    sem = rng.choice(ST_SEM)
    st_cache = rng.choice(ST_CACHE) if not sem or sem == ".weak" else ""
    text = (f"st{sem}.global{st_cache}.v{n}.{t} [$priv+{off}], {{{', '.join(srcs)}}};\n"
            f"ld.global.v{n}.{t} {{{', '.join(ds)}}}, [$priv+{off}];")
    return b.build(text, f"st{sem}.global{st_cache}.v{n}.{t}", spaces=("global",), guard_ok=False,
                   uniform_ok=False)


def op_local(g, ctx):
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    arr = f"$loc{rng.randrange(g.local_arrays())}"
    idx, a = b.tmp("b32"), b.tmp("b64")
    addr = (f"and.b32 {idx}, {b.src('b32')}, {LOCAL_ARRAY_WORDS - 1};\nmul.wide.u32 {a}, {idx}, 4;\n"
            f"mov.u64 $t2, {arr};\nadd.s64 {a}, {a}, $t2;\n")
    b.tmp("b64")
    t = rng.choice(("u32", "b32", "f32", "u16", "s8"))
    k = TYPE_KIND.get(t, "b32")
    if rng.random() < 0.5:
        return b.build(addr + f"st.local.{t} [{a}], {b.src(k)};", f"st.local.{t}", spaces=("local",))
    d = b.dst(k)
    return b.build(addr + f"ld.local.{t} {d}, [{a}];", f"ld.local.{t}", spaces=("local",), uniform_ok=False)


def op_shared(g, ctx):
    """Thread-private shared words (any context), an exchange through shared memory between
    two barriers (uniform context), contended shared atomics."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    form = rng.choice(("priv", "priv", "exchange", "exchange", "atom_priv", "atom_contended", "counter"))
    if form in ("exchange", "counter") and not (ctx.uniform and g.on("barrier")):
        form = "priv"
    if form == "priv" and rng.random() < 0.15:
        kind = rng.choice(("ca", "ca", "cg"))
        size = 16 if kind == "cg" else rng.choice((4, 8, 16))
        # 16 bytes into the thread's own 32-aligned g_sq bytes; 4 or 8 into its $shp words
        dst_addr = "$sq" if size == 16 else "$shp"
        d = b.dst("b32")
        space = rng.choice(("shared", "shared::cta"))
        prefetch = rng.choice(("", "", ".L2::64B", ".L2::128B", ".L2::256B"))
        pre, hint, policy = "", "", ""
        if rng.random() < 0.25:
            policy = b.tmp("b64")
            pre = f"createpolicy.fractional.L2::evict_last.b64 {policy}, 1.0;\n"
            hint, policy = ".L2::cache_hint", f", {policy}"
        wait = rng.choice(("cp.async.commit_group;\ncp.async.wait_group 0;", "cp.async.wait_all;"))
        text = (f"{pre}cp.async.{kind}.{space}.global{hint}{prefetch} [{dst_addr}], [$inp], {size}{policy};\n"
                f"{wait}\nld.shared.u32 {d}, [{dst_addr}+{size - 4}];")
        return b.build(text, f"cp.async.{kind}.shared.global{hint}{prefetch}", spaces=("shared", "global"),
                       guard_ok=False, uniform_ok=False)
    if form == "priv":
        t = rng.choice(("u32", "b32", "f32", "u16", "u8", "s16"))
        k = TYPE_KIND.get(t, "b32")
        if rng.random() < 0.5:
            return b.build(f"st.shared.{t} [$shp+4], {b.src(k)};", f"st.shared.{t}", spaces=("shared",))
        d = b.dst(k)
        return b.build(f"ld.shared.{t} {d}, [$shp+4];", f"ld.shared.{t}", spaces=("shared",), uniform_ok=False)
    if form == "exchange":
        v = b.src("b32")
        i = b.tmp("b32")
        d = b.dst("b32")
        if rng.random() < 0.5:
            idx = f"add.u32 {i}, $tid, {rng.randrange(1, 64)};\nrem.u32 {i}, {i}, $nthr;\n"
        else:
            idx = f"rem.u32 {i}, {b.src('b32')}, $nthr;\n"
        vec = rng.random() < 0.3
        if vec:
            d2 = b.dst("b32")
            text = (f"st.shared.u32 [$shp], {v};\nbar.sync 0;\n{idx}mad.lo.u32 {i}, {i}, 8, $sh;\n"
                    f"ld.shared.v2.u32 {{{d}, {d2}}}, [{i}];\nbar.sync 0;")
            key = "ld.shared.v2.u32"
        else:
            text = (f"st.shared.u32 [$shp], {v};\nbar.sync 0;\n{idx}mad.lo.u32 {i}, {i}, 8, $sh;\n"
                    f"ld.shared.u32 {d}, [{i}];\nbar.sync 0;")
            key = "bar.sync"
        return b.build(text, key, barrier=True, guard_ok=False, uniform_ok=False, spaces=("shared",))
    if form == "atom_priv":
        op = rng.choice(("add.u32", "min.u32", "max.s32", "and.b32", "or.b32", "xor.b32", "exch.b32", "inc.u32",
                         "dec.u32", "cas.b32", "add.f32"))
        d = b.dst("b32")
        if op == "cas.b32":
            return b.build(f"atom.shared.cas.b32 {d}, [$shp+4], {b.src('b32')}, {b.src('b32')};",
                           "atom.shared.cas.b32", spaces=("shared",), uniform_ok=False)
        return b.build(f"atom.shared.{op} {d}, [$shp+4], {b.src('b32')};", f"atom.shared.{op}",
                       spaces=("shared",), uniform_ok=False)
    op = rng.choice(SHARED_COUNTER_OPS)
    counter = f"[$shs+{g.shared_counters_offset() + 4 * SHARED_COUNTER_OPS.index(op)}]"
    arg = b.src("b32") if not op.startswith(("inc", "dec")) else "1000"
    if form == "atom_contended":
        s = b.sink("b32")
        if rng.random() < 0.5:
            return b.build(f"red.shared.{op} {counter}, {arg};", f"red.shared.{op}", spaces=("shared",))
        return b.build(f"atom.shared.{op} {s}, {counter}, {arg};", f"atom.shared.{op}.contended", spaces=("shared",))
    d = b.dst("b32")
    text = f"bar.sync 0;\nld.shared.u32 {d}, {counter};\nbar.sync 0;"
    return b.build(text, "bar.sync.counter", barrier=True, guard_ok=False, uniform_ok=False, spaces=("shared",))


def op_mbarrier(g, ctx):
    """An mbarrier object of the thread's own (8 bytes of its g_sq bytes): init, arrivals
    that complete exactly one phase (count 1; or count 2 with a .noComplete arrival first),
    a test_wait of that phase (true: compared), the state's pending count (into a sink:
    the state is opaque), inval. Every lane its own object, so divergence does not matter."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    sp = rng.choice((".shared", ".shared::cta", ""))
    at = b.tmp("b32")
    lines = [f"add.u32 {at}, $sq, 24;"]
    addr = at
    if not sp:          # generic addressing of the shared object
        addr = b.tmp("b64")
        lines += [f"cvt.u64.u32 {addr}, {at};", f"cvta.shared.u64 {addr}, {addr};"]
    kind = rng.choice(("arrive", "noComplete", "arrive_drop", "drop_noComplete"))
    first, second = b.tmp("b64"), b.tmp("b64")
    count = 2 if "noComplete" in kind else 1
    lines.append(f"mbarrier.init{sp}.b64 [{addr}], {count};")
    if kind == "arrive":
        lines.append(f"mbarrier.arrive{sp}.b64 {second}, [{addr}];")
    elif kind == "arrive_drop":
        lines.append(f"mbarrier.arrive_drop{sp}.b64 {second}, [{addr}];")
    else:
        op = "arrive" if kind == "noComplete" else "arrive_drop"
        lines.append(f"mbarrier.{op}.noComplete{sp}.b64 {first}, [{addr}], 1;")
        lines.append(f"mbarrier.arrive{sp}.b64 {second}, [{addr}];")
    p = b.dst("pred")
    if rng.random() < 0.5:
        lines.append(f"mbarrier.test_wait{sp}.b64 {p}, [{addr}], {second};")
        key = f"mbarrier.test_wait{sp}.b64"
    else:
        lines.append(f"mbarrier.test_wait.parity{sp}.b64 {p}, [{addr}], 0;")
        key = f"mbarrier.test_wait.parity{sp}.b64"
    if rng.random() < 0.5:
        lines.append(f"mbarrier.pending_count.b64 {b.sink('b32')}, {second};")
    lines.append(f"mbarrier.inval{sp}.b64 [{addr}];")
    return b.build("\n".join(lines), key, guard_ok=False, uniform_ok=False, spaces=("shared",))


def op_barrier(g, ctx):
    rng = g.rng
    if not ctx.uniform or ctx.func is not None:
        return None
    b = Builder(g, ctx)
    form = rng.choice(("bar", "barrier", "popc", "and", "or", "bararrive"))
    if form == "bar":
        spelling = rng.choice(("bar.sync", "bar.sync", "bar.cta.sync"))
        return b.build(f"{spelling} 0;", spelling, barrier=True, guard_ok=False)
    if form == "barrier":
        spelling = rng.choice(("barrier.sync.aligned", "barrier.sync"))
        return b.build(f"{spelling} 0;", spelling, barrier=True, guard_ok=False)
    if form == "bararrive":
        return b.build("bar.sync 1;", "bar.sync.1", barrier=True, guard_ok=False)
    if form == "popc":
        d = b.dst("b32")
        p = b.src("pred")
        name = rng.choice(("bar", "barrier", "barrier.red.popc.aligned"))
        name = name if "." in name else f"{name}.red.popc"
        return b.build(f"{name}.u32 {d}, 0, {p};", f"{name}.u32", barrier=True, guard_ok=False)
    d = b.dst("pred")
    p = b.src("pred")
    name = rng.choice(("bar", "barrier"))
    if name == "barrier" and rng.random() < 0.5:
        return b.build(f"barrier.red.{form}.aligned.pred {d}, 0, {'!' if rng.random() < 0.3 else ''}{p};",
                       f"barrier.red.{form}.aligned.pred", barrier=True, guard_ok=False)
    return b.build(f"{name}.red.{form}.pred {d}, 0, {'!' if rng.random() < 0.3 else ''}{p};",
                   f"{name}.red.{form}.pred", barrier=True, guard_ok=False)


def op_atomic(g, ctx):
    """Atomics on the thread's own words ($priv + 0..31): every operation, results read."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    bits = rng.choice((32, 32, 64))
    k = INT_KIND[bits]
    ops32 = ("add.u32", "add.s32", "min.u32", "min.s32", "max.u32", "max.s32", "and.b32", "or.b32", "xor.b32",
             "exch.b32", "inc.u32", "dec.u32", "cas.b32", "add.f32")
    ops64 = ("add.u64", "min.u64", "max.s64", "min.s64", "and.b64", "or.b64", "xor.b64", "exch.b64",
             "cas.b64", "add.f64", "max.u64")
    at = f"[$priv+{8 * rng.randrange(4)}]"
    if rng.random() < 0.15:
        op = rng.choice(("add.noftz.f16", "add.noftz.f16x2", "cas.b16"))
        k = "b32" if op.endswith("x2") else "b16"
        if op.startswith("exch.b16"):
            op = "cas.b16"
        d = b.dst(k)
        if op == "cas.b16":
            return b.build(f"atom.global.cas.b16 {d}, {at}, {b.src(k)}, {b.src(k)};", "atom.global.cas.b16",
                           spaces=("global",), uniform_ok=False)
        return b.build(f"atom.global.{op} {d}, {at}, {b.src(k)};", f"atom.global.{op}", spaces=("global",),
                       uniform_ok=False)
    op = rng.choice(ops32 if bits == 32 else ops64)
    sem = rng.choice(("", "", "", ".relaxed.gpu", ".acq_rel.gpu", ".relaxed.cta", ".acquire.sys", ".release.gpu"))
    if rng.random() < 0.25 and not op.startswith(("cas", "exch")):
        sem = rng.choice(("", ".relaxed.gpu", ".release.gpu", ".relaxed.cta"))
        return b.build(f"red{sem}.global.{op} {at}, {b.src(k)};", f"red.global.{op}", spaces=("global",))
    d = b.dst(k)
    if op.startswith("cas"):
        return b.build(f"atom{sem}.global.{op} {d}, {at}, {b.src(k)}, {b.src(k)};", f"atom.global.{op}",
                       spaces=("global",), uniform_ok=False)
    return b.build(f"atom{sem}.global.{op} {d}, {at}, {b.src(k)};", f"atom.global.{op}", spaces=("global",),
                   uniform_ok=False)


def op_contended(g, ctx):
    """Atomics that every thread aims at one of 16 global counters. Only order-independent
    operations; results are discarded (they depend on the order), the counters compared."""
    rng = g.rng
    if ctx.func is not None:
        return None
    b = Builder(g, ctx)
    op = rng.choice(GLOBAL_COUNTER_OPS)
    at = f"[$ctr+{8 * GLOBAL_COUNTER_OPS.index(op)}]"
    bits = int(op[-2:])
    k = INT_KIND[bits]
    pre = ""
    if op.startswith(("inc", "dec")):
        arg = "1000"
    elif op == "add.f32":
        t = b.tmp("b32")
        pre = f"and.b32 {t}, {b.src('b32')}, 255;\ncvt.rn.f32.u32 {t}, {t};\n"
        arg = t
    elif op == "add.f64":
        t32, t = b.tmp("b32"), b.tmp("b64")
        pre = f"and.b32 {t32}, {b.src('b32')}, 255;\ncvt.rn.f64.u32 {t}, {t32};\n"
        arg = t
    else:
        arg = b.src(k)
    sem = rng.choice(("", "", ".relaxed.gpu", ".relaxed.cta"))
    if rng.random() < 0.4:
        return b.build(f"{pre}red{sem}.global.{op} {at}, {arg};", f"red.global.{op}.contended", spaces=("global",))
    s = b.sink(k)
    return b.build(f"{pre}atom{sem}.global.{op} {s}, {at}, {arg};", f"atom.global.{op}.contended",
                   spaces=("global",))


def op_warp(g, ctx):
    rng = g.rng
    if ctx.func is not None or not ctx.masked:
        return None
    b = Builder(g, ctx)
    forms = ["shfl_idx", "vote", "ballot", "redux", "match", "barwarp"]
    if ctx.full:
        forms += ["shfl", "shfl", "ldmatrix"]
    form = rng.choice(forms)
    kw = dict(collective=True, guard_ok=False, uniform_ok=False)
    if form == "shfl":
        mode = rng.choice((".up", ".down", ".bfly", ".idx"))
        d = b.dst("b32")
        c = rng.choice(("0x1f", "0x0", "0x1c1f", "0x181f", "0x101f"))
        lane = b.src("b32", None, lambda: str(rng.randrange(0, 40)))
        if rng.random() < 0.3:
            p = b.dst("pred")
            return b.build(f"shfl.sync{mode}.b32 {d}|{p}, {b.src('b32')}, {lane}, {c}, {FULL_MASK};",
                           f"shfl.sync{mode}.b32.p", full_warp=True, **kw)
        return b.build(f"shfl.sync{mode}.b32 {d}, {b.src('b32')}, {lane}, {c}, {FULL_MASK};",
                       f"shfl.sync{mode}.b32", full_warp=True, **kw)
    if form == "ldmatrix":
        n = rng.choice((1, 2, 4))
        trans = ".trans" if rng.random() < 0.4 else ""
        ds = [b.dst("b32") for _ in range(n)]
        a, base = b.tmp("b32"), b.tmp("b32")
        space = rng.choice((".shared", ".shared", ".shared::cta", ""))
        text = (f"xor.b32 {a}, $lane, {rng.randrange(32)};\nand.b32 {a}, {a}, 31;\n"
                f"mov.u32 {base}, $mat;\nadd.u32 {base}, {base}, {rng.choice((0, 512))};\n"
                f"mad.lo.u32 {a}, {a}, 16, {base};\n")
        addr = a
        if not space:       # generic addressing: the shared window's generic address
            addr = b.tmp("b64")
            text += f"cvt.u64.u32 {addr}, {a};\ncvta.shared.u64 {addr}, {addr};\n"
        text += f"ldmatrix.sync.aligned.m8n8.x{n}{trans}{space}.b16 {{{', '.join(ds)}}}, [{addr}];"
        return b.build(text, f"ldmatrix.sync.aligned.m8n8.x{n}{trans}{space}.b16", full_warp=True,
                       spaces=("shared",) + (("generic",) if not space else ()), **kw)
    if form == "shfl_idx":
        d = b.dst("b32")
        lane = b.tmp("b32")
        pick = rng.choice((f"bfind.u32 {lane}, $m;", f"mov.u32 {lane}, $lane;",
                           f"brev.b32 {lane}, $m;\nbfind.shiftamt.u32 {lane}, {lane};"))
        return b.build(f"{pick}\nshfl.sync.idx.b32 {d}, {b.src('b32')}, {lane}, 0x1f, $m;", "shfl.sync.idx.b32", **kw)
    if form == "vote":
        m = rng.choice((".all", ".any", ".uni"))
        p = b.dst("pred")
        return b.build(f"vote.sync{m}.pred {p}, {'!' if rng.random() < 0.3 else ''}{b.src('pred')}, $m;",
                       f"vote.sync{m}.pred", **kw)
    if form == "ballot":
        d = b.dst("b32")
        return b.build(f"vote.sync.ballot.b32 {d}, {b.src('pred')}, $m;", "vote.sync.ballot.b32", **kw)
    if form == "redux":
        op = rng.choice(("add.u32", "add.s32", "min.u32", "min.s32", "max.u32", "max.s32", "and.b32", "or.b32",
                         "xor.b32"))
        d = b.dst("b32")
        return b.build(f"redux.sync.{op} {d}, {b.src('b32')}, $m;", f"redux.sync.{op}", **kw)
    if form == "match":
        t = rng.choice(("b32", "b64"))
        k = "b32" if t == "b32" else "b64"
        d = b.dst("b32")
        if rng.random() < 0.5:
            return b.build(f"match.any.sync.{t} {d}, {b.src(k)}, $m;", f"match.any.sync.{t}", **kw)
        p = b.dst("pred")
        return b.build(f"match.all.sync.{t} {d}|{p}, {b.src(k)}, $m;", f"match.all.sync.{t}", **kw)
    if form == "activemask":
        d = b.dst("b32")
        return b.build(f"activemask.b32 {d};", "activemask.b32", full_warp=True, **kw)
    return b.build("bar.warp.sync $m;", "bar.warp.sync", **kw)


MMA_FORMS = [
    # (shape, dtype, atype, btype, ctype, regs a, b, c/d, register kind of the fragments)
    ("m16n8k16", "f32", "f16", "f16", "f32", 4, 2, 4, "b32"),
    ("m16n8k16", "f16", "f16", "f16", "f16", 4, 2, 2, "b32"),
    ("m16n8k8", "f32", "f16", "f16", "f32", 2, 1, 4, "b32"),
    ("m16n8k8", "f16", "f16", "f16", "f16", 2, 1, 2, "b32"),
    ("m16n8k16", "f32", "bf16", "bf16", "f32", 4, 2, 4, "b32"),
    ("m16n8k8", "f32", "bf16", "bf16", "f32", 2, 1, 4, "b32"),
    ("m16n8k8", "f32", "tf32", "tf32", "f32", 4, 2, 4, "b32"),
    ("m16n8k4", "f32", "tf32", "tf32", "f32", 2, 1, 4, "b32"),
    ("m8n8k4", "f64", "f64", "f64", "f64", 1, 1, 2, "b64"),
    ("m16n8k16", "s32", "s8", "s8", "s32", 2, 1, 4, "b32"),
    ("m16n8k32", "s32", "u8", "s8", "s32", 4, 2, 4, "b32"),
    ("m8n8k16", "s32", "s8", "u8", "s32", 1, 1, 2, "b32"),
    ("m16n8k32", "s32", "s4", "s4", "s32", 2, 1, 4, "b32"),
    ("m16n8k64", "s32", "u4", "u4", "s32", 4, 2, 4, "b32"),
    ("m8n8k32", "s32", "s4", "u4", "s32", 1, 1, 2, "b32"),
    ("m16n8k128", "s32", "b1", "b1", "s32", 2, 1, 4, "b32"),
    ("m16n8k256", "s32", "b1", "b1", "s32", 4, 2, 4, "b32"),
    ("m8n8k128", "s32", "b1", "b1", "s32", 1, 1, 2, "b32"),
    ("m16n8k32", "f32", "e4m3", "e4m3", "f32", 4, 2, 4, "b32"),
    ("m16n8k32", "f32", "e5m2", "e4m3", "f32", 4, 2, 4, "b32"),
    ("m16n8k32", "f32", "e4m3", "e5m2", "f32", 4, 2, 4, "b32"),
]


def op_mma(g, ctx):
    rng = g.rng
    if ctx.func is not None or not (ctx.full and ctx.masked):
        return None
    form = g.redraw(rng.choice(MMA_FORMS), MMA_FORMS,
                    lambda f: f"mma.sync.aligned.{f[0]}.row.col.{f[1]}.{f[2]}.{f[3]}.{f[4]}"
                    + (".xor.popc" if f[2] == "b1" else ""))
    if form is None:
        return None
    shape, dt, at, bt, ct, na, nb, nc, k = form
    b = Builder(g, ctx)
    fv = {"f32": "f32", "f16": "f16x2", "f64": "f64", "s32": "s32"}
    av = {"f16": "f16x2", "bf16": "bf16x2", "tf32": "f32", "f64": "f64"}.get(at, "u32")
    a = [b.src(k, av) for _ in range(na)]
    bb = [b.src(k, av) for _ in range(nb)]
    c = [b.src(k, fv[ct]) for _ in range(nc)]
    d = [b.dst(k, fv[dt]) for _ in range(nc)]
    extra = ""
    if at == "b1":
        extra = rng.choice((".and.popc", ".xor.popc"))
    sat = ".satfinite" if dt == "s32" and at != "b1" and rng.random() < 0.3 else ""
    name = f"mma.sync.aligned.{shape}.row.col{sat}.{dt}.{at}.{bt}.{ct}{extra}"
    text = (f"{name} {{{', '.join(d)}}}, {{{', '.join(a)}}}, {{{', '.join(bb)}}}, {{{', '.join(c)}}};")
    return b.build(text, name, collective=True, full_warp=True, guard_ok=False, uniform_ok=False)


def op_video(g, ctx):
    rng = g.rng
    b = Builder(g, ctx)
    sel = lambda: rng.choice(("", "", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"))  # noqa: E731
    ty = lambda: rng.choice(("u32", "s32"))  # noqa: E731
    form = rng.choice(("scalar", "scalar", "shift", "vmad", "vset", "simd2", "simd4", "vset2"))
    d = b.dst("b32")
    if form == "scalar":
        op = rng.choice(("vadd", "vsub", "vabsdiff", "vmin", "vmax"))
        sat = ".sat" if rng.random() < 0.4 else ""
        op2 = rng.choice(("", "", ".add", ".min", ".max"))
        types = f"{ty()}.{ty()}.{ty()}"
        if op2 or rng.random() < 0.5:
            c = b.src("b32")
            if not op2 and rng.random() < 0.5:
                dsel = rng.choice((".b0", ".b1", ".b2", ".b3", ".h0", ".h1"))
                return b.build(f"{op}.{types}{sat} {d}{dsel}, {b.src('b32')}{sel()}, {b.src('b32')}{sel()}, {c};",
                               f"{op}.{types}{sat}.dsel")
            return b.build(f"{op}.{types}{sat}{op2} {d}, {b.src('b32')}{sel()}, {b.src('b32')}{sel()}, {c};",
                           f"{op}.{types}{sat}{op2}")
        return b.build(f"{op}.{types}{sat} {d}, {b.src('b32')}{sel()}, {b.src('b32')}{sel()};", f"{op}.{types}{sat}")
    if form == "shift":
        op = rng.choice(("vshl", "vshr"))
        mode = rng.choice((".clamp", ".wrap"))
        sat = ".sat" if rng.random() < 0.3 else ""
        types = f"{ty()}.{ty()}.u32"
        return b.build(f"{op}.{types}{sat}{mode} {d}, {b.src('b32')}{sel()}, {b.src('b32')};", f"{op}.{types}{sat}{mode}")
    if form == "vmad":
        types = f"{ty()}.{ty()}.{ty()}"
        mods = rng.choice(("", ".sat", ".shr7", ".shr15", ".sat.shr7"))
        if rng.random() < 0.2:
            return b.build(f"vmad.{types}.po{mods} {d}, {b.src('b32')}, {b.src('b32')}{sel()}, {b.src('b32')};",
                           f"vmad.{types}.po{mods}")
        na, nb, nc = rng.choice((("", "", ""), ("-", "", ""), ("", "-", ""), ("", "", "-")))
        return b.build(f"vmad.{types}{mods} {d}, {na}{b.src('b32')}{sel()}, {nb}{b.src('b32')}{sel()}, "
                       f"{nc}{b.src('b32')};", f"vmad.{types}{mods}")
    if form == "vset":
        cmp = rng.choice(CMP_INT)
        types = f"{ty()}.{ty()}"
        op2 = rng.choice(("", ".add", ".min", ".max"))
        c = f", {b.src('b32')}" if op2 else ""
        return b.build(f"vset.{types}.{cmp}{op2} {d}, {b.src('b32')}{sel()}, {b.src('b32')}{sel()}{c};",
                       f"vset.{types}.{cmp}{op2}")
    if form == "vset2":
        n = rng.choice((2, 4))
        cmp = rng.choice(CMP_INT)
        add = rng.choice(("", ".add"))
        return b.build(f"vset{n}.{ty()}.{ty()}.{cmp}{add} {d}, {b.src('b32')}, {b.src('b32')}, {b.src('b32')};",
                       f"vset{n}.{cmp}{add}", guard_ok=not add)      # see forms.guard_miscompiled
    n = 2 if form == "simd2" else 4
    op = rng.choice(("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"))
    mods = rng.choice(("", ".sat", ".add"))
    types = f"{ty()}.{ty()}.{ty()}"
    masks = ("", ".h0", ".h1", ".h10") if n == 2 else ("", ".b0", ".b31", ".b3210", ".b210")
    asels = ("", ".h10", ".h01", ".h21", ".h33") if n == 2 else ("", ".b3210", ".b0123", ".b7250", ".b4444")
    return b.build(f"{op}{n}.{types}{mods} {d}{rng.choice(masks)}, {b.src('b32')}{rng.choice(asels)}, "
                   f"{b.src('b32')}{rng.choice(asels)}, {b.src('b32')};", f"{op}{n}.{types}{mods}",
                   guard_ok=mods != ".add")      # see forms.guard_miscompiled


OPS: list[tuple[str, float, object]] = [
    ("int32", 3.0, op_int_arith), ("int32", 1.0, op_logic), ("int32", 0.6, op_mov), ("int32", 0.3, op_int24),
    ("int16", 1.5, op_int16), ("int16", 0.5, lambda g, c: op_logic(g, c, 16)),
    ("int64", 1.5, op_int64), ("int64", 0.5, lambda g, c: op_logic(g, c, 64)),
    ("int8", 1.0, op_int8), ("carry", 1.0, op_carry), ("intdiv", 1.0, op_intdiv), ("bits", 1.5, op_bits),
    ("cvt", 1.5, op_cvt), ("f32", 2.5, op_f32), ("f64", 1.5, op_f64), ("fspecial", 1.0, op_fspecial),
    ("approx", 1.0, op_approx), ("f16", 1.5, op_f16), ("bf16", 1.0, op_bf16), ("fp8", 0.8, op_fp8),
    ("pred", 1.5, op_pred), ("special", 0.5, op_special), ("global", 1.0, op_global),
    ("vector", 0.8, op_vector), ("local", 1.0, op_local), ("shared", 1.2, op_shared),
    ("barrier", 0.5, op_barrier), ("shared", 0.4, op_mbarrier), ("atomic", 1.0, op_atomic), ("contended", 0.8, op_contended),
    ("warp", 1.2, op_warp), ("mma", 0.8, op_mma), ("video", 1.0, op_video),
    ("forms", 11.0, lambda g, c: _op_forms(g, c)),
    ("mma", 4.0, lambda g, c: _op_wmma(g, c)),      # 426 forms, 5 a statement
    ("texture", 3.0, lambda g, c: _op_texture(g, c)),    # 517 inventory forms, 2 a statement
]


def _new_arch_op(name):
    def op(g, ctx):
        from ptx2sass.fuzz.newarch_ops import NEW_OPS
        return NEW_OPS[name](g, ctx)
    return op


# the sm_90+ groups (fuzz/newarch.py): no program for an older arch has them on
OPS += [(name, weight, _new_arch_op(name)) for name, weight in
        (("cluster", 2.5), ("elect", 1.0), ("fences", 0.8), ("bulk", 1.2), ("stmatrix", 1.2),
         ("reduxf", 1.2), ("fp6", 1.5), ("async", 1.5), ("maxnreg", 0.6), ("sparse", 1.5),
         ("corner", 2.0))]


def _op_texture(g, ctx):
    from ptx2sass.fuzz.textures import op_texture
    return op_texture(g, ctx)


def _op_wmma(g, ctx):
    from ptx2sass.fuzz.forms import op_wmma
    return op_wmma(g, ctx)


def _op_forms(g, ctx):
    """An instruction straight from the instruction inventory: the PTX ISA inventory's sm_89
    forms when it is installed (issue 15), else the frontend's form table."""
    from ptx2sass.fuzz.forms import isa_families, op_forms, op_isa
    if any(isa_families().values()):
        return op_isa(g, ctx)
    return op_forms(g, ctx)


def program_sm(arch: str | None) -> int:
    """The SM of the `.target` a program for `arch` is compiled with: the generator's
    (`program.TARGET`, sm_89) for that and newer archs, the arch's own below it
    (`runner.ptx_for` lowers the `.target` there)."""
    from ptx2sass.fuzz.program import TARGET
    top = int(TARGET.split("_")[1])
    if arch is None:
        return top
    from ptx2sass.encoder.arch import target
    return min(target(arch).sm, top)


_SPELLING = re.compile(r"^(?:@@|@!?[%$]\w+\s+)?([a-z][\w.:]*)")


def spellings(text: str) -> list[str]:
    """The instruction spellings of a statement's text, one per line (`@@`, guards, braces
    and labels aside): `ld.global.L2::cache_hint.b32 %r0, [%rd1], %rd2;` ->
    `ld.global.L2::cache_hint.b32`."""
    out = []
    for line in text.split("\n"):
        m = _SPELLING.match(line.strip())
        if m and not line.rstrip().endswith(":"):
            out.append(m.group(1))
    return out


# Spellings the generator writes whose first target the inventory cannot give, with the
# manual's (ptxas 13.5 agrees): it has no line for mma's b1 `.and.popc` (PTX 7.1, sm_80) nor
# for cvt's `.satfinite` packing of two f32 into f16x2/bf16x2 (PTX 8.1; the packing itself is
# sm_80's), and its `cvt.pack.sat` line (sm_90) also covers the two-source `.u16/.s16.s32`
# form of sm_72. A spec line for these would add forms to the inventory sweep's lists (sm_89
# forms) and so change every campaign's programs.
FIRST_TARGET = (
    (re.compile(r"mma\.sync\.aligned\.m\d+n\d+k\d+\.row\.col\.s32\.b1\.b1\.s32\.and\.popc"), 80),
    (re.compile(r"cvt\.rn(?:\.relu)?\.satfinite(?:\.relu)?\.b?f16x2\.f32"), 80),
    (re.compile(r"cvt\.pack\.sat\.[us]16\.s32"), 72),
)


@functools.cache
def spelling_on_target(spelling: str, sm: int) -> bool:
    """Whether the inventory has `spelling` on sm_<sm> (`FIRST_TARGET` for a few it cannot
    tell); any other spelling it does not know counts as present."""
    for regex, first in FIRST_TARGET:
        if regex.fullmatch(spelling):
            return sm >= first
    try:
        from ptx2sass.frontend import inventory
    except ImportError:
        return True
    return not inventory.spelling_known(spelling) or spelling_valid(spelling, sm)


@functools.cache
def spelling_valid(spelling: str, sm: int) -> bool:
    """Whether the PTX ISA inventory (issue 15) has `spelling` on sm_<sm> at the programs'
    PTX version (True where the inventory is not installed)."""
    try:
        from ptx2sass.frontend import inventory
    except ImportError:
        return True
    from ptx2sass.fuzz.program import PTX_VERSION
    return inventory.spelling_valid(spelling, sm, tuple(int(x) for x in PTX_VERSION.split(".")))


class Generator:
    def __init__(self, seed: int, features: set[str] | None = None, size: int | None = None,
                 exclude: set[str] = frozenset(), arch: str | None = None):
        self.seed = seed
        # what the target has decides what is drawn (`has`, `forms.on_target`): a draw the
        # target lacks is drawn again among what it has, so at sm_89 (the programs' `.target`)
        # and newer every draw is as before and those archs' seeds keep their programs
        self.sm = program_sm(arch)
        self.rng = random.Random(seed)
        rng = self.rng
        from ptx2sass.fuzz import newarch
        # sm_90 and newer: the campaign arch's own `.target`, and its own groups (a stream
        # of their own: the main stream's draws stay those of sm_89)
        self.arch = arch
        self.header = newarch.program_header(arch)
        if features is None:
            features = {f for f, p in FEATURES.items() if rng.random() < p} | set(ALWAYS)
            if self.header is not None:
                features |= newarch.draw_groups(seed, arch)
        self.features = set(features) - set(exclude)
        if self.on("async"):
            # st.async / red.async reach a CTA of the cluster: the program runs in clusters
            self.features.add("cluster")
        self.maxnreg = newarch.draw_maxnreg(seed) if self.on("maxnreg") else None
        if self.on("cluster"):
            # every thread meets the cluster barrier before its CTA leaves
            self.features.discard("exit")
        self.prog_fmad = "fmadoff" not in self.features
        self.size = size or rng.choice((8, 15, 25, 35, 50))
        self.pressure = rng.choice(("low", "low", "medium", "medium", "high", "extreme")) \
            if rng.random() < 0.9 else "medium"
        if self.pressure == "extreme" and self.size > 25:
            self.pressure = "high"
        self.regs: list[Reg] = []
        self.funcs: list[Func] = []
        self.func: Func | None = None
        self._n_local = rng.randint(1, 2)
        self.in_words_count = 0
        self.isa_draws: dict[str, int] = {}     # inventory forms drawn per family (forms.py)
        self.texture_objects: dict[str, dict] = {}  # bound texture/surface descriptors (textures.py)

    def on(self, feature: str) -> bool:
        return feature in self.features

    def own_target_has(self, text: str) -> bool:
        """Whether the program's own target (sm_90+, `newarch`) has every instruction of a
        statement, as far as the PTX ISA inventory knows them."""
        from ptx2sass.fuzz.newarch import statement_on_target
        return self.header is not None and statement_on_target(text, self.arch)

    def has(self, spelling: str) -> bool:
        """Whether the program's target has this instruction spelling (the inventory's
        minimum target)."""
        return self.sm >= 89 or spelling_valid(spelling, self.sm)

    def text_on_target(self, text: str) -> bool:
        """Whether every instruction of a statement's text is on the program's target, as
        far as the inventory knows its spelling (a statement with one that is not is not
        drawn: mbarrier, bf16, cache hints, createpolicy, redux, cp.async on sm_75)."""
        return self.sm >= 89 or all(spelling_on_target(s, self.sm) for s in spellings(text))

    def redraw(self, drawn, options, spelling) -> object:
        """`drawn` if `spelling(drawn)` is on the target, else a choice among the `options`
        that are (None when none is): the draws stay those of sm_89 wherever nothing is
        missing."""
        if self.has(spelling(drawn)):
            return drawn
        kept = [o for o in options if self.has(spelling(o))]
        return self.rng.choice(kept) if kept else None

    # registers -------------------------------------------------------------------------
    def pool(self) -> list[Reg]:
        return self.func.regs if self.func is not None else self.regs

    def new_reg(self, kind: str, view: str | None = None, uniform: bool = False, role: str = "value") -> Reg:
        rng = self.rng
        view = view if view in VIEWS.get(kind, ()) else rng.choice(VIEWS[kind])
        if kind == "pred":
            init = ("param", "u32") if uniform else (("tid", rng.choice((1, 5, 16, 17, 31, 40)))
                                                     if rng.random() < 0.4 else ("in", "u8"))
        elif uniform:
            init = ("param", rng.choice(PARAM_TYPES[kind][view]))
        elif kind == "b32" and rng.random() < 0.08 and self.func is None:
            init = ("special", rng.choice(("%tid.x", "%laneid", "%ctaid.x", "%tid.y")))
        else:
            init = ("in", rng.choice(IN_LOADS[kind][view]))
        r = Reg(kind, view, uniform=uniform, role=role, init=init, index=len(self.pool()))
        self.pool().append(r)
        return r

    def pick_src(self, kind: str, view: str | None, ctx: Ctx, uniform: bool) -> Reg:
        rng = self.rng
        pool = [r for r in self.pool() if r.kind == kind and r.role == "value" and (r.uniform or not uniform)]
        lo, hi = PRESSURE[self.pressure]
        limit = hi if kind in ("b32", "pred") else max(2, hi // 2)
        if not pool or (len(pool) < limit and rng.random() < 0.15):
            want_uniform = uniform or (self.func is None and rng.random() < 0.25)
            if self.func is not None:
                want_uniform = False
            if self.func is None or not pool:
                return self.new_reg(kind, view, uniform=want_uniform)
        if view is not None and rng.random() < 0.7:
            matching = [r for r in pool if r.view == view]
            if matching:
                return rng.choice(matching)
        return rng.choice(pool)

    def pick_dst(self, kind: str, view: str | None, may_uniform: bool, avoid=()) -> Reg:
        rng = self.rng
        pool = [r for r in self.pool() if r.kind == kind and r.role == "value" and (may_uniform or not r.uniform)
                and r not in avoid and not (self.func is not None and r in self.func.params)]
        lo, hi = PRESSURE[self.pressure]
        if not pool or (len(pool) < lo and rng.random() < 0.5):
            return self.new_reg(kind, view, uniform=False)
        if view is not None and rng.random() < 0.6:
            matching = [r for r in pool if r.view == view]
            if matching:
                return rng.choice(matching)
        return rng.choice(pool)

    def in_words(self) -> int:
        return 1024     # data-dependent loads stay within the first 4 KiB of the input buffer

    def local_arrays(self) -> int:
        return self._n_local

    def shared_counters_offset(self) -> int:
        return SHARED_WORDS_PER_THREAD * 4 * self.block_threads

    # statements ------------------------------------------------------------------------
    def op(self, ctx: Ctx) -> Op | None:
        rng = self.rng
        choices = [(w, fn) for f, w, fn in OPS if self.on(f)]
        if not choices:
            return None
        for _ in range(8):
            total = sum(w for w, _ in choices)
            x = rng.random() * total
            for w, fn in choices:
                x -= w
                if x <= 0:
                    break
            made = fn(self, ctx)
            if made is not None:
                return made
        return None

    def block(self, ctx: Ctx, budget: int) -> list:
        rng = self.rng
        out = []
        while budget > 0:
            x = rng.random()
            budget -= 1
            if x < 0.10 and self.on("branch") and ctx.depth < 4 and budget > 2:
                out.append(self.if_stmt(ctx, budget))
                budget -= 3
            elif x < 0.17 and self.on("loop") and ctx.depth < 3 and budget > 2:
                out.append(self.loop_stmt(ctx, budget))
                budget -= 4
            elif x < 0.185 and self.on("switch") and ctx.depth < 3 and budget > 3:
                out.append(self.switch_stmt(ctx, budget))
                budget -= 4
            elif x < 0.20 and ctx.loop is not None and self.on("break"):
                cond_uniform = ctx.loop_has_barrier or not ctx.breaks_divergent_ok
                p = self.pick_src("pred", None, ctx, uniform=cond_uniform)
                if p.uniform or not cond_uniform:
                    out.append(Break(p, rng.random() < 0.5, ctx.loop))
            elif x < 0.23 and self.on("store") and ctx.func is None:
                out.append(Store(rng.choice([r for r in self.pool() if r.role == "value"] or
                                            [self.new_reg("b32")])))
            elif x < 0.26 and self.on("call") and self.funcs and ctx.depth < 4:
                out.append(self.call_stmt(ctx))
            elif x < 0.28 and self.on("exit") and ctx.func is None and ctx.depth == 0:
                out.append(Exit(self.pick_src("pred", None, ctx, False), rng.random() < 0.5))
            elif x < 0.30 and ctx.func is not None and ctx.loop is None:
                out.append(Return(self.pick_src("pred", None, ctx, False), rng.random() < 0.5))
            else:
                s = self.op(ctx)
                if s is not None:
                    out.append(s)
        return out

    def if_stmt(self, ctx: Ctx, budget: int) -> If:
        rng = self.rng
        divergent = self.on("divergent") and rng.random() < 0.6 or ctx.func is not None
        cond = self.pick_src("pred", None, ctx, uniform=not divergent)
        uniform = ctx.uniform and cond.uniform
        inner = ctx.inner(uniform=uniform, depth=ctx.depth + 1,
                          full=ctx.full and uniform)
        n = max(1, min(budget // 2, rng.randint(1, 6)))
        then = self.block(inner, n)
        els = self.block(inner, rng.randint(1, 4)) if rng.random() < 0.5 else []
        return If(cond, rng.random() < 0.5, then, els, uniform)

    def switch_stmt(self, ctx: Ctx, budget: int) -> Switch:
        rng = self.rng
        divergent = self.on("divergent") and rng.random() < 0.6 or ctx.func is not None
        index = self.pick_src("b32", "u32", ctx, uniform=not divergent)
        uniform = ctx.uniform and index.uniform
        # collectives would need a mask per case: only where every thread takes the same one
        inner = ctx.inner(uniform=uniform, depth=ctx.depth + 1, full=ctx.full and uniform,
                          masked=ctx.masked and uniform)
        n = rng.choice((2, 4, 4, 8))
        cases = [self.block(inner, rng.randint(0, 3)) for _ in range(n)]
        return Switch(index, cases, uniform)

    def loop_stmt(self, ctx: Ctx, budget: int) -> Loop:
        rng = self.rng
        const = rng.random() < 0.35
        divergent = not const and self.on("divergent") and rng.random() < 0.5
        trip = None if const else self.pick_src("b32", "u32", ctx, uniform=not divergent)
        uniform = ctx.uniform and (trip is None or trip.uniform)
        base = rng.choice((0, 1, 1, 2, 3)) if not const else rng.choice((1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 20))
        mask = rng.choice((1, 3, 3, 7))
        if ctx.depth >= 2:
            base, mask = min(base, 3), min(mask, 3)
        bottom = rng.random() < 0.3 and base >= 1
        loop = Loop(trip, base, mask, [], uniform, bottom=bottom)
        divergent_breaks = self.on("break") and rng.random() < 0.4
        # a non-uniform loop keeps an exact member mask only without breaks
        inner = ctx.inner(uniform=uniform, depth=ctx.depth + 1, loop=loop,
                          full=ctx.full and uniform,
                          masked=ctx.masked and (uniform or not divergent_breaks),
                          loop_has_barrier=False,
                          breaks_divergent_ok=divergent_breaks and not uniform)
        if uniform:
            inner.breaks_divergent_ok = False
        n = max(1, min(budget // 2, rng.randint(2, 8)))
        loop.body = self.block(inner, n)
        return loop

    def call_stmt(self, ctx: Ctx) -> Call:
        rng = self.rng
        f = rng.choice(self.funcs)
        args = [self.pick_src(p.kind, p.view, ctx, False) for p in f.params]
        rets = [self.pick_dst(r.kind, r.view, False) for r in f.rets]
        return Call(f, args, rets, uniform=ctx.uniform and rng.random() < 0.5)

    def make_func(self, i: int) -> Func:
        rng = self.rng
        f = Func(f"fn{i}", [], [], [], [], style=rng.choice(("param", "param", "reg")),
                 visible=rng.random() < 0.3)
        saved = self.func
        self.func = f
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(("b32", "b32", "b64", "b16"))
            r = self.new_reg(kind)
            f.params.append(r)
        for _ in range(rng.randint(1, 2) if f.style == "reg" else 1):
            kind = rng.choice(("b32", "b64", "b32"))
            f.rets.append(self.new_reg(kind))
        ctx = Ctx(uniform=False, full=False, masked=False, func=f)
        f.body = self.block(ctx, rng.randint(3, 12))
        if f.style == "param":      # its own stream: the rest of the program stays as it was
            pick = random.Random(self.seed * 7919 + i)
            f.param_types = tuple(pick.choice(PARAM_FUNC_TYPES[p.kind]) for p in f.params)
        self.func = saved
        return f

    def launch(self) -> tuple:
        rng = self.rng
        # stmatrix/movmatrix and mma.sp are .sync.aligned: a CTA whose last warp is partial
        # leaves them undefined (the H200 stored nothing there: GPU run 25, seeds 9500363 and
        # 9500094; mma.sp left D's registers as they were, which differ between compilers:
        # run 27, 9500435, 9500547, 9500692)
        needs_warps = self.on("warp") or self.on("mma") or self.on("stmatrix") or self.on("sparse")
        shapes = LAUNCHES_FULL_WARPS + ([] if needs_warps else LAUNCHES_ANY)
        if self.pressure == "extreme":
            shapes = [s for s in shapes if s[0][0] * s[0][1] * s[1][0] * s[1][1] * s[1][2] <= 64] or shapes
        return rng.choice(shapes)

    def program(self) -> Program:
        rng = self.rng
        grid, block = self.launch()
        cluster = None
        if self.on("cluster"):
            from ptx2sass.fuzz.newarch import CLUSTER_SHAPES
            from ptx2sass.fuzz.textures import RW_CELLS
            cluster = rng.choice(CLUSTER_SHAPES)
            clusters = rng.choice((1, 1, 2))
            if cluster[0] * clusters * block[0] * block[1] * block[2] > RW_CELLS:
                clusters = 1        # each thread owns a cell of the read-write surfaces
            grid = (cluster[0] * clusters, 1, 1)
        self.grid, self.cluster = grid, cluster
        self.block_threads = block[0] * block[1] * block[2]
        if self.on("call"):
            for i in range(rng.randint(1, 3)):
                self.funcs.append(self.make_func(i))
        body = self.block(Ctx(), self.size)
        if self.on("forms"):
            from ptx2sass.fuzz.forms import top_up
            for s in top_up(self, Ctx()):
                body.insert(rng.randrange(len(body) + 1), s)
        if self.pressure in ("high", "extreme"):
            # many values live at once: more pool registers, all stored at the end
            lo, hi = PRESSURE[self.pressure]
            while sum(1 for r in self.regs if r.kind == "b32" and r.role == "value") < hi:
                r = self.new_reg("b32")
                body.insert(rng.randrange(len(body) + 1), self._touch(r))
        header = {}
        if self.header is not None:
            from ptx2sass.fuzz.newarch_ops import cluster_gather
            if self.on("cluster"):
                body.append(cluster_gather(self, Ctx()))
            header = dict(target=self.header[0], version=self.header[1], cluster=cluster, maxnreg=self.maxnreg)
        return Program(self.seed, self.regs, body, self.funcs, grid, block, self.prog_fmad,
                       tuple(sorted(self.features)), self.pressure, self._n_local,
                       objects=dict(self.texture_objects), **header)

    def _touch(self, r: Reg) -> Op:
        """A cheap statement that reads a pool register into another (keeps it live)."""
        b = Builder(self, Ctx())
        d = b.dst("b32")
        return b.build(f"xor.b32 {d}, {b.reg(r)}, {self.rng.getrandbits(16)};", "xor.b32", guard_ok=False)


def generate(seed: int, features: set[str] | None = None, size: int | None = None,
             exclude: set[str] = frozenset(), arch: str | None = None) -> Program:
    """`arch`: the GPU the program is for; statements its `.target` lacks are not drawn
    (None: sm_89's, the programs' own `.target`)."""
    return Generator(seed, features, size, exclude, arch).program()
