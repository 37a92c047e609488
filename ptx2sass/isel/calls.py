"""Control instructions beyond plain branches: `trap`, `brx.idx`, calls of out-of-line
functions and their returns (`nanosleep` is selected in isel/memory.py; most `.func` calls
are inlined before SSA, see ptx2sass/inline.py).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
What ptxas emits for sm_8x (seen with the pinned ptxas + nvdisasm):
* `trap` and `brkpt` → `BPT.TRAP 0x1`; a guarded `@p trap` is branched around by ptxas, here it is
  the guarded instruction itself (same effect: only the lanes with `p` trap);
* `brx.idx i, table` → the table of target offsets in `.nv.constant2.<kernel>`, then
  `IMAD.SHL.U32 t, i, 0x4, RZ; LDC r, c[0x2][t+base]; SHF.R.S32.HI r+1, RZ, 0x1f, r;
  BRX r -(pc of the next instruction)` (the offsets are absolute in .text); a switch on a
  lane-varying index gets BSSY/BSYNC around it like any divergent branch
  (ptx2sass/reconverge.py). The table and the BRX immediate are filled after layout (codegen).
* `call (r), f, (a)` of an out-of-line function (ptx2sass.abi): the arguments copied into
  precoloured registers R4.., the return address into R2:R3 (`MOV R2, <label>` filled after
  layout; `MOV R3, RZ`), then `CALL.REL.NOINC` naming the arguments and results as hidden
  operands (liveness and scheduling see them, the encoding does not) and clobbering the
  predicates; the call ends its block, so the code after it (the return address) starts one.
* in the out-of-line function: its arguments and return address arrive in precoloured
  registers defined at the top of the entry block and are copied out at once; every `ret`
  copies the results into R4.. and the return address back into R2:R3 before
  `RET.REL.NODEC R2`. The frame, saves and restores are added once registers are known
  (codegen).
* a call by the link-time convention (another module's function, our link targets, -g):
  arguments where ptx2sass.abi.link_layout puts them, R4..R15 first-fit, the rest stored
  with `STL [R1+off]` into the outgoing area at the bottom of the caller's frame
  (`store_outgoing`); a link target loads its stack arguments above its own frame
  (`begin_function`, offsets completed by codegen once the frame is known);
* `call (r), %fp, (a), proto` through a function pointer: `LDC.64 Rt, c[0x2][Rfp]` reads the
  code offset from the kernel's pointer table (ptx2sass.abi), then `CALL.REL.NOINC Rt
  `(kernel)`; argument and result registers follow the values' own types.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import abi, ir
from ptx2sass.encoder.model import ConstRef, Imm, Label, Reg, Reloc
from ptx2sass.isel.common import RZ
from ptx2sass.isel.memory import SP
from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MInstr, VMem, VOp

TRAP_CODE = 0x1      # the immediate ptxas gives BPT.TRAP for PTX `trap`
PT_NOT = Reg("P", 7, inv=True)
DESCRIPTOR_UR = 4    # the global-memory descriptor's uniform pair (codegen's prologue sets it)


class CallSelection:
    def sel_trap(self, ins):
        self.emit("BPT", ("TRAP",), [Imm(TRAP_CODE)], ndefs=0)

    # `brkpt`: ptxas 13.5 writes the same BPT.TRAP 0x1 as for `trap` (sm_75..sm_90)
    sel_brkpt = sel_trap

    def select_brx(self, term, mb) -> None:
        """The terminator `brx.idx index, table` of block `mb` (its successors: the table)."""
        if term.guard is not None:
            raise self.unsupported("guarded `brx.idx`")
        index, targets = term.srcs[0], [t.name for t in term.srcs[1:]]
        if not targets or any(not isinstance(t, ir.Symbol) for t in term.srcs[1:]):
            raise self.unsupported("`brx.idx` without a .branchtargets list")
        if isinstance(index, ir.Const):          # a known entry: a plain branch
            self.out.append(MInstr("BRA", (), [Label(targets[index.value % len(targets)])], 0, None, term.line))
            return
        base = self.fn.attributes.get(abi.JUMP_TABLE_BASE, 0) + 4 * sum(len(t) for t in self.mf.jump_tables)
        offset = VOp(self.mf.new_vreg())
        self.emit("IMAD", ("SHL", "U32"), [offset, self.reg_part(index, 0), Imm(4), RZ], guarded=False)
        entry = ConstRef(2, base, ureg=offset)
        if self.fn.attributes.get(abi.JUMP_TABLE_RELOCATED):     # -c: the linker places the tables
            biased = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [biased, offset, Imm(abi.JUMP_TABLE_BIAS), RZ], guarded=False)
            table = abi.jump_table_object(self.fn.name, base, base + 4 * len(targets))
            entry = ConstRef(0, 0, ureg=biased, reloc=(table, -abi.JUMP_TABLE_BIAS, abi.JUMP_TABLE_RELOCATION))
        target = self.mf.new_vreg("R", 2)
        self.emit(IMPLICIT_DEF, (), [VOp(target)], guarded=False)
        self.emit("LDC", (), [VOp(target, 0), entry], guarded=False)
        self.emit("SHF", ("R", "S32", "HI"), [VOp(target, 1), RZ, Imm(0x1F), VOp(target, 0)], guarded=False)
        brx = self.emit("BRX", (), [VOp(target), Imm(0)], ndefs=0, guarded=False)
        # a switch on a lane-varying index needs BSSY/BSYNC around it (ptx2sass/reconverge.py)
        brx.uniform = isinstance(index, ir.Value) and index.id not in self.divergent
        self.mf.jump_tables.append(targets)

    # ------------------------------------------------------------------ calls
    def sel_call(self, ins):
        if ins.guard is not None or ins.attrs.get("returns"):
            raise self.unsupported("guarded `call` or `.param` results of an out-of-line function")
        target = ins.srcs[0] if ins.srcs else None
        if isinstance(target, ir.Value) and self.pointers and None in self.pointers.values():
            return self.sel_extern_call(ins, None, target)      # -g: to a function of its own section
        if isinstance(target, ir.Value):          # through a function pointer
            args = [a for a in ins.srcs[1:] if not isinstance(a, ir.Symbol)]    # less the prototype
            if any(not isinstance(a, (ir.Value, ir.Const)) for a in args):
                raise self.unsupported("this argument of an indirect `call`")
            arg_types = [a.type for a in args]
            result_types = [d.type for d in ins.dests]
            returns = None
            what = "function called through a pointer"
            code = VOp(self.mf.new_vreg("R", 2))
            self.emit("LDC", ("64",), [code, ConstRef(2, 0, ureg=self.reg_part(target, 0))], guarded=False)
            how = [code, Label(abi.ENTRY_LABEL)]
            name = abi.INDIRECT
        elif isinstance(target, ir.Symbol) and target.name in self.callees and not self.callees[target.name].blocks:
            if isinstance(getattr(self.placements.get(target.name), "value", None), str):
                return self.sel_extern_call(ins, self.callees[target.name])     # relocatable output
            return self.sel_system_call(ins, self.callees[target.name])
        elif isinstance(target, ir.Symbol) and target.name in self.callees \
                and abi.is_linkable(self.callees[target.name]):
            return self.sel_extern_call(ins, self.callees[target.name])     # our own link target
        elif isinstance(target, ir.Symbol) and target.name in self.callees:
            callee = self.callees[target.name]
            args, arg_types = self.packed(ins.srcs[1:], callee.params)
            result_types = abi.slot_types(callee.returns)
            returns = callee.returns
            what = callee.name
            how = [Label(abi.label_of(callee.name))]
            name = callee.name
        else:
            raise self.unsupported("indirect `call` (through a function pointer or prototype)")
        uses, res_layout = self.call_arguments(ins, args, arg_types, result_types, what,
                                               results=len(returns) if returns is not None else None)
        ra = self.mf.fixed_vreg("R", abi.RETURN_ADDRESS, 2)
        self.emit(IMPLICIT_DEF, (), [VOp(ra)], guarded=False)
        low = self.emit("MOV", (), [VOp(ra, 0), Imm(0)], guarded=False)
        self.emit("MOV", (), [VOp(ra, 1), RZ], guarded=False)
        defs = [VOp(self.mf.fixed_vreg("R", reg, width)) for reg, width in res_layout]
        n = len(defs)
        self.out.append(MInstr("CALL", ("REL", "NOINC"), [*defs, *how, *uses, VOp(ra)], n, None,
                               self.line, clobbers=abi.CLOBBERED_PREDICATES,
                               shown=tuple(range(n, n + len(how)))))
        if name not in self.mf.calls:
            self.mf.calls.append(name)
        back = self.start_block("ret")
        low.operands[1] = Label(back.name)
        self.call_results(ins, defs, returns)

    def extern_call_arguments(self, ins, callee, stack: bool = True):
        """The arguments of a call by the link-time convention (system calls and other
        modules' functions) in their places (ptx2sass.abi.link_layout: R4..R15, the rest
        stored into the outgoing area unless not `stack`), and the results' (register,
        width) layout; what the convention cannot pass is refused."""
        what = callee.name
        structs = callee.attributes.get(abi.STRUCTS)
        units = abi.link_units(callee.params, structs)
        res_units = abi.link_units(callee.returns, structs)
        if not any(isinstance(u, abi.Struct) for u in units + res_units):
            args, _ = self.packed(ins.srcs[1:], callee.params)
            results = len(callee.returns)
        elif any(len(g) > 1 for g in abi.packed_groups(callee.params) + abi.packed_groups(callee.returns)):
            raise self.unsupported(f"struct and packed vector parameters of the extern function `{what}` together")
        else:       # ptx2sass.inline passes a struct as its words
            args, results = list(ins.srcs[1:]), len(abi.word_types(res_units))
        return self.call_arguments(ins, args, units, res_units, what,
                                   link=True, stack=stack, results=results)

    def call_arguments(self, ins, args, arg_types, result_types, what, link=False, stack=True, results=None):
        """The places of a call's arguments and results (`link`: by the link-time convention,
        ptx2sass.abi.link_layout, else the whole-program one), the arguments moved into
        their fixed registers or stored into the outgoing area (refused where not `stack`);
        the uses for the CALL and the results' (register, width) layout. `results`: how many
        results the callee has (packed vector elements share a register), None: one each."""
        self.result_memory = None
        if link:
            link_units = arg_types
            places, area, buffer = abi.link_stack(arg_types, result_types, what)
            places, arg_types = abi.word_places(arg_types, places), abi.word_types(arg_types)
            res_layout = abi.link_registers(result_types, "result", what) if buffer is None else []
            # (a system call's result through memory too: ptxas 13.5.37, `malloc` declared
            # with a 52-byte result: R4 = R1, the argument in R6:R7, frame 0x38)
            if buffer is not None and self.placements.get(abi.OUTGOING_AREA) is None:
                raise self.unsupported(f"a result of `{what}` beyond R{abi.LINK_LAST_REGISTER} (through memory) here")
            if not stack and any(p.register is None for p in places):
                raise self.unsupported(f"arguments of `{what}` beyond R{abi.LINK_LAST_REGISTER} (on the stack)")
        else:
            places = [abi.Place(r, w) for r, w in abi.register_layout(arg_types, "argument", what)]
            res_layout = abi.register_layout(result_types, "result", what)
        if len(args) != len(places) or (
                not (link and buffer is not None) and len(ins.dests) != (len(res_layout) if results is None else results)):
            raise self.unsupported(f"`call` of `{what}` with a different parameter count")
        uses = []
        if link and buffer is not None:     # the buffer's local address in R4, in the outgoing area
            at = self.placements[abi.OUTGOING_AREA].value + buffer
            r = self.mf.fixed_vreg("R", abi.RESULT_BUFFER, 1)
            self.emit("IADD3", (), [VOp(r), SP, Imm(at), RZ], guarded=False)
            uses.append(VOp(r))
            self.result_memory = at
            self.result_align = self.vector_align(abi.link_area_align(link_units, result_types, what))
        stack = []
        for a, ty, place in zip(args, arg_types, places):
            if place.register is None:
                stack.append((a, ty, place))
                continue
            r = self.mf.fixed_vreg("R", place.register, place.width)
            self.copy_slot(VOp(r), a, ty)
            uses.append(VOp(r))
        if stack:
            self.store_outgoing(stack, what, self.vector_align(
                abi.link_area_align(link_units, result_types, what)) if link else 8)
        return uses, res_layout

    def vector_align(self, area_align: int) -> int:
        """The widest access (bytes) ptxas's rule (abi.vector_runs) allows at R1 + offset
        here: the area's alignment in a kernel, whose stack pointer starts 16-aligned; at
        most 8 in a function, whose caller's R1 we know only to be 8-aligned (not measured)."""
        return area_align if self.fn.is_entry else min(area_align, 8)

    def wide_local(self, op: str, base, offset: int, words: list, load: bool) -> None:
        """One STL/LDL of `words` (VOps, 1, 2 or 4 of them) at `base + offset`: through a
        vector register whose parts are copied in (stores) or out (loads)."""
        n = len(words)
        mods = {1: (), 2: ("64",), 4: ("128",)}[n]
        if n == 1:
            ops = [VMem(base, offset, wide=False), words[0]] if not load else [words[0], VMem(base, offset, wide=False)]
            self.emit(op, mods, ops if load else ops, ndefs=1 if load else 0, guarded=False)
            return
        t = self.mf.new_vreg("R", n)
        if load:
            self.emit(op, mods, [VOp(t), VMem(base, offset, wide=False)], guarded=False)
            for k, w in enumerate(words):
                self.emit(COPY, (), [w, VOp(t, k)], guarded=False)
            return
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        for k, w in enumerate(words):
            self.emit(COPY, (), [VOp(t, k), w], guarded=False)
        self.emit(op, mods, [VMem(base, offset, wide=False), VOp(t)], ndefs=0, guarded=False)

    def store_outgoing(self, stack, what: str, align: int) -> None:
        """Arguments past R15 ((value, type, place) each) stored at their offsets of the
        outgoing area, the bottom of this function's frame (variables.kernel_layout reserved
        it), their words merged into `STL.64`/`STL.128 [R1+off]` as ptxas merges them
        (abi.vector_runs; `align`: the widest access allowed)."""
        area = self.placements.get(abi.OUTGOING_AREA)
        if area is None:
            raise self.unsupported(f"arguments of `{what}` beyond R{abi.LINK_LAST_REGISTER} (on the stack) "
                                   f"in a call through a pointer")
        words, alone = {}, []
        for value, ty, place in stack:
            if place.width == 2:        # a 64-bit scalar: merged only with 64-bit ones
                alone.append(area.value + place.offset)
            t = self.mf.new_vreg("R", place.width)
            self.copy_slot(VOp(t), value, ty)
            for k in range(place.width):
                words[area.value + place.offset + 4 * k] = VOp(t, k if place.width > 1 else None)
        for offset, n in abi.vector_runs(list(words), align, tuple(alone)):
            self.wide_local("STL", SP, offset, [words[offset + 4 * k] for k in range(n)], load=False)

    def copy_slot(self, d: VOp, v, ty: str) -> None:
        """copy_into, or a COPY of a register `packed` made."""
        if isinstance(v, VOp):
            self.emit(COPY, (), [d, v], guarded=False)
        else:
            self.copy_into(d, v, ty)

    def packed(self, values, params) -> tuple[list, list[str]]:
        """`values` for `params` as the register values they travel in (abi.packed_groups),
        and their types: the elements of an 8/16-bit `.reg` vector joined with PRMT."""
        groups = abi.packed_groups(params)
        if len(groups) == len(params):
            return list(values), [p.type for p in params]
        out = []
        for group in groups:
            acc = values[group[0]] if len(group) == 1 else self.reg_part(values[group[0]])
            for k, i in enumerate(group[1:], 1):
                t = VOp(self.mf.new_vreg())
                self.emit("PRMT", (), [t, acc, Imm(abi.insert_selector(params[i].size, k)),
                                       self.reg_part(values[i])], guarded=False)
                acc = t
            out.append(acc)
        return out, abi.slot_types(params)

    def unpacked(self, dests, sources, params) -> None:
        """Each of `dests` (one per parameter) from the register value in `sources` that holds
        it (abi.packed_groups): a packed vector's elements taken out with PRMT."""
        groups = abi.packed_groups(params) if params is not None else [[i] for i in range(len(dests))]
        for group, src in zip(groups, sources):
            if len(group) == 1:
                self.emit(COPY, (), [dests[group[0]], src], guarded=False)
                continue
            for k, i in enumerate(group):
                sel = abi.element_selector(params[i].type, params[i].size, k)
                self.emit("PRMT", (), [dests[i], src, Imm(sel), RZ], guarded=False)

    def call_results(self, ins, defs, returns) -> None:
        """A call's results (of a function with `returns`, None: unknown) copied out of the
        registers they came back in."""
        self.unpacked([VOp(self.vreg(d)) for d in ins.dests], defs, returns)

    def extern_call_results(self, ins, defs, returns) -> None:
        """After such a call: the global-memory descriptor read again (the callee may have
        changed UR4:UR5), the results copied out of their fixed registers."""
        if self.arch.global_desc_offset is not None:      # dropped unless the code uses it
            self.out.append(MInstr("ULDC", ("64",), [Reg("UR", DESCRIPTOR_UR),
                                                     ConstRef(0, self.arch.global_desc_offset)],
                                   1, None, self.line))
        self.call_results(ins, defs, returns)

    def sel_system_call(self, ins, callee) -> None:
        """`call (r), vprintf, (a)` of a bodiless `.extern .func` (ptx2sass.abi): the
        address from its bank-4 slot, the arguments in R4.., the return address
        `LEPC` + (return point - LEPC) in R20:R21, `CALL.ABS.NOINC`, then the global-memory
        descriptor read again (the callee may have changed UR4:UR5)."""
        from ptx2sass.frontend.instructions import SYSTEM_FUNCTIONS
        if callee.name not in SYSTEM_FUNCTIONS:
            raise self.unsupported(f"`call` of the extern function `{callee.name}` (relocatable output)")
        what = callee.name
        uses, res_layout = self.extern_call_arguments(ins, callee, stack=False)
        address = self.global_address(self.placements[what].value)
        ra = self.mf.fixed_vreg("R", abi.SYSCALL_RETURN_ADDRESS, 2)
        if self.arch.lepc_label:      # sm_90: `LEPC R20, `(return point)` is the address itself
            lepc = MInstr("LEPC", (), [VOp(ra), None], 1, None, self.line)
            self.out.append(lepc)
        else:
            pc = self.mf.new_vreg("R", 2)
            here = f"{self.current.name}$pc{len(self.mf.blocks)}"
            self.out.append(MInstr("LEPC", (), [VOp(pc), Label(here)], 1, None, self.line, shown=(0,)))
            carry = self.mf.new_vreg("P")
            self.emit(IMPLICIT_DEF, (), [VOp(ra)], guarded=False)
            add = self.emit("IADD3", (), [VOp(ra, 0), VOp(carry), VOp(pc, 0), Imm(0), RZ], ndefs=2, guarded=False)
            self.emit("IADD3", ("X",), [VOp(ra, 1), RZ, VOp(pc, 1), RZ, VOp(carry), PT_NOT], guarded=False)
        defs = [VOp(self.mf.fixed_vreg("R", reg, width)) for reg, width in res_layout]
        n = len(defs)
        self.out.append(MInstr("CALL", ("ABS", "NOINC"), [*defs, VOp(address), *uses, VOp(ra)], n, None,
                               self.line, clobbers=abi.SYSCALL_CLOBBERED, shown=(n,)))
        if what not in self.mf.externs:
            self.mf.externs.append(what)
        back = self.start_block("ret")
        if self.arch.lepc_label:
            lepc.operands[1] = Label(back.name)
        else:
            add.operands[3] = abi.LabelDistance(back.name, here)
        memory = self.result_memory
        returns = callee.returns if callee is not None and len(ins.dests) == len(callee.returns) else None
        self.extern_call_results(ins, defs, returns)
        self.results_from_memory(ins, memory)

    def sel_extern_call(self, ins, callee, pointer: ir.Value | None = None) -> None:
        """`call (r), f, (a)` of a function another module defines (relocatable output,
        ptx2sass.abi): the arguments in R4.., the absolute return address in R20:R21 from
        relocations against the kernel's symbol, `CALL.ABS.NOINC `(f)` relocated against
        f's symbol; then the global-memory descriptor read again. With `pointer` (-g: a
        call through a pointer, every address-taken function a link target, as ptxas -g
        calls them): `CALL.ABS.NOINC R` to the pointer's value, which may reach any of them."""
        if pointer is not None:
            args = [a for a in ins.srcs[1:] if not isinstance(a, ir.Symbol)]    # less the prototype
            if any(not isinstance(a, (ir.Value, ir.Const)) for a in args):
                raise self.unsupported("this argument of an indirect `call`")
            what = "function called through a pointer"
            units, result_units = abi.pointer_call_units(ins, self.callees)
            uses, res_layout = self.call_arguments(ins, args, units, result_units, what, link=True)
        else:
            what = callee.name
            uses, res_layout = self.extern_call_arguments(ins, callee)
        ra = self.mf.fixed_vreg("R", abi.EXTERN_RETURN_ADDRESS, 2)
        self.emit(IMPLICIT_DEF, (), [VOp(ra)], guarded=False)
        low = self.emit("MOV", (), [VOp(ra, 0), Imm(0)], guarded=False)
        high = self.emit("MOV", (), [VOp(ra, 1), Imm(0)], guarded=False)
        defs = [VOp(self.mf.fixed_vreg("R", reg, width)) for reg, width in res_layout]
        n = len(defs)
        if pointer is not None:
            self.out.append(MInstr("CALL", ("ABS", "NOINC"), [*defs, VOp(self.vreg(pointer)), *uses, VOp(ra)],
                                   n, None, self.line, clobbers=abi.EXTERN_CLOBBERED, shown=(n,)))
        elif what == self.mf.name:     # recursion into itself: a relative call, as ptxas -g's
            self.out.append(MInstr("CALL", ("REL", "NOINC"), [*defs, Label(abi.ENTRY_LABEL), *uses, VOp(ra)],
                                   n, None, self.line, clobbers=abi.EXTERN_CLOBBERED, shown=(n,)))
        else:
            self.out.append(MInstr("CALL", ("ABS", "NOINC"), [*defs, Label(what), *uses, VOp(ra)], n, None,
                                   self.line, clobbers=abi.EXTERN_CLOBBERED, shown=(n,)))
        self.mf.pointer_calls |= pointer is not None
        if pointer is not None and self.mf.pointer_prototype is None:
            self.mf.pointer_prototype = abi.call_prototype(ins)
        for name in (self.pointers if pointer is not None else (what,)):
            if name not in self.mf.externs:
                self.mf.externs.append(name)
        back = self.start_block("ret")
        low.operands[1] = Reloc("lo", abi.RETURN_SYMBOL, back.name)
        high.operands[1] = Reloc("hi", abi.RETURN_SYMBOL, back.name)
        returns = callee.returns if callee is not None else None
        if returns is not None and len(ins.dests) != len(returns):
            returns = None          # a struct result as its words (ptx2sass.inline)
        memory = self.result_memory
        self.extern_call_results(ins, defs, returns)
        self.results_from_memory(ins, memory)

    def results_from_memory(self, ins, memory: int | None) -> None:
        """A result through memory (`memory`: the buffer's offset from R1; None: none): its
        words read back, merged as ptxas does (abi.vector_runs)."""
        if memory is not None:
            words = {memory + 4 * k: VOp(self.vreg(d)) for k, d in enumerate(ins.dests)}
            for offset, n in abi.vector_runs(list(words), self.result_align):
                self.wide_local("LDL", SP, offset, [words[offset + 4 * k] for k in range(n)], load=True)

    def begin_function(self) -> None:
        """At the top of an out-of-line function's entry block: its arguments and return
        address as the convention delivers them."""
        params = self.fn.params
        if abi.is_linkable(self.fn):      # the link-time convention: R4..R15, then the stack
            _, places, _, buffer = abi.link_call_layout(params, self.fn.returns, self.fn.attributes.get(abi.STRUCTS),
                                                        self.fn.name)
            if buffer is not None:      # the result through memory: the buffer's address arrives in R4
                r = self.mf.fixed_vreg("R", abi.RESULT_BUFFER, 1)
                self.emit(IMPLICIT_DEF, (), [VOp(r)], guarded=False)
                self.result_buffer = self.mf.new_vreg()
                self.emit(COPY, (), [VOp(self.result_buffer), VOp(r)], guarded=False)
                words = abi.result_buffer(abi.link_units(self.fn.returns, self.fn.attributes.get(abi.STRUCTS)),
                                          self.fn.name) // 4
                self.result_layout = [(None, 1)] * words
            else:
                self.result_layout = abi.link_registers(
                    abi.link_units(self.fn.returns, self.fn.attributes.get(abi.STRUCTS)), "result", self.fn.name)
        else:
            places = [abi.Place(r, w) for r, w in abi.register_layout(abi.slot_types(params), "argument",
                                                                      self.fn.name)]
            self.result_layout = abi.register_layout(abi.slot_types(self.fn.returns), "result", self.fn.name)
        arriving, loads = [], []
        for place in places:
            if place.register is None:        # the caller's outgoing area, above our frame
                r = self.mf.new_vreg("R", place.width)
                loads.append(MInstr("LDL", ("64",) if place.width == 2 else (),
                                    [VOp(r), VMem(SP, abi.INCOMING + place.offset, wide=False)], 1, None, self.line))
            else:
                r = self.mf.fixed_vreg("R", place.register, place.width)
                self.emit(IMPLICIT_DEF, (), [VOp(r)], guarded=False)
            arriving.append(r)
        self.out.extend(loads)
        if len(arriving) == len(params):
            self.incoming = {p.name: r for p, r in zip(params, arriving)}
        else:       # a packed vector's elements taken out, each into a register of its own
            self.incoming = {p.name: self.mf.new_vreg() for p in params}
            self.unpacked([VOp(self.incoming[p.name]) for p in params], [VOp(r) for r in arriving], params)
        ra = self.mf.fixed_vreg("R", self.return_register(), 2)
        self.emit(IMPLICIT_DEF, (), [VOp(ra)], guarded=False)
        rets = sum(1 for b in self.fn.blocks if b.instrs and b.instrs[-1].opcode == "ret")
        self.return_block = MBlock(f"{self.fn.entry.name}$return") if rets > 1 else None
        self.return_values = [self.mf.new_vreg("R", width) for _, width in self.result_layout]
        self.return_address = self.mf.new_vreg("R", 2)
        self.emit(COPY, (), [VOp(self.return_address), VOp(ra)], guarded=False)

    def sel_param(self, ins):
        """An argument of an out-of-line function (a `.reg` parameter, defined on entry)."""
        src = self.incoming.get(ins.srcs[0].name) if not self.fn.is_entry else None
        if src is None:
            raise self.unsupported(f"parameter `{ins.srcs[0].name}` as a register")
        self.emit(COPY, (), [VOp(self.vreg(ins.dests[0])), VOp(src)], guarded=False)

    def select_return(self, term, mb) -> None:
        """`ret` of an out-of-line function; a guarded one branches around it for the lanes
        that go on. A function with several `ret`s leaves by one RET, as ptxas's do: each
        `ret` sets the results and branches there, so that lanes that went different ways
        in the function can meet before it (a BSYNC, ptx2sass/reconverge.py) and return
        together."""
        guard = self.guard_of(term)
        mb.fallthrough = None
        if guard is not None and mb.succs:
            self.out.append(MInstr("BRA", (), [Label(mb.succs[0].name)], 0,
                                   replace(guard, inv=not guard.inv), term.line))
        values, types = self.packed(term.srcs, self.fn.returns)
        if self.return_block is not None:
            for v, ty, r in zip(values, types, self.return_values):
                self.copy_slot(VOp(r), v, ty)
            mb.succs.append(self.return_block)
            self.return_block.preds.append(mb)
            mb.fallthrough = self.return_block
            return
        self.emit_return(list(zip(values, types)), term.line)

    def emit_return(self, values, line) -> None:
        """The results into R4.. (or stored through the result buffer), the return address
        back into R2:R3, RET."""
        results = []
        for k, ((v, ty), (reg, width)) in enumerate(zip(values, self.result_layout)):
            if reg is None:
                self.store_result(k, v, ty)
                continue
            r = self.mf.fixed_vreg("R", reg, width)
            self.copy_slot(VOp(r), v, ty)
            results.append(VOp(r))
        self.emit_ret(results, line)

    def store_result(self, k: int, v, ty: str) -> None:
        """Word `k` of a result returned through memory: `STL [buffer+4k]` (ptx2sass.abi)."""
        t = VOp(self.mf.new_vreg())
        self.copy_slot(t, v, ty)
        self.emit("STL", (), [VMem(VOp(self.result_buffer), 4 * k, wide=False), t], ndefs=0, guarded=False)

    def return_register(self) -> int:
        """Where the return address arrives: R2:R3, or R20:R21 in a link target (abi)."""
        return abi.EXTERN_RETURN_ADDRESS if abi.is_linkable(self.fn) else abi.RETURN_ADDRESS

    def emit_ret(self, results, line) -> None:
        """The return address back into its register pair, then `RET.REL.NODEC R2` (offsets
        in the kernel's text) or, in a link target, `RET.ABS.NODEC R20 0x0`."""
        ra = self.mf.fixed_vreg("R", self.return_register(), 2)
        self.emit(COPY, (), [VOp(ra), VOp(self.return_address)], guarded=False)
        if abi.is_linkable(self.fn):
            self.out.append(MInstr("RET", ("ABS", "NODEC"), [VOp(ra), Imm(0), *results],
                                   0, None, line, shown=(0, 1)))
        else:
            self.out.append(MInstr("RET", ("REL", "NODEC"), [VOp(ra), Label(abi.ENTRY_LABEL), *results],
                                   0, None, line, shown=(0, 1)))

    def end_function(self) -> None:
        """The shared return block of a function with several `ret`s, laid out last."""
        rb = self.return_block
        if rb is None or not rb.preds:
            return
        self.current, self.out, self.guard = rb, rb.instrs, None
        results = []
        for k, (r, (reg, width)) in enumerate(zip(self.return_values, self.result_layout)):
            if reg is None:
                self.store_result(k, VOp(r), "b32")
                continue
            f = self.mf.fixed_vreg("R", reg, width)
            self.emit(COPY, (), [VOp(f), VOp(r)], guarded=False)
            results.append(VOp(f))
        self.emit_ret(results, None)
        self.mf.blocks.append(rb)
