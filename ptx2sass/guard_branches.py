"""Guarded instructions the code generator expands into a sequence become a branch around
the unguarded instruction: `@p op d, a` → `@!p bra skip; op d, a; skip:`.

PTX lets any instruction take a guard; a guarded instruction that is not executed leaves
its destinations (and the carry flag) as they were. Where the selection writes one SASS
instruction the guard goes on it; where it writes a sequence with temporaries (integer and
IEEE division, the MUFU-based approximations, 64-bit bit-field operations, saturating
conversions from 64-bit integers, rounding to tf32, sm_90's %clusterid/%cluster_ctaid, min/max.f64, the compare-and-swap loops of 16-bit atomics
and of the atomics the shared unit lacks, shared or generic; the bulk and tensor copies' loops
over the lanes) a guard on every instruction of
the sequence would leave temporaries partly defined. (Carry chains stay refused: the carry
flag does not cross blocks yet.) A branch around the whole instruction
has the same meaning (the skipped lanes keep their destinations; a divergent guard
reconverges after the label like any other branch). Fuzz campaigns refused these as
"guarded `rem`/`div`/`min.f64`/`tanh`/`ex2`/`rcp`/`bfe.s64`/`cvt.sat.u8.u64` not supported"
(and sm_90a's "guarded `mov`" of %clusterid.x, fuzz 45000057/45000141).
"""
from __future__ import annotations

import dataclasses

from ptx2sass.frontend import ast

# opcodes whose every form is a sequence (or a MUFU with range fix-ups)
EXPANDED = frozenset({"div", "rem", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"})
# opcodes that are a sequence on 64-bit operands
EXPANDED_64 = frozenset({"popc", "brev", "bfi", "bfe", "clz", "bfind"})
# special registers read through a sequence (sm_90's %clusterid/%cluster_ctaid: %ctaid
# divided by the cluster's shape, isel/special_regs.py)
EXPANDED_SPECIALS = frozenset({"%clusterid", "%cluster_ctaid"})
WIDE_INTEGERS = frozenset({".b64", ".s64", ".u64"})
INTEGERS = frozenset({".b8", ".s8", ".u8", ".b16", ".s16", ".u16", ".b32", ".s32", ".u32", *WIDE_INTEGERS})


def _types(ins: ast.Instruction) -> list[str]:
    return [m for m in ins.modifiers if m in INTEGERS or m in (".f16", ".bf16", ".f32", ".f64")]


def _atomic_loop(ins: ast.Instruction) -> bool:
    """atom/red that the selection writes as a compare-and-swap loop (isel/memory.py)."""
    from ptx2sass.isel.memory import MemorySelection
    names = [m[1:] for m in ins.modifiers]
    op = next((m for m in names if m in MemorySelection.ATOM_OPS), None)
    ty = next((m for m in reversed(names) if m[0] in "bsuf" and m[1:2].isdigit()), None)
    if op is None or ty is None:
        return False
    if (op, ty) in (("cas", "b16"), ("add", "f16")):
        return True
    shared = any(m in ("shared", "shared::cta") for m in names)
    generic = not any(m in ("global", "shared::cluster") for m in names) and not shared
    # shared: a loop; generic: ATOM with a shared loop and a local fallback after it
    return (shared or generic) and (op, ty) in MemorySelection.SHARED_CAS_LOOP


def expands(ins: ast.Instruction) -> bool:
    """Whether the code generator writes `ins` as a sequence that a guard cannot cover."""
    op, mods = ins.opcode, set(ins.modifiers)
    if op in ("atom", "red"):
        return _atomic_loop(ins)
    if op == "cp" and ".bulk" in mods and not mods & {".commit_group", ".wait_group"} \
            or op == "fence" and ".tensormap::generic" in mods \
            or op == "clusterlaunchcontrol" and ".try_cancel" in mods:
        # a unit instruction issued once per warp from uniform registers in a loop over the
        # lanes (isel/tensor_copy.py, isel/bulk_copy.py): under a guard, a warp where no
        # lane's guard holds would still issue it once, with stale operands
        return True
    if op in EXPANDED:
        return True
    if op == "mov" and any(isinstance(o, ast.Name) and o.name in EXPANDED_SPECIALS for o in ins.operands):
        return True
    if op in EXPANDED_64 and mods & WIDE_INTEGERS:
        return True
    if op in ("min", "max") and ".f64" in mods and ".NaN" not in mods:
        return True
    if op == "cvt" and ".tf32" in mods:     # rounding by integer steps under predicates
        return True
    if op == "cvt" and ".sat" in mods:
        types = _types(ins)
        if len(types) == 2 and (types[1] in WIDE_INTEGERS and types[0] in INTEGERS or types[0] == ".f64"):
            return True
    return False


class _Rewriter:
    def __init__(self):
        self.count = 0

    def statements(self, stmts: list) -> list:
        out = []
        for st in stmts:
            if type(st) is ast.Instruction and st.guard is None:     # the common case first
                out.append(st)
            elif isinstance(st, ast.Block):
                out.append(dataclasses.replace(st, statements=self.statements(st.statements)))
            elif isinstance(st, ast.Instruction) and st.guard is not None and expands(st):
                self.count += 1
                skip = f"$guard{self.count}$skip"
                target = ast.Name(line=st.line, column=st.column, name=skip)
                out += [ast.Instruction(line=st.line, column=st.column, opcode="bra", modifiers=(),
                                        operands=[target],
                                        guard=dataclasses.replace(st.guard, negated=not st.guard.negated)),
                        dataclasses.replace(st, guard=None),
                        ast.Label(line=st.line, column=st.column, name=skip)]
            else:
                out.append(st)
        return out


def branch_around_expanded_guards(module: ast.Module) -> ast.Module:
    """The module with every guarded instruction that `expands` branched around (a new
    module; the input is left as it is)."""
    from ptx2sass.frontend.depth import deep_walks
    rewriter = _Rewriter()
    items = []
    with deep_walks():      # blocks nest as deep as ptxas takes (1663): walked recursively
        for item in module.items:
            if isinstance(item, ast.Function) and item.body is not None:
                body = dataclasses.replace(item.body,
                                           statements=rewriter.statements(item.body.statements))
                item = dataclasses.replace(item, body=body)
            items.append(item)
    if not rewriter.count:
        return module
    return dataclasses.replace(module, items=items)
