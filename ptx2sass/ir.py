"""The SSA IR between the frontend and code generation.

PTX is already a typed three-address code over virtual registers, so the IR keeps PTX's
operations (opcode + modifiers + instruction type) and changes what matters for optimisation
and allocation: every value is defined once (`Value`), merges are explicit `Phi`s, control flow
is a CFG of `Block`s ending in one terminator, and memory operations carry their state space
and alignment. Predicates are ordinary values of type `pred`; a vector load defines one value
per element.

Order is always explicit (lists, and dicts in insertion order): no decision here depends on
object identity or hashing, so compilation is deterministic across processes.
"""
from __future__ import annotations

from dataclasses import field
from itertools import islice
from operator import attrgetter

from ptx2sass.records import dataclass

# PTX fundamental types: name -> (kind, bits). kind: b(its), u(nsigned), s(igned), f(loat), pred.
TYPES: dict[str, tuple[str, int]] = {
    "pred": ("pred", 1),
    "b8": ("b", 8), "b16": ("b", 16), "b32": ("b", 32), "b64": ("b", 64), "b128": ("b", 128),
    "u8": ("u", 8), "u16": ("u", 16), "u32": ("u", 32), "u64": ("u", 64),
    "s8": ("s", 8), "s16": ("s", 16), "s32": ("s", 32), "s64": ("s", 64),
    "f16": ("f", 16), "f16x2": ("f", 32), "bf16": ("f", 16), "bf16x2": ("f", 32),
    "tf32": ("f", 32), "f32": ("f", 32), "f64": ("f", 64),
    "e4m3x2": ("f", 16), "e5m2x2": ("f", 16),
    # Blackwell's narrow pairs (fp4 in a byte; fp6 and the ue8m0 scale in 16 bits)
    "e2m1x2": ("f", 8), "e2m3x2": ("f", 16), "e3m2x2": ("f", 16), "ue8m0x2": ("f", 16),
    "e4m3x4": ("f", 32), "e5m2x4": ("f", 32), "e2m3x4": ("f", 32), "e3m2x4": ("f", 32),
    "e2m1x4": ("f", 16),
}


def type_bits(ty: str) -> int:
    return TYPES[ty][1]


@dataclass(eq=False)
class Value:
    """One SSA definition. `name` is the PTX register it came from (for dumps only)."""
    id: int
    type: str
    name: str = ""

    def __repr__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True)
class Const:
    """An immediate; `value` is the integer bit pattern for `type` (floats as their bits)."""
    value: int
    type: str


@dataclass(frozen=True)
class Symbol:
    """The address of a module- or function-level variable (`.global`, `.shared`, `.const`,
    `.local`, `.param`) or of a function, plus a byte offset."""
    name: str
    offset: int = 0


@dataclass(frozen=True)
class SpecialReg:
    """A PTX special register such as `%tid.x`, `%laneid`, `%clock64`."""
    name: str
    type: str


@dataclass
class Address:
    """A memory operand `[base + offset]`; base is a Value, a Symbol, or None (absolute)."""
    base: "Value | Symbol | None"
    offset: int = 0


Operand = Value | Const | Symbol | SpecialReg | Address


# ir.Function.attributes key: the function has alloca/stackrestore (its stack size is unknown)
DYNAMIC_STACK = "$dynamic_stack"


@dataclass(eq=False)
class Instr:
    """One operation. `opcode`/`modifiers`/`type` keep PTX's spelling (`ld`, `("global",
    "nc")`, `"f32"`); `types` holds the extra types of multi-type instructions (cvt's source,
    mad.wide's…). Memory instructions set `space` and `align`."""
    opcode: str
    dests: list[Value] = field(default_factory=list)
    srcs: list[Operand] = field(default_factory=list)
    modifiers: tuple[str, ...] = ()
    type: str | None = None
    types: tuple[str, ...] = ()
    guard: Value | None = None
    guard_negated: bool = False
    # For a guarded instruction with results: the value each dest keeps where the guard is
    # false (the register's previous value), so a predicated write is a proper SSA merge.
    merge: list = field(default_factory=list)
    space: str | None = None
    align: int | None = None
    line: int | None = None          # PTX source line, for diagnostics and -lineinfo
    attrs: dict = field(default_factory=dict)  # per-opcode extras (call: `.param` returns)

    @property
    def is_terminator(self) -> bool:
        return self.opcode in TERMINATORS


# Operations that end a block. `bra` with a guard is a conditional branch: its block has two
# successors (taken first, then fall-through).
TERMINATORS = frozenset({"bra", "brx", "ret", "exit", "trap_exit"})


@dataclass(eq=False)
class Phi:
    dest: Value
    incoming: list[tuple["Block", "Value | Const"]] = field(default_factory=list)


@dataclass(eq=False)
class Block:
    """`nounroll`: a `.pragma "nounroll"` applies to the loop this block heads (PTX ISA,
    "Descriptions of .pragma Strings"): the loop is kept as written."""
    name: str
    phis: list[Phi] = field(default_factory=list)
    instrs: list[Instr] = field(default_factory=list)
    succs: list["Block"] = field(default_factory=list)
    preds: list["Block"] = field(default_factory=list)
    nounroll: bool = False

    def __repr__(self) -> str:
        return f"Block({self.name})"


@dataclass
class Param:
    name: str
    type: str
    size: int
    align: int
    offset: int = 0          # byte offset in the parameter space
    ptr_space: str | None = None   # `.ptr .global` annotation


@dataclass
class Variable:
    """A named variable in a state space (module-level, or function-local `.local/.shared`)."""
    name: str
    space: str
    type: str
    size: int
    align: int
    init: bytes | None = None
    # Addresses in the initialiser: (byte offset, symbol, addend); their bytes in `init` are 0.
    relocations: list[tuple[int, str, int]] = field(default_factory=list)
    extern: bool = False
    linkage: str | None = None       # visible / extern / weak / None
    # `.samplerref` initialiser: (the driver's sampler word, force_unnormalized_coords or
    # None when not given); see ptx2sass.frontend.initializers.sampler_word
    sampler: tuple[int, int | None] | None = None
    # the PTX line it is declared on: ptxas -c names a function's `.shared` variable
    # `$__<name>__<line>` (its relocatable symbol)
    line: int = field(default=0, compare=False)


@dataclass(eq=False)
class Function:
    name: str
    is_entry: bool
    params: list[Param] = field(default_factory=list)
    returns: list[Param] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    locals: list[Variable] = field(default_factory=list)
    attributes: dict[str, object] = field(default_factory=dict)  # maxntid, reqntid, maxnreg …
    next_value_id: int = 0

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def new_value(self, type: str, name: str = "") -> Value:
        v = Value(self.next_value_id, type, name)
        self.next_value_id += 1
        return v

    def new_block(self, name: str) -> Block:
        b = Block(name)
        self.blocks.append(b)
        return b


@dataclass
class Module:
    version: str
    target: str
    address_size: int = 64
    variables: list[Variable] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    # `.extern .func`s called without a body here (ptxas's system calls): name, parameter
    # and result types; no blocks
    externs: list[Function] = field(default_factory=list)
    texmode_independent: bool = False    # `.target ..., texmode_independent`
    function_aliases: dict[str, str] = field(default_factory=dict)   # `.alias a, b`: a -> b


def setmaxnreg_counts(fn: Function, kind: str) -> list[int]:
    """The register counts of the function's `setmaxnreg.<kind>` (inc or dec) instructions."""
    return [ins.srcs[0].value for b in fn.blocks for ins in b.instrs
            if ins.opcode == "setmaxnreg" and kind in ins.modifiers and isinstance(ins.srcs[0], Const)]


def link(pred: Block, succ: Block) -> None:
    pred.succs.append(succ)
    succ.preds.append(pred)


# --- analyses ---------------------------------------------------------------------------

def reverse_postorder(fn: Function) -> list[Block]:
    return reverse_postorder_from(fn.entry)


def reverse_postorder_from(entry, stop=None) -> list:
    """Reverse postorder of the blocks reached from `entry`, successors in order, not
    walking past `stop` (which is included). Serves IR and machine blocks alike: it needs
    only `succs`."""
    seen: set[int] = {id(entry)}
    order: list = []
    stack = [(entry, iter(() if entry is stop else entry.succs))]
    while stack:                              # iterative DFS, postorder
        node, it = stack[-1]
        for nxt in it:
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append((nxt, iter(() if nxt is stop else nxt.succs)))
                break
        else:
            order.append(node)
            stack.pop()
    order.reverse()
    return order


def reach_backwards(starts, inside, seen: set[int] | None = None) -> set[int]:
    """Ids of the blocks from which one of `starts` is reached (the starts included),
    following predecessors only into blocks `inside` accepts and never through a block
    already in `seen` (a loop's header, to collect the loop's body). Serves IR and
    machine blocks alike: it needs only `preds`."""
    seen = set() if seen is None else seen
    work = list(starts)
    while work:
        n = work.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        work.extend(p for p in n.preds if inside(p))
    return seen


def dominators(fn: Function) -> dict[Block, Block | None]:
    """Immediate dominators (Cooper, Harvey & Kennedy's iterative algorithm) of the blocks
    reachable from the entry; the entry maps to None."""
    rpo = reverse_postorder(fn)
    index = {b: i for i, b in enumerate(rpo)}
    idom: dict[Block, Block | None] = {rpo[0]: rpo[0]}

    def intersect(a: Block, b: Block) -> Block:
        while a is not b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            done = [p for p in b.preds if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(b) is not new:
                idom[b] = new
                changed = True
    idom[rpo[0]] = None
    return idom


def immediate_dominators(roots, forward, backward) -> dict[int, object]:
    """Immediate dominators (Cooper, Harvey and Kennedy) of the graph reached from `roots`
    along `forward` (`backward` lists a node's predecessors in that graph), by node id; a
    root's is None: a virtual node above every root. With the blocks' predecessors as
    `forward` and the exits as roots these are immediate post-dominators. Serves IR and
    machine blocks alike."""
    post: dict[int, int] = {}
    order: list = []
    for r in roots:
        if id(r) in post:
            continue
        post[id(r)] = -1
        stack = [(r, iter(forward(r)))]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if id(nxt) not in post:
                    post[id(nxt)] = -1
                    stack.append((nxt, iter(forward(nxt))))
                    break
            else:
                post[id(node)] = len(order)
                order.append(node)
                stack.pop()
    top = len(order)
    idom: dict[int, int] = {id(r): top for r in roots}

    def intersect(a: int, b: int) -> int:
        while a != b:
            while a < b:
                a = idom[id(order[a])]
            while b < a:
                b = idom[id(order[b])]
        return a

    changed = True
    while changed:
        changed = False
        for node in reversed(order):
            if idom.get(id(node)) == top:
                continue
            new = -1
            for p in backward(node):
                q = post.get(id(p))
                if q is None or id(p) not in idom:
                    continue
                new = q if new < 0 else intersect(q, new)
            if new >= 0 and idom.get(id(node)) != new:
                idom[id(node)] = new
                changed = True
    return {id(n): (None if idom[id(n)] == top else order[idom[id(n)]]) for n in order}


def components(roots, forward) -> dict[int, int]:
    """Strongly connected components (Tarjan's, iterative) of the graph reached from `roots`
    along `forward`: node id -> component number, numbered as completed, so that an edge
    never leads to a component with a higher number (what reaches b is numbered >= b's)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    comp: dict[int, int] = {}
    stack: list = []
    count = 0
    for r in roots:
        if id(r) in index:
            continue
        index[id(r)] = low[id(r)] = len(index)
        stack.append(r)
        work = [(r, iter(forward(r)))]
        while work:
            node, it = work[-1]
            for w in it:
                if id(w) not in index:
                    index[id(w)] = low[id(w)] = len(index)
                    stack.append(w)
                    work.append((w, iter(forward(w))))
                    break
                if id(w) not in comp and index[id(w)] < low[id(node)]:
                    low[id(node)] = index[id(w)]
            else:
                work.pop()
                if work and low[id(node)] < low[id(work[-1][0])]:
                    low[id(work[-1][0])] = low[id(node)]
                if low[id(node)] == index[id(node)]:
                    while True:
                        w = stack.pop()
                        comp[id(w)] = count
                        if w is node:
                            break
                    count += 1
    return comp


def dominates(idom: dict[Block, Block | None], a: Block, b: Block) -> bool:
    node: Block | None = b
    while node is not None:
        if node is a:
            return True
        node = idom[node]
    return False


def dominance(idom: dict[Block, Block | None]):
    """`dominates` for many questions about one dominator tree: a function of (a, b) that
    answers each in O(1) from the tree's depth-first intervals (walking up from `b` is as
    long as the tree is deep: nested loops asked it for every block of every loop body)."""
    enter, leave = _tree_intervals(idom)

    def answer(a: Block, b: Block) -> bool:
        ea, eb = enter.get(id(a)), enter.get(id(b))
        if ea is None or eb is None:
            return dominates(idom, a, b)
        return ea <= eb and leave[id(b)] <= leave[id(a)]
    return answer


# --- verifier ---------------------------------------------------------------------------

class IRError(Exception):
    """The IR broke one of its invariants: a compiler bug, not a user error."""


def verify(fn: Function) -> None:
    """Check SSA form and CFG consistency; raise IRError naming the first violation."""
    def fail(msg: str) -> None:
        raise IRError(f"{fn.name}: {msg}")

    if not fn.blocks:
        fail("function has no blocks")
    for b in fn.blocks:
        for s in b.succs:
            if b not in s.preds:
                fail(f"{b.name} -> {s.name} missing from {s.name}.preds")
        for p in b.preds:
            if b not in p.succs:
                fail(f"{p.name} listed as pred of {b.name} but not linked")
        middle = islice(b.instrs, max(len(b.instrs) - 1, 0))
        if not TERMINATORS.isdisjoint(map(_opcode, middle)):   # (the loop in C: the common case)
            for ins in b.instrs[:-1]:
                if ins.opcode in TERMINATORS:
                    fail(f"terminator {ins.opcode} in the middle of {b.name}")

    idom = dominators(fn)
    def_site: dict[int, tuple[Block, int]] = {}
    for b in fn.blocks:
        if b not in idom:
            continue  # unreachable blocks are dropped by the builder; nothing to check
        for phi in b.phis:
            if phi.dest.id in def_site:
                fail(f"{phi.dest!r} defined twice")
            def_site[phi.dest.id] = (b, -1)
            if sorted(id(p) for p, _ in phi.incoming) != sorted(id(p) for p in b.preds):
                fail(f"phi {phi.dest!r} in {b.name} does not match its predecessors")
        for i, ins in enumerate(b.instrs):
            for d in ins.dests:
                if d.id in def_site:
                    fail(f"{d!r} defined twice")
                def_site[d.id] = (b, i)

    enter, leave = _tree_intervals(idom)

    def check_use(v: Value, b: Block, i: int, what: str) -> None:
        site = def_site.get(v.id)
        if site is None:
            fail(f"{what} uses {v!r} which is never defined")
        db, di = site
        if db is b:
            if di >= i:
                fail(f"{what} in {b.name} uses {v!r} before its definition")
        elif not (enter[id(db)] <= enter[id(b)] and leave[id(b)] <= leave[id(db)]):
            fail(f"{what} in {b.name} uses {v!r} whose definition in {db.name} does not dominate it")

    for b in fn.blocks:
        if b not in idom:
            continue
        for phi in b.phis:
            for p, v in phi.incoming:
                if isinstance(v, Value) and p in idom:
                    check_use(v, p, len(p.instrs) + 1, f"phi {phi.dest!r}")
        here = enter[id(b)], leave[id(b)]
        for i, ins in enumerate(b.instrs):
            # `_uses(ins)` spelled out for plain sources (the common case; a generator per
            # instruction was most of this walk's time)
            uses = ins.srcs if ins.guard is None and not ins.merge else _uses(ins)
            for v in uses:
                t = type(v)
                if t is not Value:
                    if t is Address and type(v.base) is Value:
                        v = v.base
                    elif uses is ins.srcs:
                        continue
                # check_use inlined for the common case (a definition earlier in the
                # block, or in a block that dominates it); it words any violation
                site = def_site.get(v.id)
                if site is None or (site[1] >= i if site[0] is b else not (
                        enter[id(site[0])] <= here[0] and here[1] <= leave[id(site[0])])):
                    check_use(v, b, i, ins.opcode)


_opcode = attrgetter("opcode")


def _tree_intervals(idom: dict[Block, Block | None]) -> tuple[dict[int, int], dict[int, int]]:
    """Entry and exit times of a depth-first walk of the dominator tree: `a` dominates `b`
    where a's interval holds b's (one comparison, where walking up from `b` for every use
    was quadratic in long chains of blocks)."""
    children: dict[int, list[Block]] = {}
    roots = []
    for b, d in idom.items():
        if d is None:
            roots.append(b)
        else:
            children.setdefault(id(d), []).append(b)
    enter: dict[int, int] = {}
    leave: dict[int, int] = {}
    clock = 0
    for root in roots:
        enter[id(root)] = clock
        clock += 1
        stack = [(root, iter(children.get(id(root), ())))]
        while stack:
            node, it = stack[-1]
            child = next(it, None)
            if child is None:
                leave[id(node)] = clock
                clock += 1
                stack.pop()
            else:
                enter[id(child)] = clock
                clock += 1
                stack.append((child, iter(children.get(id(child), ()))))
    return enter, leave


def _uses(ins: Instr):
    for s in ins.srcs:
        if isinstance(s, Value):
            yield s
        elif isinstance(s, Address) and isinstance(s.base, Value):
            yield s.base
    if ins.guard is not None:
        yield ins.guard
    for m in ins.merge:
        if isinstance(m, Value):
            yield m


# --- textual dump ---------------------------------------------------------------------------

def _fmt_operand(op: Operand) -> str:
    if isinstance(op, Value):
        return repr(op)
    if isinstance(op, Const):
        return f"{op.value:#x}:{op.type}" if op.value >= 0 else f"{op.value}:{op.type}"
    if isinstance(op, Symbol):
        return f"@{op.name}" + (f"+{op.offset}" if op.offset else "")
    if isinstance(op, SpecialReg):
        return op.name
    if isinstance(op, Address):
        base = "" if op.base is None else _fmt_operand(op.base)
        off = f"+{op.offset}" if op.offset > 0 else (f"{op.offset}" if op.offset else "")
        return f"[{base}{off}]" if base else f"[{op.offset}]"
    raise TypeError(op)


def dump_instr(ins: Instr) -> str:
    head = ".".join((ins.opcode, *ins.modifiers, *( [ins.type] if ins.type else [] ), *ins.types))
    if ins.space:
        head += f" <{ins.space}" + (f" align {ins.align}" if ins.align else "") + ">"
    guard = f"@{'!' if ins.guard_negated else ''}{ins.guard!r} " if ins.guard is not None else ""
    dests = ", ".join(f"{d!r}:{d.type}" for d in ins.dests)
    srcs = ", ".join(_fmt_operand(s) for s in ins.srcs)
    lhs = f"{dests} = " if dests else ""
    merge = f"  (else {', '.join(_fmt_operand(m) for m in ins.merge)})" if ins.merge else ""
    return f"{guard}{lhs}{head} {srcs}".rstrip() + merge


def dump_function(fn: Function) -> str:
    kind = ".entry" if fn.is_entry else ".func"
    params = ", ".join(f"{p.type} {p.name}" for p in fn.params)
    lines = [f"{kind} {fn.name}({params})"]
    for b in fn.blocks:
        preds = ", ".join(p.name for p in b.preds)
        lines.append(f"{b.name}:" + (f"    ; preds {preds}" if preds else ""))
        for phi in b.phis:
            inc = ", ".join(f"[{p.name}: {_fmt_operand(v)}]" for p, v in phi.incoming)
            lines.append(f"  {phi.dest!r}:{phi.dest.type} = phi {inc}")
        for ins in b.instrs:
            lines.append(f"  {dump_instr(ins)}")
        if b.succs:
            lines.append(f"  ; succs {', '.join(s.name for s in b.succs)}")
    return "\n".join(lines)


def dump_module(mod: Module) -> str:
    head = [f".version {mod.version}", f".target {mod.target}", f".address_size {mod.address_size}"]
    for v in mod.variables:
        head.append(f".{v.space} {v.type} {v.name} size {v.size} align {v.align}")
    return "\n".join(head + [dump_function(f) for f in mod.functions]) + "\n"
