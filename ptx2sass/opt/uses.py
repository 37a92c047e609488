"""Uses of SSA values: rewriting operands through a substitution map (Value id -> operand),
and who reads each value."""
from __future__ import annotations

from ptx2sass import ir


def substitute(fn: ir.Function, subst: dict[int, object]) -> bool:
    """Replace every use of a substituted value; True if any operand changed. A constant
    only replaces plain source operands and phi inputs; addresses, guards and guarded-write
    merges take values only."""
    changed = False

    def resolve(v, allow_const: bool):
        nonlocal changed
        seen = 0
        while isinstance(v, ir.Value) and v.id in subst and seen < 64:
            new = subst[v.id]
            if not allow_const and not isinstance(new, ir.Value):
                break
            v, seen = new, seen + 1
        changed |= seen > 0
        return v

    Value, Address = ir.Value, ir.Address
    for block in fn.blocks:
        for phi in block.phis:
            phi.incoming = [(b, resolve(v, True)) for b, v in phi.incoming]
        for ins in block.instrs:
            srcs = ins.srcs
            copied = False          # the list is replaced, not changed in place, if at all
            for k, s in enumerate(srcs):
                t = type(s)
                if t is Value:
                    if s.id not in subst:
                        continue
                    s = resolve(s, True)
                elif t is Address and type(s.base) is Value and s.base.id in subst:
                    base = resolve(s.base, False)
                    if base is s.base:
                        continue
                    s = Address(base, s.offset)
                else:
                    continue
                if not copied:
                    srcs = ins.srcs = list(srcs)
                    copied = True
                srcs[k] = s
            if ins.guard is not None:
                ins.guard = resolve(ins.guard, False)
            if ins.merge:
                ins.merge = [resolve(m, False) if isinstance(m, ir.Value) else m for m in ins.merge]
    return changed


def reads(fn: ir.Function):
    """(block, reader, value) for every operand that reads a value: the reader is the
    instruction where the value is a plain source operand, None where it is read otherwise
    (an address base, a guard, a guarded write's merge, a phi input; a phi input is read in
    the block it comes from)."""
    for block in fn.blocks:
        for phi in block.phis:
            for pred, v in phi.incoming:
                if isinstance(v, ir.Value):
                    yield pred, None, v
        for ins in block.instrs:
            for who, v in instr_reads(ins):
                yield block, who, v


def instr_reads(ins: ir.Instr):
    """(reader, value) for each operand of `ins` that reads a value (`reads`' readers)."""
    for s in ins.srcs:
        if isinstance(s, ir.Address):
            if isinstance(s.base, ir.Value):
                yield None, s.base
        elif isinstance(s, ir.Value):
            yield ins, s
    if isinstance(ins.guard, ir.Value):
        yield None, ins.guard
    for m in ins.merge:
        if isinstance(m, ir.Value):
            yield None, m


def phi_reads(phi: ir.Phi) -> list[ir.Value]:
    return [v for _, v in phi.incoming if isinstance(v, ir.Value)]


def readers(fn: ir.Function) -> dict[int, list]:
    """Value id -> one entry per operand that reads it: the instruction where it is a plain
    source operand, None where it is read otherwise (see `reads`). The walk is `reads`'
    spelled out: it runs several times per optimisation round over every instruction."""
    out: dict[int, list] = {}
    Value, Address = ir.Value, ir.Address
    for block in fn.blocks:
        for phi in block.phis:
            for _, v in phi.incoming:
                if isinstance(v, Value):
                    out.setdefault(v.id, []).append(None)
        for ins in block.instrs:
            for s in ins.srcs:
                if isinstance(s, Address):
                    if isinstance(s.base, Value):
                        out.setdefault(s.base.id, []).append(None)
                elif isinstance(s, Value):
                    out.setdefault(s.id, []).append(ins)
            if isinstance(ins.guard, Value):
                out.setdefault(ins.guard.id, []).append(None)
            for m in ins.merge:
                if isinstance(m, Value):
                    out.setdefault(m.id, []).append(None)
    return out


def use_counts(fn: ir.Function) -> dict[int, int]:
    """Value id -> how many operands read it (`readers`' list lengths, in its order)."""
    counts: dict[int, int] = {}
    get = counts.get
    Value, Address = ir.Value, ir.Address
    for block in fn.blocks:
        for phi in block.phis:
            for _, v in phi.incoming:
                if isinstance(v, Value):
                    counts[v.id] = get(v.id, 0) + 1
        for ins in block.instrs:
            for s in ins.srcs:
                if isinstance(s, Address):
                    s = s.base
                    if isinstance(s, Value):
                        counts[s.id] = get(s.id, 0) + 1
                elif isinstance(s, Value):
                    counts[s.id] = get(s.id, 0) + 1
            g = ins.guard
            if isinstance(g, Value):
                counts[g.id] = get(g.id, 0) + 1
            for m in ins.merge:
                if isinstance(m, Value):
                    counts[m.id] = get(m.id, 0) + 1
    return counts
