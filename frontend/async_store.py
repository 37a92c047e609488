"""st.async's modifiers, spaces, types and operands, checked as ptxas 13.5.37 checks them.

st.async was checked leniently (it is not in the form table): ptxas's refusals became
"not supported yet" in the code generator or were accepted (a `.param` space, a missing
completion mechanism, `.f16x2` data), and forms ptxas accepts were refused. Read off
ptxas's diagnostics on branch reject28 (targets up to sm_90):

- the PTX ISA's two forms: `st.async{.weak}{.shared::cluster}.mbarrier::complete_tx::bytes
  {.v2,.v4}.type [a], b, [mbar]` (sm_90) and `st.async{.mmio}.release.{gpu,sys}{.global}.type
  [a], b` (sm_100, PTX 8.7). ptxas takes the operand count for the form: with two operands
  a vector is "not allowed" and 16-bit data fits, with three it does not; it also accepts a
  weak two-operand store (no `.release`), which its code leaves out (no instruction).
- a `.shared::cluster` space, or no space and an mbarrier operand, without the completion
  mechanism, once the rest is right: "Modifier '.shared::cluster' requires modifier ...".
  (`.shared`/`.shared::cta` with an mbarrier and no mechanism: accepted, one STAS as usual.)
- the messages come in this order: the feature's target then version; `.global`/`.release`/
  `.mmio` (sm_100, PTX 8.7); the completion mechanism; `::cluster`; the mechanism's own
  target then version; then the types, the space, the vector qualifier, illegal modifiers,
  the vector operand, the operands.
"""
from __future__ import annotations

from ptx2sass.frontend import ast

MECHANISM = ".mbarrier::complete_tx::bytes"
_DATA_TYPES = frozenset((".b32", ".b64", ".u32", ".u64", ".s32", ".s64", ".f32", ".f64",
                         ".b16", ".u16", ".s16", ".b8", ".u8", ".s8", ".b128"))
_ALL_TYPES = _DATA_TYPES | frozenset((".f16", ".bf16", ".f16x2", ".bf16x2", ".pred", ".tf32",
                                      ".e4m3", ".e5m2", ".f32x2"))
_GOOD_SPACES = frozenset((".shared::cluster", ".shared", ".shared::cta"))
_SPACES = _GOOD_SPACES | frozenset((".global", ".local", ".const", ".param", ".param::entry",
                                    ".param::func"))
_ILLEGAL = (".relaxed", ".acquire", ".acq_rel", ".volatile", ".sc")
_EVICTION = (".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first",
             ".L1::evict_last", ".L1::no_allocate", ".L2::evict_normal", ".L2::evict_first",
             ".L2::evict_last")


def is_st_async(opcode: str, modifiers) -> bool:
    return opcode == "st" and modifiers[:1] == (".async",)


def all_problems(modifiers: tuple, operands: list, register_type, version: tuple, target_sm: int,
                 type_fits) -> list[str]:
    """Every message of ptxas for this st.async, in its order (see problems())."""
    mbar = len(operands) == 3 and type(operands[2]) is ast.Address
    rest = problems(modifiers, operands, register_type, version, type_fits)
    # (an illegal modifier does not keep ptxas from asking for the mechanism)
    rest_ok = all(line.startswith(("Illegal modifier", "Unexpected number")) for line in rest) \
        if ".shared::cluster" in modifiers else not rest
    return feature_problems(modifiers, mbar, version, target_sm, rest_ok) + rest


def feature_problems(modifiers: tuple, mbar: bool, version: tuple, target_sm: int,
                     rest_ok: bool) -> list[str]:
    """The messages of st.async's features, in ptxas's order; `mbar`: a third operand, an
    address, is written; `rest_ok`: types, vector and operands are right (else ptxas does
    not ask for the completion mechanism)."""
    mods = set(modifiers)
    out = []
    if ".mmio" in mods and version < (8, 2):
        out.append("Feature '.mmio' requires PTX ISA .version 8.2 or later")
    if target_sm < 90:
        out.append("Feature 'st.async' requires .target sm_90 or higher")
    if version < (8, 1):
        out.append("Feature 'st.async' requires PTX ISA .version 8.1 or later")
    for what, present in (("with .global state space", ".global" in mods),
                          ("with .release modifier", ".release" in mods),
                          ("with .mmio modifier", ".mmio" in mods)):
        if not present:
            continue
        if what.endswith("space") and MECHANISM in mods and target_sm < 100:
            out.append(f"Illegal modifier '{MECHANISM}' for instruction 'st.async' with '.global'")
            if mbar:
                out.append("Arguments mismatch for instruction 'st.async'")
        elif what.endswith("space") and mbar:
            out.append("Arguments mismatch for instruction 'st.async'")
        if target_sm < 100:
            out.append(f"Feature 'st.async/red.async {what}' requires .target sm_100 or higher")
        if version < (8, 7):
            out.append(f"Feature 'st.async/red.async {what}' requires PTX ISA .version 8.7 or later")
        if what.endswith("space") and target_sm < 100:
            out.append("State space incorrect for instruction 'st.async'")
        if what == "with .release modifier" and target_sm < 100:
            out.append("Illegal modifier '.release' for instruction 'st.async'")
        if what == "with .release modifier" and not mods & {".gpu", ".sys", ".cluster", ".cta"}:
            out.append("Modifier '.release' requires scope with 'st.async' instruction")
    if MECHANISM not in mods and ".release" not in mods and ".mmio" not in mods \
            and ".global" not in mods and rest_ok \
            and (".shared::cluster" in mods or mbar and not mods & _SPACES):
        out.append("Modifier '.shared::cluster' requires modifier '.completion_mechanism' for "
                   "instruction 'st.async'")
    if any(m.endswith("::cluster") for m in modifiers):
        if version < (7, 8):
            out.append("Feature '::cluster' requires PTX ISA .version 7.8 or later")
        if target_sm < 90:
            out.append("Feature '::cluster' requires .target sm_90 or higher")
    if MECHANISM in mods:
        if target_sm < 90:
            out.append(f"Feature '{MECHANISM}' requires .target sm_90 or higher")
        if version < (8, 0):
            out.append(f"Feature '{MECHANISM}' requires PTX ISA .version 8.0 or later")
    return out


def problems(modifiers: tuple, operands: list, register_type, version: tuple,
             type_fits) -> list[str]:
    """The rest of ptxas's messages for st.async (after its features); `register_type(name)`
    is a register's declared type or None, `type_fits(ty, reg_type)` ptxas's exact-size
    operand rule."""
    mods = set(modifiers)
    types = [m for m in modifiers if m in _ALL_TYPES]
    if len(types) != 1 or types[0] not in _DATA_TYPES:
        return ["Unexpected instruction types specified for 'st.async'"]
    ty = types[0]
    n = len(operands)
    out = []
    spaces = [m for m in modifiers if m in _SPACES]
    if len(spaces) > 1:
        out.append("Unexpected number of state spaces specified in instruction 'st.async'")
    elif any(s not in _GOOD_SPACES and s != ".global" for s in spaces):
        out.append("State space incorrect for instruction 'st.async'")
    vec = next((m for m in modifiers if m in (".v2", ".v4", ".v8")), None)
    two = n == 2
    if vec and two:
        out.append("Vector qualifier is not allowed for instruction 'st.async'")
    for m in modifiers:
        if m in _ILLEGAL:
            out.append(f"Illegal modifier '{m}' for instruction 'st.async'")
        elif m in _EVICTION:
            out.append("Illegal modifier '.level::eviction_priority' for instruction 'st.async'")
            out.append(f"Illegal modifier '.{m.split('::')[1]}' for instruction 'st.async'")
    if ".weak" in mods and ".cluster" in mods:
        out.append("Modifier '.weak' cannot be combined with modifier '.cluster'")
    if vec and two:
        out.append("Vector operand is not allowed for instruction 'st.async'")
    width = {".v2": 2, ".v4": 4}.get(vec, 1)
    bits = {".b8": 8, ".u8": 8, ".s8": 8, ".b16": 16, ".u16": 16, ".s16": 16, ".b128": 128}.get(
        ty, 64 if ty[-2:] == "64" else 32)
    too_large = ["Vector type too large, exceeds 128 bit limit"] if width * bits > 128 else []
    if out:
        return out + ([] if two else too_large)
    if n not in (2, 3):
        return ["Arguments mismatch for instruction 'st.async'"]
    if vec == ".v8":
        return ["Illegal vector size: 8", "Vector type too large, exceeds 128 bit limit"]
    if too_large:
        return too_large
    if n not in (2, 3) or type(operands[0]) is not ast.Address \
            or n == 3 and type(operands[2]) is not ast.Address:
        return ["Arguments mismatch for instruction 'st.async'"]
    value = operands[1]
    elements = value.elements if type(value) is ast.VectorOperand else [value]
    if (type(value) is ast.VectorOperand) != bool(vec):
        return ["Arguments mismatch for instruction 'st.async'"]
    if vec and len(elements) != width:
        return ["Argument vector size mismatch for instruction 'st.async'"]
    if bits == 8 or (bits == 16 and not two) or (bits == 128 and two):
        return ["Arguments mismatch for instruction 'st.async'"]
    for e in elements:
        if type(e) is ast.Name:
            reg = register_type(e.name)
            if reg is not None and not type_fits(ty, reg):
                return ["Arguments mismatch for instruction 'st.async'"]
    if bits == 128 and version < (9, 2):
        return ["Feature 'st.async.b128' requires PTX ISA .version 9.2 or later"]
    return []


# red.async (sm_90: `.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type
# [a], b, [mbar]`), probed on branch reject28: it was checked leniently (any space, scope,
# type or a missing operation reached the code generator, 'not supported yet', or compiled).
_RED_TYPES = {".add": (".u32", ".s32", ".u64", ".s64"), ".min": (".u32", ".s32"), ".max": (".u32", ".s32"),
              ".inc": (".u32",), ".dec": (".u32",), ".and": (".b32",), ".or": (".b32",),
              ".xor": (".b32",)}


def red_async_problems(modifiers: tuple) -> list[str]:
    """ptxas's messages for a red.async spelling (its operands are the code generator's)."""
    mods = set(modifiers)
    spaces = [m for m in modifiers if m in _SPACES]
    out = []
    if not mods & {".relaxed", ".release"}:
        out.append("order modifier required for instruction 'red.async'")
    if ".cluster" in mods and spaces and spaces[0] != ".shared::cluster":
        out.append("Modifier '.cluster' requires '.shared::cluster' space for instruction 'red.async'")
    if ".gpu" in mods and spaces != [".global"]:
        out.append("Modifier '.gpu' requires '.global' space for instruction 'red.async'")
        if MECHANISM in mods:
            out.append(f"Illegal modifier '{MECHANISM}' for instruction 'red.async' with '.gpu'")
    if MECHANISM not in mods and ".cluster" in mods:
        out.append("Modifier '.cluster' requires modifier '.completion_mechanism' for instruction 'red.async'")
        if ".shared::cluster" in mods:
            out.append("Modifier '.shared::cluster' requires modifier '.completion_mechanism' for "
                       "instruction 'red.async'")
    if any(s not in _GOOD_SPACES and s != ".global" for s in spaces):
        out.append("State space incorrect for instruction 'red.async'")
    if out:
        return out
    ops = [m for m in modifiers if m in _RED_TYPES]
    if not ops:
        return ["Reduction operation is required for instruction 'red.async'"] * 2
    types = [m for m in modifiers if m in _ALL_TYPES]
    if len(types) != 1 or types[0] not in {t for v in _RED_TYPES.values() for t in v} | {".b64", ".s64"}:
        return ["Unexpected instruction types specified for 'red.async'"]
    if types[0] not in _RED_TYPES[ops[0]]:
        return [f"Incorrect type '{types[0]}' for operation '{ops[0]}' in instruction 'red.async'"]
    return []
