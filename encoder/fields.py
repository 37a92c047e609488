"""The text-level view of one SASS instruction that the encoding tables are written against.

Why a separate view: the tables map bits to *nvdisasm's text*, so that the same data can be
derived by probing nvdisasm and applied by the codec. An instruction's text is cut into
its guard, its mnemonic tokens and its operands; every number inside an operand (register
index, immediate, constant-bank offset, float literal) is lifted out, leaving the operand's
*shape*: `-|R4|` → shape `-|{R}|` with numbers `[4]`; `c[0x0][0x160]` → `c[{i}][{i}]`,
`[0, 352]`. A numeric field of the word gives a number; everything else in a shape or the
mnemonic comes from enumerated bit groups.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import field

from ptx2sass.records import dataclass


class Numbering:
    """Which number each zero register stands for in one encoding's words. A register's
    index is a number in the text, but the zero register of each file prints as a name (RZ,
    URZ, PT, UPT) and stands for the highest index of its fields: RZ 255, PT and UPT 7
    everywhere, URZ 63 where uniform-register fields are 6 bits and 255 in the blackwell
    table's 8-bit fields. The view's numbers are the word's, so whatever lifts numbers out of
    operand text or puts them back takes the encoding's Numbering explicitly (a module-level
    switch once let a cache keyed by operand text alone give sm_90 sm_120's URZ).

    One shared instance per URZ number (`numbering`), hashable, for cache keys."""
    __slots__ = ("uniform_zero", "zero_names", "zero_of", "zero_index")

    def __init__(self, uniform_zero: int):
        self.uniform_zero = uniform_zero
        # name -> (file, index); file -> name; file -> index
        self.zero_names = {"RZ": ("R", 255), "URZ": ("UR", uniform_zero), "PT": ("P", 7),
                           "UPT": ("UP", 7)}
        self.zero_of = {file: name for name, (file, _i) in self.zero_names.items()}
        self.zero_index = {file: index for _n, (file, index) in self.zero_names.items()}

    def __eq__(self, other):
        return isinstance(other, Numbering) and other.uniform_zero == self.uniform_zero

    def __hash__(self):
        return hash((Numbering, self.uniform_zero))

    def __repr__(self):
        return f"Numbering(uniform_zero={self.uniform_zero})"


_NUMBERINGS: dict[int, Numbering] = {}


def numbering(uniform_zero: int) -> Numbering:
    """The shared Numbering whose URZ is `uniform_zero` (63: 6-bit uniform fields, 255: 8-bit)."""
    known = _NUMBERINGS.get(uniform_zero)
    if known is None:
        known = _NUMBERINGS.setdefault(uniform_zero, Numbering(uniform_zero))
    return known


_TOKEN = re.compile(
    r"(?P<reg>(?<![\w.$])(?:UR|UP|R|P|B)(?:\d+|Z|T)(?![\w$]))"
    r"|(?P<int>(?<![\w.$])-?0x[0-9a-f]+(?![\w$]))"
    r"|(?P<float>(?<![\w.$])[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|INF|QNAN|SNAN|NAN)(?![\w$.]) ?)")

# A float placeholder keeps the float format the field uses: f32, f64 (upper 32 bits), f16,
# bf16 (the immediates of the .BF16_V2 half-precision forms).
FLOAT_KINDS = ("f32", "f64h", "f16", "bf16")


def half_kind(kind: str, tokens) -> str:
    """The float format a field holds in an instruction with these mnemonic tokens: where
    `.BF16_V2` is a modifier group (not part of the form), the word's choice decides: half
    immediates are bf16 with it (HFMA2.BF16_V2.RELU with a `-QNAN` pair) and f16 without
    (a form probed from a `.BF16_V2` word reads the plain HADD2 words near it)."""
    if kind in ("f16", "bf16"):
        return "bf16" if "BF16_V2" in tokens else "f16"
    return kind


@dataclass
class View:
    guard: str | None            # "P0", "!P0"; None when the guard is PT (not printed)
    tokens: list[str]            # mnemonic split at dots, opcode first
    operands: list[str]          # operand texts, `.reuse` removed
    reuse: list[int]             # operand positions that carried `.reuse`
    targets: dict[int, int] = field(default_factory=dict)  # operand position → branch target


def split_operands(text: str) -> list[str]:
    """Split at top-level commas (none inside brackets or backquoted labels)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip(" "))
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip(" ")
    if last or out:
        out.append(last)
    # keep the space nvdisasm leaves after `+INF ` and friends: it belongs to the literal
    return [o for o in out]


def parse_view(text: str) -> View:
    text = text.strip().rstrip(";").strip()
    guard = None
    if text.startswith("@"):
        guard, _, text = text[1:].partition(" ")
        text = text.strip()
    mnemonic, _, rest = text.partition(" ")
    raw_ops = split_operands(rest.strip()) if rest.strip() else []
    ops, reuse = [], []
    for i, op in enumerate(raw_ops):
        if ".reuse" in op:
            reuse.append(i)
            op = op.replace(".reuse", "")
        ops.append(op)
    return View(guard, mnemonic.split("."), ops, reuse)


_FIRST_REG = re.compile(r"(?:UR|R)(?:\d+|Z)(?![\w$])\|?")


def _with_reuse(op: str) -> str:
    """nvdisasm writes `.reuse` right after the register (and its closing `|`), before any
    selector: `R64.reuse.H0_H0`, `|R0|.reuse`."""
    m = _FIRST_REG.search(op)
    return op[:m.end()] + ".reuse" + op[m.end():] if m else op + ".reuse"


def render_view(view: View) -> str:
    ops = [_with_reuse(o) if i in view.reuse else o for i, o in enumerate(view.operands)]
    text = ".".join(view.tokens)
    if ops:
        text += " " + ", ".join(ops)
    if view.guard is not None:
        text = f"@{view.guard} {text}"
    return text


def _is_address(op: str) -> bool:
    return op.startswith("[") or op.startswith("desc[")


_INDEX_LIST = re.compile(r"^\{(\d+(?:,\d+)*)\}$")


def operand_shape(op: str, numbers: Numbering) -> tuple[str, list]:
    """`-|R4|` → (`-|{R}|`, [4]); floats stay as their text, integers become ints, a zero
    register its number in `numbers`. A list of indices (DEPBAR's scoreboards `{5,0}`) is
    one hole `{L}` whose number is the bit mask."""
    zero_names = numbers.zero_names
    m = _INDEX_LIST.match(op)
    if m:
        return "{L}", [sum(1 << int(x) for x in set(m.group(1).split(",")))]
    if _is_address(op) and not re.search(r"[+\[]-?0x[0-9a-f]+\]$", op):
        op = op[:-1] + "+0x0]"      # an address always has an offset term, 0 when not printed
    nums: list = []

    def lift(m: re.Match) -> str:
        if m.group("reg"):
            tok = m.group("reg")
            if tok in zero_names:
                file, index = zero_names[tok]
            else:
                file = tok.rstrip("0123456789")
                index = int(tok[len(file):])
            nums.append(index)
            return "{" + file + "}"
        if m.group("int"):
            s = m.group("int")
            nums.append(-int(s[1:], 16) if s.startswith("-") else int(s, 16))
            return "{i}"
        nums.append(m.group("float"))
        return "{f}"

    return _TOKEN.sub(lift, op), nums


_CONST_GAP = re.compile(r"(c\[[^\]]*\]|cx\[[^\]]*\]) \[")


def ungapped(shape: str) -> str:
    """An operand shape without the gap nvdisasm prints in a sub-word constant source
    (`c[{i}] [{i}]`): the same operand as `c[{i}][{i}]`, which the encoder takes for it."""
    return _CONST_GAP.sub(r"\1[", shape) if "] [" in shape else shape


_HOLE = re.compile(r"\{(R|UR|P|UP|B|i|f|L)\}")


def render_shape(shape: str, nums: list, numbers: Numbering) -> str:
    """An operand's text from its shape and numbers (a zero register's number as `numbers`
    has it prints as its name)."""
    it = iter(nums)
    zero_of, zero_index = numbers.zero_of, numbers.zero_index

    def fill(m: re.Match) -> str:
        kind, v = m.group(1), next(it)
        if kind == "i":
            return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"
        if kind == "L":     # nvdisasm lists the set bits from the highest down
            return "{" + ",".join(str(b) for b in range(v.bit_length() - 1, -1, -1) if v >> b & 1) + "}"
        if kind == "f":
            return v
        # past the zero register only through a biased field: UTC*MMA's `tmem[URZ], idesc[URZ]`
        # (the pair's second half at the field + 1; nvdisasm prints URZ for 256)
        if kind in zero_of and v >= zero_index[kind]:
            return zero_of[kind]
        return f"{kind}{v}"

    text = _HOLE.sub(fill, shape)
    if _is_address(text) and text.endswith("+0x0]"):
        text = text[:-5] + "]"
    return text


def shape_kinds(shape: str) -> list[str]:
    return _HOLE.findall(shape)


# --- float literals -------------------------------------------------------------------

def _fmt_float(x: float) -> str:
    if math.isinf(x):
        return "+INF " if x > 0 else "-INF "
    if math.isnan(x):
        return "+QNAN " if math.copysign(1, x) > 0 else "-QNAN "
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0"
    if abs(x) >= 1e9:
        return "%.20e" % x    # nvdisasm's notation from 1e9 up (probed: f32 999999936 and
                              # f64 999999488 print plainly, 1e9 in e-notation)
    return "%.20g" % x


def float_text(bits: int, kind: str) -> str:
    """nvdisasm's spelling of an immediate float field."""
    if kind == "f32":
        return _fmt_float(struct.unpack("<f", struct.pack("<I", bits))[0])
    if kind == "f64h":
        return _fmt_float(struct.unpack("<d", struct.pack("<Q", bits << 32))[0])
    if kind == "f16":
        return _fmt_float(struct.unpack("<e", struct.pack("<H", bits))[0])
    if kind == "bf16":
        return _fmt_float(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])
    raise ValueError(kind)


def float_bits(text: str, kind: str) -> int | None:
    """The field bits for a float literal, or None when the text is not exactly encodable."""
    t = text.strip()
    special = {"+INF": math.inf, "-INF": -math.inf, "INF": math.inf}
    if t in ("+QNAN", "QNAN", "-QNAN", "NAN", "+NAN", "-NAN"):
        sign = 1 if t.startswith("-") else 0
        # the quiet NaNs ptxas writes (counted over the corpora)
        if sign:
            return {"f32": 0xffc00000, "f64h": 0xfff80000, "f16": 0xfe00, "bf16": 0xffc0}[kind]
        return {"f32": 0x7fc00000, "f64h": 0x7ff80000, "f16": 0x7e00, "bf16": 0x7fc0}[kind]
    try:
        x = special[t] if t in special else float(t)
    except ValueError:
        return None
    if kind == "f32":
        try:
            bits = struct.unpack("<I", struct.pack("<f", x))[0]
        except OverflowError:
            return None
        if struct.unpack("<f", struct.pack("<I", bits))[0] != x and not math.isnan(x):
            return None             # not exactly an f32
    elif kind == "f64h":
        full = struct.unpack("<Q", struct.pack("<d", x))[0]
        if full & 0xffffffff:
            return None
        bits = full >> 32
    elif kind == "bf16":
        full = struct.unpack("<I", struct.pack("<f", x))[0]
        if full & 0xffff and not math.isnan(x):
            return None             # not exactly a bf16
        bits = full >> 16
    else:
        try:
            bits = struct.unpack("<H", struct.pack("<e", x))[0]
        except OverflowError:
            return None
    return bits


# --- value classes for nvdisasm's aliases ----------------------------------------------
# nvdisasm prints some opcodes under other names depending on operand *values*
# (`IMAD.MOV` when a factor is RZ, `IMAD.SHL` for a power-of-two factor, `IMAD.IADD` for a
# factor of 1). The tables record, per form, how the mnemonic tokens change for each
# combination of these classes of the fields that matter.

CLASS_VALUES = {"reg": {"zero": None, "other": 0},
                "int": {"0": 0, "1": 1, "pow2": 0x10, "other": 3}}


def value_class(kind: str, value: int, file: str | None, numbers: Numbering) -> str:
    if kind == "reg":
        return "zero" if value == numbers.zero_index.get(file or "R") else "other"
    if value in (0, 1):
        return str(value)
    if value > 0 and value & (value - 1) == 0:
        return "pow2"
    return "other"


def token_edits(base: list[str], toks: list[str]) -> list:
    """How `toks` differs from `base`: a list of ("del", token) and ("ins", after, token)."""
    import difflib
    edits: list = []
    sm = difflib.SequenceMatcher(a=base, b=toks, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op in ("delete", "replace"):
            edits.extend(("del", t) for t in base[i1:i2])
        if op in ("insert", "replace"):
            anchor = base[i1 - 1] if i1 > 0 else None
            for t in toks[j1:j2]:
                edits.append(("ins", anchor, t))
                anchor = t
    return edits


def apply_edits(toks: list[str], edits: list) -> list[str]:
    out = list(toks)
    for e in edits:
        if e[0] == "del":
            if e[1] in out:
                out.remove(e[1])
        else:
            _, anchor, t = e
            pos = out.index(anchor) + 1 if anchor in out else len(out) if anchor else 0
            out.insert(pos, t)
    return out


def undo_edits(toks: list[str], edits: list, base_tokens: list[str]) -> list[str] | None:
    """The tokens before `edits` were applied (None when `toks` cannot come from them)."""
    out = list(toks)
    for e in reversed(edits):
        if e[0] == "ins":
            if e[2] not in out:
                return None
            out.remove(e[2])
        else:
            t = e[1]
            i = base_tokens.index(t)
            anchor = base_tokens[i - 1] if i > 0 else None
            pos = out.index(anchor) + 1 if anchor in out else 0 if anchor is None else len(out)
            out.insert(pos, t)
    return out


def canonical(view: View, numbers: Numbering) -> tuple:
    """A view with float literals compared by value (`+INF ` = `+INF`), for checking that
    the table reads a word back as the text that was meant."""
    ops = []
    for op in [view.guard or "PT", *view.operands]:
        op = op.strip()
        if op.startswith("c[") and op.endswith("][RZ]"):    # nvdisasm's spelling of offset 0
            op = op[:-3] + "0x0]"
        shape, nums = operand_shape(op, numbers)
        ops.append((ungapped(shape), tuple(_float_key(n) if isinstance(n, str) else n for n in nums)))
    return tuple(view.tokens), tuple(ops)


def _float_key(text: str):
    for kind in ("f32", "f64h"):
        bits = float_bits(text, kind)
        if bits is not None:
            return (kind, bits)
    return text.strip()
