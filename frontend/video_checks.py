"""ptxas's checks of the video instructions' selectors and modifiers, in its words.

The instruction table checks video opcodes leniently (their operands carry selectors it
does not model); these are the rules ptxas 13 applies, read off its diagnostics:

* SIMD forms (vadd2 … vset4): the destination may carry a lane mask (.h0 .h1 .h10;
  .b0 … .b3210, lanes in descending order), a and b a lane selector (.hxy, x, y in 0..3;
  .bxyzw in 0..7); a, b and c must be registers ("Incorrect video selector for operand N",
  operands counted from the destination); c takes no selector ("… not allowed on 'source
  C' operand", after the per-operand messages); a spelling that is no selector at all is
  first "Unknown video selector"; `.sat` with `.add` is refused, vset2/vset4 take no
  `.sat`, and the only secondary operation is `.add`.
* scalar forms: a byte/half selector on the destination excludes a secondary operation
  (`.add`/`.min`/`.max`), and vmad takes none on its destination.
"""
from __future__ import annotations

import re

from ptx2sass.frontend import ast

SIMD = frozenset(f"{op}{n}" for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset")
                 for n in (2, 4))
SCALAR = frozenset(("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset"))
_KNOWN = re.compile(r"^(b[0-7]{1,4}|h[0-3]{1,2})$")
_SCALAR_SELECTORS = frozenset(("b0", "b1", "b2", "b3", "h0", "h1"))
_INT_TYPES = frozenset((".u32", ".s32"))


def _masks(n: int) -> frozenset:
    if n == 2:
        return frozenset(("h0", "h1", "h10"))
    out = set()
    for bits in range(1, 16):
        out.add("b" + "".join(str(i) for i in (3, 2, 1, 0) if bits >> i & 1))
    return frozenset(out)


def _lane_selector(n: int) -> re.Pattern:
    return re.compile(r"^h[0-3]{2}$" if n == 2 else r"^b[0-7]{4}$")


def _selector(node) -> str | None:
    if isinstance(node, ast.Name) and node.component is not None:
        return node.component.lstrip(".")
    return None


def video_problems(opcode: str, modifiers: tuple, operands: list) -> list[str]:
    """ptxas's messages for a video instruction's modifiers and selectors, in its order."""
    if opcode in SIMD:
        return _simd_problems(opcode, modifiers, operands)
    if opcode in SCALAR:
        shape = _scalar_shape_problems(opcode, modifiers, operands)
        if shape:
            return shape
    if opcode in SCALAR and operands:
        dsel = _selector(operands[0])
        if dsel in _SCALAR_SELECTORS:
            if opcode == "vmad":
                return ["Video selector is not allowed on destination for instruction 'vmad'"]
            if any(m in (".add", ".min", ".max") for m in modifiers):
                return ["Video instruction cannot have destination selector and secondary operation"]
    return []


_SECONDARY = frozenset((".add", ".min", ".max"))
_COMPARISONS = frozenset((".eq", ".ne", ".lt", ".le", ".gt", ".ge"))


def _scalar_shape_problems(opcode: str, modifiers: tuple, operands: list) -> list[str]:
    """The scalar video instructions' types, modifiers and operand count, in ptxas 13.5.37's
    words (probed on branch reject27): three .u32/.s32 types (vset two; vshl/vshr shift by a
    .u32), one secondary operation, one comparison (vset), a clamp mode (vshl/vshr), and
    d, a, b[, c] (c required with a secondary operation and by vmad)."""
    types = [m for m in modifiers if m[1:2] in "usbf" and m[2:].isdigit() or m in (".f16", ".f32")]
    if len(types) != (2 if opcode == "vset" else 3) or any(t not in _INT_TYPES for t in types):
        return [f"Unexpected instruction types specified for '{opcode}'"]
    secondary = [m for m in modifiers if m in _SECONDARY]
    if len(secondary) > 1:
        return ["Multiple instruction post-operation flags set"]
    comparisons = [m for m in modifiers if m in _COMPARISONS]
    if opcode == "vset" and len(comparisons) > 1:
        return ["Multiple comparisons set"]
    if opcode == "vset" and not comparisons:
        return ["Comparison modifier required for instruction 'vset'"]
    if opcode in ("vshl", "vshr"):
        if len([m for m in modifiers if m in (".clamp", ".wrap")]) > 1:
            return ["Multiple clamp modifiers specified"]
        if not {".clamp", ".wrap"} & set(modifiers):
            return [f"Clamp modifier required for instruction '{opcode}'"]
        if types[2] != ".u32":
            return ["Operation requires .u32 type"]
    if len([m for m in modifiers if m in (".shr7", ".shr15")]) > 1:
        return ["Multiple shift-right modifiers specified"]
    n = len(operands)
    if not (n == 4 if secondary or opcode == "vmad" else n in (3, 4)):
        return [f"Arguments mismatch for instruction '{opcode}'"]
    return []


def _simd_problems(opcode: str, modifiers: tuple, operands: list) -> list[str]:
    n = int(opcode[-1])
    types = [m for m in modifiers if m.startswith((".u", ".s", ".b", ".f")) and m[2:].isdigit()]
    if len(types) != (2 if opcode.startswith("vset") else 3) or any(t not in _INT_TYPES for t in types):
        return [f"Unexpected instruction types specified for '{opcode}'"]
    if opcode.startswith("vset") and len([m for m in modifiers if m in _COMPARISONS]) > 1:
        return ["Multiple comparisons set"]
    if opcode.startswith("vset") and not any(m in _COMPARISONS for m in modifiers):
        return [f"Comparison modifier required for instruction '{opcode}'"]
    if opcode.startswith("vset") and ".sat" in modifiers:
        return [f"Illegal modifier '.sat' for instruction '{opcode}'"]
    if ".min" in modifiers or ".max" in modifiers:
        return [f"Illegal secondary operation for video instruction '{opcode}'"]
    if ".sat" in modifiers and ".add" in modifiers:
        return ["Illegal combination of .sat and .add modifiers"]
    if len(operands) != 4:
        return [f"Arguments mismatch for instruction '{opcode}'"]
    out = []
    allowed = (_masks(n), _lane_selector(n), _lane_selector(n), _lane_selector(n))
    for i, node in enumerate(operands):
        sel = _selector(node)
        if i and not isinstance(node, ast.Name):
            out.append(f"Incorrect video selector for operand {i}")
            continue
        if sel is None:
            continue
        if not _KNOWN.match(sel):
            out.append(f"Unknown video selector: '.{sel}'")
        ok = sel in allowed[0] if i == 0 else bool(allowed[i].match(sel))
        if not ok:
            out.append(f"Incorrect video selector for operand {i}")
    if len(operands) == 4 and _selector(operands[3]) is not None:
        out.append("Video selector is not allowed on 'source C' operand")
    return out
