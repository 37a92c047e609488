"""multimem.st and multimem.red as the ordinary global store and reduction ptxas makes of
them (PTX ISA: multimem.*, PTX 8.1, sm_90+).

ptxas 13.5 writes, on sm_90 and sm_100, for `multimem.st` exactly the code of `st.global`
with the same memory order and scope (no order or `.weak`: a weak store), and for
`multimem.red` that of `red.global` with the same operation, order and scope, where a
missing order is `.relaxed` and a missing scope `.sys` (and half types take red's `.noftz`
spelling): STG/REDG with the multimem address as a plain global address. The multicast
itself is the address's doing (the driver maps a multimem address onto every member's copy),
so nothing in the instruction stream differs. multimem.ld_reduce is LDGMC, a load of its own.
"""
from __future__ import annotations

import dataclasses

from ptx2sass.frontend import ast

_ORDERS = frozenset((".weak", ".relaxed", ".acquire", ".release"))
_SCOPES = frozenset((".cta", ".cluster", ".gpu", ".sys"))
_HALVES = frozenset((".f16", ".f16x2", ".bf16", ".bf16x2"))


def as_plain(ins: ast.Instruction) -> ast.Instruction | None:
    """The `st`/`red` instruction ptxas compiles a multimem.st/red as; None for others."""
    mods = ins.modifiers
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
    if _HALVES & set(others):
        # red spells the half types' operation `.noftz` (after the operation)
        at = next(i for i, m in enumerate(others) if m.startswith(".") and m[1:] in
                  ("add", "min", "max")) + 1
        others = others[:at] + (".noftz",) + others[at:]
    return dataclasses.replace(ins, opcode="red", modifiers=head + others)
