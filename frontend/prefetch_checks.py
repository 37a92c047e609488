"""prefetch/prefetchu's spaces, cache levels and operands, checked as ptxas 13.5.37 does.

Both were checked leniently (any modifier, space or operand count was accepted, a missing
address crashed the code generator). Read off ptxas's diagnostics on branch reject28:
prefetch takes `.global`/`.local` (or none) with `.L1`/`.L2`, `.L2::evict_last`/
`.L2::evict_normal` (global or generic), or `.tensormap` (const, param or generic);
prefetchu takes `.L1` alone; both one address operand and no type.
"""
from __future__ import annotations

from ptx2sass.frontend import ast

_SPACES = (".global", ".local", ".shared", ".shared::cta", ".shared::cluster", ".const",
           ".param", ".param::entry", ".param::func")
_LEVELS = (".L1", ".L2", ".tensormap")
_EVICTIONS = (".L2::evict_last", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_unchanged",
              ".L1::evict_last", ".L1::evict_normal", ".L1::evict_first", ".L1::evict_unchanged",
              ".L1::no_allocate")
_TYPES = frozenset((".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
                    ".s8", ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32",
                    ".f64", ".pred", ".tf32"))


VECTORS = (".v2", ".v4", ".v8")
VECTOR_WARNING = "Vector Type not specified properly"


def vector_diagnostics(opcode: str, modifiers: tuple) -> list[tuple[str, str]]:
    """(severity, message) for a vector qualifier on prefetch/prefetchu without a type (ptxas
    13.5: the error, and a warning before it when the qualifier comes first, after it
    otherwise); a typed one is left to `problems`' type error."""
    if not any(m in VECTORS for m in modifiers) or any(m in _TYPES for m in modifiers):
        return []
    error = ("error", f"Vector qualifier is not allowed for instruction '{opcode}'")
    warning = ("warning", VECTOR_WARNING)
    return [warning, error] if modifiers[0] in VECTORS else [error, warning]


def problems(opcode: str, modifiers: tuple, operands: list) -> list[str]:
    """ptxas's messages for a prefetch or prefetchu instruction, in its order."""
    modifiers = tuple(m for m in modifiers if m not in VECTORS)     # (vector_diagnostics)
    out = []
    levels = [m for m in modifiers if m in _LEVELS]
    if len(levels) > 1:
        out.append("Multiple cache operation modifiers specified")
        levels = levels[-1:]            # (the later one is checked)
    spaces = [m for m in modifiers if m in _SPACES]
    typed = any(m in _TYPES for m in modifiers)
    evictions = [m for m in modifiers if m in _EVICTIONS]
    if typed:
        return out + [f"Unexpected instruction types specified for '{opcode}'"]
    if opcode == "prefetchu":
        for m in levels + evictions:
            if m != ".L1":
                out.append(f"Illegal modifier '{m}' for instruction 'prefetchu'")
        if spaces:
            out.append("State space incorrect for instruction 'prefetchu'")
        if not levels and not out and not typed:
            out.append("Cache level modifier required for instruction 'prefetchu'")
    else:
        tensormap = ".tensormap" in levels
        allowed = (".const", ".param") if tensormap else (".global", ".local")
        first = spaces[0] if spaces else None
        if tensormap and first is not None and first not in allowed:
            out.append(f"Modifier '.tensormap' cannot be applied to '{first}' space for "
                       "instruction 'prefetch'")
        if first is not None and "::" in first and first.startswith(".shared"):
            out.append(f"Illegal modifier '::{first.split('::')[1]}' for instruction 'prefetch'")
        if len(spaces) > 1:
            out.append("Unexpected number of state spaces specified in instruction 'prefetch'")
        if first is not None and first not in (".global", ".local", ".const", ".param") or \
                first in (".const", ".param") and not tensormap:
            out.append("State space incorrect for instruction 'prefetch'")
        for m in evictions:
            level, kind = m[1:].split("::")
            if kind not in ("evict_last", "evict_normal"):
                out.append(f"Illegal modifier '.{kind}' for instruction 'prefetch'")
            elif level == "L1":
                out.append(f"Modifier '.{kind}' requires cache level L2 with 'prefetch' instruction")
            elif levels:
                out.append(f"Illegal modifier '{levels[0]}' for instruction 'prefetch' with "
                           "'.level::eviction_priority'")
            if first not in (None, ".global"):
                out.append("State space incorrect for feature 'cache eviction priority'")
        if not levels and not evictions and not typed:
            out.append("Cache level modifier required for instruction 'prefetch'")
    if out:
        return out
    if typed:
        return [f"Unexpected instruction types specified for '{opcode}'"]
    if len(operands) != 1 or type(operands[0]) is not ast.Address:
        return [f"Arguments mismatch for instruction '{opcode}'"]
    return []
