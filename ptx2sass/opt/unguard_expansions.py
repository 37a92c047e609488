"""A guarded operation that becomes a sequence of instructions runs unguarded, and a `selp`
on its guard picks the result: `@p mad.hi.s64 d, a, b, c` -> `t = mad.hi.s64 a, b, c;
d = selp t, d_old, p`.

Selected under its guard, every instruction of the sequence (twenty for a 64-bit `mad.hi`,
a division's fast and slow paths) carries the guard, keeps the guard's predicate live
throughout, and its carries and partial results merge with the old value at each step; with
the predicate file short, the allocator recomputed the compare before each of them (fuzz seed
21000218: 38 registers and 1.8x ptxas's emulated cycles). ptxas computes such operations
unguarded and selects once. A predicated-off instruction still issues, so running the
sequence unguarded costs no more than guarding it; the operations moved are pure and cannot
trap, so computing them where the guard is false changes nothing else.

The video instructions (scalar `vadd` ... `vset`, SIMD `vadd2` ... `vset4`) are sequences
too: a lane is extracted, extended, computed and inserted back (fuzz seed 28001950, sm_100,
`@%p0 vabsdiff4.s32.u32.s32`: each guarded lane value held its own register until the
merge, 90 registers against ptxas's 28; ptxas computes them unguarded and merges once)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dce import is_pure

WIDE = ("s64", "u64", "b64")
# operations selected as sequences: integer and IEEE division and remainder, correctly
# rounded reciprocals and square roots, and 64-bit multiplies
SEQUENCES = frozenset({"div", "rem", "sqrt", "rcp"})
WIDE_SEQUENCES = frozenset({"mul", "mad"})
# video instructions: integer code lane by lane (isel/video.py, isel/simd_video.py)
VIDEO = frozenset({"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset"}
                  | {f"{op}{n}" for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset")
                     for n in (2, 4)})


def _expands(ins: ir.Instr) -> bool:
    if ins.opcode in SEQUENCES:
        return "approx" not in ins.modifiers
    if ins.opcode in VIDEO:
        return True
    return ins.opcode in WIDE_SEQUENCES and ins.type in WIDE


def unguard_expansions(fn: ir.Function) -> bool:
    changed = False
    for b in fn.blocks:
        out = []
        for ins in b.instrs:
            if (not isinstance(ins.guard, ir.Value) or len(ins.dests) != 1 or len(ins.merge) != 1
                    or ins.dests[0].type == "pred" or not _expands(ins) or not is_pure(ins)
                    or ins.dests[0].type not in ir.TYPES):
                out.append(ins)
                continue
            d, old, p = ins.dests[0], ins.merge[0], ins.guard
            t = fn.new_value(d.type, d.name)
            bits = ir.type_bits(d.type)
            first, second = (old, t) if ins.guard_negated else (t, old)
            ins.dests, ins.guard, ins.guard_negated, ins.merge = [t], None, False, []
            out.append(ins)
            out.append(ir.Instr("selp", dests=[d], srcs=[first, second, p], type=f"b{bits}", line=ins.line))
            changed = True
        b.instrs = out
    return changed
