"""cp.async.mbarrier.arrive's modifiers, space, type and operand, as ptxas 13.5.37 checks
them (probed on branch reject28; it was checked leniently: a missing address crashed the
code generator, any other space or modifier was accepted): `cp.async.mbarrier.arrive
{.noinc}{.shared{::cta}}.b64 [addr]`."""
from __future__ import annotations

from ptx2sass.frontend import ast

NAME = "cp.async.mbarrier.arrive"
_SPACES = (".shared", ".shared::cta", ".shared::cluster", ".global", ".local", ".const", ".param",
           ".param::entry", ".param::func")
_TYPES = frozenset((".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8",
                    ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64",
                    ".pred"))


def applies(opcode: str, modifiers: tuple) -> bool:
    return opcode == "cp" and modifiers[:3] == (".async", ".mbarrier", ".arrive")


def problems(modifiers: tuple, operands: list) -> list[str]:
    rest = modifiers[3:]
    out = []
    if rest.count(".noinc") > 1:
        out.append("Multiple .noinc modifiers specified")
    for m in rest:
        if m == ".shared::cluster":
            out.append(f"Illegal modifier '::cluster' for instruction '{NAME}'")
        elif m not in _SPACES and m not in _TYPES and m != ".noinc":
            out.append(f"Illegal modifier '{m}' for instruction '{NAME}'")
    if any(m in _SPACES and m not in (".shared", ".shared::cta", ".shared::cluster") for m in rest):
        out.append(f"State space incorrect for instruction '{NAME}'")
    if out:
        return out
    if [m for m in rest if m in _TYPES] != [".b64"]:
        return [f"Unexpected instruction types specified for '{NAME}'"]
    if len(operands) != 1 or type(operands[0]) is not ast.Address:
        return [f"Arguments mismatch for instruction '{NAME}'"]
    return []
