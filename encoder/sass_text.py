"""SASS text in nvdisasm's syntax: parse one instruction or a whole listing into the shared
model (`encoder.model`), and print the model back as exactly the text nvdisasm prints.

The parser is syntax-driven, not opcode-driven: it knows how nvdisasm spells operands
(registers, immediates, constant-bank references, addresses, labels), not what each opcode
means. The few spelling facts that depend on the opcode or the value are data below
(`REGISTER_RELATIVE_TARGET`, `_SPACED_FLOATS`, `_SELECTORS_INSIDE_ABS`, `_EXPONENT_FROM`).
They were found by compiling the corpora for sm_75…sm_120 and by disassembling corpus words
with bits flipped (tests/test_sass_text.py keeps checking both).

Conventions of the model as this module fills it (the codec's decoder must produce the same):
- Registers: `Reg(file, index)` with `RZ`/`URZ`/`PT`/`UPT` at their zero index; `B0` is file
  "B", the scoreboard `SB0` of `DEPBAR` is file "SB". `!P0`/`~R2` set `inv`, `-R2` `neg`,
  `|R2|` `abs`; `.reuse` sets `reuse`; every other `.X` after the name goes to `suffix`
  (`R2.64` in addresses, `R2.H1`, `R2.ROW`, `R2.X4`), whether printed inside `|…|` or after.
- Integer immediates (nvdisasm prints them in hex) have `value` = the signed number printed
  (`-0x1` → -1) and `text=None`. Floating-point immediates (decimal, `+INF`, `-QNAN`, `-0.0`)
  keep nvdisasm's spelling in `text` (sign included) and have `value=0`; `float_value()`
  reads it, `float_bits_text()` spells an f16/f32/f64 bit pattern the way nvdisasm does.
- Constant bank: `c[0x3][0x10]` → `ConstRef(3, 0x10)`; `c[0x0][R2+0x4]` puts the register
  (general or uniform) in `ureg`; the bindless `cx[UR4][0x10]` puts UR4 in `ubank`.
- Addresses hold exactly the printed terms: `[0x10]` has `base=None` (nvdisasm leaves an RZ
  base out when an offset is printed), `[RZ]` has `base=Reg("R", 255)`.
- `SR_TID.X`, `SRZ`, `SR161` and the whole predicate file `PR` are `SpecialReg`s, as is
  `MACTIVE` (BMOV's active-lane mask) and FSWZADD's per-lane signs (`ZPPPZPPP`).
- Branch targets: `` `(.L_x_3) `` → `Label(".L_x_3")`; `parse_listing` fills `offset`.
  Relocated immediates `32@lo(sym)` are `Reloc`; DEPBAR's `{5,4,0}` is an `IndexList`.
- nvdisasm's notes after an instruction (`(*"BRANCH_TARGETS .L_x_5,…"*)`) are not part of
  it: `parse_instruction` ignores them, `parse_listing` keeps them in `Entry.annotation`.
- A field value nvdisasm has no name for prints as `???3`/`INVALID2`; those parse as
  ordinary modifiers or selectors.
"""
from __future__ import annotations

import math
import re
from dataclasses import field, replace

from ptx2sass.records import dataclass

from .model import (ZERO_INDEX, ZERO_NAME, ConstRef, Control, Imm, Instruction, Label, Mem,
                    IndexList, Operand, Reg, Reloc, SpecialReg)


class SassSyntaxError(ValueError):
    """Text that is not SASS in nvdisasm's syntax; the message names the offending text."""


# Opcodes with a register-relative target: nvdisasm separates the target from the register
# before it by a space, not ", " (`RET.REL.NODEC R20 `(kernel)`, `BRX R2 -0x170`,
# `BRXU UR4 -0x940`, `CALL.REL.NOINC P6, UR0 0x960`).
REGISTER_RELATIVE_TARGET = frozenset({"RET", "BRX", "BRXU", "JMX", "JMXU", "CALL"})


# Floating-point immediates nvdisasm follows with a space (`+INF , PT`, `-0.0 , 0`).
_SPACED_FLOATS = frozenset({"+INF", "-INF", "+QNAN", "-QNAN", "+SNAN", "-SNAN", "-0.0"})
# Register selectors nvdisasm writes inside `|…|` (others go after the closing bar).
_SELECTORS_INSIDE_ABS = frozenset({"H0", "H1"})
# nvdisasm prints floating-point immediates of at least this magnitude as `%.20e`.
_EXPONENT_FROM = 1e9

_GUARD = re.compile(r"@(!?)(U?P[0-6T])\s+")
_MNEMONIC = re.compile(r"[A-Z][A-Z0-9_]*(?:\.(?:[A-Za-z0-9_]+|\?\?\?\d*))*")
_REG = re.compile(r"(URZ|UPT|RZ|PT|UR\d+|UP\d|R\d+|P\d|SB\d+|B\d+)(?![A-Za-z0-9_])")
_SUFFIX = re.compile(r"\.([A-Za-z0-9_]+|\?\?\?\d*)")
_HEX = re.compile(r"(-?)0x([0-9a-fA-F]+)(?![A-Za-z0-9_.])")
_HALF_SELECTOR = re.compile(r"\.H[01](?![A-Za-z0-9_])")
_FLOAT = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?)|INF|QNAN|SNAN|NAN)(?![A-Za-z0-9_])")
_SPECIAL = re.compile(r"(?:SRZ|U?PR|SR_[A-Za-z0-9_]+(?:\.[XYZ])?|SR\d+|TEX_HEADER_[A-Z_]+|Rpc\.(?:LO|HI)|MACTIVE|gsb\d|[PNZ]{8})(?![A-Za-z0-9_])")
# texture geometry operands (`TEX … 0x0, 0x5a, 2D`): read as special names, before numbers
_GEOMETRY = re.compile(r"(?:1D|2D|3D|CUBE|ARRAY_1D|ARRAY_2D|ARRAY_3D|ARRAY_CUBE)(?![A-Za-z0-9_])")
_LABEL = re.compile(r"`\(([^()`\s]+)\)")
_RELOC = re.compile(r"(\d+)@(lo|hi)\((?:fun@fdesc\(([^()\s]+)\)|([^()\s]+)|\(([^()\s]+) \+ ([^()\s]+)@srel\))\)")
_INDEX_LIST = re.compile(r"\{(\d+(?:,\d+)*)\}")
_ANNOTATION = re.compile(r"\s*\(\*.*\*\)\s*$")


# --------------------------------------------------------------------------- registers

def parse_register(name: str) -> Reg:
    """`R4`, `RZ`, `UR6`, `P0`, `PT`, `UPT`, `B1`, `SB0` → Reg (no prefixes or suffixes)."""
    for file, zero in ZERO_NAME.items():
        if name == zero:
            return Reg(file, ZERO_INDEX[file])
    m = re.fullmatch(r"(UR|UP|SB|R|P|B)(\d+)", name)
    if not m:
        raise SassSyntaxError(f"not a register: {name!r}")
    return Reg(m.group(1), int(m.group(2)))


def register_name(reg: Reg) -> str:
    if reg.is_zero:
        return ZERO_NAME[reg.file]
    return f"{reg.file}{reg.index}"


# --------------------------------------------------------------------------- immediates

def float_value(imm: Imm) -> float:
    """The number a floating-point immediate's text denotes (`+INF` → inf, `-QNAN` → nan)."""
    if imm.text is None:
        raise ValueError(f"{imm} is an integer immediate")
    t = imm.text.removesuffix(".H0").removesuffix(".H1")
    body = t.lstrip("+-")
    sign = -1.0 if t.startswith("-") else 1.0
    if body == "INF":
        return sign * math.inf
    if body in ("QNAN", "NAN", "SNAN"):
        return math.copysign(math.nan, sign)
    return float(t)


def float_text(x: float, quiet: bool = True) -> str:
    """nvdisasm's spelling of a floating-point immediate's value (f16, f32 or f64 alike:
    `0.5`, `16777216`, `1.175494350822287508e-38`, `4.29496729600000000000e+09`, `+INF`,
    `-0.0`); `quiet` tells a NaN's kind (`+QNAN` / `+SNAN`)."""
    sign = "-" if math.copysign(1.0, x) < 0 else "+"
    if math.isnan(x):
        return f"{sign}{'QNAN' if quiet else 'SNAN'}"
    if math.isinf(x):
        return f"{sign}INF"
    if x == 0:
        return "-0.0" if sign == "-" else "0"
    if abs(x) >= _EXPONENT_FROM:
        return f"{x:.20e}"
    return f"{x:.20g}"


# (exponent bits, mantissa bits) of the IEEE formats immediates come in.
_FLOAT_FORMATS = {16: (5, 10), 32: (8, 23), 64: (11, 52)}


def float_bits_text(bits: int, width: int) -> str:
    """nvdisasm's spelling of an IEEE-754 binary16/32/64 bit pattern."""
    exp_bits, man_bits = _FLOAT_FORMATS[width]
    sign = bits >> (width - 1) & 1
    exp = bits >> man_bits & ((1 << exp_bits) - 1)
    man = bits & ((1 << man_bits) - 1)
    if exp == (1 << exp_bits) - 1:
        if man == 0:
            return "-INF" if sign else "+INF"
        quiet = bool(man >> (man_bits - 1) & 1)
        return ("-" if sign else "+") + ("QNAN" if quiet else "SNAN")
    bias = (1 << (exp_bits - 1)) - 1
    value = math.ldexp(man if exp == 0 else man | 1 << man_bits,
                       (1 if exp == 0 else exp) - bias - man_bits)
    return float_text(-value if sign else value)


def _format_hex(value: int) -> str:
    return f"-0x{-value:x}" if value < 0 else f"0x{value:x}"


# --------------------------------------------------------------------------- operands

class _Cursor:
    """A position in one instruction's text, for the small recursive-descent parser."""

    def __init__(self, text: str, whole: str):
        self.text, self.pos, self.whole = text, 0, whole

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.take(s):
            self.fail(f"expected {s!r}")

    def match(self, pattern: re.Pattern) -> re.Match | None:
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def skip_spaces(self) -> bool:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1
        return self.pos > start

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def fail(self, why: str):
        raise SassSyntaxError(f"{why} at column {self.pos + 1} of {self.whole!r} "
                              f"(near {self.text[self.pos:self.pos + 12]!r})")


def _suffixes(cur: _Cursor) -> tuple[bool, tuple[str, ...]]:
    """`.reuse` and the other dotted selectors after a register name."""
    reuse, out = False, []
    while True:
        m = cur.match(_SUFFIX)
        if not m:
            return reuse, tuple(out)
        if m.group(1) == "reuse" and not out:
            reuse = True
        else:
            out.append(m.group(1))


def _register(cur: _Cursor) -> Reg | None:
    m = cur.match(_REG)
    if not m:
        return None
    return parse_register(m.group(1))


def _number_term(cur: _Cursor) -> int | None:
    m = cur.match(_HEX)
    if not m:
        return None
    v = int(m.group(2), 16)
    return -v if m.group(1) else v


def _address_terms(cur: _Cursor, close: str) -> tuple[list[Reg], int | None]:
    """Terms `R2.64+UR4+0x10` up to `close`: registers (with suffixes) and one offset."""
    regs: list[Reg] = []
    offset: int | None = None
    first = True
    while not cur.take(close):
        if not first and not cur.take("+"):
            cur.fail("expected '+' in address")
        first = False
        num = _number_term(cur)
        if num is not None:
            if offset is not None:
                cur.fail("two offsets in address")
            offset = num
            continue
        reg = _register(cur)
        if reg is None:
            cur.fail("expected register or offset in address")
        reuse, suffix = _suffixes(cur)
        if reuse:
            cur.fail("'.reuse' inside an address")
        regs.append(replace(reg, suffix=suffix))
    return regs, offset


def _memory(cur: _Cursor, desc: Reg | None) -> Mem:
    cur.expect("[")
    regs, offset = _address_terms(cur, "]")
    base = ubase = None
    for reg in regs:
        if reg.file == "UR" and ubase is None:
            ubase = reg
        elif reg.file != "UR" and base is None and ubase is None:
            base = reg
        else:
            cur.fail("unexpected register in address")
    if not regs and offset is None:
        cur.fail("empty address")
    return Mem(base=base, ubase=ubase, offset=offset or 0, desc=desc)


def _const(cur: _Cursor, neg: bool, abs_: bool, inv: bool) -> ConstRef:
    bank, ubank = 0, None
    if cur.take("cx["):
        ubank = _register(cur)
        if ubank is None:
            cur.fail("expected bank register")
    else:
        cur.expect("c[")
        bank = _number_term(cur)
        if bank is None:
            cur.fail("expected constant bank number")
    cur.expect("]")
    # nvdisasm writes `c[0x0] [0x4].F32` when a selector follows, and `c[0x0] [0x4]` for a
    # sub-word source (I2F.S16, MUFU.F16, HFMA2 …) even without one
    gap = bool(cur.take(" "))
    cur.expect("[")
    regs, offset = _address_terms(cur, "]")
    if len(regs) > 1:
        cur.fail("more than one register in constant address")
    return ConstRef(bank=bank, offset=offset or 0, ureg=regs[0] if regs else None,
                    neg=neg, abs=abs_, inv=inv, ubank=ubank, gap=gap)


# addresses in memories named before their bracket (Mem.space)
_NAMED_SPACES = ("tmem", "idesc")


def _operand(cur: _Cursor) -> Operand:
    """One operand, with its prefixes (`-`, `!`, `~`, `|…|`) and suffixes."""
    start = cur.pos
    m = cur.match(_RELOC)
    if m:
        if m.group(3) is not None:
            return Reloc(m.group(2), m.group(3), None, int(m.group(1)), function_descriptor=True)
        if m.group(4) is not None:
            return Reloc(m.group(2), m.group(4), None, int(m.group(1)))
        return Reloc(m.group(2), m.group(5), m.group(6), int(m.group(1)))
    m = cur.match(_INDEX_LIST)
    if m:
        return IndexList(tuple(int(x) for x in m.group(1).split(",")))
    m = cur.match(_GEOMETRY)
    if m:
        return SpecialReg(m.group(0))
    # Numbers: `-0x10`, `-24`, `+INF` carry their sign themselves.
    num = _number_term(cur)
    if num is not None:
        return Imm(num)
    m = cur.match(_FLOAT)
    if m:
        # a half of the immediate word (`4.5736980577097704378e-41.H0`: F2FP.BF16.E4M3.UNPACK_B's
        # bf16 bound) keeps its selector in the text
        half = cur.match(_HALF_SELECTOR)
        return Imm(0, text=m.group(0) + (half.group(0) if half else ""))
    m = cur.match(_LABEL)
    if m:
        return Label(m.group(1))
    neg = cur.take("-")
    inv = not neg and (cur.take("!") or cur.take("~"))
    abs_ = cur.take("|")
    if cur.peek("c[") or cur.peek("cx["):
        c = _const(cur, neg, abs_, inv)
        reuse, suffix = _suffixes(cur)   # inside the bars: `|c[0x2] [0x0].F32|`
        if abs_:
            cur.expect("|")
        if reuse:
            cur.fail("'.reuse' on a constant")
        return replace(c, suffix=suffix)
    for space in _NAMED_SPACES:
        if cur.take(space):
            if neg or inv or abs_:
                cur.fail("prefix on an address")
            mem = replace(_memory(cur, None), space=space)
            reuse, suffix = _suffixes(cur)
            if reuse:
                cur.fail("'.reuse' on an address")
            return replace(mem, suffix=suffix) if suffix else mem
    if cur.peek("desc[") or cur.peek("desc.hidden[") or cur.peek("["):
        if neg or inv or abs_:
            cur.fail("prefix on an address")
        desc = None
        hidden = cur.take("desc.hidden[")
        if hidden or cur.take("desc["):
            desc = _register(cur)
            if desc is None:
                cur.fail("expected descriptor register")
            cur.expect("]")
            if not cur.peek("["):
                return Mem(desc=desc, desc_only=True)
        return replace(_memory(cur, desc), desc_hidden=hidden)
    if cur.take("gdesc["):
        reg = _register(cur)
        if reg is None or reg.file != "UR" or neg or inv or abs_:
            cur.fail("expected a uniform register in gdesc[...]")
        cur.expect("]")
        reuse, suffix = _suffixes(cur)
        return replace(reg, gdesc=True, reuse=reuse, suffix=suffix)
    m = cur.match(_SPECIAL)
    if m:
        if neg or inv or abs_:
            cur.fail("prefix on a special register")
        return SpecialReg(m.group(0))
    reg = _register(cur)
    if reg is None:
        cur.pos = start
        cur.fail("unknown operand")
    inner: tuple[str, ...] = ()
    if abs_:
        inner_reuse, inner = _suffixes(cur)
        cur.expect("|")
        if inner_reuse or not all(_inside_abs(x, reg.file) for x in inner):
            cur.fail("selector inside |…| that nvdisasm prints outside")
    reuse, suffix = _suffixes(cur)
    if abs_ and any(_inside_abs(x, reg.file) for x in suffix):
        cur.fail("selector after |…| that nvdisasm prints inside")
    return replace(reg, neg=neg, abs=abs_, inv=inv, reuse=reuse, suffix=inner + suffix)


def parse_operand(text: str) -> Operand:
    """One operand as nvdisasm prints it (`-|R2|.reuse`, `c[0x0][0x160]`, `[R2.64+0x10]` …)."""
    cur = _Cursor(text.strip(), text)
    op = _operand(cur)
    if not cur.at_end():
        cur.fail("trailing text after operand")
    return op


# --------------------------------------------------------------------------- instructions

def parse_instruction(text: str) -> Instruction:
    """One instruction as it appears in an nvdisasm listing, without the trailing `;`:
    `@!P0 BRA `(.L_x_1)`, `IMAD.WIDE.U32 R2, R0.reuse, R3, c[0x0][0x160]` …"""
    if not isinstance(text, str):
        raise SassSyntaxError(f"expected instruction text, got {type(text).__name__}")
    body = _ANNOTATION.sub("", text.strip())
    if body.endswith(";"):
        body = body[:-1].rstrip()
    guard = None
    m = _GUARD.match(body)
    if m:
        guard = replace(parse_register(m.group(2)), inv=bool(m.group(1)))
        body = body[m.end():]
    m = _MNEMONIC.match(body)
    if not m:
        raise SassSyntaxError(f"no mnemonic in SASS instruction {text!r}")
    opcode, *modifiers = m.group(0).split(".")
    rest = body[m.end():]
    if rest and not rest[0].isspace():
        raise SassSyntaxError(f"bad mnemonic in SASS instruction {text!r}")
    rest = rest.strip()
    operands: list[Operand] = []
    if rest:
        cur = _Cursor(rest, text)
        relative = opcode in REGISTER_RELATIVE_TARGET
        space_before = False
        while True:
            at = cur.pos
            op = _operand(cur)
            if space_before and not (relative and _is_target(op)
                                     and _is_address_register(operands[-1])):
                cur.pos = at
                cur.fail("expected ',' between operands")
            operands.append(op)
            spaced = cur.skip_spaces()
            if cur.at_end():
                break
            space_before = not cur.take(",")
            if space_before and not spaced:
                cur.fail("expected ',' between operands")
            cur.skip_spaces()
    return Instruction(opcode, tuple(modifiers), tuple(operands), guard)


def format_operand(op: Operand) -> str:
    """The text nvdisasm prints for one operand (without the separator after it)."""
    if isinstance(op, Reg):
        core = register_name(op)
        outer = op.suffix
        if op.abs:
            inner = "".join("." + s for s in op.suffix if _inside_abs(s, op.file))
            outer = tuple(s for s in op.suffix if not _inside_abs(s, op.file))
            core = f"|{core}{inner}|"
        if op.gdesc:
            core = f"gdesc[{core}]"
        prefix = "-" if op.neg else ("!" if op.inv and op.file in ("P", "UP") else
                                     "~" if op.inv else "")
        return (prefix + core + (".reuse" if op.reuse else "")
                + "".join("." + s for s in outer))
    if isinstance(op, Imm):
        if op.text is not None:
            return op.text
        return _format_hex(op.value)
    if isinstance(op, ConstRef):
        addr = _format_terms([op.ureg] if op.ureg else [], op.offset, keep_zero=op.ureg is None)
        gap = " " if op.suffix or op.gap else ""
        bank = (f"cx[{register_name(op.ubank)}]" if op.ubank is not None
                else f"c[{_format_hex(op.bank)}]")
        core = f"{bank}{gap}[{addr}]" + "".join("." + s for s in op.suffix)
        if op.abs:
            core = f"|{core}|"
        prefix = "-" if op.neg else ("~" if op.inv else "")
        return prefix + core
    if isinstance(op, Mem):
        if op.desc_only:
            return f"desc[{register_name(op.desc)}]"
        terms = [r for r in (op.base, op.ubase) if r is not None]
        inner = _format_terms(terms, op.offset, keep_zero=not terms)
        spelling = "desc.hidden" if op.desc_hidden else "desc"
        desc = f"{spelling}[{register_name(op.desc)}]" if op.desc is not None else ""
        return f"{op.space or desc}[{inner}]" + "".join("." + x for x in op.suffix)
    if isinstance(op, SpecialReg):
        return op.name
    if isinstance(op, Label):
        return f"`({op.name})"
    if isinstance(op, IndexList):
        return "{" + ",".join(str(i) for i in op.items) + "}"
    if isinstance(op, Reloc):
        if op.half in ("abs", "const"):     # the whole symbol value (nvdisasm: `(sym))
            return f"`({op.symbol})"
        target = op.symbol if op.label is None else f"({op.symbol} + {op.label}@srel)"
        if op.function_descriptor:
            target = f"fun@fdesc({op.symbol})"
        return f"{op.width}@{op.half}({target})"
    raise TypeError(f"not a SASS operand: {op!r}")


def _format_terms(regs: list[Reg], offset: int, keep_zero: bool) -> str:
    parts = [register_name(r) + "".join("." + s for s in r.suffix) for r in regs]
    out = "+".join(parts)
    if offset or keep_zero:
        num = _format_hex(offset)
        out = f"{out}+{num}" if out else num
    return out


def _ends_with_word(op: Operand) -> bool:
    return isinstance(op, Imm) and op.text in _SPACED_FLOATS


def _inside_abs(selector: str, file: str = "R") -> bool:
    """nvdisasm prints a single-half selector inside the bars (`|R2.H1|`), a swizzle of both
    halves after them (`|R2|.H0_H0`); a uniform register's swizzle inside them too
    (`|UR4.H0_H0|`: sm_90 HMNMX2/HFMA2.BF16_V2)."""
    return selector in _SELECTORS_INSIDE_ABS or selector.startswith("INVALID") or file == "UR"


def _is_target(op: Operand) -> bool:
    return isinstance(op, (Label, Imm))


def _is_address_register(op: Operand | None) -> bool:
    return isinstance(op, Reg) and op.file in ("R", "UR")


def format_instruction(ins: Instruction) -> str:
    """Exactly nvdisasm's text for `ins` (no trailing `;`)."""
    out = ""
    if ins.guard is not None:
        out = f"@{'!' if ins.guard.inv else ''}{register_name(ins.guard)} "
    out += ins.mnemonic
    relative = ins.opcode in REGISTER_RELATIVE_TARGET
    previous = None
    for i, op in enumerate(ins.operands):
        if i == 0:
            out += " "
        elif relative and _is_target(op) and _is_address_register(previous):
            out += " "
        else:
            out += ", "
        out += format_operand(op)
        if _ends_with_word(op):
            out += " "
        previous = op
    return out.rstrip()


# --------------------------------------------------------------------------- listings

@dataclass
class Entry:
    """One instruction of a listing at its byte offset in the section."""
    offset: int
    instruction: Instruction | None   # None only from `parse_listing(strict=False)`
    text: str                         # the instruction's text as printed (no `;`)
    word: int | None = None           # the 128-bit word when the listing shows hex
    error: str | None = None          # why `instruction` is None
    annotation: str | None = None     # nvdisasm's `(*"…"*)` note, e.g. BRX's BRANCH_TARGETS
    branch_targets: tuple[Label, ...] = ()   # the note's BRANCH_TARGETS, resolved


@dataclass
class Function:
    """A function symbol's instructions: a kernel, or a subroutine in its kernel's section."""
    name: str
    section: str                   # `.text.<kernel>`
    offset: int                    # where the symbol starts in the section
    entries: list[Entry] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)   # labels inside this function

    @property
    def is_kernel(self) -> bool:
        return self.section == f".text.{self.name}"


@dataclass
class Listing:
    arch: str | None = None
    functions: list[Function] = field(default_factory=list)
    hex_column: int | None = None    # where nvdisasm put the `/* 0x…` comments, when it did

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def section_labels(self, section: str) -> dict[str, int]:
        """Every label and function symbol of a section with its offset."""
        out: dict[str, int] = {}
        for f in self.functions:
            if f.section == section:
                out[f.name] = f.offset
                out.update(f.labels)
        return out


_LINE_OFFSET = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*)$")
_HEX_COMMENT = re.compile(r"/\*\s*0x([0-9a-f]{16})\s*\*/")
_SECTION = re.compile(r"\s*\.section\s+([^,\s]+)")
_LABEL_DEF = re.compile(r"^([.$A-Za-z_][\w.$]*):\s*$")
_CUOBJDUMP_FUNC = re.compile(r"\s*Function\s*:\s*(\S+)")
_TARGET = re.compile(r"\s*\.target\s+(sm_\d+\w*)|\s*code for (sm_\d+\w*)"
                     r"|\s*\.headerflags\s+@\"[^\"]*?EF_CUDA_SM(\d+\w*)")
_SYMBOL_DIRECTIVE = re.compile(r"\s*\.(?:global|weak|type|size|other)\s")


def parse_listing(text: str, strict: bool = True) -> Listing:
    """A whole listing: `nvdisasm [-hex] cubin`, `cuobjdump -sass cubin`, or nvdisasm's
    listing of raw words (`-b SM89`), which becomes one function named "" in ".text".

    Functions come in listing order with their instructions; `Label` operands are resolved to
    section offsets; with hex, each entry has its 128-bit word and its control fields.
    `strict=False` keeps going past instructions it cannot parse (for surveys): their
    entries have `instruction=None` and the reason in `error`."""
    listing = Listing()
    section: str | None = None
    current: Function | None = None
    pending_low: tuple[Entry, int] | None = None
    lines = text.splitlines()
    for lineno, line in enumerate(lines, 1):
        m = _TARGET.match(line)
        if m and listing.arch is None:
            listing.arch = m.group(1) or m.group(2) or f"sm_{m.group(3).lower()}"
            continue
        m = _CUOBJDUMP_FUNC.match(line)
        if m:
            section = f".text.{m.group(1)}"
            current = Function(m.group(1), section, 0)
            listing.functions.append(current)
            continue
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            current = None
            continue
        stripped = line.strip()
        # A raw listing (`nvdisasm -b SM89 words.bin`) has no sections: all of it is code.
        in_text = section is None or section.startswith(".text")
        m = _LABEL_DEF.match(stripped)
        if m and in_text:
            name = m.group(1)
            if name == section:
                continue
            offset = _next_offset(lines, lineno)
            if name.startswith(".L"):
                if current is None:
                    current = Function("", section or ".text", 0)
                    listing.functions.append(current)
                current.labels[name] = offset
            else:
                current = Function(name, section, offset)
                listing.functions.append(current)
            continue
        if pending_low is not None:
            hm = _HEX_COMMENT.search(line)
            if hm and not _LINE_OFFSET.match(line):
                entry, low = pending_low
                entry.word = low | int(hm.group(1), 16) << 64
                if entry.instruction is not None:
                    entry.instruction = replace(entry.instruction,
                                                control=Control.unpack(entry.word >> 105))
                pending_low = None
                continue
            pending_low = None
        m = _LINE_OFFSET.match(line)
        if m and in_text and not m.group(2).lstrip().startswith("."):
            if current is None:
                current = Function("", section or ".text", 0)
                listing.functions.append(current)
            body = m.group(2)
            hm = _HEX_COMMENT.search(body)
            instr_text = body[:hm.start()] if hm else body
            instr_text = instr_text.strip()
            if instr_text.startswith("."):
                continue  # data directive inside a text section
            if not instr_text.endswith(";"):
                raise SassSyntaxError(f"line {lineno}: instruction without ';': {line.strip()!r}")
            instr_text = instr_text[:-1].rstrip()
            annotation = None
            am = _ANNOTATION.search(instr_text)
            if am:
                annotation = am.group(0).strip()[2:-2].strip().strip('"')
                instr_text = instr_text[:am.start()].rstrip()
            error = None
            try:
                ins = parse_instruction(instr_text)
            except SassSyntaxError as e:
                if strict:
                    raise SassSyntaxError(f"line {lineno}: {e}") from None
                ins, error = None, str(e)
            entry = Entry(int(m.group(1), 16), ins, instr_text, error=error,
                          annotation=annotation)
            if hm and listing.hex_column is None:
                listing.hex_column = line.index("/* 0x")
            current.entries.append(entry)
            if hm:
                pending_low = (entry, int(hm.group(1), 16))
    _resolve_labels(listing)
    return listing


def _next_offset(lines: list[str], lineno: int) -> int:
    """The offset of the first instruction after line `lineno` (1-based): where a label points.
    A label after the section's last instruction points at the section's end."""
    last = None
    for line in lines[lineno:]:
        m = _LINE_OFFSET.match(line)
        if m:
            return int(m.group(1), 16)
        if _SECTION.match(line):
            break
    # End of section: one instruction past the last one before the label.
    for line in reversed(lines[:lineno]):
        m = _LINE_OFFSET.match(line)
        if m:
            last = int(m.group(1), 16)
            break
        if _SECTION.match(line):
            break
    return 0 if last is None else last + 16


def _resolve_labels(listing: Listing) -> None:
    by_section: dict[str, dict[str, int]] = {}
    for f in listing.functions:
        by_section.setdefault(f.section, {}).update(listing.section_labels(f.section))
    for f in listing.functions:
        table = by_section[f.section]
        for entry in f.entries:
            if entry.annotation and entry.annotation.startswith("BRANCH_TARGETS "):
                names = entry.annotation.split(None, 1)[1].split(",")
                entry.branch_targets = tuple(Label(n.strip(), table.get(n.strip()))
                                             for n in names)
            ins = entry.instruction
            if ins is not None and any(isinstance(op, Label) and op.name in table for op in ins.operands):
                ops = tuple(Label(op.name, table[op.name])
                            if isinstance(op, Label) and op.name in table else op
                            for op in ins.operands)
                entry.instruction = replace(ins, operands=ops)


def _listing_body(entry: Entry, note_column: int = 0) -> str:
    """One instruction line up to its `;` in nvdisasm's layout: a `@P0`/`@!P0` guard
    right-aligned in the 19 columns before the opcode (a uniform `@!UPT` starts at the opcode
    column), and no space before `;` when the word has neither a stall count nor the yield
    bit (nvdisasm's own habit, e.g. `NOP;`). A note (BRX's targets) starts at `note_column`
    and is followed by `;` directly."""
    ins = entry.instruction
    guard = ""
    if ins is None:
        text = entry.text
    elif ins.guard is not None and ins.guard.file == "P":
        guard = f"@{'!' if ins.guard.inv else ''}{register_name(ins.guard)} "
        text = format_instruction(replace(ins, guard=None))
    else:   # a uniform predicate guard stands in the opcode column
        text = format_instruction(ins)
    if ins is not None and ins.operands and _ends_with_word(ins.operands[-1]):
        text += " "   # `+INF  ;`: the space nvdisasm writes after such a value stays
    line = f"        /*{entry.offset:04x}*/{guard:>19}{text}"
    if entry.annotation:
        return f"{line:<{note_column - 1}} {_note(entry)};"
    tight = entry.word is not None and (entry.word >> 105) & 0x1F == 0
    return line + (";" if tight else " ;")


def _note(entry: Entry) -> str:
    return f'(*"{entry.annotation}"*)'


def format_listing(listing: Listing, hex_words: bool = True) -> str:
    """A listing in nvdisasm's layout for its code: section and label lines, and instruction
    lines as nvdisasm prints them. nvdisasm's rule for the column of the hex comments is not
    known exactly (at least two past the longest instruction; notes such as BRX's targets
    start there and push the hex further right): a listing read from nvdisasm keeps its
    column (`hex_column`), others get two past the longest line. ELF directives and data
    sections are not reproduced."""
    entries = [e for f in listing.functions for e in f.entries]
    note_width = max((len(_note(e)) for e in entries if e.annotation), default=0)
    if listing.hex_column:
        base = listing.hex_column - (note_width + 2 if note_width else 0)
    else:
        base = max((len(_listing_body(e)) for e in entries if not e.annotation), default=0) + 2
    column = base + note_width + 2 if note_width else base
    out: list[str] = []
    if listing.arch:
        out.append(f"\t.target\t{listing.arch}")
    section = None
    for f in listing.functions:
        if f.section != section:
            section = f.section
            out.append(f"\t.section\t{section},\"ax\",@progbits")
        if f.name:
            out.append(f"{f.name}:")
        labels_at: dict[int, list[str]] = {}
        for name, off in f.labels.items():
            labels_at.setdefault(off, []).append(name)
        for entry in f.entries:
            out.extend(f"{name}:" for name in labels_at.pop(entry.offset, []))
            body = _listing_body(entry, base)
            if hex_words and entry.word is not None:
                out.append(f"{body:<{column - 1}} /* 0x{entry.word & (1 << 64) - 1:016x} */")
                out.append(" " * column + f"/* 0x{entry.word >> 64:016x} */")
            else:
                out.append(body)
        for off in sorted(labels_at):
            out.extend(f"{name}:" for name in labels_at[off])
    return "\n".join(out) + "\n"
