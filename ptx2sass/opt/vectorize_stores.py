"""Adjacent 32-bit stores to a kernel's own `.shared` variable merged into vector stores:
`st.shared.u32` of [buf+16], [buf+20], [buf+24], [buf+28] becomes one `st.shared.v4.u32`
(STS.128), as ptxas writes an unrolled prefix table (`prefix[w] = s; s += popc(...)`: four
running sums per STS.128). Only where the first address is a multiple of the vector's size:
the variable's alignment as laid out (`aligns`, at least its declared `.align`).

The merged store takes the place of the group's last store, where every value it writes is
defined. Between the group's first and last store nothing may read or write shared or
generic memory, synchronise or leave the block (only plain arithmetic and loads of other
spaces), and no address is stored twice, so every other access sees the same memory."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.vectorize import QUIET, WORD_TYPES

# loads that cannot read shared memory: they may sit between merged stores
OTHER_SPACES = ("global", "const", "param")
ENABLED = True      # (A/B runs turn it off)


def _candidate(ins: ir.Instr, aligns: dict[str, int]):
    """(symbol name, byte address within it, type) of a plain scalar shared store."""
    if (ins.opcode != "st" or ins.space != "shared" or ins.modifiers or ins.guard is not None
            or ins.dests or ins.type not in WORD_TYPES or len(ins.srcs) != 2):
        return None
    a, v = ins.srcs
    if not (isinstance(a, ir.Address) and isinstance(a.base, ir.Symbol) and a.base.name in aligns):
        return None
    if not isinstance(v, (ir.Value, ir.Const)):
        return None
    return a.base.name, a.base.offset + a.offset, ins.type


def _quiet(ins: ir.Instr) -> bool:
    """Touches no shared memory and orders nothing: may sit between merged stores."""
    if ins.opcode == "ld":
        return not ins.modifiers and ins.space in OTHER_SPACES
    return ins.opcode in QUIET and ins.opcode != "ld"


def vectorize_shared_stores(fn: ir.Function, aligns: dict[str, int]) -> bool:
    if not aligns or not ENABLED:
        return False
    changed = False
    for block in fn.blocks:
        window: list[int] = []                 # the candidate stores of the current run
        keys: set[tuple] = set()
        merged: dict[int, ir.Instr] = {}       # index of a group's last store -> the vector store
        dropped: set[int] = set()

        def flush():
            nonlocal changed
            at = {_candidate(block.instrs[i], aligns): i for i in window}
            used: set[int] = set()
            for width in (4, 2):
                for (name, addr, ty), i in sorted(at.items(), key=lambda kv: kv[1]):
                    size = 4 * width
                    if addr % size or aligns[name] < size or i in used:
                        continue
                    group = [at.get((name, addr + 4 * k, ty)) for k in range(width)]
                    if any(g is None or g in used for g in group):
                        continue
                    last = max(group)
                    first = block.instrs[group[0]]
                    values = [block.instrs[g].srcs[1] for g in group]
                    merged[last] = ir.Instr("st", srcs=[first.srcs[0], *values], modifiers=(f"v{width}",),
                                            type=ty, space="shared", line=block.instrs[last].line)
                    used.update(group)
                    dropped.update(g for g in group if g != last)
                    changed = True
            window.clear()
            keys.clear()

        for i, ins in enumerate(block.instrs):
            key = _candidate(ins, aligns)
            if key is not None:
                if key[:2] in keys:        # the same word stored again: the run ends before it
                    flush()
                window.append(i)
                keys.add(key[:2])
            elif not _quiet(ins):
                flush()
        flush()
        if merged:
            block.instrs[:] = [merged.get(i, ins) for i, ins in enumerate(block.instrs) if i not in dropped]
    return changed
