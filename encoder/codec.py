"""Bit-exact SASS encoder and decoder, driven only by the per-arch-family tables in `tables/`.

A table holds *forms*: one per (opcode bits, form bits) pattern that `tools/isa_probe.py`
found with nvdisasm as oracle. A form knows
* `mask`/`value`: the bits that identify it, and `base`: a word ptxas emitted for it (its
  don't-care bits are kept as ptxas sets them);
* `slots`: its operands (slot 0 is the guard) as text shapes with numeric fields
  (`value = bias + sum(weight_i * bit_i)`, or raw float bits);
* `groups`: enumerated bit groups (value → mnemonic tokens and operand shapes) and the
  `layout` that orders the mnemonic's tokens;
* `reuse`: which operand slot each of the four reuse flags marks.

The codec works on nvdisasm's text (see `fields.py`); `encode`/`decode` bridge to the
`Instruction` model with `sass_text`.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import replace

from ptx2sass.records import dataclass

from . import table_cache
from .fields import (Numbering, View, apply_edits, canonical, float_bits, float_text, half_kind,
                     numbering, operand_shape, parse_view, render_shape, render_view,
                     split_operands, undo_edits, ungapped, value_class)
from .arch import ARCHS, UnknownArch, table_uniform_zero, target
from . import sass_text
from .model import Control, ConstRef, Imm, Instruction, Label, Mem, Reloc
from .register_widths import misaligned

TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables")   # no pathlib: start-up
CONTROL_SHIFT = 105
CONTROL_MASK = ((1 << 21) - 1) << CONTROL_SHIFT

# Which table describes each arch (one encoding family per table): the Target's
# `encoding_table` (encoder/arch.py), as a map for the tools that list them.
ARCH_FAMILY = {name: t.encoding_table for name, t in ARCHS.items() if t.encoding_table}

# Where a global-memory instruction keeps the uniform register of its `desc[URx]` memory
# descriptor, per family and opcode. nvdisasm hides it on sm_8x (ptxas picks UR4 or UR6 for
# the same text), so `decode` reads it into `Mem.desc` and `encode` writes it back; a form
# that uses these bits for an operand or modifier has no hidden descriptor.
HIDDEN_DESCRIPTOR_BITS = {
    "ampere": {"LD": range(32, 38), "LDG": range(32, 38),
               "ST": range(64, 70), "STG": range(64, 70), "RED": range(64, 70),
               "ATOMG": range(64, 70), "LDGSTS": range(64, 70)},
}
# The descriptor register an instruction without `Mem.desc` uses: the one ptxas loads the
# global-memory descriptor into (`ULDC.64 UR4, c[0x0][0x118]`) and the code generator's too.
# A word holding another (ptxas uses UR6, UR8 … when UR4 is taken) decodes with `desc` set.
DEFAULT_DESCRIPTOR = {"ampere": 4}


class EncodeError(ValueError):
    """An instruction that has no encoding on the arch (names the instruction)."""


class DecodeError(ValueError):
    """A word that the tables cannot read."""


# --- tables --------------------------------------------------------------------------

@dataclass
class Form:
    opcode: str
    mask: int
    value: int
    base: int
    slots: list[dict]
    groups: list[dict]
    layout: list
    reuse: dict[int, int]
    tokens: list[str]
    aliases: dict | None
    arch: str | None = None     # the arch whose nvdisasm it was probed with
    order: frozenset = frozenset()  # (a, b): nvdisasm prints token a before token b

    @classmethod
    def from_json(cls, d: dict) -> "Form":
        return cls(*table_cache.form_fields(d))

    @functools.cached_property
    def field_mask(self) -> int:
        m = 0
        for s in self.slots:
            for f in s["fields"]:
                for b in f["bits"]:
                    m |= 1 << b
        for g in self.groups:
            for b in g["bits"]:
                m |= 1 << b
        return m


NOT_FOR_ARCH = 1 << 8      # the rank of a form another arch's nvdisasm was probed with


class Table:
    """One arch family's forms. Most were probed with the family's primary arch; a member
    arch whose nvdisasm reads some words differently has its own forms, which win for it.
    `numbers` says which number each zero register stands for in its words (URZ: 63 or
    255); everything reading or writing the table's words takes it from here.

    A table loaded from the cache (`table_cache`) builds an opcode's forms only when they are
    first needed; `forms` builds them all."""

    def __init__(self, family: str, forms: list[Form], primary: str | None = None,
                 numbers: Numbering | None = None):
        self.family = family
        self.primary = primary
        self.numbers = numbers or family_numbering(family)
        self._keys = [(f.mask, f.value, f.opcode, f.arch) for f in forms]
        self._forms: list[Form | None] = list(forms)
        self._blobs: dict[str, bytes] = {}
        self._index()

    @classmethod
    def from_cache(cls, family: str, content: dict) -> "Table":
        table = cls.__new__(cls)
        table.family = family
        table.primary = content["primary"]
        table.numbers = family_numbering(family)
        table._keys = [tuple(k) for k in content["keys"]]
        table._forms = [None] * len(table._keys)
        table._blobs = dict(content["blobs"])
        table._index()
        return table

    def _index(self) -> None:
        self._positions: dict[str, list[int]] = {}
        for pos, key in enumerate(self._keys):
            self._positions.setdefault(key[2], []).append(pos)
        self._by_opcode: dict[tuple, list[Form]] = {}
        self._low: dict[str | None, dict] = {}

    def _rank(self, form_arch: str | None, arch: str | None) -> int:
        """The arch's own forms in the Target's order (sm_110: its own, then sm_100's: sm_100
        reads some words as SHF.XOR that sm_110 reads as SHF), then a primary-arch form;
        NOT_FOR_ARCH for the rest (`sm_100a` and `sm_100f` have sm_100's forms)."""
        if arch is None:
            return 0
        own = _own_forms(arch)
        if form_arch in own:
            return own.index(form_arch)
        return len(own) if form_arch in (None, self.primary) else NOT_FOR_ARCH

    def _applies(self, f: Form, arch: str | None) -> int:
        return self._rank(f.arch, arch)

    def form_at(self, pos: int) -> Form:
        form = self._forms[pos]
        if form is None:
            for p, fields in table_cache.unpack(self._blobs.pop(self._keys[pos][2])):
                self._forms[p] = Form(*fields)
            form = self._forms[pos]
        return form

    @property
    def forms(self) -> list[Form]:
        return [self.form_at(pos) for pos in range(len(self._keys))]

    @property
    def opcodes(self) -> list[str]:
        return list(self._positions)

    def forms_of(self, opcode: str, arch: str | None = None) -> list[Form]:
        """The forms of one opcode that apply to `arch`, its own forms first."""
        key = (opcode, arch)
        if key not in self._by_opcode:
            ranked = [(self._rank(self._keys[p][3], arch), p)
                      for p in self._positions.get(opcode, ())]
            self._by_opcode[key] = [self.form_at(p) for r, p in sorted(ranked) if r < NOT_FOR_ARCH]
        return self._by_opcode[key]

    def by_opcode(self, arch: str | None = None) -> dict[str, list[Form]]:
        return {op: fs for op in self._positions if (fs := self.forms_of(op, arch))}

    def low_bits_index(self, arch: str | None = None) -> dict[int, dict[int, list[tuple]]]:
        """(position, mask, value, rank) of the forms, indexed by which of bits 0..11 they
        fix and the value there; the arch's own and the most specific forms first."""
        if arch not in self._low:
            ranked = sorted((self._rank(form_arch, arch), -bin(mask).count("1"), pos)
                            for pos, (mask, _v, _op, form_arch) in enumerate(self._keys))
            out: dict[int, dict[int, list[tuple]]] = {}
            for rank, neg_bits, pos in ranked:
                if rank < NOT_FOR_ARCH:
                    mask, value = self._keys[pos][0], self._keys[pos][1]
                    out.setdefault(mask & 0xfff, {}).setdefault(value & 0xfff, []).append(
                        (pos, mask, value, (rank, neg_bits)))
            self._low[arch] = out
        return self._low[arch]


@functools.cache
def _own_forms(arch: str) -> tuple[str, ...]:
    """The archs whose own table forms `arch` reads (`sm_100a`, `sm_103`: sm_100's; sm_110:
    its own and sm_100's)."""
    try:
        t = target(arch)
    except UnknownArch:
        return (arch,)
    own = t.own_forms or t.name
    return (own,) if isinstance(own, str) else own


@functools.cache
def _unnamed_modifiers(arch: str) -> frozenset[tuple[str, str]]:
    """`Target.unnamed_modifiers` of `arch` (none for an arch the Targets do not know)."""
    try:
        return frozenset(target(arch).unnamed_modifiers)
    except UnknownArch:
        return frozenset()


def _check_named(opcode: str, tokens, arch: str, error: type) -> None:
    """Refuse a modifier `arch`'s nvdisasm does not name (`Target.unnamed_modifiers`)."""
    for t in _unnamed_modifiers(arch):
        if t[0] == opcode and t[1] in tokens:
            raise error(f"{opcode}.{t[1]}: {arch}'s nvdisasm names no such modifier (ptxas "
                        f"never writes it for {arch})")


def family_numbering(family: str) -> Numbering:
    """The zero registers' numbers in the words of encoding table `family` (the Targets'
    `uniform_zero_register`)."""
    return numbering(table_uniform_zero(family))


def arch_numbering(arch: str) -> Numbering:
    """The zero registers' numbers in `arch`'s words (its Target's `uniform_zero_register`)."""
    return numbering(target(arch).uniform_zero_register)


def family_of(arch: str) -> str:
    try:
        family = target(arch).encoding_table
    except UnknownArch:
        family = None
    if family is None:
        raise EncodeError(f"unknown arch {arch!r}; supported: {', '.join(sorted(ARCH_FAMILY))}")
    return family


@functools.cache
def load_table(family: str) -> Table:
    path = os.path.join(TABLES, f"{family}.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no encoding table for {family}: run tools/isa_probe.py")
    return Table.from_cache(family, table_cache.load(path, family))


def table_for(arch: str) -> Table:
    return load_table(family_of(arch))


# --- numeric fields ------------------------------------------------------------------

def bits_value(word: int, bits: list[int]) -> int:
    return sum((word >> b & 1) << i for i, b in enumerate(bits))


def put_bits(word: int, bits: list[int], value: int) -> int:
    run = _bit_run(tuple(bits))
    if run is not None:
        low, mask = run
        return word & ~(mask << low) | (value & mask) << low
    for i, b in enumerate(bits):
        word = word & ~(1 << b) | ((value >> i & 1) << b)
    return word


@functools.lru_cache(maxsize=None)
def _bit_run(bits: tuple[int, ...]) -> tuple[int, int] | None:
    """(lowest bit, mask) when the bits are consecutive and ascending, as most fields'
    are: the value is then written with one shift (encoding is the compile's hot spot)."""
    if bits and bits == tuple(range(bits[0], bits[0] + len(bits))):
        return bits[0], (1 << len(bits)) - 1
    return None


def linear_value(word: int, field: dict) -> int:
    return field["bias"] + sum(w for b, w in zip(field["bits"], field["weights"]) if word >> b & 1)


def signed_variant(field: dict, group_values) -> dict:
    """The field as the chosen group values read it: a field with `signed_by` [group,
    values] is two's complement (its top weight negative) when that group holds one of the
    values (I2F's immediate prints signed for a signed source type), unsigned otherwise."""
    rule = field.get("signed_by")
    if not rule or group_values[rule[0]] not in rule[1]:
        return field
    weights = list(field["weights"])
    top = max(range(len(weights)), key=lambda i: abs(weights[i]))
    weights[top] = -abs(weights[top])
    return {**field, "weights": weights}


def linear_bits(value: int, field: dict) -> int | None:
    """The field's bits (packed over field['bits']) that give `value`, or None if out of range
    or misaligned."""
    rest = value - field["bias"]
    weights = field["weights"]
    negs, pos, shift, signed = _weight_plan(tuple(weights))
    if shift is not None:      # weights 2^s, 2^(s+1), ...: the value's binary digits
        if rest < 0 or rest & ((1 << shift) - 1) or rest >> shift >> len(weights):
            return None
        return rest >> shift
    if signed is not None:     # 2^s, ..., 2^(s+n-2), -2^(s+n-1): two's complement digits
        n = len(weights)
        if rest & ((1 << signed) - 1) or not -(1 << (signed + n - 1)) <= rest < 1 << (signed + n - 1):
            return None
        return (rest >> signed) & ((1 << n) - 1)
    return _search_bits(rest, weights, negs, pos)


def _search_bits(rest: int, weights: list[int], negs: tuple, pos: tuple) -> int | None:
    """linear_bits' general case: each choice of the negative weights, then the positive
    ones greedily, largest first."""
    for choice in range(1 << len(negs)):
        r, out = rest, 0
        for t, i in enumerate(negs):
            if choice >> t & 1:
                r -= weights[i]
                out |= 1 << i
        for i in pos:
            if weights[i] <= r:
                r -= weights[i]
                out |= 1 << i
        if r == 0:
            return out
    return None


@functools.lru_cache(maxsize=None)
def _weight_plan(weights: tuple[int, ...]) -> tuple[tuple, tuple, int | None, int | None]:
    """For linear_bits: the negative weights, the positive ones largest first, `s` when
    the weights are exactly 2^s, 2^(s+1), ... (most fields: no search needed), and `s` when
    they are 2^s, ..., 2^(s+n-2), -2^(s+n-1) (a signed immediate: the search's answer is
    the two's complement digits; it walked every weight twice)."""
    negs = tuple(i for i, w in enumerate(weights) if w < 0)
    pos = tuple(sorted((i for i, w in enumerate(weights) if w > 0), key=lambda i: -weights[i]))
    first = weights[0] if weights else 0
    plain = first > 0 and first & (first - 1) == 0 and all(
        w == first << i for i, w in enumerate(weights))
    low = abs(first)
    signed = not plain and low > 0 and low & (low - 1) == 0 and all(
        w == (low << i if i < len(weights) - 1 else -(low << i)) for i, w in enumerate(weights))
    return negs, pos, first.bit_length() - 1 if plain else None, \
        low.bit_length() - 1 if signed else None


# --- decode --------------------------------------------------------------------------

_INSTRUCTION_BITS = (1 << CONTROL_SHIFT) - 1


def find_form(table: Table, word: int, arch: str | None = None) -> Form | None:
    """The form that reads `word`: the arch's own before the primary arch's; among those,
    one that knows the values of the word's bit groups, then the most specific (most form
    bits), then one that accounts for more of the word's set bits (`MUFU.TANH.F16 R7,
    R2.H1`: an equally specific form without the .H1 field matches the word too, blind to
    bit 60), then one whose seed the word is nearest (fewer bit groups away from the seed's
    values: the probe read each group's values with the others at the seed's, so a word
    far from it relies on combinations nvdisasm never printed: the blackwell TEX form reads
    `.LZ` and `.LB` apart where both set print `.LL`, which the TEX.LL form holds). (A form
    whose seed hid a bit behind a zero register, `STS.64 [RZ], R2` hiding `.X4`, holds
    that bit among its form bits: `tools/isa_probe.py` reveals it.)"""
    matches = []
    for low_mask, by_value in table.low_bits_index(arch).items():
        for pos, mask, value, r in by_value.get(word & low_mask, ()):
            if word & mask == value:
                matches.append((r, pos))
    if not matches:
        return None
    if len(matches) == 1:
        return table.form_at(matches[0][1])

    def key(match):
        (rank, neg_bits), pos = match
        form = table.form_at(pos)
        known = _GROUP_RANKS.get(id(form))
        if known is None:
            groups = 0
            for g in form.groups:
                for b in g["bits"]:
                    groups |= 1 << b
            known = _GROUP_RANKS[id(form)] = (form, groups, {})
        by_groups, held = known[2], word & known[1]
        ranks = by_groups.get(held)
        if ranks is None:       # both read the word's group bits alone
            if len(by_groups) >= 4096:
                by_groups.clear()
            unknown = any(bits_value(word, g["bits"]) not in g["values"] for g in form.groups) \
                or bool(_unplaced_tokens(form, word))
            away = sum(bits_value(word, g["bits"]) != g["seed"] for g in form.groups)
            ranks = by_groups[held] = (unknown, away)
        unexplained = (word & _INSTRUCTION_BITS & ~(form.mask | form.field_mask)).bit_count()
        return rank, ranks[0], neg_bits, unexplained, ranks[1], pos
    return table.form_at(min(matches, key=key)[1])


# id(form) -> (the form, kept alive; the bits of its groups, {a word's bits there: find_form's
# (unknown, away) for the form})
_GROUP_RANKS: dict[int, tuple] = {}


def _unplaced_tokens(form: Form, word: int) -> list[str]:
    """Tokens `word` holds in a group its form's layout does not print: turing's
    `LD.E.U16.SYS R0, [UR4]` form (probed from a word with no L1 hint) holds the hint group
    (bits 84-86: EF/EL/LU/EU/NA) outside its layout, and read `LD.E.EL.U16.SYS` as
    `LD.E.U16.SYS`; such a form does not read the word."""
    placed = {i for i in form.layout if not isinstance(i, str)}
    out: list[str] = []
    for gi, g in enumerate(form.groups):
        if gi not in placed:
            out += g["values"].get(bits_value(word, g["bits"]), {}).get("tokens", [])
    return out


# Modifier pairs nvdisasm prints as one name (docs/isa-facts.md): HFMA2's .FTZ and .FMZ
# groups set together are `.OOB` (fma.rn.oob); a form that holds them apart decodes to it.
COMBINED_TOKENS = {("HFMA2", frozenset(("FTZ", "FMZ"))): "OOB"}


def _combined_tokens(tokens: list[str]) -> list[str]:
    for (opcode, pair), name in COMBINED_TOKENS.items():
        if tokens[:1] == [opcode] and pair <= set(tokens):
            at = min(tokens.index(t) for t in pair)
            rest = [t for t in tokens if t not in pair]
            rest.insert(at, name)
            return rest
    return tokens


def _split_tokens(tokens: list[str]) -> list[list[str]]:
    """COMBINED_TOKENS undone: `.OOB` back to its pair, in each order (a form's order rules
    may fix one: `.F32.BF16_V2.FMZ.FTZ.SAT`, not `.FTZ.FMZ`); none if no name is combined."""
    for (opcode, pair), name in COMBINED_TOKENS.items():
        if tokens[:1] == [opcode] and name in tokens:
            at = tokens.index(name)
            return [tokens[:at] + list(order) + tokens[at + 1:]
                    for order in (sorted(pair, reverse=True), sorted(pair))]
    return []


def decode_view(word: int, arch: str = "sm_89", pc: int = 0) -> View:
    """The text view of a word (control bits: only the reuse flags show, as `.reuse`)."""
    return _decode_view(word, arch, pc, table_for(arch))[0]


def _decode_view(word: int, arch: str, pc: int, table) -> tuple[View, Form]:
    """decode_view's work: the view and the form that reads the word."""
    numbers = table.numbers
    form = find_form(table, word, arch)
    if form is None:
        raise DecodeError(f"word {word:#034x}: no {table.family} form has opcode bits "
                          f"{word & 0xfff:#05x} with these form bits")
    values = []
    for gi, g in enumerate(form.groups):
        v = bits_value(word, g["bits"])
        if v not in g["values"]:
            raise DecodeError(f"word {word:#034x} ({form.opcode}): bits {g['bits']} hold "
                              f"{v}, an encoding the table does not know")
        values.append(g["values"][v])
    if lost := _unplaced_tokens(form, word):
        raise DecodeError(f"word {word:#034x} ({form.opcode}): the form that reads it does not "
                          f"print its {'.'.join(lost)}")
    tokens: list[str] = []
    for item in form.layout:
        tokens.extend([item] if isinstance(item, str) else values[item].get("tokens", []))
    if form.order:
        tokens = tokens[:1] + _in_order(tokens[1:], form.order)
    if form.aliases:
        combo = _alias_combo(form, word, numbers)
        # a combination nvdisasm could not show during probing reads as the seed's
        tokens = apply_edits(tokens, form.aliases["table"].get(combo, []))
    tokens = _combined_tokens(tokens)
    _check_named(form.opcode, tokens[1:], arch, DecodeError)
    shapes = [s["shape"] for s in form.slots]
    for e in values:
        for k, sh in e.get("shapes", {}).items():
            shapes[int(k)] = sh
    texts: list[str | None] = []
    slot_targets: dict[int, int] = {}
    for k, slot in enumerate(form.slots):
        nums = []
        for f in slot["fields"]:
            if "float" in f:
                nums.append(float_text(bits_value(word, f["bits"]), half_kind(f["float"], tokens)))
            else:
                if "signed_by" in f:
                    f = signed_variant(f, [bits_value(word, g["bits"]) for g in form.groups])
                n = linear_value(word, f)
                if f.get("pcrel"):
                    n += pc
                    slot_targets[k] = n
                nums.append(n)
        if slot.get("optional") and shapes[k] == slot["hidden_shape"] and nums == slot["default"]:
            texts.append(None)
        else:
            texts.append(render_shape(shapes[k], nums, numbers))
    ctl = word >> CONTROL_SHIFT
    # nvdisasm shows reuse flags only when bit 109 (the no-yield bit) is set
    reuse_slots = {form.reuse[i] for i in range(4)
                   if ctl >> 4 & 1 and ctl >> (17 + i) & 1 and i in form.reuse}
    guard = texts[0]
    ops, reuse, targets = [], [], {}
    for k in range(1, len(texts)):
        if texts[k] is None:
            continue
        if k in reuse_slots:
            reuse.append(len(ops))
        if k in slot_targets:
            targets[len(ops)] = slot_targets[k]
        ops.append(texts[k])
    return View(guard, tokens, ops, reuse, targets), form


def decode_text(word: int, arch: str = "sm_89", pc: int = 0) -> str:
    return render_view(decode_view(word, arch, pc))


def _in_order(tokens: list[str], before: frozenset) -> list[str]:
    """Put the tokens (in group order) into nvdisasm's printed order: swap neighbours only
    where the probes saw them the other way round."""
    out = list(tokens)
    for _ in range(len(out)):
        swapped = False
        for i in range(len(out) - 1):
            if (out[i + 1], out[i]) in before:
                out[i], out[i + 1] = out[i + 1], out[i]
                swapped = True
        if not swapped:
            break
    return out


def _alias_combo(form: Form, word: int, numbers: Numbering) -> str:
    classes = []
    for k, j, kind, file in form.aliases["fields"]:
        classes.append(value_class(kind, linear_value(word, form.slots[k]["fields"][j]), file,
                                   numbers))
    return "/".join(classes)


# --- encode --------------------------------------------------------------------------

def _order(g: dict) -> list[int]:
    """Candidate values of a group, ptxas's usual choice (the seed's value) first."""
    return sorted(g["values"], key=lambda v: (v != g["seed"], v))


def _match_layout(form: Form, allowed: list[list[int]], target: list[str]) -> list[int] | None:
    """Choose group values so that the mnemonic tokens come out as `target`."""
    from collections import Counter
    chosen: dict[int, int] = {}
    if form.order:
        # tokens are printed in nvdisasm's order, not group by group: match as multisets
        need = Counter(target)
        literals = Counter(t for t in form.layout if isinstance(t, str))
        if literals - need:
            return None
        need -= literals
        items = [i for i in form.layout if not isinstance(i, str)]

        def printed(values: dict[int, int]) -> list[str]:
            toks: list[str] = []
            for item in form.layout:
                toks.extend([item] if isinstance(item, str)
                            else form.groups[item]["values"][values[item]].get("tokens", []))
            return toks[:1] + _in_order(toks[1:], form.order)

        def walk_set(i: int, rest: Counter) -> bool:
            if i == len(items):
                # the same tokens from other groups can print in another order (IMMA's
                # `.U8.S8` is not `.S8.U8`): the choice must print as the target
                return not +rest and printed(chosen) == target
            for v in allowed[items[i]]:
                toks = Counter(form.groups[items[i]]["values"][v].get("tokens", []))
                if not toks - rest:
                    chosen[items[i]] = v
                    if walk_set(i + 1, rest - toks):
                        return True
            return False

        if not walk_set(0, need):
            return None
        return [chosen.get(gi, allowed[gi][0] if allowed[gi] else -1)
                for gi in range(len(form.groups))]

    def walk(i: int, pos: int) -> bool:
        if i == len(form.layout):
            return pos == len(target)
        item = form.layout[i]
        if isinstance(item, str):
            return pos < len(target) and target[pos] == item and walk(i + 1, pos + 1)
        for v in allowed[item]:
            toks = form.groups[item]["values"][v].get("tokens", [])
            if target[pos:pos + len(toks)] == toks:
                chosen[item] = v
                if walk(i + 1, pos + len(toks)):
                    return True
        return False

    if not walk(0, 0):
        return None
    return [chosen.get(gi, allowed[gi][0] if allowed[gi] else -1)
            for gi in range(len(form.groups))]


def _align(form: Form, ops: list[str], shapes: dict[str, str]) -> list[str | None] | None:
    """Place the printed operands (`shapes`: each one's shape) into the form's slots
    (optional slots may be missing)."""
    slots = form.slots
    missing = len(slots) - len(ops)
    if missing < 0:
        return None
    opt = [k for k, s in enumerate(slots) if s.get("optional")]
    if missing > len(opt):
        return None

    def attempt(skip: set[int]) -> list[str | None] | None:
        it = iter(ops)
        out = [None if k in skip else next(it) for k in range(len(slots))]
        for k, o in enumerate(out):
            if o is not None and _kinds(shapes[o]) != _kinds(slots[k]["shape"]):
                return None
        return out

    from itertools import combinations
    for skip in combinations(opt[::-1], missing):   # fill earlier optional slots first
        out = attempt(set(skip))
        if out is not None:
            return out
    return None


@functools.lru_cache(maxsize=4096)
def _kinds(shape: str) -> tuple[str, ...]:
    """The register files and immediate kinds of an operand shape's holes, in order."""
    return tuple(re.findall(r"\{(\w+)\}", shape))


# (arch, tokens, operand shapes) -> [(form, its empty optional slots, tokens to encode)]: the
# ways the search tries for that spelling, in its order. Which of them encodes depends only on
# the spelling, but for the values (register numbers, immediates) filling the fields.
_CANDIDATES: dict[tuple, list[tuple]] = {}
# (arch, tokens, operand shapes, form, tokens to encode) of candidates whose word read back as
# the same text -> the read-back classes of those words (`_read_back_class`): later words of
# that shape and a class seen skip the read-back (but see _shares_fields)
_READS_BACK: dict[tuple, set] = {}
# (form, tokens, operand shapes) -> the group values that spell them (see _match_layout)
_GROUP_VALUES: dict[tuple, list[int] | None] = {}
# the same keys -> (the form, kept alive; the word with the groups' bits put)
_GROUP_WORDS: dict[tuple, tuple] = {}


_SHARED_FIELDS: dict[int, bool] = {}


def _shares_fields(form: Form) -> bool:
    """Does one field print as two operands (`BAR.SYNC R6, R6`)? Then which values encode
    depends on more than the operand shapes, and every word is read back to check."""
    known = _SHARED_FIELDS.get(id(form))
    if known is None:
        seen: set[int] = set()
        known = False
        for slot in form.slots:
            for f in slot["fields"]:
                bits = set(f["bits"])
                known = known or bool(bits & seen)
                seen |= bits
        _SHARED_FIELDS[id(form)] = known
    return known


# id(form) -> (the form, kept alive; its alias fields' (slot, field, kind, file), its optional
# slots' (field bits, the default's bits or None)): see _read_back_class
_VALUE_READINGS: dict[int, tuple] = {}


def _read_back_class(table, word: int, arch: str) -> tuple:
    """What of a word's reading can change with its field values alone, the operand shapes
    and modifiers fixed: the form that reads it (`IMAD R1, R2, 0x4, RZ` is read on sm_90 by
    another form than `IMAD R1, R1, 0x4, R2`), that form's group values, the alias nvdisasm
    prints (`IMAD R1, R1, 0x0, R2` reads back as `IMAD.MOV`, `0x1` as `IMAD.IADD`) and
    whether each optional operand sits at its default (then not printed). Words of one class
    read back alike, so a read-back (or a plan) made for one answers for its class alone."""
    form = find_form(table, word, arch)
    if form is None:
        return (None,)
    known = _VALUE_READINGS.get(id(form))
    if known is None:
        alias_fields = tuple(form.aliases["fields"]) if form.aliases else ()
        optional = []
        for slot in form.slots:
            if not slot.get("optional"):
                continue
            for f, n in zip(slot["fields"], slot["default"] or ()):
                d = None if "float" in f or "signed_by" in f or not isinstance(n, int) \
                    else linear_bits(n, f)
                optional.append((f["bits"], d))
        known = _VALUE_READINGS[id(form)] = (form, alias_fields, tuple(optional))
    _, alias_fields, optional = known
    groups = tuple(bits_value(word, g["bits"]) for g in form.groups)
    combo = tuple(value_class(kind, linear_value(word, form.slots[k]["fields"][j]), file,
                              table.numbers) for k, j, kind, file in alias_fields)
    # a default whose bits are not known here: the field's bits themselves
    at_default = tuple(bits_value(word, bits) == d if d is not None else bits_value(word, bits)
                       for bits, d in optional)
    return id(form), groups, combo, at_default


_WORDS: dict[tuple, tuple] = {}    # encode_view's words that do not depend on pc, with their table
_WORDS_KEPT = 1 << 16


def encode_view(view: View, arch: str = "sm_89", pc: int = 0) -> int:
    """The data bits (0..104, 126, 127) and reuse flags of an instruction's text view.
    Words of forms without a pc-relative field are kept by text: kernels repeat moves,
    NOPs and address arithmetic, and finding a form costs ~100 us."""
    table = table_for(arch)
    memo = template = None
    trace: list = []
    if not view.targets:
        memo = (arch, view.guard, tuple(view.tokens), tuple(view.operands), tuple(view.reuse))
        known = _WORDS.get(memo)
        if known is not None and known[0] is table:
            return known[1]
        template, immediates = _template(memo)
        if template is not None:
            plan = _PLANS.get(template)
            if plan is not None and plan[0] is table:
                word = _fill(plan, immediates, arch)
                if word is not None:
                    return word
    try:
        word, form = _encode_view(view, arch, pc, table, trace=trace)
    except EncodeError as first:
        trace = []
        # a table whose forms keep the pair apart (HFMA2 .FTZ.FMZ for .OOB)
        for split in _split_tokens(view.tokens):
            try:
                word, form = _encode_view(View(view.guard, split, view.operands, view.reuse, view.targets),
                                          arch, pc, table)
                break
            except EncodeError as e:
                first = e
        else:
            raise first
    if memo is not None and not _has_pc_field(form):
        if len(_WORDS) >= _WORDS_KEPT:
            _WORDS.clear()
        _WORDS[memo] = (table, word)
        # a template's first plan (or its first answer that none can be made) stays
        if template is not None and trace and template not in _PLANS:
            if len(_PLANS) >= _WORDS_KEPT:
                _PLANS.clear()
            _PLANS[template] = _plan(table, word, memo[3], trace, arch)
    return word


# (arch, guard, tokens, operand texts with each integer immediate None, reuse) ->
# (table, word, ((immediate's place among the immediates, its field's bits, the field), ...),
# the checks a filled word passes (`_value_checks`)) or None: the words of texts that differ
# only in their integer immediates
_PLANS: dict[tuple, tuple | None] = {}


def _template(memo: tuple) -> tuple[tuple | None, list[int]]:
    """encode_view's memo key with its integer immediates taken out, and their values; (None,
    []) when it has none."""
    immediates = []
    ops = memo[3]
    for o in ops:
        if o[:1] in "-0" and _HEX_INT.fullmatch(o):
            immediates.append(int(o, 16))
    if not immediates:
        return None, immediates
    holes = tuple(None if o[:1] in "-0" and _HEX_INT.fullmatch(o) else o for o in ops)
    return (memo[0], memo[1], memo[2], holes, memo[4]), immediates


def _plan(table, word: int, ops: tuple, trace: list, arch: str) -> tuple | None:
    """How a word of this template takes other integer immediates (see `_template`), or None
    where the search's choice could depend on their values. It could unless every form the
    search tried before the one that took the word failed for the operand shapes alone (not
    for a value out of a field's range), the form has no field two operands share (those
    words are read back each time), and each immediate fills a plain integer field. The
    plan's word read back as the text; a filled word is taken only where it reads back alike
    (`_read_back_class`): the checks are those the filled bits can change."""
    form, positions, group_values, shape_only = trace
    if not shape_only or _shares_fields(form):
        return None
    place = {}
    for j, o in enumerate(ops):
        if o[:1] in "-0" and _HEX_INT.fullmatch(o):
            place[j + 1] = len(place)        # position 0 is the guard
    fills = []
    for k, j in enumerate(positions):
        if j not in place:
            continue
        fields = form.slots[k]["fields"]
        if not fields:
            continue
        f = fields[0]
        if "float" in f or f.get("pcrel"):
            return None
        spec = signed_variant(f, group_values) if "signed_by" in f else f
        fills.append((place[j], f["bits"], spec))
    checks = _value_checks(table, word, fills, arch)
    return None if checks is None else (table, word, tuple(fills), checks)


def _value_checks(table, word: int, fills: list, arch: str) -> tuple | None:
    """The plan's checks of a filled word: ("form", mask, value, matched) for each form whose
    form bits the immediates fill; (immediate's place, kind, file, class) where an alias
    field of the reading form is an immediate's own field. None (no plan: each word is
    searched and read back) where the filled bits could change how find_form ranks the
    matching forms, the reading form's groups, another alias field or an optional operand."""
    reading = find_form(table, word, arch)
    filled = 0
    for _, bits, _ in fills:
        for b in bits:
            filled |= 1 << b
    whole = bool(filled & 0xfff)     # (the forms are indexed by bits 0..11)
    checks = []
    # which forms match must not change (a form whose bits fix an immediate's, sm_89's IMAD
    # with bit 48 among its form bits: the filled word must match it as the plan's did), nor
    # how find_form ranks the matches (by their groups' values and the bits they leave
    # unexplained)
    for low_mask, by_value in table.low_bits_index(arch).items():
        for pos, mask, value, _ in by_value.get(word & low_mask, ()):
            if mask & filled:
                checks.append(("form", mask, value, word & mask == value))
            if word & mask == value:
                other = table.form_at(pos)
                whole = whole or bool(filled & ~other.field_mask) or \
                    any(filled >> b & 1 for g in other.groups for b in g["bits"])
    own = {tuple(bits): (i, spec) for i, bits, spec in fills}
    if reading is not None and not whole:
        for k, j, kind, file in (reading.aliases["fields"] if reading.aliases else ()):
            f = reading.slots[k]["fields"][j]
            if not any(filled >> b & 1 for b in f["bits"]):
                continue
            i, spec = own.get(tuple(f["bits"]), (None, None))
            if i is None or "signed_by" in f or spec is not f and spec != f:
                whole = True
                break
            checks.append((i, kind, file, value_class(kind, linear_value(word, f), file,
                                                      table.numbers)))
        whole = whole or any(slot.get("optional") and any(filled >> b & 1 for f in slot["fields"]
                                                           for b in f["bits"])
                             for slot in reading.slots)
    if whole:
        return None
    return tuple(checks)


def _fill(plan: tuple, immediates: list[int], arch: str) -> int | None:
    """The plan's word with these immediates in their fields; None when one does not fit or
    the word would read back otherwise than the plan's (another alias, another form reading
    it): the search then decides, as in a process that never made the plan."""
    word = plan[1]
    for i, bits, spec in plan[2]:
        b = linear_bits(immediates[i], spec)
        if b is None:
            return None
        word = put_bits(word, bits, b)
    for i, kind, file, wanted in plan[3]:
        if i == "form":
            if (word & kind == file) != wanted:
                return None
        elif value_class(kind, immediates[i], file, plan[0].numbers) != wanted:
            return None
    return word


_PC_FIELDS: dict[int, tuple] = {}     # id(form) -> (the form, kept alive; has a pc field)


def _has_pc_field(form: Form) -> bool:
    known = _PC_FIELDS.get(id(form))
    if known is None:
        known = _PC_FIELDS[id(form)] = (form, any(f.get("pcrel") for slot in form.slots
                                                  for f in slot["fields"]))
    return known[1]


def _encode_view(view: View, arch: str, pc: int, table, placed_out: list | None = None,
                 trace: list | None = None) -> tuple[int, Form]:
    """encode_view's search: the word and the form that took it (and, into `placed_out`, the
    printed operand, guard first, that each of the form's slots took; None where empty; into
    `trace`, the form, the position among the printed operands, guard first, that each slot
    took (None where empty), the form's group values, and whether every form tried before
    failed for the operands' shapes alone)."""
    name = ".".join(view.tokens)
    _check_named(view.tokens[0], view.tokens[1:], arch, EncodeError)
    forms = table.forms_of(view.tokens[0], arch)
    if not forms:
        raise EncodeError(f"{name}: unknown mnemonic on {arch}")
    ops = [view.guard or "PT", *view.operands]
    # each operand's text parsed once; shapes compare without a constant's gap (`ungapped`)
    numbers = table.numbers
    parsed_ops = {o: _shape_of(o, numbers) for o in ops}
    key = (arch, tuple(view.tokens), tuple(parsed_ops[o][0] for o in ops))
    candidates = _CANDIDATES.get(key)
    if candidates is None:
        shapes = {o: parsed[0] for o, parsed in parsed_ops.items()}
        candidates = _CANDIDATES[key] = _candidates(forms, ops, shapes, view.tokens)
    errors = []
    want = None
    shape_only = True
    for form, skip, tokens in candidates:
        it = iter(ops)
        placed = [None if k in skip else next(it) for k in range(len(form.slots))]
        values: list = []
        try:
            word = _encode_form(form, placed, View(view.guard, tokens, view.operands, []),
                                pc, parsed_ops, numbers, values)
        except EncodeError as e:
            shape_only = shape_only and isinstance(e, _ShapeMismatch)
            errors.append(str(e))
            continue
        checked = (key, id(form), tuple(tokens))
        classes = _READS_BACK.get(checked)
        if placed_out is not None:
            placed_out[:] = placed
        if trace is not None:
            at = iter(range(len(ops)))
            trace[:] = [form, [None if k in skip else next(at) for k in range(len(form.slots))],
                        values, shape_only]
        if classes is not None and not _shares_fields(form) and \
                _read_back_class(table, word, arch) in classes:
            return word, form
        # the table must read the word back as the same text (aliases, hidden operands)
        try:
            back = _decode_view(word, arch, pc, table)[0]
        except DecodeError as e:
            shape_only = False
            errors.append(str(e))
            continue
        want = want or canonical(View(view.guard, _combined_tokens(view.tokens), view.operands,
                                      view.reuse, view.targets), numbers)
        if canonical(back, numbers) == want:
            _READS_BACK.setdefault(checked, set()).add(_read_back_class(table, word, arch))
            return word, form
        shape_only = False
        errors.append(f"would read back as {render_view(back)!r}")
    # a word that encodes but reads back otherwise (nvdisasm's alias, `IMAD.MOV` for a zero
    # multiplier) says more than the forms that could not take the operands at all
    detail = next((f": {e} (nvdisasm's spelling of these bits)" for e in errors
                   if e.startswith("would read back as")), None) or \
        (f": {errors[0]}" if errors else ": no form takes these operands")
    raise EncodeError(f"{render_view(view)}: cannot encode on {arch}{detail}")


def _candidates(forms: list[Form], ops: list[str], shapes: dict[str, str],
                printed: list[str]) -> list[tuple]:
    """(form, empty optional slots, tokens to encode) for each form whose slots take the
    operands' shapes, and each way back from an alias, in the order encode_view tries them:
    the first that encodes the values and reads back as the same text wins."""
    out = []
    # a form holding every printed operand before one that hides an operand at its default:
    # sm_90's `BAR.SYNC.DEFER_BLOCKING 0x0` is the id-only word (opcode 0xb1d) that ptxas
    # writes, although the id-and-count-register form (0x91d) with the count RZ prints alike
    aligned = [(form, placed) for form in forms
               if (placed := _align(form, ops, shapes)) is not None]
    # then one whose seed prints the modifiers wanted (its bits outside the printed ones are
    # ptxas's for that text: sm_75's `LD.E.EL.U8.SYS R0, [UR4]` sets bit 90, which nvdisasm
    # does not print, where a `LD.EF.128.CONSTANT` seed of the same pattern holds it clear)
    want = set(printed[1:])
    aligned.sort(key=lambda fp: (sum(o is None for o in fp[1]), _seed_distance(fp[0], want)))
    for form, placed in aligned:
        skip = frozenset(k for k, o in enumerate(placed) if o is None)
        if form.aliases:      # the printed mnemonic may be an alias: try each way back
            table_ = form.aliases["table"]
            order = sorted(table_, key=lambda c: c != form.aliases["seed"])
            ways = [undo_edits(printed, table_[c], form.tokens) for c in order]
        else:
            ways = [printed]
        out.extend((form, skip, tokens) for tokens in ways if tokens is not None)
    return out


def _seed_distance(form: Form, want: set[str]) -> int:
    """How many of the form's groups print, at its seed's value, a token not wanted."""
    return sum(any(t not in want for t in g["values"].get(g["seed"], {}).get("tokens", ()))
               for g in form.groups)


class _ShapeMismatch(EncodeError):
    """A form that cannot take these modifiers and operand shapes, whatever their values."""


def _encode_form(form: Form, placed: list[str | None], view: View, pc: int,
                 parsed_ops: dict[str, tuple], numbers: Numbering, values_out: list | None = None) -> int:
    parsed = []
    for k, o in enumerate(placed):
        if o is None:
            parsed.append((form.slots[k]["hidden_shape"], form.slots[k]["default"]))
        else:
            parsed.append(parsed_ops[o] if o in parsed_ops else _shape_of(o, numbers))
    key = (id(form), tuple(view.tokens), tuple(p[0] for p in parsed))
    if key in _GROUP_VALUES:
        values = _GROUP_VALUES[key]
    else:
        values = _search_group_values(form, parsed, placed, view)
        _GROUP_VALUES[key] = values
    if values is None or -1 in values:
        raise _ShapeMismatch(f"modifiers .{'.'.join(view.tokens[1:])} have no encoding")
    if values_out is not None:
        values_out[:] = values
    known = _GROUP_WORDS.get(key)
    if known is not None and known[0] is form:
        word = known[1]
    else:                   # the groups' bits depend on the form and the key alone: put once
        word = form.base & ~form.field_mask & ~CONTROL_MASK
        for g, v in zip(form.groups, values):
            word = put_bits(word, g["bits"], v)
        _GROUP_WORDS[key] = (form, word)
    for k, slot in enumerate(form.slots):
        for f, n in zip(slot["fields"], parsed[k][1]):
            if "float" in f:
                bits = float_bits(n, half_kind(f["float"], view.tokens))
                if bits is None or bits >> len(f["bits"]):
                    raise EncodeError(f"float immediate {n} is not exactly encodable")
            else:
                n = n - pc if f.get("pcrel") else n
                bits = linear_bits(n, signed_variant(f, values) if "signed_by" in f else f)
                if bits is None:
                    raise EncodeError(f"operand {k} `{placed[k]}`: value {n:#x} out of range "
                                      f"or misaligned for its field")
            word = put_bits(word, f["bits"], bits)
    return word


# The whole operand an integer immediate: operand_shape's `{i}` (fields._TOKEN's `int`)
_HEX_INT = re.compile(r"-?0x[0-9a-f]+")
# (operand text, the table's Numbering) -> (ungapped shape, its numbers)
_SHAPES: dict[tuple[str, Numbering], tuple[str, tuple]] = {}


def _shape_of(op: str, numbers: Numbering) -> tuple[str, tuple]:
    """`operand_shape(op, numbers)` without a constant's gap (`ungapped`), kept by text and
    numbering (the numbers as a tuple: shared by every instruction naming the operand): `R4`,
    `c[0x0][0x160]` recur across instructions whose texts differ, and the regular
    expressions cost ~10 us an operand. URZ's number depends on the table (63, or 255 with
    8-bit fields), so its Numbering is part of the key."""
    key = (op, numbers)
    known = _SHAPES.get(key)
    if known is None:
        if _HEX_INT.fullmatch(op):       # an integer immediate: `{i}`, kept by none
            return "{i}", (int(op, 16),)
        if len(_SHAPES) >= _WORDS_KEPT:
            _SHAPES.clear()
        shape, nums = operand_shape(op, numbers)
        known = _SHAPES[key] = (ungapped(shape), tuple(nums))
    return known


def _search_group_values(form: Form, parsed, placed, view: View) -> list[int] | None:
    """The group values for these modifiers and operand shapes (an operand shape no group
    can produce raises EncodeError)."""
    allowed = []
    for gi, g in enumerate(form.groups):
        # a group's candidates depend only on the shapes of the operands it touches, which
        # many spellings of the form share (the first compile in a process meets them all)
        key = (id(form), gi, tuple(parsed[k][0] for k in g["touched"]))
        choices = _GROUP_CHOICES.get(key)
        if choices is None:
            choices = _GROUP_CHOICES[key] = _group_choices(form, gi, key[2])
        allowed.append(choices)
    # an operand shape no group can produce (e.g. `-R4` where the form has no negate bit)
    owned = {k for g in form.groups for k in g["touched"]}
    for k, (shape, _n) in enumerate(parsed):
        if k not in owned and shape != ungapped(form.slots[k]["shape"]):
            raise _ShapeMismatch(f"operand {k} `{placed[k]}` has no encoding in this form")
    return _match_layout(form, allowed, view.tokens)


# (form, group index, shapes of the operands the group touches) -> its candidate values
_GROUP_CHOICES: dict[tuple, tuple[int, ...]] = {}
# id(form) -> (the form, kept alive so that its id is never reused while these are cached;
# attributes each group controls per operand, how many groups control each; each group's
# values in _order with the shapes they give the operands it touches)
_CONTROLS: dict[int, tuple[Form, list, dict, list]] = {}


def _group_choices(form: Form, gi: int, wanted: tuple[str, ...]) -> tuple[int, ...]:
    """The values of group `gi` that give the wanted shapes of the operands it touches,
    exactly first, then those agreeing in the attributes the group controls."""
    if id(form) not in _CONTROLS:
        all_controls = [_controlled_attributes(form, g) for g in form.groups]
        owners: dict[tuple[int, int], int] = {}
        for controls in all_controls:
            for k, attrs in controls.items():
                for i in attrs:
                    owners[k, i] = owners.get((k, i), 0) + 1
        givens = []
        for g in form.groups:
            values = []
            for v in _order(g):
                sh = g["values"][v].get("shapes", {})
                values.append((v, tuple(ungapped(sh.get(str(k), form.slots[k]["shape"]))
                                        for k in g["touched"])))
            givens.append(values)
        _CONTROLS[id(form)] = form, all_controls, owners, givens
    _, all_controls, owners, givens = _CONTROLS[id(form)]
    g, controls = form.groups[gi], all_controls[gi]
    exact, partial = [], []
    shared = {k: frozenset(i for i in attrs if owners[k, i] > 1) for k, attrs in controls.items()}
    agrees: dict[tuple, bool] = {}      # many values give the same shapes: judge each once
    for v, given in givens[gi]:
        if given == wanted:
            exact.append(v)
            continue
        verdict = agrees.get(given)
        if verdict is None:
            verdict = agrees[given] = all(
                _agrees(x, w, controls[k], shared[k], form.slots[k]["shape"])
                for x, w, k in zip(given, wanted, g["touched"]))
        if verdict:
            partial.append(v)
    return tuple(exact + partial)


_SHAPE_PARTS = re.compile(r"^(?P<prefix>[-!~]*)(?P<abs>\|?)(?P<core>.*?)\|?(?P<suffix>(?:\.[\w]+)*)$")


@functools.lru_cache(maxsize=4096)
def _attributes(shape: str) -> tuple[str, bool, str, str]:
    """An operand shape split into what groups can set independently: the prefix (`-`,
    `!`, `~`), |abs|, the core (`{R}`), and the selector suffix (`.H0_H0`, `.F32` ...)."""
    m = _SHAPE_PARTS.match(ungapped(shape))
    return m["prefix"], bool(m["abs"]), m["core"], m["suffix"]


def _controlled_attributes(form: Form, g: dict) -> dict[int, frozenset[int]]:
    """For each operand a group touches, which of its shape attributes the group's values
    vary (several groups can shape one operand: HFMA2's `-R0.H1_H1` takes its sign and its
    selector from different bits)."""
    out = {}
    for k in g["touched"]:
        seen = {_attributes(e.get("shapes", {}).get(str(k), form.slots[k]["shape"]))
                for e in g["values"].values()}
        seen.add(_attributes(form.slots[k]["shape"]))
        out[k] = frozenset(i for i in range(4) if len({a[i] for a in seen}) > 1) | {2}
    return out


def _agrees(value_shape: str, wanted: str, attributes: frozenset[int], shared: frozenset[int],
            default: str) -> bool:
    """Does a group value give the wanted operand shape in the attributes it controls, or,
    for one that another group controls too, leave it at the slot's default for that group
    to set? (The whole word is read back through the decoder afterwards, so a wrong
    combination cannot slip through.)"""
    if ungapped(value_shape) == ungapped(wanted):
        return True
    a, b, d = _attributes(value_shape), _attributes(wanted), _attributes(default)
    return all(a[i] == b[i] or (i in shared and a[i] == d[i]) for i in attributes)


def encode_text(text: str, arch: str = "sm_89", pc: int = 0, control: Control | None = None) -> int:
    view = parse_view(text)
    word = encode_view(view, arch, pc)
    ctl = control or Control()
    return word | ctl.pack() << CONTROL_SHIFT


# --- the Instruction model -----------------------------------------------------------

_LABEL = re.compile(r"`\(([^)]*)\)")


def encode(ins: Instruction, arch: str = "sm_89", pc: int = 0,
           relocations: list | None = None) -> int:
    """The 128-bit word of an instruction at byte offset `pc` (control bits from
    `ins.control`; `.reuse` flags on operands are taken from the control field).

    Relocated operands (`32@lo(sym)`, `CALL.ABS` to another function's symbol) are encoded
    as the zero field the linker or loader patches, and `(operand index, operand)` is appended
    to `relocations`; without that list they raise EncodeError, so that a target left
    unresolved by mistake never becomes a silent zero. A NaN immediate whose `Imm.value`
    holds raw field bits (what `decode` reads from a payload nvdisasm prints as `+QNAN`)
    gets those bits."""
    family_of(arch)
    ins, relocated = without_relocations(ins, arch)
    if relocated:
        if relocations is None:
            raise EncodeError(f"{ins.mnemonic}: operand {relocated[0][1]} needs a relocation "
                              "(pass relocations=[] to encode its field as zero)")
        relocations.extend(relocated)
    payloads = [op.value for op in ins.operands if _is_nan(op)]
    labels = [op for op in ins.operands if isinstance(op, Label)]
    for lab in labels:
        if lab.offset is None:
            raise EncodeError(f"{ins.mnemonic}: branch target {lab.name} is not resolved "
                              "to an offset")
    why = misaligned(ins)
    if why is not None:
        raise EncodeError(f"{sass_text.format_instruction(replace(ins, control=Control()))}: "
                          f"{why}")
    shown = _shown_descriptor_word(ins, arch, pc)
    if shown is not None:
        return shown | ins.control.pack() << CONTROL_SHIFT
    desc, ins = _without_hidden_descriptor(ins, arch)
    view = None if labels else _direct_view(ins)
    text = None         # printed only where a message or the slower way needs it
    if view is None:
        text = _text(ins, labels)
    try:
        if view is None:
            view = parse_view(text)
            view.reuse = []
        word = encode_view(view, arch, pc)
    except EncodeError:
        raise
    except (ValueError, IndexError, KeyError) as e:
        raise EncodeError(f"{text or _text(ins, labels)}: {e}") from None
    bits = _descriptor_bits(word, arch)
    if desc is not None and bits is None:
        raise EncodeError(f"{text or _text(ins, labels)}: this form has no "
                          f"desc[{desc.file}{desc.index}] field")
    if bits is not None:
        word = put_bits(word, bits, DEFAULT_DESCRIPTOR[family_of(arch)] if desc is None
                        else desc.index)
    if any(payloads):
        word = _put_nan_payloads(word, arch, payloads, text or _text(ins, labels))
    return word | ins.control.pack() << CONTROL_SHIFT


def _text(ins: Instruction, labels: list) -> str:
    """The instruction's text with its labels' offsets (the text never shows the control
    bits)."""
    it = iter(labels)
    return _LABEL.sub(lambda m: f"{next(it).offset:#x}", sass_text.format_instruction(ins))


# operand -> its text as `parse_view` cuts it out of the instruction's text (`.reuse`
# removed), or None where it would not come back as one operand of its own
_OPERAND_TEXTS: dict = {}


def _direct_view(ins: Instruction) -> View | None:
    """`parse_view(format_instruction(ins))` (reuse flags dropped) built from the operands'
    own texts, or None where that text would not cut back into the same operands (a
    register-relative target's space separator, an operand text with a comma or an
    unbalanced bracket of its own). The instruction's text is a new string wherever an
    immediate differs, and printing then cutting it costs more than the search that follows
    for forms already met."""
    if ins.opcode in sass_text.REGISTER_RELATIVE_TARGET:
        return None
    texts = []
    for op in ins.operands:
        if type(op) is Imm and op.text is None:
            texts.append(sass_text._format_hex(op.value))
            continue
        try:
            text = _OPERAND_TEXTS.get(op, _UNSEEN)
        except TypeError:       # an operand with a list inside: not kept
            return None
        if text is _UNSEEN:
            if len(_OPERAND_TEXTS) >= _WORDS_KEPT:
                _OPERAND_TEXTS.clear()
            text = _OPERAND_TEXTS[op] = _alone(sass_text.format_operand(op))
        if text is None:
            return None
        texts.append(text)
    guard = None
    if ins.guard is not None:
        guard = ("!" if ins.guard.inv else "") + sass_text.register_name(ins.guard)
    return View(guard, ins.mnemonic.split("."), texts, [])


_UNSEEN = object()


def _alone(text: str) -> str | None:
    """An operand's printed text as `parse_view` gives it back when it stands between
    commas: its `.reuse` removed; None for an empty text, one with spaces at its ends, or
    one whose commas or brackets `split_operands` would read as the list's."""
    if not text or text != text.strip(" ") or text.endswith(";") or split_operands(text) != [text]:
        return None
    depth = 0
    for ch in text:
        depth += ch in "[({"
        depth -= ch in "])}"
        if depth < 0:
            return None
    if depth:
        return None
    return text.replace(".reuse", "") if ".reuse" in text else text


def slots_taken(ins: Instruction, arch: str) -> tuple[dict, ...] | None:
    """The form slot (its table entry: shape, fields) each operand of `ins` takes in the word
    `encode` would write, or None when it encodes no word or its text does not print one
    operand per operand. Forms are matched by operand shape, so this says which operand
    became, say, a texture's handle (a uniform register in a coordinate's place would)."""
    from . import sass_text
    if without_relocations(ins, arch)[1] or any(isinstance(op, Label) for op in ins.operands):
        return None
    desc, bare = _without_hidden_descriptor(ins, arch)
    try:
        view = parse_view(sass_text.format_instruction(replace(bare, control=Control())))
        view.reuse = []
        table = table_for(arch)
        placed: list = []
        _, form = _encode_view(view, arch, 0, table, placed)
    except (EncodeError, ValueError, IndexError, KeyError):
        return None
    if len(view.operands) != len(bare.operands):
        return None
    taken = [form.slots[k] for k, o in enumerate(placed) if o is not None][1:]   # (the guard first)
    return tuple(taken) if len(taken) == len(bare.operands) else None


def without_relocations(ins: Instruction, arch: str | None = None) -> tuple[Instruction, list[tuple[int, object]]]:
    """`ins` with its relocated operands as the zero immediate the word holds under the
    relocation, and the (operand index, operand) of each: a `Reloc` (`32@hi(sym)`), a
    `CALL.ABS`/`JMP.ABS` target that is a symbol, not an offset (a call to another function
    of a relocatable cubin), and a module `.const` variable's constant (`ConstRef.reloc`:
    offset 0, and bank 0 where the relocated field holds the bank too)."""
    ops, found = [], []
    absolute = "ABS" in ins.modifiers
    for i, op in enumerate(ins.operands):
        if isinstance(op, Reloc) or (absolute and isinstance(op, Label) and op.offset is None):
            found.append((i, op))
            op = Imm(0)
        elif isinstance(op, ConstRef) and op.reloc is not None:
            found.append((i, op))
            keeps_bank = target(arch).const_relocation[2] if arch is not None else True
            op = replace(op, offset=0, bank=op.bank if keeps_bank else 0, reloc=None)
        ops.append(op)
    return (replace(ins, operands=tuple(ops)) if found else ins), found


def _is_nan(op) -> bool:
    return isinstance(op, Imm) and op.text is not None and op.text.strip().lstrip("+-") in (
        "QNAN", "NAN", "SNAN")


def _nan_fields(form: Form, word: int) -> list[tuple[list[int], str]]:
    """(bits, float kind) of each float field of `form` whose value in `word` is a NaN, in
    operand order."""
    return [(f["bits"], f["float"]) for slot in form.slots for f in slot["fields"]
            if "float" in f and float_text(bits_value(word, f["bits"]), f["float"]).strip()
            .lstrip("+-") == "QNAN"]


def _put_nan_payloads(word: int, arch: str, payloads: list[int], text: str) -> int:
    """Put the raw bits of NaN immediates (0: the default quiet NaN) into their fields."""
    form = find_form(table_for(arch), word, arch)
    fields = _nan_fields(form, word) if form is not None else []
    if len(fields) != len(payloads):
        raise EncodeError(f"{text}: {len(payloads)} NaN immediates but {len(fields)} NaN "
                          "fields in the word")
    for (bits, kind), payload in zip(fields, payloads):
        if not payload:
            continue
        if payload >> len(bits) or not float_text(payload, kind).strip().endswith("NAN"):
            raise EncodeError(f"{text}: {payload:#x} is not a NaN of the field's format")
        word = put_bits(word, bits, payload)
    return word


def _with_nan_payloads(ops: tuple, word: int, arch: str) -> tuple:
    """`ops` with each NaN immediate's raw field bits in `Imm.value` where they are not the
    quiet NaN a `+QNAN` text encodes to (nvdisasm prints every NaN alike; ptxas writes
    0x7ff00000 and 0x7ff80000 as well as 0x7fc00000)."""
    if not any(_is_nan(op) for op in ops):
        return ops
    form = find_form(table_for(arch), word, arch)
    fields = _nan_fields(form, word) if form is not None else []
    nans = [i for i, op in enumerate(ops) if _is_nan(op)]
    if len(fields) != len(nans):
        return ops
    out = list(ops)
    for i, (bits, kind) in zip(nans, fields):
        raw = bits_value(word, bits)
        if raw != float_bits(ops[i].text, kind):
            out[i] = replace(ops[i], value=raw)
    return tuple(out)


def _descriptor_bits(word: int, arch: str) -> list[int] | None:
    """The bits of `word` that hold its hidden memory-descriptor register, if its form has
    them (they must be neither form-identifying nor operand/modifier bits)."""
    hidden = HIDDEN_DESCRIPTOR_BITS.get(family_of(arch))
    if not hidden:
        return None
    table = table_for(arch)
    common, under, forms = _hiding_forms(table, arch, hidden)
    if word & common not in under or not any(word & mask in values for mask, values in forms):
        return None         # find_form can only find a form whose opcode hides nothing
    form = find_form(table, word, arch)
    if form is None:
        return None
    bits = HIDDEN_DESCRIPTOR_BITS.get(family_of(arch), {}).get(form.opcode)
    used = form.mask | form.field_mask
    if bits is None or any(used >> b & 1 for b in bits):
        return None
    return list(bits)


_HIDING: dict[tuple[int, str], tuple] = {}   # (id(table), arch) -> (table, ((mask, value), ...))


def _hiding_forms(table, arch: str, hidden: dict) -> tuple[int, frozenset, tuple[tuple[int, frozenset], ...]]:
    """(mask, the values under it) of the forms `find_form` may answer on `arch` whose
    opcode hides a descriptor: a word none of them matches has no hidden descriptor
    (find_form costs ~100 us a word; most words are not memory instructions). First the
    bits all those masks share and the values under them: a word that matches a form
    matches one of those (one test rules out most words, whose opcode bits differ)."""
    known = _HIDING.get((id(table), arch))
    if known is None or known[0] is not table:
        by_mask: dict[int, set[int]] = {}
        for op in sorted(hidden):
            for f in table.forms_of(op, arch):
                by_mask.setdefault(f.mask, set()).add(f.value)
        common = -1
        for mask in by_mask:
            common &= mask
        if not by_mask:
            common = 0
        under = frozenset(v & common for values in by_mask.values() for v in values)
        known = _HIDING[(id(table), arch)] = (table, (common, under, tuple(
            (mask, frozenset(values)) for mask, values in sorted(by_mask.items()))))
    return known[1]


def _shown_descriptor_word(ins: Instruction, arch: str, pc: int) -> int | None:
    """The word of a memory instruction that names its descriptor register
    (`STG.E desc[UR4][R14.64+0xa0], R5`, `LDG.E.128 R12, desc[UR6][R14.64]`) in a form whose
    descriptor is a printed operand (sm_8x: bit 101 set; nvdisasm prints `desc[..]` only
    then), or None: a named descriptor is the shown operand unless it is the hidden field
    (`Mem.desc_hidden`: `decode` of a word without bit 101 and a non-default register)."""
    default = DEFAULT_DESCRIPTOR.get(family_of(arch))
    if default is None or ins.opcode not in HIDDEN_DESCRIPTOR_BITS.get(family_of(arch), {}):
        return None
    if not any(isinstance(op, Mem) and op.desc is not None and op.desc.file == "UR"
               and not op.desc_hidden for op in ins.operands):
        return None
    if any(isinstance(op, Label) for op in ins.operands) or any(_is_nan(op) for op in ins.operands):
        return None
    try:
        view = parse_view(sass_text.format_instruction(replace(ins, control=Control())))
        view.reuse = []
        word = encode_view(view, arch, pc)
    except (EncodeError, ValueError, IndexError, KeyError):
        return None
    return word if _descriptor_bits(word, arch) is None else None


def _without_hidden_descriptor(ins: Instruction, arch: str):
    """(the descriptor register, `ins` with it removed) when `ins`'s opcode hides it in text
    on `arch`; (None, ins) otherwise."""
    if ins.opcode not in HIDDEN_DESCRIPTOR_BITS.get(family_of(arch), {}):
        return None, ins
    desc, ops = None, []
    for op in ins.operands:
        if isinstance(op, Mem) and op.desc is not None:
            if op.desc.file != "UR" or not 0 <= op.desc.index < 64:
                raise EncodeError(f"{ins.mnemonic}: memory descriptor must be a uniform "
                                  f"register UR0..UR63, not {op.desc!r}")
            desc, op = op.desc, replace(op, desc=None)
        ops.append(op)
    return desc, replace(ins, operands=tuple(ops))


_LAST_HEX = re.compile(r"-?0x[0-9a-f]+(?!.*0x)")


_DECODED: dict[tuple, tuple] = {}   # decode's instructions: (word, arch[, pc]) -> (table, instruction)
_DECODED_KEPT = 1 << 16


def decode(word: int, arch: str = "sm_89", pc: int = 0) -> Instruction:
    """The instruction a word holds at byte offset `pc`. Branch targets come back as
    `Label(name=".L_<hex offset>", offset=<offset>)`: a word holds no label names.

    Instructions are immutable, so each is decoded once per word and arch (and offset, for
    a form with a pc-relative field) and then shared: every kernel repeats its prologue,
    moves and address arithmetic, and decoding one costs ~100-300 us."""
    family_of(arch)
    table = table_for(arch)
    known = _DECODED.get((word, arch)) or _DECODED.get((word, arch, pc))
    if known is not None and known[0] is table:
        return known[1]
    ins, form = _decode(word, arch, pc, table)
    if len(_DECODED) >= _DECODED_KEPT:
        _DECODED.clear()
    _DECODED[(word, arch, pc) if _has_pc_field(form) else (word, arch)] = (table, ins)
    return ins


def _decode(word: int, arch: str, pc: int, table) -> tuple[Instruction, Form]:
    from . import sass_text
    view, form = _decode_view(word, arch, pc, table)
    for pos, target in view.targets.items():
        view.operands[pos] = _LAST_HEX.sub(f"`(.L_{target:x})", view.operands[pos], count=1)
    reuse, view.reuse = view.reuse, []
    try:
        ins = sass_text.parse_instruction(render_view(view))
    except ValueError as e:
        raise DecodeError(f"word {word:#034x}: table text {render_view(view)!r} does not "
                          f"parse: {e}") from None
    ops = tuple(Label(op.name, int(op.name[3:], 16)) if isinstance(op, Label)
                and op.name.startswith(".L_") and op.name[3:].isalnum() else op
                for op in ins.operands)
    ctl = Control.unpack(word >> CONTROL_SHIFT)
    ins = replace(ins, operands=_with_nan_payloads(_with_descriptor(ops, word, arch), word, arch),
                  control=ctl)
    return _with_reuse(ins, reuse), form


def _with_descriptor(ops: tuple, word: int, arch: str) -> tuple:
    """`ops` with the hidden descriptor register in its memory operand, when it is not the
    default one (so the usual case reads as nvdisasm prints)."""
    from .model import Mem, Reg
    bits = _descriptor_bits(word, arch)
    if bits is None:
        return ops
    value = bits_value(word, bits)
    if value == DEFAULT_DESCRIPTOR[family_of(arch)]:
        return ops
    mems = [i for i, op in enumerate(ops) if isinstance(op, Mem)]
    # the global-memory address (LDGSTS's second: `[R2], [R6.64]`)
    at = next((i for i in mems if ops[i].base is not None and "64" in ops[i].base.suffix),
              mems[0] if mems else None)
    return tuple(replace(op, desc=Reg("UR", value), desc_hidden=True) if i == at and op.desc is None else op
                 for i, op in enumerate(ops))


def as_text_shows(ins: Instruction, arch: str, keep_shown: bool = False) -> Instruction:
    """`ins` as far as `arch`'s nvdisasm text can show it: without the `desc[URx]` memory
    descriptor where nvdisasm hides it (sm_8x; `keep_shown`: but a descriptor `decode` read
    from a shown operand, not `Mem.desc_hidden`, which nvdisasm prints). For comparing with
    nvdisasm's text; the descriptor itself round-trips through `decode`/`encode` and our own
    printer), and without a NaN immediate's payload (every NaN prints as `+QNAN`/`-QNAN`)."""
    from .model import Mem
    hides_desc = family_of(arch) in HIDDEN_DESCRIPTOR_BITS
    ops = tuple(replace(op, desc=None) if hides_desc and isinstance(op, Mem) and op.desc is not None
                and not (keep_shown and not op.desc_hidden)
                else replace(op, value=0) if _is_nan(op) else op for op in ins.operands)
    return replace(ins, operands=ops)


def _with_reuse(ins: Instruction, positions: list[int]) -> Instruction:
    from .model import Reg
    ops = list(ins.operands)
    for pos in positions:
        if pos < len(ops) and isinstance(ops[pos], Reg):
            ops[pos] = replace(ops[pos], reuse=True)
    return replace(ins, operands=tuple(ops))
