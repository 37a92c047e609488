"""mbarrier's operands, type and state space, checked as ptxas 13.5.37 checks them.

mbarrier is otherwise checked leniently (its many spellings are not in the form table);
a wrong operand count or kind crashed the code generator (`mbarrier.test_wait` without its
state). Read off ptxas's diagnostics on branch reject27: per sub-operation the operands it
takes, "Arguments mismatch for instruction 'mbarrier.arrive.expect_tx'" (`.expect_tx` and
`.parity` join the name, `.noComplete` does not), "Unexpected instruction types specified
for 'mbarrier.init'" for a type other than .b64, "State space incorrect for instruction
'mbarrier.arrive'" for a space other than shared, "Unknown modifier '.test_wait'" for a
second sub-operation.
"""
from __future__ import annotations

from ptx2sass.frontend import ast

# operand kinds: m an address, s a 64-bit integer register (the state; `_` allowed), w a
# 32-bit integer register or literal, p a predicate register; lower case required, upper
# case optional (only last)
_SHAPES = {
    ".init": "mw", ".inval": "m", ".expect_tx": "mw", ".complete_tx": "mw",
    ".arrive": "smW", ".arrive_drop": "smW", ".test_wait": "pms", ".try_wait": "pmsW",
    ".pending_count": "ws",
}
_SPACES = frozenset((".shared", ".shared::cta", ".shared::cluster"))
_OTHER_SPACES = frozenset((".global", ".local", ".const", ".param", ".param::entry",
                           ".param::func"))
_TYPES = frozenset((".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
                    ".s8", ".s16", ".s32", ".s64", ".f16", ".f32", ".f64", ".pred"))


def problems(modifiers: tuple, operands: list, register_type) -> list[str]:
    """ptxas's messages for an mbarrier instruction; `register_type(name)` is the declared
    type of a register name (None when it names no register)."""
    if not modifiers or modifiers[0] not in _SHAPES:
        return []
    sub = modifiers[0]
    unknown = [f"Unknown modifier '{m}'" for m in modifiers[1:] if m in _SHAPES
               and not (m == ".expect_tx" and sub in (".arrive", ".arrive_drop"))][:1]
    name = "mbarrier" + sub
    full = name + (".expect_tx" if ".expect_tx" in modifiers[1:] else "") \
        + (".parity" if ".parity" in modifiers and sub in (".test_wait", ".try_wait") else "")
    spaces = [m for m in modifiers if m in _SPACES or m in _OTHER_SPACES]
    if ".noComplete" in modifiers and sub not in (".arrive", ".arrive_drop"):
        return [f"Illegal modifier '.noComplete' for instruction '{name}'"]
    shape = _SHAPES[sub]
    if ".parity" in modifiers and sub in (".test_wait", ".try_wait"):
        shape = shape.replace("s", "w")
    if ".expect_tx" in modifiers[1:] or ".noComplete" in modifiers:
        shape = shape.upper().replace("S", "s").replace("M", "m")     # the count required
        shape = shape[:-1] + "w"
    fits = _fits(shape, operands, register_type)
    out = []
    # a scope goes with a memory order, and (on expect_tx/complete_tx) an order with a scope
    # (ptxas 13.5.37, reject28; after an operand mismatch ptxas says that alone)
    scope = next((m for m in modifiers if m in (".cta", ".cluster")), None)
    order = next((m for m in modifiers if m in (".relaxed", ".release", ".acquire")), None)
    if scope and not order:
        out.append(f"Modifier '{scope}' requires order with '{full}' instruction")
    elif order and sub in (".init", ".inval", ".pending_count"):
        out.append(f"Illegal modifier '{order}' for instruction '{name}'")
    elif order and not scope:
        out.append(f"Modifier '{order}' requires scope with '{full}' instruction")
    if unknown:
        return unknown + out
    if any(m in _OTHER_SPACES for m in spaces):
        return out + [f"State space incorrect for instruction '{full}'"]
    if sub == ".pending_count" and spaces:
        return out + [f"No state space qualifier expected for instruction '{name}'"]
    if sub in (".init", ".inval", ".test_wait", ".try_wait") and ".shared::cluster" in spaces:
        return out + [f"Illegal modifier '::cluster' for instruction '{name}'"]
    types = [m for m in modifiers if m in _TYPES]
    if types != [".b64"]:
        joined = name + (".expect_tx" if ".expect_tx" in modifiers[1:] else "")
        return [f"Unexpected instruction types specified for '{joined}'"]
    if not fits:
        return [f"Arguments mismatch for instruction '{full}'"]
    if out:
        return out
    name = full
    if sub in (".arrive", ".arrive_drop") and ".shared::cluster" in modifiers \
            and ".noComplete" in modifiers:
        extra = ["Modifier '.shared::cluster' cannot be combined with modifier '.noComplete'"]
    else:
        extra = []
    if sub in (".arrive", ".arrive_drop") and ".shared::cluster" in modifiers and operands \
            and not (type(operands[0]) is ast.Name and operands[0].name == "_"):
        return [f"Sink '_' is expected as a destination operand for instruction '{name}' with "
                "'.shared::cluster'"] + extra
    return extra


def _fits(shape: str, operands: list, register_type) -> bool:
    required = sum(1 for k in shape if k.islower())
    if not required <= len(operands) <= len(shape):
        return False
    for i, (kind, node) in enumerate(zip(shape.lower(), operands)):
        if kind == "m":
            if type(node) is not ast.Address:
                return False
            continue
        if type(node) is ast.IntLit:
            if kind != "w":
                return False
            continue
        if type(node) is not ast.Name:
            return False
        if node.name == "_":    # a sink result: check_result_discard's verdict
            if i:
                return False
            continue
        t = register_type(node.name)
        if t is None:
            return False
        if kind == "s" and t not in (".b64", ".u64", ".s64"):
            return False
        if kind == "w" and t not in (".b32", ".u32", ".s32"):
            return False
        if kind == "p" and t != ".pred":
            return False
    return True
