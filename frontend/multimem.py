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
        # fp8 lanes: ptxas stores the same bits (`.v4.e4m3x4`: STG.E.128 of four words)
        others = tuple(_FP8_AS_BITS.get(m, m) for m in others)
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
# fp8 lanes (PTX 8.6, sm_100+ `a`/`f` targets): ld_reduce add/min/max and st; the bits of one
# value register (`.e4m3x4`: a .b32 of four lanes; `.e4m3x2` a .b16 of two, so vectors only;
# the scalar `.e4m3`/`.e5m2` is never a multimem type)
_FP8 = {".e4m3x4": 32, ".e5m2x4": 32, ".e4m3x2": 16, ".e5m2x2": 16, ".e4m3": 8, ".e5m2": 8}
_BITS = {".f16": 16, ".bf16": 16, ".f16x2": 32, ".bf16x2": 32, ".f32": 32, ".f64": 64,
         **_FP8}
_FP8_OPS = (".add", ".min", ".max")
_FP8_AS_BITS = {".e4m3x4": ".b32", ".e5m2x4": ".b32", ".e4m3x2": ".b16", ".e5m2x2": ".b16"}
# the accumulation precisions and the types each one is legal with
_ACCUMULATE = {".acc::f32": _HALVES, ".acc::f16": frozenset(_FP8)}
_SPACES = (".shared", ".shared::cta", ".shared::cluster", ".local", ".const", ".param")


def fp8_target(target: str, sm: int) -> bool:
    """The targets ptxas 13.5 takes multimem's fp8 types and `.acc::f16` on: the sm_100+
    arch-specific ones (sm_100a/103a/110a/120a) and the sm_100 family's (sm_100f/103f/110f);
    not sm_120f, sm_90a or a plain sm_100 ("Feature '.e4m3x4' not supported on .target ...")."""
    if sm < 100:
        return False
    return target.endswith("a") or target.endswith("f") and sm < 120


def problems(mods: tuple[str, ...], target: str = "", sm: int = 0) -> list[str]:
    """ptxas's messages for a multimem instruction's modifiers, in its order (`target`: the
    target's name, for the fp8 features; '' skips them)."""
    if not mods or mods[0] not in _ORDERS_OF:
        return []
    sub = mods[0]
    rest = mods[1:]
    features = {"type": [], "acc": []}
    if target and sub != ".red" and not fp8_target(target, sm):     # (red: no fp8 at all)
        for m in dict.fromkeys(rest):
            if m in _FP8 or m == ".acc::f16" and sub == ".ld_reduce":
                features["type" if m in _FP8 else "acc"].append(
                    f"Feature '{m}' not supported on .target '{target}'")
    if sub == ".ld_reduce" and sum(m in _ACCUMULATE for m in rest) > 1:
        return ["Multiple accumulation precision modifiers specified"] + \
            features["type"] + features["acc"]
    found = _tagged_problems(sub, rest)
    if not features["type"] and not features["acc"]:
        return [text for _, text in found]
    # ptxas's order where a feature is missing on the target (probed on sm_90a/sm_100)
    rank = {"order": 0, "optype": 1, "Ftype": 2, "type": 3, "accop": 3, "Facc": 4, "accty": 5,
            "space": 6, "order2": 7, "large": 8}
    found += [("Ftype", t) for t in features["type"]] + [("Facc", t) for t in features["acc"]]
    return [text for _, text in sorted(found, key=lambda tagged: rank[tagged[0]])]


def _tagged_problems(sub: str, rest: tuple[str, ...]) -> list[tuple[str, str]]:
    """problems' messages but the target's, each with its kind, in ptxas's order for a
    target that has every feature."""
    name = "multimem" + sub
    out = []
    if any(m in _SPACES for m in rest):
        out.append(("space", f"State space incorrect for instruction '{name}'"))
    order = next((m for m in rest if m in _ORDERS or m == ".acq_rel"), None)
    scope = next((m for m in rest if m in _SCOPES), None)
    if order is not None and order not in _ORDERS_OF[sub]:
        out.append(("order", f"Illegal modifier '{order}' for instruction '{name}'"))
    elif order == ".weak" and scope:
        out.append(("order", f"Modifier '.weak' cannot be combined with modifier '{scope}'"))
    elif order is not None and order != ".weak" and scope is None:
        message = f"Modifier '{order}' requires scope with '{name}' instruction"
        out += [("order", message)] + ([] if sub == ".red" else [("order2", message)])
    types = [m for m in rest if m in _INTEGERS or m in _BITS or m[1:2] in "busf" and m[2:].isdigit()]
    vec = next((m for m in rest if m in (".v2", ".v4", ".v8")), None)
    op = None
    if sub != ".st":
        op = next((m for m in rest if m in _OPS), None)
        if op is None and any(m in (".inc", ".dec", ".exch", ".cas") for m in rest):
            return out + [("type", f"Illegal reduction operation for instruction '{name}'")]
    if len(types) != 1:
        return out
    ty = types[0]
    acc = next((m for m in rest if m in _ACCUMULATE), None) if sub == ".ld_reduce" else None
    if ty in _INTEGERS:
        if vec:
            out += [("type", f"Vector qualifier is not allowed for instruction '{name}'"),
                    ("type", f"Vector operand is not allowed for instruction '{name}'")]
        elif op is not None and ty not in _INTEGER_TYPES_OF[op]:
            out.append(("optype", f"Incorrect type '{ty}' for operation '{op}' in instruction '{name}'"))
        elif acc:
            out.append(("accty", f"Illegal modifier '{acc}' for instruction '{name}' with type '{ty}'"))
        return out
    if ty not in _BITS or ty in _FP8 and sub == ".red":
        return out + [("type", f"Unexpected instruction types specified for '{name}'")]
    if op is not None and ty not in _FLOAT_TYPES_OF.get(op, ()) \
            and not (ty in _FP8 and op in _FP8_OPS):
        return out + [("optype", f"Incorrect type '{ty}' for operation '{op}' in instruction '{name}'")]
    count = int(vec[2:]) if vec else 1
    bits = _BITS[ty] * count
    if ty == ".f64" and vec or bits > 128:
        out.append(("type", f"Inconsistent type '{ty}' with vector {vec} for '{name}'"))
    elif bits < 32:
        out.append(("type", f"Unexpected instruction types specified for '{name}'"))
    if acc and op != ".add":
        out.append(("accop", f"Illegal reduction operation for instruction '{name}{acc}'"))
    if acc and ty not in _ACCUMULATE[acc]:
        out.append(("accty", f"Illegal modifier '{acc}' for instruction '{name}' with type '{ty}'"))
    if bits > 128:      # (ptxas: after the accumulation's messages)
        out.append(("large", "Vector type too large, exceeds 128 bit limit"))
    return out


def value_bits(mods: tuple[str, ...]) -> int | None:
    """The bits of one value register of an fp8 multimem instruction (ptxas takes only that
    size: 'Arguments mismatch' otherwise, before any other message); None for other types
    and for multimem.red (no fp8 type at all: its type message comes first)."""
    if mods[:1] == (".red",):
        return None
    return next((_FP8[m] for m in mods if m in _FP8), None)


def element_type(mods: tuple[str, ...]) -> str | None:
    """The type of one value register (`.f16x2`, `.u32`, ...)."""
    return next((m for m in mods if m in _INTEGERS or m in _BITS), None)
