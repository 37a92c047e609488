"""Loads, stores, addresses, atomics, barriers and warp-wide operations.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, VMem, VOp
from ptx2sass.isel.common import PT, RZ, _bits, _signed, _size_modifier


class MemorySelection:
    # ------------------------------------------------------------------ data movement
    def sel_undef(self, ins):
        self.emit(IMPLICIT_DEF, (), [VOp(self.vreg(ins.dests[0]))], guarded=False)

    def sel_mov(self, ins):
        d, src = ins.dests[0], ins.srcs[0]
        r = self.vreg(d)
        if r.cls == "P":
            if isinstance(src, ir.Value):
                self.emit("PLOP3", ("LUT",), [VOp(r), PT, VOp(self.vreg(src)), PT, PT, Imm(0x80), Imm(0)])
            elif isinstance(src, ir.Const):
                self.emit("PLOP3", ("LUT",), [VOp(r), PT, PT, PT, PT, Imm(0xFF if src.value else 0), Imm(0)])
            else:
                raise self.unsupported("`mov` of this predicate operand")
            return
        if isinstance(src, ir.Symbol):
            raise self.unsupported("`mov` of a variable's address")
        if len(ins.dests) > 1:          # `mov.v2.u32 a, b`: component by component
            if len(ins.dests) != len(ins.srcs):
                raise self.unsupported("vector `mov` with unequal element counts")
            for dv, sv in zip(ins.dests, ins.srcs):
                self.sel_mov(ir.Instr("mov", type=ins.type, dests=[dv], srcs=[sv], line=ins.line))
            return
        if len(ins.srcs) > 1:
            return self.pack(d, ins.srcs)
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            s = self.part_of(src, k)
            if isinstance(src, ir.Value) and self.guard is None and r.width == 1:
                self.emit(COPY, (), [VOp(r), s], guarded=False)
            else:
                self.move(self.dst(d, k), s)

    def pack(self, d: ir.Value, elems) -> None:
        """`mov.b32 d, {a, b}` (two 16-bit halves) or `mov.b64 d, {a, b}` (two words)."""
        r = self.vreg(d)
        n = len(elems)
        if r.width == 2 and n == 2:
            self.begin_wide(d)
            for k in range(2):
                self.move(self.dst(d, k), self.part_of(elems[k], 0))
            return
        if r.width == 1 and n == 2:
            self.emit("PRMT", (), [self.dst(d), self.reg_part(elems[0]), Imm(0x5410),
                                   self.reg_part(elems[1])])
            return
        raise self.unsupported(f"`mov` packing {n} elements into {d.type}")

    def param_const(self, addr: ir.Address, part: int) -> ConstRef:
        sym = addr.base
        p = self.params.get(sym.name) if isinstance(sym, ir.Symbol) else None
        if p is None:
            raise self.unsupported("`ld.param` of a non-kernel parameter")
        return ConstRef(0, self.arch.param_base + p.offset + sym.offset + addr.offset + 4 * part)

    def address(self, addr, wide: bool) -> VMem:
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"address operand {addr!r}")
        if isinstance(addr.base, ir.Value):
            r = self.vreg(addr.base)
            return VMem(VOp(r), addr.offset, wide=wide)
        if addr.base is None:
            return VMem(None, addr.offset, wide=wide)
        raise self.unsupported(f"addressing variable `{addr.base.name}` directly")

    MEMORY_OPS = {"global": ("LDG", "STG", True), "generic": ("LD", "ST", True),
                  "shared": ("LDS", "STS", False), "local": ("LDL", "STL", False)}

    def sel_ld(self, ins):
        if ins.space == "param":
            if not self.fn.is_entry:
                raise self.unsupported("`ld.param` in a .func")
            for i, d in enumerate(ins.dests):
                r = self.vreg(d)
                if r.width > 1:
                    self.begin_wide(d)
                for k in range(r.width):
                    self.move(self.dst(d, k), self.param_const(ins.srcs[0], i * r.width + k))
            return
        if ins.space not in self.MEMORY_OPS:
            raise self.unsupported(f"`ld.{ins.space}`")
        load, _, wide = self.MEMORY_OPS[ins.space]
        mods = ("E",) if wide else ()
        mem = self.address(ins.srcs[0], wide)
        if wide:
            self.mf.uses_global_descriptor = True
        n = len(ins.dests)
        ty = ins.type
        if n == 1:
            self.emit(load, mods + _size_modifier(ty, True), [self.dst_whole(ins.dests[0]), mem])
            return
        elem_bits = _bits(ty)
        if elem_bits != 32 or n not in (2, 4):
            raise self.unsupported(f"vector `ld` of {n} x {ty}")
        t = self.mf.new_vreg("R", n)
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False) if self.guard is not None else None
        self.emit(load, mods + ({2: ("64",), 4: ("128",)}[n]), [VOp(t), mem])
        for k, d in enumerate(ins.dests):
            self.emit(COPY, (), [VOp(self.vreg(d)), VOp(t, k)], guarded=self.guard is not None)

    def dst_whole(self, v: ir.Value) -> VOp:
        return VOp(self.vreg(v))

    def sel_st(self, ins):
        if ins.space not in self.MEMORY_OPS:
            raise self.unsupported(f"`st.{ins.space}`")
        _, store, wide = self.MEMORY_OPS[ins.space]
        mods = ("E",) if wide else ()
        mem = self.address(ins.srcs[0], wide)
        if wide:
            self.mf.uses_global_descriptor = True
        data = ins.srcs[1:]
        ty = ins.type
        if len(data) == 1:
            v = data[0]
            width = max(1, _bits(ty) // 32)
            if isinstance(v, ir.Value):
                src = VOp(self.vreg(v))
            elif width == 1:
                src = self.reg_part(v)
            else:
                t = self.mf.new_vreg("R", width)
                self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
                for k in range(width):
                    self.move(VOp(t, k), self.part_of(v, k))
                src = VOp(t)
            self.emit(store, mods + _size_modifier(ty, False), [mem, src], ndefs=0)
            return
        n = len(data)
        if _bits(ty) != 32 or n not in (2, 4):
            raise self.unsupported(f"vector `st` of {n} x {ty}")
        t = self.mf.new_vreg("R", n)
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        for k, v in enumerate(data):
            if isinstance(v, ir.Value):
                self.emit(COPY, (), [VOp(t, k), VOp(self.vreg(v))], guarded=False)
            else:
                self.move(VOp(t, k), self.part_of(v, 0))
        self.emit(store, mods + ({2: ("64",), 4: ("128",)}[n]), [mem, VOp(t)], ndefs=0)

    def sel_cvta(self, ins):
        if ins.space not in ("global", None) and "global" not in ins.modifiers:
            raise self.unsupported(f"`cvta` of the {ins.space} window")
        self.copy_value(ins.dests[0], ins.srcs[0])

    def copy_value(self, d: ir.Value, src) -> None:
        r = self.vreg(d)
        if isinstance(src, ir.Value) and self.guard is None:
            self.emit(COPY, (), [VOp(r), VOp(self.vreg(src))], guarded=False)
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.move(self.dst(d, k), self.part_of(src, k))


    # ------------------------------------------------------------------ atomics, barriers, warp
    ATOM_OPS = {"add": "ADD", "inc": "INC", "dec": "DEC", "min": "MIN", "max": "MAX",
                "and": "AND", "or": "OR", "xor": "XOR", "exch": "EXCH"}

    def sel_atom(self, ins):
        op = next((m for m in ins.modifiers if m in self.ATOM_OPS), None)
        ty = ins.type
        if op is None or _bits(ty) != 32 or ins.space not in ("global", "generic"):
            raise self.unsupported(f"`atom.{ins.space}.{'.'.join(ins.modifiers)}.{ty}`")
        mods = [self.ATOM_OPS[op]]
        if ty == "f32":
            if op != "add":
                raise self.unsupported(f"`atom.{op}.f32`")
            mods += ["F32", "FTZ", "RN"]
        elif _signed(ty) and op in ("min", "max"):
            mods.append("S32")
        sem = [m for m in ins.modifiers if m in ("relaxed", "acquire", "release", "acq_rel")]
        scope = [m for m in ins.modifiers if m in ("cta", "sys", "cluster")]
        if sem or scope:
            raise self.unsupported(f"`atom` with {'.'.join(sem + scope)}")
        opcode = "ATOMG" if ins.space == "global" else "ATOM"
        mem = self.address(ins.srcs[0], True)
        self.mf.uses_global_descriptor = True
        d = self.dst(ins.dests[0])
        # Destinations: the (unused) predicate PT, then the old value.
        self.emit(opcode, ("E",) + tuple(mods) + ("STRONG", "GPU"),
                  [PT, d, mem, self.reg_part(ins.srcs[1])], ndefs=2)

    def sel_membar(self, ins):
        level = next((m for m in ins.modifiers if m in ("cta", "gl", "sys")), "gl")
        if level == "cta":
            self.emit("MEMBAR", ("SC", "CTA"), [], ndefs=0)
            return
        self.emit("MEMBAR", ("SC", "SYS" if level == "sys" else "GPU"), [], ndefs=0)
        self.emit("ERRBAR", (), [], ndefs=0)
        self.emit("CCTL", ("IVALL",), [], ndefs=0)

    def full_mask(self, mask) -> None:
        if not (isinstance(mask, ir.Const) and mask.value & 0xFFFFFFFF == 0xFFFFFFFF):
            raise self.unsupported(f"`{self.ins.opcode}.sync` with a partial member mask")

    def sel_shfl(self, ins):
        mode = next((m for m in ins.modifiers if m in ("up", "down", "bfly", "idx")), None)
        if mode is None or "sync" not in ins.modifiers:
            raise self.unsupported(f"`shfl.{'.'.join(ins.modifiers)}`")
        a, b, c, mask = ins.srcs
        self.full_mask(mask)
        p = VOp(self.vreg(ins.dests[1])) if len(ins.dests) > 1 else PT
        self.emit("SHFL", (mode.upper(),), [p, self.dst(ins.dests[0]), self.reg_part(a),
                                            self.part_of(b, 0), self.part_of(c, 0)], ndefs=2)

    def sel_vote(self, ins):
        mode = next((m for m in ins.modifiers if m in ("any", "all", "ballot")), None)
        if mode is None or "sync" not in ins.modifiers:
            raise self.unsupported(f"`vote.{'.'.join(ins.modifiers)}`")
        p, mask = ins.srcs
        self.full_mask(mask)
        src = self.pred_operand(p)
        if mode == "ballot":
            self.emit("VOTE", ("ANY",), [self.dst(ins.dests[0]), PT, src], ndefs=2)
        else:
            self.emit("VOTE", (mode.upper(),), [self.dst(ins.dests[0]), src])

    REDUX_OPS = {"add": "SUM", "min": "MIN", "max": "MAX", "and": "AND", "or": "OR", "xor": "XOR"}
    REDUX_UR = Reg("UR", 6)       # scratch uniform register (UR4/UR5 hold the descriptor)

    def sel_redux(self, ins):
        op = next((m for m in ins.modifiers if m in self.REDUX_OPS), None)
        if op is None:
            raise self.unsupported(f"`redux.{'.'.join(ins.modifiers)}`")
        a, mask = ins.srcs
        self.full_mask(mask)
        mods = (self.REDUX_OPS[op],) + (("S32",) if _signed(ins.type) and op in ("add", "min", "max") else ())
        self.emit("REDUX", mods, [self.REDUX_UR, self.reg_part(a)])
        self.emit("IMAD", ("U32",), [self.dst(ins.dests[0]), RZ, RZ, self.REDUX_UR])

    def sel_activemask(self, ins):
        self.emit("VOTE", ("ANY",), [self.dst(ins.dests[0]), PT, PT])
