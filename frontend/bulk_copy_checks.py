"""The cp.async.bulk family's checks as ptxas 13.5.37 makes them: its target and version
messages (`feature_problems`, below), a copy's operand count and `.ignore_oob` (PTX ISA 9.2)
(probed on branch isa34; cp.async.bulk was checked leniently: ours had taken the qualifier
with the plain form's four operands, and a wrong count was "not supported yet" where ptxas
says "Arguments mismatch"):

    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes{.L2::cache_hint}.ignore_oob
        [dstMem], [srcMem], size, ignoreBytesLeft, ignoreBytesRight, [mbar] {, policy}

ignoreBytesLeft/Right are 32-bit integer registers or constants in 0..15. ptxas's messages,
in its order: an operand count that fits neither that form nor the one without the
qualifier is "Arguments mismatch" alone (a bulk-group copy with two operands more draws
two more lines from ptxas: not modelled); another direction than global -> shared::cta is
"Illegal modifier '.ignore_oob' ... with '<dst><src>'"; a constant count out of range names
its argument (numbered from 0) and value; then the PTX version; the plain form's operand
count draws a bare "Illegal modifier '.ignore_oob'"; below sm_90 the qualifier is illegal
"for arch" (after the family's own sm_90 messages)."""
from __future__ import annotations

from ptx2sass.frontend import ast

NAME = "cp.async.bulk"
QUALIFIER = ".ignore_oob"
VERSION = (9, 2)
SPACES = (".shared::cta", ".shared::cluster", ".global")
COUNT_TYPES = frozenset((".b32", ".u32", ".s32"))
COUNTS = (3, 4)                 # ignoreBytesLeft, ignoreBytesRight among the operands


def applies(opcode: str, modifiers: tuple) -> bool:
    """A cp.async.bulk copy (not the tensor copies, the prefetch or the group operations)."""
    return opcode == "cp" and modifiers[:2] == (".async", ".bulk") and not {
        ".tensor", ".prefetch", ".commit_group", ".wait_group"} & set(modifiers)


def problems(modifiers: tuple, operands: list, version: tuple[int, int], target_sm: int,
             target_name: str, reg_type, constant_value) -> list[str]:
    """ptxas's messages for a cp.async.bulk copy: its operand count, and `.ignore_oob`'s rules;
    `reg_type(name)` a register's type (None for anything else), `constant_value(node)` a
    constant expression's value."""
    mismatch = f"Arguments mismatch for instruction '{NAME}'"
    hint = ".L2::cache_hint" in modifiers
    # dst, src, size, then [mbar], ctaMask, policy, byteMask where their qualifiers say
    plain = 3 + any(m.startswith(".mbarrier::") for m in modifiers) \
        + (".multicast::cluster" in modifiers) + hint + (".cp_mask" in modifiers)
    n = len(operands)
    if QUALIFIER not in modifiers:
        return [mismatch] if n != plain else []
    if modifiers.count(QUALIFIER) > 1:
        return [f"Multiple {QUALIFIER} modifiers specified"]
    if n not in (plain, 6 + hint):       # (the operand count of the one form that has it)
        return [mismatch]
    spaces = [m for m in modifiers if m in SPACES]
    out = []
    if spaces[:2] != [".shared::cta", ".global"]:
        out.append(f"Illegal modifier '{QUALIFIER}' for instruction '{NAME}' with '{''.join(spaces[:2])}'")
    elif n != plain:
        for k in COUNTS:
            node = operands[k]
            if type(node) is ast.Name:
                if reg_type(node.name) not in COUNT_TYPES:
                    return [mismatch]
                continue
            value = constant_value(node)
            if value is None:
                return [mismatch]
            if not 0 <= value <= 15:
                out.append(f"Argument {k} of instruction '{NAME}': value '{value}' out of range, "
                           "expected to be in range [0..15]")
    if version < VERSION:
        out.append(f"Feature '{QUALIFIER}' requires PTX ISA .version {VERSION[0]}.{VERSION[1]} or later")
    if n == plain:
        out.append(f"Illegal modifier '{QUALIFIER}' for instruction '{NAME}'")
    if target_sm < 90:
        out.append(f"Illegal modifier '{QUALIFIER}' for instruction '{NAME}', for arch '{target_name}'")
    return out


# ---- the family's feature messages (ptxas 13.5.37 below sm_90 / PTX 8.0; branch isa34) ----
FAMILY_VERSION, FAMILY_SM = (8, 0), 90
FEATURED = (".tile", ".im2col", ".mbarrier::complete_tx::bytes", ".bulk_group")
SHARED_CTA_VERSION = (8, 6)


def in_family(opcode: str, modifiers: tuple) -> bool:
    """cp.async.bulk* and cp.reduce.async.bulk* (copies, tensor copies, prefetches, groups)."""
    return opcode == "cp" and (modifiers[:2] == (".async", ".bulk")
                               or modifiers[:3] == (".reduce", ".async", ".bulk"))


def _needs(name: str, version, target_sm: int, kind: str = "Feature") -> list[str]:
    """ptxas's pair for a feature of the family: the target first, then the version."""
    out = []
    if target_sm < FAMILY_SM:
        out.append(f"{kind} '{name}' requires .target sm_{FAMILY_SM} or higher")
    if version < FAMILY_VERSION:
        out.append(f"{kind} '{name}' requires PTX ISA .version {FAMILY_VERSION[0]}.{FAMILY_VERSION[1]} or later")
    return out


def feature_problems(modifiers: tuple, version: tuple[int, int], target_sm: int) -> list[str]:
    """The family's target and version messages in ptxas's order: the instruction's name
    (`cp.async.bulk`, `cp.reduce.async.bulk`, `.tensor`, `.prefetch`, `.commit_group`,
    `.wait_group`) and `.multicast::cluster` ("Modifier"), then per modifier as written: a
    shared::cta destination (PTX 8.6), `.tile`/`.im2col` (a tensor prefetch without a mode
    names `.tile`), the completion mechanism; `.wait_group.read`'s `.read` comes first
    ("Modifier '.read' ...").
    (ptxas names no `::cluster` here, as it does elsewhere.)"""
    reduce = modifiers[:1] == (".reduce",)
    name, rest = ("cp.reduce.async.bulk", modifiers[3:]) if reduce else ("cp.async.bulk", modifiers[2:])
    for part in (".prefetch", ".tensor"):
        if rest[:1] == (part,):
            name, rest = name + part, rest[1:]
    if rest[:1] in ((".commit_group",), (".wait_group",)):
        name, rest = name + rest[0], rest[1:]
    out = _needs(".read", version, target_sm, "Modifier") if ".read" in rest else []
    out += _needs(name, version, target_sm)
    if ".multicast::cluster" in rest:
        out += _needs(".multicast::cluster", version, target_sm, "Modifier")
    spaces = [m for m in rest if m in SPACES]
    for m in rest:
        if m == ".shared::cta" and spaces[:1] == [m] and not reduce and version < SHARED_CTA_VERSION:
            out.append(f"Feature '{name} with destination state space as .shared::cta' requires "
                       f"PTX ISA .version {SHARED_CTA_VERSION[0]}.{SHARED_CTA_VERSION[1]} or later")
        elif m in FEATURED:
            out += _needs(m, version, target_sm)
    if name == "cp.async.bulk.prefetch.tensor" and not any(m.startswith((".tile", ".im2col")) for m in rest):
        out += _needs(".tile", version, target_sm)
    return out
