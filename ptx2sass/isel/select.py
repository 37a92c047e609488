"""Select SASS instructions for one IR function, imitating ptxas's choices for sm_8x.

Conventions:
* a PTX value lives in one virtual register of its width (64-bit values in an even-aligned
  pair, predicates in P); 8- and 16-bit values sit in a 32-bit register whose high bits may
  hold garbage: every operation whose result depends on those bits (compares, right shifts,
  widening conversions, min/max) extends its operands first, as PTX's type says;
* phis become copies: at the end of each predecessor into a fresh register, then at the top
  of the block into the phi's own (Sreedhar's method I: no critical-edge splitting needed);
  the allocator's biased colouring removes most of those copies;
* a guarded PTX instruction with results becomes `COPY d <- else-value` then the guarded
  SASS, so the partial write keeps the value PTX's register had.

Anything not handled raises `CompileError("... not supported yet")` naming the PTX
instruction and its line.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Label, Reg, SpecialReg
from ptx2sass.encoder.sass_text import float_bits_text, float_text, parse_operand
from ptx2sass.errors import CompileError
from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MFunction, MInstr, VMem, VOp, VReg

RZ = Reg("R", 255)
PT = Reg("P", 7)
NOT_PT = Reg("P", 7, inv=True)
UR4 = Reg("UR", 4)

# PTX comparison → (SASS comparison, unsigned?) for integer setp.
INT_COMPARE = {"eq": ("EQ", None), "ne": ("NE", None), "lt": ("LT", None), "le": ("LE", None),
               "gt": ("GT", None), "ge": ("GE", None),
               "lo": ("LT", True), "ls": ("LE", True), "hi": ("GT", True), "hs": ("GE", True)}
FLOAT_COMPARE = {c: c.upper() for c in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu",
                                        "leu", "gtu", "geu", "num", "nan")}
BOOL_OPS = {"and": "AND", "or": "OR", "xor": "XOR"}
# Truth tables of LOP3 over (a, b, c) = (0xF0, 0xCC, 0xAA).
LUT = {"and": 0xC0, "or": 0xFC, "xor": 0x3C}
ROUNDING = {"rn": None, "rz": "RZ", "rm": "RM", "rp": "RP"}
FRND_MODE = {"rni": None, "rzi": "TRUNC", "rmi": "FLOOR", "rpi": "CEIL"}
F2I_MODE = {"rni": None, "rzi": "TRUNC", "rmi": "FLOOR", "rpi": "CEIL", None: "TRUNC"}

# Special registers read with S2R, and those ptxas reads from constant bank 0.
S2R_NAMES = {"%tid.x": "SR_TID.X", "%tid.y": "SR_TID.Y", "%tid.z": "SR_TID.Z",
             "%ctaid.x": "SR_CTAID.X", "%ctaid.y": "SR_CTAID.Y", "%ctaid.z": "SR_CTAID.Z",
             "%laneid": "SR_LANEID", "%clock": "SR_CLOCKLO",
             "%lanemask_eq": "SR_EQMASK", "%lanemask_lt": "SR_LTMASK", "%lanemask_le": "SR_LEMASK",
             "%lanemask_gt": "SR_GTMASK", "%lanemask_ge": "SR_GEMASK"}
CBANK_SPECIALS = {"%ntid.x": 0x0, "%ntid.y": 0x4, "%ntid.z": 0x8,
                  "%nctaid.x": 0xC, "%nctaid.y": 0x10, "%nctaid.z": 0x14}

# Memory access width/sign → the size modifier of LD*/ST*.
def _size_modifier(ty: str, load: bool) -> tuple[str, ...]:
    kind, bits = ir.TYPES[ty]
    if bits == 8:
        return ("S8",) if load and kind == "s" else ("U8",)
    if bits == 16:
        return ("S16",) if load and kind == "s" else ("U16",)
    return {32: (), 64: ("64",), 128: ("128",)}[bits]


def _bits(ty: str) -> int:
    return ir.TYPES[ty][1]


def _signed(ty: str) -> bool:
    return ir.TYPES[ty][0] == "s"


def _is_float(ty: str) -> bool:
    return ir.TYPES[ty][0] == "f"


class Selector:
    def __init__(self, fn: ir.Function, arch_info, filename: str | None):
        self.fn = fn
        self.arch = arch_info
        self.file = filename
        self.mf = MFunction(fn.name)
        self.values: dict[int, VReg] = {}
        self.blocks: dict[int, MBlock] = {}
        self.params = {p.name: p for p in fn.params}
        self.out: list[MInstr] = []
        self.guard: VOp | None = None
        self.line: int | None = None
        self.ins: ir.Instr | None = None
        self._mov_parity = 0

    # ------------------------------------------------------------------ helpers
    def unsupported(self, what: str) -> CompileError:
        return CompileError(f"{what} not supported yet", self.file, self.line)

    def emit(self, opcode: str, modifiers=(), operands=(), ndefs: int = 1, guarded: bool = True,
             widths=None) -> MInstr:
        mi = MInstr(opcode, tuple(modifiers), list(operands), ndefs,
                    self.guard if guarded else None, self.line, dict(widths or {}))
        self.out.append(mi)
        return mi

    def vreg(self, v: ir.Value) -> VReg:
        r = self.values.get(v.id)
        if r is None:
            if v.type == "pred":
                r = self.mf.new_vreg("P")
            else:
                r = self.mf.new_vreg("R", max(1, _bits(v.type) // 32))
            self.values[v.id] = r
        return r

    def dst(self, v: ir.Value, part: int | None = None) -> VOp:
        r = self.vreg(v)
        return VOp(r, part if r.width > 1 else None)

    def begin_wide(self, v: ir.Value) -> None:
        """Start the live range of a value written in parts (unless guarded: then the
        else-copy already defined it)."""
        if self.guard is None:
            self.emit(IMPLICIT_DEF, (), [VOp(self.vreg(v))], guarded=False)

    def mov_op(self) -> tuple[str, tuple[str, ...], list]:
        """ptxas alternates MOV (ALU pipe) and IMAD.MOV.U32 (FMA pipe) for plain moves."""
        self._mov_parity ^= 1
        return ("MOV", ()) if self._mov_parity else ("IMAD", ("MOV", "U32"))

    def move(self, d: VOp, src) -> None:
        op, mods = self.mov_op()
        if op == "MOV":
            self.emit("MOV", mods, [d, src])
        else:
            self.emit("IMAD", mods, [d, RZ, RZ, src])

    def imm32(self, value: int) -> Imm:
        return Imm(value & 0xFFFFFFFF)

    def part_of(self, op, part: int, ty: str | None = None):
        """A 32-bit source operand for part `part` of an IR operand: a register, an
        immediate, or RZ for zero."""
        if isinstance(op, ir.Value):
            r = self.vreg(op)
            if r.width == 1:
                return VOp(r)
            return VOp(r, part)
        if isinstance(op, ir.Const):
            word = (op.value >> (32 * part)) & 0xFFFFFFFF
            return RZ if word == 0 else self.imm32(word)
        if isinstance(op, ir.SpecialReg):
            return self.special(op)
        raise self.unsupported(f"operand {op!r} of `{self.ins.opcode}`")

    def reg_part(self, op, part: int = 0) -> VOp | Reg:
        """Like part_of, but an immediate is first moved into a register."""
        src = self.part_of(op, part)
        if isinstance(src, Imm):
            t = VOp(self.mf.new_vreg())
            self.move(t, src)
            return t
        return src

    def float_imm(self, op: ir.Const, bits: int = 32) -> Imm | VOp | Reg:
        if op.value == 0:
            return RZ
        text = float_bits_text(op.value & 0xFFFFFFFF, 32)
        if "NAN" in text:
            return self.reg_part(op)
        return parse_operand(text)

    def fsrc(self, op, allow_imm: bool = True):
        if isinstance(op, ir.Const):
            return self.float_imm(op) if allow_imm else self.reg_part(op)
        return self.part_of(op, 0)

    def special(self, sr: ir.SpecialReg):
        if sr.name in CBANK_SPECIALS:
            return ConstRef(0, CBANK_SPECIALS[sr.name])
        if sr.name in S2R_NAMES:
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg(S2R_NAMES[sr.name])])
            return t
        if sr.name == "%warpsize" or sr.name == "WARP_SZ":
            return Imm(32)
        raise self.unsupported(f"special register {sr.name}")

    def extend(self, op, ty: str, part: int = 0):
        """A 32-bit operand holding `op` (of 8/16-bit type `ty`) properly zero/sign-extended."""
        src = self.part_of(op, part)
        bits = _bits(ty)
        if bits >= 32 or not isinstance(src, VOp):
            if isinstance(src, Imm) and bits < 32:
                v = src.value & ((1 << bits) - 1)
                if _signed(ty) and v >> (bits - 1):
                    v -= 1 << bits
                return self.imm32(v)
            return src
        t = VOp(self.mf.new_vreg())
        if _signed(ty):
            self.emit("SGXT", (), [t, src, Imm(bits)])
        else:
            self.emit("LOP3", ("LUT",), [t, src, Imm((1 << bits) - 1), RZ, Imm(LUT["and"]), NOT_PT])
        return t

    # ------------------------------------------------------------------ driver
    def run(self) -> MFunction:
        for b in self.fn.blocks:
            self.blocks[id(b)] = MBlock(b.name)
        order = [b for b in self.fn.blocks if b.preds or b is self.fn.entry]
        # Temporaries the phis of each block read at its top (filled per predecessor).
        self.phi_temps: dict[int, list[tuple[ir.Phi, VReg]]] = {}
        for b in order:
            temps = []
            for phi in b.phis:
                d = self.vreg(phi.dest)
                temps.append((phi, self.mf.new_vreg(d.cls, d.width)))
            self.phi_temps[id(b)] = temps
        for b in order:
            mb = self.blocks[id(b)]
            self.out = mb.instrs
            self.guard = None
            for phi, tmp in self.phi_temps[id(b)]:
                self.emit(COPY, (), [VOp(self.vreg(phi.dest)), VOp(tmp)], guarded=False)
            body = b.instrs
            term = body[-1] if body and body[-1].is_terminator else None
            for ins in (body[:-1] if term else body):
                self.select(ins)
            self.phi_copies(b)
            mb.succs = [self.blocks[id(s)] for s in b.succs]
            for s in mb.succs:
                s.preds.append(mb)
            self.terminator(b, mb, term)
            self.mf.blocks.append(mb)
        return self.mf

    def phi_copies(self, b: ir.Block) -> None:
        self.guard = None
        for s in b.succs:
            for phi, tmp in self.phi_temps.get(id(s), []):
                for pred, v in phi.incoming:
                    if pred is b:
                        self.line = None
                        self.copy_into(VOp(tmp), v, phi.dest.type)

    def copy_into(self, d: VOp, v, ty: str) -> None:
        if isinstance(v, ir.Value):
            self.emit(COPY, (), [d, VOp(self.vreg(v))], guarded=False)
        elif isinstance(v, ir.Const):
            if d.reg.cls == "P":
                self.emit("PLOP3", ("LUT",), [d, PT, PT, PT, PT, Imm(0xFF if v.value else 0), Imm(0)],
                          ndefs=1)
                return
            if d.reg.width > 1 and self.guard is None:
                self.emit(IMPLICIT_DEF, (), [d], guarded=False)
            for k in range(d.reg.width):
                word = (v.value >> (32 * k)) & 0xFFFFFFFF
                self.move(VOp(d.reg, k if d.reg.width > 1 else None), RZ if word == 0 else Imm(word))
        else:
            raise self.unsupported(f"phi operand {v!r}")

    def terminator(self, b: ir.Block, mb: MBlock, term: ir.Instr | None) -> None:
        self.guard = None
        if term is None:
            mb.fallthrough = mb.succs[0] if mb.succs else None
            if not mb.succs:
                self.emit("EXIT", (), [], ndefs=0)
            return
        self.line = term.line
        self.ins = term
        if term.opcode in ("ret", "exit"):
            if not self.fn.is_entry:
                raise self.unsupported("`ret` from a .func (calls)")
            guard = self.guard_of(term)
            self.out.append(MInstr("EXIT", (), [], 0, guard, term.line))
            mb.fallthrough = mb.succs[0] if guard is not None and mb.succs else None
            if guard is not None and not mb.succs:
                self.emit("EXIT", (), [], ndefs=0)
            return
        if term.opcode != "bra":
            raise self.unsupported(f"`{term.opcode}`")
        target = mb.succs[0]
        guard = self.guard_of(term)
        if guard is None:      # layout emits the BRA unless the target comes next
            mb.fallthrough = target
            return
        self.out.append(MInstr("BRA", (), [Label(target.name)], 0, guard, term.line))
        mb.fallthrough = mb.succs[1] if len(mb.succs) > 1 else None

    def guard_of(self, ins: ir.Instr):
        if ins.guard is None:
            return None
        r = self.vreg(ins.guard)
        return VOp(r, inv=ins.guard_negated)

    def select(self, ins: ir.Instr) -> None:
        self.ins = ins
        self.line = ins.line
        self.guard = None
        if ins.guard is not None:
            g = self.guard_of(ins)
            for d, m in zip(ins.dests, ins.merge):
                self.copy_into(VOp(self.vreg(d)), m, d.type)
            self.guard = g
        handler = getattr(self, "sel_" + ins.opcode.replace(".", "_"), None)
        if handler is None:
            raise self.unsupported(f"PTX instruction `{ins.opcode}`")
        handler(ins)
        self.guard = None

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

    # ------------------------------------------------------------------ integer arithmetic
    def two_sources(self, ins, commutative: bool = True):
        a, b = ins.srcs[0], ins.srcs[1]
        if commutative and isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        return a, b

    def sel_add(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.float_binary(ins, "FADD")
        if ins.modifiers == ("sat",) and ty == "s32":
            return self.add_sat(ins)
        if "sat" in ins.modifiers or "cc" in ins.modifiers:
            raise self.unsupported(f"`add.{'.'.join(ins.modifiers)}`")
        a, b = self.two_sources(ins)
        self.int_add(ins.dests[0], a, b, negate_b=False)

    def sel_sub(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.float_binary(ins, "FADD", negate_b=True)
        if "sat" in ins.modifiers or "cc" in ins.modifiers:
            raise self.unsupported(f"`sub.{'.'.join(ins.modifiers)}`")
        self.int_add(ins.dests[0], ins.srcs[0], ins.srcs[1], negate_b=True)

    def add_sat(self, ins):
        """Signed saturating add as ptxas does it: the wrapped sum, then overflow detected
        from the operands' and the sum's sign bits."""
        a, b = self.reg_part(ins.srcs[0]), self.reg_part(ins.srcs[1])
        s = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [s, a, b, RZ])
        pos, neg = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        sign = lambda v: VOp(v.reg, v.part, suffix=("SIGN",))
        # (a, b, s) signs: + + - → positive overflow (LUT bit 1), - - + → negative (bit 6).
        self.emit("PLOP3", ("LUT",), [pos, PT, sign(a), sign(b), sign(s), Imm(0x2), Imm(0)], ndefs=2)
        self.emit("PLOP3", ("LUT",), [neg, PT, sign(a), sign(b), sign(s), Imm(0x40), Imm(0)], ndefs=2)
        t = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [t, s, Imm(0x7FFFFFFF), VOp(pos.reg, inv=True)])
        self.emit("SEL", (), [self.dst(ins.dests[0]), t, Imm(0x80000000), VOp(neg.reg, inv=True)])

    def int_add(self, d: ir.Value, a, b, negate_b: bool) -> None:
        r = self.vreg(d)
        if r.width == 1:
            ra = self.reg_part(a, 0)
            sb = self.part_of(b, 0)
            if negate_b:
                sb = self.negate(sb)
            self.emit("IADD3", (), [self.dst(d), ra, sb, RZ])
            return
        if isinstance(b, ir.Const) and negate_b:
            b, negate_b = ir.Const((-b.value) & 0xFFFFFFFFFFFFFFFF, b.type), False
        self.begin_wide(d)
        carry = VOp(self.mf.new_vreg("P"))
        lo_b = self.part_of(b, 0)
        hi_b = self.part_of(b, 1)
        if negate_b:   # a - b = a + ~b + 1: the low half adds -b.lo, the high half ~b.hi + carry
            lo_b = self.negate(lo_b)
            hi_b = self.invert(self.reg_part(b, 1))
        self.emit("IADD3", (), [self.dst(d, 0), carry, self.reg_part(a, 0), lo_b, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [self.dst(d, 1), self.reg_part(a, 1), hi_b, RZ, carry, NOT_PT])

    def negate(self, op):
        if isinstance(op, VOp):
            return VOp(op.reg, op.part, neg=not op.neg)
        if isinstance(op, Imm):
            return Imm((-op.value) & 0xFFFFFFFF)
        if isinstance(op, Reg) and op.is_zero:
            return op
        if isinstance(op, ConstRef):
            return ConstRef(op.bank, op.offset, neg=not op.neg)
        raise self.unsupported("negating this operand")

    def invert(self, op):
        if isinstance(op, VOp):
            return VOp(op.reg, op.part, inv=not op.inv)
        if isinstance(op, Reg) and op.is_zero:
            return Imm(0xFFFFFFFF)
        raise self.unsupported("inverting this operand")

    def sel_mul(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.float_binary(ins, "FMUL")
        mode = next((m for m in ins.modifiers if m in ("lo", "hi", "wide")), "lo")
        a, b = self.two_sources(ins)
        d = ins.dests[0]
        unsigned = ("U32",) if not _signed(ty) else ()
        bits = _bits(ty)
        if bits == 64 and mode == "lo":
            return self.mul64(d, a, b, None)
        if bits > 32:
            raise self.unsupported(f"`mul.{mode}.{ty}`")
        if bits < 32 and mode != "lo":
            a, b = self.extend(a, ty), self.extend(b, ty)
            if mode == "wide":
                self.emit("IMAD", (), [self.dst(d), self.as_reg(a), b, RZ])
                return
            raise self.unsupported(f"`mul.hi.{ty}`")
        ra, sb = self.reg_part(a), self.part_of(b, 0)
        if mode == "lo":
            self.imad((), self.dst(d), ra, sb, RZ)
        elif mode == "hi":
            self.emit("IMAD", ("HI",) + unsigned, [self.dst(d), ra, sb, RZ])
        else:
            self.emit("IMAD", ("WIDE",) + unsigned, [self.dst(d), ra, sb, RZ])

    def imad(self, mods, d, a, b, c) -> None:
        """IMAD d = a * b + c; a zero factor has no IMAD form, and needs none."""
        if isinstance(b, Reg) and b.is_zero or isinstance(a, Reg) and a.is_zero:
            self.emit("IADD3", (), [d, self.as_reg(c) if not isinstance(c, Reg) else c, RZ, RZ])
            return
        self.emit("IMAD", mods, [d, a, b, c])

    def as_reg(self, op):
        if isinstance(op, Imm):
            t = VOp(self.mf.new_vreg())
            self.move(t, op)
            return t
        return op

    def mul64(self, d, a, b, c) -> None:
        """64-bit multiply(-add) from 32-bit pieces: lo*lo wide, plus both cross products
        into the high half."""
        self.begin_wide(d)
        t = VOp(self.mf.new_vreg("R", 2))
        acc = RZ if c is None else VOp(self.vreg(c)) if isinstance(c, ir.Value) else None
        if acc is None:
            raise self.unsupported("`mad.lo.64` with an immediate addend")
        self.emit("IMAD", ("WIDE", "U32"), [t, self.reg_part(a, 0), self.part_of(b, 0), acc])
        hi = VOp(self.mf.new_vreg())
        self.imad((), hi, self.reg_part(a, 0), self.part_of(b, 1), VOp(t.reg, 1))
        self.imad((), self.dst(d, 1), self.reg_part(a, 1), self.part_of(b, 0), hi)
        self.emit("MOV", (), [self.dst(d, 0), VOp(t.reg, 0)])

    def sel_mad(self, ins):
        ty = ins.type
        if _is_float(ty):
            return self.sel_fma(ins)
        mode = next((m for m in ins.modifiers if m in ("lo", "hi", "wide")), "lo")
        if "sat" in ins.modifiers or "cc" in ins.modifiers:
            raise self.unsupported("`mad` with carry or saturation")
        a, b, c = ins.srcs
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        d = ins.dests[0]
        bits = _bits(ty)
        unsigned = ("U32",) if not _signed(ty) else ()
        if bits == 64 and mode == "lo":
            return self.mul64(d, a, b, c)
        if bits != 32:
            raise self.unsupported(f"`mad.{mode}.{ty}`")
        ra, sb = self.reg_part(a), self.part_of(b, 0)
        if mode == "wide":
            self.emit("IMAD", ("WIDE",) + unsigned, [self.dst(d), ra, sb, self.wide_reg(c)])
        elif mode == "hi":
            self.emit("IMAD", ("HI",) + unsigned, [self.dst(d), ra, sb, self.reg_part(c)])
        else:
            self.imad((), self.dst(d), ra, sb, self.reg_part(c))

    def wide_reg(self, op):
        if isinstance(op, ir.Value):
            return VOp(self.vreg(op))
        if isinstance(op, ir.Const) and op.value == 0:
            return RZ
        t = self.mf.new_vreg("R", 2)
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        for k in range(2):
            self.move(VOp(t, k), self.part_of(op, k))
        return VOp(t)

    def sel_neg(self, ins):
        ty = ins.type
        d, a = ins.dests[0], ins.srcs[0]
        if _is_float(ty):
            if _bits(ty) != 32:
                raise self.unsupported(f"`neg.{ty}`")
            mods = ("FTZ",) if "ftz" in ins.modifiers else ()
            self.emit("FADD", mods, [self.dst(d), self.negate(self.reg_part(a)), Reg("R", 255, neg=True)])
            return
        self.int_add(d, ir.Const(0, ty), a, negate_b=True) if _bits(ty) == 64 else \
            self.emit("IADD3", (), [self.dst(d), self.negate(self.reg_part(a)), RZ, RZ])

    def sel_min(self, ins):
        self.min_max(ins, PT)

    def sel_max(self, ins):
        self.min_max(ins, NOT_PT)

    def min_max(self, ins, which: Reg):
        ty = ins.type
        if _is_float(ty):
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        if _bits(ty) > 32:
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        a, b = self.two_sources(ins)
        mods = () if _signed(ty) else ("U32",)
        self.emit("IMNMX", mods, [self.dst(ins.dests[0]), self.as_reg(self.extend(a, ty)),
                                  self.extend(b, ty), which])

    # ------------------------------------------------------------------ logic and shifts
    def sel_and(self, ins):
        self.logic(ins, "and")

    def sel_or(self, ins):
        self.logic(ins, "or")

    def sel_xor(self, ins):
        self.logic(ins, "xor")

    def logic(self, ins, op: str):
        d = ins.dests[0]
        r = self.vreg(d)
        a, b = self.two_sources(ins)
        if r.cls == "P":
            pa, pb = self.pred_operand(a), self.pred_operand(b)
            self.emit("PLOP3", ("LUT",), [VOp(r), PT, pa, pb, PT, Imm(LUT[op]), Imm(0)])
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("LOP3", ("LUT",), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), RZ,
                                         Imm(LUT[op]), NOT_PT])

    def pred_operand(self, op):
        if isinstance(op, ir.Value):
            return VOp(self.vreg(op))
        if isinstance(op, ir.Const):
            return PT if op.value else Reg("P", 7, inv=True)
        raise self.unsupported("this predicate operand")

    def sel_not(self, ins):
        d, a = ins.dests[0], ins.srcs[0]
        r = self.vreg(d)
        if r.cls == "P":
            self.emit("PLOP3", ("LUT",), [VOp(r), PT, self.pred_operand(a), PT, PT, Imm(0x08), Imm(0)])
            return
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("LOP3", ("LUT",), [self.dst(d, k), RZ, self.reg_part(a, k), RZ, Imm(0x33), NOT_PT])

    def sel_shl(self, ins):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        if _bits(ins.type) == 64:
            return self.shift64(ins, left=True)
        self.emit("SHF", ("L", "U32"), [self.dst(d), self.reg_part(a), self.shift_amount(n, 32), RZ])

    def shift_amount(self, n, limit: int):
        if isinstance(n, ir.Const):
            return Imm(min(n.value & 0xFFFFFFFF, limit))
        return self.part_of(n, 0)

    def sel_shr(self, ins):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        ty = ins.type
        if _bits(ty) == 64:
            return self.shift64(ins, left=False)
        mode = ("S32",) if _signed(ty) else ("U32",)
        src = self.as_reg(self.extend(a, ty))
        self.emit("SHF", ("R",) + mode + ("HI",), [self.dst(d), RZ, self.shift_amount(n, 32), src])

    def shift64(self, ins, left: bool):
        d, a, n = ins.dests[0], ins.srcs[0], ins.srcs[1]
        if not isinstance(n, ir.Const):
            raise self.unsupported(f"64-bit `{ins.opcode}` by a register amount")
        s = n.value & 0xFFFFFFFF
        signed = _signed(ins.type)
        self.begin_wide(d)
        lo, hi = self.reg_part(a, 0), self.reg_part(a, 1)
        if s == 0:
            self.move(self.dst(d, 0), lo)
            self.move(self.dst(d, 1), hi)
        elif left and s < 32:
            self.emit("SHF", ("L", "U64", "HI"), [self.dst(d, 1), lo, Imm(s), hi])
            self.emit("SHF", ("L", "U32"), [self.dst(d, 0), lo, Imm(s), RZ])
        elif left:
            self.emit("SHF", ("L", "U32"), [self.dst(d, 1), lo, Imm(min(s - 32, 32)), RZ])
            self.move(self.dst(d, 0), RZ)
        elif s < 32:
            self.emit("SHF", ("R", "U64"), [self.dst(d, 0), lo, Imm(s), hi])
            self.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [self.dst(d, 1), RZ, Imm(s), hi])
        else:
            mode = "S32" if signed else "U32"
            self.emit("SHF", ("R", mode, "HI"), [self.dst(d, 0), RZ, Imm(min(s - 32, 32)), hi])
            if signed:
                self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1f), hi])
            else:
                self.move(self.dst(d, 1), RZ)

    def sel_shf(self, ins):
        d, a, b, c = ins.dests[0], *ins.srcs
        left = "l" in ins.modifiers
        wrap = ("W",) if "wrap" in ins.modifiers else ()
        mods = ("L",) + wrap + ("U32", "HI") if left else ("R",) + wrap + ("U32",)
        self.emit("SHF", mods, [self.dst(d), self.reg_part(a), self.part_of(c, 0), self.reg_part(b)])

    def sel_prmt(self, ins):
        if any(m in ins.modifiers for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")):
            raise self.unsupported(f"`prmt.{'.'.join(ins.modifiers)}`")
        d, a, b, c = ins.dests[0], *ins.srcs
        self.emit("PRMT", (), [self.dst(d), self.reg_part(a), self.part_of(c, 0), self.reg_part(b)])

    def sel_popc(self, ins):
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`popc.{ins.type}`")
        self.emit("POPC", (), [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])

    def sel_brev(self, ins):
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`brev.{ins.type}`")
        self.emit("BREV", (), [self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])])

    def sel_clz(self, ins):
        if _bits(ins.type) != 32:
            raise self.unsupported(f"`clz.{ins.type}`")
        t = VOp(self.mf.new_vreg())
        self.emit("FLO", ("U32",), [t, self.reg_part(ins.srcs[0])])
        self.emit("IADD3", (), [self.dst(ins.dests[0]), self.negate(t), Imm(0x1f), RZ])

    # ------------------------------------------------------------------ compare and select
    def sel_setp(self, ins):
        ty = ins.type
        cmp = next(m for m in ins.modifiers if m in INT_COMPARE or m in FLOAT_COMPARE)
        boolop = next((m for m in ins.modifiers if m in BOOL_OPS), None)
        combine = self.pred_operand(ins.srcs[2]) if boolop else PT
        bool_mod = BOOL_OPS.get(boolop, "AND")
        dests = [VOp(self.vreg(v)) for v in ins.dests]
        second = dests[1] if len(dests) > 1 else PT
        a, b = ins.srcs[0], ins.srcs[1]
        if _is_float(ty):
            if _bits(ty) == 64:
                raise self.unsupported("`setp.f64`")
            if _bits(ty) != 32:
                raise self.unsupported(f"`setp.{ty}`")
            ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
            if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
                raise self.unsupported("`setp` with an immediate first operand")
            self.emit("FSETP", (FLOAT_COMPARE[cmp],) + ftz + (bool_mod,),
                      [dests[0], second, self.reg_part(a), self.fsrc(b), combine], ndefs=2)
            return
        if cmp not in INT_COMPARE:
            raise self.unsupported(f"`setp.{cmp}.{ty}`")
        op, unsigned = INT_COMPARE[cmp]
        unsigned = unsigned if unsigned is not None else not _signed(ty)
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
            op = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE"}.get(op, op)
        if _bits(ty) == 64:
            if len(dests) > 1:
                raise self.unsupported("64-bit `setp` with two results")
            lo = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", (op, "U32", "AND"), [lo, PT, self.reg_part(a, 0), self.part_of(b, 0), PT],
                      ndefs=2)
            self.emit("ISETP", (op,) + (("U32",) if unsigned else ()) + (bool_mod, "EX"),
                      [dests[0], PT, self.reg_part(a, 1), self.part_of(b, 1), combine, lo], ndefs=2)
            return
        a_ext, b_ext = self.extend(a, ty), self.extend(b, ty)
        self.emit("ISETP", (op,) + (("U32",) if unsigned else ()) + (bool_mod,),
                  [dests[0], second, self.as_reg(a_ext), b_ext, combine], ndefs=2)

    def sel_selp(self, ins):
        d = ins.dests[0]
        a, b, p = ins.srcs
        r = self.vreg(d)
        cond = self.pred_operand(p)
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
            cond = VOp(cond.reg, inv=not cond.inv) if isinstance(cond, VOp) else Reg("P", 7, inv=not cond.inv)
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            self.emit("SEL", (), [self.dst(d, k), self.reg_part(a, k), self.part_of(b, k), cond])

    # ------------------------------------------------------------------ floating point
    def float_mods(self, ins) -> tuple[str, ...]:
        mods = []
        if "ftz" in ins.modifiers:
            mods.append("FTZ")
        rnd = next((ROUNDING[m] for m in ins.modifiers if m in ROUNDING), None)
        if rnd:
            mods.append(rnd)
        if "sat" in ins.modifiers:
            mods.append("SAT")
        return tuple(mods)

    def float_binary(self, ins, opcode: str, negate_b: bool = False):
        ty = ins.type
        bits = _bits(ty)
        if ty != "f32" and ty != "f64":
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        a, b = ins.srcs[0], ins.srcs[1]
        if not negate_b and isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        d = ins.dests[0]
        if bits == 64:
            dop = {"FADD": "DADD", "FMUL": "DMUL"}[opcode]
            sb = self.wide_reg(b)
            if negate_b:
                sb = self.negate(sb) if isinstance(sb, VOp) else sb
            mods = tuple(m for m in self.float_mods(ins) if m != "FTZ")
            self.emit(dop, mods, [self.dst(d), self.wide_reg(a), sb])
            return
        sb = self.fsrc(b)
        if negate_b:
            sb = self.negate_float(sb)
        self.emit(opcode, self.float_mods(ins), [self.dst(d), self.reg_part(a), sb])

    def negate_float(self, op):
        if isinstance(op, Imm):
            return Imm(op.value, op.text, neg=not op.neg) if op.text is not None else self.negate(op)
        if isinstance(op, Reg) and op.is_zero:
            return Reg("R", 255, neg=True)
        return self.negate(op)

    def sel_fma(self, ins):
        ty = ins.type
        a, b, c = ins.srcs
        d = ins.dests[0]
        if ty == "f64":
            mods = tuple(m for m in self.float_mods(ins) if m != "FTZ")
            self.emit("DFMA", mods, [self.dst(d), self.wide_reg(a), self.wide_reg(b), self.wide_reg(c)])
            return
        if ty != "f32":
            raise self.unsupported(f"`{ins.opcode}.{ty}`")
        if isinstance(a, ir.Const) and not isinstance(b, ir.Const):
            a, b = b, a
        self.emit("FFMA", self.float_mods(ins), [self.dst(d), self.reg_part(a), self.fsrc(b),
                                                 self.fsrc(c, allow_imm=False)])

    def sel_copysign(self, ins):
        if ins.type != "f32":
            raise self.unsupported(f"`copysign.{ins.type}`")
        # copysign(a, b): the sign of a, the rest of b (LUT: a ? c : b over (b, imm, a)).
        a, b = self.reg_part(ins.srcs[0]), self.reg_part(ins.srcs[1])
        self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]), b, Imm(0x80000000), a, Imm(0xB8), NOT_PT])

    def sel_mul24(self, ins):
        if "lo" not in ins.modifiers:
            raise self.unsupported(f"`mul24.{'.'.join(ins.modifiers)}.{ins.type}`")
        a, b = ins.srcs
        ext = []
        for v in (a, b):
            t = VOp(self.mf.new_vreg())
            if _signed(ins.type):
                self.emit("SGXT", (), [t, self.reg_part(v), Imm(24)])
            else:
                self.emit("LOP3", ("LUT",), [t, self.reg_part(v), Imm(0xFFFFFF), RZ, Imm(LUT["and"]), NOT_PT])
            ext.append(t)
        self.emit("IMAD", (), [self.dst(ins.dests[0]), ext[0], ext[1], RZ])

    def sel_abs(self, ins):
        ty = ins.type
        d, a = ins.dests[0], ins.srcs[0]
        if ty == "f32":
            src = self.reg_part(a)
            self.emit("FADD", ("FTZ",) if "ftz" in ins.modifiers else (),
                      [self.dst(d), VOp(src.reg, src.part, abs=True), Reg("R", 255, neg=True)])
            return
        if _bits(ty) == 32:
            self.emit("IABS", (), [self.dst(d), self.reg_part(a)])
            return
        raise self.unsupported(f"`abs.{ty}`")

    # ------------------------------------------------------------------ MUFU approximations
    # ptxas's range handling around the multi-function unit: inputs that MUFU would flush
    # (subnormals, huge values) are scaled first and the result corrected after, unless
    # the PTX asked for .ftz.
    def fimm(self, x: float) -> Imm:
        return parse_operand(float_text(x))

    def mufu(self, func: str, d: VOp, x) -> None:
        self.emit("MUFU", (func,), [d, x])

    def guarded(self, p: VOp, negate: bool, opcode, mods, operands) -> None:
        mi = self.emit(opcode, mods, operands)
        if self.guard is not None:
            raise self.unsupported(f"guarded `{self.ins.opcode}`")
        mi.guard = VOp(p.reg, inv=negate)

    def scaled_input(self, x: VOp, threshold, compare: str, scale) -> tuple[VOp, VOp]:
        """p = (x cmp threshold); where !p, x' = x * scale (else x' = x)."""
        p = VOp(self.mf.new_vreg("P"))
        self.emit("FSETP", (compare, "AND"), [p, PT, x, threshold, PT], ndefs=2)
        xs = VOp(self.mf.new_vreg())
        self.emit(COPY, (), [xs, x], guarded=False)
        self.guarded(p, True, "FMUL", (), [xs, xs, scale])
        return p, xs

    FLT_MIN = 1.1754943508222875e-38

    def sel_ex2(self, ins):
        self.approx_check(ins)
        d, x = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])
        if "ftz" in ins.modifiers:
            return self.mufu("EX2", d, x)
        p, xs = self.scaled_input(x, self.fimm(-126.0), "GEU", self.fimm(0.5))
        r = VOp(self.mf.new_vreg())
        self.mufu("EX2", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FMUL", (), [d, r, r])

    def sel_lg2(self, ins):
        self.approx_check(ins)
        d, x = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])
        if "ftz" in ins.modifiers:
            return self.mufu("LG2", d, x)
        p, xs = self.scaled_input(VOp(x.reg, x.part, abs=True), self.fimm(self.FLT_MIN), "GEU",
                                  self.fimm(16777216.0))
        self.fix_abs_copy(xs, x)
        r = VOp(self.mf.new_vreg())
        self.mufu("LG2", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FADD", (), [d, r, self.fimm(-24.0)])

    def fix_abs_copy(self, xs: VOp, x: VOp) -> None:
        """scaled_input copied |x| as a register: make that copy read plain x."""
        for mi in self.out:
            if mi.opcode == COPY and mi.operands[0] == xs:
                mi.operands[1] = x

    def sel_sqrt(self, ins):
        if "approx" not in ins.modifiers or ins.type != "f32":
            raise self.unsupported(f"`sqrt.{'.'.join(ins.modifiers)}.{ins.type}`")
        d, x = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])
        if "ftz" in ins.modifiers:
            return self.mufu("SQRT", d, x)
        p, xs = self.scaled_input(VOp(x.reg, x.part, abs=True), self.fimm(self.FLT_MIN), "GEU",
                                  self.fimm(16777216.0))
        self.fix_abs_copy(xs, x)
        r = VOp(self.mf.new_vreg())
        self.mufu("SQRT", r, xs)
        self.emit(COPY, (), [d, r], guarded=False)
        self.guarded(p, True, "FMUL", (), [d, r, self.fimm(0.000244140625)])

    def sel_sin(self, ins):
        self.trig(ins, "SIN")

    def sel_cos(self, ins):
        self.trig(ins, "COS")

    def trig(self, ins, func: str):
        self.approx_check(ins)
        t = VOp(self.mf.new_vreg())
        self.emit("FMUL", ("RZ",), [t, self.reg_part(ins.srcs[0]), self.fimm(0.15915493667125701904)])
        self.mufu(func, self.dst(ins.dests[0]), t)

    def sel_tanh(self, ins):
        self.approx_check(ins)
        self.mufu("TANH", self.dst(ins.dests[0]), self.reg_part(ins.srcs[0]))

    def sel_rcp(self, ins):
        self.approx_check(ins)
        d, x = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0])
        if "ftz" in ins.modifiers:
            return self.mufu("RCP", d, x)
        # scale = |x| < FLT_MIN ? 2^24 : (|x| > 2^126 ? 0.25 : 1); rcp(x) = rcp(x*scale)*scale
        big = VOp(self.mf.new_vreg())
        self.move(big, Imm(0x4B800000))
        small_ok, huge = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        xa = VOp(x.reg, x.part, abs=True)
        self.emit("FSETP", ("GEU", "AND"), [small_ok, PT, xa, self.fimm(self.FLT_MIN), PT], ndefs=2)
        self.emit("FSETP", ("GT", "AND"), [huge, PT, xa, self.fimm(8.50705917302346158658e+37), PT], ndefs=2)
        s1, s2 = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("FSEL", (), [s1, big, self.fimm(1.0), VOp(small_ok.reg, inv=True)])
        self.emit("FSEL", (), [s2, s1, self.fimm(0.25), VOp(huge.reg, inv=True)])
        xs, r = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("FMUL", (), [xs, x, s2])
        self.mufu("RCP", r, xs)
        self.emit("FMUL", (), [d, s2, r])

    def sel_div(self, ins):
        if ins.type != "f32" or "approx" not in ins.modifiers:
            raise self.unsupported(f"`div.{'.'.join(ins.modifiers)}.{ins.type}`")
        d, a, b = self.dst(ins.dests[0]), self.reg_part(ins.srcs[0]), self.reg_part(ins.srcs[1])
        p = VOp(self.mf.new_vreg("P"))
        self.emit("FSETP", ("GEU", "AND"), [p, PT, VOp(b.reg, b.part, abs=True), self.fimm(self.FLT_MIN), PT],
                  ndefs=2)
        bs, as_ = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit(COPY, (), [bs, b], guarded=False)
        self.emit(COPY, (), [as_, a], guarded=False)
        self.guarded(p, True, "FMUL", (), [bs, bs, self.fimm(16777216.0)])
        self.guarded(p, True, "FMUL", (), [as_, as_, self.fimm(16777216.0)])
        r = VOp(self.mf.new_vreg())
        self.mufu("RCP", r, bs)
        self.emit("FMUL", (), [d, r, as_])

    def approx_check(self, ins):
        if ins.type != "f32":
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}.{ins.type}`")
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}`")

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

    # ------------------------------------------------------------------ conversions
    def sel_cvt(self, ins):
        dty, sty = ins.type, ins.types[0]
        d, a = ins.dests[0], ins.srcs[0]
        if any(m == "sat" for m in ins.modifiers):
            if dty == "u32" and sty == "s32":      # clamp negatives to zero
                a32 = self.reg_part(a)
                p = VOp(self.mf.new_vreg("P"))
                self.emit("ISETP", ("LT", "AND"), [p, PT, a32, RZ, PT], ndefs=2)
                self.emit("SEL", (), [self.dst(d), a32, RZ, VOp(p.reg, inv=True)])
                return
            raise self.unsupported(f"`cvt.sat.{dty}.{sty}`")
        if not _is_float(dty) and not _is_float(sty):
            return self.int_convert(d, a, dty, sty)
        rnd = next((m for m in ins.modifiers if m in FRND_MODE or m in ROUNDING), None)
        ftz = ("FTZ",) if "ftz" in ins.modifiers else ()
        if dty == "f32" and sty == "f32":
            if rnd in FRND_MODE:
                mode = FRND_MODE[rnd]
                self.emit("FRND", ftz + ((mode,) if mode else ()), [self.dst(d), self.reg_part(a)])
                return
            self.emit("FADD", ftz, [self.dst(d), self.reg_part(a), Reg("R", 255, neg=True)])
            return
        if sty == "f32" and not _is_float(dty) and _bits(dty) in (16, 32):
            mode = F2I_MODE.get(rnd if rnd in FRND_MODE else None)
            signed = {"u32": ("U32",), "s32": (), "u16": ("U16",), "s16": ("S16",)}[
                dty.replace("b", "u")]
            self.emit("F2I", signed + ftz + ((mode,) if mode else ()) + ("NTZ",),
                      [self.dst(d), self.reg_part(a)])
            return
        if dty == "f32" and not _is_float(sty) and _bits(sty) == 32:
            signed = () if _signed(sty) else ("U32",)
            r = ROUNDING.get(rnd) if rnd in ROUNDING else None
            self.emit("I2F", signed + ((r,) if r else ()), [self.dst(d), self.reg_part(a)])
            return
        if dty == "f64" and sty == "f32":
            self.emit("F2F", ("F64", "F32"), [self.dst(d), self.reg_part(a)])
            return
        raise self.unsupported(f"`cvt.{dty}.{sty}`")

    def int_convert(self, d: ir.Value, a, dty: str, sty: str) -> None:
        db, sb = _bits(dty), _bits(sty)
        if db == 64:
            self.begin_wide(d)
            if sb == 64:
                self.move(self.dst(d, 0), self.part_of(a, 0))
                self.move(self.dst(d, 1), self.part_of(a, 1))
                return
            lo = self.extend(a, sty)
            self.move(self.dst(d, 0), lo)
            if _signed(sty):
                self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1f), self.as_reg(lo)])
            else:
                self.move(self.dst(d, 1), RZ)
            return
        if db > sb:
            src = self.extend(a, sty)
        else:
            src = self.part_of(a, 0)
        if isinstance(src, VOp) and self.guard is None:
            self.emit(COPY, (), [self.dst(d), src], guarded=False)
        else:
            self.move(self.dst(d), src)


def select_function(fn: ir.Function, arch_info, filename: str | None = None) -> MFunction:
    return Selector(fn, arch_info, filename).run()
