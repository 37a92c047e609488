"""tensormap.replace and tensormap.cp_fenceproxy (sm_90a+, PTX ISA 8.3), as ptxas 13.5 writes
them: plain loads and stores of the 128-byte tensor map in global, shared::cta or generic
memory, no special instruction.

Where each field lives is read off ptxas 13.5.37's cubins (sm_90a and sm_100a alike; the
map's layout is the driver's and not documented): `FIELDS` below. A field that shares its
word with others is a read-modify-write (load the word, LOP3 the new bits in under the
field's mask, store it back); a whole-word field a plain store. Values the descriptor keeps
minus one (box_dim, global_dim, element_stride) have the bias subtracted; global_stride is
kept in 16-byte units, its low 32 bits in a word of its own and bits 32..35 as one nibble of
the word at 0x1c (for ord 4 that word is the low word's too: ptxas merges the nibble into
the low word's value and stores once). global_address and swizzle_mode also clear one flag
bit of word 2 each (0x200000, 0x400000), and elemtype 11/12 set bit 16 (ptxas's values).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, SpecialReg
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.mir import VMem, VOp

LUT_SELECT_C = 0xB8        # b ? c : a   (a: the old word, b: the mask, c: the new bits)
LUT_SELECT_B = 0xD8        # c ? b : a   (c: the mask in a register, b: the new bits)


def _field(name: str, ord_: int | None):
    """(word offset, shift, mask, bias) of a field that one LOP3 or store writes; None for
    the fields with their own writer (global_address, global_stride, the immediates-only
    enumerations are below)."""
    if name == "rank":
        return 0x8, 4, 0x70, 0
    if name == "global_dim":
        return 0x20 + 4 * ord_, 0, 0xFFFFFFFF, 1
    if name == "box_dim":
        word, shift = (0x34, 24) if ord_ == 0 else (0x38, 8 * (ord_ - 1))
        return word, shift, 0xFF << shift, 1
    if name == "element_stride":
        return 0x34, 3 * ord_, 7 << (3 * ord_), 1
    return None


# immediate-only fields of word 2: (shift, mask, extra (mask, bits) writes after the field)
ENUM_FIELDS = {
    "interleave_layout": (11, 0x1800, ()),
    "swizzle_mode": (13, 0x6000, ((0x400000, 0),)),
    "fill_mode": (15, 0x8000, ()),
    "swizzle_atomicity": (19, 0x180000, ()),
}
ELEMTYPE_SHIFT, ELEMTYPE_MASK = 7, 0x780
ELEMTYPE_FLAG = 0x10000          # set for elemtype 11 and 12 (written first, as ptxas)
GLOBAL_ADDRESS_FLAG = 0x200000   # cleared in word 2 by global_address
STRIDE_HIGH_WORD = 0x1C          # global_stride bits 36..39 of each ord, a nibble each


def elemtype_writes(v: int) -> list[tuple[int, int]]:
    """The (mask, bits) writes into word 2 of elemtype `v` (ptxas 13.5's encodings: 0..10
    as they are, 11/12 as 7/8 plus the flag bit, 13..15 (sm_100a) as 11..13)."""
    if v in (11, 12):
        return [(ELEMTYPE_FLAG, ELEMTYPE_FLAG), (ELEMTYPE_MASK, (v - 4) << ELEMTYPE_SHIFT)]
    code = v - 2 if v >= 13 else v
    return [(ELEMTYPE_MASK, code << ELEMTYPE_SHIFT)]


class TensorMapSelection:
    def sel_tensormap(self, ins):
        mods = ins.modifiers
        if mods[:1] == ("replace",):
            return self.tensormap_replace(ins)
        if mods[:1] == ("cp_fenceproxy",):
            return self.tensormap_cp_fenceproxy(ins)
        raise self.unsupported(f"`tensormap.{'.'.join(mods)}`")

    # ------------------------------------------------------------------ memory words
    def _tm_space(self, ins) -> tuple[str, str, tuple]:
        space = ins.space or "generic"
        ops = {"global": ("LDG", "STG", ("E",)), "generic": ("LD", "ST", ("E",)),
               "shared": ("LDS", "STS", ())}
        if space not in ops:
            raise self.unsupported(f"`tensormap.replace` of the {space} space")
        if space != "shared":
            self.mf.uses_global_descriptor = True
        return ops[space]

    def _tm_word(self, base: VMem, off: int) -> VMem:
        return self.near_offset(VMem(base.base, base.offset + off, wide=base.wide,
                                     ubase=base.ubase))

    def _tm_load(self, base: VMem, off: int) -> VOp:
        t = VOp(self.mf.new_vreg())
        self.emit(self._tm_ops[0], self._tm_ops[2], [t, self._tm_word(base, off)])
        return t

    def _tm_store(self, base: VMem, off: int, value, size=()) -> None:
        self.emit(self._tm_ops[1], self._tm_ops[2] + tuple(size),
                  [self._tm_word(base, off), value], ndefs=0)

    def _tm_merge(self, old, mask: int, bits) -> VOp:
        """`old` with the bits under `mask` replaced: by a register's bits (LOP3 0xb8) or by
        constant bits (zero: LOP3 with RZ; else the mask in a register, LOP3 0xd8)."""
        t = VOp(self.mf.new_vreg())
        if not isinstance(bits, int):
            self.emit("LOP3", ("LUT",), [t, old, self.imm32(mask), bits, Imm(LUT_SELECT_C), NOT_PT])
        elif bits & mask == 0:
            self.emit("LOP3", ("LUT",), [t, old, self.imm32(mask), RZ, Imm(LUT_SELECT_C), NOT_PT])
        else:
            m = VOp(self.mf.new_vreg())
            self.move(m, self.imm32(mask))
            self.emit("LOP3", ("LUT",), [t, old, self.imm32(bits), m, Imm(LUT_SELECT_B), NOT_PT])
        return t

    def _tm_rmw(self, base: VMem, off: int, writes: list) -> None:
        word = self._tm_load(base, off)
        for mask, bits in writes:
            word = self._tm_merge(word, mask, bits)
        self._tm_store(base, off, word)

    # ------------------------------------------------------------------ replace
    def tensormap_replace(self, ins) -> None:
        mods = ins.modifiers
        if len(mods) < 3 or mods[1] != "tile":
            raise self.unsupported(f"`tensormap.{'.'.join(mods)}`")
        name = mods[2]
        self._tm_ops = self._tm_space(ins)
        base = self.address(ins.srcs[0], ins.space or "generic")
        rest = list(ins.srcs[1:])
        ord_ = None
        if name in ("box_dim", "global_dim", "global_stride", "element_stride"):
            ord_ = self.known_constant(rest.pop(0))
            if ord_ is None or not 0 <= ord_ <= 4:
                raise self.unsupported(f"`tensormap.replace.{name}` with this ordinal")
        (value,) = rest
        known = self.known_constant(value)
        if name == "global_address":
            return self._tm_global_address(base, value)
        if name == "global_stride":
            return self._tm_global_stride(base, ord_, value, known)
        if name == "elemtype" and known is not None:
            return self._tm_rmw(base, 0x8, elemtype_writes(known))
        if name in ENUM_FIELDS and known is not None:
            shift, mask, extra = ENUM_FIELDS[name]
            return self._tm_rmw(base, 0x8, [(mask, (known << shift) & 0xFFFFFFFF), *extra])
        field = _field(name, ord_)
        if field is None:
            raise self.unsupported(f"`tensormap.replace.{name}` of a register")
        off, shift, mask, bias = field
        if known is not None:
            bits = ((known - bias) << shift) & 0xFFFFFFFF
            if mask == 0xFFFFFFFF:
                return self._tm_store(base, off, self.reg_part(ir.Const(bits, "b32")))
            return self._tm_rmw(base, off, [(mask, bits)])
        v = self.reg_part(value)
        if bias:
            t = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [t, v, self.imm32(-bias), RZ])
            v = t
        if mask == 0xFFFFFFFF:
            return self._tm_store(base, off, v)
        if shift:
            t = VOp(self.mf.new_vreg())
            self.emit("SHF", ("L", "U32"), [t, v, Imm(shift), RZ])
            v = t
        self._tm_rmw(base, off, [(mask, v)])

    def _tm_global_address(self, base: VMem, value) -> None:
        """The 64-bit address at offset 0 (one 64-bit store), then word 2's flag cleared."""
        flags = self._tm_load(base, 0x8)
        if isinstance(value, ir.Value):
            data = VOp(self.vreg(value))
        else:
            data = self.new_pair()
            for k in range(2):
                self.move(VOp(data.reg, k), self.part_of(value, k))
        self._tm_store(base, 0, data, ("64",))
        self._tm_store(base, 0x8, self._tm_merge(flags, GLOBAL_ADDRESS_FLAG, 0))

    def _tm_global_stride(self, base: VMem, ord_: int, value, known) -> None:
        """global_stride >> 4: its low word at 0xc + 4*ord, bits 32..35 the nibble 4*ord of
        the word at 0x1c (ord 4's low word is that word: merged, one store)."""
        off = 0xC + 4 * ord_
        shift = 4 * ord_
        if known is not None:
            low = self.reg_part(ir.Const((known >> 4) & 0xFFFFFFFF, "b32"))
            high = self.reg_part(ir.Const(((known >> 36) << shift) & 0xFFFFFFFF, "b32"))
        else:
            lo, hi = self.reg_part(value, 0), self.reg_part(value, 1)
            high = VOp(self.mf.new_vreg())
            self.emit("SHF", ("R", "U32", "HI"), [high, RZ, Imm(4), hi])
            low = VOp(self.mf.new_vreg())
            self.emit("SHF", ("R", "U64"), [low, lo, Imm(4), hi])
            if shift:
                t = VOp(self.mf.new_vreg())
                self.emit("SHF", ("L", "U32"), [t, high, Imm(shift), RZ])
                high = t
        if off == STRIDE_HIGH_WORD:
            self._tm_store(base, off, self._tm_merge(low, 0xF << shift, high))
            return
        old = self._tm_load(base, STRIDE_HIGH_WORD)
        self._tm_store(base, off, low)
        self._tm_store(base, STRIDE_HIGH_WORD, self._tm_merge(old, 0xF << shift, high))

    # ------------------------------------------------------------------ cp_fenceproxy
    def tensormap_cp_fenceproxy(self, ins) -> None:
        """`tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>
        .sync.aligned [dst], [src], 128`, as ptxas 13.5: each lane copies its 4 of the 128
        bytes (lane id * 4): LDS, then ATOMG.E.EXCH.STRONG.GPU to global (for .cta,
        .cluster and .gpu alike, no fence), or for .sys a plain STG and MEMBAR.ALL.SYS. Both
        global accesses name no memory descriptor, as ptxas's (that ATOMG form seeded from
        tools/isa_seeds/tensormap_cp_fenceproxy_*)."""
        mods = ins.modifiers
        scope = next((m for m in ("cta", "cluster", "gpu", "sys") if m in mods), None)
        if scope is None or len(ins.srcs) != 3 or self.known_constant(ins.srcs[2]) != 128 \
                or "release" not in mods:
            raise self.unsupported(f"`tensormap.{'.'.join(mods)}`")
        dst, src = ins.srcs[0], ins.srcs[1]
        lane = VOp(self.mf.new_vreg())
        self.emit("S2R", (), [lane, SpecialReg("SR_LANEID")])
        off = VOp(self.mf.new_vreg())
        self.emit("IMAD", ("SHL", "U32"), [off, lane, Imm(4), RZ])
        smem = self.address(src, "shared")
        at = off
        if smem.base is not None and smem.base != RZ:
            at = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [at, off, smem.base, RZ])
        word = VOp(self.mf.new_vreg())
        self.emit("LDS", (), [word, self.near_offset(VMem(at, smem.offset, wide=False,
                                                              ubase=smem.ubase))])
        gmem = self.address(dst, "global")
        pair = self.new_pair()
        carry = VOp(self.mf.new_vreg("P"))
        lo, hi = (VOp(gmem.base.reg, 0), VOp(gmem.base.reg, 1)) if gmem.base is not None else (RZ, RZ)
        self.emit("IADD3", (), [VOp(pair.reg, 0), carry, off, lo, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(pair.reg, 1), RZ, hi, RZ, carry, NOT_PT])
        target = self.near_offset(VMem(pair, gmem.offset, wide=True, suffix64=False,
                                       described=False))
        if scope == "sys":
            self.emit("STG", ("E",), [target, word], ndefs=0)
            self.emit("MEMBAR", ("ALL", "SYS"), [], ndefs=0)
            return
        self.emit("ATOMG", ("E", "EXCH", "STRONG", "GPU"), [PT, RZ, target, word], ndefs=2)
