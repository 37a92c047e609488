"""Dead-code elimination: operations without side effects whose results nobody reads, and
phis nobody reads, go (repeatedly, since removing one frees its inputs)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import phi_reads

# Opcodes that only compute their results. A load nobody reads goes too, from any space
# and with any cache operator, as ptxas deletes it; volatile, .mmio and acquire loads stay
# (ptxas keeps volatile ones; the other two order or touch devices).
PURE = frozenset({
    "mov", "cvt", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24", "fma", "div", "rem",
    "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "lop3", "setp", "set", "selp",
    "slct", "neg", "abs", "min", "max", "bfe", "bfi", "brev", "clz", "popc", "prmt", "bfind",
    "fns", "sad", "dp4a", "dp2a", "copysign", "testp", "sqrt", "rsqrt", "rcp", "ex2", "lg2",
    "sin", "cos", "tanh", "bmsk", "szext",
    # texture and surface reads and header queries (ptxas deletes them unread, `.trap`
    # surface loads included)
    "tex", "tld4", "txq", "suq", "suld", "istypep",
    "createpolicy",     # a cache-policy descriptor: arithmetic on its operands (isel/cache_policy.py)
    "stacksave",        # with no source: the stack pointer at the bottom of the frame (to_ssa)
    # video instructions (their selectors live in `ins.attrs`, which CSE's key includes)
    "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
    "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
    "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
})
KEPT_LOADS = frozenset({"volatile", "mmio", "acquire"})
PURE_OR_LOAD = PURE | {"ld", "ldu"}       # opcodes is_pure may accept
CARRY = ("cc",)       # add.cc & co. set the carry flag a later addc reads: not pure (one modifier)


# loads of the memory model's strong kinds (and volatile/mmio): each must read memory again, so
# that another thread's store becomes visible; loops keep them (not hoisted, not deleted with
# the loop), as ptxas keeps a relaxed load in its loop
STRONG_LOADS = KEPT_LOADS | {"relaxed"}


def is_strong_load(ins: ir.Instr) -> bool:
    return ins.opcode in ("ld", "ldu") and not STRONG_LOADS.isdisjoint(ins.modifiers)


def is_pure(ins: ir.Instr) -> bool:
    if not ins.dests or CARRY[0] in ins.modifiers:
        return False
    if ins.opcode in ("ld", "ldu"):
        return KEPT_LOADS.isdisjoint(ins.modifiers)
    return ins.opcode in PURE


def remove_dead_code(fn: ir.Function) -> bool:
    """One pass with a worklist: removing a dead operation lowers the use counts of the
    values it read, and those that reach zero are looked at next (a dead chain goes in one
    pass, not one link per pass)."""
    counts: dict[int, int] = {}              # value id -> operands reading it (`use_counts`)
    definers: dict[int, object] = {}         # value id -> the phi or instruction defining it
    get = counts.get
    Value, Address = ir.Value, ir.Address
    for block in fn.blocks:
        for phi in block.phis:
            definers[phi.dest.id] = phi
            for _, v in phi.incoming:
                if type(v) is Value:
                    counts[v.id] = get(v.id, 0) + 1
        for ins in block.instrs:
            op = ins.opcode
            if op in PURE and ins.dests and CARRY[0] not in ins.modifiers:    # is_pure, inlined
                for d in ins.dests:
                    definers[d.id] = ins
            elif op in PURE_OR_LOAD and is_pure(ins):
                for d in ins.dests:
                    definers[d.id] = ins
            for v in ins.srcs:
                t = type(v)
                if t is Value:
                    counts[v.id] = get(v.id, 0) + 1
                elif t is Address and type(v.base) is Value:
                    counts[v.base.id] = get(v.base.id, 0) + 1
            if ins.guard is not None and type(ins.guard) is Value:
                counts[ins.guard.id] = get(ins.guard.id, 0) + 1
            if ins.merge:
                for v in ins.merge:
                    if type(v) is Value:
                        counts[v.id] = get(v.id, 0) + 1
    dead: set[int] = set()                   # ids of removed phis and instructions
    work = [vid for vid in definers if not get(vid, 0)]
    Phi = ir.Phi
    while work:
        node = definers[work.pop()]
        if id(node) in dead:
            continue
        if type(node) is Phi:
            if get(node.dest.id, 0):
                continue
            reads = phi_reads(node)
        else:
            dests = node.dests
            if len(dests) == 1:
                if get(dests[0].id, 0):
                    continue
            elif any(get(d.id, 0) for d in dests):
                continue
            # plain sources read as they are (most instructions), else `_operands`
            reads = node.srcs if node.guard is None and not node.merge else _operands(node)
        dead.add(id(node))
        for v in reads:
            t = type(v)
            if t is not Value:
                if t is Address and type(v.base) is Value:
                    v = v.base
                else:
                    continue
            vid = v.id
            left = counts[vid] = counts[vid] - 1
            if not left and vid in definers:
                work.append(vid)
    if not dead:
        return False
    for block in fn.blocks:
        if block.phis:
            block.phis = [p for p in block.phis if id(p) not in dead]
        block.instrs = [i for i in block.instrs if id(i) not in dead]
    return True


def _operands(node: ir.Instr) -> list[ir.Value]:
    """The values an instruction reads, once per operand (as `use_counts`)."""
    out = []
    Value = ir.Value
    for s in node.srcs:
        t = type(s)
        if t is Value:
            out.append(s)
        elif t is ir.Address and type(s.base) is Value:
            out.append(s.base)
    if type(node.guard) is Value:
        out.append(node.guard)
    if node.merge:
        out.extend(m for m in node.merge if type(m) is Value)
    return out
