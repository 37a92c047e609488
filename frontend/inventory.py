"""The PTX instruction inventory: every form of every instruction, as data.

    from ptx2sass.frontend import inventory
    for form in inventory.forms():
        form.opcode, form.modifiers, form.types, form.operands, form.min_ptx, form.min_sm

`ptx_inventory.json` is generated from `ptx_isa.spec` by `tools/gen_ptx_inventory.py`
(tests/test_inventory.py keeps the two in step); read the spec's header for the notation.
A form is one spelling (`add.sat.s32`) with one operand shape; `valid_on(sm, ptx)` says
whether the form exists for a target and PTX ISA version.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

_DATA = Path(__file__).with_name("ptx_inventory.json")

CHAPTERS = ("integer", "float", "half", "comparison", "logic", "data movement",
            "texture/surface", "control flow", "parallel sync", "warp-level matrix", "video",
            "misc")


@dataclass(frozen=True, slots=True)
class Operand:
    """kind: d (destination), a (register or immediate), r (register), i (immediate),
    p / q (predicate destination / source), dp (`d|p`), pp (`p|q`), m (address), l / L
    (label / label list), V / W (ld/st-style vector or scalar), vN (N-register vector),
    tN / SN (texture / surface reference with N coordinates), T / U (texture / surface
    reference alone), f (function), x (literal text, in `type`)."""
    kind: str
    type: str | None
    optional: bool


@dataclass(frozen=True, slots=True)
class Form:
    name: str                  # spelling and operand shape, unique: "add.sat.s32 d,a,a"
    chapter: str
    opcode: str                # first word: "add", "mbarrier", "cp"
    spelling: str              # "add.sat.s32"
    modifiers: tuple[str, ...]  # non-type modifiers in order: (".sat",)
    types: tuple[str, ...]     # type modifiers in order: (".s32",)
    spaces: tuple[str, ...]    # state spaces among the modifiers
    operands: tuple[Operand, ...]
    min_ptx: tuple[int, int]
    min_sm: int
    requires: tuple[tuple[tuple[int, int], int], ...]   # alternatives: (PTX version, sm)
    below_sm: int | None       # the form exists only on targets below this one
    arch_specific: bool        # only on sm_90a / sm_100a ... targets

    def valid_on(self, sm: int, ptx: tuple[int, int] = (9, 9), arch_specific: bool = False) -> bool:
        if self.arch_specific and not arch_specific:
            return False
        if self.below_sm is not None and sm >= self.below_sm:
            return False
        return any(sm >= s and ptx >= v for v, s in self.requires)

    def min_ptx_for(self, sm: int) -> tuple[int, int] | None:
        """The first PTX version with the form on sm_<sm> (None: never)."""
        versions = [v for v, s in self.requires if sm >= s]
        return min(versions) if versions else None


def _form(d: dict) -> Form:
    return Form(d["name"], d["chapter"], d["opcode"], d["spelling"], tuple(d["modifiers"]),
                tuple(d["types"]), tuple(d["spaces"]),
                tuple(Operand(k, t, o) for k, t, o in d["operands"]), tuple(d["ptx"]),
                d["sm"], tuple((tuple(v), s) for v, s in d["requires"]), d["below_sm"],
                d["arch_specific"])


@functools.cache
def _data() -> dict:
    return json.loads(_DATA.read_text())


@functools.cache
def names_before(marker: str) -> frozenset[str]:
    """The names of the forms written above the spec's comment line naming `marker` (a
    section a branch appended): for consumers that must not change when the spec grows,
    such as the fuzzer's draw (a pinned seed keeps its program)."""
    spec = _DATA.with_name("ptx_isa.spec").read_text().splitlines()
    mark = next(n for n, line in enumerate(spec, 1) if line.startswith("#") and marker in line)
    return frozenset(d["name"] for d in _data()["forms"] if d["line"] < mark)


@functools.cache
def forms() -> tuple[Form, ...]:
    """Every form, in the spec's order."""
    return tuple(_form(d) for d in _data()["forms"])


@functools.cache
def _patterns() -> tuple:
    return tuple((re.compile(p["regex"]), tuple((tuple(v), s) for v, s in p["requires"]),
                  p["below_sm"], p["arch_specific"]) for p in _data()["patterns"])


@functools.cache
def by_spelling() -> dict[str, tuple[Form, ...]]:
    out: dict[str, list[Form]] = {}
    for f in forms():
        out.setdefault(f.spelling, []).append(f)
    return {k: tuple(v) for k, v in out.items()}


def forms_for(sm: int, ptx: tuple[int, int] = (9, 9)) -> list[Form]:
    """The forms a target and PTX version have."""
    return [f for f in forms() if f.valid_on(sm, ptx)]


def spelling_valid(spelling: str, sm: int, ptx: tuple[int, int] = (9, 9),
                   arch_specific: bool = False) -> bool:
    """Whether the spec allows this spelling on the target (operands not considered). Wider
    than the forms: every combination of independent options counts, not only the forms
    that sample them."""
    for regex, requires, below, arch in _patterns():
        if arch and not arch_specific or below is not None and sm >= below:
            continue
        if any(sm >= s and ptx >= v for v, s in requires) and regex.fullmatch(spelling):
            return True
    return False


def spelling_known(spelling: str) -> bool:
    """Whether any target and version has the spelling."""
    return any(regex.fullmatch(spelling) for regex, *_ in _patterns())
