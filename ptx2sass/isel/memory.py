"""Loads, stores, addresses, atomics, barriers and warp-wide operations.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import barrier_routine, ir, slow_paths
from ptx2sass.errors import CompileError
from ptx2sass.fences import (ACQUIRE_INVALIDATION, CLUSTER_ERROR_BARRIER, ERROR_BARRIER, acquire_fences,
                              release_fences)
from ptx2sass.encoder.model import ConstRef, Imm, Label, Mem, Reg, Reloc, SpecialReg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MInstr, VMem, VOp, VReg
from ptx2sass.isel.common import CBANK_SPECIALS, NOT_PT, PT, RZ, _bits, _signed, _size_modifier
from ptx2sass.variables import Placement
from ptx2sass.isel.warp_aggregated_atomics import warp_combination
from ptx2sass.opt.address import CP_ASYNC_OFFSET_LIMITS

SP = Reg("R", 1)     # the stack pointer: local variables are at fixed offsets above it


class MemorySelection:
    # ------------------------------------------------------------------ data movement
    def sel_undef(self, ins):
        self.emit(IMPLICIT_DEF, (), [VOp(self.vreg(ins.dests[0]))], guarded=False)

    def sel_stacksave(self, ins):
        """The stack pointer at the bottom of the static frame, where the dynamic stack
        (alloca) starts (frontend/to_ssa.py keeps the dynamic pointer in a register)."""
        self.move(self.dst(ins.dests[0]), SP)

    def sel_mov(self, ins):
        d, src = ins.dests[0], ins.srcs[0]
        r = self.vreg(d)
        if r.cls == "P":
            if isinstance(src, ir.Value):
                self.emit("PLOP3", ("LUT",), [VOp(r), PT, VOp(self.vreg(src)), PT, PT, Imm(0x80), Imm(0)])
            elif isinstance(src, ir.Const):
                self.emit("PLOP3", ("LUT",), [VOp(r), PT, PT, PT, PT, Imm(0xFF if src.value else 0), Imm(0)])
            elif isinstance(src, ir.SpecialReg) and src.name == "%is_explicit_cluster":
                self.explicit_cluster(VOp(r))                     # isel/special_regs.py
            else:
                raise self.unsupported("`mov` of this predicate operand")
            return
        if isinstance(src, ir.Symbol):
            return self.address_value(d, src)
        if isinstance(src, ir.SpecialReg) and src.name in CBANK_SPECIALS and self.guard is None \
                and r.width == 1:         # %ntid & co. live in constant bank 0: read in place
            start = len(self.out)
            self.move(VOp(r), self.special(src))
            return self.note_param_value(d, [self.special(src)], self.out[start:])
        if len(ins.srcs) > 1 and len(ins.dests) == len(ins.srcs):     # vector to vector
            for dv, sv in zip(ins.dests, ins.srcs):
                self.copy_value(dv, sv)
            return
        if len(ins.srcs) > 1:
            return self.pack(d, ins.srcs)
        if len(ins.dests) > 1:
            return self.unpack(ins.dests, src)
        if r.width > 1:
            self.begin_wide(d)
        for k in range(r.width):
            s = self.part_of(src, k)
            if isinstance(src, ir.Value) and self.guard is None and r.width == 1:
                self.emit(COPY, (), [VOp(r), s], guarded=False)
            else:
                self.move(self.dst(d, k), s)

    def pack(self, d: ir.Value, elems) -> None:
        """`mov.b32 d, {a, b}` (two 16-bit halves), `mov.b64 d, {a, b}` (two words) or
        `mov.b64 d, {a, b, c, d}` (four halves), the first element in the low bits."""
        r = self.vreg(d)
        n = len(elems)
        if r.width == 2 and n == 2:
            self.begin_wide(d)
            for k in range(2):
                word = self.part_of(elems[k], 0)
                if isinstance(word, VOp):     # a copy the allocator may give one register
                    self.copy_reg(self.dst(d, k), word)
                else:
                    self.move(self.dst(d, k), word)
            return
        if r.width == 1 and n == 2:
            self.emit("PRMT", (), [self.dst(d), self.reg_part(elems[0]), Imm(0x5410),
                                   self.reg_part(elems[1])])
            return
        if r.width == 2 and n == 4:       # `mov.b64 d, {a, b, c, d}` of four 16-bit values
            self.begin_wide(d)
            for k in range(2):
                self.emit("PRMT", (), [self.dst(d, k), self.reg_part(elems[2 * k]), Imm(0x5410),
                                       self.reg_part(elems[2 * k + 1])])
            return
        if r.width > 2 and r.width % n == 0:   # `mov.b128 d, {a, b}` (or four words): part by part
            per = r.width // n
            self.begin_wide(d)
            for k in range(n):
                for j in range(per):
                    word = self.part_of(elems[k], j)
                    if isinstance(word, VOp):
                        self.copy_reg(self.dst(d, k * per + j), word)
                    else:
                        self.move(self.dst(d, k * per + j), word)
            return
        raise self.unsupported(f"`mov` packing {n} elements into {d.type}")

    def unpack(self, dests, src) -> None:
        """`mov.b32 {a, b}, r` / `mov.b64 {a, b(, c, d)}, r`: the source's fields, first
        in the low bits."""
        bits = _bits(dests[0].type)
        if bits == 64 and isinstance(src, ir.Value):   # `mov.b128 {a, b}, q`: word by word
            for k, d in enumerate(dests):
                self.begin_wide(d)
                for j in range(2):
                    self.copy_reg(self.dst(d, j), self.part_of(src, 2 * k + j))
            return
        if bits not in (16, 32) or not isinstance(src, (ir.Value, ir.Const)):
            raise self.unsupported(f"`mov` unpacking into {len(dests)} x {dests[0].type}")
        for k, d in enumerate(dests):
            if isinstance(src, ir.Const):      # a constant's fields are constants
                field = src.value >> (k * bits) & ((1 << bits) - 1)
                if _signed(d.type) and field >> (bits - 1):
                    field -= 1 << bits
                self.move(VOp(self.vreg(d)), self.imm32(field) if field else RZ)
                continue
            word = self.part_of(src, (k * bits) // 32)
            if bits == 32:
                self.copy_reg(VOp(self.vreg(d)), word)
            else:       # PRMT reads its first source from a register (a parameter too)
                word = word if isinstance(word, VOp) else self.reg_part(src, (k * bits) // 32)
                self.extract_field(d, word, ((k * bits) % 32) // 8, bits, dests[0].type)

    def param_const(self, addr: ir.Address, part: int) -> ConstRef:
        sym = addr.base
        p = self.params.get(sym.name) if isinstance(sym, ir.Symbol) else None
        if p is None:
            raise self.unsupported("`ld.param` of a non-kernel parameter")
        return ConstRef(0, self.arch.param_base + p.offset + sym.offset + addr.offset + 4 * part)

    # ------------------------------------------------------------------ variables and addresses
    # c[0x0][...]: the 64-bit generic address where each window starts (cvta adds/subtracts
    # it); the local window's word moves per target (`Target.local_window_offset`)
    WINDOW_BASE = {"shared": 0x18, "local": None}

    def window_base(self, space: str) -> int:
        return self.arch.local_window_offset if space == "local" else self.WINDOW_BASE[space]

    def placement(self, sym: ir.Symbol):
        p = self.placements.get(sym.name)
        if p is None and sym.name in self.params and self.fn.is_entry:
            # A kernel parameter's address in the .param window: its offset among the
            # parameters (ptxas's `mov.u64 %rd, param`: 8 for the second u64; its bank-0
            # word is at param_base more, what an LDC through the address adds)
            return Placement("param", self.params[sym.name].offset)
        if p is None:
            what = "parameter" if sym.name in self.params else "symbol"
            raise self.unsupported(f"the address of {what} `{sym.name}`")
        return p

    def global_address(self, slot: int | str, function: bool = False) -> VReg:
        """A `.global` variable's 64-bit address, read from its constant-bank-4 slot; in
        relocatable output (`slot` a symbol name) the halves the linker fills,
        `MOV r, 32@lo(sym)` and `MOV r+1, 32@hi(sym)`."""
        t = self.new_pair()
        for k in range(2):
            if isinstance(slot, str):
                self.emit("MOV", (), [VOp(t.reg, k), Reloc("hi" if k else "lo", slot, function=function)],
                          guarded=False)
            else:
                self.move(VOp(t.reg, k), ConstRef(4, 8 * slot + 4 * k))
        return t.reg

    CLUSTER_RANK_SHIFT = 24      # sm_90: a shared address's CTA rank in its cluster

    def window_location(self, p, offset: int):
        """(base register or None, byte offset) of a shared/const/local variable + offset in
        its window: local variables sit above the stack pointer; on targets whose shared
        addresses are cluster addresses, shared ones above the CTA's rank (`shared_rank`)."""
        if p.space == "local":
            return SP, p.value + offset
        if p.space == "shared" and p.symbol is not None:
            # relocatable output: the linker's place for the variable (`MOV R, (sym)`,
            # R_CUDA_ABS32_32, as ptxas -c), past the reserved words (`p.value`)
            base = VOp(self.mf.new_vreg())
            self.emit("MOV", (), [base, Reloc("abs", p.symbol)], guarded=False)
            if self.arch.cluster_shared_addresses:
                ranked = VOp(self.mf.new_vreg())
                self.emit("IADD3", (), [ranked, base, self.shared_rank(), RZ])
                base = ranked
            return base, p.value + offset
        if p.space == "shared" and self.arch.cluster_shared_addresses:
            return self.shared_rank(), p.value + offset
        return None, p.value + offset

    def shared_rank(self) -> VOp:
        """A register holding SR_CgaCtaId << 24, computed once at the function's start (see
        `place_entry_values`)."""
        if getattr(self, "_shared_rank", None) is None:
            self._shared_rank = VOp(self.mf.new_vreg())
        return self._shared_rank

    def shared_window_high(self) -> VOp:
        """A register holding SR_SWINHI, the shared window's high word in the generic space,
        read once at the function's start (see `place_entry_values`; ptxas reads it once)."""
        if getattr(self, "_window_high", None) is None:
            self._window_high = VOp(self.mf.new_vreg())
        return self._window_high

    def place_entry_values(self) -> None:
        """Put the computations of `shared_rank` and `shared_window_high` first in the entry
        block, where anything used them."""
        entry = self.mf.blocks[0]
        high = getattr(self, "_window_high", None)
        if high is not None:
            entry.instrs[:0] = [MInstr("S2R", (), [high, SpecialReg("SR_SWINHI")], 1)]
        rank = getattr(self, "_shared_rank", None)
        if rank is None:
            return
        self.mf.shared_addresses = True
        t = VOp(self.mf.new_vreg())
        entry.instrs[:0] = [
            MInstr("S2R", (), [t, SpecialReg("SR_CgaCtaId")], 1),
            MInstr("SHF", ("L", "U32"), [rank, t, Imm(self.CLUSTER_RANK_SHIFT), RZ], 1)]

    def window_word(self, p, offset: int, into: VOp | None = None):
        """A 32-bit operand holding a window address (written into `into` when given)."""
        if p.symbol is not None and p.space == "const":
            # relocatable output: the variable's place in the bank is the linker's (ptxas -c:
            # `UMOV UR, (var)`, relocation 0x3b; the same relocation on a MOV here)
            base, off = VOp(self.mf.new_vreg()), offset
            self.emit("MOV", (), [base, Reloc("const", p.symbol)], guarded=False)
        else:
            base, off = self.window_location(p, offset)
        if base is not None and off:
            d = into or VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [d, base, self.imm32(off), RZ])
            return d
        src = base if base is not None else (self.imm32(off) if off else RZ)
        if into is not None:
            self.move(into, src)
            return into
        return src

    def add_wide(self, d: ir.Value, lo, hi, b_lo, b_hi) -> None:
        """d = {hi:lo} + {b_hi:b_lo} (64-bit, through the carry)."""
        self.begin_wide(d)
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [self.dst(d, 0), carry, lo, b_lo, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [self.dst(d, 1), hi, b_hi, RZ, carry, NOT_PT])

    def address_value(self, d: ir.Value, sym: ir.Symbol) -> None:
        """`mov d, var`: the variable's address in its own state space (a generic address
        for `.global`, a window offset for the others; 64-bit ones zero-extended). A
        function's address is its pointer value (ptx2sass.abi)."""
        if sym.name in self.pointers and self.pointers[sym.name] is not None:
            return self.copy_into(VOp(self.vreg(d)), ir.Const(self.pointers[sym.name] + sym.offset, d.type),
                                  d.type)
        # -g: a function in its own section; its address from relocations (ptx2sass.codegen.debug_pointers)
        p = Placement("global", sym.name) if sym.name in self.pointers else self.placement(sym)
        r = self.vreg(d)
        if p.space == "kernel":
            return self.kernel_address(d, p.value, sym.offset)
        if p.space == "global":
            if r.width != 2:
                raise self.unsupported("a 32-bit address of a .global variable")
            t = self.global_address(p.value, function=sym.name in self.pointers)
            if sym.offset:
                self.add_wide(d, VOp(t, 0), VOp(t, 1), self.imm32(sym.offset), self.imm32(sym.offset >> 32))
            else:
                self.copy_reg(VOp(r), VOp(t))
            return
        if r.width > 1:
            self.begin_wide(d)
        self.window_word(p, sym.offset, into=self.dst(d, 0))
        if r.width > 1:
            self.move(self.dst(d, 1), RZ)

    def kernel_address(self, d: ir.Value, kernel: str, offset: int) -> None:
        """`mov d, kernel` in relocatable output: the halves of the kernel's function
        descriptor, which the linker fills (ptxas -c: `32@lo(fun@fdesc(k))`, `32@hi(...)`,
        what a device-side launch passes to `cudaGetParameterBuffer`)."""
        r = self.vreg(d)
        if r.width != 2 or offset:
            raise self.unsupported(f"the address of kernel `{kernel}` other than as a 64-bit value")
        t = self.new_pair()
        for k in range(2):
            self.emit("MOV", (), [VOp(t.reg, k), Reloc("hi" if k else "lo", kernel, function_descriptor=True)],
                      guarded=False)
        self.copy_reg(VOp(r), VOp(t.reg))

    def copy_reg(self, d: VOp, s: VOp) -> None:
        if self.guard is None:
            self.emit(COPY, (), [d, s], guarded=False)
            return
        if d.width == 1:
            self.move(d, s)
            return
        for k in range(d.width):
            self.move(VOp(d.reg, (d.part or 0) + k), VOp(s.reg, (s.part or 0) + k))

    OFFSET_LIMIT = 1 << 23       # memory instructions take a signed 24-bit immediate offset

    def address(self, addr, space: str) -> VMem:
        """The memory operand of an access to `space`: `[R.64+imm]` for global/generic,
        `[R+imm]`, `[imm]` or `[R1+imm]` (local variables) for the 32-bit windows."""
        return self.near_offset(self.memory_operand(addr, space))

    # the uniform pair a kernel parameter's pointer is loaded into for one access (live
    # from its ULDC.64 to the access; UR4 is the descriptor's, which codegen re-emits)
    PARAM_ADDRESS_UR = Reg("UR", 16)

    def uniform_param_address(self, addr, space: str) -> Mem | None:
        """`[URx+imm]` for a generic/global access whose base is a kernel parameter's 64-bit
        pointer, on a target whose memory forms take a uniform base (`uniform_param_addresses`),
        after the `ULDC.64` that loads it; None where the access needs a vector base. The
        access must record the pair's width (`widths`) so liveness sees both registers."""
        if not (self.arch.uniform_param_addresses and space in ("global", "generic")):
            return None
        return self.param_pointer_address(addr)

    def param_pointer_address(self, addr) -> Mem | None:
        """`[URx+imm]` after the `ULDC.64 URx` of a kernel parameter's 64-bit pointer where
        `addr` is one (+ an offset), else None (see `uniform_param_address`)."""
        if not (isinstance(addr, ir.Address) and isinstance(addr.base, ir.Value)
                and -self.OFFSET_LIMIT <= addr.offset < self.OFFSET_LIMIT):
            return None
        parts = self.param_values.get(addr.base.id)
        if parts is None or len(parts) != 2 or parts[1].offset != parts[0].offset + 4:
            return None
        if not self.holds_uniform_pair(parts[0]):
            self.emit("ULDC", ("64",), [self.PARAM_ADDRESS_UR, parts[0]], guarded=False)
        return Mem(ubase=self.PARAM_ADDRESS_UR, offset=addr.offset)

    def holds_uniform_pair(self, where: ConstRef) -> bool:
        """Whether this block's code so far left PARAM_ADDRESS_UR holding `where` (its last
        write is the ULDC.64 of it, and no call came after)."""
        for mi in reversed(self.out):
            if mi.opcode == "CALL" or mi.clobbers:
                return False
            if self.PARAM_ADDRESS_UR in mi.operands[:mi.ndefs]:
                return mi.opcode == "ULDC" and mi.operands[1] == where
        return False

    def memory_operand(self, addr, space: str) -> VMem:
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"address operand {addr!r}")
        if space == "shared::cluster":
            return self.cluster_window_address(addr)
        wide = space in ("global", "generic")
        base = addr.base
        if isinstance(base, ir.Value):
            r = self.vreg(base)
            if wide:
                if r.width != 2:
                    raise self.unsupported(f"a 32-bit address in `{self.ins.opcode}.{space}`")
                return VMem(VOp(r), addr.offset, wide=True)
            return VMem(VOp(r, 0 if r.width > 1 else None), addr.offset, wide=False)
        if base is None:
            return VMem(None if addr.offset or wide else RZ, addr.offset, wide=wide)
        p = self.placement(base)
        if p.space == "global" and wide:
            return VMem(VOp(self.global_address(p.value)), base.offset + addr.offset, wide=True)
        if p.space == space and not wide:
            reg, off = self.window_location(p, base.offset + addr.offset)
            return VMem(RZ if reg is None and not off else reg, off, wide=False)
        raise self.unsupported(f"`{self.ins.opcode}.{space}` of the .{p.space} variable `{base.name}`")

    def cluster_window_address(self, addr) -> VMem:
        """A `.shared::cluster` access's address in the generic space: the 32-bit cluster
        address under SR_SWINHI, `[R.64+imm]` (LDS/STS/ATOMS reach only the CTA's own shared
        memory; ptxas 13.5 makes every such access a generic LD/ST/ATOM through this pair)."""
        if not self.arch.cluster_shared_addresses:
            raise self.unsupported(f"`{self.ins.opcode}.shared::cluster` on {self.arch.name}")
        offset = addr.offset
        if isinstance(addr.base, ir.Value):
            key = (self.current.name, addr.base.id)
        elif isinstance(addr.base, ir.Symbol) or addr.base is None:
            key, offset = None, 0
        else:
            raise self.unsupported(f"address operand {addr!r}")
        pairs = self.__dict__.setdefault("_cluster_pairs", {})    # one pair a base and block
        pair = pairs.get(key)
        if pair is None or self.guard is not None:
            low = self.reg_part(addr.base) if key else self.cluster_address_reg(addr)
            pair = self.new_pair()
            self.move(VOp(pair.reg, 0), low)
            self.move(VOp(pair.reg, 1), self.shared_window_high())
            if key and self.guard is None:
                pairs[key] = pair
        return VMem(pair, offset, wide=True, suffix64=False, described=False)

    def near_offset(self, mem: VMem) -> VMem:
        """An offset beyond the immediate's reach is added to the base first."""
        if -self.OFFSET_LIMIT <= mem.offset < self.OFFSET_LIMIT:
            return mem
        return self.offset_added(mem)

    def offset_within(self, mem: VMem, limit: int) -> VMem:
        """`mem` for an immediate of signed `limit` reach (LDGSTS's are narrower than the
        loads' and stores'): a wider offset is added to the base first."""
        return mem if -limit <= mem.offset < limit else self.offset_added(mem)

    def offset_added(self, mem: VMem) -> VMem:
        """The same address with its offset added into a (new) base register."""
        if not mem.offset:
            return mem
        off = mem.offset & 0xFFFFFFFFFFFFFFFF
        if not mem.wide:
            t = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [t, mem.base if mem.base is not None else RZ, self.imm32(off), RZ])
            return VMem(t, 0, wide=False)
        t = self.mf.new_vreg("R", 2)
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        lo, hi = (VOp(mem.base.reg, 0), VOp(mem.base.reg, 1)) if mem.base is not None else (RZ, RZ)
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(t, 0), carry, lo, self.imm32(off), RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(t, 1), hi, self.imm32(off >> 32), RZ, carry, NOT_PT])
        return VMem(VOp(t), 0, wide=True)

    def access_space(self, ins) -> str:
        """The window an access goes to: a generic access naming a variable goes to the
        variable's own space, as ptxas compiles it."""
        space = ins.space or "generic"
        addr = ins.srcs[0] if ins.srcs else None
        if space == "generic" and isinstance(addr, ir.Address) and isinstance(addr.base, ir.Symbol):
            p = self.placements.get(addr.base.name)
            if p is not None:
                return p.space
        return space

    # PTX cache operators and eviction hints → LDG/STG/LD/ST modifiers, as ptxas writes them:
    # (before the size, after it). An explicit `.ca`/`.wb` is a strong CTA-scope access,
    # `.cg`/`.cv`/`.wt` strong at GPU/system scope.
    LOAD_HINTS = {"ca": ((), ("STRONG", "SM")), "cg": ((), ("STRONG", "GPU")), "cs": (("EF",), ()),
                  "lu": (("LU",), ()), "cv": ((), ("STRONG", "SYS")), "nc": ((), ("CONSTANT",))}
    STORE_HINTS = {"wb": ((), ("STRONG", "SM")), "cg": ((), ("STRONG", "GPU")), "cs": (("EF",), ()),
                   "wt": ((), ("STRONG", "SYS"))}
    EVICTION = {"L1::no_allocate": "NA", "L1::evict_last": "EL", "L1::evict_first": "EF",
                "L1::evict_normal": None, "L1::evict_unchanged": "EU",
                "L2::64B": "LTC64B", "L2::128B": "LTC128B", "L2::256B": "LTC256B"}

    def access_modifiers(self, ins, load: bool):
        """(modifiers before the size, after it) of a global/generic LD/ST, and the memory
        ordering (scope, semantics) whose fences go around it."""
        pre, post = [], []
        scope, sem, mmio = "GPU", None, False
        hints = self.LOAD_HINTS if load else self.STORE_HINTS
        for m in ins.modifiers:
            if load and m in ("ca", "cg") and "nc" in ins.modifiers:
                continue        # ld.global.nc.ca/.cg: LDG.E.CONSTANT, as plain .nc
            if m in hints:
                pre += hints[m][0]
                post += hints[m][1]
            elif m in self.EVICTION:
                if self.EVICTION[m]:
                    pre.append(self.EVICTION[m])
            elif m == "volatile":
                post, scope = ["STRONG", "SYS"], "SYS"
            elif m in ("relaxed", "acquire", "release"):
                sem = m
            elif m == "mmio":
                mmio = True
            elif m in self.ATOM_SCOPES:
                scope = self.ATOM_SCOPES[m]
            elif m in ("weak", "L2::cache_hint", "v2", "v4", "v8"):
                pass
            else:
                raise self.unsupported(f"`{ins.opcode}.{m}`")
        if sem is not None:
            post = ["MMIO", "SYS"] if mmio else ["STRONG", scope]
        # eviction hints first, then the L2 prefetch size
        pre.sort(key=lambda m: m.startswith("LTC"))
        return tuple(pre), tuple(post), scope, sem

    def wide256_modifiers(self, pre: tuple) -> tuple:
        """A 256-bit access's `.ENL2`, after the L1 hints and before the L2 prefetch size
        (`LDG.E.EL.ENL2.LTC256B.256`, as ptxas writes every one)."""
        at = next((i for i, m in enumerate(pre) if m.startswith("LTC")), len(pre))
        return pre[:at] + ("ENL2",) + pre[at:]

    def ordered_access(self, ins, load: bool, opcode: str, mods, size, operands, ndefs: int) -> None:
        """The access with its cache/strength modifiers and the fences of its ordering (a
        uniform-pair address records its width)."""
        pre, post, scope, sem = self.access_modifiers(ins, load)
        if opcode in ("LDS", "STS", "LDL", "STL"):
            pre, post = (), ()              # the CTA's own memory: ordering only by fences
        if tuple(size) == ("256",):
            pre = self.wide256_modifiers(pre)
        if sem == "release":
            self.fences(release_fences(scope))
        widths = {i: 2 for i, op in enumerate(operands) if isinstance(op, Mem) and op.ubase is not None}
        self.emit(opcode, tuple(mods) + pre + tuple(size) + post, operands, ndefs=ndefs, widths=widths)
        if sem == "acquire":
            self.fences(acquire_fences(scope))

    MEMORY_OPS = {"global": ("LDG", "STG", True), "generic": ("LD", "ST", True),
                  "shared::cluster": ("LD", "ST", True),
                  "shared": ("LDS", "STS", False), "local": ("LDL", "STL", False)}
    # Vector accesses move whole 8..128-bit words: the size modifier of each width.
    WORD_SIZE = {8: ("U8",), 16: ("U16",), 32: (), 64: ("64",), 128: ("128",)}

    def sel_ld(self, ins):
        if ins.space == "param":
            if not self.fn.is_entry:
                raise self.unsupported("`ld.param` in a .func")
            addr = ins.srcs[0]
            if isinstance(addr, ir.Address) and isinstance(addr.base, ir.Value):
                return self.load_param_indirect(ins, addr)
            if _bits(ins.type) < 32:
                return self.load_param_subword(ins)
            words = _bits(ins.type) // 32      # per element; the register may be wider
            for i, d in enumerate(ins.dests):
                r = self.vreg(d)
                start = len(self.out)
                if r.width > 1:
                    self.begin_wide(d)
                parts = [self.param_const(ins.srcs[0], i * words + k) for k in range(min(words, r.width))]
                for k, part in enumerate(parts):
                    self.move(self.dst(d, k), part)
                if r.width > words:        # a 32-bit parameter in a 64-bit register
                    self.widen_loaded(d, ins.type)
                elif self.guard is None and r.cls == "R":
                    self.note_param_value(d, parts, self.out[start:])
            return
        space = self.access_space(ins)
        if space == "const":
            return self.load_const(ins)
        if space not in self.MEMORY_OPS:
            raise self.unsupported(f"`ld.{space}`")
        load, _, wide = self.MEMORY_OPS[space]
        mods = ("E",) if wide else ()
        n = len(ins.dests)
        ty = ins.type
        uniform = self.uniform_param_address(ins.srcs[0], space)
        mem = uniform or self.address(ins.srcs[0], space)
        if wide and uniform is None:
            self.mf.uses_global_descriptor = True
        if n == 1:
            d = ins.dests[0]
            narrow = self.vreg(d).width == 2 and _bits(ty) < 64
            if narrow:
                self.begin_wide(d)
            self.ordered_access(ins, True, load, mods, _size_modifier(ty, True),
                                [self.dst(d, 0) if narrow else self.dst_whole(d), mem], 1)
            if narrow:
                self.widen_loaded(d, ty)
            return
        self.load_vector(load, mods, mem, ins)

    def widen_loaded(self, d: ir.Value, ty: str) -> None:
        """A load narrower than its 64-bit destination register fills the high word as PTX
        says: the loaded value's sign for signed types, zero otherwise."""
        if _signed(ty):
            self.emit("SHF", ("R", "S32", "HI"), [self.dst(d, 1), RZ, Imm(0x1F), self.dst(d, 0)])
        else:
            self.move(self.dst(d, 1), RZ)
            self.note_zero_word(d, 1)

    def sel_ldu(self, ins):
        """`ldu`: a load the whole warp makes from one address (ptxas: a plain LDG)."""
        self.sel_ld(ins)

    def load_vector(self, load: str, mods, mem, ins) -> None:
        """One load of the whole vector into a temporary, then each element out of it."""
        n, ty = len(ins.dests), ins.type
        bits = _bits(ty)
        total = n * bits
        if total == 256:
            return self.load_256(mem, ins)
        if total not in self.WORD_SIZE:
            raise self.unsupported(f"vector `ld` of {n} x {ty}")
        t = self.mf.new_vreg("R", max(1, total // 32))
        guard = self.guard
        if guard is not None:
            self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
            if self.merges_in_place(ins):
                # ptxas's form of a masked load (Triton writes `mov r, 0; @p ld.v4 {r..}`):
                # the else-values go into the vector register, the guarded load overwrites
                # it, and the elements are copied out unguarded (copies the allocator can
                # coalesce) instead of one guarded MOV per element after the load.
                self.else_values_into(ins, lambda i: VOp(t, i if t.width > 1 else None))
                self.ordered_access(ins, True, load, mods, self.WORD_SIZE[total], [VOp(t), mem], 1)
                self.guard = None
                try:
                    self.copy_out_vector(ins, t, bits, ty)
                finally:
                    self.guard = guard
                return
        self.ordered_access(ins, True, load, mods, self.WORD_SIZE[total], [VOp(t), mem], 1)
        self.copy_out_vector(ins, t, bits, ty)

    def else_values_into(self, ins, part) -> None:
        """A guarded vector load's else-values into the registers it loads (word i: part(i)),
        unguarded, so the guarded load overwrites them (see load_vector). None where no
        element's old value matters (never written before, or a sink or an unread result:
        they keep whatever the registers hold; ptxas's code has no copies there either); a
        few such among ones that matter are copied all the same, which keeps the register
        groups' copies coalescing (a `{defined, undefined, ...}` merge left partly unwritten
        cost 12 MOVs shuffling the quads of a 256-bit load)."""
        if all(isinstance(m, ir.Value) and m.id in self.undefined or self.never_read(d)
               for m, d in zip(ins.merge, ins.dests)):
            return
        guard, self.guard = self.guard, None
        words = _bits(ins.type) // 32
        for k, m in enumerate(ins.merge):
            for w in range(words):
                at = part(k * words + w)
                if self.known_constant(m) is not None:
                    m = ir.Const(self.known_constant(m), m.type)
                if isinstance(m, ir.Value):
                    mr = self.vreg(m)
                    self.emit(COPY, (), [at, VOp(mr, w if mr.width > 1 else None)], guarded=False)
                else:
                    word = (m.value >> (32 * w)) & 0xFFFFFFFF
                    self.move(at, RZ if word == 0 else Imm(word))
        self.guard = guard

    def load_256(self, mem, ins) -> None:
        """A 256-bit vector (sm_100+; the frontend allows global and generic addresses only):
        one `LDG.E.ENL2.256` into two register quads, words 4..7's quad named first (ptxas
        loads a generic address with LDG too), then each element out of them."""
        quads = (self.mf.new_vreg("R", 4), self.mf.new_vreg("R", 4))
        guard = self.guard
        if guard is not None:
            for q in quads:
                self.emit(IMPLICIT_DEF, (), [VOp(q)], guarded=False)
            if self.merges_in_place(ins):
                self.else_values_into(ins, lambda i: VOp(quads[i // 4], i % 4))
        self.ordered_access(ins, True, "LDG", ("E",), ("256",), [VOp(quads[1]), VOp(quads[0]), mem], 2)
        if guard is not None and self.merges_in_place(ins):
            self.guard = None           # the else-values are in the quads already
        try:
            self.copy_out_256(ins, quads)
        finally:
            self.guard = guard

    def copy_out_256(self, ins, quads) -> None:
        words = _bits(ins.type) // 32
        for k, d in enumerate(ins.dests):
            r = self.vreg(d)
            if words > 1:
                self.begin_wide(d)
            for w in range(words):
                at = k * words + w
                self.copy_reg(VOp(r, w if r.width > 1 else None), VOp(quads[at // 4], at % 4))

    def merges_in_place(self, ins) -> bool:
        """A guarded vector load whose else-values can be put into its vector register:
        32- or 64-bit elements, every element with an else-value (see load_vector)."""
        return (ins.opcode in ("ld", "ldu") and len(ins.dests) > 1 and _bits(ins.type) >= 32
                and len(ins.merge) == len(ins.dests)
                and all(isinstance(m, (ir.Value, ir.Const)) for m in ins.merge)
                and ins.space not in ("param", "const")
                and self.access_space(ins) in self.MEMORY_OPS)

    def copy_out_vector(self, ins, t, bits: int, ty: str) -> None:
        for k, d in enumerate(ins.dests):
            if bits >= 32:
                words = bits // 32
                r = self.vreg(d)
                if words > 1:
                    self.begin_wide(d)
                for w in range(words):
                    self.copy_reg(VOp(r, w if r.width > 1 else None),
                                  VOp(t, k * words + w if t.width > 1 else None))
                continue
            word = VOp(t, (k * bits) // 32 if t.width > 1 else None)
            byte = ((k * bits) % 32) // 8
            self.extract_field(d, word, byte, bits, ty)

    def extract_field(self, d: ir.Value, word: VOp, byte: int, bits: int, ty: str) -> None:
        """d = the `bits`-wide field at `byte` of `word`, zero- or sign-extended when d's
        register is wider than the field (PTX's rule for ld into a wider register)."""
        extend = _bits(d.type) > bits
        if byte == 0 and not extend:
            self.copy_reg(VOp(self.vreg(d)), word)
            return
        self.extract_field_into(self.dst(d), word, byte, bits, ty, extend)

    def extract_field_into(self, out: VOp, word: VOp, byte: int, bits: int, ty: str, extend: bool) -> None:
        nbytes = bits // 8
        fill = (8 | (byte + nbytes - 1)) if (_signed(ty) and extend) else 7
        sel = 0
        for i in range(4):
            sel |= (byte + i if i < nbytes else fill) << (4 * i)
        self.emit("PRMT", (), [out, word, Imm(sel), RZ])

    def load_param_subword(self, ins) -> None:
        """An 8/16-bit parameter: LDC of that size (a 32-bit read could run past the bank's
        end, and would bring the neighbouring bytes along)."""
        size = _bits(ins.type) // 8
        for i, d in enumerate(ins.dests):      # a vector: one LDC per element
            at = self.param_const(ins.srcs[0], 0)
            at = replace(at, offset=at.offset + i * size)
            narrow = self.vreg(d).width == 2
            if narrow:
                self.begin_wide(d)
            self.emit("LDC", _size_modifier(ins.type, True), [self.dst(d, 0) if narrow else self.dst(d), at])
            if narrow:
                self.widen_loaded(d, ins.type)

    def load_param_indirect(self, ins, addr: ir.Address) -> None:
        """`ld.param` through a register holding a kernel parameter's address: LDC from
        constant bank 0 at that address."""
        bits = _bits(ins.type)
        if bits > 64:
            raise self.unsupported(f"`ld.param.{ins.type}` through a register")
        r = self.vreg(addr.base)
        base = VOp(r, 0 if r.width > 1 else None)
        for i, d in enumerate(ins.dests):      # a vector: one LDC per element
            narrow = self.vreg(d).width == 2 and bits < 64
            if narrow:
                self.begin_wide(d)
            self.emit("LDC", _size_modifier(ins.type, True),
                      [self.dst(d, 0) if narrow else self.dst_whole(d),
                       ConstRef(0, self.arch.param_base + addr.offset + i * (bits // 8), ureg=base)])
            if narrow:
                self.widen_loaded(d, ins.type)

    def load_const(self, ins):
        """`ld.const`: constant bank 3 at the variable's offset — a plain constant operand
        for whole words at a fixed place (as ptxas), else LDC (plus a register); a vector
        loads element by element."""
        addr = ins.srcs[0]
        bits = _bits(ins.type)
        if not isinstance(addr, ir.Address) or bits > 64:
            raise self.unsupported(f"`ld.const.{ins.type}`")
        base, at, ureg, symbol = addr.base, addr.offset, None, None
        if isinstance(base, ir.Symbol):
            p = self.placement(base)
            if p.space != "const":
                raise self.unsupported(f"`ld.const` of the .{p.space} variable `{base.name}`")
            at += p.value + base.offset
            symbol = p.symbol and (p.symbol, p.value)
        elif isinstance(base, ir.Value):
            r = self.vreg(base)
            ureg = VOp(r, 0 if r.width > 1 else None)

        def bank3(offset: int, **kw) -> ConstRef:
            """The constant at `offset` of bank 3; in relocatable output the variable's
            symbol and the offset into it go with it (the linker places the variable)."""
            reloc = (symbol[0], offset - symbol[1]) if symbol else None
            return ConstRef(3, offset, reloc=reloc, **kw)
        n = len(ins.dests)
        if bits < 32 and n > 1 and n * bits in (32, 64):      # one word (or two), then fields
            words = n * bits // 32
            t = self.mf.new_vreg("R", words)
            if words > 1 or self.guard is not None:
                self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
            for w in range(words):
                part = VOp(t, w if words > 1 else None)
                if ureg is None:
                    self.move(part, bank3(at + 4 * w))
                else:
                    self.emit("LDC", (), [part, bank3(at + 4 * w, ureg=ureg)])
            for k, d in enumerate(ins.dests):
                word = VOp(t, (k * bits) // 32 if words > 1 else None)
                self.extract_field(d, word, ((k * bits) % 32) // 8, bits, ins.type)
            return
        step = max(1, bits // 8)
        for i, d in enumerate(ins.dests):
            where = at + i * step
            narrow = self.vreg(d).width == 2 and bits < 64     # the rest of d is filled below
            if narrow:
                self.begin_wide(d)
            target = self.dst(d, 0) if narrow else self.dst_whole(d)
            if ureg is not None:
                self.emit("LDC", _size_modifier(ins.type, True), [target, bank3(where, ureg=ureg)])
            elif bits >= 32 and where % 4 == 0:
                if self.vreg(d).width > 1 and not narrow:
                    self.begin_wide(d)
                start = len(self.out)
                parts = [bank3(where + 4 * k) for k in range(bits // 32 if narrow else self.vreg(d).width)]
                for k, part in enumerate(parts):
                    self.move(self.dst(d, k), part)
                if (not narrow and symbol is None and self.guard is None and self.vreg(d).cls == "R"
                        and len(parts) == bits // 32):
                    # a word at a fixed place of bank 3 stays readable there, as a kernel
                    # parameter does in bank 0 (nothing in a kernel writes either): slots
                    # that take c[..][..] read it in place, as ptxas's code does (Keccak's
                    # rotate amounts: `SHF.L.U32 R, R, c[0x3][0x1c0]`, no register each)
                    self.note_param_value(d, parts, self.out[start:])
            else:     # a byte or half of a constant word
                t = VOp(self.mf.new_vreg())
                self.move(t, bank3(where & ~3))
                if narrow:
                    field = VOp(self.mf.new_vreg())
                    self.extract_field_into(field, t, where % 4, bits, ins.type, extend=True)
                    self.copy_reg(target, field)
                else:
                    self.extract_field(d, t, where % 4, bits, ins.type)
            if narrow:
                self.widen_loaded(d, ins.type)

    def dst_whole(self, v: ir.Value) -> VOp:
        return VOp(self.vreg(v))

    def store_async(self, ins) -> None:
        """st.async.mbarrier::complete_tx::bytes.shared::cluster [a], data, [mbar] (sm_90): one
        STAS[.64|.128] on the register pair (a, mbar) as ptxas writes it; the store completes
        a transaction of its size on the mbarrier (the shared addresses are cluster ones on
        these targets: `window_location`)."""
        width = 4 if "v4" in ins.modifiers else 2 if "v2" in ins.modifiers else 1
        if len(ins.srcs) == 1 + width and not {"release", "mmio"} & set(ins.modifiers):
            # a weak store without its mbarrier (no such form in the PTX ISA, but ptxas
            # 13.5.37 takes it and writes no instruction for it): left out as ptxas does
            return
        if not self.arch.cluster_shared_addresses or self.guard is not None:
            raise self.unsupported(f"`st.{'.'.join(ins.modifiers)}`")
        data, bits = ins.srcs[1:-1], _bits(ins.type)
        size = self.WORD_SIZE.get(len(data) * bits)
        if size is None or bits < 32:
            raise self.unsupported(f"`st.async` of {len(data)} x {ins.type}")
        where = [self.offset_added(self.address(op, "shared")) for op in (ins.srcs[0], ins.srcs[-1])]
        pair = self.new_pair()
        for k, mem in enumerate(where):
            if mem.base is None:
                self.move(VOp(pair.reg, k), RZ)
            else:
                self.emit(COPY, (), [VOp(pair.reg, k), mem.base], guarded=False)
        self.emit("STAS", size, [VMem(pair, 0, wide=True, described=False), self.data_words(data, bits)],
                  ndefs=0)

    def sel_st(self, ins):
        if "async" in ins.modifiers:
            return self.store_async(ins)
        if "bulk" in ins.modifiers:
            return self.store_bulk(ins)                       # isel/bulk_copy.py
        space = self.access_space(ins)
        if space not in self.MEMORY_OPS:
            raise self.unsupported(f"`st.{space}`")
        _, store, wide = self.MEMORY_OPS[space]
        mods = ("E",) if wide else ()
        # an L2 cache policy (the last operand) is a hint: left out, as for loads and atomics
        data = ins.srcs[1:-1] if "L2::cache_hint" in ins.modifiers else ins.srcs[1:]
        uniform = self.uniform_param_address(ins.srcs[0], space)
        mem = uniform or self.address(ins.srcs[0], space)
        if wide and uniform is None:
            self.mf.uses_global_descriptor = True
        ty = ins.type
        if all(isinstance(v, ir.Const) and v.value == 0 for v in data) and len(data) * _bits(ty) >= 32:
            # zeros of any width come from RZ (`STL.128 [R1], RZ`, as ptxas writes them)
            size = _size_modifier(ty, False) if len(data) == 1 else self.WORD_SIZE.get(len(data) * _bits(ty))
            if len(data) == 1 or size is not None:
                self.ordered_access(ins, False, store, mods, size, [mem, RZ], 0)
                return
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
            self.ordered_access(ins, False, store, mods, _size_modifier(ty, False), [mem, src], 0)
            return
        n, bits = len(data), _bits(ty)
        total = n * bits
        if total == 256:
            # sm_100+, global or generic (the frontend's rule): `STG.E.ENL2.256 [a], lo, hi`
            if ins.attrs.get("sinks"):
                self.ordered_access(ins, False, "STG", mods, ("256",),
                                    [mem, *self.masked_256_data(data, bits, ins.attrs["sinks"])], 0)
                return
            half = n // 2
            self.ordered_access(ins, False, "STG", mods, ("256",),
                                [mem, self.data_words(data[:half], bits), self.data_words(data[half:], bits)], 0)
            return
        if total not in self.WORD_SIZE:
            raise self.unsupported(f"vector `st` of {n} x {ty}")
        self.ordered_access(ins, False, store, mods, self.WORD_SIZE[total],
                            [mem, self.data_words(data, bits)], 0)

    def masked_256_data(self, data, bits: int, sinks) -> list:
        """A 256-bit store with sinks: `lo, hi, mask` of `STG.E.ENL2.256 [a], lo, hi, mask`
        (bit k: word k stored), each quad's stored words packed into its first registers
        (1, 2 or 4 of them), a quad with none RZ, as ptxas writes it. Zeros of 64-bit
        elements only are RZ (`{_, 0, _, 0}`: `RZ, RZ, 0xcc`); 32-bit zeros ptxas puts into
        registers."""
        per = bits // 32
        kept = [(k, w) for k in range(len(data)) if k not in sinks for w in range(per)]
        mask = sum(1 << (k * per + w) for k, w in kept)
        zeros = per == 2 and all(isinstance(data[k], ir.Const) and data[k].value == 0 for k, _ in kept)
        quads = []
        for q in (0, 1):
            words = [(k, w) for k, w in kept if (k * per + w) // 4 == q]
            if not words or zeros:
                quads.append(RZ)
                continue
            width = {3: 4}.get(len(words), len(words))
            t = self.mf.new_vreg("R", width)
            if width > 1:
                self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
            for slot, (k, w) in enumerate(words):
                at, v = VOp(t, slot if width > 1 else None), data[k]
                if isinstance(v, ir.Value) and v.id in self.undefined:
                    continue
                if isinstance(v, ir.Value) and per == 1:
                    self.emit(COPY, (), [at, VOp(self.vreg(v))], guarded=False)
                else:
                    self.move(at, self.part_of(v, w))
            quads.append(VOp(t))
        return quads + [Imm(mask)]

    def data_words(self, data, bits: int) -> VOp:
        """Vector data of `bits`-bit elements side by side in one aligned register group, as
        a store (or a surface store) reads it: 32/64-bit elements a word or two each, 8/16-bit
        ones packed into words."""
        total = len(data) * bits
        words = max(1, total // 32)
        t = self.mf.new_vreg("R", words)
        if words > 1:
            self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        part = lambda w: VOp(t, w if words > 1 else None)      # noqa: E731
        if bits >= 32:
            per = bits // 32
            for k, v in enumerate(data):
                if isinstance(v, ir.Value) and v.id in self.undefined:
                    continue
                for w in range(per):
                    if isinstance(v, ir.Value) and per == 1:
                        self.emit(COPY, (), [part(k), VOp(self.vreg(v))], guarded=False)
                    else:
                        self.move(part(k * per + w), self.part_of(v, w))
        else:
            per_word = 32 // bits if total >= 32 else len(data)
            for w in range(words):
                elems = data[w * per_word:(w + 1) * per_word]
                if bits == 16 and all(isinstance(v, ir.Value) and v.id in self.undefined for v in elems):
                    continue        # halves PTX never wrote: the word stays unwritten (ptxas)
                self.pack_word(part(w), elems, bits)
        return VOp(t) if words > 1 else part(0)

    def pack_word(self, d: VOp, elems, bits: int) -> None:
        """d = the 8- or 16-bit elements side by side, first in the low bits (PRMT)."""
        regs = [self.reg_part(e) if not (isinstance(e, ir.Const) and e.value == 0) else RZ for e in elems]
        if len(regs) == 1:
            if isinstance(regs[0], VOp):
                self.copy_reg(d, regs[0])
            else:
                self.move(d, regs[0])
            return
        if bits == 16:
            self.emit("PRMT", (), [d, regs[0], Imm(0x5410), regs[1]])
            return
        # bytes: pair them up (b0 | b1 << 8), then the two pairs into one word
        lo = VOp(self.mf.new_vreg()) if len(regs) > 2 else d
        self.emit("PRMT", (), [lo, regs[0], Imm(0x3340), regs[1]])
        if len(regs) == 2:
            return
        hi = VOp(self.mf.new_vreg())
        self.emit("PRMT", (), [hi, regs[2], Imm(0x3340), regs[3] if len(regs) > 3 else RZ])
        self.emit("PRMT", (), [d, lo, Imm(0x5410), hi])

    ASYNC_GROUPS = Reg("SB", 0)     # the scoreboard LDGDEPBAR counts cp.async groups on
    COPY_SIZE = {4: (), 8: ("64",), 16: ("128",)}

    def sel_cp(self, ins):
        """`cp.async` global → shared as ptxas writes it: LDGSTS per copy (`.cg` bypasses
        L1; a source size below the copy size zero-fills, the immediate of the source
        address then being the count of zeroed bytes), LDGDEPBAR closing a group on SB0
        (codegen gives it that scoreboard), DEPBAR.LE SB0, n waiting for all but n groups."""
        mods = ins.modifiers
        if mods[:3] == ("async", "mbarrier", "arrive"):
            return self.cp_async_mbarrier_arrive(ins)         # isel/mbarrier.py
        if "bulk" in mods:
            return self.sel_cp_bulk(ins)                      # isel/bulk_copy.py
        if mods[:1] != ("async",) or any("mbarrier" in m for m in mods):
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        if "commit_group" in mods:
            self.emit("LDGDEPBAR", (), [], ndefs=0)
            return
        if "wait_group" in mods or "wait_all" in mods:
            pending = 0 if "wait_all" in mods else self.known_constant(ins.srcs[0])
            if pending is None:
                raise self.unsupported("`cp.async.wait_group` with a register count")
            if "wait_all" in mods:                   # wait_all also closes the open group
                self.emit("LDGDEPBAR", (), [], ndefs=0)
            self.emit("DEPBAR", ("LE",), [self.ASYNC_GROUPS, Imm(pending)], ndefs=0)
            return
        dst, src, size, *rest = ins.srcs
        if "L2::cache_hint" in mods:      # the policy (the last operand) a hint, left out
            rest = rest[:-1]
        cp_size = self.known_constant(size)
        src_size = cp_size if not rest else self.known_constant(rest[0])
        copy_if = None
        if rest and src_size is None and cp_size is not None:
            copy_if = self.all_or_nothing_size(rest[0], cp_size)
            src_size = cp_size if copy_if is not None else None
        if cp_size not in self.COPY_SIZE or ("cg" in mods and cp_size != 16) or \
                (src_size is not None and not 0 <= src_size <= cp_size) or \
                (src_size is None and not (rest and isinstance(rest[0], ir.Value))):
            raise self.unsupported("`cp.async` with this copy or source size")
        shared_limit, global_limit = CP_ASYNC_OFFSET_LIMITS
        src_mem = self.offset_within(self.memory_operand(src, "global"), global_limit)
        self.mf.uses_global_descriptor = True
        if src_size is None:          # a source size in a register
            src_mem, copy_if = self.run_time_source_size(src_mem, rest[0], cp_size)
            zfill = True
        else:
            zfill = src_size != cp_size
            if zfill:                 # the immediate says how many bytes to zero
                src_mem = VMem(self.offset_added(src_mem).base, cp_size - src_size, wide=True)
        mods_out = ("E",) + (("BYPASS",) if "cg" in mods else ()) + self.COPY_SIZE[cp_size] + \
            (("ZFILL",) if zfill else ())
        operands = [self.offset_within(self.memory_operand(dst, "shared"), shared_limit), src_mem]
        if copy_if is not None:       # LDGSTS's predicate: copy where true, zeros where false
            operands.append(copy_if)
        self.emit("LDGSTS", mods_out, operands, ndefs=0)

    def run_time_source_size(self, src_mem: VMem, size: ir.Value, cp_size: int):
        """(source operand, copy predicate) of a cp.async whose source size is a register n,
        as ptxas writes it: LDGSTS.ZFILL zeroes as many trailing bytes as the address's low
        bits say, so the address moves up by (cp_size - n) mod cp_size; n = 0 (nothing to
        copy) is the predicate's false."""
        n = self.reg_part(size)
        zeros = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [zeros, self.negate(n), Imm(cp_size), RZ])
        self.emit("LOP3", ("LUT",), [zeros, zeros, Imm(cp_size - 1), RZ, Imm(0xC0), NOT_PT])
        copy_if = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [copy_if, PT, n, RZ, PT], ndefs=2)
        base = src_mem.base
        t = self.mf.new_vreg("R", 2)
        self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        lo, hi = (VOp(base.reg, 0), VOp(base.reg, 1)) if base is not None else (RZ, RZ)
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(t, 0), carry, zeros, lo, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(t, 1), hi, RZ, RZ, carry, NOT_PT])
        return VMem(VOp(t), src_mem.offset, wide=True), copy_if

    def all_or_nothing_size(self, op, cp_size: int):
        """The predicate operand for a source size `selp.b32 s, cp_size, 0, p` (Triton's
        masked loads: copy all or zero-fill all), as ptxas folds it; None for other sizes."""
        if not isinstance(op, ir.Value):
            return None
        if not hasattr(self, "_selp_defs"):
            self._selp_defs = {ins.dests[0].id: ins for b in self.fn.blocks for ins in b.instrs
                               if ins.opcode == "selp" and ins.guard is None
                               and len(ins.dests) == 1 and len(ins.srcs) == 3}
        sel = self._selp_defs.get(op.id)
        if sel is None:
            return None
        a, b = (self.known_constant(x) for x in sel.srcs[:2])
        p = sel.srcs[2]
        if not isinstance(p, ir.Value):
            return None
        if {a, b} == {cp_size, 0}:
            return VOp(self.vreg(p), inv=(a == 0))
        # A chain `selp s2, s1, 0, q` over an all-or-nothing s1 (Triton's masks on several
        # dimensions: one selp per mask): copy where both hold, one PLOP3 AND.
        inner = sel.srcs[0] if b == 0 else sel.srcs[1] if a == 0 else None
        inner_p = self.all_or_nothing_size(inner, cp_size) if inner is not None else None
        if inner_p is None:
            return None
        both = VOp(self.mf.new_vreg("P"))
        self.emit("PLOP3", ("LUT",), [both, PT, VOp(self.vreg(p), inv=(a == 0)), inner_p, PT,
                                      Imm(0xC0), Imm(0)], ndefs=2)
        return both

    def sel_ldmatrix(self, ins):
        """`ldmatrix.m8n8.x{1,2,4}[.trans].b16`: LDSM.16.M88/MT88 into consecutive registers;
        the sm_100a/120a forms of 8-bit tiles, `.m16n16.x{1,2}.trans.b8` (LDSM.8.MT1616, two
        registers a matrix) and the packed 6-/4-bit ones unpacked to bytes,
        `.m8n16.x{1,2,4}.b8x16.{b6x16_p32,b4x16_p64}` (LDSM.U6x16P32TO8/U4x16P64TO8.M816) and
        `.m16n16.x{1,2}.trans.b8x16.…` (….MT1616), as ptxas writes them (a generic address is
        first made a shared one, as ptxas does)."""
        form = ldsm_form(ins)
        if form is None or len(ins.dests) != form[1]:
            raise self.unsupported(f"`ldmatrix.{'.'.join(ins.modifiers)}.{ins.type}`")
        mods, nregs = form
        space = ins.space or "generic"
        if space == "generic":
            addr = ins.srcs[0]
            if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Value):
                raise self.unsupported("`ldmatrix` of this generic address")
            r = self.vreg(addr.base)
            if self.arch.cluster_shared_addresses:      # the generic address's low half
                mem = VMem(VOp(r, 0 if r.width > 1 else None), addr.offset, wide=False)
            else:
                t = VOp(self.mf.new_vreg())
                self.emit("IADD3", (), [t, VOp(r, 0 if r.width > 1 else None),
                                        ConstRef(0, self.WINDOW_BASE["shared"], neg=True), RZ])
                mem = VMem(t, addr.offset, wide=False)
        elif space == "shared":
            mem = self.address(ins.srcs[0], "shared")
        else:
            raise self.unsupported(f"`ldmatrix.{space}`")
        t = self.mf.new_vreg("R", nregs)
        if self.guard is not None:
            self.emit(IMPLICIT_DEF, (), [VOp(t)], guarded=False)
        self.emit("LDSM", mods, [VOp(t), mem])
        self.note_wide(ins, t, ())
        for k, d in enumerate(ins.dests):
            self.copy_reg(VOp(self.vreg(d)), VOp(t, k if nregs > 1 else None))

    def sel_mapa(self, ins):
        """`mapa[.shared::cluster].{u32,u64} d, a, rank` (sm_90): the address's CTA-rank byte
        (bits 24..31 of a shared-window address) replaced by the rank's low byte,
        `PRMT d, rank, 0x654, a` as ptxas; a generic address keeps its high word."""
        d, a, rank = ins.dests[0], ins.srcs[0], ins.srcs[1]
        if not self.arch.cluster_shared_addresses:
            raise self.unsupported(f"`mapa` on {self.arch.name}")
        wide = self.vreg(d).width == 2
        if isinstance(a, ir.Value):
            lo = self.part_of(a, 0)
            lo = lo if isinstance(lo, VOp) else self.reg_part(a)
        elif not wide and isinstance(a, ir.Symbol):
            lo = self.cluster_address_reg(ir.Address(a, 0))
        else:
            raise self.unsupported(f"`mapa` of {a!r}")
        if wide:
            self.begin_wide(d)
        self.emit("PRMT", (), [self.dst(d, 0), self.reg_part(rank), Imm(0x654), lo])
        if wide:
            self.copy_reg(self.dst(d, 1), self.part_of(a, 1))

    def sel_stmatrix(self, ins):
        """`stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16` (sm_90): STSM.16.M88/MT88 of
        consecutive registers; `.m16n8.x{1,2,4}.trans.b8` (sm_100a/120a): STSM.8.MT168, one
        register a matrix; at a shared address (a generic one's low word, as ptxas)."""
        mods = ins.modifiers
        count = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), None)
        shape = ("16", "MT88" if "trans" in mods else "M88") if "m8n8" in mods \
            and ins.type == "b16" else ("8", "MT168") if "m16n8" in mods and "trans" in mods \
            and ins.type == "b8" else None
        if not self.arch.cluster_shared_addresses or count is None or shape is None \
                or len(ins.srcs) != count + 1:
            raise self.unsupported(f"`stmatrix.{'.'.join(mods)}.{ins.type}`")
        addr = ins.srcs[0]
        space = ins.space or "generic"
        if space == "generic":
            if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Value):
                raise self.unsupported("`stmatrix` of this generic address")
            r = self.vreg(addr.base)
            mem = VMem(VOp(r, 0 if r.width > 1 else None), addr.offset, wide=False)
        elif space == "shared":
            mem = self.address(addr, "shared")
        else:
            raise self.unsupported(f"`stmatrix.{space}`")
        data = self.gather(ins.srcs[1:])
        self.emit("STSM", shape + ((str(count),) if count > 1 else ()), [mem, data],
                  ndefs=0, widths={1: count} if count > 1 else None)

    def sel_cvta(self, ins):
        """Addresses between a window and the generic space: global ones are equal; shared
        and local ones differ by the window's base (c[0x0][0x18] / the target's local window
        word, c[0x0][0x20] on sm_7x..sm_90)."""
        d, src = ins.dests[0], ins.srcs[0]
        space = ins.space
        to_window = "to" in ins.modifiers
        if space in (None, "global"):
            if isinstance(src, ir.Symbol):
                return self.address_value(d, src)
            return self.copy_value(d, src)
        if space in ("const", "param") and not isinstance(src, ir.Symbol):
            return self.cvta_driver_window(d, src, space, to_window)
        if space not in self.WINDOW_BASE:
            raise self.unsupported(f"`cvta` of the {space} window")
        if self.vreg(d).width != 2:
            raise self.unsupported(f"32-bit `cvta.{space}`")
        base = self.window_base(space)
        if space == "shared" and self.arch.cluster_shared_addresses:
            return self.cvta_cluster_shared(d, src, to_window)
        if to_window:
            self.add_wide(d, self.reg_part(src, 0), self.reg_part(src, 1),
                          ConstRef(0, base, neg=True), ConstRef(0, base + 4, inv=True))
            return
        if isinstance(src, ir.Symbol):
            lo, hi = self.window_word(self.placement(src), src.offset), RZ
            if isinstance(lo, Imm):
                lo = self.reg_part(ir.Const(lo.value, "u32"))
        else:       # a register: all 64 bits plus the window's base, as ptxas
            lo, hi = self.reg_part(src, 0), self.reg_part(src, 1)
        self.add_wide(d, lo, hi, ConstRef(0, base), ConstRef(0, base + 4))

    def cvta_driver_window(self, d, src, space: str, to_window: bool) -> None:
        """cvta of the const or param window: the 64-bit base the driver keeps in constant
        bank 0 (encoder/arch.py's driver_cbank), plus, for param on sm_8x, the parameters'
        offset in the bank (ptxas's three-input IADD3 with both carries)."""
        cbank = dict(self.arch.driver_cbank or ())
        key = f"{space}_window"
        if key not in cbank or self.vreg(d).width != 2:
            raise self.unsupported(f"`cvta` of the {space} window")
        at = cbank[key]
        lo, hi = self.reg_part(src, 0), self.reg_part(src, 1)
        extra = self.arch.param_base if space == "param" and not self.arch.param_window_at_params else 0
        self.begin_wide(d)
        c1, c2 = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        if not extra:
            self.emit("IADD3", (), [self.dst(d, 0), c1, lo, ConstRef(0, at, neg=to_window), RZ],
                      ndefs=2)
            self.emit("IADD3", ("X",), [self.dst(d, 1), hi, ConstRef(0, at + 4, inv=to_window), RZ,
                                        c1, NOT_PT])
            return
        k = VOp(self.mf.new_vreg())
        self.move(k, Imm((-extra if to_window else extra) & 0xFFFFFFFF))
        k_hi = RZ
        if to_window:
            k_hi = VOp(self.mf.new_vreg())
            self.move(k_hi, Imm(0xFFFFFFFF))
        self.emit("IADD3", (), [self.dst(d, 0), c1, c2, lo, ConstRef(0, at, neg=to_window), k],
                  ndefs=3)
        self.emit("IADD3", ("X",), [self.dst(d, 1), hi, ConstRef(0, at + 4, inv=to_window), k_hi,
                                    c1, c2])

    def sel_getctarank(self, ins):
        """getctarank[.shared::cluster].{u32,u64} d, a (sm_90+): the rank of the CTA whose
        shared memory the address names: bits 24..31 of its low word (`CLUSTER_RANK_SHIFT`;
        a generic address's low word is the shared::cluster one), as ptxas's
        `SHF.L.U64.HI d, lo, 0x8, RZ` (it reads no high word)."""
        a = ins.srcs[0]
        if isinstance(a, ir.Symbol) or not self.arch.cluster_shared_addresses:
            raise self.unsupported("`getctarank` of a variable's address" if isinstance(a, ir.Symbol)
                                   else f"`getctarank` on {self.arch.name}")
        self.emit("SHF", ("L", "U64", "HI"), [self.dst(ins.dests[0]), self.as_reg(self.reg_part(a, 0)),
                                              Imm(32 - self.CLUSTER_RANK_SHIFT), RZ])

    def cvta_cluster_shared(self, d: ir.Value, src, to_window: bool) -> None:
        """sm_90's shared window in the generic space: SR_SWINHI is the high half, the shared
        address the low half (`cvta.to` keeps the low half and clears the high). SR_SWINHI is
        read once per function (`shared_window_high`), as ptxas does and as the
        shared::cluster accesses read it."""
        self.begin_wide(d)
        if to_window:
            self.move(self.dst(d, 0), self.reg_part(src, 0))
            self.move(self.dst(d, 1), RZ)
            return
        if isinstance(src, ir.Symbol):
            self.window_word(self.placement(src), src.offset, into=self.dst(d, 0))
        else:
            self.move(self.dst(d, 0), self.reg_part(src, 0))
        self.move(self.dst(d, 1), self.shared_window_high())

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
                "and": "AND", "or": "OR", "xor": "XOR", "exch": "EXCH", "cas": "CAS"}
    # `.cluster` is GPU strength and GPU fences (ptxas 13.5 on sm_90: LDG.E.STRONG.GPU,
    # ATOMG.E.ADD.STRONG.GPU, MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR before a release)
    ATOM_SCOPES = {"cta": "SM", "cluster": "GPU", "gpu": "GPU", "sys": "SYS"}

    def atom_modifiers(self, op: str, ty: str, space: str) -> list[str]:
        """The operation and type modifiers of ATOM/ATOMG/ATOMS/RED for `op` on `ty`."""
        bits, kind = _bits(ty), ir.TYPES[ty][0]
        if bits == 128 and op in ("cas", "exch") and self.arch.atomics_128:
            return [self.ATOM_OPS[op], "128"]      # sm_90: ATOM[G|S].CAS/EXCH.128
        if bits not in (32, 64) or (op == "cas" and kind == "f"):
            raise self.unsupported(f"`{self.ins.opcode}.{op}.{ty}`")
        mods = [self.ATOM_OPS[op]]
        if ty in ("f16x2", "bf16x2"):      # add.noftz of two halves, round to nearest
            if op != "add" or space == "shared":
                raise self.unsupported(f"`{self.ins.opcode}.{space}.{op}.{ty}`")
            return mods + [ty.upper().replace("X2", "x2"), "RN"]
        if kind == "f":
            if op == "exch":
                return mods + (["64"] if bits == 64 else [])
            if op != "add" or space == "shared":
                raise self.unsupported(f"`{self.ins.opcode}.{space}.{op}.{ty}`")
            return mods + (["F32", "FTZ", "RN"] if bits == 32 else ["F64", "RN"])
        if bits == 64:
            if op in ("inc", "dec") or (space == "shared" and op not in ("cas", "exch", "min")
                                        or space == "shared" and _signed(ty)):
                raise self.unsupported(f"`{self.ins.opcode}.{space}.{op}.{ty}`")
            return mods + (["S64"] if _signed(ty) and op in ("min", "max") else ["64"])
        return mods + (["S32"] if _signed(ty) and op in ("min", "max") else [])

    def counts_lanes(self, op: str, ty: str, d, sources) -> bool:
        """`atom.shared.add.u32 _, [a], 1` with its result unread and no guard: ATOMS.POPC.INC
        (ptxas's form on sm_80+; it keeps ATOMS.ADD for .s32, a guard or a read result)."""
        return (op == "add" and ty == "u32" and d is None and self.guard is None
                and self.arch.shared_popc_increment and len(sources) == 1
                and isinstance(sources[0], ir.Const) and sources[0].value == 1)

    def atom_data(self, v, bits: int):
        """A 32-bit register, or a register pair (quad) for 64-bit (128-bit) data."""
        if bits <= 32:
            return self.reg_part(v)
        if bits == 128 and not isinstance(v, ir.Value):
            raise self.unsupported("a 128-bit atomic operand that is no register")
        if isinstance(v, ir.Value):
            return VOp(self.vreg(v))
        return self.pair_of(v)

    def atom_ordering(self):
        """(scope modifier, semantics) of an atom/red: `.cta` → SM, `.gpu` (default) → GPU,
        `.sys` → SYS; semantics relaxed unless acquire/release/acq_rel."""
        scopes = [m for m in self.ins.modifiers if m in self.ATOM_SCOPES]
        scope = self.ATOM_SCOPES[scopes[0]] if scopes else "GPU"
        sem = next((m for m in self.ins.modifiers if m in ("acquire", "release", "acq_rel")), None)
        return scope, sem

    def fences(self, sequence) -> None:
        """The fences of `sequence` (ptx2sass/fences.py) in order; each ERRBAR followed by
        CGAERRBAR where the target has clusters."""
        for opcode, mods in sequence:
            self.emit(opcode, mods, [], ndefs=0)
            if (opcode, mods) == ERROR_BARRIER and self.arch.cga_errbar:
                self.emit(*CLUSTER_ERROR_BARRIER, [], ndefs=0)

    # Shared-memory atomics ATOMS cannot do: a compare-and-swap loop, as ptxas writes it.
    SHARED_CAS_LOOP = {("add", "f32"), ("add", "f64"), ("add", "u64"), ("add", "s64"), ("add", "f16x2"),
                       ("add", "bf16x2")} | {
        (op, ty) for op in ("and", "or", "xor") for ty in ("b64", "u64", "s64")} | {
        (op, ty) for op in ("min", "max") for ty in ("u64", "s64")}
    LOGIC_LUT = {"and": 0xC0, "or": 0xFC, "xor": 0x3C}

    def atomic_operation(self, op: str, ty: str, new: VOp, old: VOp, v: VOp) -> None:
        """new = old op v, for the atomics written as a loop or a load and a store."""
        if ty in ("f16x2", "bf16x2"):
            self.emit("HADD2", ("BF16_V2",) if ty == "bf16x2" else (), [new, old, v])
        elif ty == "f32":
            self.emit("FADD", (), [new, old, v])
        elif ty == "f64":
            # the operand first, as ptxas: of two NaNs DADD returns one by position
            # (emu/fp.py `propagate_nan_f64`), so the order shows in the result
            self.emit("DADD", (), [new, v, old])
        elif op in self.LOGIC_LUT:
            self.emit(IMPLICIT_DEF, (), [new], guarded=False)
            for k in range(2):
                self.emit("LOP3", ("LUT",), [VOp(new.reg, k), VOp(old.reg, k), VOp(v.reg, k), RZ,
                                             Imm(self.LOGIC_LUT[op]), NOT_PT])
        elif op in ("min", "max"):       # old < v on 64 bits, then the smaller or larger word pair
            low, below = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("LT", "U32", "AND"), [low, PT, VOp(old.reg, 0), VOp(v.reg, 0), PT], ndefs=2)
            self.emit("ISETP", ("LT",) + (() if ty == "s64" else ("U32",)) + ("AND", "EX"),
                      [below, PT, VOp(old.reg, 1), VOp(v.reg, 1), PT, low], ndefs=2)
            first, second = (old, v) if op == "min" else (v, old)
            self.emit(IMPLICIT_DEF, (), [new], guarded=False)
            for k in range(2):
                self.emit("SEL", (), [VOp(new.reg, k), VOp(first.reg, k), VOp(second.reg, k), below])
        else:
            self.emit(IMPLICIT_DEF, (), [new], guarded=False)
            carry = VOp(self.mf.new_vreg("P"))
            self.emit("IADD3", (), [VOp(new.reg, 0), carry, VOp(old.reg, 0), VOp(v.reg, 0), RZ], ndefs=2)
            self.emit("IADD3", ("X",), [VOp(new.reg, 1), VOp(old.reg, 1), VOp(v.reg, 1), RZ, carry, NOT_PT])

    def cas_spin(self, size: tuple, at: VMem, old: VOp, new: VOp, width: int) -> VOp:
        """ATOMS.CAST.SPIN: store `new` where `old` still is; returns the predicate that says
        it did (sm_100+: written by the ATOMS itself; before: its register compared with 1)."""
        stored = VOp(self.mf.new_vreg("P"))
        if self.arch.cas_spin_predicate:
            self.emit("ATOMS", ("CAST", "SPIN") + size, [stored, at, old, new])
            return stored
        ok = VOp(self.mf.new_vreg("R", width))
        self.emit("ATOMS", ("CAST", "SPIN") + size, [ok, at, old, new])
        self.emit("ISETP", ("EQ", "U32", "AND"),
                  [stored, PT, VOp(ok.reg, 0) if width > 1 else ok, Imm(1), PT], ndefs=1)
        return stored

    def shared_cas_loop(self, ins, op: str, ty: str, d) -> None:
        """A shared atomic ATOMS cannot do: the compare-and-swap loop (cas_loop); d = old."""
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}.shared.{op}.{ty}`")
        mem = self.address(ins.srcs[0], "shared")
        old = self.cas_loop(op, ty, mem, self.atom_data(ins.srcs[1], _bits(ty)))
        if d is not None:
            self.emit(COPY, (), [self.dst_whole(d), old], guarded=False)

    def cas_loop(self, op: str, ty: str, at: VMem, v: VOp) -> VOp:
        """loop: old = LDS [at]; new = old op v; ATOMS.CAST.SPIN stored, [at], old, new;
        @!stored BRA loop. Returns `old`, the value the stored swap replaced. The lanes leave
        the loop one by one: ptx2sass/reconverge.py brackets it with BSSY/BSYNC, which make
        the warp whole again after it (as ptxas does)."""
        width = _bits(ty) // 32
        size = ("64",) if width == 2 else ()
        loop = self.start_block("cas")
        old = VOp(self.mf.new_vreg("R", width))
        new = VOp(self.mf.new_vreg("R", width))
        self.emit("LDS", size, [old, at])
        self.atomic_operation(op, ty, new, old, v)
        stored = self.cas_spin(size, at, old, new, width)
        self.out.append(MInstr("BRA", (), [Label(loop.name)], 0, VOp(stored.reg, inv=True), self.line))
        self.start_block("cas_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)
        return old

    def generic_atomic_with_fallbacks(self, ins, op: str, ty: str, d, mods, strong, mem, data) -> None:
        """A generic atom/red whose operation the shared unit lacks (64-bit add/min/max/logic,
        f32/f64/f16x2/bf16x2 add), as ptxas writes it: the ATOM's predicate says whether it
        was done (global memory; sm_90+: also another CTA's shared memory, but for the float
        adds of DISTRIBUTED_CAS_LOOP); where not, QSPC.E.S tells this CTA's shared memory (a
        compare-and-swap loop on the shared address), sm_90+ QSPC.E.D another CTA's (a generic
        compare-and-swap loop, `distributed_cas_loop`), and what is left is local memory (a
        load, the operation and a store). A plain ATOM would leave a shared or local word
        untouched."""
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}.{op}.{ty}`")
        width = _bits(ty) // 32
        size = ("64",) if width == 2 else ()
        v = data[0]
        result = VOp(self.mf.new_vreg("R", width)) if d is not None else None
        performed, shared = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        self.emit("ATOM", ("E",) + tuple(mods) + strong, [performed, result or RZ, mem] + data, ndefs=2)
        stem = f"{self.current.name.split('$')[0]}$atom{len(self.mf.blocks)}"
        done, local = MBlock(f"{stem}_done"), MBlock(f"{stem}_local")
        distributed = self.arch.cluster_shared_addresses and (op, ty) in self.DISTRIBUTED_CAS_LOOP
        other = MBlock(f"{stem}_distributed") if distributed else local
        self.branch_to(done, performed)
        self.start_block("atom_space")
        low = VMem(VOp(mem.base.reg, 0), mem.offset, wide=False)
        self.emit("QSPC", ("E", "S"), [shared, RZ, low], ndefs=2)
        self.branch_to(other, shared, taken_when=False)
        self.start_block("atom_shared")
        window = VOp(self.mf.new_vreg())
        if self.arch.cluster_shared_addresses:
            # the generic address's low word is the shared address (the rank from bit 24)
            if mem.offset:
                self.emit("IADD3", (), [window, VOp(mem.base.reg, 0), Imm(mem.offset & 0xFFFFFFFF), RZ])
            else:
                self.emit(COPY, (), [window, VOp(mem.base.reg, 0)], guarded=False)
        elif mem.offset:
            self.emit("IADD3", (), [window, VOp(mem.base.reg, 0), Imm(mem.offset & 0xFFFFFFFF), RZ])
            self.emit("LOP3", ("LUT",), [window, window, Imm(0xFFFFFF), RZ, Imm(0xC0), NOT_PT])
        else:
            self.emit("LOP3", ("LUT",), [window, VOp(mem.base.reg, 0), Imm(0xFFFFFF), RZ, Imm(0xC0), NOT_PT])
        old = self.cas_loop(op, ty, VMem(window, 0, wide=False), v)
        if result is not None:
            self.emit(COPY, (), [result, old], guarded=False)
        self.branch_to(done)
        if distributed:
            self.enter_block(other, falls_in=False)
            elsewhere = VOp(self.mf.new_vreg("P"))
            self.emit("QSPC", ("E", "D"), [elsewhere, RZ, low], ndefs=2)
            self.branch_to(local, elsewhere, taken_when=False)
            self.start_block("atom_distributed")
            old = self.distributed_cas_loop(op, ty, mem, v)
            if result is not None:
                self.emit(COPY, (), [result, old], guarded=False)
            self.branch_to(done)
        self.enter_block(local, falls_in=False)
        prior, updated = VOp(self.mf.new_vreg("R", width)), VOp(self.mf.new_vreg("R", width))
        self.emit("LD", ("E",) + size, [prior, mem])
        self.atomic_operation(op, ty, updated, prior, v)
        self.emit("ST", ("E",) + size, [mem, updated], ndefs=0)
        if result is not None:
            self.emit(COPY, (), [result, prior], guarded=False)
        self.enter_block(done, falls_in=True)
        if d is not None:
            self.emit(COPY, (), [self.dst_whole(d), result], guarded=False)

    # Generic atomics another CTA's shared memory (sm_90+ clusters) does not do itself:
    # ptxas's only QSPC.E.D loops (its 64-bit integer and packed-half atomics have none: the
    # ATOM reports them done there)
    DISTRIBUTED_CAS_LOOP = {("add", "f32"), ("add", "f64")}

    def distributed_cas_loop(self, op: str, ty: str, mem: VMem, v: VOp) -> VOp:
        """loop: old = LD.E [a]; new = old op v; ATOM.E.CAST.SPIN.STRONG.SM PT, ok, [a], old,
        new; until ok == 1 — on the generic address (no memory descriptor, as ptxas writes
        it); returns old."""
        width = _bits(ty) // 32
        size = ("64",) if width == 2 else ()
        at = VMem(mem.base, mem.offset, wide=True, suffix64=False, described=False)
        loop = self.start_block("dcas")
        old = VOp(self.mf.new_vreg("R", width))
        new = VOp(self.mf.new_vreg("R", width))
        ok = VOp(self.mf.new_vreg("R", width))
        self.emit("LD", ("E",) + size, [old, at])
        self.atomic_operation(op, ty, new, old, v)
        self.emit("ATOM", ("E", "CAST", "SPIN") + size + ("STRONG", "SM"), [PT, ok, at, old, new], ndefs=2)
        stored = VOp(self.mf.new_vreg("P"))
        if width == 2:      # the whole pair compared with 1, as ptxas
            low = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("EQ", "U32", "AND"), [low, PT, VOp(ok.reg, 0), Imm(1), PT], ndefs=1)
            self.emit("ISETP", ("EQ", "U32", "AND", "EX"), [stored, PT, VOp(ok.reg, 1), RZ, PT, low], ndefs=1)
        else:
            self.emit("ISETP", ("EQ", "U32", "AND"), [stored, PT, ok, Imm(1), PT], ndefs=1)
        self.out.append(MInstr("BRA", (), [Label(loop.name)], 0, VOp(stored.reg, inv=True), self.line))
        self.start_block("dcas_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)
        return old

    def halfword_cas_loop(self, ins, op: str, space: str, d) -> None:
        """16-bit atomics (`atom.cas.b16`, `atom.add.noftz.f16/.bf16`), as ptxas writes them: a
        compare-and-swap loop on the aligned word holding the half (shift = its bit offset),
        d = seen >> shift after it. cas: loop: expected, new = old with its half replaced by
        cmp, swap (PRMT); seen = CAS [word], expected, new; old = seen; until seen's other
        half is old's (a failure on the half itself is the answer). add: loop: cur = old >>
        shift; new = old with its half replaced by cur + v (HADD2); seen = CAS [word], old,
        new; until seen == old."""
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}.{op}.{ins.type}`")
        scope, sem = self.atom_ordering()
        mem = self.offset_added(self.memory_operand(ins.srcs[0], space))
        wide = mem.wide
        low = VOp(mem.base.reg, 0) if wide else (mem.base if mem.base is not None else RZ)
        shift, aligned_low = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [shift, low, Imm(2), RZ, Imm(0xC0), NOT_PT])        # byte 0 or 2
        self.emit("IMAD", ("SHL", "U32"), [shift, shift, Imm(8), RZ])                  # bits 0 or 16
        self.emit("LOP3", ("LUT",), [aligned_low, low, Imm(0xFFFFFFFC), RZ, Imm(0xC0), NOT_PT])
        if wide:
            word = self.new_pair()
            self.emit(COPY, (), [VOp(word.reg, 0), aligned_low], guarded=False)
            self.emit(COPY, (), [VOp(word.reg, 1), VOp(mem.base.reg, 1)], guarded=False)
            at, cas_at = VMem(word, 0, wide=True), VMem(word, 0, wide=True, suffix64=False)
            self.mf.uses_global_descriptor = True
        else:
            at = cas_at = VMem(aligned_low, 0, wide=False)
        values = [self.reg_part(v) for v in ins.srcs[1:]]
        if op == "cas":          # PRMT's selector putting a value's low half in the word's half
            place = VOp(self.mf.new_vreg())
            low_half = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("EQ", "U32", "AND"), [low_half, PT, shift, RZ, PT], ndefs=2)
            self.emit("SEL", (), [place, self.reg_part(ir.Const(self.PRMT_LOW_HALF, "u32")),
                                  Imm(self.PRMT_HIGH_HALF), low_half])
        else:
            own = VOp(self.mf.new_vreg())        # the half's bits in the word: 0xffff << shift
            self.emit("SHF", ("L", "U32"), [own, self.reg_part(ir.Const(0xFFFF, "u32")), shift, RZ])
        first = VOp(self.mf.new_vreg())
        load = {"global": ("LDG", ("E",)), "generic": ("LD", ("E",)), "shared::cluster": ("LD", ("E",)),
                "shared": ("LDS", ())}[space]
        if space == "shared" and sem in ("release", "acq_rel"):
            self.fences(release_fences(scope))     # once, before the loop (ptxas: no acquire side)
        self.emit(load[0], load[1], [first, at])
        loop = self.start_block("cas16")
        old, cur, half, new, seen = (VOp(self.mf.new_vreg()) for _ in range(5))
        self.emit(COPY, (), [old, first], guarded=False)
        if op == "cas":
            # expected = the word with the half replaced by cmp, new = by swap; the loop goes
            # on only while the other half moved under it (a CAS that failed on the half
            # itself is the answer), as ptxas's loop
            other, seen_other = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            values = [v if isinstance(v, VOp) else self.as_reg(v) for v in values]  # PRMT's c: a register
            self.emit("PRMT", (), [cur, old, place, values[0]])
            self.emit("PRMT", (), [new, old, place, values[1]])
            self.emit("PRMT", (), [other, old, place, RZ])
            self.atomic_cas_of_loop(space, sem, scope, seen, cas_at, cur, new)
            self.emit("PRMT", (), [seen_other, seen, place, RZ])
            self._close_cas16_loop(loop, seen_other, other, first, seen, d, shift)
            return
        self.emit("SHF", ("R", "U32", "HI"), [cur, RZ, shift, old])
        # (bf16, sm_90+ as the frontend allows it: HADD2.BF16_V2, as ptxas)
        self.emit("HADD2", ("BF16_V2",) if ins.type == "bf16" else (),
                  [half, replace(cur, suffix=("H0_H0",)), replace(values[0], suffix=("H0_H0",))])
        self.emit("LOP3", ("LUT",), [half, half, Imm(0xFFFF), RZ, Imm(0xC0), NOT_PT])
        self.emit("SHF", ("L", "U32"), [half, half, shift, RZ])
        self.emit("LOP3", ("LUT",), [new, old, own, half, Imm(0xBA), NOT_PT])        # (a & ~b) | c
        self.atomic_cas_of_loop(space, sem, scope, seen, cas_at, old, new)
        self._close_cas16_loop(loop, seen, old, first, seen, d, shift)

    def _close_cas16_loop(self, loop, got, want, first, seen, d, shift) -> None:
        """The 16-bit CAS loop's back edge (again while `got` != `want`, the word seen carried
        round as `first`) and the half the statement returns, from the word seen."""
        done = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("EQ", "U32", "AND"), [done, PT, got, want, PT], ndefs=2)
        self.emit(COPY, (), [first, seen], guarded=False)
        self.out.append(MInstr("BRA", (), [Label(loop.name)], 0, VOp(done.reg, inv=True), self.line))
        self.start_block("cas16_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)
        if d is not None:
            self.emit("SHF", ("R", "U32", "HI"), [self.dst(d), RZ, shift, seen])

    # PRMT selectors: the word with its low (high) half replaced by the other source's low half
    PRMT_LOW_HALF, PRMT_HIGH_HALF = 0x3254, 0x5410

    def atomic_cas_of_loop(self, space: str, sem, scope, seen: VOp, cas_at: VMem, old: VOp, new: VOp):
        """A halfword loop's compare-and-swap of its word: `seen` = CAS [word], old, new."""
        if space == "shared":
            self.emit("ATOMS", ("CAS",), [seen, cas_at, old, new])
            return
        # a memory order fences each compare-and-swap of the loop, as ptxas does
        if sem in ("release", "acq_rel"):
            self.fences(release_fences(scope))
        opcode = "ATOMG" if space == "global" else "ATOM"
        self.emit(opcode, ("E", "CAS", "STRONG", scope), [PT, seen, cas_at, old, new], ndefs=2)
        if sem in ("acquire", "acq_rel"):
            self.fences(acquire_fences(scope))

    def sel_atom(self, ins):
        self.atomic(ins, ins.dests[0] if ins.dests else None)

    def sel_red(self, ins):
        if "async" in ins.modifiers:
            return self.red_async(ins)
        self.atomic(ins, None)

    RED_ASYNC_TYPES = {"u32": (), "b32": (), "s32": ("S32",), "u64": ("64",), "s64": ("64",)}  # (s64: add alone)

    def red_async(self, ins):
        """`red.async…shared::cluster.mbarrier::complete_tx::bytes.<op>.<type> [a], b, [mbar]`
        (sm_90): REDAS.<OP>[.S32/.64] [R.64], b, the pair holding a's address and the
        mbarrier's (the reduction then completes its bytes there), as ptxas 13.5."""
        op = next((m for m in ins.modifiers if m in self.ATOM_OPS), None)
        ty = ins.type
        if not self.arch.cluster_shared_addresses or op not in (
                "add", "min", "max", "inc", "dec", "and", "or", "xor") \
                or ty not in self.RED_ASYNC_TYPES or len(ins.srcs) != 3:
            raise self.unsupported(f"`red.{'.'.join(ins.modifiers)}.{ty}`")
        a, b, bar = ins.srcs
        pair = self.new_pair()
        for k, addr in enumerate((a, bar)):
            self.move(VOp(pair.reg, k), self.cluster_address_reg(addr))
        mods = (op.upper(),) + (self.RED_ASYNC_TYPES[ty] if op in ("add", "min", "max") else ())
        if _bits(ty) == 32:
            data = self.reg_part(b)
        elif isinstance(b, ir.Value) and b.id not in self.param_values and self.vreg(b).width == 2:
            data = VOp(self.vreg(b))
        else:
            data = self.pair_of(b)
        self.emit("REDAS", mods, [VMem(pair, 0, wide=True, described=False), data], ndefs=0)

    def cluster_address_reg(self, addr):
        """A 32-bit register holding a shared::cluster address operand's value."""
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"address operand {addr!r}")
        base, offset = addr.base, addr.offset
        if isinstance(base, ir.Symbol):
            p = self.placements.get(base.name)
            if p is None or p.space != "shared":
                raise self.unsupported(f"address operand {addr!r}")
            if p.symbol is not None:        # (relocatable output)
                return self.window_word(p, base.offset + offset)
            t = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [t, self.shared_rank(), self.imm32(p.value + base.offset + offset), RZ])
            return t
        if not isinstance(base, ir.Value):
            raise self.unsupported(f"address operand {addr!r}")
        r = self.reg_part(base)
        if not offset:
            return r
        t = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [t, r, self.imm32(offset), RZ])
        return t

    def atomic(self, ins, d) -> None:
        """atom/red in every space: ATOMG (global), ATOM (generic), ATOMS (shared), RED (a
        global reduction without result); the old value lands in `d`."""
        op = next((m for m in ins.modifiers if m in self.ATOM_OPS), None)
        ty = ins.type
        space = self.access_space(ins)
        if op is None or space not in ("global", "generic", "shared", "shared::cluster"):
            raise self.unsupported(f"`{ins.opcode}.{space}.{'.'.join(ins.modifiers)}.{ty}`")
        if op == "cas" and d is None:
            raise self.unsupported("`red.cas`")
        if any(m in ("v2", "v4", "v8") for m in ins.modifiers):
            return self.vector_atomic(ins, op, ty, space)
        if _bits(ty) == 16 and (op, ty) in (("cas", "b16"), ("add", "f16"), ("add", "bf16")):
            return self.halfword_cas_loop(ins, op, space, d)
        if space == "shared" and (op, ty) in self.SHARED_CAS_LOOP:
            return self.shared_cas_loop(ins, op, ty, d)
        mods = self.atom_modifiers(op, ty, space)
        bits = _bits(ty)
        # an L2 cache policy is a hint: left out, as for loads and stores
        sources = ins.srcs[1:-1] if "L2::cache_hint" in ins.modifiers else ins.srcs[1:]
        scope, sem = self.atom_ordering()
        if d is not None and sem not in ("acquire", "acq_rel") and self.never_read(d):
            d = None        # as ptxas: RED for a global reduction, else the old value to RZ
        if space == "shared" and sem is None and self.counts_lanes(op, ty, d, sources):
            # as ptxas: every lane adds one, the shared unit sums the lanes naming each word
            mem = self.address(ins.srcs[0], "shared")
            self.emit("ATOMS", ("POPC", "INC", "32"), [RZ, replace(mem, uniform_zero=True)])
            return
        fallbacks = space in ("generic", "shared::cluster") and (op, ty) in self.SHARED_CAS_LOOP
        combine = None if fallbacks else warp_combination(self, ins, op, ty, d, sem, sources)
        if combine is not None:     # one lane does the warp's update (isel/warp_aggregated_atomics.py)
            data = [VOp(self.mf.new_vreg())]
        else:
            data = [self.atom_data(v, bits) for v in sources]
        dst = self.dst_whole(d) if d is not None else RZ
        if space == "shared":
            # a memory order: the release fences before, as for global memory; the acquire's
            # L1 invalidation only where the target's ptxas writes one (sm_90+)
            if sem in ("release", "acq_rel"):
                self.fences(release_fences(scope))
            mi = self.emit("ATOMS", tuple(mods), [dst, self.address(ins.srcs[0], "shared")] + data)
            mi.warp_combine = combine
            if sem in ("acquire", "acq_rel") and self.arch.shared_acquire_invalidates:
                self.fences(acquire_fences(scope))
            return
        mem = self.address(ins.srcs[0], space)
        if op == "cas":        # the compare-and-swap form names its 64-bit base without `.64`
            mem = VMem(mem.base, mem.offset, wide=True, suffix64=False)
        self.mf.uses_global_descriptor = True
        if sem in ("release", "acq_rel"):
            self.fences(release_fences(scope))
        strong = ("STRONG", scope)
        if fallbacks:
            self.generic_atomic_with_fallbacks(ins, op, ty, d, mods, strong, mem, data)
        elif d is None and space == "global" and op not in ("cas", "exch"):
            mi = self.emit("RED", ("E",) + tuple(mods) + strong, [mem] + data, ndefs=0)
        else:
            opcode = "ATOMG" if space == "global" else "ATOM"
            # Destinations: the (unused) predicate PT, then the old value.
            mi = self.emit(opcode, ("E",) + tuple(mods) + strong, [PT, dst, mem] + data, ndefs=2)
        if not fallbacks:
            mi.warp_combine = combine
        if sem in ("acquire", "acq_rel"):
            self.fences(acquire_fences(scope))

    def vector_atomic(self, ins, op: str, ty: str, space: str) -> None:
        """atom/red `.v2/.v4/.v8` (sm_90+; global or generic; f32 add, f16/bf16(x2)
        add/min/max: the frontend checks the forms): one ATOMG/ATOM/REDG of the elements
        packed side by side, typed by the count of its 32- or 16-bit lanes (`F32x4`,
        `F16x8`: four f16x2 or eight f16), as ptxas 13.5 writes it. An unread result
        is REDG (global) or ATOM's RZ (generic)."""
        if space == "shared" or not self.arch.vector_atomics:
            raise self.unsupported(f"vector `{ins.opcode}.{space}.{op}.{ty}`")
        sources = ins.srcs[1:-1] if "L2::cache_hint" in ins.modifiers else ins.srcs[1:]
        bits = _bits(ty)
        total = len(sources) * bits
        if ty == "f32":
            mods = (self.ATOM_OPS[op], f"F32x{len(sources)}", "FTZ", "RN")
        else:
            mods = (self.ATOM_OPS[op], f"{ty.removesuffix('x2').upper()}x{total // 16}", "RN")
        scope, sem = self.atom_ordering()
        dests = [v for v in ins.dests if isinstance(v, ir.Value)]
        read = sem in ("acquire", "acq_rel") or any(not self.never_read(v) for v in dests)
        data = self.data_words(sources, bits)
        mem = self.address(ins.srcs[0], space)
        self.mf.uses_global_descriptor = True
        if sem in ("release", "acq_rel"):
            self.fences(release_fences(scope))
        strong = ("E",) + mods + ("STRONG", scope)
        if not read and space == "global":
            self.emit("RED", strong, [mem, data], ndefs=0)
        else:
            t = VOp(self.mf.new_vreg("R", max(1, total // 32))) if read else RZ
            self.emit("ATOMG" if space == "global" else "ATOM", strong, [PT, t, mem, data], ndefs=2)
            if read:
                self.copy_out_vector(ins, t.reg, bits, ty)
        if sem in ("acquire", "acq_rel"):
            self.fences(acquire_fences(scope))

    # ------------------------------------------------------------------ barriers
    BAR_REDUCTIONS = {"and": "AND", "or": "OR", "popc": "POPC"}
    BARRIER_COUNT = 16

    def barrier_operands(self, srcs) -> list:
        """The barrier id and the optional thread count, each an immediate or a register
        (`BAR.SYNC 0x1, 0x40`, `BAR.SYNC R2`, `BAR.SYNC 0x2, R0`). Both in registers share one
        register field in the hardware: as ptxas, the count goes to bits 16..27 of the id's
        register (`BAR.SYNC R0, R0`)."""
        bar_id = srcs[0]
        if len(srcs) > 1 and not isinstance(bar_id, ir.Const) and not isinstance(srcs[1], ir.Const):
            self.mf.num_barriers = self.BARRIER_COUNT
            shifted, packed = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("SHF", ("L", "U32"), [shifted, self.reg_part(srcs[1]), Imm(0x10), RZ])
            self.emit("LOP3", ("LUT",), [packed, shifted, Imm(0x0FFF0000), self.reg_part(bar_id),
                                         Imm(0xE2), NOT_PT])
            return [packed, packed]
        if isinstance(bar_id, ir.Const):
            if bar_id.value < self.BARRIER_COUNT:
                self.mf.num_barriers = max(self.mf.num_barriers, bar_id.value + 1)
            ops = [Imm(bar_id.value & 0xFFFFFFFF)]
        else:           # any barrier may be named at run time
            self.mf.num_barriers = self.BARRIER_COUNT
            ops = [self.reg_part(bar_id)]
        if len(srcs) > 1:
            count = srcs[1]
            ops.append(Imm(count.value & 0xFFFFFFFF) if isinstance(count, ir.Const) else self.reg_part(count))
        return ops

    def sel_bar(self, ins):
        """`bar.sync/red` (always CTA-aligned): BAR.SYNC/RED.DEFER_BLOCKING; a reduction's
        result comes back through B2R.RESULT."""
        mods = tuple(m for m in ins.modifiers if m != "cta")    # bar.cta.* is bar.*
        mode = mods[0] if mods else None
        if mode == "warp":
            return self.sel_bar_warp(ins)
        self.meet_in_barrier_routine()
        if mode == "sync":
            self.emit("BAR", ("SYNC", "DEFER_BLOCKING"), self.barrier_operands(ins.srcs), ndefs=0)
        elif mode == "red":
            kind = next((m for m in ins.modifiers if m in self.BAR_REDUCTIONS), None)
            if kind is None or len(ins.srcs) not in (2, 3):
                raise self.unsupported(f"`bar.{'.'.join(ins.modifiers)}`")
            ops = self.barrier_operands(ins.srcs[:-1])
            mi = self.emit("BAR", ("RED", self.BAR_REDUCTIONS[kind], "DEFER_BLOCKING"),
                           ops + [self.pred_operand(ins.srcs[-1])], ndefs=0)
            if ins.opcode == "barrier" and "aligned" not in mods:
                barrier_routine.mark(self.mf, mi, self.barrier_routine_operands(ins.srcs[:-1]))
            d = ins.dests[0]
            if kind == "popc":
                self.emit("B2R", ("RESULT",), [self.dst(d)])
            else:
                self.emit("B2R", ("RESULT",), [RZ, self.dst(d)], ndefs=2)
        elif mode == "arrive" and len(ins.srcs) == 2:
            mi = self.emit("BAR", ("ARV",), self.barrier_operands(ins.srcs), ndefs=0)
            if ins.opcode == "barrier" and "aligned" not in mods:
                barrier_routine.mark(self.mf, mi, self.barrier_routine_operands(ins.srcs))
        else:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}`")

    def sel_barrier(self, ins):
        """`barrier[.cta].sync` without `.aligned` may be reached by diverged threads: BAR.SYNC
        without DEFER_BLOCKING up to sm_89 (with it later, `Target.nonaligned_barrier_defers`),
        listed as a warp-synchronous instruction (as ptxas)."""
        if ins.modifiers[:1] == ("cluster",):
            return self.cluster_barrier(ins)
        mods = tuple(m for m in ins.modifiers if m != "cta")    # barrier.cta.* is barrier.*
        if "aligned" in mods or mods[:1] != ("sync",):
            return self.sel_bar(ins)
        mods = ("SYNC", "DEFER_BLOCKING") if self.arch.nonaligned_barrier_defers else ("SYNC",)
        self.meet_in_barrier_routine()
        mi = self.warp_sync_op("BAR", mods, self.barrier_operands(ins.srcs), ndefs=0)
        barrier_routine.mark(self.mf, mi, self.barrier_routine_operands(ins.srcs))

    def barrier_routine_operands(self, srcs) -> list:
        """A non-aligned barrier's id and count as its routine takes them (an Imm or a
        register each: ptx2sass/barrier_routine.py)."""
        return [Imm(s.value & 0xFFFFFFFF) if isinstance(s, ir.Const) else self.reg_part(s) for s in srcs[:2]]

    def meet_in_barrier_routine(self) -> None:
        """In a non-aligned barrier's routine (ptx2sass/barrier_routine.py) the warp's lanes
        meet before its BAR."""
        kind = self.fn.attributes.get(slow_paths.SLOW_PATH)
        if kind is not None and kind[0] == "barrier":
            self.emit("WARPSYNC", (), [Imm(0xFFFFFFFF)], ndefs=0)

    def cluster_barrier(self, ins) -> None:
        """barrier.cluster.arrive[.release|.relaxed] / .wait[.acquire] (sm_90+), as ptxas 13.5
        decides at run time from the driver's cluster-launch word (`driver_cbank`
        "cluster_launch", 1 in a cluster launch): there UCGABAR_ARV (after the release
        fences) / UCGABAR_WAIT (then the acquire's CCTL.IVALL); otherwise the CTA is its own
        cluster: arrive does nothing and wait is BAR.SYNC 0. A kernel declared
        `.explicitcluster` is always launched as a cluster: no test (as ptxas)."""
        mods = [m for m in ins.modifiers if m not in ("cluster", "aligned")]
        at = dict(self.arch.driver_cbank or ()).get("cluster_launch")
        if at is None or self.guard is not None or not mods or mods[0] not in ("arrive", "wait") or \
                [m for m in mods[1:] if m not in ("release", "relaxed", "acquire")]:
            raise self.unsupported(f"`barrier.{'.'.join(ins.modifiers)}`")
        arrive = mods[0] == "arrive"
        if self.fn.is_entry and "explicitcluster" in self.fn.attributes:
            self.cluster_barrier_op(arrive, mods)
            return
        flag, cluster = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg("P"))
        self.emit("LDC", (), [flag, ConstRef(0, at)])
        self.emit("ISETP", ("EQ", "U32", "AND"), [cluster, PT, flag, Imm(1), PT], ndefs=2)
        if not arrive:
            # barrier 0, counted and listed as warp-synchronous as ptxas does
            # (NUM_BARRIERS, COOP_GROUP_INSTR_OFFSETS)
            self.warp_sync_op("BAR", ("SYNC", "DEFER_BLOCKING"), [Imm(0)], ndefs=0)
            self.out[-1].guard = VOp(cluster.reg, inv=True)
            self.mf.num_barriers = max(self.mf.num_barriers, 1)
        start = self.current
        skip = MInstr("BRA", (), [None], 0, VOp(cluster.reg, inv=True), self.line)
        self.out.append(skip)
        self.start_block("cga_barrier")
        self.cluster_barrier_op(arrive, mods)
        join = self.start_block("cga_barrier_done")
        skip.operands[0] = Label(join.name)
        start.succs.insert(0, join)
        join.preds.append(start)

    def cluster_barrier_op(self, arrive: bool, mods) -> None:
        """A cluster launch's barrier.cluster: UCGABAR_ARV after the release fences, or
        UCGABAR_WAIT and the acquire's CCTL.IVALL."""
        if arrive:
            if "relaxed" not in mods:
                self.fences(release_fences("GPU"))
            self.emit("UCGABAR_ARV", (), [], ndefs=0)
        else:
            self.emit("UCGABAR_WAIT", (), [], ndefs=0)
            self.fences(acquire_fences("GPU"))

    def sel_bar_warp(self, ins):
        """`bar.warp.sync mask`: WARPSYNC (ptxas leaves a NOP where it knows the warp is
        converged)."""
        mask = self.known_constant(ins.srcs[0])
        member = self.reg_part(ins.srcs[0]) if mask is None else Imm(mask & 0xFFFFFFFF)
        self.warp_sync_op("WARPSYNC", (), [member], ndefs=0)

    MEMBAR_LEVELS = {"cta": "CTA", "gl": "GPU", "gpu": "GPU", "sys": "SYS"}

    def sel_membar(self, ins):
        if ins.modifiers[:2] == ("proxy", "alias"):
            return self.proxy_alias_fence()
        level = next((m for m in ins.modifiers if m in self.MEMBAR_LEVELS), "gl")
        self.memory_barrier("SC", self.MEMBAR_LEVELS[level])

    # c[0x0][0x128]: a word the driver sets when the system scope needs no fence of its own
    # (ptxas's fence.proxy.alias then orders at GPU scope)
    SYSTEM_FENCE_FLAG = ConstRef(0, 0x128)

    def proxy_alias_fence(self) -> None:
        """fence/membar.proxy.alias: MEMBAR.SC.SYS, or MEMBAR.SC.GPU where the driver's flag
        word is set, then CCTL.IVALL (ptxas branches around the two MEMBARs; the same
        choice is made here by predicating them)."""
        guard = self.guard if self.guard is not None else PT
        sys_p, gpu_p = VOp(self.mf.new_vreg("P")), VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("EQ", "U32", "AND"), [sys_p, PT, RZ, self.SYSTEM_FENCE_FLAG, guard], ndefs=2,
                  guarded=False)
        self.emit("ISETP", ("NE", "U32", "AND"), [gpu_p, PT, RZ, self.SYSTEM_FENCE_FLAG, guard], ndefs=2,
                  guarded=False)
        saved = self.guard
        self.guard = sys_p
        self.emit("MEMBAR", ("SC", "SYS"), [], ndefs=0)
        self.guard = gpu_p
        self.emit("MEMBAR", ("SC", "GPU"), [], ndefs=0)
        self.guard = saved
        self.emit(*ACQUIRE_INVALIDATION, [], ndefs=0)

    def sel_fence(self, ins):
        """`fence.sc` / `fence.acq_rel` (the default) / `.acquire` / `.release` at a scope, as
        ptxas writes them."""
        mods = ins.modifiers
        restrict = next((m for m in mods if m.startswith("sync_restrict::")), None)
        if restrict in self.RESTRICTED_FENCES and mods[:2] in (("proxy", "async::generic"),) + tuple(
                (sem, restrict) for sem in ("acquire", "release")):
            for opcode, fence_mods in self.RESTRICTED_FENCES[restrict]:
                self.emit(opcode, fence_mods, [], ndefs=0)
            return
        if mods[:2] == ("proxy", "alias"):
            return self.proxy_alias_fence()
        if mods[:2] == ("proxy", "async"):
            return self.proxy_async_fence(ins)
        if mods[:2] == ("proxy", "tensormap::generic"):
            return self.proxy_tensormap_fence(ins)          # isel/tensor_copy.py
        if mods == ("mbarrier_init", "release", "cluster"):
            # sm_90+: SYNCS.EXCH (mbarrier.init) is already ordered for the cluster; ptxas 13.5
            # writes a NOP in the fence's place
            self.emit("NOP", (), [], ndefs=0)
            return
        if any(m.startswith(("proxy", "mbarrier", "op_restrict")) for m in mods):
            raise self.unsupported(f"`fence.{'.'.join(mods)}`")
        level = next((m for m in mods if m in self.MEMBAR_LEVELS), "gpu")
        if "acquire" in mods or "release" in mods:
            # the one-sided fences (PTX 8.6): only their half of acq_rel's code (ptxas 13.5:
            # acquire = the L1 invalidation, a NOP at the CTA; release = MEMBAR/ERRBAR)
            scope = self.MEMBAR_LEVELS[level]
            half = acquire_fences(scope) if "acquire" in mods else release_fences(scope, "ALL")
            return self.fences(half) if half else self.emit("NOP", (), [], ndefs=0)
        self.memory_barrier("SC" if "sc" in mods else "ALL", self.MEMBAR_LEVELS[level])

    # fence.proxy.async[.<space>] (sm_90+): the generic proxy's accesses ordered with the
    # async proxy's (bulk copies, st.async): ptxas 13.5's fences per space
    PROXY_ASYNC_FENCES = {None: [("MEMBAR", ("ALL", "GPU")), ("FENCE", ("VIEW", "ASYNC", "S"))],
                          "global": [("FENCE", ("VIEW", "ASYNC", "G"))],
                          "shared::cta": [("MEMBAR", ("ALL", "CTA")), ("FENCE", ("VIEW", "ASYNC", "S"))],
                          "shared::cluster": [("MEMBAR", ("ALL", "GPU")), ("FENCE", ("VIEW", "ASYNC", "S"))]}
    # fence[.proxy.async::generic].{release.sync_restrict::shared::cta, acquire.sync_restrict::
    # shared::cluster}.cluster (sm_90+): a release restricted to the CTA's shared memory is the
    # shared::cta proxy fence; the acquire side needs nothing (ptxas 13.5 leaves a NOP)
    RESTRICTED_FENCES = {"sync_restrict::shared::cta": PROXY_ASYNC_FENCES["shared::cta"],
                         "sync_restrict::shared::cluster": [("NOP", ())]}

    def proxy_async_fence(self, ins) -> None:
        rest = [m for m in ins.modifiers[2:]]
        space = rest[0] if rest else (ins.space or None)
        if len(rest) > 1 or space not in self.PROXY_ASYNC_FENCES:
            raise self.unsupported(f"`fence.{'.'.join(ins.modifiers)}`")
        for opcode, mods in self.PROXY_ASYNC_FENCES[space]:
            self.emit(opcode, mods, [], ndefs=0)

    def memory_barrier(self, kind: str, scope: str) -> None:
        """A fence: MEMBAR; beyond the CTA also ERRBAR and an L1 invalidation (CCTL.IVALL)."""
        self.fences(release_fences(scope, kind) + acquire_fences(scope))

    def known_constant(self, op) -> int | None:
        """The value of an operand that is a constant, or a register moved from one."""
        if isinstance(op, ir.Const):
            return op.value
        if not isinstance(op, ir.Value):
            return None
        if not hasattr(self, "_const_defs"):
            self._const_defs = {ins.dests[0].id: ins.srcs[0].value for b in self.fn.blocks
                                for ins in b.instrs if ins.opcode == "mov" and ins.guard is None
                                and len(ins.dests) == 1 and len(ins.srcs) == 1
                                and isinstance(ins.srcs[0], ir.Const)}
        return self._const_defs.get(op.id)

    def warp_sync_op(self, *args, **kwargs):
        """A `.sync` warp operation: ptxas lists each one in COOP_GROUP_INSTR_OFFSETS."""
        mi = self.emit(*args, **kwargs)
        self.mf.warp_sync.append(mi)
        return mi

    def sync_members(self, mask) -> int | None:
        """The member mask of a `.sync` warp operation; a partial one first makes those lanes
        meet (WARPSYNC), as ptxas's divergent-path code does. Returns the mask, or None for
        one computed at run time (then `WARPSYNC R`: `member_register` holds it)."""
        value = self.known_constant(mask)
        if value is None:
            self.emit("WARPSYNC", (), [self.reg_part(mask)], ndefs=0)
            return None
        value &= 0xFFFFFFFF
        if value != 0xFFFFFFFF:
            self.emit("WARPSYNC", (), [Imm(value)], ndefs=0)
        return value

    def lanes_in(self, mask) -> VOp:
        """A predicate: this lane is in the run-time member mask (SR_EQMASK & mask)."""
        me, p = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg("P"))
        self.emit("S2R", (), [me, SpecialReg("SR_EQMASK")])
        self.emit("LOP3", ("LUT",), [p, RZ, me, self.reg_part(mask), RZ, Imm(0xC0), NOT_PT], ndefs=2)
        return p

    def sel_shfl(self, ins):
        mode = next((m for m in ins.modifiers if m in ("up", "down", "bfly", "idx")), None)
        if mode is None or "sync" not in ins.modifiers:
            raise self.unsupported(f"`shfl.{'.'.join(ins.modifiers)}`")
        a, b, c, mask = ins.srcs
        self.sync_members(mask)
        # an unread in-range predicate is PT, as ptxas writes it (no register, no wait on it)
        p = VOp(self.vreg(ins.dests[1])) if len(ins.dests) > 1 and not self.never_read(ins.dests[1]) else PT
        # SHFL's immediates are 5 bits (lane/delta) and 13 bits (clamp and segment mask):
        # larger constants go through a register, as the hardware reads all 32 bits there;
        # it has no constant-bank operand (a parameter comes in a register too)
        small = lambda v, limit: isinstance(v, ir.Const) and v.value & 0xFFFFFFFF <= limit   # noqa: E731
        lane = self.part_of(b, 0) if small(b, 0x1F) else self.reg_part(b)
        clamp = self.part_of(c, 0) if small(c, 0x1FFF) else self.reg_part(c)
        self.warp_sync_op("SHFL", (mode.upper(),), [p, self.dst(ins.dests[0]), self.reg_part(a), lane, clamp],
                          ndefs=2)

    def sel_vote(self, ins):
        mode = next((m for m in ins.modifiers if m in ("any", "all", "uni", "ballot")), None)
        if mode is None or "sync" not in ins.modifiers:
            raise self.unsupported(f"`vote.{'.'.join(ins.modifiers)}`")
        p, mask = ins.srcs
        members = self.sync_members(mask)
        src = self.pred_operand(p)
        if members is None:
            # the active lanes may be more than the members: ballot, then keep the members'
            # bits (any: one of them set; all: none of them clear)
            t, kept = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.warp_sync_op("VOTE", ("ANY",), [t, PT, src], ndefs=2)
            lut = {"ballot": 0xC0, "any": 0xC0, "all": 0x0C, "uni": 0xC0}[mode]   # t & m, ~t & m
            self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]) if mode == "ballot" else kept, t,
                                         self.reg_part(mask), RZ, Imm(lut), NOT_PT])
            if mode == "uni":
                # the members agree: none of them set, or all of them
                none = VOp(self.mf.new_vreg("P"))
                self.emit("ISETP", ("EQ", "U32", "AND"), [none, PT, kept, RZ, PT], ndefs=2)
                self.emit("ISETP", ("EQ", "U32", "OR"),
                          [self.dst(ins.dests[0]), PT, kept, self.reg_part(mask), none], ndefs=2)
            elif mode != "ballot":
                self.emit("ISETP", ("NE" if mode == "any" else "EQ", "U32", "AND"),
                          [self.dst(ins.dests[0]), PT, kept, RZ, PT], ndefs=2)
            return
        if mode == "ballot":
            # the ballot of every active lane, as ptxas writes it for any constant mask (CUDA's
            # __ballot_sync: "the Nth thread is active"), not only the members'
            self.warp_sync_op("VOTE", ("ANY",), [self.dst(ins.dests[0]), PT, src], ndefs=2)
        else:
            # vote.uni: the voting lanes agree (VOTE.EQ, as ptxas)
            self.warp_sync_op("VOTE", ("EQ" if mode == "uni" else mode.upper(),),
                              [self.dst(ins.dests[0]), src])

    def sel_match(self, ins):
        """`match.{any,all}.sync.b32/b64`: MATCH.ANY d, a / MATCH.ALL p, d, a (.U64 for pairs)."""
        mode = next((m for m in ins.modifiers if m in ("any", "all")), None)
        if mode is None or "sync" not in ins.modifiers or _bits(ins.type) not in (32, 64):
            raise self.unsupported(f"`match.{'.'.join(ins.modifiers)}.{ins.type}`")
        a, mask = ins.srcs
        members = self.sync_members(mask)
        mods = (mode.upper(),) + (("U64",) if _bits(ins.type) == 64 else ())
        src = self.atom_data(a, _bits(ins.type))
        d = self.dst(ins.dests[0])
        if members is None or (mode == "all" and not self.arch.match_all_instruction):
            # the active lanes may be more than the members: the lanes with equal values,
            # kept to the members; all: when that is every member (sm_75: always so)
            t = VOp(self.mf.new_vreg())
            self.warp_sync_op("MATCH", ("ANY",) + mods[1:], [t, src])
            m = self.reg_part(mask)
            if mode == "any":
                self.emit("LOP3", ("LUT",), [d, t, m, RZ, Imm(0xC0), NOT_PT])
                return
            kept = VOp(self.mf.new_vreg())
            self.emit("LOP3", ("LUT",), [kept, t, m, RZ, Imm(0xC0), NOT_PT])
            p = VOp(self.vreg(ins.dests[1])) if len(ins.dests) > 1 else VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("EQ", "U32", "AND"), [p, PT, kept, m, PT], ndefs=2)
            self.emit("SEL", (), [d, m, RZ, p])
            return
        if mode == "any":
            self.warp_sync_op("MATCH", mods, [d, src])
        else:
            p = VOp(self.vreg(ins.dests[1])) if len(ins.dests) > 1 else PT
            self.warp_sync_op("MATCH", mods, [p, d, src], ndefs=2)

    def sel_nanosleep(self, ins):
        value = self.known_constant(ins.srcs[0])
        time = self.reg_part(ins.srcs[0]) if value is None else Imm(value & 0xFFFFFFFF)
        self.emit("NANOSLEEP", (), [time], ndefs=0)

    def sel_pmevent(self, ins):
        """`pmevent a` / `pmevent.mask m`: PMTRIG (1 << a) / PMTRIG m, as ptxas 13.5 writes
        them (a performance-monitor trigger: the emulator runs it as nothing). Refused at the
        line where the target's table has no PMTRIG form."""
        from ptx2sass.encoder import codec
        value = self.known_constant(ins.srcs[0])
        if value is None:
            raise self.unsupported("`pmevent` of a register")
        bits = Imm((value if "mask" in ins.modifiers else 1 << value) & 0xFFFF)
        try:
            codec.encode_text(f"PMTRIG {bits.value:#x}", self.arch.name)
        except codec.EncodeError:
            raise self.unsupported(f"`pmevent` on {self.arch.name}") from None
        self.emit("PMTRIG", (), [bits], ndefs=0)

    GRIDDEP_OPS = {"wait": "ACQBULK", "launch_dependents": "PREEXIT"}

    def sel_griddepcontrol(self, ins):
        """`griddepcontrol.wait` waits for the prerequisite grids (ACQBULK);
        `.launch_dependents` lets the dependent grid start (PREEXIT). The frontend admits
        the instruction only on targets that have both (sm_90 and later)."""
        op = next(m for m in ins.modifiers if m in self.GRIDDEP_OPS)
        self.emit(self.GRIDDEP_OPS[op], (), [], ndefs=0)

    SETMAXNREG_UP = Reg("UP", 0)    # TRY_ALLOC's success, read by the branch right after it

    def sel_setmaxnreg(self, ins):
        """`setmaxnreg.inc/.dec.sync.aligned.u32 n` (sm_90a, sm_100a/f, sm_103a, sm_120a), as
        ptxas 13.5 writes it: `.dec` is USETMAXREG.DEALLOC.CTAPOOL n; `.inc` retries
        USETMAXREG.TRY_ALLOC.CTAPOOL UP0, n until UP0 says the registers came (sm_90:
        through PLOP3 into P0). In a kernel without `.maxnreg` ptxas drops it (info C7508,
        frontend/usage_warnings.py); a `.dec` above the most the kernel can hold by then
        (`.maxnreg`, or the largest `.inc` count) is ptxas's fatal C7406. The allocator
        keeps the whole kernel within the smallest count (codegen's register limit)."""
        if not self.fn.is_entry:
            raise self.unsupported("`setmaxnreg` in a .func")
        # `.sync.aligned`: the whole warp issues it; ptxas puts WARPSYNC.ALL before it (first
        # in the retry loop) where a divergent branch may come before (a NOP where none can)
        sync = self.ir_block in self.diverged_blocks
        self.mf.setmaxnreg_diverged |= sync
        maxnreg = self.fn.attributes.get("maxnreg")
        if not maxnreg:
            return
        count = self.known_constant(ins.srcs[0])
        if "dec" in ins.modifiers:
            largest = max([int(maxnreg[0])] + ir.setmaxnreg_counts(self.fn, "inc"))
            if count > largest:
                raise CompileError(f"(C7406) setmaxnreg.dec has register count ({count}) which is "
                                   "larger than the largest temporal register count in the "
                                   f"program ({largest})", self.file, self.line, severity="fatal")
            if sync:
                self.emit("WARPSYNC", (), [Imm(0xFFFFFFFF)], ndefs=0, guarded=False)
            self.emit("USETMAXREG", ("DEALLOC", "CTAPOOL"), [Imm(count)], ndefs=0)
            return
        up = self.SETMAXNREG_UP
        retry = self.start_block("setmaxnreg")
        if sync:
            self.emit("WARPSYNC", (), [Imm(0xFFFFFFFF)], ndefs=0, guarded=False)
        self.emit("USETMAXREG", ("TRY_ALLOC", "CTAPOOL"), [up, Imm(count)], ndefs=1)
        if self.arch.uniform_predicate_branch:
            self.out.append(MInstr("BRA", ("U",), [Reg("UP", 0, inv=True), Label(retry.name)], 0,
                                   None, self.line, uniform=True))
        else:
            got = VOp(self.mf.new_vreg("P"))
            self.emit("PLOP3", ("LUT",), [got, PT, PT, PT, up, Imm(0x80), Imm(0)])
            self.out.append(MInstr("BRA", (), [Label(retry.name)], 0, VOp(got.reg, inv=True), self.line,
                                   uniform=True))
        self.start_block("setmaxnreg_done")
        retry.succs.insert(0, retry)
        retry.preds.append(retry)

    REDUX_OPS = {"add": "SUM", "min": "MIN", "max": "MAX", "and": "AND", "or": "OR", "xor": "XOR"}
    REDUX_UR = Reg("UR", 6)       # scratch uniform register (UR4/UR5 hold the descriptor)
    # a warp-uniform mask's REDUXes take these in turn, so the pre-allocation scheduler can
    # overlap several (ptxas: UR6..UR12 for seven in a row), each read by the IMAD after it
    REDUX_URS = tuple(Reg("UR", i) for i in range(6, 12))

    def sel_redux(self, ins):
        op = next((m for m in ins.modifiers if m in self.REDUX_OPS), None)
        if op is None:
            raise self.unsupported(f"`redux.{'.'.join(ins.modifiers)}`")
        a, mask = ins.srcs
        if ins.type == "f32":
            opcode, mods = "CREDUX", self.float_redux_modifiers(ins, op)
        else:
            # AND is REDUX's default operation: nvdisasm (and the encoding table) leave it unnamed
            signed = _signed(ins.type) and op in ("add", "min", "max")
            opcode = "REDUX"
            mods = ((self.REDUX_OPS[op],) if op != "and" else ()) + (("S32",) if signed else ())
        src = self.reg_part(a)
        if self.known_constant(mask) is None:
            # a run-time mask may differ between lanes (cooperative groups' tiles), and REDUX
            # has one result per warp: as ptxas, `WARPSYNC.EXCLUSIVE mask` runs each mask's
            # lanes apart, one group after the other, through the REDUX and the read of its
            # uniform result; a WARPSYNC of the lanes that came in joins them again (ptxas:
            # a BSYNC)
            came = VOp(self.mf.new_vreg())
            self.emit("VOTE", ("ANY",), [came, PT, PT], ndefs=2)
            self.emit("WARPSYNC", ("EXCLUSIVE",), [self.reg_part(mask)], ndefs=0)
            self.warp_sync_op(opcode, mods, [self.REDUX_UR, src])
            self.emit("IMAD", ("U32",), [self.dst(ins.dests[0]), RZ, RZ, self.REDUX_UR])
            self.emit("WARPSYNC", (), [came], ndefs=0)
            return
        self.sync_members(mask)
        self.reduxes = getattr(self, "reduxes", -1) + 1
        ur = self.REDUX_URS[self.reduxes % len(self.REDUX_URS)]
        self.warp_sync_op(opcode, mods, [ur, src])
        self.emit("IMAD", ("U32",), [self.dst(ins.dests[0]), RZ, RZ, ur])

    def float_redux_modifiers(self, ins, op: str) -> tuple[str, ...]:
        """`redux.sync.min/max{.abs}{.NaN}.f32` (sm_100a): CREDUX into a uniform register, as
        ptxas writes it (`CREDUX.MINABS.F32.NAN`)."""
        if not self.arch.credux or op not in ("min", "max"):
            raise self.unsupported(f"`redux.{'.'.join(ins.modifiers)}` on {self.arch.full_name}")
        absolute = "abs" in ins.modifiers
        return (op.upper() + ("ABS" if absolute else ""), "F32") + (("NAN",) if "NaN" in ins.modifiers else ())

    def sel_activemask(self, ins):
        self.emit("VOTE", ("ANY",), [self.dst(ins.dests[0]), PT, PT])

    ELECT_UR = Reg("UR", 6)       # the leader's lane, live from ELECT to the MOV after it

    def sel_elect(self, ins):
        """elect.sync d|p, membermask (sm_90+): ELECT Pp, UR, PT (the lowest active lane),
        then d = UR, as ptxas 13.5 writes it: it reads no membermask (the PTX ISA requires
        every executing thread to be in it). A mask that may differ between lanes (a
        register): `WARPSYNC.EXCLUSIVE mask` runs each mask's lanes apart through the ELECT
        and the read of its uniform result, each group electing its own leader; a WARPSYNC
        of the lanes that came in joins them again (ptxas brackets the same three
        instructions with BSSY/BSYNC instead, as for a run-time-mask REDUX)."""
        mask = ins.srcs[0]
        per_lane = self.known_constant(mask) is None and not (
            isinstance(mask, ir.Value) and mask.id in self.param_values)
        p = (VOp(self.vreg(ins.dests[1])) if len(ins.dests) > 1 and not self.never_read(ins.dests[1])
             else PT)
        if per_lane:
            came = VOp(self.mf.new_vreg())
            self.emit("VOTE", ("ANY",), [came, PT, PT], ndefs=2)
            self.emit("WARPSYNC", ("EXCLUSIVE",), [self.reg_part(mask)], ndefs=0)
        self.emit("ELECT", (), [p, self.ELECT_UR, PT], ndefs=2)
        self.emit("MOV", (), [self.dst(ins.dests[0]), self.ELECT_UR])
        if per_lane:
            self.emit("WARPSYNC", (), [came], ndefs=0)


# ldmatrix's element formats: LDSM's first modifier (the packed sources unpack to bytes)
LDSM_FORMATS = {"b16": "16", "b8": "8", "b6x16_p32": "U6x16P32TO8", "b4x16_p64": "U4x16P64TO8"}


def ldsm_form(ins):
    """(format, shape[, count]) modifiers of the LDSM an `ldmatrix` is, and its register count
    (`.m16n16` matrices take two registers each); None for a combination it has none of."""
    mods = ins.modifiers
    count = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), None)
    packed = [m for m in mods if m in ("b6x16_p32", "b4x16_p64")]
    if count is None or len(packed) > 1 or bool(packed) != ("b8x16" in mods):
        return None
    elem = packed[0] if packed else ins.type
    trans = "trans" in mods
    if "m8n8" in mods and elem == "b16":
        shape, nregs = ("MT88" if trans else "M88"), count
    elif "m16n16" in mods and trans and elem != "b16" and count in (1, 2):
        shape, nregs = "MT1616", 2 * count
    elif "m8n16" in mods and packed and not trans:
        shape, nregs = "M816", count
    else:
        return None
    if elem not in LDSM_FORMATS:
        return None
    return (LDSM_FORMATS[elem], shape) + ((str(count),) if count > 1 else ()), nregs
