"""The fuzzer's program model and its rendering to PTX.

A program is one kernel (plus `.func`s it calls) whose statements read and write a pool
of registers. Every pool register gets a defined value in the prelude (from the per-thread
input record or a kernel parameter) and is stored to its own output slot at the end, so
**any subset of the statements is again a valid, UB-free program**: that is what lets the
reducer delete statements freely. Constraints that keep a program defined live in the
statement that needs them (a division's divisor fix-up, a collective's member mask, a
barrier's uniform context), never in a distant statement that might be deleted.

Rules the generator keeps and rendering relies on:
- a `uniform` register has the same value in every thread of a CTA; it is written only by
  uniform statements (all sources uniform, uniform guard, uniform context);
- barriers sit only in uniform control flow; warp collectives only where the member mask
  is known exactly (the full warp in uniform code, a ballot of the branch condition in a
  divergent branch, a per-iteration ballot in a divergent loop without breaks);
- `approx` registers are written only by approximate instructions and never read: their
  slots are compared within the instruction's documented error bound.

Operand templates use `$name` placeholders: `$d0..` destinations, `$a0..` sources, `$t0..`
statement-private temporaries, `@@` the guard (`@%p1 ` or empty), `$m` the member mask of
the enclosing region, and infrastructure values (`$tid`, `$gtid`, `$lane`, `$inb`, `$inp`,
`$ctr`, `$priv`, `$sh`, `$shp`, `$nthr`, local arrays `$loc0..`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = ("pred", "b16", "b32", "b64")
PREFIX = {"pred": "p", "b16": "h", "b32": "r", "b64": "d"}
BITS = {"pred": 1, "b16": 16, "b32": 32, "b64": 64}
TEMP_PREFIX = {"b8": "q"}     # kinds only a statement's temporaries have (fp4 conversions' .b8)
PTX_VERSION = "8.5"
TARGET = "sm_89"
FULL_MASK = "0xffffffff"
SLOT_BYTES = 8
LOCAL_ARRAY_WORDS = 16
SHARED_WORDS_PER_THREAD = 2
# Contended atomics: each operation has its own counter (mixing operations on one counter
# would make the final value depend on the order the threads ran in).
GLOBAL_COUNTER_OPS = ("add.u32", "add.u64", "min.u32", "max.s32", "and.b32", "or.b64", "xor.b32", "inc.u32",
                      "dec.u32", "add.f32", "add.f64", "min.s64", "max.u64")
SHARED_COUNTER_OPS = ("add.u32", "min.u32", "max.u32", "and.b32", "or.b32", "xor.b32", "inc.u32", "dec.u32")
PRIVATE_BYTES = 64           # per thread, after the 128 bytes of global counters
COUNTER_BYTES = 128


@dataclass(eq=False)
class Reg:
    """A pool register. `view` is the type its initial value is drawn as (u32, f32, f16x2,
    ...); `init` says how the prelude sets it: ("in", load type) from the per-thread input
    record, ("param", param type) from a kernel parameter (uniform), ("special", name) from
    a special register, ("tid", bound) for predicates `tid < bound`."""
    kind: str
    view: str
    uniform: bool = False
    role: str = "value"          # value | approx | sink | temp
    init: tuple = ("in", "b32")
    index: int = 0               # position in the program's register list (stable id)

    def __repr__(self) -> str:
        return f"Reg({self.kind}#{self.index} {self.view}{' U' if self.uniform else ''} {self.role})"


class Stmt:
    """A statement; compound ones hold nested statement lists."""

    def bodies(self) -> list[list["Stmt"]]:
        return []


@dataclass(eq=False)
class Op(Stmt):
    """One PTX instruction, or a short fixed sequence that must stay together (a carry
    chain, a division with its divisor fix-up)."""
    text: str
    defs: list[Reg] = field(default_factory=list)
    uses: list[Reg] = field(default_factory=list)
    temps: list[Reg] = field(default_factory=list)
    key: str = ""                 # coverage/signature key: opcode.modifiers.types
    guard: tuple | None = None    # (pred Reg, negated)
    collective: bool = False      # a warp collective: runs under the region's member mask
    full_warp: bool = False       # needs all 32 lanes converged (mma, shfl up/down/bfly)
    barrier: bool = False         # a CTA barrier: uniform control flow only
    tolerance: float = 0.0        # approximate result: relative/absolute error bound
    spaces: tuple = ()            # state spaces it touches, for coverage
    infra: tuple = ()             # infrastructure values it names ($tid, $sh, ...)
    also: tuple = ()              # coverage keys of helper instructions in it (a createpolicy)


@dataclass(eq=False)
class If(Stmt):
    cond: Reg
    neg: bool
    then: list
    els: list
    uniform: bool

    def bodies(self):
        return [self.then, self.els]


@dataclass(eq=False)
class Loop(Stmt):
    """A counted loop: `base + (trip & mask)` iterations (trip None: `base`). A
    non-uniform loop that holds collectives recomputes its member mask every iteration
    (`ballot`); bottom-tested loops run at least once."""
    trip: Reg | None
    base: int
    mask: int
    body: list
    uniform: bool
    ballot: bool = False
    bottom: bool = False

    def bodies(self):
        return [self.body]


@dataclass(eq=False)
class Switch(Stmt):
    """`brx.idx` on `index & (len(cases) - 1)` to one of the cases (a jump table)."""
    index: Reg
    cases: list
    uniform: bool

    def bodies(self):
        return list(self.cases)


@dataclass(eq=False)
class Break(Stmt):
    cond: Reg
    neg: bool
    loop: Loop


@dataclass(eq=False)
class Store(Stmt):
    """Observe a register's value here (its own output slot)."""
    reg: Reg


@dataclass(eq=False)
class Exit(Stmt):
    """`@p exit` in the kernel body (rendered only where no barrier or collective follows)."""
    cond: Reg
    neg: bool


@dataclass(eq=False)
class Return(Stmt):
    """An early `@p ret` inside a `.func` (its results are written first)."""
    cond: Reg
    neg: bool


@dataclass(eq=False)
class Call(Stmt):
    func: "Func"
    args: list[Reg]
    rets: list[Reg]
    uniform: bool = False       # `call.uni`


@dataclass(eq=False)
class Func:
    """A `.func` with `.param` arguments and results; its registers are its own."""
    name: str
    params: list[Reg]
    rets: list[Reg]
    regs: list[Reg]
    body: list
    style: str = "param"        # arguments in `.param` space, or `.reg` (several results)
    visible: bool = False
    # per argument, the type the body's `ld.param::func` reads it with ("": `ld.param.KIND`)
    param_types: tuple = ()


@dataclass(eq=False)
class Program:
    seed: int
    regs: list[Reg]
    body: list
    funcs: list[Func] = field(default_factory=list)
    grid: tuple = (1, 1, 1)
    block: tuple = (32, 1, 1)
    fmad: bool = True
    features: tuple = ()
    pressure: str = "low"
    local_arrays: int = 0
    observe: set | None = None    # register ids stored at the end (None: every one the body names)
    objects: dict = field(default_factory=dict)   # texture/surface name -> descriptor (fuzz/textures.py)
    target: str = TARGET          # `.target` (the campaign arch from sm_90 on: fuzz/newarch.py)
    version: str = PTX_VERSION
    cluster: tuple | None = None  # `.reqnctapercluster` (CTAs of a thread-block cluster)
    maxnreg: int | None = None    # `.maxnreg` (programs with setmaxnreg: fuzz/newarch.py)

    @property
    def threads_per_block(self) -> int:
        b = self.block
        return b[0] * b[1] * b[2]

    @property
    def threads(self) -> int:
        g = self.grid
        return self.threads_per_block * g[0] * g[1] * g[2]


# ------------------------------------------------------------------------------ walking

def walk(stmts: list) -> "list[tuple[Stmt, list]]":
    """Every statement under `stmts` with the list that holds it, in program order."""
    out = []
    for s in stmts:
        out.append((s, stmts))
        for b in s.bodies():
            out.extend(walk(b))
    return out


def called_funcs(prog: Program) -> list[Func]:
    """The functions reachable from the kernel, callees first (PTX needs them declared
    before use)."""
    seen: dict[int, Func] = {}

    def visit(stmts):
        for s, _ in walk(stmts):
            if isinstance(s, Call) and id(s.func) not in seen:
                visit(s.func.body)
                seen[id(s.func)] = s.func
    visit(prog.body)
    return list(seen.values())


def contains(stmts: list, pred) -> bool:
    return any(pred(s) for s, _ in walk(stmts))


def is_collective(s: Stmt) -> bool:
    return isinstance(s, Op) and s.collective


def is_barrier(s: Stmt) -> bool:
    return isinstance(s, Op) and s.barrier


# ------------------------------------------------------------------------------ rendering

@dataclass
class Slot:
    """One output slot: which register, its width, how to compare it."""
    name: str               # register's rendered name
    kind: str
    floats: tuple           # float views whose NaNs compare equal (f32, f64, f16, f16x2...)
    tolerance: float        # > 0: approximate
    key: str                # the last statement that defined it (signature of a mismatch)
    where: str              # "end" or "store"


@dataclass
class Rendered:
    text: str
    slots: list[Slot]
    params: list[tuple]     # scalar kernel params: (name, type, view, reg index)
    inputs: list[tuple]     # per-thread record: (offset, load type, view, reg index)
    record_bytes: int
    keys: list[str]                          # coverage keys of rendered statements
    spaces: list[str]
    shapes: list[str]                        # control-flow shapes
    lines: int
    owners: list = field(default_factory=list)   # per line (from 1 at index 0): its statement


# instructions that move bits unchanged (NaN payloads included)
_MOVES = ("mov.", "ld.", "selp.", "shfl.", "st.", "slct.", "atom.global.exch", "atom.shared.exch")
_FLOAT_VIEWS = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32}
_PLACEHOLDER = re.compile(r"\$([a-z]+[0-9]*)")
from ptx2sass.fuzz.textures import OBJECTS as TEXTURE_OBJECTS  # noqa: E402

INFRA_NAMES = ("tid", "gtid", "lane", "inb", "inp", "ctr", "priv", "sh", "shp", "nthr", "sq", "wsg", "wss",
               "clb", "crk", "cnx", *TEXTURE_OBJECTS)
SYMBOLS = {"cst": "g_const", "glb": "g_glob", "shs": "g_shared", "mat": "g_mat", "blob": "p_blob", "clu": "g_cl"}
SQ_BYTES = 32                # g_sq: every thread's own 32 shared bytes (loads/stores/atomics of any width)
BLOB_BYTES = 32              # p_blob: a kernel parameter that .param-space loads read
MATRIX_WORDS = 1024          # g_mat: shared words ldmatrix/wmma read, written by every thread first
WARP_SCRATCH = 4096          # per warp: global words (after the private ones) and shared words wmma stores
MODULE_ARRAY_WORDS = 16


def _module_array(i: int, salt: int) -> int:
    return (0x85EBCA6B * (i + 1) ^ (salt * 0xC2B2AE35)) & 0xFFFFFFFF


class _Renderer:
    def __init__(self, prog: Program):
        self.prog = prog
        self.lines: list[tuple[str, Stmt | None]] = []     # (text, the statement it renders)
        self.owner: Stmt | None = None
        self.label = 0
        self.names: dict[int, str] = {}
        self.temp_count = {k: 0 for k in KINDS}
        self.keys: list[str] = []
        self.spaces: set[str] = set()
        self.shapes: list[str] = []
        self.infra_used: set[str] = set()
        self.extra_regs: dict[str, str] = {}    # name -> kind, declared individually
        self.slots: list[Slot] = []
        self.last_def: dict[int, str] = {}
        self.float_views: dict[int, set] = {}
        self.tolerance: dict[int, float] = {}
        self.int_defined: set[int] = set()     # registers some integer operation writes
        self.func_results: dict = {}           # (function, result register id) -> last writer

    # names -------------------------------------------------------------------------------
    def temp(self, kind: str) -> str:
        n = self.temp_count.get(kind, 0)
        self.temp_count[kind] = n + 1
        name = f"%t{TEMP_PREFIX.get(kind) or PREFIX[kind]}{n}"
        self.extra_regs[name] = kind
        return name

    def fresh_label(self, what: str) -> str:
        self.label += 1
        return f"$L{self.label}_{what}"

    def emit(self, line: str, indent: int) -> None:
        self.lines.append(("    " * indent + line, self.owner))


def _assign_names(regs: list[Reg], used: set[int]) -> dict[int, str]:
    """Consecutive numbers per kind over the registers a rendering names (sinks apart)."""
    count = {k: 0 for k in KINDS}
    sinks = 0
    names = {}
    for r in regs:
        if id(r) not in used:
            continue
        if r.role == "sink":
            names[id(r)] = f"%s{PREFIX[r.kind]}{sinks}"
            sinks += 1
        else:
            names[id(r)] = f"%{PREFIX[r.kind]}{count[r.kind]}"
            count[r.kind] += 1
    return names


def _op_regs(s: Stmt) -> list[Reg]:
    if isinstance(s, Op):
        out = list(s.defs) + list(s.uses)
        if s.guard:
            out.append(s.guard[0])
        return out
    if isinstance(s, (If, Break, Exit, Return)):
        return [s.cond]
    if isinstance(s, Switch):
        return [s.index]
    if isinstance(s, Loop):
        return [s.trip] if s.trip is not None else []
    if isinstance(s, Store):
        return [s.reg]
    if isinstance(s, Call):
        return list(s.args) + list(s.rets)
    return []


def referenced_regs(stmts: list) -> set[int]:
    out = set()
    for s, _ in walk(stmts):
        for r in _op_regs(s):
            out.add(id(r))
    return out


class _Body:
    """Renders one statement list (the kernel's or a function's)."""

    def __init__(self, rd: _Renderer, names: dict[int, str], in_func: "Func | None"):
        self.rd = rd
        self.names = names
        self.func = in_func

    def name(self, r: Reg) -> str:
        return self.names[id(r)]

    def guard_text(self, guard) -> str:
        if not guard:
            return ""
        reg, neg = guard
        return f"@{'!' if neg else ''}{self.name(reg)} "

    def expand(self, s: Op, ctx: dict) -> list[str]:
        temps = [self.rd.temp(t.kind) for t in s.temps]
        sub = {"m": ctx["mask"]}
        for i, r in enumerate(s.defs):
            sub[f"d{i}"] = self.name(r)
        for i, r in enumerate(s.uses):
            sub[f"a{i}"] = self.name(r)
        for i, t in enumerate(temps):
            sub[f"t{i}"] = t

        def repl(m):
            word = m.group(1)
            if word in sub:
                return sub[word]
            if word.startswith("lbl"):          # a label of the statement's own
                sub[word] = self.rd.fresh_label(word)
                return sub[word]
            if word in INFRA_NAMES:
                self.rd.infra_used.add(word)
                return f"%g_{word}"
            if word in SYMBOLS or word.startswith("loc"):
                self.rd.infra_used.add(word)
                return SYMBOLS.get(word, f"g_{word}")
            raise KeyError(f"unknown placeholder ${word} in {s.text!r}")
        guard = self.guard_text(s.guard)
        return [_PLACEHOLDER.sub(repl, line.replace("@@", guard)) for line in s.text.split("\n")]

    def render(self, stmts: list, ctx: dict, indent: int) -> None:
        for i, s in enumerate(stmts):
            saved, self.rd.owner = self.rd.owner, s
            self.render_one(s, stmts[i + 1:], ctx, indent)
            self.rd.owner = saved

    def note_defs(self, s: Op) -> None:
        rd = self.rd
        for r in s.defs:
            rd.last_def[id(r)] = s.key
            view = s.key.rsplit(".", 1)[-1]
            if view in _FLOAT_VIEWS:
                rd.float_views.setdefault(id(r), set()).add(view)
            elif not s.key.startswith(_MOVES):
                rd.int_defined.add(id(r))
            if s.tolerance:
                rd.tolerance[id(r)] = max(rd.tolerance.get(id(r), 0.0), s.tolerance)

    def render_one(self, s: Stmt, rest: list, ctx: dict, indent: int) -> None:
        rd = self.rd
        if isinstance(s, Op):
            if s.barrier and not ctx["uniform"]:
                return       # reachable only through a bug; never render a divergent barrier
            if s.full_warp and ctx["mask"] != FULL_MASK:
                return
            for line in self.expand(s, ctx):
                rd.emit(line, indent)
            if s.key:
                rd.keys.append(s.key)
            rd.keys.extend(s.also)
            rd.spaces.update(s.spaces)
            self.note_defs(s)
            return
        if isinstance(s, If):
            self.render_if(s, ctx, indent)
            return
        if isinstance(s, Loop):
            self.render_loop(s, ctx, indent)
            return
        if isinstance(s, Switch):
            self.render_switch(s, ctx, indent)
            return
        if isinstance(s, Break):
            loop = next((lp for lp in reversed(ctx["loops"]) if lp[0] is s.loop), None)
            if loop is None:
                return
            if not (s.cond.uniform and ctx["uniform"]) and contains(
                    loop[0].body, lambda x: is_barrier(x) or isinstance(x, Op) and x.full_warp):
                # some lanes leaving a loop whose body runs a barrier or a full-warp op (wmma,
                # mma, ldmatrix, shfl) would leave the others to run it without them (seed
                # 36003711: a wmma after `@p1 bra` inside a divergent if): not rendered
                return
            rd.emit(f"{self.guard_text((s.cond, s.neg))}bra {loop[1]};", indent)
            rd.shapes.append("break" if s.cond.uniform else "divergent_break")
            return
        if isinstance(s, Store):
            if self.func is not None:
                return
            slot = len(rd.slots)
            rd.slots.append(("store", s.reg, dict(rd.last_def)))
            self.emit_store(s.reg, slot, indent)
            return
        if isinstance(s, Exit):
            if any(contains([t], lambda x: is_barrier(x) or is_collective(x)) for t in rest) \
                    or ctx["loops"] or not ctx["top"]:
                return
            rd.emit(f"{self.guard_text((s.cond, s.neg))}exit;", indent)
            rd.shapes.append("early_exit")
            return
        if isinstance(s, Return):
            if self.func is None:
                return
            skip = rd.fresh_label("noret")
            rd.emit(f"{self.guard_text((s.cond, not s.neg))}bra {skip};", indent)
            self.emit_func_results(indent)
            rd.emit("ret;", indent)
            rd.emit(f"{skip}:", 0)
            rd.shapes.append("early_return")
            return
        if isinstance(s, Call):
            self.render_call(s, ctx, indent)
            return
        raise TypeError(f"unknown statement {s!r}")

    def emit_store(self, reg: Reg, slot: int, indent: int) -> None:
        rd = self.rd
        at = f"[%g_outp+{slot * SLOT_BYTES}]"
        rd.infra_used.add("outp")
        if reg.kind == "pred":
            t = rd.temp("b32")
            rd.emit(f"selp.u32 {t}, 1, 0, {self.name(reg)};", indent)
            rd.emit(f"st.global.u32 {at}, {t};", indent)
        else:
            rd.emit(f"st.global.{reg.kind} {at}, {self.name(reg)};", indent)

    def render_if(self, s: If, ctx: dict, indent: int) -> None:
        rd = self.rd
        uniform = s.uniform and ctx["uniform"]
        then_mask = else_mask = ctx["mask"]
        cond = self.name(s.cond)
        if not uniform:
            if contains(s.then, is_collective):
                then_mask = rd.temp("b32")
                rd.emit(f"vote.sync.ballot.b32 {then_mask}, {'!' if s.neg else ''}{cond}, {ctx['mask']};",
                        indent)
            if contains(s.els, is_collective):
                else_mask = rd.temp("b32")
                rd.emit(f"vote.sync.ballot.b32 {else_mask}, {'' if s.neg else '!'}{cond}, {ctx['mask']};",
                        indent)
        lelse, lend = rd.fresh_label("else"), rd.fresh_label("endif")
        bra = "bra.uni" if uniform else "bra"
        rd.emit(f"@{'' if s.neg else '!'}{cond} {bra} {lelse if s.els else lend};", indent)
        kind = "if" if uniform else "divergent_if"
        inner = dict(ctx, uniform=uniform, top=False, shape_stack=ctx["shape_stack"] + [kind])
        self.render(s.then, dict(inner, mask=then_mask), indent + 1)
        if s.els:
            rd.emit(f"{bra} {lend};", indent + 1)
            rd.emit(f"{lelse}:", 0)
            self.render(s.els, dict(inner, mask=else_mask), indent + 1)
        rd.emit(f"{lend}:", 0)
        depth = sum(1 for x in ctx["shape_stack"] if x in ("if", "divergent_if"))
        rd.shapes.append(kind + ("_else" if s.els else "") + ("_nested" if depth else ""))

    def render_switch(self, s: Switch, ctx: dict, indent: int) -> None:
        rd = self.rd
        uniform = s.uniform and ctx["uniform"]
        idx = rd.temp("b32")
        labels = [rd.fresh_label(f"case{i}") for i in range(len(s.cases))]
        table, end = rd.fresh_label("targets"), rd.fresh_label("endswitch")
        rd.emit(f"and.b32 {idx}, {self.name(s.index)}, {len(s.cases) - 1};", indent)
        rd.emit(f"{table}: .branchtargets {', '.join(labels)};", indent)
        rd.emit(f"brx.idx{'.uni' if uniform else ''} {idx}, {table};", indent)
        inner = dict(ctx, uniform=uniform, top=False,
                     mask=ctx["mask"] if uniform else "0", shape_stack=ctx["shape_stack"] + ["switch"])
        for label, body in zip(labels, s.cases):
            rd.emit(f"{label}:", 0)
            self.render(body, inner, indent + 1)
            rd.emit(f"bra{'.uni' if uniform else ''} {end};", indent + 1)
        rd.emit(f"{end}:", 0)
        rd.shapes.append(("switch" if uniform else "divergent_switch") + f"_{len(s.cases)}")

    def render_loop(self, s: Loop, ctx: dict, indent: int) -> None:
        rd = self.rd
        uniform = s.uniform and ctx["uniform"] and (s.trip is None or s.trip.uniform)
        count, limit, test = rd.temp("b32"), rd.temp("b32"), rd.temp("pred")
        head, end = rd.fresh_label("loop"), rd.fresh_label("endloop")
        rd.emit(f"mov.u32 {count}, 0;", indent)
        if s.trip is None:
            rd.emit(f"mov.u32 {limit}, {s.base};", indent)
        else:
            rd.emit(f"and.b32 {limit}, {self.name(s.trip)}, {s.mask};", indent)
            rd.emit(f"add.u32 {limit}, {limit}, {s.base};", indent)
        mask = ctx["mask"]
        ballot = (not uniform) and contains(s.body, is_collective)
        if ballot:
            mask = rd.temp("b32")
            rd.emit(f"mov.b32 {mask}, {ctx['mask']};", indent)
        bra = "bra.uni" if uniform else "bra"
        inner = dict(ctx, uniform=uniform, mask=mask, top=False, loops=ctx["loops"] + [(s, end)],
                     shape_stack=ctx["shape_stack"] + ["loop"])
        rd.emit(f"{head}:", 0)
        if s.bottom and not ballot:
            self.render(s.body, inner, indent + 1)
            rd.emit(f"add.u32 {count}, {count}, 1;", indent + 1)
            rd.emit(f"setp.lt.u32 {test}, {count}, {limit};", indent + 1)
            rd.emit(f"@{test} {bra} {head};", indent + 1)
        else:
            rd.emit(f"setp.lt.u32 {test}, {count}, {limit};", indent + 1)
            if ballot:
                rd.emit(f"vote.sync.ballot.b32 {mask}, {test}, {mask};", indent + 1)
            rd.emit(f"@!{test} {bra} {end};", indent + 1)
            self.render(s.body, inner, indent + 1)
            rd.emit(f"add.u32 {count}, {count}, 1;", indent + 1)
            rd.emit(f"{bra} {head};", indent + 1)
        rd.emit(f"{end}:", 0)
        nested = "loop" in ctx["shape_stack"]
        shape = ("loop" if uniform else "divergent_loop") + ("_const" if s.trip is None else "_data") \
            + ("_bottom" if s.bottom and not ballot else "") + ("_nested" if nested else "")
        if contains(s.body, is_barrier):
            rd.shapes.append("barrier_in_loop")
        if ballot:
            rd.shapes.append("warp_op_in_divergent_loop")
        rd.shapes.append(shape)

    def render_call(self, s: Call, ctx: dict, indent: int) -> None:
        rd = self.rd
        f = s.func
        uni = ".uni" if (s.uniform and ctx["uniform"]) else ""
        if f.style == "reg":
            results = ", ".join(self.name(d) for d in s.rets)
            args = ", ".join(self.name(a) for a in s.args)
            res = f"({results}), " if f.rets else ""
            rd.emit(f"call{uni} {res}{f.name}, ({args});", indent)
        else:
            rd.emit("{", indent)
            for i, p in enumerate(f.params):
                rd.emit(f".param .{p.kind} {f.name}_a{i};", indent + 1)
            for i, r in enumerate(f.rets):
                rd.emit(f".param .{r.kind} {f.name}_r{i};", indent + 1)
            for i, (p, a) in enumerate(zip(f.params, s.args)):
                rd.emit(f"st.param.{p.kind} [{f.name}_a{i}], {self.name(a)};", indent + 1)
            results = ", ".join(f"{f.name}_r{i}" for i in range(len(f.rets)))
            args = ", ".join(f"{f.name}_a{i}" for i in range(len(f.params)))
            res = f"({results}), " if f.rets else ""
            rd.emit(f"call{uni} {res}{f.name}, ({args});", indent + 1)
            for i, (r, d) in enumerate(zip(f.rets, s.rets)):
                rd.emit(f"ld.param.{r.kind} {self.name(d)}, [{f.name}_r{i}];", indent + 1)
            rd.emit("}", indent)
        for d, r in zip(s.rets, f.rets):
            # a wrong result names the instruction that wrote it inside the function
            rd.last_def[id(d)] = rd.func_results.get((f.name, id(r)), f"call.{f.style}")
        rd.keys.append("call" + uni)
        rd.shapes.append(f"call_{f.style}_args")
        if not ctx["uniform"]:
            rd.shapes.append("call_in_divergent_code")

    def emit_func_results(self, indent: int) -> None:
        f = self.func
        for i, r in enumerate(f.rets):
            if f.style == "reg":
                self.rd.emit(f"mov.b{BITS[r.kind]} %{f.name}_r{i}, {self.name(r)};", indent)
            else:
                self.rd.emit(f"st.param.{r.kind} [{f.name}_r{i}], {self.name(r)};", indent)


# The prelude's infrastructure values: how each is computed, and what it needs first.
_INFRA = {
    "tid": ("b32", lambda d: ["mov.u32 %g_tid, %tid.x;"] if d["flat_block"] else
            ["mov.u32 %g_tid, %tid.z;", "mov.u32 %g_t32, %tid.y;", "mad.lo.u32 %g_tid, %g_tid, {ny}, %g_t32;",
             "mov.u32 %g_t32, %tid.x;", "mad.lo.u32 %g_tid, %g_tid, {nx}, %g_t32;"], ("t32",)),
    "gtid": ("b32", lambda d: ["mov.u32 %g_gtid, %g_tid;"] if d["one_cta"] else
             ["mov.u32 %g_gtid, %ctaid.y;", "mov.u32 %g_t32, %ctaid.x;",
              "mad.lo.u32 %g_gtid, %g_gtid, {gx}, %g_t32;", "mad.lo.u32 %g_gtid, %g_gtid, {tpb}, %g_tid;"],
             ("tid", "t32")),
    "t32": ("b32", [], ()),
    "lane": ("b32", ["mov.u32 %g_lane, %laneid;"], ()),
    "nthr": ("b32", ["mov.u32 %g_nthr, {tpb};"], ()),
    "inb": ("b64", ["ld.param.u64 %g_inb, [p_in];", "cvta.to.global.u64 %g_inb, %g_inb;"], ()),
    "inp": ("b64", ["mul.wide.u32 %g_inp, %g_gtid, {rec};", "add.s64 %g_inp, %g_inb, %g_inp;"],
            ("gtid", "inb")),
    "outp": ("b64", ["ld.param.u64 %g_outp, [p_out];", "cvta.to.global.u64 %g_outp, %g_outp;",
                     "mul.wide.u32 %g_t64, %g_gtid, {outrec};", "add.s64 %g_outp, %g_outp, %g_t64;"],
             ("gtid", "t64")),
    "ctr": ("b64", ["ld.param.u64 %g_ctr, [p_atom];", "cvta.to.global.u64 %g_ctr, %g_ctr;"], ()),
    "priv": ("b64", ["mul.wide.u32 %g_priv, %g_gtid, 64;", "add.s64 %g_priv, %g_ctr, %g_priv;",
                     "add.s64 %g_priv, %g_priv, 128;"], ("gtid", "ctr")),
    "sh": ("b32", ["mov.u32 %g_sh, g_shared;"], ()),
    "shp": ("b32", ["mov.u32 %g_shp, g_shared;", "mad.lo.u32 %g_shp, %g_tid, 8, %g_shp;"], ("tid",)),
    "t64": ("b64", [], ()),
    "sq": ("b32", ["mov.u32 %g_sq, g_sq;", "mad.lo.u32 %g_sq, %g_tid, 32, %g_sq;"], ("tid",)),
    "wsw": ("b32", ["and.b32 %g_wsw, %g_gtid, -32;"], ("gtid",)),
    "wsg": ("b64", ["mul.wide.u32 %g_wsg, %g_wsw, 128;", "add.s64 %g_wsg, %g_wsg, %g_ctr;",
                    "add.s64 %g_wsg, %g_wsg, {scratch};"], ("wsw", "ctr")),
    "wss": ("b32", ["and.b32 %g_wss, %g_tid, -32;", "mov.u32 %g_t32, g_wsc;",
                    "mad.lo.u32 %g_wss, %g_wss, 128, %g_t32;"], ("tid", "t32")),
    # thread-block clusters (fuzz/newarch.py): this thread's word of g_cl, its CTA's rank
    # in the cluster, the next CTA's rank (the one whose second half this thread writes)
    "clb": ("b32", ["mov.u32 %g_clb, g_cl;", "mad.lo.u32 %g_clb, %g_tid, 4, %g_clb;"], ("tid", "crk")),
    "crk": ("b32", ["mov.u32 %g_crk, %cluster_ctarank;"], ()),
    "cnx": ("b32", ["add.u32 %g_cnx, %g_crk, 1;", "rem.u32 %g_cnx, %g_cnx, {csize};"], ("crk",)),
}
# texture/surface handles: `.u64` kernel parameters the launcher binds (fuzz/textures.py)
_INFRA.update({n: ("b64", [f"ld.param.u64 %g_{n}, [p_{n}];"], ()) for n in TEXTURE_OBJECTS})
SHARED_COUNTER_BYTES = 64     # after the per-thread words: counters for contended shared atomics


def _infra_lines(name: str, dims: dict) -> list[str]:
    lines = _INFRA[name][1]
    if callable(lines):
        lines = lines(dims)
    return [line.format(**dims) for line in lines]


def _infra_order(used: set[str]) -> list[str]:
    out: list[str] = []

    def visit(n):
        if n in out:
            return
        for dep in _INFRA[n][2]:
            visit(dep)
        out.append(n)
    for n in sorted(used):
        if n in _INFRA:
            visit(n)
    return out


def _init_lines(r: Reg, name: str, pname: str | None, offset: int | None, temp) -> list[str]:
    how, what = r.init[0], r.init[1]
    if r.kind == "pred":
        if how == "tid":
            return [f"setp.lt.u32 {name}, %g_tid, {what};"]
        if how == "param":
            t = temp("b32")
            return [f"ld.param.u32 {t}, [{pname}];", f"setp.ne.u32 {name}, {t}, 0;"]
        t = temp("b16")
        return [f"ld.global.u8 {t}, [%g_inp+{offset}];", f"setp.ne.u16 {name}, {t}, 0;"]
    if how == "param":
        return [f"ld.param.{what} {name}, [{pname}];"]
    if how == "special":
        if r.kind == "b32":
            return [f"mov.u32 {name}, {what};"]
        t = temp("b32")
        cvt = "cvt.u64.u32" if r.kind == "b64" else "cvt.u16.u32"
        return [f"mov.u32 {t}, {what};", f"{cvt} {name}, {t};"]
    if how == "zero":
        return [f"mov.{r.kind} {name}, 0;"]
    return [f"ld.global.{what} {name}, [%g_inp+{offset}];"]


LOAD_BYTES = {"u8": 1, "s8": 1, "u16": 2, "s16": 2, "b16": 2, "u32": 4, "s32": 4, "b32": 4,
              "f32": 4, "u64": 8, "s64": 8, "b64": 8, "f64": 8}


def render(prog: Program) -> Rendered:
    """PTX text for `prog` plus what running and comparing it needs."""
    rd = _Renderer(prog)
    funcs = called_funcs(prog)
    used = referenced_regs(prog.body)
    kernel_regs = [r for r in prog.regs if id(r) in used]
    names = _assign_names(prog.regs, used)

    # per-thread input record and scalar params
    inputs, params = [], []
    offset = 0
    for r in kernel_regs:
        if r.role in ("value", "approx") and r.init[0] == "in":
            size = 1 if r.kind == "pred" else LOAD_BYTES[r.init[1]]
            offset = -(-offset // size) * size
            inputs.append((offset, "u8" if r.kind == "pred" else r.init[1], r.view, r.index))
            offset += size
        elif r.init[0] == "param":
            params.append((f"p_u{len(params)}", "u32" if r.kind == "pred" else r.init[1], r.view, r.index))
    record = max(16, -(-offset // 16) * 16)
    param_of = {idx: name for name, _, _, idx in params}
    offset_of = {idx: off for off, _, _, idx in inputs}

    # functions first (their own register namespaces); calls then know who wrote the results
    func_text = [_render_func(rd, f) for f in funcs]

    body_lines_start = len(rd.lines)
    ctx = {"uniform": True, "mask": FULL_MASK, "loops": [], "top": True, "shape_stack": []}
    kb = _Body(rd, names, None)
    kb.render(prog.body, ctx, 1)
    body = rd.lines[body_lines_start:]
    rd.lines = []

    # final stores of every pool register the body names
    for r in kernel_regs:
        if r.role in ("value", "approx") and (prog.observe is None or r.index in prog.observe):
            slot = len(rd.slots)
            rd.slots.append(("end", r, dict(rd.last_def)))
            kb.emit_store(r, slot, 1)
    stores = rd.lines
    rd.lines = []
    nslots = len(rd.slots)

    dims = {"nx": prog.block[0], "ny": prog.block[1], "gx": prog.grid[0], "tpb": prog.threads_per_block,
            "rec": record, "outrec": max(1, nslots) * SLOT_BYTES,
            "flat_block": prog.block[1] == prog.block[2] == 1, "one_cta": tuple(prog.grid) == (1, 1, 1),
            "scratch": COUNTER_BYTES + PRIVATE_BYTES * prog.threads,
            "csize": prog.cluster[0] * prog.cluster[1] * prog.cluster[2] if prog.cluster else 1}
    if nslots:
        rd.infra_used.add("outp")
    if inputs:
        rd.infra_used.add("inp")
    if any(r.init[0] == "tid" for r in kernel_regs):
        rd.infra_used.add("tid")
    shared = any(n in rd.infra_used for n in ("sh", "shp", "shs"))
    if "clu" in rd.infra_used:          # g_cl by name: its words start written as with $clb
        rd.infra_used.add("clb")
    if shared:
        rd.infra_used.add("shp")
    infra = _infra_order(rd.infra_used)
    prelude = ["    " + line for n in infra for line in _infra_lines(n, dims)]
    infra = [n for n in infra if n != "t32" or not (dims["flat_block"] and dims["one_cta"]) or "wss" in infra]
    # local arrays: every element written before any statement reads one
    loc = sorted(n for n in rd.infra_used if n.startswith("loc"))
    for n in loc:
        for i in range(LOCAL_ARRAY_WORDS):
            value = (0x9E3779B9 * (i + 1) + 7 * int(n[3:])) & 0xFFFFFFFF
            prelude.append(f"    st.local.u32 [g_{n}+{4 * i}], {value};")
    cluster_shared = "clb" in rd.infra_used
    if cluster_shared:
        # g_cl's first half: a value per thread and CTA, read anywhere in the cluster once
        # every CTA has written its own; the second half: one word per thread, written only by
        # the thread of its number in the previous CTA (and read back after a cluster barrier)
        tpb = prog.threads_per_block
        prelude += ["    mad.lo.u32 %g_clv, %g_crk, 65536, %g_tid;", "    xor.b32 %g_clv, %g_clv, 0x5bd1e995;",
                    "    st.shared.u32 [%g_clb], %g_clv;", f"    st.shared.u32 [%g_clb+{4 * tpb}], 0;",
                    "    barrier.cluster.arrive.release.aligned;", "    barrier.cluster.wait.acquire.aligned;"]
    if "sq" in rd.infra_used:
        prelude += [f"    st.shared.v4.u32 [%g_sq+{16 * k}], {{%g_tid, {0x5A5A0000 + k}, {0x3F800000 + k}, {k}}};"
                    for k in range(SQ_BYTES // 16)]
    if "wss" in rd.infra_used:
        # the warps' wmma scratch starts defined: a wmma.load may read more than a store
        # wrote (a leading dimension wider than the tile), which on the GPU reads whatever
        # shared memory held (GPU runs 10/11); each thread zeroes its 1/32 of its warp's part
        per_thread = WARP_SCRATCH // 32
        prelude += ["    mov.u32 %g_wz, g_wsc;", f"    mad.lo.u32 %g_wz, %g_tid, {per_thread}, %g_wz;"]
        prelude += [f"    st.shared.v4.u32 [%g_wz+{16 * k}], {{0, 0, 0, 0}};" for k in range(per_thread // 16)]
        if "mat" not in rd.infra_used and not shared:
            prelude.append("    bar.sync 0;")
    if "mat" in rd.infra_used:
        infra_needed = [n for n in ("tid",) if n not in infra]
        for n in infra_needed:
            prelude += ["    " + line for line in _infra_lines(n, dims)]
            infra.append(n)
            if "t32" not in infra and not (dims["flat_block"] and dims["one_cta"]):
                infra.append("t32")
        tpb = prog.threads_per_block
        prelude += ["    mov.u32 %g_mi, %g_tid;", "$Lmat_init:",
                    f"    setp.lt.u32 %g_mp, %g_mi, {MATRIX_WORDS};",
                    "    @!%g_mp bra $Lmat_done;",
                    "    mul.lo.u32 %g_mv, %g_mi, -1640531535;",
                    "    mov.u32 %g_ma, g_mat;",
                    "    mad.lo.u32 %g_ma, %g_mi, 4, %g_ma;",
                    "    st.shared.u32 [%g_ma], %g_mv;",
                    f"    add.u32 %g_mi, %g_mi, {tpb};",
                    "    bra $Lmat_init;", "$Lmat_done:"]
        prelude.append("    bar.sync 0;")
    if shared:
        # the shared words every thread owns, and the counters, start defined
        counters = SHARED_WORDS_PER_THREAD * 4 * prog.threads_per_block
        prelude += ["    st.shared.u32 [%g_shp], %g_tid;", "    st.shared.u32 [%g_shp+4], 0;",
                    "    setp.eq.u32 %g_first, %g_tid, 0;"]
        prelude += [f"    @%g_first st.shared.u32 [g_shared+{counters + 4 * i}], {i};"
                    for i in range(SHARED_COUNTER_BYTES // 4)]
        prelude.append("    bar.sync 0;")
    for r in kernel_regs:
        if r.role in ("value", "approx"):
            prelude += ["    " + line for line in
                        _init_lines(r, names[id(r)], param_of.get(r.index), offset_of.get(r.index), rd.temp)]

    decls = []
    counts = {k: 0 for k in KINDS}
    for r in kernel_regs:
        if r.role != "sink":
            counts[r.kind] += 1
    decls += [f"    .reg .{k} %{PREFIX[k]}<{counts[k]}>;" for k in KINDS if counts[k]]
    decls += [f"    .reg .{r.kind} {names[id(r)]};" for r in kernel_regs if r.role == "sink"]
    decls += [f"    .reg .{_INFRA[n][0]} %g_{n};" for n in infra]
    if shared:
        decls.append("    .reg .pred %g_first;")
    if cluster_shared:
        decls.append("    .reg .b32 %g_clv;")
    if "wss" in rd.infra_used:
        decls.append("    .reg .b32 %g_wz;")
    if "mat" in rd.infra_used:
        decls += ["    .reg .b32 %g_mi;", "    .reg .b32 %g_mv;", "    .reg .b32 %g_ma;", "    .reg .pred %g_mp;"]
    decls += [f"    .reg .{kind} {name};" for name, kind in rd.extra_regs.items()]
    mod_decls = []
    if shared:
        words = SHARED_WORDS_PER_THREAD * prog.threads_per_block + SHARED_COUNTER_BYTES // 4
        mod_decls.append(f".shared .align 16 .b32 g_shared[{words}];")
    if "mat" in rd.infra_used:
        mod_decls.append(f".shared .align 128 .b32 g_mat[{MATRIX_WORDS}];")
    if "wss" in rd.infra_used:
        mod_decls.append(f".shared .align 128 .b8 g_wsc[{WARP_SCRATCH * -(-prog.threads_per_block // 32)}];")
    if cluster_shared:
        mod_decls.append(f".shared .align 16 .b32 g_cl[{2 * prog.threads_per_block}];")
    if "sq" in rd.infra_used:
        mod_decls.append(f".shared .align 32 .b8 g_sq[{SQ_BYTES * prog.threads_per_block}];")
    if "cst" in rd.infra_used:
        values = ", ".join(str(_module_array(i, 1)) for i in range(MODULE_ARRAY_WORDS))
        mod_decls.append(f".const .align 32 .b32 g_const[{MODULE_ARRAY_WORDS}] = {{{values}}};")
    if "glb" in rd.infra_used:
        values = ", ".join(str(_module_array(i, 2)) for i in range(MODULE_ARRAY_WORDS))
        mod_decls.append(f".global .align 16 .b32 g_glob[{MODULE_ARRAY_WORDS}] = {{{values}}};")
    kernel_decls = [f"    .local .align 32 .b32 g_{n}[{LOCAL_ARRAY_WORDS}];" for n in loc]

    param_decl = [".param .u64 p_out", ".param .u64 p_in", ".param .u64 p_atom"]
    params += [(f"p_{n}", "handle", n, -1) for n in sorted(rd.infra_used) if n in TEXTURE_OBJECTS]
    if "blob" in rd.infra_used:
        params.append(("p_blob", "blob", "u64", -1))
    param_decl += [f".param .{t} {n}" if t not in ("blob", "handle") else
                   f".param .u64 {n}" if t == "handle" else f".param .align 16 .b8 {n}[{BLOB_BYTES}]"
                   for n, t, _, _ in params]
    head = [f".version {prog.version}", f".target {prog.target}", ".address_size 64", ""]
    plain = [(t, None) for t in head + mod_decls + ([""] if mod_decls else [])]
    for f_lines in func_text:
        plain += f_lines
    entry = [f".visible .entry fuzz_kernel({', '.join(param_decl)})"]
    if prog.cluster:
        entry.append(".reqnctapercluster {}, {}, {}".format(*prog.cluster))
    if prog.maxnreg:
        entry.append(f".maxnreg {prog.maxnreg}")
    plain += [(t, None) for t in entry + ["{"] + kernel_decls + decls + prelude]
    # no CTA leaves while another may still reach its shared memory
    leave = ["    barrier.cluster.arrive.release.aligned;", "    barrier.cluster.wait.acquire.aligned;"] \
        if cluster_shared else []
    plain += body + stores + [(t, None) for t in leave] + [("    ret;", None), ("}", None), ("", None)]
    text = "\n".join(t for t, _ in plain)
    owners = [o for _, o in plain]

    slots = []
    for where, r, last in rd.slots:
        # NaN = NaN where the value is a float: the statement that last wrote it (before the
        # store, in program order) is a float operation, or it is still the initial value of
        # a float view; an integer result's bits must match exactly, NaN-like or not
        key = last.get(id(r))
        view = key.rsplit(".", 1)[-1] if key else r.view
        floats = set()
        if view in _FLOAT_VIEWS:
            floats = set(rd.float_views.get(id(r), set())) | {view}
        elif key and key.startswith(_MOVES) and id(r) not in rd.int_defined:
            floats = set(rd.float_views.get(id(r), set())) | ({r.view} & set(_FLOAT_VIEWS))
        slots.append(Slot(names[id(r)], r.kind, tuple(sorted(floats)), rd.tolerance.get(id(r), 0.0),
                          last.get(id(r), f"init.{r.init[0]}.{r.init[1]}"), where))
    keys = list(rd.keys) + [k for (line, owner) in plain if owner is not None
                            for k in [instruction_spelling(line)] if k]
    return Rendered(text, slots, params, inputs, record,
                    keys, sorted(rd.spaces), rd.shapes, text.count("\n"), owners)


_GUARD = re.compile(r"^@!?%\w+\s+")


def instruction_spelling(line: str) -> str | None:
    """The opcode with its modifiers of a PTX instruction line (None for labels, braces,
    declarations and directives)."""
    text = line.strip()
    if not text or text.endswith(":") or text[0] in "{}." or ".branchtargets" in text:
        return None
    text = _GUARD.sub("", text)
    word = text.split(None, 1)[0].rstrip(";")
    return word if word[0].isalpha() else None


def _render_func(rd: _Renderer, f: Func) -> list[tuple[str, Stmt | None]]:
    used = referenced_regs(f.body) | {id(r) for r in f.params} | {id(r) for r in f.rets}
    names = _assign_names(f.regs, used)
    saved_lines, saved_extra, saved_count = rd.lines, rd.extra_regs, dict(rd.temp_count)
    rd.lines, rd.extra_regs = [], {}
    rd.temp_count = {k: 0 for k in KINDS}
    fb = _Body(rd, names, f)
    ctx = {"uniform": False, "mask": FULL_MASK, "loops": [], "top": False, "shape_stack": []}
    fb.render(f.body, ctx, 1)
    body = rd.lines
    rd.lines = []
    fb.emit_func_results(1)
    results = rd.lines
    for r in f.rets:
        if id(r) in rd.last_def:
            rd.func_results[(f.name, id(r))] = rd.last_def[id(r)]
    regs = [r for r in f.regs if id(r) in used]
    decls = []
    counts = {k: 0 for k in KINDS}
    for r in regs:
        if r.role != "sink":
            counts[r.kind] += 1
    for k in KINDS:
        if counts[k]:
            decls.append(f"    .reg .{k} %{PREFIX[k]}<{counts[k]}>;")
    for r in regs:
        if r.role == "sink":
            decls.append(f"    .reg .{r.kind} {names[id(r)]};")
    for name, kind in rd.extra_regs.items():
        decls.append(f"    .reg .{kind} {name};")
    init = []
    param_ids = {id(p): i for i, p in enumerate(f.params)}
    for r in regs:
        if id(r) in param_ids:
            if f.style == "reg":
                init.append(f"    mov.b{BITS[r.kind]} {names[id(r)]}, %{f.name}_a{param_ids[id(r)]};")
            else:
                i = param_ids[id(r)]
                t = f.param_types[i] if i < len(f.param_types) else ""
                op = f"ld.param::func.{t}" if t else f"ld.param.{r.kind}"
                init.append(f"    {op} {names[id(r)]}, [{f.name}_a{i}];")
                if t:
                    rd.keys.append(op)
    for r in regs:
        if id(r) not in param_ids and r.role != "sink":
            src = next((p for p in f.params if p.kind == r.kind), None)
            if r.kind == "pred":
                p0 = f.params[0]
                init.append(f"    setp.ne.b{BITS[p0.kind]} {names[id(r)]}, {names[id(p0)]}, {r.index % 7};")
            elif src is not None:
                init.append(f"    xor.b{BITS[r.kind]} {names[id(r)]}, {names[id(src)]}, {(0x5DEECE66D * (r.index + 1)) & ((1 << (BITS[r.kind] - 1)) - 1)};")
            else:
                init.append(f"    mov.b{BITS[r.kind]} {names[id(r)]}, {(0x2545F491 * (r.index + 3)) & 0x7FFF};")
    rd.lines, rd.extra_regs, rd.temp_count = saved_lines, saved_extra, saved_count
    if f.style == "reg":
        params = ", ".join(f".reg .{p.kind} %{f.name}_a{i}" for i, p in enumerate(f.params))
        rets = ", ".join(f".reg .{r.kind} %{f.name}_r{i}" for i, r in enumerate(f.rets))
    else:
        params = ", ".join(f".param .{p.kind} {f.name}_a{i}" for i, p in enumerate(f.params))
        rets = ", ".join(f".param .{r.kind} {f.name}_r{i}" for i, r in enumerate(f.rets))
    head = f"{'.visible ' if f.visible else ''}.func {'(' + rets + ') ' if rets else ''}{f.name}({params})"
    return ([(t, None) for t in [head, "{"] + decls + init] + body + results
            + [("    ret;", None), ("}", None), ("", None)])
