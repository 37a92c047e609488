"""Inline `.func` calls into their callers, on the checked AST, before SSA construction.

Why inline: it is what makes ptxas-class code from small device functions (no argument
moves, no saves, one register allocation across the call). ptxas itself (whole-program
mode, sm_8x) does not inline `__noinline__` functions: it appends a private copy of each
callee to the kernel's text (symbol `$kernel$func`, `CALL.REL.NOINC` / `RET.REL.NODEC Rx`).
Here every call is inlined except those that cannot be: calls of a function that is part
of a cycle of calls (recursion), calls through a function pointer, and calls of an
`.extern .func` without a body here (ptxas's system calls, `vprintf`...). Recursive and
address-taken functions stay out of line (`out_of_line`; an address-taken one is still
inlined where it is called by name), are
rewritten the same way (their `.param` parameters become `.reg` ones, `ld.param`/`st.param`
of them `mov`s, their own calls of inlinable functions inlined) and are compiled with the
calling convention of `ptx2sass.abi`; a call of one stays a `call` whose arguments and
results are registers.

How: `.param` scalars become `.reg` variables. In a caller, a call-site `.param x` declared
in the body is a register, `st.param [x], v` / `ld.param d, [x]` become `mov`s. In the
callee, its parameters are registers, `ld.param`/`st.param` of them become `mov`s, and
`ret` becomes a branch to the end of the inlined body. The callee's names are prefixed so
they cannot clash; SSA construction then makes the phis (several `ret`s, loops around
calls). A struct parameter of an inlined callee is a register per field; one that crosses
an out-of-line call is packed: a `.b32` register per 4 bytes, fields moved in and out with
`mov` (whole words), `mov.b64 {lo, hi}` (pairs) and `bfe`/`bfi` (bytes, half-words), so
that it travels in argument registers as ptxas passes it (ptx2sass.abi). Anything else
(param vectors, indirect calls of the call-table form, structs through function pointers)
raises `CompileError("... not supported yet")`.
"""
from __future__ import annotations

import copy
import dataclasses
import re

from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast
from ptx2sass.frontend.instructions import SPECIAL_REGISTERS, TYPE_BITS

INLINED_CALL = "inlined_call"     # the marker an inlined call leaves (no operands, no code)
# Nesting of inlined calls. Recursion never reaches it (recursive functions stay calls:
# `recursive_functions`); it bounds the code a chain of calls may inline. nvcc -G's
# CUB and hand-written PTX nest ordinary calls deeper than the 8 it once was (a chain of
# 14 `.func`s was refused as a "recursive call").
MAX_DEPTH = 64
_PREFIX = re.compile(r"^(\$inl\d+\$)+")


def _source_name(name: str) -> str:
    """A renamed callee name as the user wrote it (for messages)."""
    return _PREFIX.sub("", name)


class _Inliner:
    def __init__(self, module: ast.Module, linkable: bool = False):
        self.module = module
        self.file = module.file
        self.bodies = {f.name: f for f in module.functions() if f.kind == ".func" and f.body is not None}
        self.globals = {f.name for f in module.functions()}
        # `.extern .func`s without a body (system calls such as `vprintf`): their calls stay
        # calls, compiled as ptxas does (isel/calls.py)
        self.externs = {f.name for f in module.functions() if f.kind == ".func" and f.body is None} - set(self.bodies)
        for item in module.items:
            if isinstance(item, ast.VariableDecl):
                self.globals.update(d.name for d in item.declarators)
        self.recursive = recursive_functions(module)
        # compiled out of line: the recursive ones (every call of them stays a call) and the
        # address-taken ones (their direct calls are still inlined; the copy serves pointers)
        self.out_of_line = self.recursive | address_taken_functions(module)
        # separate compilation (`-c`): a `.visible .func` with a body is a link target, compiled
        # once with the link-time convention (ptx2sass.abi) and called, even here, through it
        self.linkable = linkable_functions(module) if linkable is True else set(linkable or ())
        self.out_of_line |= self.linkable
        self.count = 0
        self.arrays: set[str] = set()          # `.param .b8 x[N]` (structs): one register per field
        self.fields: dict[str, int] = {}       # field register → width in bits
        # Structs that cross an out-of-line call travel packed, as ptxas passes them: their
        # bytes in 32-bit words, `x$w0`, `x$w1`, … (little-endian), in consecutive argument
        # registers (an 8-aligned one from an even register). name → size in bytes.
        self.packed: dict[str, int] = {}
        self.temps: dict[str, str] = {}        # registers the packing declares → PTX type
        self.layouts = {f.name: self.flat_layout(f) for f in module.functions()
                        if f.kind == ".func" and f.body is not None and f.name in self.out_of_line}
        # bodiless declarations (another module's functions, -c): their structs as words too,
        # placed by the link-time convention (ptx2sass.abi.link_layout)
        self.layouts.update((f.name, self.flat_layout(f)) for f in module.functions()
                            if f.name in self.externs and f.name not in self.layouts)

    def unsupported(self, node, what: str) -> CompileError:
        return CompileError(f"{what} not supported yet", self.file, getattr(node, "line", None))

    # ------------------------------------------------------------------ rewriting a body
    def body(self, block: ast.Block, params: dict[str, int], stack: tuple[str, ...],
             regs: dict[str, str] | None = None) -> ast.Block:
        """`block` with call-site `.param`s as registers and every call inlined; `params`
        maps the names (visible here) of `.param` variables turned into registers to their
        declared width in bits; `regs` the types of the registers visible here (a range
        `%r<4>` under its stem)."""
        params, regs = dict(params), dict(regs or {})
        out = []
        kept = set(self.kept_call_operands(block))
        for st in block.statements:
            if isinstance(st, ast.VariableDecl) and st.space == ".param" and _is_array(st):
                self.arrays.update(d.name for d in st.declarators)
                for d in st.declarators:
                    if d.name in kept:
                        self.pack(st, d)
                    else:
                        self.packed.pop(d.name, None)
            elif isinstance(st, ast.VariableDecl) and st.space == ".param":
                out.append(self.param_as_reg(st))
                params.update((d.name, TYPE_BITS.get(st.type, 0)) for d in st.declarators)
                self.arrays.difference_update(d.name for d in st.declarators)
                for d in st.declarators:
                    self.packed.pop(d.name, None)
            elif isinstance(st, ast.VariableDecl) and st.space == ".reg":
                out.append(st)
                regs.update((d.name, st.type) for d in st.declarators)
            elif isinstance(st, ast.Block):
                # a block's `.param` declarations end with it (nvcc reuses `retval0` for a
                # struct in one call sequence and a scalar in the next)
                outer_arrays, outer_packed = set(self.arrays), dict(self.packed)
                out.append(self.body(st, params, stack, regs))
                self.arrays, self.packed = outer_arrays, outer_packed
            elif isinstance(st, ast.Instruction) and st.opcode == "call":
                out.extend(self.inline_call(st, stack))
            elif isinstance(st, ast.Instruction) and st.opcode in ("ld", "st") and \
                    ".param" in (mods := _plain_param_space(st.modifiers)):
                moved = self.param_move(dataclasses.replace(st, modifiers=mods), params, regs)
                out.extend(moved if isinstance(moved, list) else [moved])
            else:
                out.append(st)
        return dataclasses.replace(block, statements=out)

    def param_as_reg(self, decl: ast.VariableDecl) -> ast.VariableDecl:
        if decl.space == ".reg":          # a `.reg` parameter (vectors and predicates too)
            return decl
        for d in decl.declarators:
            if d.dims or d.range_count is not None or decl.vector or d.init is not None:
                raise self.unsupported(decl, f"`.param` array or vector `{_source_name(d.name)}` in a call")
        if decl.type in (None, ".pred"):
            raise self.unsupported(decl, "untyped `.param` in a call")
        return dataclasses.replace(decl, space=".reg", align=None, ptr_space=None, ptr_align=None)

    def param_move(self, st: ast.Instruction, params: dict[str, int], regs: dict[str, str]) -> ast.Instruction:
        """`ld.param d, [p]` → `mov d, p`; `st.param [p], v` → `mov p, v` (p a register now).
        An integer access narrower than the parameter (nvcc's `st.param.b16` / `ld.param.s16`
        of a `.b32` parameter) is a `cvt`: extended as its type says, to the register's width."""
        is_load = st.opcode == "ld"
        addr = st.operands[1] if is_load else st.operands[0]
        vector = next((m for m in st.modifiers if m in (".v2", ".v4")), None)
        if vector and isinstance(addr, ast.Address) and addr.base is not None and \
                (addr.base.name in self.packed or addr.base.name in self.arrays):
            return self.vector_moves(st, addr, is_load, vector, params, regs)
        if isinstance(addr, ast.Address) and addr.base is not None and addr.base.name in self.packed:
            return self.word_move(st, addr, is_load, regs)
        if isinstance(addr, ast.Address) and addr.base is not None and addr.base.name in self.arrays:
            return self.field_move(st, addr, is_load, regs)
        if not isinstance(addr, ast.Address) or addr.base is None or addr.base.name not in params:
            return st         # a kernel parameter: the selector reads it from the constant bank
        if addr.offset or len(addr.elements) != 1 or any(m.startswith(".v") for m in st.modifiers):
            raise self.unsupported(st, "`ld.param`/`st.param` with an offset or vector in a call")
        types = [m for m in st.modifiers if m != ".param"]
        reg = ast.Name(line=addr.line, column=addr.column, name=addr.base.name)
        operands = [st.operands[0], reg] if is_load else [reg, st.operands[1]]
        bits, declared = sum(TYPE_BITS.get(m, 0) for m in types), params[addr.base.name]
        opcode = "mov"
        if bits != declared:
            other = st.operands[0] if is_load else st.operands[1]
            wide = regs.get(other.name) or regs.get(other.name.rstrip("0123456789")) \
                if isinstance(other, ast.Name) else None
            if is_load:
                wide_bits = TYPE_BITS.get(wide or "", 0)
            else:
                wide_bits = declared
            if (len(types) != 1 or types[0][1] not in "bus" or bits > declared or not wide_bits
                    or (wide and wide[1] not in "bus")):
                raise self.unsupported(st, f"`{st.opcode}{''.join(st.modifiers)}` of a parameter of "
                                           f"another width in a call")
            narrow = "." + ("u" if types[0][1] == "b" else types[0][1]) + types[0][2:]
            if not is_load and not isinstance(other, ast.Name):
                types = [f".b{declared}"]          # an immediate: its low bits are what is read
            else:
                opcode, types = "cvt", [f".u{wide_bits}", narrow]
        return ast.Instruction(line=st.line, column=st.column, opcode=opcode, modifiers=tuple(types),
                               operands=operands, guard=st.guard)

    def vector_moves(self, st: ast.Instruction, addr: ast.Address, is_load: bool, vector: str,
                     params: dict[str, int], regs: dict[str, str]) -> list:
        """`ld/st.param.v2/.v4` of a struct parameter: one access per element, each at its
        own offset (`st.param.v2.b32 [r+0], {a, b}` → `[r+0], a` and `[r+4], b`)."""
        values = st.operands[0] if is_load else st.operands[1]
        types = [m for m in st.modifiers if m not in (".param", vector)]
        size = sum(TYPE_BITS.get(m, 0) for m in types) // 8
        if not isinstance(values, ast.VectorOperand) or not size:
            raise self.unsupported(st, f"`{st.opcode}{''.join(st.modifiers)}` of a struct parameter")
        out = []
        for k, value in enumerate(values.elements):
            if isinstance(value, ast.Name) and value.name == "_":
                continue
            at = dataclasses.replace(addr, offset=addr.offset + k * size)
            one = dataclasses.replace(st, modifiers=tuple(m for m in st.modifiers if m != vector),
                                      operands=[value, at] if is_load else [at, value])
            moved = self.param_move(one, params, regs)
            out.extend(moved if isinstance(moved, list) else [moved])
        return out

    def field_move(self, st: ast.Instruction, addr: ast.Address, is_load: bool,
                   regs: dict[str, str]) -> ast.Instruction:
        """`ld.param.f32 d, [s+4]` → `mov.f32 d, s$f4`: a struct parameter is a register per
        field (offset), all declared at the top of the kernel."""
        types = [m for m in st.modifiers if m != ".param"]
        bits = sum(TYPE_BITS.get(m, 0) for m in types)
        if len(types) != 1 or bits < 8 or len(addr.elements) != 1:
            raise self.unsupported(st, f"`{st.opcode}{''.join(st.modifiers)}` of a struct parameter")
        name = f"{addr.base.name}$f{addr.offset}"
        if self.fields.setdefault(name, bits) != bits:
            raise self.unsupported(st, f"struct parameter field `{_source_name(addr.base.name)}+{addr.offset}` "
                                       f"accessed at two widths")
        reg = ast.Name(line=addr.line, column=addr.column, name=name)
        operands = [st.operands[0], reg] if is_load else [reg, st.operands[1]]
        opcode = "mov"
        if bits == 8:
            # a byte field lives in a 16-bit register (as 8-bit values do); a store keeps the
            # value's low 16 bits there, a load extends the low byte as its type says
            if not is_load:
                types = [".b16"]
            else:
                dest = st.operands[0]
                width = TYPE_BITS.get(regs.get(dest.name) or regs.get(dest.name.rstrip("0123456789")) or "", 16) \
                    if isinstance(dest, ast.Name) else 16
                kind = "s" if types[0] == ".s8" else "u"
                opcode, types = "cvt", [f".{kind}{max(16, width)}", f".{kind}8"]
        return ast.Instruction(line=st.line, column=st.column, opcode=opcode, modifiers=tuple(types),
                               operands=operands, guard=st.guard)

    # ------------------------------------------------------------------ packed structs
    def pack(self, decl: ast.VariableDecl, d: ast.Declarator) -> list[str]:
        """Make the array `d` of `decl` packed; its word registers' names."""
        size = (d.dims[0] if len(d.dims) == 1 and d.dims[0] else 0) * TYPE_BITS.get(decl.type, 0) // 8
        if not size:
            raise self.unsupported(decl, f"struct parameter `{_source_name(d.name)}` of this shape in an "
                                         f"out-of-line call")
        self.packed[d.name] = size
        return [f"{d.name}$w{i}" for i in range((size + 3) // 4)]

    def temp(self, ty: str) -> ast.Name:
        name = f"$pk{len(self.temps)}"
        self.temps[name] = ty
        return ast.Name(line=0, column=0, name=name)

    def word_move(self, st: ast.Instruction, addr: ast.Address, is_load: bool, regs: dict[str, str]) -> list:
        """`ld.param`/`st.param` of a packed struct at [x+o]: a whole word or pair of words
        is a `mov`; a byte or half-word is a bit field of its word (`bfe` / `bfi`)."""
        types = [m for m in st.modifiers if m != ".param"]
        bits = sum(TYPE_BITS.get(m, 0) for m in types)
        o = addr.offset
        name = addr.base.name
        if (len(types) != 1 or bits not in (8, 16, 32, 64) or o % (bits // 8) or len(addr.elements) != 1
                or o + bits // 8 > self.packed[name]):
            raise self.unsupported(st, f"`{st.opcode}{''.join(st.modifiers)}` of a struct parameter")
        line, col = st.line, st.column

        def word(i):
            self.temps.setdefault(f"{name}$w{i}", ".b32")
            return ast.Name(line=line, column=col, name=f"{name}$w{i}")

        def ins(opcode, mods, operands):
            return ast.Instruction(line=line, column=col, opcode=opcode, modifiers=tuple(mods),
                                   operands=operands, guard=st.guard)
        value = st.operands[0] if is_load else st.operands[1]
        w = o // 4
        if bits == 32:
            return [ins("mov", types, [value, word(w)] if is_load else [word(w), value])]
        if bits == 64:
            pair = ast.VectorOperand(line=line, column=col, elements=[word(w), word(w + 1)])
            if is_load:
                return [ins("mov", [".b64"], [value, pair])]
            if not isinstance(value, ast.Name):
                t = self.temp(".b64")
                return [ins("mov", types, [t, value]), ins("mov", [".b64"], [pair, t])]
            return [ins("mov", [".b64"], [pair, value])]
        at = ast.IntLit(line=line, column=col, value=8 * (o % 4), text=str(8 * (o % 4)))
        n = ast.IntLit(line=line, column=col, value=bits, text=str(bits))
        reg_type = regs.get(value.name) or regs.get(value.name.rstrip("0123456789")) \
            if isinstance(value, ast.Name) else None
        narrow = TYPE_BITS.get(reg_type or "", 32) == 16
        if is_load:
            signed = types[0].startswith(".s")
            if not narrow:
                return [ins("bfe", [".s32" if signed else ".u32"], [value, word(w), at, n])]
            t = self.temp(".b32")
            return [ins("bfe", [".s32" if signed else ".u32"], [t, word(w), at, n]),
                    ins("cvt", [".u16", ".u32"], [value, t])]
        out = []
        if narrow:
            t = self.temp(".b32")
            out.append(ins("cvt", [".u32", ".u16"], [t, value]))
            value = t
        return out + [ins("bfi", [".b32"], [word(w), value, word(w), at, n])]

    def kept_call_operands(self, block: ast.Block):
        """Names passed to (or returned from) calls that stay calls in `block`."""
        for st in block.statements:
            if isinstance(st, ast.Block):
                yield from self.kept_call_operands(st)
            elif isinstance(st, ast.Instruction) and st.opcode == "call":
                ops = st.operands
                names = [o for o in ops if isinstance(o, ast.Name)]
                if names and (names[0].name in self.recursive or names[0].name in self.linkable
                              or names[0].name in self.externs
                              or (names[0].name not in self.globals and len(names) == 2)):    # (through a pointer)
                    for o in ops:
                        if isinstance(o, ast.ParenList):
                            yield from (e.name for e in o.elements if isinstance(e, ast.Name))

    def flat_layout(self, fn: ast.Function) -> list:
        """Per parameter then per result of an out-of-line function: None for a scalar, or
        (padded, words) for a struct: its words start at an even register when it is
        8-aligned (the rule of ptx2sass.abi.register_layout, followed here); never padded
        in the link-time convention (link targets, bodiless declarations), where
        ptx2sass.abi.link_layout places each struct's words as a unit."""
        out = []
        link = fn.name in self.linkable or fn.body is None
        for group in (fn.params, fn.return_params):
            at = 4
            for decl in group:
                for d in decl.declarators:
                    if not _is_array(decl):
                        width = max(1, TYPE_BITS.get(decl.type or "", 32) // 32)
                        at = (at + width - 1) // width * width + width
                        out.append(None)
                        continue
                    size = (d.dims[0] or 0) * TYPE_BITS.get(decl.type, 0) // 8
                    pad = (decl.align or 1) >= 8 and at % 2 == 1 and not link
                    words = (size + 3) // 4
                    at += pad + words
                    out.append((pad, words))
        return out

    def pointer_layout(self, rets: list, args: list):
        """The word layout of a call through a pointer (`flat_layout`): an address-taken
        function's whose parameters and results are structs exactly where the call passes
        `.param` arrays (every function it may reach is compiled so, as its prototype says)."""
        arrays = [isinstance(a, ast.Name) and a.name in self.arrays for a in list(args) + list(rets)]
        if not any(arrays):
            return None
        for fn in self.module.functions():
            if fn.name in self.layouts and fn.name in self.out_of_line and fn.body is not None:
                layout = self.layouts[fn.name]
                shapes = [d for decl in fn.params for d in decl.declarators]
                shapes += [d for decl in fn.return_params for d in decl.declarators]
                if len(layout) == len(arrays) and [s is not None for s in layout[:len(args)] + layout[len(args):]] \
                        == arrays and len(shapes) == len(arrays):
                    return layout
        return None

    def flatten(self, st, name: str | None, rets: list, args: list) -> tuple[list, list]:
        """A kept call's results and arguments with packed structs as their words."""
        layout = self.layouts.get(name) if name is not None else self.pointer_layout(rets, args)
        if layout is None or len(layout) != len(args) + len(rets):
            return rets, args

        def expand(ops, shapes):
            out = []
            for a, shape in zip(ops, shapes):
                if shape is None:
                    if isinstance(a, ast.Name) and a.name in self.arrays:
                        raise self.unsupported(st, f"a .param array passed for a scalar parameter of "
                                                   f"`{_source_name(name)}`")
                    out.append(a)
                    continue
                if not isinstance(a, ast.Name) or a.name not in self.packed:
                    raise self.unsupported(st, f"struct parameter of `{_source_name(name)}` passed something "
                                               f"other than a .param array")
                pad, words = shape
                if pad:
                    self.temps.setdefault("$pad", ".b32")
                    out.append(ast.Name(line=st.line, column=st.column, name="$pad"))
                for i in range(words):
                    self.temps.setdefault(f"{a.name}$w{i}", ".b32")
                    out.append(ast.Name(line=st.line, column=st.column, name=f"{a.name}$w{i}"))
            return out
        return expand(rets, layout[len(args):]), expand(args, layout[:len(args)])

    # ------------------------------------------------------------------ one call
    def inline_call(self, st: ast.Instruction, stack: tuple[str, ...]) -> list:
        ops = list(st.operands)
        rets = ops.pop(0).elements if ops and isinstance(ops[0], ast.ParenList) else []
        target = ops.pop(0) if ops else None
        args = ops.pop(0).elements if ops and isinstance(ops[0], ast.ParenList) else []
        if isinstance(target, ast.Name) and target.name not in self.globals and len(ops) == 1 \
                and isinstance(ops[0], ast.Name):
            return self.keep_call(st, None, rets, args)     # through a register, with a prototype
        if ops or not isinstance(target, ast.Name):
            raise self.unsupported(st, "indirect `call` (through a function pointer or prototype)")
        callee = self.bodies.get(target.name)
        if callee is None and target.name in self.externs:
            return self.keep_call(st, target.name, rets, args)     # resolved by the loader
        if callee is None:
            raise self.unsupported(st, f"`call` of `{target.name}`, which has no body here")
        if target.name in self.recursive or target.name in self.linkable:
            return self.keep_call(st, target.name, rets, args)
        if target.name in stack:
            raise self.unsupported(st, f"recursive `call` of `{target.name}`")
        if len(stack) >= MAX_DEPTH:
            raise self.unsupported(st, f"`call` of `{target.name}` nested deeper than {MAX_DEPTH} inlined calls")
        self.count += 1
        prefix = f"$inl{self.count}$"
        formal_decls = [None if _is_array(d) else self.param_as_reg(d) for d in callee.params + callee.return_params]
        formals = [d.name for decl in callee.params for d in decl.declarators]
        results = [d.name for decl in callee.return_params for d in decl.declarators]
        if len(formals) != len(args) or len(results) != len(rets):
            raise self.unsupported(st, f"`call` of `{target.name}` with a different parameter count")
        end = prefix + "$end"
        # A struct (array) parameter is the caller's own: the callee's name aliases it.
        array_formals = {d.name for decl in callee.params + callee.return_params if _is_array(decl)
                         for d in decl.declarators}
        alias = {}
        for f, a in zip(formals + results, list(args) + list(rets)):
            if f in array_formals:
                if not isinstance(a, ast.Name) or a.name not in self.arrays:
                    raise self.unsupported(st, f"struct parameter `{f}` passed something other than a .param array")
                alias[f] = a.name
        for f, a in zip(formals + results, list(args) + list(rets)):
            if f not in alias and isinstance(a, ast.Name) and a.name in self.arrays:
                raise self.unsupported(st, f"a .param array passed for the scalar parameter `{f}`")
        formal_decls = [d for d in formal_decls if d is not None]
        renamer = _Renamer(prefix, self.globals)
        renamer.alias.update(alias)
        renamed = renamer.visit(copy.deepcopy(
            ast.Block(line=st.line, column=st.column, statements=formal_decls + callee.body.statements)))
        widths = {prefix + d.name: TYPE_BITS.get(decl.type, 0) for decl in formal_decls for d in decl.declarators}
        body = self.body(renamed, widths, stack + (target.name,))
        types = {d.name: tuple(m for m in (decl.vector, decl.type) if m)
                 for decl in formal_decls for d in decl.declarators}
        moves_in = [self.mov(st, types[f], ast.Name(line=st.line, column=st.column, name=prefix + f), a)
                    for f, a in zip(formals, args) if f not in alias]
        moves_out = [self.mov(st, types[r], d, ast.Name(line=st.line, column=st.column, name=prefix + r))
                     for r, d in zip(results, rets) if r not in alias]
        stmts = body.statements
        decl_count = len(formal_decls)
        # A callee's alloca memory ends with its call (ptxas restores the stack pointer on
        # return): save the dynamic stack pointer around the inlined body.
        save, restore = [], []
        if _uses_alloca(callee.body):
            sp = self.temp(".u32")
            save = [ast.Instruction(line=st.line, column=st.column, opcode="stacksave",
                                    modifiers=(".u32",), operands=[sp])]
            restore = [ast.Instruction(line=st.line, column=st.column, opcode="stackrestore",
                                       modifiers=(".u32",), operands=[sp])]
        # what is left of the call: ptxas writes a kernel's CRS_STACK_SIZE where one survives
        # its dead-code removal (ptx2sass/opt/inline_marks.py)
        mark = [ast.Instruction(line=st.line, column=st.column, opcode=INLINED_CALL, modifiers=(), operands=[])]
        body.statements = (stmts[:decl_count] + mark + save + moves_in
                           + [self.ret_to_branch(s, end) for s in stmts[decl_count:]]
                           + [ast.Label(line=st.line, column=st.column, name=end)] + restore
                           + moves_out)
        if st.guard is not None:     # `@p call`: branch around the whole inlined body
            skip = prefix + "$skip"
            guard = dataclasses.replace(st.guard, negated=not st.guard.negated)
            body.statements = ([ast.Instruction(line=st.line, column=st.column, opcode="bra",
                                                modifiers=(), operands=[_name(st, skip)], guard=guard)]
                               + body.statements + [ast.Label(line=st.line, column=st.column, name=skip)])
        return [body]

    def keep_call(self, st: ast.Instruction, name: str | None, rets: list, args: list) -> list:
        """A call of an out-of-line function (`name`; None: through a function pointer): its
        `.param` arguments are registers by now; a guarded call becomes a branch around an
        unguarded one."""
        new_rets, new_args = self.flatten(st, name, rets, args)
        for a in list(new_args) + list(new_rets):
            if isinstance(a, ast.Name) and a.name in self.arrays:
                raise self.unsupported(st, f"struct (.param array) argument of the out-of-line "
                                           f"function `{_source_name(name or 'called indirectly')}`")
        if (new_rets, new_args) != (rets, args):
            ops = [ast.ParenList(line=st.line, column=st.column, elements=new_rets)] if rets else []
            ops += [o for o in st.operands if not isinstance(o, ast.ParenList)]
            ops.append(ast.ParenList(line=st.line, column=st.column, elements=new_args))
            st = dataclasses.replace(st, operands=ops)
        if st.guard is None:
            return [st]
        self.count += 1
        skip = f"$call{self.count}$skip"
        guard = dataclasses.replace(st.guard, negated=not st.guard.negated)
        return [ast.Instruction(line=st.line, column=st.column, opcode="bra", modifiers=(),
                                operands=[_name(st, skip)], guard=guard),
                dataclasses.replace(st, guard=None),
                ast.Label(line=st.line, column=st.column, name=skip)]

    def start_function(self) -> None:
        """The per-function names start empty: a struct's name (nvcc names every function's
        result `func_retval0`: a struct in one, a scalar in the next) ends with its function."""
        self.fields, self.temps = {}, {}
        self.arrays, self.packed = set(), {}

    def out_of_line_function(self, item: ast.Function) -> ast.Function:
        """An out-of-line function with `.reg` parameters and its body rewritten."""
        self.start_function()
        shapes = iter(self.layouts[item.name])
        groups = []
        for group in (item.params, item.return_params):
            out = []
            for decl in group:
                if not _is_array(decl):
                    out.append(self.param_as_reg(decl))
                    next(shapes)
                    continue
                for d in decl.declarators:         # a struct: a register per word
                    pad, _ = next(shapes)
                    names = ([f"{d.name}$pad"] if pad else []) + self.pack(decl, d)
                    out.append(ast.VariableDecl(line=decl.line, column=decl.column, space=".reg", type=".b32",
                                                declarators=[ast.Declarator(line=d.line, column=d.column, name=n)
                                                             for n in names]))
            groups.append(out)
        decls = groups[0] + groups[1]
        widths = {d.name: TYPE_BITS.get(decl.type, 0) for decl in decls for d in decl.declarators}
        body = self.body(item.body, widths, (item.name,))
        body = self.declare_extras(body, {d.name for decl in decls for d in decl.declarators})
        return dataclasses.replace(item, params=groups[0], return_params=groups[1], body=body)

    def declare_extras(self, body: ast.Block, params: set[str]) -> ast.Block:
        """The registers of struct fields and packed words, declared at the top."""
        regs = dict((name, f".b{max(16, bits)}") for name, bits in self.fields.items())
        regs.update((n, t) for n, t in self.temps.items() if n not in params)
        decls = [ast.VariableDecl(line=body.line, column=body.column, space=".reg", type=ty,
                                  declarators=[ast.Declarator(line=body.line, column=body.column, name=name)])
                 for name, ty in regs.items()]
        return dataclasses.replace(body, statements=decls + body.statements)

    def mov(self, st, types: tuple[str, ...], dst, src) -> ast.Instruction:
        return ast.Instruction(line=st.line, column=st.column, opcode="mov", modifiers=types,
                               operands=[dst, src])

    def ret_to_branch(self, st, end: str):
        if isinstance(st, ast.Block):
            return dataclasses.replace(st, statements=[self.ret_to_branch(s, end) for s in st.statements])
        if isinstance(st, ast.Instruction) and st.opcode == "ret":
            return ast.Instruction(line=st.line, column=st.column, opcode="bra", modifiers=(),
                                   operands=[ast.Name(line=st.line, column=st.column, name=end)],
                                   guard=st.guard)
        return st

    def run(self) -> ast.Module:
        items = []
        for item in self.module.items:
            if isinstance(item, ast.Function):
                if item.kind == ".func" and item.name in self.out_of_line and item.body is not None:
                    items.append(self.out_of_line_function(item))
                    continue
                if item.kind == ".func" and item.name in self.externs:
                    items.append(item)        # no body anywhere: its calls stay calls
                    continue
                if item.kind == ".func":
                    continue          # inlined everywhere it is called
                if item.body is not None:
                    self.start_function()
                    body = self.body(item.body, {}, (item.name,))
                    item = dataclasses.replace(item, body=self.declare_extras(body, set()))
            items.append(item)
        return dataclasses.replace(self.module, items=items)


class _Renamer:
    """Prefix every name declared inside a callee (registers, labels, its parameters);
    module-level names and special registers keep theirs."""

    def __init__(self, prefix: str, keep: set[str]):
        self.prefix = prefix
        self.keep = keep
        self.seen: set[int] = set()     # an Address shares its base Name with its elements
        self.alias: dict[str, str] = {}  # callee name → caller name (struct parameters)

    def new(self, name: str) -> str:
        if name in self.alias:
            return self.alias[name]
        if name in self.keep or name in SPECIAL_REGISTERS or name == "WARP_SZ":
            return name
        return self.prefix + name

    def visit(self, node):
        if isinstance(node, list):
            return [self.visit(x) for x in node]
        if not dataclasses.is_dataclass(node) or id(node) in self.seen:
            return node
        self.seen.add(id(node))
        if isinstance(node, ast.BranchTargets):
            # a jump table's label and its targets are the callee's labels: renamed with them
            node.label = self.new(node.label)
            node.targets = [self.new(t) for t in node.targets]
            return node
        if isinstance(node, (ast.CallTargets, ast.CallPrototype)):
            raise CompileError("call tables inside an inlined .func not supported yet",
                               None, node.line)
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if f.name == "name" and isinstance(node, (ast.Name, ast.Declarator, ast.Label)):
                setattr(node, f.name, self.new(value))
            elif isinstance(value, (list, tuple)) and value and not isinstance(value[0], str):
                setattr(node, f.name, type(value)(self.visit(list(value))))
            elif dataclasses.is_dataclass(value):
                setattr(node, f.name, self.visit(value))
        return node


def _uses_alloca(block: ast.Block) -> bool:
    return any(_uses_alloca(st) if isinstance(st, ast.Block)
               else isinstance(st, ast.Instruction) and st.opcode == "alloca"
               for st in block.statements)


def _plain_param_space(modifiers: tuple[str, ...]) -> tuple[str, ...]:
    """`ld/st.param::func` (a function's own parameters, the PTX 8.x spelling) is `.param`
    inside a function and at a call site, so the rewriting treats it alike."""
    return tuple(".param" if m == ".param::func" else m for m in modifiers)


def _is_array(decl: ast.VariableDecl) -> bool:
    return any(d.dims for d in decl.declarators)


def _name(node, name: str) -> ast.Name:
    return ast.Name(line=node.line, column=node.column, name=name)


def _call_targets(block: ast.Block):
    Instruction, Block = ast.Instruction, ast.Block
    for st in block.statements:
        t = type(st)
        if t is Instruction:
            if st.opcode != "call":
                continue
            ops = [o for o in st.operands if not isinstance(o, ast.ParenList)]
            if ops and isinstance(ops[0], ast.Name):
                yield ops[0].name
        elif t is Block:
            yield from _call_targets(st)


def opcodes_in(block: ast.Block) -> set[str]:
    """The opcodes of a body's instructions, nested blocks included."""
    out, work = set(), [block]
    while work:
        for st in work.pop().statements:
            if type(st) is ast.Instruction:
                out.add(st.opcode)
            elif type(st) is ast.Block:
                work.append(st)
    return out


def call_graph(module: ast.Module) -> dict[str, list[str]]:
    """Every function with a body → the functions it calls by name, each once, in the order
    of their first call."""
    from ptx2sass.frontend.depth import deep_walks
    with deep_walks():
        return {f.name: list(dict.fromkeys(_call_targets(f.body))) for f in module.functions()
                if f.body is not None}


def call_postorder(names: list[str], graph: dict[str, list[str]],
                   within: set[str] | None = None) -> list[str]:
    """A depth-first postorder of the calls from `names` (callees before their callers), as
    ptxas 13.5.37 orders functions under -c: from the last-named root back, each function's
    callees from the last-called one back; `graph`: name -> names called, in order; only
    callees in `within` (default: `names`) are followed."""
    within = set(names) if within is None else within
    done: list[str] = []
    seen: set[str] = set()
    for root in reversed(names):
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(reversed(graph[root])))]
        while stack:
            name, callees = stack[-1]
            callee = next((c for c in callees if c in within and c not in seen), None)
            if callee is None:
                stack.pop()
                done.append(name)
            else:
                seen.add(callee)
                stack.append((callee, iter(reversed(graph[callee]))))
    return done


def call_preorder(roots: list[str], graph: dict[str, list[str]], within: set[str]) -> list[str]:
    """Each root, then depth first what it calls (in call order, each function once)."""
    done: list[str] = []
    seen: set[str] = set()
    for root in roots:
        stack = [root]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            done.append(name)
            stack.extend(c for c in reversed(graph.get(name, ())) if c in within and c not in seen)
    return done


def recursive_functions(module: ast.Module) -> set[str]:
    """Names of the `.func`s that can reach themselves through direct calls: they cannot be
    inlined and are compiled out of line."""
    funcs = {f.name for f in module.functions() if f.kind == ".func"}
    graph = {name: callees for name, callees in call_graph(module).items() if name in funcs}
    out = set()
    for start in graph:
        seen, work = set(), list(graph[start])
        while work:
            n = work.pop()
            if n == start:
                out.add(start)
                break
            if n in seen or n not in graph:
                continue
            seen.add(n)
            work.extend(graph[n])
    return out


def address_taken_functions(module: ast.Module) -> set[str]:
    """Names of the `.func`s whose address the module takes (`mov.u64 %rd, f`, a variable
    initialised with `{f, g}`): they can be called through a pointer, so they stay out of
    line."""
    funcs = {f.name for f in module.functions() if f.kind == ".func" and f.body is not None}
    out = set()

    def scan(block: ast.Block):
        for st in block.statements:
            if isinstance(st, ast.Block):
                scan(st)
            elif isinstance(st, ast.VariableDecl):
                out.update(n for n in ast.names(st.declarators) if n in funcs)
            elif isinstance(st, ast.Instruction):
                ops = st.operands
                if st.opcode == "call":
                    ops = [o for o in ops if isinstance(o, ast.ParenList)]    # not the target
                out.update(n for n in ast.names(ops) if n in funcs)
    for item in module.items:
        if isinstance(item, ast.VariableDecl):
            out.update(n for n in ast.names(item.declarators) if n in funcs)
        elif isinstance(item, ast.Function) and item.body is not None:
            scan(item.body)
    return out


def returns_struct(function: ast.Function) -> bool:
    """A `.param` array (a struct) among the function's return parameters."""
    return any(_is_array(decl) for decl in function.return_params)


def linkable_functions(module: ast.Module) -> set[str]:
    """`.visible` and `.weak` `.func`s with a body: what separate compilation makes link
    targets (ptxas 13.5.37 -c keeps a `.weak` one out of line, its symbol WEAK)."""
    return {f.name for f in module.functions()
            if f.kind == ".func" and f.body is not None and (".visible" in f.linkage or ".weak" in f.linkage)}


def unreferenced_local_functions(module: ast.Module) -> set[str]:
    """Local `.func`s (no `.visible`/`.weak`/`.extern`) with a body that nothing names: no
    call, no address taken, in no initialiser. ptxas 13.5.37 -c keeps each as a LOCAL
    function of its own (whole-program builds drop them)."""
    from ptx2sass.frontend.depth import deep_walks
    candidates = {f.name for f in module.functions() if f.kind == ".func" and f.body is not None
                  and not {".visible", ".weak", ".extern"} & set(f.linkage)}
    if not candidates:
        return set()
    with deep_walks():
        named = set()
        for item in module.items:
            body = item.body if isinstance(item, ast.Function) else item
            if body is not None:
                named.update(ast.names(body))
    return candidates - named


def inline_calls(module: ast.Module, linkable: bool | set[str] = False) -> ast.Module:
    """The module with every `.func` inlined into its callers and the `.func`s removed
    (`linkable`: but for the link targets of separate compilation, `linkable_functions`;
    or a set of names: those functions, -g's out-of-line ones)."""
    from ptx2sass.frontend.depth import deep_walks
    with deep_walks():
        return _Inliner(module, linkable).run()
