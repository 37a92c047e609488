"""The checks ptxas 13.5 makes of the tcgen05 tensor-memory instructions (PTX ISA
"Tensor Memory": tcgen05.alloc/dealloc/relinquish_alloc_permit, tcgen05.ld/st), in its words.

* ld/st: the shape (`.32x32b`, `.16x64b`, `.16x128b`, `.16x256b`, `.16x32bx2`), the `.num`
  `.x1`..`.x128` (a power of two; at most `.x64` for `.16x128b` and `.x32` for `.16x256b`),
  the type `.b32`, two operands (three for `.16x32bx2`: the immediate half-split offset) and
  a register vector of num registers times the shape's (2 for `.16x128b`, 4 for
  `.16x256b`).
* alloc/dealloc: `.cta_group::1` or `::2`; an immediate column count a multiple of 32, a
  power of two and in 32..512.
* On a target without tcgen05 (not sm_100a/f and up): ptxas names the shape or the CTA group
  as a feature too, around its "Instruction ... not supported" line.
"""
from __future__ import annotations

from ptx2sass.frontend import ast

SHAPES = {".32x32b": (1, 128), ".16x64b": (1, 128), ".16x128b": (2, 64),
          ".16x256b": (4, 32), ".16x32bx2": (1, 128)}     # (registers per num, largest num)
NUMS = {f".x{1 << k}": 1 << k for k in range(8)}
CTA_GROUPS = (".cta_group::1", ".cta_group::2")


def _name(ins: ast.Instruction) -> str:
    """`tcgen05.wait` for `tcgen05.wait::ld` (ptxas names the instruction without the kind)."""
    return "tcgen05" + (ins.modifiers[0].split("::")[0] if ins.modifiers else "")


def target_problems(ins: ast.Instruction, target: str) -> list[str]:
    """ptxas's lines for a tcgen05 instruction on a target without tcgen05."""
    line = f"Instruction '{_name(ins)}' not supported on .target '{target}'"
    shape = next((m for m in ins.modifiers if m in SHAPES), None)
    if shape is not None:
        return [f"Feature '{shape}' not supported on .target '{target}'", line]
    group = next((m for m in ins.modifiers if m in CTA_GROUPS), None)
    if group is not None:
        return [line, f"Feature '{group}' not supported on .target '{target}'"]
    return [line]


def problems(ins: ast.Instruction) -> list[str]:
    """ptxas's errors for a tcgen05 instruction's modifiers and operands."""
    kind = ins.modifiers[0] if ins.modifiers else ""
    if kind in (".ld", ".st"):
        return _load_store_problems(ins)
    if kind in (".alloc", ".dealloc"):
        return _allocation_problems(ins)
    return []


def _unknown(ins: ast.Instruction, known) -> list[str]:
    """'Unknown modifier' for an `.xN`/`.cta_group::N` spelling outside `known`."""
    stem = ".x" if known is NUMS else ".cta_group::"
    return [f"Unknown modifier '{m}'" for m in ins.modifiers
            if m.startswith(stem) and m not in known and m[len(stem):].isdigit()]


def _load_store_problems(ins: ast.Instruction) -> list[str]:
    name = _name(ins)
    out = _unknown(ins, NUMS)
    shape = next((m for m in ins.modifiers if m in SHAPES), None)
    num = next((NUMS[m] for m in ins.modifiers if m in NUMS), None)
    if num is None:
        return out + [f".num modifier required for instruction '{name}'"]
    if shape is None:
        return out
    per, largest = SHAPES[shape]
    if num > largest:
        return out + [f"Modifier .x{num} not allowed for instruction {name} with shape '{shape}'"]
    if ins.modifiers[-1] != ".b32":
        return out + [f"Unexpected instruction types specified for '{name}'"]
    if len(ins.operands) != (3 if shape == ".16x32bx2" else 2):
        return out + [f"Unexpected number of arguments specified for {name} with shape '{shape}'"]
    # st's vector follows the address (and 16x32bx2's half-split offset)
    position = 0 if ins.modifiers[0] == ".ld" else 2 if shape == ".16x32bx2" else 1
    vector = ins.operands[position]
    count = len(vector.elements) if isinstance(vector, ast.VectorOperand) else 1
    if count != per * num:
        out.append(f"Argument {position} of instruction '{name}': Argument vector size mismatch")
    return out


def _allocation_problems(ins: ast.Instruction) -> list[str]:
    name = _name(ins)
    out = _unknown(ins, CTA_GROUPS)
    if not any(m in CTA_GROUPS for m in ins.modifiers):
        return out + [f".cta_group modifier required for instruction '{name}'"]
    if len(ins.operands) != 2 or not isinstance(ins.operands[1], ast.IntLit):
        return out
    value = ins.operands[1].value
    if value <= 0:
        out.append(f"Argument 1 of instruction '{name}' : value '{value}' expected to be a non-zero positive")
    elif value % 32:
        out.append(f"Argument 1 of instruction '{name}': unexpected value '{value}', "
                   "expected to be multiple of 32")
    if value > 0 and value & (value - 1):
        out.append(f"Argument 1 of '{name}' instruction: value must be power of 2")
    if not 32 <= value <= 512:
        out.append(f"Argument 1 of instruction '{name}': value '{value}' out of range, "
                   "expected to be in range [32..512]")
    return out
