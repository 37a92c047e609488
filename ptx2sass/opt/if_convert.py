"""A branch around a few loads and stores becomes predicated code (if-conversion of a
triangle).

nvcc writes a bounds-checked load `v = (i < n) ? p[i] : 0` as

    mov.f32 %f1, 0f00000000;  @%p bra JOIN;  ld.global.f32 %f1, [%rd];  JOIN: ...

Selected as it stands, each such load sits in a branch region of its own (BSSY, BRA, LDG,
BSYNC) and the next one waits for it to return before its branch; a tiled matmul's two tile
loads go one after the other, twice the memory latency per tile. ptxas predicates them
(`@!P1 LDG.E R24, [R10.64]` after `MOV R24, RZ`) and issues both before either store.

The rewrite, for a block S whose only predecessor P ends in a guarded `bra` and whose only
successor J has exactly P and S as predecessors: S's loads and stores are guarded with the
condition under which S ran (ptxas's `@!P0 STS.64 [R5], R2` for a warp's leader), each
load taking J's phi input from P as its value where the guard is false (the IR's
guarded-write merge; zero for a result read only inside S); S's cheap arithmetic
(addresses, and sums of what S loaded, as in a shared-memory tree reduction's
`s[t] += s[t + step]`) runs unconditionally; a
phi whose input from S is arithmetic becomes a `selp`, except where that arithmetic is computed
from S's loads (an accumulation `sum += f(p[i])`): then it is guarded too, writing the phi's
value as its guarded-write merge, and the loads need no default (_guarded_arithmetic). S joins P, and P falls through to J.
A diamond whose other arm is empty (NVVM's `@%p bra THEN; bra.uni ELSE; THEN: ld ...;
bra.uni J; ELSE: mov %f, 0; J:`, the move a phi input once in SSA) is that triangle: the
empty block is P's edge to J (`EMPTY_ARMS`; pcr_tridiag_smem's two guarded prologue loads
went one after the other, ptxas issues both before either store).
A branch to a block that only exits stays (it is a guarded EXIT, as in ptxas's code). Only
small bodies of plain arithmetic, loads and stores qualify. ptxas predicates a body of up to
20 SASS instructions and branches around one of 21, however many of them are loads and stores
(measured on sm_75 to sm_120 with two guarded regions of 1 to 8 loads, a chain of 2 to 100
`fma`s and 1 to 14 stores); the body's PTX, less its `cvta`s (no SASS instruction), is
one instruction under its SASS, whence MAX_BODY (sm_90's ptxas also reloads a parameter
inside the region, so there it branches one instruction sooner: the caller passes
`Target.predicated_body_limit`). Bodies that qualify: anything with another effect (atomics, barriers, shuffles, calls)
or a guard of its own stays a branch.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.contract import ORIGIN
from ptx2sass.opt.dce import is_strong_load
from ptx2sass.opt.uses import substitute

MAX_BODY = 19
# instructions that select to no SASS instruction of their own (not counted in MAX_BODY)
FREE = frozenset({"cvta"})

# Arithmetic cheap enough to run on the lanes that skip the body, and without effects.
SPECULATE = frozenset({"mov", "cvt", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24",
                       "and", "or", "xor", "not", "shl", "shr", "setp", "selp", "min", "max",
                       "neg", "abs", "fma", "bfe", "prmt"})
LOAD_SPACES = frozenset({"global", "shared", "local", "const", None})
# guard S's arithmetic on loaded values that reaches J's phis (see _guarded_arithmetic)
GUARD_ARITHMETIC = True
# a diamond whose other arm is empty converts as the triangle it is (see _convert's `via`)
EMPTY_ARMS = True
SIGN_OPS = frozenset({"abs", "neg"})
SELP_TYPES = frozenset({"b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64"})


def _speculable(ins: ir.Instr) -> bool:
    if ins.guard is not None or not ins.dests or "cc" in ins.modifiers:
        return False
    if ins.opcode in ("mul", "mad") and ins.type in ("f32", "f64", "f16", "bf16"):
        return True
    if ins.opcode in ("div", "rem"):
        return False
    return ins.opcode in SPECULATE and all(d.type != "pred" or ins.opcode == "setp" for d in ins.dests)


def _loadable(ins: ir.Instr) -> bool:
    """A plain load: guarding it keeps exactly its meaning (no lane that skipped the body
    touches memory)."""
    return (ins.opcode == "ld" and ins.guard is None and bool(ins.dests) and ins.space in LOAD_SPACES
            and not is_strong_load(ins))


def _storable(ins: ir.Instr) -> bool:
    """A plain store: guarded, only the lanes that ran the body write."""
    return (ins.opcode == "st" and ins.guard is None and not ins.dests
            and ins.space in ("global", "shared", "local", None)
            and not any(m in ("volatile", "relaxed", "release", "mmio") for m in ins.modifiers))


def _ran_when(branch: ir.Instr, body_taken: bool) -> tuple[ir.Value, bool]:
    """(predicate, negated) under which the body ran."""
    taken_negated = branch.guard_negated
    return branch.guard, taken_negated if body_taken else not taken_negated


def if_convert_loads(fn: ir.Function, max_body: int = MAX_BODY) -> bool:
    changed = False
    for p in list(fn.blocks):
        if p not in fn.blocks or len(p.succs) != 2 or not p.instrs:
            continue
        branch = p.instrs[-1]
        if branch.opcode != "bra" or branch.guard is None or branch.guard.type != "pred":
            continue
        for k in (1, 0):
            s, j = p.succs[k], p.succs[1 - k]
            via = None
            if EMPTY_ARMS and s.succs and _forwards(j, p) is s.succs[0]:
                via, j = j, s.succs[0]
            if _convert(fn, p, s, j, branch, body_taken=(k == 0), via=via, max_body=max_body):
                changed = True
                break
    return changed


def _forwards(e: ir.Block, p: ir.Block) -> ir.Block | None:
    """The block `e` only passes control on to: `e` is reached from `p` alone and holds
    nothing (no phis, no instructions but an unguarded `bra`). None otherwise."""
    if e.preds != [p] or e.phis or len(e.succs) != 1:
        return None
    if any(i.opcode != "bra" or i.guard is not None for i in e.instrs) or len(e.instrs) > 1:
        return None
    return e.succs[0]


def _convert(fn: ir.Function, p: ir.Block, s: ir.Block, j: ir.Block, branch: ir.Instr,
             body_taken: bool, via: ir.Block | None = None, max_body: int = MAX_BODY) -> bool:
    """`via`: the empty block on P's other edge to J (a diamond whose else arm is empty,
    NVVM's `@p bra THEN; bra.uni ELSE; THEN: ld; bra.uni J; ELSE: J: phi [0, ld]`): J's
    inputs from it are those from P, and it goes with S."""
    other = via or p
    if s is p or j is p or s is j or s is fn.entry or s.preds != [p] or s.succs != [j] or s.phis:
        return False
    if len(j.preds) != 2 or set(map(id, j.preds)) != {id(other), id(s)}:
        return False
    if not body_taken and fn.is_entry and _only_exits(j):
        return False        # `@P EXIT` and the body unguarded, as ptxas writes it
    body = list(s.instrs)
    if body and body[-1].opcode == "bra":
        if body[-1].guard is not None:
            return False
        body = body[:-1]
    if not body or _cost(body) > max_body or any(i.opcode in ir.TERMINATORS for i in body):
        return False
    loads = [i for i in body if _loadable(i)]
    stores = [i for i in body if _storable(i)]
    if any(i not in loads and i not in stores and not _speculable(i) for i in body):
        return False
    if not loads and not stores and not j.phis:
        return False
    defined_by = {d.id: ins for ins in body for d in ins.dests}
    # every value defined in the body and read after it reaches J's phis only (the body's
    # values are not available on the other path)
    inputs = {}
    for phi in j.phis:
        from_p = [v for b, v in phi.incoming if b is other]
        from_s = [v for b, v in phi.incoming if b is s]
        if len(from_p) != 1 or len(from_s) != 1 or phi.dest.type == "pred":
            return False
        inputs[id(phi)] = (from_p[0], from_s[0])
    body_ids = {id(i) for i in body}
    # SSA: S dominates only itself (J has P as a predecessor too), so a value of the body can
    # be read outside it only by a phi of J; J is checked as the guard against anything else
    # (scanning every block made the pass quadratic in the number of branches)
    for b in (j,):
        for ins in b.instrs:
            for v in _reads(ins):
                if isinstance(v, ir.Value) and v.id in defined_by:
                    return False
        for phi in b.phis:
            for blk, v in phi.incoming:
                if isinstance(v, ir.Value) and v.id in defined_by and not (b is j and blk is s):
                    return False
    # a load's result that reaches a phi takes that phi's input from P as its else-value
    # (one phi per result); one read only inside the body takes zero, which the
    # (unguarded) arithmetic reading it then works on where the body did not run
    load_ids = {d.id for ld in loads for d in ld.dests}
    merge_of: dict[int, object] = {}
    for phi in j.phis:
        x, y = inputs[id(phi)]
        if isinstance(y, ir.Value) and y.id in load_ids:
            if y.id in merge_of:
                return False
            merge_of[y.id] = x
        elif isinstance(y, ir.Value) and y.id in defined_by and phi.dest.type not in SELP_TYPES:
            return False
    # arithmetic on what S loaded that reaches a phi (an accumulation `sum += f(p[i])`) is
    # guarded too, each result taking its phi's input from P as its else-value: then no
    # load needs a default (no `MOV R, RZ` before each load, whose register the allocator
    # would share between terms, serialising them), as in ptxas's `@!P4 FFMA R15, ...`
    guarded = _guarded_arithmetic(body, loads, stores, inputs, load_ids, merge_of) if GUARD_ARITHMETIC else {}
    undefined = []
    for ld in loads:
        for d in ld.dests:
            if d.id not in merge_of:
                if d.type not in SELP_TYPES:
                    return False
                if guarded:
                    merge_of[d.id] = fn.new_value(d.type)
                    undefined.append(ir.Instr("undef", [merge_of[d.id]], type=d.type, line=branch.line))
                else:
                    merge_of[d.id] = ir.Const(0, d.type)
    # rewrite
    for b in (p, s, j):
        mark_origin(b)
    pred, negated = _ran_when(branch, body_taken)
    for ins, else_values in guarded.values():
        ins.guard, ins.guard_negated = pred, negated
        for k, m in enumerate(else_values):
            if m is None:
                m = else_values[k] = fn.new_value(ins.dests[k].type)
                undefined.append(ir.Instr("undef", [m], type=m.type, line=branch.line))
        ins.merge = else_values
    guarded_ids = {d.id for ins, _ in guarded.values() for d in ins.dests}
    for ld in loads:
        ld.guard, ld.guard_negated = pred, negated
        ld.merge = [merge_of[d.id] for d in ld.dests]
    for st in stores:
        st.guard, st.guard_negated = pred, negated
    new = undefined + list(body)
    subst: dict[int, object] = {}
    for phi in j.phis:
        x, y = inputs[id(phi)]
        if isinstance(y, ir.Value) and (y.id in load_ids or y.id in guarded_ids):
            subst[phi.dest.id] = y
        elif x == y or (isinstance(x, ir.Value) and isinstance(y, ir.Value) and x.id == y.id):
            subst[phi.dest.id] = x
        else:
            # selp d, a, b, c: c ? a : b, with c the predicate (negated: the branch's sense)
            a, b = (x, y) if negated else (y, x)
            new.append(ir.Instr("selp", dests=[phi.dest], srcs=[a, b, pred], type=_selp_type(phi.dest.type),
                                line=branch.line))
    j.phis = []
    p.instrs = p.instrs[:-1] + new
    p.succs = [j]
    j.preds = [p]
    fn.blocks.remove(s)
    if via is not None:
        fn.blocks.remove(via)
    if subst:
        substitute(fn, subst)
    return True


def mark_origin(b: ir.Block) -> None:
    """Each instruction of `b` keeps the block it was written in (`ORIGIN`, once): ptxas
    contracts a multiply into an add only within a block of the PTX (opt/contract.py), and
    P, S and J become one block here."""
    for ins in b.instrs:
        ins.attrs.setdefault(ORIGIN, id(b))


def _guarded_arithmetic(body, loads, stores, inputs, load_ids, merge_of) -> dict:
    """The body's arithmetic to guard, {id: (instr, else-values)}: everything computed from
    S's loads, when some of it reaches a phi of J (each such result with one phi, whose input
    from P is its else-value; None: read only inside S, no else-value needed). Empty where
    the arithmetic stays unguarded: nothing of it reaches a phi, a result is a predicate, or
    one result feeds two phis. An abs or neg read only inside S stays unguarded, to be folded
    into its guarded reader as ptxas folds it."""
    reaching = {}
    for x, y in inputs.values():
        if isinstance(y, ir.Value) and y.id not in load_ids:
            if y.id in reaching:
                return {}
            reaching[y.id] = x
    tainted = set(load_ids)
    out = {}
    for ins in body:
        if ins in loads or ins in stores:
            continue
        if any(isinstance(v, ir.Value) and v.id in tainted for v in _reads(ins)):
            if any(d.type == "pred" for d in ins.dests):
                return {}
            tainted.update(d.id for d in ins.dests)
            if ins.opcode in SIGN_OPS and not any(d.id in reaching for d in ins.dests):
                continue        # unguarded: its reader's operand modifier (`@!P0 FMUL R7, |R6|, 0.5`)
            out[id(ins)] = (ins, [reaching.get(d.id) for d in ins.dests])
    if not any(d.id in reaching for ins, _ in out.values() for d in ins.dests):
        return {}
    return out


def _cost(body: list[ir.Instr]) -> int:
    """The body's size as ptxas weighs it: its instructions that become SASS instructions."""
    return sum(1 for i in body if i.opcode not in FREE)


def _only_exits(b: ir.Block) -> bool:
    """A block that only ends the kernel: a branch to it is selected as a guarded EXIT."""
    return (not b.phis and len(b.instrs) == 1 and b.instrs[0].opcode in ("ret", "exit")
            and b.instrs[0].guard is None)


def _selp_type(ty: str) -> str:
    return ty


def _reads(ins: ir.Instr):
    for v in ins.srcs:
        if isinstance(v, ir.Address):
            yield v.base
        else:
            yield v
    if ins.guard is not None:
        yield ins.guard
    yield from ins.merge
