"""Adjacent 32-bit loads from a function-local `.shared` variable merged into vector loads:
`ld.shared.f32` of [buf+16], [buf+20], [buf+24], [buf+28] becomes one `ld.shared.v4.f32`
(LDS.128), as ptxas does for the second phase of every tinygrad reduction (after unrolling:
one load per element of the shared buffer). Only where the alignment is known: the
variable's declared `.align` and the constant offset make the first address a multiple of
the vector's size. The loads move up to the first of them; nothing between them may write
memory or synchronise (only plain arithmetic and other plain loads may sit between), so
they read the same values."""
from __future__ import annotations

from ptx2sass import ir

WORD_TYPES = ("b32", "f32", "u32", "s32")
# Instructions that may sit between merged loads: they neither write memory nor order it.
QUIET = frozenset({"add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs",
                   "neg", "and", "or", "xor", "not", "shl", "shr", "mov", "cvt", "setp",
                   "selp", "ex2", "lg2", "sin", "cos", "rcp", "sqrt", "rsqrt", "cvta", "copysign",
                   "bfe", "bfi", "prmt", "popc", "clz", "brev", "testp", "slct", "set", "mul24",
                   "mad24", "sad", "lop3", "shf", "cnot", "tanh", "fns", "ld"})


def _candidate(ins: ir.Instr, aligns: dict[str, int]):
    """(symbol name, byte address within it, type) of a plain scalar shared load."""
    if (ins.opcode != "ld" or ins.space != "shared" or ins.modifiers or ins.guard is not None
            or len(ins.dests) != 1 or ins.type not in WORD_TYPES or len(ins.srcs) != 1):
        return None
    a = ins.srcs[0]
    if not (isinstance(a, ir.Address) and isinstance(a.base, ir.Symbol) and a.base.name in aligns):
        return None
    return a.base.name, a.base.offset + a.offset, ins.type


def vectorize_shared_loads(fn: ir.Function) -> bool:
    aligns = {v.name: v.align for v in fn.locals if v.space == "shared"}
    if not aligns:
        return False
    changed = False
    for block in fn.blocks:
        window: list[int] = []             # indices of the plain loads since the last barrier
        merged: dict[int, ir.Instr] = {}   # index of a group's first load -> the vector load
        dropped: set[int] = set()

        def flush():
            nonlocal changed
            at: dict[tuple, int] = {}
            for i in window:
                name, addr, ty = _candidate(block.instrs[i], aligns)
                at.setdefault((name, addr, ty), i)
            used: set[int] = set()
            for width in (4, 2):
                for (name, addr, ty), i in sorted(at.items(), key=lambda kv: kv[1]):
                    size = 4 * width
                    if addr % size or aligns[name] < size:
                        continue
                    group = [at.get((name, addr + 4 * k, ty)) for k in range(width)]
                    if any(g is None or g in used for g in group):
                        continue
                    first = min(group)
                    dests = [block.instrs[g].dests[0] for g in group]
                    src = block.instrs[group[0]].srcs[0]
                    merged[first] = ir.Instr("ld", dests=dests, srcs=[src], modifiers=(f"v{width}",),
                                             type=ty, space="shared", line=block.instrs[first].line)
                    used.update(group)
                    dropped.update(g for g in group if g != first)
                    changed = True
            window.clear()

        for i, ins in enumerate(block.instrs):
            if _candidate(ins, aligns) is not None:
                window.append(i)
            elif ins.opcode not in QUIET or (ins.opcode == "ld" and ins.space not in (None, "global", "shared", "const", "param")):
                flush()
            elif ins.opcode == "ld" and (ins.modifiers or ins.space is None):
                flush()
        flush()
        if merged:
            block.instrs[:] = [merged.get(i, ins) for i, ins in enumerate(block.instrs) if i not in dropped]
    return changed
