"""cp.reduce.async.bulk's operation and type rules, as ptxas 13.5 checks them (probed by the
lead, 2026-11-29: every operation x type x `.noftz` x destination on sm_90; ours accepted
`add.b32`, `inc.s32`, `and.u32`, `min.u64` into shared::cluster, ... and refused the float
reductions into global memory as "not supported yet"):

    cp.reduce.async.bulk.global.shared::cta.bulk_group.<op>[.noftz].<type> [g], [s], size
    cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.<op>.<type>
        [d], [s], size, [mbar]

Types each operation takes: add u32 s32 u64 f32 f64 f16 bf16 (f16/bf16 with `.noftz`), min/max
u32 s32 u64 s64 f16 bf16, inc/dec u32, and/or/xor b32 b64. Into shared::cluster no float type
("Arguments mismatch"), no 64-bit min/max/logic. `.noftz` only for f16/bf16 add (f32 add from
PTX ISA 9.4)."""
from __future__ import annotations

NAME = "cp.reduce.async.bulk"
OPS = (".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor")
TYPES_OF = {".add": {".u32", ".s32", ".u64", ".f32", ".f64", ".f16", ".bf16"},
            ".min": {".u32", ".s32", ".u64", ".s64", ".f16", ".bf16"},
            ".inc": {".u32"}, ".and": {".b32", ".b64"}}
TYPES_OF[".max"] = TYPES_OF[".min"]
TYPES_OF[".dec"] = TYPES_OF[".inc"]
TYPES_OF[".or"] = TYPES_OF[".xor"] = TYPES_OF[".and"]
FLOATS = (".f16", ".bf16", ".f32", ".f64")
NOFTZ_F32 = (9, 4)          # the PTX ISA version that allows add.noftz.f32


def applies(opcode: str, modifiers: tuple) -> bool:
    return opcode == "cp" and modifiers[:3] == (".reduce", ".async", ".bulk") \
        and ".tensor" not in modifiers


def problems(modifiers: tuple, version: tuple[int, int]) -> list[str]:
    op = next((m for m in modifiers if m in OPS), None)
    ty = next((m for m in reversed(modifiers) if m in FLOATS or m[1:2] in "bus" and m[2:].isdigit()), None)
    if op is None or ty is None:
        return []                  # (left to the general checks)
    cluster = ".shared::cluster" in modifiers
    noftz = ".noftz" in modifiers
    if cluster and ty in FLOATS:
        return [f"Arguments mismatch for instruction '{NAME}'"]
    out = []
    if ty not in TYPES_OF[op]:
        out.append(f"Incorrect type '{ty}' for operation '{op}' in instruction '{NAME}'")
    if cluster and ty in (".u64", ".b64") and op != ".add":
        out.append(f"Illegal reduction operation for instruction '{NAME}.shared::cluster.shared::cta{ty}'")
    if cluster and ty == ".s64":
        out.append(f"Illegal type for {NAME} with .shared::cluster destination state space")
    if noftz:
        if ty == ".f32" and version < NOFTZ_F32:
            out.append(f"Feature '{NAME} with .noftz and .f32' requires PTX ISA .version "
                       f"{NOFTZ_F32[0]}.{NOFTZ_F32[1]} or later")
        if ty == ".f64":
            out.append(f"Illegal modifier '.noftz' for instruction '{NAME}' with type '.f64'")
        elif ty in FLOATS and op != ".add":
            out.append(f"Illegal modifier '.noftz' for instruction '{NAME}' with '{op}'")
        elif ty not in FLOATS:
            out.append(f"Illegal modifier '.noftz' for instruction '{NAME}'")
    elif op == ".add" and ty in (".f16", ".bf16"):
        out.append(f"Modifier '.noftz' required for instruction '{NAME}' with type '{ty}' and "
                   f"operation '{op}'")
    return out
