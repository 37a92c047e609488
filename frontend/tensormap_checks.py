"""`tensormap.replace.tile.<field>{.global|.shared::cta}.b1024.<type> [a], [ord,] new_val`
checked as ptxas 13.5.37 does (its words, read off its diagnostics): the field's type (.b64
for global_address and global_stride, .b32 the others: "Illegal modifier '.rank' ... with
type '.b64'"), the operand count and the value register's width ("Arguments mismatch"), the
ordinal an immediate in [0..4], the enumerated fields' value an immediate in range ("Argument
1 ...: value 'v' expected to be in range [0..n] when .field modifier is used."),
`.swizzle_atomicity` and elemtype 13..15 from sm_100 on, `.shared::cluster` ("State space
incorrect") and a `.param` variable as the map ("State space mismatch")."""
from __future__ import annotations

NAME = "tensormap.replace"
B64_FIELDS = (".global_address", ".global_stride")
ORD_FIELDS = (".box_dim", ".global_dim", ".global_stride", ".element_stride")
PLAIN_FIELDS = (".global_address", ".rank")
# immediate-only fields: their largest value (sm_90a; `LATER_LIMITS` from sm_100 on)
ENUM_LIMITS = {".elemtype": 12, ".interleave_layout": 2, ".swizzle_mode": 3,
               ".swizzle_atomicity": 3, ".fill_mode": 1}
LATER_LIMITS = {".elemtype": 15}
LATER_FIELDS = {".swizzle_atomicity": 100}      # field -> the first sm that takes it
FIELDS = PLAIN_FIELDS + ORD_FIELDS + tuple(ENUM_LIMITS)


def applies(opcode: str, modifiers: tuple) -> bool:
    return opcode == "tensormap" and modifiers[:1] == (".replace",)


def problems(modifiers: tuple, operands: list, target_sm: int, target_name: str,
             constant, register_type, space_of) -> list[str]:
    """ptxas's messages, in its order. `constant(node)`: an operand's integer value (None:
    not a constant); `register_type(node)`: a register's type ('.b32'; None: none);
    `space_of(node)`: a variable's state space (None: not a variable)."""
    mods = modifiers[1:]
    if mods[:1] != (".tile",):
        return [f"Illegal modifier '.tile' for instruction '{NAME}'"]
    field = next((m for m in mods if m in FIELDS), None)
    if field is None:
        return [f"Arguments mismatch for instruction '{NAME}'"]
    out = []
    for m in mods:
        if m.startswith(".b") and m[2:].isdigit() and m not in (".b32", ".b64", ".b1024"):
            out.append(f"Unknown modifier '{m}'")
    if ".b1024" not in mods:
        out.append(f"Tensormap size modifier required for instruction '{NAME}'")
    if ".shared::cluster" in mods:
        out.append(f"State space incorrect for instruction '{NAME}'")
    ty = ".b64" if ".b64" in mods else ".b32" if ".b32" in mods else None
    if ty is not None and (ty == ".b64") != (field in B64_FIELDS):
        out.append(f"Illegal modifier '{field}' for instruction '{NAME}' with type '{ty}'")
    if target_sm < LATER_FIELDS.get(field, 0):
        out.append(f"Instruction '{NAME}{field}' not supported on .target '{target_name}'")
    if out:
        return out
    want = 3 if field in ORD_FIELDS else 2
    if len(operands) != want:
        return [f"Arguments mismatch for instruction '{NAME}'"]
    if space_of(operands[0]) in (".param", ".param::entry", ".param::func"):
        out.append(f"State space mismatch between instruction and address in instruction '{NAME}'")
    value = operands[-1]
    reg = register_type(value)
    if reg is not None and reg.lstrip(".")[1:] not in ("64" if ty == ".b64" else "32",):
        out.append(f"Arguments mismatch for instruction '{NAME}'")
    if field in ORD_FIELDS:
        ord_ = constant(operands[1])
        if ord_ is None:
            out.append(f"Arguments mismatch for instruction '{NAME}'")
            out.append(f"Modifier '{field}' requires Interger Immediate for ordinal with "
                       f"'{NAME}' instruction")
        elif not 0 <= ord_ <= 4:
            out.append(f"Argument 1 of instruction '{NAME}': value '{ord_}' expected to be in "
                       f"range [0..4] when {field} modifier is used.")
    if field in ENUM_LIMITS:
        v = constant(value)
        top = LATER_LIMITS.get(field, ENUM_LIMITS[field]) if target_sm >= 100 else ENUM_LIMITS[field]
        if v is None:
            out.append("Integer constant expression expected")
        elif not 0 <= v <= top:
            out.append(f"Argument 1 of instruction '{NAME}': value '{v}' expected to be in "
                       f"range [0..{top}] when {field} modifier is used.")
    return out


CP = "tensormap.cp_fenceproxy"


def cp_fenceproxy_problems(modifiers: tuple, operands: list, target_sm: int, target_name: str,
                           constant, space_of) -> list[str]:
    """`tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>
    .sync.aligned [dst], [src], 128` as ptxas 13.5.37 checks it (its words and order)."""
    if target_sm < 90:
        return [f"Instruction '{CP}' not supported on .target '{target_name}'"]
    mods = modifiers[1:]
    out = []
    if ".sync" not in mods or ".aligned" not in mods:
        out += [f".sync modifier required for instruction '{CP}'",
                f".aligned modifier required for instruction '{CP}'",
                f".sync modifier required for instruction '{CP}'"]
    if ".release" not in mods:
        out.append(f".release modifier required for instruction '{CP}'")
    spaces = [m for m in mods if m in (".global", ".shared::cta", ".shared", ".shared::cluster")]
    if spaces[:2] != [".global", ".shared::cta"]:
        out += [f"State space incorrect for instruction '{CP}', expected '.global'",
                f"State space incorrect for instruction '{CP}'",
                f"State space incorrect for instruction '{CP}', expected '.shared::cta'",
                f"State space incorrect for instruction '{CP}'"]
    if out:
        return out
    if len(operands) != 3 or constant(operands[2]) is None:
        return [f"Arguments mismatch for instruction '{CP}'"]
    if space_of(operands[0]) in (".param", ".param::entry", ".param::func"):
        out.append(f"State space mismatch between instruction and address in instruction '{CP}'")
    size = constant(operands[2])
    if size != 128:
        out.append(f"Argument 2 of instruction '{CP}': unexpected value '{size}', expected to be 128")
    return out
