"""Small `.local` arrays indexed at run time live in registers, one per word, as ptxas keeps
them: a store at a computed offset writes every word under a predicate (`ISETP.EQ` of the
offset against the word's, then a predicated move), and a load at a computed offset is a
chain of predicated moves. Triton's Payne-Hanek reduction (unary_math) fills a 28-byte table
in a `nounroll` loop and reads it at a computed index: four LDL/STL per call in memory.

ptxas 13.5's rule (`tests/test_local_table_promotion.py`'s probes, the same for sm_75 to
sm_120): the array is at most `MAX_BYTES` and at least one access has a constant address
(a store or a load at `[t+24]`); with every access at a computed address it stays in memory
at any size. We also ask that the array be private to these accesses (its address reaches
nothing but `.local` loads and stores of 32-bit words and the additions deriving their
addresses) and that the accesses be unguarded and not volatile. The frame goes whole or not
at all (the probes `memory_frame_*`): with another referenced local kept in memory (a 64-byte
array, a byte array) ptxas keeps the small ones there too. (ptxas also keeps them for a dead
`mov.u64 %rd, a` of another local; ours has removed that by then.)

Out of range, PTX leaves the access undefined; as in ptxas's code a store there writes no
word and a load there gives an unspecified value (the chain starts from an undefined one).

With the array's address taken as 0, every address derived from it is the offset into it;
the words then become SSA values (phis where stores' effects meet, on the iterated dominance
frontier of the blocks that store, renamed over the dominator tree)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dead_local_stores import _address_origins, _origin, _referenced_symbols
from ptx2sass.opt.fold import signed_value
from ptx2sass.opt.uses import substitute

MAX_BYTES = 28          # ptxas: 28-byte arrays are promoted, 32-byte ones are not
WORD = 4
WORD_TYPES = frozenset({"b32", "u32", "s32", "f32"})
_DERIVE = frozenset({"mov", "add", "sub"})     # address arithmetic whose result stays base + offset


def promote_local_tables(fn: ir.Function) -> bool:
    names = {v.name for v in fn.locals if v.space == "local" and 0 < v.size <= MAX_BYTES}
    if not names:
        return False
    points_to = _address_origins(fn, {v.name for v in fn.locals if v.space == "local"})
    if points_to is None:
        return False
    idom = ir.dominators(fn)
    if any(b not in idom for b in fn.blocks):
        return False
    # ptxas promotes the frame whole or not at all: one referenced local that stays in
    # memory (too big, its address used otherwise, even a dead `mov.u64 %rd, a`) keeps
    # the others there too
    referenced = _referenced_symbols(fn)
    if any(v.space == "local" and v.name in referenced and v.name not in names for v in fn.locals):
        return False
    plans = []
    for var in [v for v in fn.locals if v.name in names and v.name in referenced]:
        plan = _accesses(fn, var, points_to)
        if plan is None:
            return False
        plans.append((var, plan))
    for var, plan in plans:
        _promote(fn, var, *plan)
    return bool(plans)


def _accesses(fn: ir.Function, var: ir.Variable, points_to):
    """Where `var` qualifies: the instructions and phis deriving addresses into it, its
    loads and stores (block, instruction, constant offset or None), and the offsets of the
    derived values known to be constant. Else None."""
    mine = {var.name}
    derivations, derived_phis, accesses, constant = [], [], [], False
    const_offset: dict[int, int] = {}       # value id -> its offset into var, where known
    for block in fn.blocks:
        for phi in block.phis:
            origin = points_to.get(phi.dest.id, set())
            if var.name in origin:
                if origin != mine:
                    return None
                derived_phis.append(phi)
        for ins in block.instrs:
            touches = [i for i, s in enumerate(ins.srcs) if var.name in _origin(s, points_to, mine)]
            if any(var.name in _origin(m, points_to, mine) for m in ins.merge):
                return None
            if not touches:
                continue
            if ins.dests and ins.dests[0].id in points_to and var.name in points_to[ins.dests[0].id]:
                # address arithmetic: base (+|-) something that does not point anywhere, or
                # a scaled index added to the base (`mad.wide` of `mul.wide` + `add`)
                if _is_scaled_index(ins):
                    if (touches != [2] or points_to[ins.dests[0].id] != mine
                            or any(_origin(s, points_to, mine) for s in ins.srcs[:2])):
                        return None
                    derivations.append(ins)
                    continue
                if (ins.opcode not in _DERIVE or ins.modifiers or ins.guard is not None or len(ins.dests) != 1
                        or points_to[ins.dests[0].id] != mine or touches != [0]
                        or any(_origin(s, points_to, mine) for s in ins.srcs[1:])
                        or any(isinstance(s, ir.Address) for s in ins.srcs)
                        or (ins.opcode == "mov" and len(ins.srcs) != 1)):
                    return None
                base = _offset_of(ins.srcs[0], const_offset)
                if base is not None:
                    if ins.opcode == "mov":
                        const_offset[ins.dests[0].id] = base
                    elif isinstance(ins.srcs[1], ir.Const):
                        c = signed_value(ins.srcs[1].value, ir.type_bits(ins.srcs[1].type))
                        const_offset[ins.dests[0].id] = base + c if ins.opcode == "add" else base - c
                derivations.append(ins)
                continue
            if (ins.opcode not in ("ld", "st") or ins.space != "local" or touches != [0]
                    or not isinstance(ins.srcs[0], ir.Address) or ins.guard is not None
                    or "volatile" in ins.modifiers or ins.type not in WORD_TYPES):
                return None
            if ins.opcode == "ld" and (len(ins.dests) != 1 or len(ins.srcs) != 1
                                       or ir.type_bits(ins.dests[0].type) != 32):
                return None
            if ins.opcode == "st" and (len(ins.srcs) != 2 or ins.dests or _origin(ins.srcs[1], points_to, mine)
                                       or not _is_word(ins.srcs[1])):
                return None
            at = _offset_of(ins.srcs[0].base, const_offset)
            if at is not None:
                at += ins.srcs[0].offset
                if at % WORD or not 0 <= at <= var.size - WORD:
                    return None
                constant = True
            accesses.append((block, ins, at))
    if not constant:
        return None
    return derivations, derived_phis, accesses, const_offset


def _is_scaled_index(ins: ir.Instr) -> bool:
    """`mad.lo`/`mad.wide` a, b, base: an index times a size plus an address, whose result
    stays base + offset whatever a and b are."""
    return (ins.opcode == "mad" and ins.modifiers in (("lo",), ("wide",)) and ins.guard is None
            and len(ins.dests) == 1 and len(ins.srcs) == 3 and ins.type in ir.TYPES
            and ins.type[0] in "bsu" and not any(isinstance(s, ir.Address) for s in ins.srcs))


def _is_word(v) -> bool:
    return isinstance(v, (ir.Value, ir.Const)) and v.type in ir.TYPES and ir.type_bits(v.type) == 32


def _offset_of(operand, const_offset: dict[int, int]) -> int | None:
    if isinstance(operand, ir.Symbol):
        return operand.offset
    if isinstance(operand, ir.Value):
        return const_offset.get(operand.id)
    return None


def _promote(fn: ir.Function, var: ir.Variable, derivations, derived_phis, accesses, const_offset) -> None:
    scaled = _scaled_indices(derivations, const_offset)
    # the address of var is 0 from here: what derives from it is the offset into it
    for ins in derivations:
        if ins.opcode == "add" and _offset_of(ins.srcs[0], const_offset) == 0:
            ins.opcode, ins.srcs, ins.modifiers = "mov", [ins.srcs[1]], ()     # 0 + x
            continue
        if ins.opcode == "mad":
            ins.srcs = [*ins.srcs[:2], _as_offset(ins.srcs[2], ins.dests[0].type)]
            continue
        ins.srcs = [_as_offset(ins.srcs[0], ins.dests[0].type), *ins.srcs[1:]]
    for phi in derived_phis:
        phi.incoming = [(b, _as_offset(v, phi.dest.type)) for b, v in phi.incoming]
    words = var.size // WORD
    store_blocks = {id(b): b for b, ins, _ in accesses if ins.opcode == "st"}
    idom = ir.dominators(fn)
    phis: dict[int, list[ir.Phi]] = {}
    for b in _iterated_frontier(fn, idom, list(store_blocks.values())):
        phis[id(b)] = [ir.Phi(fn.new_value("b32", f"{var.name}.{w}")) for w in range(words)]
        b.phis.extend(phis[id(b)])
    undefined = [fn.new_value("b32", f"{var.name}.{w}") for w in range(words)]
    fn.entry.instrs[0:0] = [ir.Instr("undef", [v], type="b32") for v in undefined]
    kind = {id(ins): at for _, ins, at in accesses}
    word_writes: list[ir.Instr] = []

    children: dict[int, list[ir.Block]] = {}
    for b, d in idom.items():
        if d is not None:
            children.setdefault(id(d), []).append(b)
    stack = [(fn.entry, list(undefined))]
    while stack:
        block, current = stack.pop()
        if id(block) in phis:
            current = [phi.dest for phi in phis[id(block)]]
        out = []
        for ins in block.instrs:
            if id(ins) not in kind:
                out.append(ins)
                continue
            at = kind[id(ins)]
            addr = ins.srcs[0]
            if ins.opcode == "st":
                value = ins.srcs[1]
                if at is not None:
                    current[at // WORD] = value
                    continue
                for w in range(words):
                    p = _equals(fn, out, addr, w, ins.line, scaled)
                    new = fn.new_value("b32", f"{var.name}.{w}")
                    out.append(ir.Instr("mov", [new], [value], type="b32", guard=p, merge=[current[w]],
                                        line=ins.line))
                    word_writes.append(out[-1])
                    current[w] = new
                continue
            dest = ins.dests[0]
            if at is not None:
                out.append(ir.Instr("mov", [dest], [current[at // WORD]], type=dest.type, line=ins.line))
                continue
            prev = fn.new_value(dest.type, dest.name)
            out.append(ir.Instr("undef", [prev], type=dest.type, line=ins.line))
            for w in range(words):
                p = _equals(fn, out, addr, w, ins.line, scaled)
                new = dest if w == words - 1 else fn.new_value(dest.type, dest.name)
                out.append(ir.Instr("mov", [new], [current[w]], type=dest.type, guard=p, merge=[prev],
                                    line=ins.line))
                prev = new
        block.instrs = out
        for s in block.succs:
            for phi, v in zip(phis.get(id(s), ()), current):
                phi.incoming.append((block, v))
        for c in children.get(id(block), ()):
            stack.append((c, list(current)))
    fn.locals = [v for v in fn.locals if v is not var]
    ours = {id(p) for ps in phis.values() for p in ps}
    _remove_trivial_phis(fn, ours)
    _remove_unread_words(fn, ours, {id(i) for i in word_writes})


def _as_offset(operand, ty: str):
    if isinstance(operand, ir.Symbol):
        return ir.Const(operand.offset % (1 << ir.type_bits(ty)), ty)
    return operand


def _scaled_indices(derivations, const_offset) -> dict[int, tuple]:
    """Value id -> (index, scale, signed) for the offsets that are a 32-bit index times a
    constant, widened exactly (`mad.wide.{u32,s32} index, scale, var + 0`)."""
    out = {}
    for ins in derivations:
        if (ins.opcode == "mad" and ins.modifiers == ("wide",) and ins.type in ("u32", "s32")
                and _offset_of(ins.srcs[2], const_offset) == 0):
            a, b = ins.srcs[:2]
            index, scale = (a, b) if isinstance(b, ir.Const) else (b, a)
            if isinstance(index, ir.Value) and isinstance(scale, ir.Const):
                signed = ins.type == "s32"
                c = signed_value(scale.value, 32) if signed else scale.value & 0xFFFFFFFF
                if c:
                    out[ins.dests[0].id] = (index, c, signed)
    return out


def _equals(fn: ir.Function, out: list, addr: ir.Address, w: int, line, scaled=None) -> ir.Value:
    """A predicate: the computed address `addr` is word `w`'s. Where the offset is a 32-bit
    index times a constant (exact in 64 bits), the index itself is compared: one 32-bit
    compare instead of a 64-bit one, and the product is not needed."""
    base = addr.base
    p = fn.new_value("pred")
    want = (w * WORD - addr.offset) % (1 << ir.type_bits(base.type))
    if scaled and base.id in scaled:
        index, c, signed = scaled[base.id]
        target = signed_value(want, 64) if signed else want
        lo, hi = (-(1 << 31), 1 << 31) if signed else (0, 1 << 32)
        if target % c == 0 and lo <= target // c < hi:
            out.append(ir.Instr("setp", [p], [index, ir.Const((target // c) & 0xFFFFFFFF, index.type)],
                                modifiers=("eq",), type="b32", line=line))
            return p
    out.append(ir.Instr("setp", [p], [base, ir.Const(want, base.type)], modifiers=("eq",),
                        type=f"b{ir.type_bits(base.type)}", line=line))
    return p


def _iterated_frontier(fn: ir.Function, idom, blocks: list[ir.Block]) -> list[ir.Block]:
    frontier: dict[int, list[ir.Block]] = {}
    for b in fn.blocks:
        if b not in idom or len(b.preds) < 2:
            continue
        for p in b.preds:
            runner = p
            while runner is not None and p in idom and runner is not idom[b]:
                listed = frontier.setdefault(id(runner), [])
                if b not in listed:
                    listed.append(b)
                runner = idom[runner]
    out, seen, work = [], set(), list(blocks)
    while work:
        b = work.pop()
        for f in frontier.get(id(b), ()):
            if id(f) not in seen:
                seen.add(id(f))
                out.append(f)
                work.append(f)
    return [b for b in fn.blocks if id(b) in seen]      # in block order


def _remove_trivial_phis(fn: ir.Function, ours: set[int]) -> None:
    """Phis whose inputs are one value (or themselves) become that value; repeated until
    none is left."""
    while True:
        subst = {}
        for b in fn.blocks:
            kept = []
            for phi in b.phis:
                if id(phi) in ours:
                    others = {id(v) if isinstance(v, ir.Value) else v: v for _, v in phi.incoming
                              if v is not phi.dest}
                    if len(others) == 1:
                        subst[phi.dest.id] = next(iter(others.values()))
                        continue
                kept.append(phi)
            b.phis = kept
        if not subst:
            return
        substitute(fn, subst)


def _remove_unread_words(fn: ir.Function, phis: set[int], writes: set[int]) -> None:
    """The word phis and predicated word writes no load reads (a word the loop stores that
    a later constant store overwrites: a cycle of a phi and a write that reference counting
    keeps)."""
    defined: dict[int, object] = {}
    for b in fn.blocks:
        for phi in b.phis:
            if id(phi) in phis:
                defined[phi.dest.id] = phi
        for ins in b.instrs:
            if id(ins) in writes:
                defined[ins.dests[0].id] = ins
    live: set[int] = set()
    work = []

    def read(v) -> None:
        if isinstance(v, ir.Address):
            v = v.base
        if isinstance(v, ir.Value) and v.id in defined and v.id not in live:
            live.add(v.id)
            work.append(defined[v.id])

    for b in fn.blocks:
        for phi in b.phis:
            if id(phi) not in phis:
                for _, v in phi.incoming:
                    read(v)
        for ins in b.instrs:
            if id(ins) not in writes:
                for v in (*ins.srcs, *ins.merge, ins.guard):
                    read(v)
    while work:
        node = work.pop()
        if isinstance(node, ir.Phi):
            for _, v in node.incoming:
                read(v)
        else:
            for v in (*node.srcs, *node.merge, node.guard):
                read(v)
    for b in fn.blocks:
        b.phis = [phi for phi in b.phis if id(phi) not in phis or phi.dest.id in live]
        b.instrs = [ins for ins in b.instrs if id(ins) not in writes or ins.dests[0].id in live]
