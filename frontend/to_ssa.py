"""Lowering a checked PTX syntax tree to the SSA IR (`ptx2sass.ir`).

PTX registers are mutable variables; SSA wants one definition per value. We build the CFG
from labels and branches first, then rename with Braun et al.'s on-the-fly algorithm
("Simple and Efficient Construction of Static Single Assignment Form", CC 2013): blocks are
filled in reverse postorder, a block is sealed once all its predecessors are filled, and
reads in unsealed blocks get operandless phis that are completed on sealing. Trivial phis are
removed afterwards to a fixpoint and phis that only feed phis are dropped, which gives minimal,
pruned SSA for the reducible CFGs real producers write.

Everything here iterates lists in source order, so the IR is the same in every process.
"""
from __future__ import annotations

import re
import struct
from dataclasses import field

from ptx2sass import ir
from ptx2sass.records import dataclass
from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast, multimem
from ptx2sass.frontend.depth import deep_walks
from ptx2sass.frontend.initializers import NotConstant, element_count, initial_bytes, sampler_word
from ptx2sass.frontend.instructions import SPECIAL_REGISTERS, TYPE_BITS, TYPE_MODIFIERS

# Instructions with no result operand (everything else writes its first operand).
NO_RESULT = frozenset({
    "st", "st.async", "red", "red.async", "bar.sync", "bar.arrive", "barrier.sync",
    "barrier.arrive", "bar.warp.sync", "bar.warp", "barrier.cluster.arrive", "barrier.cluster.wait",
    "bra", "brx", "call", "ret", "exit", "trap", "brkpt", "membar", "fence", "prefetch",
    "prefetchu", "cp.async", "cp.async.commit_group", "cp.async.wait_group",
    "cp.async.wait_all", "cp.async.bulk", "cp.reduce", "cp.reduce.async.bulk", "cp.async.bulk.tensor",
    "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "cp.async.mbarrier.arrive",
    "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "nanosleep", "pmevent", "wmma.store", "stmatrix", "griddepcontrol", "setmaxnreg",
    "discard", "applypriority", "multimem.st", "multimem.red", "tensormap.cp_fenceproxy",
    "tensormap.replace", "clusterlaunchcontrol.try_cancel",
    "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "stackrestore", "sust", "sured",
    "inlined_call",     # ptx2sass/inline.py's marker
    "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.st",
    "tcgen05.commit", "tcgen05.wait::ld", "tcgen05.wait::st", "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync", "tcgen05.cp", "tcgen05.shift", "tcgen05.mma",
})
# Texture and surface instructions: their `[handle, {coordinates}]` operand lowers to the
# sources handle, coordinates... (attrs["coords"] counts them), ahead of the other sources.
TEXTURE_OPCODES = frozenset({"tex", "tld4", "txq", "suld", "sust", "sured", "suq"})
DYNAMIC_STACK_OPCODES = frozenset({"alloca", "stacksave", "stackrestore"})
NOUNROLL = "nounroll"       # the one `.pragma` string that changes code (PTX ISA, `.pragma`)
SPACES = (".global", ".shared", ".local", ".const", ".param", ".tex", ".shared::cta",
          ".shared::cluster", ".param::entry", ".param::func")
# Accesses whose `.shared::cluster` space stays distinct from `.shared` (ptxas reaches it
# through the generic window, since the address may name another CTA of the cluster).
CLUSTER_ACCESS_OPCODES = frozenset({"ld", "st", "atom", "red"})
MEMORY_OPCODES = frozenset({"ld", "ldu", "st", "atom", "red", "prefetch", "cvta", "isspacep",
                            "cp", "multimem", "ld.global.nc"})


@dataclass(eq=False)
class _Var:
    """One declared register (a PTX name in one scope)."""
    name: str
    type: str


@dataclass
class _Scope:
    parent: "_Scope | None"
    names: dict = field(default_factory=dict)     # name -> _Var | ir.Variable | ir.Param
    ranges: dict = field(default_factory=dict)    # prefix -> (count, type, {index: _Var})
    # Names already resolved from this scope: lowering starts only after every declaration
    # of the function has been entered (`flatten`), so a hit never goes stale.
    memo: dict = field(default_factory=dict)

    def lookup(self, name: str):
        hit = self.memo.get(name)
        if hit is None:
            hit = self._walk(name)
            if hit is not None:
                self.memo[name] = hit
        return hit

    def _walk(self, name: str):
        scope = self
        while scope is not None:
            hit = scope.names.get(name)
            if hit is not None:
                return hit
            if scope.ranges:
                base, _, comp = name.partition(".")     # `%v3.x`: a component of a vector range
                stem = base.rstrip("0123456789")
                digits = base[len(stem):]
                entry = scope.ranges.get(stem)
                if entry is not None and digits and (digits == "0" or digits[0] != "0") \
                        and int(digits) < entry[0]:
                    cache, width = entry[2], entry[3] if len(entry) > 3 else 0
                    var = cache.get(int(digits))
                    if var is None:
                        var = cache[int(digits)] = (
                            [_Var(f"{base}.{c}", entry[1]) for c in "xyzw"[:width]] if width
                            else _Var(base, entry[1]))
                    if not comp:
                        return var
                    if isinstance(var, list) and comp in "xyzw"[:len(var)]:
                        return var["xyzw".index(comp)]
                    return None
            scope = scope.parent
        return None


def _strip(t: str | None) -> str | None:
    return t[1:] if t and t.startswith(".") else t


def _type_size(t: str) -> int:
    return max(1, TYPE_BITS.get(t, 8) // 8)


def _float_bits(value: float, ty: str) -> int:
    bits = TYPE_BITS.get("." + ty, 32)
    if bits == 64:
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if bits == 16:
        return struct.unpack("<H", struct.pack("<e", value))[0]
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _add_module_variable(variables: list[ir.Variable], var: ir.Variable) -> None:
    """A module-scope variable; an `.extern` declaration and a definition of one name are one
    variable (the definition, wherever it stands; the checks made the pair legal)."""
    same = next((i for i, v in enumerate(variables) if v.name == var.name), None)
    if same is None:
        variables.append(var)
    elif variables[same].extern and not var.extern:
        variables[same] = var


def declare(scope: _Scope, decl: ast.VariableDecl) -> list[ir.Variable]:
    """Enter a declaration into `scope`; return the memory variables it creates."""
    ty = _strip(decl.type) or "b8"
    created = []
    for d in decl.declarators:
        if decl.space == ".reg":
            if d.range_count is not None:     # (count, type, made so far, vector width)
                scope.ranges[d.name] = (d.range_count, ty, {}, int(decl.vector[2:]) if decl.vector else 0)
            elif decl.vector:
                comps = [_Var(f"{d.name}.{c}", ty) for c in "xyzw"[: int(decl.vector[2:])]]
                for var in comps:
                    scope.names[var.name] = var
                scope.names[d.name] = comps   # the whole vector: its components in order
            else:
                scope.names[d.name] = _Var(d.name, ty)
            continue
        count = 1
        for dim in d.dims:
            count *= dim if isinstance(dim, int) else 0
        elems = int(decl.vector[2:]) if decl.vector else 1
        if d.init is not None and d.dims and d.dims[0] is None:   # `a[] = {...}`: sized by it
            inner = 1
            for dim in d.dims[1:]:
                inner *= dim if isinstance(dim, int) else 0
            count = -(-element_count(d.init) // max(1, inner * elems)) * inner
        size = _type_size("." + ty) * elems * count
        init, relocs, sampler = None, [], None
        if ty == "samplerref":
            try:
                sampler = sampler_word(d.init)
            except NotConstant:
                raise CompileError(f"Unknown sampler field or value in the initializer of '{d.name}'",
                                   None, getattr(d, "line", None) or decl.line) from None
        elif d.init is not None and decl.space in (".global", ".const"):
            init, relocs = initial_bytes(d.init, ir.TYPES.get(ty, ("b", 8))[0], _type_size("." + ty), size)
        var = ir.Variable(d.name, decl.space[1:].split("::")[0], ty, size,
                          decl.align or _type_size("." + ty) * elems, init=init, relocations=relocs,
                          extern=".extern" in decl.linkage,
                          linkage=_strip(decl.linkage[0]) if decl.linkage else None,
                          sampler=sampler, line=getattr(d, "line", None) or decl.line)
        scope.names[d.name] = var
        created.append(var)
    return created


class _FunctionLowering:
    def __init__(self, module_scope: _Scope, fn_ast: ast.Function, file: str,
                 module_functions: set[str], labels: set[str]):
        self.module_functions = module_functions
        self.labels = labels
        self.file = file
        self.fn_ast = fn_ast
        self.fn = ir.Function(fn_ast.name, fn_ast.kind == ".entry")
        self.scope = _Scope(module_scope)
        self.current_def: dict[int, dict[int, ir.Value]] = {}   # id(block) -> id(var) -> value
        self.incomplete: dict[int, list[tuple[_Var, ir.Phi]]] = {}
        self.sealed: set[int] = set()
        self.filled: set[int] = set()
        self.replaced: dict[int, ir.Value | ir.Const] = {}       # phi value id -> replacement
        self.phi_block: dict[int, ir.Block] = {}
        self.branch_tables: dict[str, list[str]] = {}
        self.no_unrolling = False          # a module-scope `.pragma "nounroll"`
        self.body_of: dict[int, list] = {}
        # `_same_as_dominator`'s facts, worked out at its first question: block id -> ids of
        # the variables its statements name (None until then), the immediate dominators,
        # and block id -> the variables named on the paths into it from its dominator
        self.named: dict[int, set[int]] | None = None
        self.idom: dict = {}
        self.region_named: dict[int, set[int]] = {}

    def error(self, node, msg: str) -> CompileError:
        return CompileError(msg, self.file, getattr(node, "line", None), getattr(node, "column", None))

    # --- declarations ------------------------------------------------------------------

    def declare(self, scope: _Scope, decl: ast.VariableDecl) -> None:
        for var in declare(scope, decl):
            if decl.space != ".param":
                self.fn.locals.append(var)

    def lower_params(self, params: list, into: list[ir.Param]) -> list[tuple[_Var, ir.Param]]:
        """Lay parameters out in the parameter space; `.reg` parameters of `.func`s become
        registers defined on entry."""
        reg_params = []
        offset = 0
        for decl in params:
            for d in decl.declarators:
                ty, size, align = _param_shape(decl, d)
                offset = (offset + align - 1) // align * align
                param = ir.Param(d.name, ty, size, align, offset, _strip(decl.ptr_space))
                if decl.space == ".reg" and decl.vector:
                    # a parameter per element, `a.x`, `a.y`, …: they travel in consecutive
                    # registers (ptxas -g: `.v2.u32` in R4, R5)
                    comps = [_Var(f"{d.name}.{c}", ty) for c in "xyzw"[: int(decl.vector[2:])]]
                    for var in comps:
                        into.append(ir.Param(var.name, ty, size, align, offset))
                        offset += size
                        self.scope.names[var.name] = var
                        reg_params.append((var, into[-1]))
                    self.scope.names[d.name] = comps
                    continue
                into.append(param)
                offset += size
                if decl.space == ".reg":
                    var = _Var(d.name, ty)
                    self.scope.names[d.name] = var
                    reg_params.append((var, param))
                else:
                    self.scope.names[d.name] = param
        return reg_params

    # --- CFG -----------------------------------------------------------------------------

    def flatten(self, block: ast.Block, scope: _Scope, out: list) -> None:
        """Statements in order, each with the scope it was written in."""
        Instruction, Label = ast.Instruction, ast.Label
        for st in block.statements:
            t = type(st)
            if t is Instruction or t is Label:     # the common case first
                out.append((st, scope))
            elif isinstance(st, ast.Block):
                self.flatten(st, _Scope(scope), out)
            elif isinstance(st, ast.VariableDecl):
                self.declare(scope, st)
            elif isinstance(st, ast.BranchTargets):
                self.branch_tables[st.label] = [t.name if isinstance(t, ast.Name) else str(t)
                                                for t in st.targets]
            elif isinstance(st, (ast.Instruction, ast.Label)):
                out.append((st, scope))
            elif isinstance(st, ast.Pragma) and NOUNROLL in st.strings:
                out.append((st, scope))

    def build_cfg(self, stmts: list) -> list[tuple[ir.Block, list]]:
        blocks: list[tuple[ir.Block, list]] = []
        # Labels are scoped to their `{ }` block: key by (scope, name), resolve outwards.
        by_label: dict[tuple[int, str], ir.Block] = {}

        def find(name: str, scope: _Scope) -> ir.Block | None:
            while scope is not None:
                hit = by_label.get((id(scope), name))
                if hit is not None:
                    return hit
                scope = scope.parent
            return None
        current = None
        n = 0

        taken: dict[str, int] = {}

        def new_block(name: str | None = None):
            nonlocal n
            name = name or f"bb{n}"
            # a label repeated in another `{ }` scope (inline asm expanded twice) names a block
            # of its own: block names are the function's labels from here on ('.' is in no
            # PTX identifier, so the suffix cannot meet a label)
            if name in taken:
                taken[name] += 1
                name = f"{name}.{taken[name]}"
            else:
                taken[name] = 0
            b = ir.Block(name)
            n += 1
            blocks.append((b, []))
            return b

        Label = ast.Label
        for item in stmts:
            st = item[0]
            if type(st) is Label:
                b = new_block(st.name)
                by_label[(id(item[1]), st.name)] = b
                current = b
                continue
            if type(st) is ast.Pragma:
                # statement level: the loop headed by the block it is written in (the manual
                # asks for it before the block's first instruction; ptxas takes it anywhere
                # in the block, as here)
                if current is None and not blocks:
                    current = new_block()
                if current is not None:
                    current.nounroll = True
                continue
            if current is None:
                current = new_block()
            blocks[-1][1].append(item)
            if _ends_block(st):
                current = None
        if not blocks:
            new_block()
        # Edges: explicit targets, then the fall-through.
        for i, (b, body) in enumerate(blocks):
            last, last_scope = body[-1] if body else (None, None)
            fall = blocks[i + 1][0] if i + 1 < len(blocks) else None
            targets: list[ir.Block] = []
            falls = True
            if last is not None and _ends_block(last):
                guarded = last.guard is not None
                if last.opcode == "bra":
                    label = last.operands[0]
                    dest = find(label.name, last_scope) if isinstance(label, ast.Name) else None
                    if dest is None:
                        raise self.error(last, f"Label '{getattr(label, 'name', label)}' not defined")
                    targets.append(dest)
                    falls = guarded
                elif last.opcode == "brx":
                    table = last.operands[1].name if isinstance(last.operands[1], ast.Name) else None
                    for name in self.branch_tables.get(table, []):
                        dest = find(name, last_scope)
                        if dest is None:
                            raise self.error(last, f"Label '{name}' not defined")
                        if dest not in targets:
                            targets.append(dest)
                    falls = guarded
                else:  # ret / exit / trap
                    falls = guarded
            for t in targets:
                ir.link(b, t)
            if falls and fall is not None and fall not in b.succs:
                ir.link(b, fall)
        return blocks

    # --- SSA renaming (Braun et al.) ----------------------------------------------------

    def write(self, var: _Var, block: ir.Block, value: ir.Value) -> None:
        self.current_def.setdefault(id(block), {})[id(var)] = value

    def read(self, var: _Var, block: ir.Block):
        # Walk single-predecessor chains iteratively (long straight-line CFGs are common),
        # and from a block no path into which names `var` to its immediate dominator.
        chain = []
        b = block
        while True:
            hit = self.current_def.get(id(b), {}).get(id(var))
            if hit is not None:
                value = self.resolve(hit)
                break
            if id(b) in self.sealed:
                if len(b.preds) == 1:
                    chain.append(b)
                    b = b.preds[0]
                    continue
                if b.preds and self._same_as_dominator(var, b):
                    chain.append(b)
                    b = self.idom[b]
                    continue
            value = self.read_recursive(var, b)
            break
        for c in chain:
            self.write(var, c, value)
        return value

    def read_recursive(self, var: _Var, block: ir.Block):
        if id(block) not in self.sealed:
            phi = self.new_phi(var, block)
            self.incomplete.setdefault(id(block), []).append((var, phi))
            value = phi.dest
        elif not block.preds:
            value = self.undef(var)
        else:
            phi = self.new_phi(var, block)
            self.write(var, block, phi.dest)
            self.add_phi_operands(var, phi, block)
            value = phi.dest
        self.write(var, block, value)
        return value

    def _same_as_dominator(self, var: _Var, block: ir.Block) -> bool:
        """Whether no statement on a path from `block`'s immediate dominator into `block`
        (`block` included where such a path comes back to it) names `var`: then every path
        brings the value the dominator ends with, and a phi here would only be removed again.
        N nested loops read each loop's counter after the loops inside it, through every
        inner header: a phi in each (~N^2/2 made, then removed, at 300 levels 46,000).

        The region (blocks reaching `block` backwards without passing its immediate
        dominator D) of each inner header holds the whole inner nest: walked block by block,
        N levels cost ~N^2/2. A block X of the region whose own region R(X) is known lies
        with all of R(X) in this one (D dominates X, so D dominates X's immediate dominator
        too, and a path avoiding X's immediate dominator avoids D), and any other path into X
        comes through X's immediate dominator: the walk takes R(X)'s names whole and goes on
        from there. The same union, each level walked once."""
        if self.named is None:
            self._name_variables()
        regions = self.region_named
        named = regions.get(id(block))
        if named is None:
            stop, idom = self.idom[block], self.idom
            seen: set[int] = set()
            named = set()
            work = list(block.preds)
            while work:
                b = work.pop()
                if b is stop or id(b) in seen:
                    continue
                seen.add(id(b))
                named |= self.named[id(b)]
                inner = regions.get(id(b))
                if inner is None:
                    work.extend(b.preds)
                    continue
                # b's own region is known (see above): taken whole, on from b's idom
                named |= inner
                up = idom[b]
                if up is not None:
                    work.append(up)
            regions[id(block)] = named
        return id(var) not in named

    def _name_variables(self) -> None:
        """`named`: for every block, the variables its statements name anywhere (a vector's
        or a component's name stands for all its components; a dynamic-stack statement
        names the hidden stack pointer): a superset of those it writes."""
        self.idom = ir.dominators(self.fn)
        self.named = {}
        for b in self.fn.blocks:
            ids: set[int] = set()
            for st, scope in self.body_of[id(b)]:
                for name in ast.names(st):
                    hit = scope.lookup(name)
                    if type(hit) is _Var:
                        ids.add(id(hit))
                    elif type(hit) is list:
                        ids.update(id(v) for v in hit if type(v) is _Var)
                if self.stack_var is not None and getattr(st, "opcode", None) in DYNAMIC_STACK_OPCODES:
                    ids.add(id(self.stack_var))
            self.named[id(b)] = ids

    def _check_named(self, var: _Var, block: ir.Block) -> None:
        """A write `_name_variables` did not foresee would make `_same_as_dominator` wrong."""
        if self.named is not None and id(var) not in self.named[id(block)]:
            raise AssertionError(f"{var.name} written in a block whose statements do not name it")

    def new_phi(self, var: _Var, block: ir.Block) -> ir.Phi:
        phi = ir.Phi(self.fn.new_value(var.type, var.name))
        block.phis.append(phi)
        self.phi_block[phi.dest.id] = block
        return phi

    def add_phi_operands(self, var: _Var, phi: ir.Phi, block: ir.Block) -> None:
        for pred in block.preds:
            phi.incoming.append((pred, self.read(var, pred)))

    def seal(self, block: ir.Block) -> None:
        for var, phi in self.incomplete.pop(id(block), []):
            self.add_phi_operands(var, phi, block)
        self.sealed.add(id(block))

    def undef(self, var: _Var) -> ir.Value:
        """A read with no reaching definition: PTX leaves the value unspecified."""
        v = self.fn.new_value(var.type, var.name)
        self.fn.entry.instrs.insert(self.undef_count, ir.Instr("undef", [v], type=var.type))
        self.undef_count += 1
        return v

    def resolve(self, v):
        replaced = self.replaced
        if type(v) is not ir.Value or v.id not in replaced:
            return v
        path = []
        while isinstance(v, ir.Value) and v.id in replaced:
            path.append(v.id)
            v = replaced[v.id]
        for vid in path[:-1]:          # shortened: chains of removed phis grow with nesting
            replaced[vid] = v
        return v

    def cleanup_phis(self) -> None:
        """Remove trivial phis to a fixpoint, then phis no real instruction needs."""
        # A worklist: a phi is looked at again only when one it reads goes (rescanning
        # every block until nothing changed took as many rounds as loops are nested), the
        # last requeued first: where N nested loops make every header's phi read the
        # innermost one, each removal then settles the next phi out at once (first in,
        # first out looked at all of them again each time: cubic in the nesting).
        # value id -> the phis reading it, in first-reading order; a phi may be listed twice
        # (deduplicated when the list is used: a list per value, not a dict, as N nested
        # loops make ~N^2/2 phis before this cleanup, and these maps were its peak memory)
        readers: dict[int, list[ir.Phi]] = {}
        work = []
        for b in self.fn.blocks:
            for phi in b.phis:
                work.append(phi)
                for _, v in phi.incoming:
                    if type(v) is ir.Value:
                        listed = readers.setdefault(v.id, [])
                        if not listed or listed[-1] is not phi:
                            listed.append(phi)
        work.reverse()                 # popped in block order
        removed: set[int] = set()
        while work:
            phi = work.pop()
            if id(phi) in removed:
                continue
            phi.incoming = [(p, self.resolve(v)) for p, v in phi.incoming]
            others = []
            for _, v in phi.incoming:
                if v is phi.dest or any(_same(v, o) for o in others):
                    continue
                others.append(v)
            if len(others) == 1:
                self.replaced[phi.dest.id] = others[0]
            elif not others:
                self.replaced[phi.dest.id] = self.undef(_Var(phi.dest.name, phi.dest.type))
            else:
                for v in others:           # what it reads now, should that go too
                    if type(v) is ir.Value:
                        listed = readers.setdefault(v.id, [])
                        if not listed or listed[-1] is not phi:
                            listed.append(phi)
                continue
            removed.add(id(phi))
            seen: set[int] = set()
            for r in readers.pop(phi.dest.id, ()):
                if id(r) not in removed and id(r) not in seen:
                    seen.add(id(r))
                    work.append(r)
        for b in self.fn.blocks:
            if b.phis:
                b.phis = [phi for phi in b.phis if id(phi) not in removed]
        replaced, resolve, Value, Address = self.replaced, self.resolve, ir.Value, ir.Address
        for b in self.fn.blocks if replaced else ():
            for phi in b.phis:
                phi.incoming = [(p, resolve(v)) for p, v in phi.incoming]
            for ins in b.instrs:
                srcs = ins.srcs
                for k, src in enumerate(srcs):
                    t = type(src)
                    if t is Value:
                        if src.id in replaced:
                            srcs[k] = resolve(src)
                    elif t is Address and type(src.base) is Value and src.base.id in replaced:
                        srcs[k] = Address(resolve(src.base), src.offset)
                if ins.guard is not None:
                    ins.guard = resolve(ins.guard)
                if ins.merge:
                    ins.merge = [resolve(m) for m in ins.merge]
        # Pruning: a phi is live when a non-phi instruction (or a live phi) uses it.
        phi_of = {phi.dest.id: phi for b in self.fn.blocks for phi in b.phis}
        if not phi_of:
            return
        live: set[int] = set()
        work = [v.id for b in self.fn.blocks for ins in b.instrs for v in ir._uses(ins)
                if v.id in phi_of]
        while work:
            vid = work.pop()
            if vid in live:
                continue
            live.add(vid)
            work.extend(v.id for _, v in phi_of[vid].incoming
                        if isinstance(v, ir.Value) and v.id in phi_of)
        for b in self.fn.blocks:
            b.phis = [phi for phi in b.phis if phi.dest.id in live]

    # --- instructions --------------------------------------------------------------------

    def lower(self) -> ir.Function:
        f = self.fn_ast
        reg_params = self.lower_params(f.params, self.fn.params)
        self.return_vars = [v for v, _ in self.lower_params(f.return_params, self.fn.returns)]
        for d in f.directives:
            if isinstance(d, ast.PerformanceDirective):
                self.fn.attributes[d.name[1:]] = list(d.args)
        stmts: list = []
        if f.body is not None:
            self.flatten(f.body, self.scope, stmts)
        blocks = self.build_cfg(stmts)
        if self.no_unrolling or NOUNROLL in self.fn.attributes.get("pragma", ()):
            for b, _ in blocks:                 # module or function scope: every loop
                b.nounroll = True
        entry = blocks[0][0]
        if entry.preds:  # a loop back to the first statement: give the function a fresh entry
            fresh = ir.Block("entry")
            ir.link(fresh, entry)
            blocks.insert(0, (fresh, []))
        reachable = {id(b) for b in ir.reverse_postorder(_Shell(blocks[0][0]))}
        for b, _ in blocks:
            if id(b) not in reachable:
                for s in b.succs:
                    s.preds.remove(b)
                b.succs = []
        live_blocks = [(b, body) for b, body in blocks if id(b) in reachable]
        self.fn.blocks = [b for b, _ in live_blocks]
        self.undef_count = 0
        body_of = self.body_of = {id(b): body for b, body in live_blocks}
        self.seal(self.fn.entry)
        for var, param in reg_params:
            v = self.fn.new_value(var.type, var.name)
            self.fn.entry.instrs.append(ir.Instr("param", [v], [ir.Symbol(param.name)], type=var.type))
            self.undef_count += 1
            self.write(var, self.fn.entry, v)
        self.stack_var = None
        stack_ops = [st for body in body_of.values() for st, _ in body
                     if isinstance(st, ast.Instruction) and st.opcode in DYNAMIC_STACK_OPCODES]
        # the alignment the pointer always has: the frame's 8, or less after a smaller alloca
        self.stack_align = min([8] + [_fold(st.operands[2]) or 1 for st in stack_ops
                                      if st.opcode == "alloca" and len(st.operands) > 2])
        if any(st.opcode != "stacksave" for st in stack_ops):
            # the stack needed is unknown even where the allocation is dead (ptxas's records)
            self.fn.attributes[ir.DYNAMIC_STACK] = True
        if stack_ops:
            # The dynamic stack pointer (alloca/stacksave/stackrestore): a hidden 32-bit
            # register, starting at the bottom of the static frame (`stacksave` with no
            # source reads the machine's stack pointer there).
            self.stack_var = _Var("%stack", "u32")
            v = self.fn.new_value("u32", "%stack")
            self.fn.entry.instrs.append(ir.Instr("stacksave", [v], [], type="u32"))
            self.write(self.stack_var, self.fn.entry, v)
        position = {id(b): k for k, b in enumerate(self.fn.blocks)}
        plans, lower_plain, lower_instruction = _PLANS, self.lower_plain, self.lower_instruction
        for b in ir.reverse_postorder(self.fn):
            for st, scope in body_of[id(b)]:
                plan = plans.get((st.opcode, st.modifiers, len(st.operands)))   # (the common case)
                if plan:
                    lower_plain(st, scope, b, plan)
                else:
                    lower_instruction(st, scope, b)
            self.filled.add(id(b))
            # filling b can only complete the predecessors of its successors: those become
            # sealable now, in block order (scanning every block here was quadratic)
            for cand in sorted({id(s): s for s in b.succs}.values(), key=lambda s: position[id(s)]):
                if id(cand) not in self.sealed and all(id(p) in self.filled for p in cand.preds):
                    self.seal(cand)
        self.cleanup_phis()
        ir.verify(self.fn)
        return self.fn

    def operand(self, node, scope: _Scope, block: ir.Block, ty: str | None, out: list) -> object:
        if type(node) is ast.Name:
            name = node.name if node.component is None else _full_name(node)
            hit = scope.lookup(name)
            if type(hit) is _Var:     # the common case first: a plain register
                return self.read(hit, block)
            if hit is None and node.component is not None:
                hit = scope.lookup(node.name)
            if isinstance(hit, _Var):
                return self.read(hit, block)
            if isinstance(hit, list):
                return [self.read(v, block) for v in hit]
            if isinstance(hit, (ir.Variable, ir.Param)):
                return ir.Symbol(hit.name)
            if node.name in SPECIAL_REGISTERS:
                sty = SPECIAL_REGISTERS[node.name].split(".")[-1]
                return ir.SpecialReg(name, sty)
            if node.name == "WARP_SZ":
                return ir.Const(32, ty or "u32")
            if hit is None and node.name in self.module_functions:
                return ir.Symbol(node.name)
            if node.name in self.labels:
                return ir.Symbol(node.name)
            raise self.error(node, f"Unknown symbol '{name}'")
        if isinstance(node, ast.IntLit):
            return ir.Const(_mask(node.value, ty), ty or "s64")
        if isinstance(node, ast.FloatLit):
            if node.bits is not None and (ty is None or TYPE_BITS.get("." + ty) == node.width
                                          or ty.startswith(("b", "u", "s"))):
                return ir.Const(node.bits, ty or ("f32" if node.width == 32 else "f64"))
            value = node.value if node.bits is None else (
                struct.unpack("<f", struct.pack("<I", node.bits))[0] if node.width == 32
                else struct.unpack("<d", struct.pack("<Q", node.bits))[0])
            return ir.Const(_float_bits(value, ty or "f64"), ty or "f64")
        if isinstance(node, ast.Unary) and node.op == "!":
            v = self.operand(node.operand, scope, block, "pred", out)
            t = self.fn.new_value("pred")
            out.append(ir.Instr("not", [t], [v], type="pred", line=node.line))
            return t
        if isinstance(node, (ast.Unary, ast.Binary)):
            const = _fold(node)
            if const is not None:
                return ir.Const(_mask(const, ty), ty or "s64")
            sym = _symbol_plus(node)
            if sym is not None:
                var = scope.lookup(sym[0])
                if isinstance(var, _Var):      # `%r + 1`: ptxas adds (the register's value)
                    v = self.read(var, block)
                    t = self.fn.new_value(var.type)
                    out.append(ir.Instr("add", [t], [v, ir.Const(_mask(sym[1], var.type), var.type)],
                                        type=var.type, line=node.line))
                    return t
                return ir.Symbol(*sym)
            raise self.error(node, "unsupported operand expression")
        if isinstance(node, ast.Index):
            base = scope.lookup(node.base.name)
            const = _fold(node.index)
            if not isinstance(base, (ir.Variable, ir.Param)) or const is None:
                raise self.error(node, f"unsupported array operand '{node.base.name}'")
            return ir.Symbol(base.name, const * _type_size("." + base.type))
        if isinstance(node, ast.Address):
            offset = node.offset
            if node.base is None:
                return ir.Address(None, offset)
            base = self.operand(node.base, scope, block, None, out)
            if isinstance(base, ir.Symbol):
                return ir.Address(ir.Symbol(base.name), base.offset + offset)
            return ir.Address(base, offset)
        if isinstance(node, ast.VectorOperand):
            return [self.operand(e, scope, block, ty, out) for e in node.elements]
        if isinstance(node, ast.ParenList):
            return [self.operand(e, scope, block, None, out) for e in node.elements]
        raise self.error(node, f"unsupported operand {type(node).__name__}")

    def dests(self, node, scope: _Scope, block: ir.Block) -> list[tuple[_Var | None, ir.Value]]:
        """The registers an operand defines, each with a fresh value."""
        if type(node) is ast.Name and node.component is None and node.name != "_":
            var = scope.lookup(node.name)
            if type(var) is _Var:     # the common case first: a plain register
                return [(var, self.fn.new_value(var.type, var.name))]
        if isinstance(node, ast.VectorOperand):
            out = [d for e in node.elements for d in self.dests(e, scope, block)]
            # a sink `_` is as wide as its named siblings (`mov.b32 {_, %rs9}, %r8` drops
            # the low 16 bits, not 32)
            named = next((v.type for var, v in out if var is not None), None)
            if named is not None and named != "b32":
                out = [(var, v) if var is not None else (None, self.fn.new_value(named, "_"))
                       for var, v in out]
            return out
        if isinstance(node, ast.PairOperand):
            return self.dests(node.first, scope, block) + self.dests(node.second, scope, block)
        if isinstance(node, ast.ParenList):
            return [d for e in node.elements for d in self.dests(e, scope, block)]
        if isinstance(node, ast.Name):
            if node.name == "_":
                return [(None, self.fn.new_value("b32", "_"))]
            name = _full_name(node)
            var = scope.lookup(name)
            if isinstance(var, _Var):
                return [(var, self.fn.new_value(var.type, var.name))]
            if isinstance(var, list):
                return [(v, self.fn.new_value(v.type, v.name)) for v in var]
        raise self.error(node, "destination operand must be a register")

    def lower_dynamic_stack(self, st: ast.Instruction, scope: _Scope, block: ir.Block) -> None:
        """alloca/stacksave/stackrestore as arithmetic on the hidden stack pointer (a local
        address: 32 bits, zero-extended in a .u64 result):
        `alloca d, size, align`: sp = (sp - size) & -align, d = sp (align defaults to 8; the
        mask is left out where the size is a constant multiple of an alignment the pointer
        always has); `stacksave d`: d = sp; `stackrestore a`: sp = a."""
        ty = _strip(st.modifiers[-1]) if st.modifiers else "u32"
        guard = None
        if st.guard is not None:
            g = scope.lookup(st.guard.predicate.name)
            if not isinstance(g, _Var):
                raise self.error(st.guard, f"Unknown symbol '{st.guard.predicate.name}'")
            guard = self.read(g, block)
        sv = self.stack_var
        out: list[ir.Instr] = []

        def emit(opcode, dest_var, dest_type, srcs, types=()):
            d = self.fn.new_value(dest_type, dest_var.name if dest_var else "%t")
            ins = ir.Instr(opcode, [d], srcs, type=dest_type, types=types, line=st.line)
            if guard is not None and dest_var is not None:
                ins.guard, ins.guard_negated = guard, st.guard.negated
                ins.merge = [self.read(dest_var, block)]
            block.instrs.extend(out)
            out.clear()
            block.instrs.append(ins)
            if dest_var is not None:
                self._check_named(dest_var, block)
                self.write(dest_var, block, d)
            return d

        def narrow(v):           # a .u64 operand's low word, the local address
            if ty == "u64":
                return emit("cvt", None, "u32", [v], ("u64",)) if isinstance(v, ir.Value) \
                    else ir.Const(v.value & 0xFFFFFFFF, "u32")
            return v

        def result(node, value):
            (var, _), = self.dests(node, scope, block)
            if ty == "u64":
                emit("cvt", var, "u64", [value], ("u32",))
            else:
                emit("mov", var, "u32", [value])

        ops = st.operands
        if st.opcode == "stacksave":
            result(ops[0], self.read(sv, block))
        elif st.opcode == "stackrestore":
            src = narrow(self.operand(ops[0], scope, block, ty, out))
            emit("mov", sv, "u32", [src])
        else:
            size = narrow(self.operand(ops[1], scope, block, ty, out))
            align = _fold(ops[2]) if len(ops) > 2 else 8
            moved = emit("sub", None, "u32", [self.read(sv, block), size])
            if isinstance(size, ir.Const) and size.value % align == 0 and align <= self.stack_align:
                new = emit("mov", sv, "u32", [moved])
            else:
                new = emit("and", sv, "b32", [moved, ir.Const(-align & 0xFFFFFFFF, "b32")])
            result(ops[0], new)

    def texture_operand(self, ins: ir.Instr, srcs_ast: list, scope: _Scope, block: ir.Block,
                        out: list) -> list:
        """The handle (a register or a module .texref/.samplerref/.surfref symbol) and the
        coordinates of a texture/surface operand as leading sources; `attrs["coords"]`."""
        handle, coords = _texture_handle_and_coords(srcs_ast[0])
        if len(coords) == 2 and isinstance(coords[0], ast.Name) \
                and isinstance(coords[1], ast.VectorOperand):
            ins.attrs["sampler"] = coords[0].name         # `[tex, sampler, {coords}]`
            coords = list(coords[1].elements)
        ins.attrs["coords"] = len(coords)
        return handle + coords + list(srcs_ast[1:])

    def lower_instruction(self, st: ast.Instruction, scope: _Scope, block: ir.Block,
                          plain: bool = True) -> None:
        if st.opcode == "multimem":
            plain_form = multimem.as_plain(st)
            if plain_form is not None:
                return self.lower_instruction(plain_form, scope, block, plain)
        plan = _PLANS.get((st.opcode, st.modifiers, len(st.operands)), False)
        if plan is False:
            plan = _PLANS[(st.opcode, st.modifiers, len(st.operands))] = \
                _plain_plan(st.opcode, st.modifiers, len(st.operands))
        if plan is not None and plain:
            return self.lower_plain(st, scope, block, plan)
        if st.opcode in DYNAMIC_STACK_OPCODES:
            return self.lower_dynamic_stack(st, scope, block)
        out: list[ir.Instr] = []
        shape = _SHAPES.get((st.opcode, st.modifiers))
        if shape is None:
            shape = _SHAPES[(st.opcode, st.modifiers)] = _shape(st.opcode, st.modifiers)
        types, space, rest, key = shape
        ins = ir.Instr(st.opcode, modifiers=rest, type=types[0] if types else None,
                       types=tuple(types[1:]), line=st.line)
        if st.opcode in MEMORY_OPCODES:
            ins.space = space or "generic"
        elif space is not None:
            ins.space = space
        ty = ins.type
        operands = list(st.operands)
        if st.opcode in VIDEO_OPCODES or st.opcode in SIMD_VIDEO_OPCODES:
            operands = _video_operands(ins, operands)
        if st.guard is not None:
            g = scope.lookup(st.guard.predicate.name)
            if not isinstance(g, _Var):
                raise self.error(st.guard, f"Unknown symbol '{st.guard.predicate.name}'")
            ins.guard = self.read(g, block)
            ins.guard_negated = st.guard.negated
        defined: list[tuple[_Var | None, ir.Value]] = []
        if st.opcode == "call":
            # call[.uni] [(rets),] target, [(args)][, prototype | call-table]
            if operands and isinstance(operands[0], ast.ParenList):
                for element in operands.pop(0).elements:
                    hit = scope.lookup(element.name) if isinstance(element, ast.Name) else None
                    if isinstance(hit, _Var) or (isinstance(hit, list) and element.component is None):
                        # a `.reg` return (a vector: each element): the call defines it
                        defined += self.dests(element, scope, block)
                    else:                          # a `.param` return: read back with ld.param
                        ins.attrs.setdefault("returns", []).append(
                            self.operand(element, scope, block, None, out))
                ins.dests = [v for _, v in defined]
            ins.srcs = _flatten([self.operand(o, scope, block, None, out) for o in operands])
        elif st.opcode == "ret":
            # `.reg` return parameters leave the function as the values current at `ret`.
            ins.srcs = [self.read(v, block) for v in self.return_vars]
        elif st.opcode in ("bra", "brx"):
            if st.opcode == "brx":
                ins.srcs = [self.operand(operands[0], scope, block, "u32", out)]
                ins.srcs += [ir.Symbol(t) for t in self.branch_tables.get(operands[1].name, [])]
        else:
            has_result = key not in NO_RESULT and st.opcode not in NO_RESULT and operands
            srcs_ast = operands[1:] if has_result else operands
            if st.opcode in TEXTURE_OPCODES and srcs_ast and isinstance(srcs_ast[0], ast.Address):
                srcs_ast = self.texture_operand(ins, srcs_ast, scope, block, out)
            elif st.opcode == "cp" and ".tensor" in st.modifiers:
                srcs_ast = _tensor_operands(ins, srcs_ast)
            if st.opcode == "st" and len(srcs_ast) == 2 and type(srcs_ast[1]) is ast.VectorOperand:
                srcs_ast = [srcs_ast[0], _without_sinks(ins, srcs_ast[1])]
            srcs = [self.operand(o, scope, block, _src_type(st.opcode, types, i, rest), out)
                    for i, o in enumerate(srcs_ast)]
            ins.srcs = _flatten(srcs) if list in map(type, srcs) else srcs
            if has_result:
                defined = self.dests(operands[0], scope, block)
                ins.dests = [v for _, v in defined]
                if st.opcode == "wgmma":
                    # mma_async accumulates into its result registers: D = A x B + D
                    ins.srcs += [self.read(var, block) if var is not None else ir.Const(0, v.type)
                                 for var, v in defined]
        if ins.guard is not None and defined:
            ins.merge = [self.read(var, block) if var is not None else ir.Const(0, v.type)
                         for var, v in defined]
        for extra in out:
            block.instrs.append(extra)
        block.instrs.append(ins)
        for var, value in defined:
            if var is not None:
                self._check_named(var, block)
                self.write(var, block, value)


    def lower_plain(self, st: ast.Instruction, scope: _Scope, block: ir.Block, plan) -> None:
        """`lower_instruction` for an instruction `_plain_plan` describes: the same IR,
        with plain registers and integer literals read (and a plain register written)
        without the general operand walk; `read`'s first look, in the block's own
        definitions, is made here."""
        if st.opcode == "st" and _has_sink(st.operands[-1]):
            return self.lower_instruction(st, scope, block, plain=False)   # (`_without_sinks`)
        ty, types, rest, space, has_result, src_types, masks = plan
        # (by position, in ir.Instr's field order: a class called with keywords gets them as
        # a dict, the larger part of making the instruction)
        ins = ir.Instr(st.opcode, [], [], rest, ty, types, None, False, [], space, None, st.line)
        if st.guard is not None:
            g = scope.lookup(st.guard.predicate.name)
            if not isinstance(g, _Var):
                raise self.error(st.guard, f"Unknown symbol '{st.guard.predicate.name}'")
            ins.guard = self.read(g, block)
            ins.guard_negated = st.guard.negated
        out: list[ir.Instr] = []        # what operands need before the instruction
        operands = st.operands
        srcs = ins.srcs
        lookup, known = scope.lookup, scope.memo.get       # (the memo read first: no call)
        defs = self.current_def.get(id(block))
        replaced = self.replaced
        literals = _LITERALS
        k = 1 if has_result else 0
        for sty, mask in zip(src_types, masks):
            node = operands[k]
            k += 1
            t = type(node)
            if t is _Name and node.component is None:
                hit = known(node.name) or lookup(node.name)
                if type(hit) is _Var:
                    value = defs.get(id(hit)) if defs else None
                    if value is None or (type(value) is _Value and value.id in replaced):
                        value = self.read(hit, block)
                    srcs.append(value)
                    continue
            elif t is _IntLit:
                const = literals.get((node.value, sty))
                if const is None:
                    const = _Const(node.value & mask if mask else _mask(node.value, sty),
                                   sty or "s64")
                    if len(literals) < 4096:
                        literals[(node.value, sty)] = const
                srcs.append(const)
                continue
            value = self.operand(node, scope, block, sty, out)
            if type(value) is list:
                srcs.extend(_flatten(value))
            else:
                srcs.append(value)
        defined = ()
        if has_result:
            node = operands[0]
            var = (known(node.name) or lookup(node.name)) if type(node) is _Name \
                and node.component is None and node.name != "_" else None
            if type(var) is _Var:
                fn = self.fn
                value = _Value(fn.next_value_id, var.type, var.name)
                fn.next_value_id += 1
                defined = ((var, value),)
                ins.dests.append(value)
            else:
                defined = self.dests(node, scope, block)
                ins.dests = [v for _, v in defined]
            if ins.guard is not None:
                ins.merge = [self.read(var, block) if var is not None else _Const(0, v.type)
                             for var, v in defined]
        if out:
            block.instrs.extend(out)
        block.instrs.append(ins)
        if defined:
            if defs is None:
                defs = self.current_def.setdefault(id(block), {})
            for var, value in defined:
                if var is not None:
                    if self.named is not None:
                        self._check_named(var, block)
                    defs[id(var)] = value


def _plain_plan(opcode: str, modifiers: tuple, count: int):
    """What `lower_instruction` decides from an ordinary instruction's spelling and operand
    count (its type, other types, other modifiers, state space, whether the first operand
    is a result, each source's immediate type), or None for the instructions it treats
    specially (calls, branches, returns, the dynamic stack, video and texture operands,
    wgmma's accumulator, which it reads too)."""
    if opcode in DYNAMIC_STACK_OPCODES or opcode in VIDEO_OPCODES or opcode in SIMD_VIDEO_OPCODES \
            or opcode in TEXTURE_OPCODES or opcode in ("call", "ret", "bra", "brx", "wgmma") \
            or opcode == "cp" and ".tensor" in modifiers:         # (`_tensor_operands`)
        return None
    types, space, rest, key = _shape(opcode, modifiers)
    if opcode in MEMORY_OPCODES:
        space = space or "generic"
    has_result = key not in NO_RESULT and opcode not in NO_RESULT and count > 0
    sources = count - 1 if has_result else count
    src_types = tuple(_src_type(opcode, types, i, rest) for i in range(sources))
    # the mask `_mask` applies to an integer literal of that type (0: ask `_mask`, whose
    # answer for a float type depends on the value)
    masks = tuple((1 << TYPE_BITS["." + t]) - 1 if t and t[0] in "bus" and "." + t in TYPE_BITS
                  else 0 for t in src_types)
    return (types[0] if types else None, tuple(types[1:]), rest, space, has_result, src_types,
            masks)


# (opcode, modifiers, operand count) -> `_plain_plan`'s answer (False: not yet asked)
_PLANS: dict = {}
_Name, _IntLit, _Value, _Const = ast.Name, ast.IntLit, ir.Value, ir.Const    # lower_plain's
# (integer literal, source type) -> its immediate: a Const is immutable, so one serves every
# operand that spells it (lowering made one per literal operand)
_LITERALS: dict[tuple, ir.Const] = {}


def _tensor_operands(ins: ir.Instr, srcs_ast: list) -> list:
    """A bulk tensor copy's `[tensorMap, {c0, ..}]` as the tensor map's address (`[tmap]`)
    followed by the coordinates; `attrs["tensor"]` = (its index, the coordinate count).
    Other braced operands (im2col offsets) are flattened by the operand walk."""
    for k, node in enumerate(srcs_ast):
        if isinstance(node, ast.Address) and len(node.elements) > 1:
            handle, coords = _texture_handle_and_coords(node)
            base = handle[0] if isinstance(handle[0], ast.Name) else None
            ins.attrs["tensor"] = (k, len(coords))
            address = ast.Address(elements=handle, base=base, offset=0, line=node.line)
            return srcs_ast[:k] + [address] + coords + srcs_ast[k + 1:]
    return srcs_ast


def _texture_handle_and_coords(node: ast.Address) -> tuple[list, list]:
    """`[h, {c0, c1}]` / `[h, c0]` / `[h]` → the handle and the coordinate nodes."""
    elements = list(node.elements)
    if node.base is not None and not elements:
        elements = [node.base]
    handle, coords = elements[:1], elements[1:]
    if len(coords) == 1 and isinstance(coords[0], ast.VectorOperand):
        coords = list(coords[0].elements)
    return handle, coords


# Scalar video instructions: their operands may carry a byte/half selector (`a.b1`, `d.h0`)
# and vmad's a negation (`-a`); lowering takes them off the operands into `ins.attrs`.
VIDEO_OPCODES = frozenset({"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset"})
VIDEO_SELECTORS = frozenset({"b0", "b1", "b2", "b3", "h0", "h1"})
# SIMD video instructions: lane selectors on a and b (`.h21`, `.b7250`) and a lane mask on
# the destination (`.h0`, `.b310`).
SIMD_VIDEO_OPCODES = frozenset(f"{op}{n}" for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax",
                                                      "vset") for n in (2, 4))
_SIMD_SELECTOR = re.compile(r"^[bh][0-7]+$")


def _video_operands(ins: ir.Instr, operands: list) -> list:
    """Strip selectors and negations: `attrs["sel"]` holds one selector (or None) per source,
    `attrs["dsel"]` the destination's, `attrs["neg"]` which sources are negated; for the
    SIMD forms `attrs["sel"]` holds a's and b's and `attrs["mask"]` the destination's."""
    simd = ins.opcode in SIMD_VIDEO_OPCODES

    def strip(node):
        neg = False
        if isinstance(node, ast.Unary) and node.op == "-" and isinstance(node.operand, ast.Name):
            node, neg = node.operand, True
        sel = None
        if isinstance(node, ast.Name) and node.component is not None:
            part = node.component.lstrip(".")
            if _SIMD_SELECTOR.match(part) if simd else part in VIDEO_SELECTORS:
                sel = part
                node = ast.Name(name=node.name, line=node.line, column=node.column)
        return node, sel, neg
    out, sels, negs = [], [], []
    for node in operands:
        node, sel, neg = strip(node)
        out.append(node)
        sels.append(sel)
        negs.append(neg)
    if out and simd:
        ins.attrs["mask"] = sels[0]
        ins.attrs["sel"] = tuple(sels[1:3])
    elif out:
        ins.attrs["dsel"] = sels[0]
        ins.attrs["sel"] = tuple(sels[1:])
        ins.attrs["neg"] = tuple(negs[1:])
    return out


# (opcode, modifiers) -> what lower_instruction needs from them; a kernel repeats a few
# dozen shapes thousands of times.
_SHAPES: dict = {}


# mma's fp6/fp4 element types and block-scale factor types: types of `mma` only (kept in
# order with the others, so A's and B's types stay apart: `.f32.e2m1.e3m2.f32.ue8m0`)
MMA_ELEMENT_TYPES = frozenset((".e2m3", ".e3m2", ".ue8m0", ".ue4m3"))


def _shape(opcode: str, mods: tuple) -> tuple:
    typed = TYPE_MODIFIERS | MMA_ELEMENT_TYPES if opcode == "mma" else TYPE_MODIFIERS
    types = [m[1:] for m in mods if m in typed]
    space = next((m[1:].split("::")[0] for m in mods if m in SPACES), None)
    if opcode in CLUSTER_ACCESS_OPCODES and ".shared::cluster" in mods and ".async" not in mods:
        space = "shared::cluster"       # another CTA's shared memory too: not `.shared`'s window
    rest = tuple(m[1:] for m in mods if m not in typed and m not in SPACES)
    if opcode == "fence":     # fence.proxy.async.shared::cta/::cluster fence differently
        rest += tuple(m[1:] for m in mods if m in SPACES)
    elif opcode == "cp" and ".bulk" in mods:    # a bulk copy's destination and source spaces
        rest = tuple(m[1:] for m in mods if m not in TYPE_MODIFIERS)
    # `bar.cta.sync`, `barrier.aligned.sync`: the operation names the kind, not the qualifier
    named = [r for r in rest if r not in ("cta", "aligned")] if opcode in ("bar", "barrier") \
        else rest
    return types, space, rest, opcode + ("." + named[0] if named else "")


class _Shell:
    """Just enough of a Function for `reverse_postorder` before blocks are final."""
    def __init__(self, entry: ir.Block):
        self.entry = entry


def _same(a, b) -> bool:
    if isinstance(a, ir.Value) or isinstance(b, ir.Value):
        return a is b
    return a == b



def _has_sink(node) -> bool:
    return type(node) is ast.VectorOperand and any(
        type(e) is ast.Name and e.name == "_" for e in node.elements)


def _without_sinks(ins: ir.Instr, vector: ast.VectorOperand) -> ast.VectorOperand:
    """A 256-bit `st`'s sinks (`{%r1, _, ...}`: the frontend allows them there only): their
    element indices in `attrs["sinks"]` (the store leaves those words of memory as they
    are), a zero in their place among the sources."""
    sinks = frozenset(k for k, e in enumerate(vector.elements)
                      if type(e) is ast.Name and e.name == "_")
    if not sinks:
        return vector
    ins.attrs["sinks"] = sinks
    return ast.VectorOperand(elements=[
        ast.IntLit(value=0, text="0", line=e.line, column=e.column) if k in sinks else e
        for k, e in enumerate(vector.elements)], line=vector.line, column=vector.column)

def _flatten(items: list) -> list:
    out = []
    for it in items:
        if isinstance(it, list):
            out.extend(_flatten(it))
        else:
            out.append(it)
    return out


def _full_name(node: ast.Name) -> str:
    """`v.x` for a vector component (the parser keeps the component with its dot)."""
    if node.component is None:
        return node.name
    return f"{node.name}.{node.component.lstrip('.')}"


_BLOCK_ENDS = frozenset(("bra", "brx", "ret", "exit"))


def _ends_block(st: ast.Instruction) -> bool:
    """Control leaves the block here. An unguarded `trap` ends the thread's run as ptxas
    reads it: what follows up to the next label is unreachable (ptxas drops it, and with it
    the calls that would make `.noreturn` panic helpers look recursive)."""
    return st.opcode in _BLOCK_ENDS or (st.opcode == "trap" and st.guard is None)


def _src_type(opcode: str, types: list[str], index: int, modifiers=()) -> str | None:
    """The type an immediate source takes: the instruction's (source) type; mad.wide's
    addend has twice its width."""
    if not types:
        return None
    if opcode == "mad" and index == 2 and "wide" in modifiers and types[0][1:] in ("16", "32"):
        return types[0][0] + str(2 * int(types[0][1:]))
    if opcode == "cvt" and len(types) > 1:
        return types[1]
    if opcode in ("shl", "shr") and index == 1:
        return "u32"
    if opcode in ("setp", "set") and types:
        return types[-1]
    if opcode == "slct" and index == 2 and len(types) > 1:     # c has the second type (s32/f32)
        return types[1]
    return types[0] if types[0] != "pred" or opcode in ("mov", "and", "or", "xor", "not") else None


def _mask(value: int, ty: str | None) -> int:
    bits = TYPE_BITS.get("." + ty, 64) if ty else 64
    if ty and ty.startswith("f") and bits < 64:
        bits = 64 if value < 0 or value >= 1 << bits else bits
    return value & ((1 << bits) - 1)


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b,
        "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
        "/": lambda a, b: int(a / b) if b else None, "%": lambda a, b: a % b if b else None}


def _fold(node) -> int | None:
    if isinstance(node, ast.IntLit):
        return node.value
    if isinstance(node, ast.Unary):
        v = _fold(node.operand)
        if v is None:
            return None
        return {"-": -v, "~": ~v, "!": int(not v), "+": v}.get(node.op)
    if isinstance(node, ast.Binary):
        a, b = _fold(node.left), _fold(node.right)
        if a is None or b is None or node.op not in _OPS:
            return None
        return _OPS[node.op](a, b)
    if isinstance(node, ast.ParenList) and len(node.elements) == 1:
        return _fold(node.elements[0])
    return None


def _symbol_plus(node) -> tuple[str, int] | None:
    """`sym+4`, `sym-4`, `4+sym`: a symbol's address with a constant offset."""
    if isinstance(node, ast.Binary) and node.op in "+-":
        if isinstance(node.left, ast.Name):
            off = _fold(node.right)
            if off is not None:
                return node.left.name, off if node.op == "+" else -off
        if isinstance(node.right, ast.Name) and node.op == "+":
            off = _fold(node.left)
            if off is not None:
                return node.right.name, off
    return None


def lower_module(module: ast.Module) -> ir.Module:
    """Lower a parsed and checked module; raises CompileError for constructs the IR lacks."""
    with deep_walks():
        return _lower_module(module)


def _lower_module(module: ast.Module) -> ir.Module:
    version = f"{module.version.major}.{module.version.minor}" if module.version else "0.0"
    target = module.target.names[0] if module.target and module.target.names else "sm_89"
    out = ir.Module(version, target, module.address_size.bits if module.address_size else 64)
    out.texmode_independent = bool(module.target) and "texmode_independent" in module.target.names
    scope = _Scope(None)
    functions = {f.name for f in module.functions()}
    defined = {f.name for f in module.functions() if f.body is not None}   # the rest: externs
    # a module-scope `.pragma "nounroll"` holds for every loop of the module, also those before it
    no_unrolling = any(isinstance(item, ast.Pragma) and NOUNROLL in item.strings for item in module.items)
    for item in module.items:
        if isinstance(item, ast.VariableDecl):
            if item.type == ".samplerref" and not out.texmode_independent:
                raise CompileError("Instruction or declaration violates .target texmode_unified setting",
                                   module.file, item.line)
            for var in declare(scope, item):
                _add_module_variable(out.variables, var)
    for f in module.functions():
        if f.body is None:
            if f.kind == ".func" and f.name not in defined | {e.name for e in out.externs}:
                out.externs.append(_extern(f))
            continue
        lowering = _FunctionLowering(scope, f, f.file or module.file, functions, _labels(f.body))
        lowering.no_unrolling = no_unrolling
        out.functions.append(lowering.lower())
    return out


def _extern(f: ast.Function) -> ir.Function:
    """A bodiless `.func` declaration: its name and parameter/result types (a `.param`
    array keeps its element type and byte size)."""
    fn = ir.Function(f.name, False)
    for decls, into in ((f.params, fn.params), (f.return_params, fn.returns)):
        for decl in decls:
            for d in decl.declarators:
                into.append(ir.Param(d.name, *_param_shape(decl, d)))
    return fn


def _param_shape(decl, d) -> tuple[str, int, int]:
    """(element type, byte size, alignment) of one declared parameter (an array's size is
    its element's times its dimensions; unsized dimensions count 0)."""
    ty = _strip(decl.type) or "b8"
    count = 1
    for dim in d.dims:
        count *= dim if isinstance(dim, int) else 0
    return ty, _type_size("." + ty) * count, decl.align or _type_size("." + ty)


def _labels(block: ast.Block) -> set[str]:
    names = set()
    for st in block.statements:
        if type(st) is ast.Instruction:
            continue
        if isinstance(st, (ast.Label, ast.CallPrototype, ast.CallTargets, ast.BranchTargets)):
            names.add(st.name if isinstance(st, ast.Label) else st.label)
        elif isinstance(st, ast.Block):
            names |= _labels(st)
    return names
