"""16-bit atomics (`atom/red.add.noftz.f16`, `atom.cas.b16`): no SASS atomic works on half
a word, so, as ptxas does, a compare-and-swap loop on the aligned 32-bit word holding the
half: read the word, build the new word with the half replaced (PRMT with a selector
chosen by address bit 1), swap it in if the word did not change meanwhile; the old half
is the word shifted down.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import Imm, Label, Reg
from ptx2sass.mir import IMPLICIT_DEF, MInstr, VMem, VOp
from ptx2sass.isel.common import NOT_PT, PT, RZ

# PRMT selectors putting a half of the second source into the word's low or high half
# (the other half from the first source): the sum's own half for add, the low half of
# the 16-bit value for cas.
ADD_SELECTOR = (0x3254, 0x7610)
INSERT_SELECTOR = (0x3254, 0x5410)
ACCESS = {"global": ("LDG", ("E",), "ATOMG", ("E", "CAS")),
          "generic": ("LD", ("E",), "ATOM", ("E", "CAS")),
          "shared": ("LDS", (), "ATOMS", ("CAS",))}


class HalfwordAtomics:
    HALFWORD_ATOMICS = {("add", "f16"), ("cas", "b16")}

    def halfword_atomic(self, ins, op: str, space: str, d) -> None:
        if self.guard is not None:
            raise self.unsupported(f"guarded `{ins.opcode}.{op}.{ins.type}`")
        scope, sem = self.atom_ordering()
        load, load_mods, swap, swap_mods = ACCESS[space]
        strong = ("STRONG", scope) if space != "shared" else ()
        word, low = self.halfword_address(ins.srcs[0], space)
        if space != "shared":
            self.mf.uses_global_descriptor = True
        # which half: bit 1 of the address
        bit = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [bit, low, Imm(2), RZ, Imm(0xC0), NOT_PT])
        is_low = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("EQ", "U32", "AND"), [is_low, PT, bit, RZ, PT], ndefs=2)
        shift = VOp(self.mf.new_vreg())
        self.imad((), shift, bit, Imm(8), RZ)
        table = ADD_SELECTOR if op == "add" else INSERT_SELECTOR
        selector = VOp(self.mf.new_vreg())
        self.emit("SEL", (), [selector, self.as_reg(Imm(table[0])), Imm(table[1]), is_low])
        values = [self.reg_part(v) for v in ins.srcs[1:3 if op == "cas" else 2]]
        if sem in ("release", "acq_rel"):
            self.fences(self.RELEASE_FENCE, scope)
        loop = self.start_block("cas16")
        old, new, got = (VOp(self.mf.new_vreg()) for _ in range(3))
        self.emit(load, load_mods + strong, [old, word])
        swap_word = replace(word, suffix64=False) if space != "shared" else word
        if op == "add":
            total = VOp(self.mf.new_vreg())
            self.emit("HADD2", (), [total, old, replace(values[0], suffix=("H0_H0",))])
            self.emit("PRMT", (), [new, old, selector, total])
            expected = old
        else:
            expected = VOp(self.mf.new_vreg())
            self.emit("PRMT", (), [expected, old, selector, values[0]])
            self.emit("PRMT", (), [new, old, selector, values[1]])
        dests = [PT, got] if space != "shared" else [got]
        self.emit(swap, swap_mods + strong, dests + [swap_word, expected, new], ndefs=len(dests))
        # again while the word changed under us (for cas: its other half)
        seen, had = got, old
        if op == "cas":
            seen, had = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("PRMT", (), [seen, got, selector, RZ])
            self.emit("PRMT", (), [had, old, selector, RZ])
        again = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [again, PT, seen, had, PT], ndefs=2)
        self.out.append(MInstr("BRA", (), [Label(loop.name)], 0, again, self.line))
        self.start_block("cas16_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)
        if sem in ("acquire", "acq_rel"):
            self.fences(self.ACQUIRE_FENCE, scope)
        if d is not None:
            self.emit("SHF", ("R", "U32", "HI"), [self.dst(d), RZ, shift, got])

    def halfword_address(self, addr, space: str) -> tuple[VMem, VOp]:
        """(the aligned word's address, the low 32 bits of the half's address)."""
        mem = self.address(addr, space)
        if mem.base is None or isinstance(mem.base, Reg):
            raise self.unsupported(f"16-bit atomic on an absolute address")
        wide = space != "shared"
        base = mem.base
        if not wide:
            low = base
            if mem.offset:
                low = VOp(self.mf.new_vreg())
                self.emit("IADD3", (), [low, base, self.imm32(mem.offset), RZ])
            aligned = VOp(self.mf.new_vreg())
            self.emit("LOP3", ("LUT",), [aligned, low, self.imm32(0xFFFFFFFC), RZ, Imm(0xC0), NOT_PT])
            return VMem(aligned, 0, wide=False), low
        pair = VOp(self.mf.new_vreg("R", 2))
        self.emit(IMPLICIT_DEF, (), [pair], guarded=False)
        lo, hi = VOp(base.reg, 0), VOp(base.reg, 1)
        if mem.offset:
            full = VOp(self.mf.new_vreg("R", 2))
            carry = VOp(self.mf.new_vreg("P"))
            self.emit(IMPLICIT_DEF, (), [full], guarded=False)
            self.emit("IADD3", (), [VOp(full.reg, 0), carry, lo, self.imm32(mem.offset), RZ], ndefs=2)
            self.emit("IADD3", ("X",), [VOp(full.reg, 1), hi, self.imm32(-1 if mem.offset < 0 else 0), RZ,
                                        carry, NOT_PT])
            lo, hi = VOp(full.reg, 0), VOp(full.reg, 1)
        self.emit("LOP3", ("LUT",), [VOp(pair.reg, 0), lo, self.imm32(0xFFFFFFFC), RZ, Imm(0xC0), NOT_PT])
        self.emit("IADD3", (), [VOp(pair.reg, 1), hi, RZ, RZ])
        return VMem(pair, 0, wide=True), lo
