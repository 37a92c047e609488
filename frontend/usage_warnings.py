"""Diagnostics about how the PTX uses instructions rather than whether it is valid: the
warnings ptxas gives only when asked (`--warn-on-double-precision-use`) and the advisories it
gives unless told not to (`mma.sp`).

ptxas warns once for every instruction with an `.f64` type, twice for `cvt` and `testp`
(measured with 13.5: it lowers those in two steps and warns in each; with -Werror it stops
at the first, so once). Instructions ptxas expands through its internal macro library
(`div`/`rcp`/`sqrt` of f64 with IEEE rounding) draw further warnings from it that name
`<macro util>` lines; we warn once for them (as ptxas does with -Werror).
"""
from __future__ import annotations

from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast

DOUBLE_USE = "Program is doing double precision computations."
TWICE = frozenset({"cvt", "testp"})     # warned twice (once with -Werror)
SPARSE_MMA_ADVISORY = ("Advisory: Modifier '.sp::ordered_metadata' should be used on instruction "
                       "'mma' instead of modifier '.sp' as it is expected to have substantially "
                       "reduced performance on some future architectures")


def _instructions(module: ast.Module):
    """(file, instruction) for every instruction of the module, in PTX order."""
    for fn in module.functions():
        if fn.body is not None:
            file = fn.file or module.file
            yield from ((file, st) for st in _function_instructions(fn))


def _function_instructions(fn: ast.Function):
    """Every instruction of a function with a body, in PTX order (nested blocks in place)."""
    pending = [iter(fn.body.statements)]       # blocks being read, innermost last
    while pending:
        for st in pending[-1]:
            t = type(st)
            if t is ast.Instruction:
                yield st
            elif t is ast.Block:
                pending.append(iter(st.statements))
                break                          # the block first, then the rest after it
        else:
            pending.pop()


def module_opcodes(module: ast.Module) -> set[str]:
    """The opcodes of every function body's instructions (nested blocks too): the rules
    below for rare instructions are given it and skip the walk where theirs is absent."""
    found: set[str] = set()
    Instruction, Block = ast.Instruction, ast.Block
    pending = [fn.body.statements for fn in module.functions() if fn.body is not None]
    while pending:
        statements = pending.pop()
        found.update({st.opcode for st in statements if type(st) is Instruction})
        pending.extend(st.statements for st in statements if type(st) is Block)
    return found


SETMAXNREG_IGNORED = ("(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to "
                      "determine register count at entry.")


def setmaxnreg_advisories(module: ast.Module, opcodes: set[str] | None = None) -> list[CompileError]:
    """ptxas 13.5's info line (no file or line) for each kernel that has `setmaxnreg` but no
    `.maxnreg`: it drops the kernel's setmaxnreg instructions (isel: sel_setmaxnreg).
    `opcodes`: `module_opcodes(module)`, where known."""
    if opcodes is not None and "setmaxnreg" not in opcodes:
        return []
    return [CompileError(SETMAXNREG_IGNORED, None, None, None, "info") for fn in module.functions()
            if fn.kind == ".entry" and fn.body is not None
            and not any(d.name == ".maxnreg" for d in fn.directives)
            and any(st.opcode == "setmaxnreg" for st in _function_instructions(fn))]


WGMMA_WAIT_INJECTED = ("(C7517) wgmma.wait_group is injected in around line {line} by compiler "
                       "to allow use of registers defined by GMMA in function '{name}'")


def _names(node) -> set[str]:
    """The register names an operand mentions."""
    if type(node) is ast.Name:
        return {node.name}
    if isinstance(node, list):
        return set().union(*map(_names, node)) if node else set()
    if hasattr(node, "__dataclass_fields__"):
        return set().union(set(), *(_names(getattr(node, f)) for f in node.__dataclass_fields__
                                    if f not in ("line", "column")))
    return set()


def wgmma_wait_injections(module: ast.Module, opcodes: set[str] | None = None) -> list[CompileError]:
    """ptxas 13.5's info line (no file) for each point where it injects a
    `wgmma.wait_group 0`: an instruction other than wgmma reading a register that a
    `wgmma.mma_async` not yet waited for defines (its accumulator; groups complete in
    order, so `wait_group N` leaves the last N committed groups pending). Walked in PTX
    order, as isel does (isel/wgmma.py wait_for_accumulators writes the wait); every MMA
    counts as done after one. (ptxas's C7514/C7515 serialization lines are not given.)
    `opcodes`: `module_opcodes(module)`, where known."""
    if opcodes is not None and "wgmma" not in opcodes:
        return []
    from ptx2sass.frontend.to_ssa import NO_RESULT
    out = []
    for fn in module.functions():
        if fn.body is None:
            continue
        groups: list[set] = []
        open_: set = set()
        for st in _function_instructions(fn):
            mods = st.modifiers
            if st.opcode == "wgmma":
                if ".mma_async" in mods and st.operands:
                    open_ |= _names(st.operands[0])
                elif ".commit_group" in mods:
                    if open_:
                        groups.append(open_)
                    open_ = set()
                elif ".wait_group" in mods and st.operands and type(st.operands[0]) is ast.IntLit:
                    n = st.operands[0].value
                    groups = groups[len(groups) - n:] if n else []
                continue
            if not (groups or open_):
                continue
            key = st.opcode + (mods[0] if mods else "")
            read = st.operands if st.opcode in NO_RESULT or key in NO_RESULT else st.operands[1:]
            if _names(read) & set().union(open_, *groups):
                out.append(CompileError(WGMMA_WAIT_INJECTED.format(line=st.line, name=fn.name),
                                        None, None, None, "info"))
                groups, open_ = [], set()
    return out


def double_precision_warnings(module: ast.Module, as_errors: bool = False) -> list[CompileError]:
    """One warning per double-precision instruction use, in PTX order (`as_errors`: the
    count ptxas reaches with -Werror)."""
    out: list[CompileError] = []
    for file, st in _instructions(module):
        if ".f64" in st.modifiers:
            times = 2 if st.opcode in TWICE and not as_errors else 1
            out.extend(CompileError(DOUBLE_USE, file, st.line, st.column, "warning")
                       for _ in range(times))
    return out


def sparse_mma_advisories(module: ast.Module, opcodes: set[str] | None = None) -> list[CompileError]:
    """ptxas 13.5's advisory (an info line, not a warning: -w and -Werror leave it) for each
    `mma.sp` written without `::ordered_metadata`, on every target and PTX version.
    `opcodes`: `module_opcodes(module)`, where known."""
    if opcodes is not None and "mma" not in opcodes:
        return []
    return [CompileError(SPARSE_MMA_ADVISORY, file, st.line, st.column, "info")
            for file, st in _instructions(module) if st.opcode == "mma" and ".sp" in st.modifiers]


# the targets ptxas 13.5.37 names for cp.async.bulk[.tensor]'s `.multicast::cluster` (no
# advisory there); every other target draws it once per instruction (a warning: -w hides it,
# -Werror makes it an error, --suppress-async-bulk-multicast-advisory-warning drops it)
MULTICAST_TARGETS = ("sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_107a", "sm_107f",
                     "sm_110a", "sm_110f")
MULTICAST_ADVISORY = ("Advisory: '.multicast::cluster' modifier on instruction 'cp.async.bulk{{.tensor}}' "
                      f"should be used on .target '{'/'.join(MULTICAST_TARGETS)}' instead of .target "
                      "'{target}' as this feature is expected to have substantially reduced performance "
                      "on some future architectures")


def bulk_multicast_advisories(module: ast.Module, target: str | None,
                              opcodes: set[str] | None = None) -> list[CompileError]:
    """ptxas's advisory for each cp.async.bulk / cp.async.bulk.tensor with
    `.multicast::cluster` on a target outside `MULTICAST_TARGETS`."""
    if target is None or target in MULTICAST_TARGETS or opcodes is not None and "cp" not in opcodes:
        return []
    return [CompileError(MULTICAST_ADVISORY.format(target=target), file, st.line, st.column, "warning")
            for file, st in _instructions(module)
            if st.opcode == "cp" and st.modifiers[:2] == (".async", ".bulk")
            and ".multicast::cluster" in st.modifiers]
