"""The bulk tensor copies' shapes (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`,
`cp.async.bulk.prefetch.tensor`), checked as ptxas 13.5.37 does (its words, read off its
diagnostics): im2col modes need 3 or more dimensions ("Modifier '.2d' cannot be combined
with modifier '.im2col'", twice for a load and a prefetch), the tensor operand's braced
coordinates number the dimensions and the im2col offsets two fewer ("Argument N of
instruction '...': Argument vector size mismatch", N counting operands from 1), and an
im2col load or prefetch without its offsets is an argument mismatch; a `.param` variable
named as the tensor map is a state-space mismatch (its address needs cvta.param). gather4 and
scatter4 take 2d and five coordinates, im2col::w 3d or more and two offsets (ptxas 13.5.37:
"Modifier '.3d' cannot be combined with modifier '.tile::gather4'", once)."""
from __future__ import annotations

from ptx2sass.frontend import ast

DIMS = {".1d": 1, ".2d": 2, ".3d": 3, ".4d": 4, ".5d": 5}
IM2COL = (".im2col", ".im2col_no_offs")
# four rows of a 2d tensor: a column and four row coordinates (PTX ISA 8.6, sm_100a/sm_120a)
FOUR_ROWS = (".tile::gather4", ".tile::scatter4")
# im2col::w: 3d-5d, two 16-bit offsets `{wHalo, wOffset}` whatever the dimensions
IM2COL_W = (".im2col::w", ".im2col::w::128")


def applies(opcode: str, modifiers: tuple) -> bool:
    return opcode == "cp" and ".tensor" in modifiers


def name(modifiers: tuple) -> str:
    """ptxas's name of the instruction in its messages."""
    if modifiers[:1] == (".reduce",):
        return "cp.reduce.async.bulk.tensor"
    if ".prefetch" in modifiers:
        return "cp.async.bulk.prefetch.tensor"
    return "cp.async.bulk.tensor"


def _braced(node) -> int | None:
    """The number of elements of a braced operand (None for another operand)."""
    return len(node.elements) if isinstance(node, ast.VectorOperand) else None


def problems(modifiers: tuple, operands: list, space_of=lambda name: None) -> list[str]:
    """ptxas's messages, in its order; `space_of(Name)`: a variable's state space (None for
    a register), for a tensor map named by a `.param` variable ("State space mismatch")."""
    what = name(modifiers)
    dims = next((DIMS[m] for m in modifiers if m in DIMS), None)
    mode = next((m for m in modifiers if m in IM2COL + IM2COL_W + FOUR_ROWS), None)
    if dims is None:
        return []
    out = []
    load = ".mbarrier::complete_tx::bytes" in modifiers and ".prefetch" not in modifiers
    prefetch = ".prefetch" in modifiers
    if mode in IM2COL and dims < 3:
        message = f"Modifier '.{dims}d' cannot be combined with modifier '{mode}'"
        out += [message] * (2 if load or prefetch else 1)
    if mode in IM2COL_W and dims < 3 or mode in FOUR_ROWS and dims != 2:
        out.append(f"Modifier '.{dims}d' cannot be combined with modifier '{mode}'")
    at = 1 if load else 0                    # the tensor operand `[tmap, {coords}]`
    if len(operands) > at and isinstance(operands[at], ast.Address):
        elements = operands[at].elements
        if elements and isinstance(elements[0], ast.Name) and space_of(elements[0]) in (
                ".param", ".param::entry", ".param::func"):
            out.append(f"State space mismatch between instruction and address in instruction '{what}'")
        coords = elements[1:]
        count = _braced(coords[0]) if len(coords) == 1 else len(coords)
        if count is not None and count != (5 if mode in FOUR_ROWS else dims):
            out.append(f"Argument {at + 1} of instruction '{what}': Argument vector size mismatch")
    if out or mode not in (".im2col",) + IM2COL_W:
        return out
    at = 3 if load else 1                    # the im2col offsets `{o, ..}`
    if len(operands) <= at or _braced(operands[at]) is None:
        return [f"Arguments mismatch for instruction '{what}'"] * 2
    if _braced(operands[at]) != (2 if mode in IM2COL_W else dims - 2):
        out.append(f"Argument {at + 1} of instruction '{what}': Argument vector size mismatch")
    return out


def _arch_specific_100(target: str, sm: int) -> bool:
    """sm_100a/f, sm_103a/f, sm_110a/f: the targets ptxas 13.5.37 takes the sm_100a modes on
    (not sm_120a/f nor sm_121a, nor a target without the suffix)."""
    return 100 <= sm < 120 and target[-1:] in ("a", "f")


def target_problems(modifiers: tuple, target: str, sm: int) -> list[str]:
    """ptxas 13.5.37's refusals of the sm_100a modes by target, in its order and words:
    `.cta_group::N` (twice for ::2), gather4 / im2col::w by destination space (into
    shared::cta: any sm_100+ target), scatter4, `::w::128`, and the prefetch of either mode."""
    if not applies("cp", modifiers):
        return []
    out = []
    special = _arch_specific_100(target, sm)
    for m in modifiers:
        if m.startswith(".cta_group::") and not special:
            out += [f"Feature '{m}' not supported on .target '{target}'"] * (2 if m.endswith("2") else 1)
    mode = next((m for m in modifiers if m in FOUR_ROWS + IM2COL_W), None)
    if mode is None:
        return out
    prefetch = ".prefetch" in modifiers
    if mode == ".im2col::w::128" or mode == ".tile::scatter4":
        if not special:
            out.append(f"Feature '{mode}' not supported on .target '{target}'")
    elif prefetch:
        if not special:
            out.append(f"Feature '{mode} with cp.async.bulk.prefetch.tensor' not supported on .target '{target}'")
    elif ".shared::cta" in modifiers:
        if sm < 100:
            out.append(f"Feature '{mode} with destination state space as .shared::cta' requires "
                       ".target sm_100 or higher")
    elif not special:
        out.append(f"Feature '{mode} with destination state space as .shared::cluster' not supported "
                   f"on .target '{target}'")
    return out
