"""multimem.st and multimem.red as the ordinary global store and reduction ptxas makes of
them (PTX ISA: multimem.*, PTX 8.1, sm_90+).

ptxas 13.5 writes, on sm_90 and sm_100, for `multimem.st` exactly the code of `st.global`
with the same memory order and scope (no order or `.weak`: a weak store), and for
`multimem.red` that of `red.global` with the same operation, order and scope, where a
missing order is `.relaxed` and a missing scope `.sys` (and half types take red's `.noftz`
spelling): STG/REDG with the multimem address as a plain global address; and for
`multimem.cp.async.bulk` (PTX 9.1) that of `cp.async.bulk` (UBLKCP); its
`multimem.cp.reduce.async.bulk` is cp.reduce.async.bulk's UBLKRED with `.STRONG.SYS`
added (both rewritten bulk copies keep a `.multimem` mark: for that, and for the kernel
record ptxas marks a multicast bulk copy in, `.nv.info` 0x5f's 0x2). The multicast
itself is the address's doing (the driver maps a multimem address onto every member's copy),
so nothing in the instruction stream differs. multimem.ld_reduce is LDGMC, a load of its own.
"""
from __future__ import annotations

import dataclasses

from ptx2sass.frontend import ast

MARK = ".multimem"      # on the cp.[reduce.]async.bulk a multimem one is rewritten to
_ORDERS = frozenset((".weak", ".relaxed", ".acquire", ".release"))
_SCOPES = frozenset((".cta", ".cluster", ".gpu", ".sys"))
_HALVES = frozenset((".f16", ".f16x2", ".bf16", ".bf16x2"))


def as_plain(ins: ast.Instruction) -> ast.Instruction | None:
    """The `st`/`red` instruction ptxas compiles a multimem.st/red as; None for others."""
    mods = ins.modifiers
    if mods[:3] == (".cp", ".async", ".bulk"):     # PTX 9.1: the bulk copy of that spelling
        return dataclasses.replace(ins, opcode="cp", modifiers=mods[1:] + (MARK,))
    if mods[:4] == (".cp", ".reduce", ".async", ".bulk"):
        return dataclasses.replace(ins, opcode="cp", modifiers=mods[1:] + (MARK,))
    if not mods or mods[0] not in (".st", ".red"):
        return None
    rest = mods[1:]
    order = next((m for m in rest if m in _ORDERS), None)
    scope = next((m for m in rest if m in _SCOPES), None)
    others = tuple(m for m in rest if m not in _ORDERS and m not in _SCOPES)
    if mods[0] == ".st":
        head = () if order in (None, ".weak") else (order, scope or ".sys")
        return dataclasses.replace(ins, opcode="st", modifiers=head + others)
    head = (order or ".relaxed", scope or ".sys")
    others = tuple(m for m in others if m != ".acc::f32")    # ptxas: no code of its own
    if _HALVES & set(others):
        # red spells the half types' operation `.noftz` (after the operation)
        at = next(i for i, m in enumerate(others) if m.startswith(".") and m[1:] in
                  ("add", "min", "max")) + 1
        others = others[:at] + (".noftz",) + others[at:]
    return dataclasses.replace(ins, opcode="red", modifiers=head + others)


# ptxas's rules for multimem.* modifiers (PTX ISA multimem.ld_reduce/st/red; the messages
# are ptxas 13.5's, read off its answers to `tests/test_codegen_multimem.py`'s refusals).
_ORDERS_OF = {".ld_reduce": (".weak", ".relaxed", ".acquire"), ".st": (".weak", ".relaxed", ".release"),
              ".red": (".relaxed", ".release")}
_OPS = (".add", ".min", ".max", ".and", ".or", ".xor")
_INTEGER_TYPES_OF = {".add": (".u32", ".s32", ".u64"), ".min": (".u32", ".s32", ".u64", ".s64"),
                     ".max": (".u32", ".s32", ".u64", ".s64"), ".and": (".b32", ".b64"),
                     ".or": (".b32", ".b64"), ".xor": (".b32", ".b64")}
_FLOAT_TYPES_OF = {".add": (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64"),
                   ".min": (".f16", ".f16x2", ".bf16", ".bf16x2"),
                   ".max": (".f16", ".f16x2", ".bf16", ".bf16x2")}
_INTEGERS = (".b32", ".b64", ".u32", ".u64", ".s32", ".s64")
_BITS = {".f16": 16, ".bf16": 16, ".f16x2": 32, ".bf16x2": 32, ".f32": 32, ".f64": 64}
_SPACES = (".shared", ".shared::cta", ".shared::cluster", ".local", ".const", ".param")


def problems(mods: tuple[str, ...]) -> list[str]:
    """ptxas's messages for a multimem instruction's modifiers, in its order."""
    if not mods or mods[0] not in _ORDERS_OF:
        return []
    sub = mods[0]
    name = "multimem" + sub
    rest = mods[1:]
    out = []
    if any(m in _SPACES for m in rest):
        out.append(f"State space incorrect for instruction '{name}'")
    order = next((m for m in rest if m in _ORDERS or m == ".acq_rel"), None)
    scope = next((m for m in rest if m in _SCOPES), None)
    if order is not None and order not in _ORDERS_OF[sub]:
        out.append(f"Illegal modifier '{order}' for instruction '{name}'")
    elif order == ".weak" and scope:
        out.append(f"Modifier '.weak' cannot be combined with modifier '{scope}'")
    elif order is not None and order != ".weak" and scope is None:
        message = f"Modifier '{order}' requires scope with '{name}' instruction"
        out += [message] * (1 if sub == ".red" else 2)
    types = [m for m in rest if m in _INTEGERS or m in _BITS or m[1:2] in "busf" and m[2:].isdigit()]
    vec = next((m for m in rest if m in (".v2", ".v4", ".v8")), None)
    op = None
    if sub != ".st":
        op = next((m for m in rest if m in _OPS), None)
        if op is None and any(m in (".inc", ".dec", ".exch", ".cas") for m in rest):
            return out + [f"Illegal reduction operation for instruction '{name}'"]
    if len(types) != 1:
        return out
    ty = types[0]
    if ty in _INTEGERS:
        if vec:
            out += [f"Vector qualifier is not allowed for instruction '{name}'",
                    f"Vector operand is not allowed for instruction '{name}'"]
        elif op is not None and ty not in _INTEGER_TYPES_OF[op]:
            out.append(f"Incorrect type '{ty}' for operation '{op}' in instruction '{name}'")
        return out
    if ty not in _BITS:
        return out + [f"Unexpected instruction types specified for '{name}'"]
    if op is not None and ty not in _FLOAT_TYPES_OF.get(op, ()):
        return out + [f"Incorrect type '{ty}' for operation '{op}' in instruction '{name}'"]
    count = int(vec[2:]) if vec else 1
    bits = _BITS[ty] * count
    if ty == ".f64" and vec or bits > 128:
        out.append(f"Inconsistent type '{ty}' with vector {vec} for '{name}'")
        if bits > 128:
            out.append("Vector type too large, exceeds 128 bit limit")
    elif bits < 32:
        out.append(f"Unexpected instruction types specified for '{name}'")
    return out


def element_type(mods: tuple[str, ...]) -> str | None:
    """The type of one value register (`.f16x2`, `.u32`, ...)."""
    return next((m for m in mods if m in _INTEGERS or m in _BITS), None)
