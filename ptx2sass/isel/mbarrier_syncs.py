"""The mbarrier family and cp.async.mbarrier.arrive on the SYNCS unit (sm_90), as ptxas
13.5 writes them (tools/isa_seeds/mbarrier_sm90.ptx has one kernel per form).

The 64-bit object as ptxas's sm_90 code reads it (emu/ops_syncs.py has the same picture):
the low word holds (2^20 - expected arrivals) << 1, the high word the current phase in
bit 31 and (2^20 - pending arrivals) << 11 below it; init writes both with SYNCS.EXCH.64
from uniform registers. Arrivals, drops and transaction counts are SYNCS.ARRIVE.TRANS64
with the arrival count (A1: one, AR: the register) and the transaction delta (T0: none,
TR: expect the register, TX: complete the register, T1: expect one) in its modifiers;
`.RED` when the state is unused, `.OPTOUT` for arrive_drop, `.TMASK` for noComplete
(the state's low word is then the mask of the lanes that arrived together, so each lane
adds the counts of those below it to the high word, as ptxas does). test_wait/try_wait are
SYNCS.PHASECHK.TRANS64[.TRYWAIT] of the state's high word (or parity << 31); try_wait with
a time hint retries once after NANOSLEEP.SYNCS.

Addresses: a shared variable (or a register moved from one, or a kernel parameter holding
a generic address) is uniform: S2UR SR_CgaCtaId / ULEA (or ULDC) into a fixed uniform
register, `[UR+imm]`; any other address is per lane, `[R+URZ+imm]` (the low word of a
generic address is its shared-window address on sm_90). The forms that take only a uniform
address (EXCH, ARRIVES) loop over the lanes' distinct values (R2UR), as ptxas.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Mem, Reg, SpecialReg
from ptx2sass.fences import ACQUIRE_INVALIDATION, release_fences
from ptx2sass.mir import VMem, VOp
from ptx2sass.isel.common import NOT_PT, PT, RZ, URZ

COUNT_LIMIT = 0x100000          # the 20-bit count fields hold 2^20 - count
EXPECTED_SHIFT = 1              # low word: expected count field
PENDING_SHIFT = 11              # high word: pending count field (phase in bit 31)
RANK_SHIFT = 24                 # a shared address's CTA rank in its cluster (SR_CgaCtaId)

# Fixed uniform registers (UR4/UR5 hold the global-memory descriptor, UR6 the R2UR loops
# of isel/mbarrier.py): the object's address, the rank scratch, init's two words.
ADDRESS_UR = Reg("UR", 8)
RANK_UR = Reg("UR", 9)
DATA_UR = Reg("UR", 10)
DATA_HI_UR = Reg("UR", 11)
COUNT_UR = Reg("UR", 12)
LOOP_SCRATCH_UR = Reg("UR", 13)
REGISTER_WHEN_DIVERGED = True   # an address written in divergent code stays in its register (A/B flag)

ROUTE = {  # PTX operation -> (arrival part, transaction part) of SYNCS.ARRIVE.TRANS64
    ("arrive", False): ("A1", "T0"), ("arrive", True): ("AR", "T0"),
    ("expect_tx", True): ("A0", "TR"), ("complete_tx", True): ("A0", "TX"),
}


class SyncsMbarrierSelection:
    # ------------------------------------------------------------------ addresses
    def syncs_symbol(self, op):
        """The shared variable an address operand names: itself, or a register moved from
        its address (`mov.u32 %r, bars` / `cvta.shared.u64 %rd, bars`), else None."""
        if isinstance(op, ir.Symbol):
            p = self.placements.get(op.name)
            return op if p is not None and p.space == "shared" else None
        if not isinstance(op, ir.Value):
            return None
        if not hasattr(self, "_syncs_symbol_defs"):
            self._syncs_symbol_defs = {
                ins.dests[0].id: ins.srcs[0] for b in self.fn.blocks for ins in b.instrs
                if ins.guard is None and len(ins.dests) == 1 and len(ins.srcs) == 1
                and isinstance(ins.srcs[0], ir.Symbol)
                and (ins.opcode == "mov" or ins.opcode == "cvta" and ins.space == "shared"
                     and "to" not in ins.modifiers)}
            # a register written more than once is not known
            seen: dict[int, int] = {}
            for b in self.fn.blocks:
                for ins in b.instrs:
                    for d in ins.dests:
                        if isinstance(d, ir.Value):
                            seen[d.id] = seen.get(d.id, 0) + 1
            self._syncs_symbol_defs = {k: v for k, v in self._syncs_symbol_defs.items()
                                       if seen.get(k) == 1}
        sym = self._syncs_symbol_defs.get(op.id)
        return self.syncs_symbol(sym) if sym is not None else None

    def syncs_address(self, addr, uniform_only: bool = False):
        """The object's memory operand: `Mem([UR8+imm])` where the address is the same in
        every lane (after emitting its computation), else `VMem([R+URZ+imm])`, or None
        where `uniform_only` and the address is per lane."""
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"address operand {addr!r}")
        base = addr.base
        sym = self.syncs_symbol(base)
        if sym is not None and not uniform_only and REGISTER_WHEN_DIVERGED and isinstance(base, ir.Value) \
                and self.syncs_written_diverged(base):
            r = self.vreg(base)
            return VMem(VOp(r, 0 if r.width > 1 else None), addr.offset, wide=False, uniform_zero=True)
        if sym is not None:
            p = self.placements[sym.name]
            self.emit("S2UR", (), [RANK_UR, SpecialReg("SR_CgaCtaId")], guarded=False)
            self.emit("UMOV", (), [ADDRESS_UR, self.imm32(p.value)], guarded=False)
            self.emit("ULEA", (), [ADDRESS_UR, RANK_UR, ADDRESS_UR, Imm(RANK_SHIFT)], guarded=False)
            return Mem(ubase=ADDRESS_UR, offset=sym.offset + addr.offset)
        if isinstance(base, ir.Value) and base.id in self.param_values:
            self.emit("ULDC", (), [ADDRESS_UR, self.param_values[base.id][0]], guarded=False)
            return Mem(ubase=ADDRESS_UR, offset=addr.offset)
        if not isinstance(base, ir.Value):
            raise self.unsupported(f"address operand {addr!r}")
        if uniform_only:
            return None
        r = self.vreg(base)
        return VMem(VOp(r, 0 if r.width > 1 else None), addr.offset, wide=False, uniform_zero=True)

    def syncs_written_diverged(self, value) -> bool:
        """Whether the instruction that wrote `value` (a register moved from a shared
        variable's address) runs in divergent code: the blocks a divergent branch reaches
        before its paths meet (`loop_yield._divergent_regions`; not the region of a loop's
        own exit, whose lanes that left wait at the reconvergence barrier). There ptxas
        keeps the address in a general register, computed once, and the object operand
        is `[R+URZ]`; a uniform register is written only where the warp is together."""
        if not hasattr(self, "_syncs_diverged"):
            from ptx2sass.loop_yield import _divergent_regions
            regions = _divergent_regions(self.fn, ir.dominators(self.fn))
            self._syncs_diverged = {k for at, region in regions.items() if at not in region for k in region}
            self._syncs_written_in = {d.id: id(b) for b in self.fn.blocks for ins in b.instrs
                                      for d in ins.dests if isinstance(d, ir.Value)}
        return self._syncs_written_in.get(value.id) in self._syncs_diverged

    def syncs_lane_base(self, addr) -> VOp:
        """The 32-bit register of a per-lane address (its shared-window address)."""
        r = self.vreg(addr.base)
        return VOp(r, 0 if r.width > 1 else None)

    def with_uniform_address(self, addr, body) -> None:
        """Run `body(mem)` with the object's address in a uniform register: directly where
        it is uniform, else in a loop over the lanes' distinct addresses."""
        mem = self.syncs_address(addr, uniform_only=True)
        if mem is not None:
            body(mem)
            return
        self.uniform_loop(self.syncs_lane_base(addr),
                          lambda ur: body(Mem(ubase=ur, offset=addr.offset)))

    # ------------------------------------------------------------------ the family
    def sel_mbarrier_syncs(self, ins):
        mods = ins.modifiers
        kind = mods[0] if mods else ""
        handler = getattr(self, f"syncs_{kind}", None)
        if handler is None:
            raise self.unsupported(f"`mbarrier.{'.'.join(mods)}`")
        handler(ins)

    def syncs_init(self, ins):
        """Both words at once, from uniform registers: (2^20 - count) << 1 and << 11.
        SYNCS.EXCH takes no lane predicate: under a guard, or with an address or count
        that may differ between lanes, it runs in a loop over the lanes' distinct values
        (once per value, unguarded), as ptxas."""
        count = ins.srcs[1]
        value = self.known_constant(count)
        uniform = value is not None or isinstance(count, ir.Value) and count.id in self.param_values
        mem = self.syncs_address(ins.srcs[0], uniform_only=True)
        if mem is None and self.arch.mbarrier_init_store:
            # a per-lane address: one STS.64 per lane whatever the count (ptxas 13.5 on
            # sm_100/110/120; sm_90 loops the exchange over the lanes' addresses)
            self.syncs_init_store(ins, count)
            return
        values: list[tuple[VOp, Reg]] = []
        if mem is None:
            values.append((self.syncs_lane_base(ins.srcs[0]), ADDRESS_UR))
            mem = Mem(ubase=ADDRESS_UR, offset=ins.srcs[0].offset)
        if uniform:
            if value is not None:
                self.emit("UMOV", (), [COUNT_UR, self.imm32(value)], guarded=False)
            else:
                self.emit("ULDC", (), [COUNT_UR, self.param_values[count.id][0]], guarded=False)
            self.emit("UIADD3", (), [DATA_UR, replace(COUNT_UR, neg=True), Imm(COUNT_LIMIT), URZ],
                      guarded=False)
            self.emit("USHF", ("L", "U32"), [DATA_HI_UR, DATA_UR, Imm(PENDING_SHIFT), URZ],
                      guarded=False)
            self.emit("USHF", ("L", "U32"), [DATA_UR, DATA_UR, Imm(EXPECTED_SHIFT), URZ],
                      guarded=False)
        elif self.arch.mbarrier_init_store:
            self.syncs_init_store(ins, count)
            return
        else:
            t = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [t, replace(self.reg_part(count), neg=True), Imm(COUNT_LIMIT), RZ])
            lo, hi = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("SHF", ("L", "U32"), [hi, t, Imm(PENDING_SHIFT), RZ])
            self.emit("SHF", ("L", "U32"), [lo, t, Imm(EXPECTED_SHIFT), RZ])
            values += [(lo, DATA_UR), (hi, DATA_HI_UR)]
        if not values and self.guard is None:
            self.syncs_exchange(mem)
            return
        if not values:          # guarded: the loop's one turn runs where the guard holds
            values.append((RZ, LOOP_SCRATCH_UR))
        self.uniform_loop_values(values, lambda: self.syncs_exchange(mem))

    def syncs_init_store(self, ins, count) -> None:
        """A per-lane count or address (sm_100/sm_120): both words with one STS.64 under the guard, at
        `[UR+imm]` or `[R+URZ+imm]`, then FENCE.VIEW.ASYNC.S and SYNCS.CCTL.IVALL, as ptxas."""
        t = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [t, replace(self.reg_part(count), neg=True), Imm(COUNT_LIMIT), RZ])
        data = self.new_pair()
        self.emit("SHF", ("L", "U32"), [VOp(data.reg, 1), t, Imm(PENDING_SHIFT), RZ])
        self.emit("SHF", ("L", "U32"), [VOp(data.reg, 0), t, Imm(EXPECTED_SHIFT), RZ])
        self.emit("STS", ("64",), [self.syncs_address(ins.srcs[0]), data], ndefs=0)
        self.emit("FENCE", ("VIEW", "ASYNC", "S"), [], ndefs=0)
        self.emit("SYNCS", ("CCTL", "IVALL"), [], ndefs=0)

    def syncs_exchange(self, mem) -> None:
        """SYNCS.EXCH.64 URZ, [a], UR10 (the pair UR10:UR11: the high one a hidden read)."""
        mi = self.emit("SYNCS", ("EXCH", "64"), [URZ, mem, DATA_UR, DATA_HI_UR], ndefs=0,
                       guarded=False)
        mi.shown = (0, 1, 2)

    def syncs_inval(self, ins):
        """SYNCS.CCTL.IV of the object: `[UR+imm]`, or `[R+URZ+imm]` per lane."""
        self.emit("SYNCS", ("CCTL", "IV"), [self.syncs_address(ins.srcs[0])], ndefs=0)

    def syncs_release(self, ins) -> None:
        """`.release.cluster`: the fences ptxas writes first, the CTA's then the GPU's (.cta and
        the default: none)."""
        if "release" in ins.modifiers and "cluster" in ins.modifiers:
            self.fences(release_fences("CTA") + release_fences("GPU"))

    def syncs_sink(self, ins) -> bool:
        """The state is `_`."""
        return not ins.dests or ins.dests[0].name == "_"

    def syncs_unused(self, ins) -> bool:
        return self.syncs_sink(ins) or self.never_read(ins.dests[0])

    def syncs_lane_address(self, addr):
        """`[R+URZ+imm]` for any address (ptxas's choice for try_wait with a time hint and
        for noComplete): a shared variable's address is first computed into a register."""
        sym = self.syncs_symbol(addr.base)
        if sym is None:
            return self.syncs_address(addr)
        t = VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [t, self.shared_rank(), self.imm32(self.placements[sym.name].value), RZ])
        return VMem(t, sym.offset + addr.offset, wide=False, uniform_zero=True)

    def syncs_arrive_form(self, ins, arrivals: str, tx: str, value, drop: bool = False,
                          tmask: bool = False, lane_address: bool = False) -> None:
        """SYNCS.ARRIVE.TRANS64[.RED][.TMASK][.OPTOUT].<arrivals><tx> d, [a], value. An
        unused state is RZ; `.RED` where the state is `_`, and for an unused one on a
        generic address (ptxas's choices)."""
        d = None if self.syncs_unused(ins) else ins.dests[0]
        red = self.syncs_sink(ins) or d is None and ins.space is None
        mem = (self.syncs_lane_address if lane_address else self.syncs_address)(ins.srcs[0])
        self.syncs_release(ins)
        mods = ["ARRIVE", "TRANS64"]
        if red:
            mods.append("RED")
        if tmask:
            mods.append("TMASK")
        if drop:
            mods.append("OPTOUT")
        if arrivals + tx != "A1TR":           # arrive.expect_tx: no suffix
            mods.append(arrivals + tx)
        dst = RZ if d is None else self.new_pair()
        src = RZ if value is None else self.reg_part(value)
        self.emit("SYNCS", tuple(mods), [dst, mem, src])
        if d is None:
            return
        if tmask:
            dst = self.syncs_lane_state(dst, src)
        self.copy_reg(VOp(self.vreg(d)), dst)

    def syncs_lane_state(self, pair: VOp, count) -> VOp:
        """The TMASK result (mask of the lanes that arrived together, the high word before
        them) made each lane's own state: the high word plus the counts of the lanes
        below (popc(mask & lanemask_lt) * count << 11); the low word stays the mask."""
        lt = VOp(self.mf.new_vreg())
        self.emit("S2R", (), [lt, SpecialReg("SR_LTMASK")])
        below = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [below, VOp(pair.reg, 0), lt, RZ, Imm(0x40), NOT_PT])
        rank = VOp(self.mf.new_vreg())
        self.emit("POPC", (), [rank, below])
        shifted = VOp(self.mf.new_vreg())
        self.emit("SHF", ("L", "U32"), [shifted, rank, Imm(PENDING_SHIFT), RZ])
        out = self.new_pair()
        self.emit("IMAD", (), [VOp(out.reg, 1), shifted, count, VOp(pair.reg, 1)])
        self.move(VOp(out.reg, 0), VOp(pair.reg, 0))
        return out

    def syncs_arrive(self, ins):
        mods = ins.modifiers
        counted = len(ins.srcs) > 1
        if "expect_tx" in mods:
            return self.syncs_arrive_form(ins, "A1", "TR", ins.srcs[1])
        if "noComplete" in mods:
            return self.syncs_no_complete(ins, drop=False)
        self.syncs_arrive_form(ins, "AR" if counted else "A1", "T0",
                               ins.srcs[1] if counted else None)

    def syncs_arrive_drop(self, ins):
        mods = ins.modifiers
        counted = len(ins.srcs) > 1
        if "expect_tx" in mods:
            return self.syncs_arrive_form(ins, "A1", "TR", ins.srcs[1], drop=True)
        if "noComplete" in mods:
            return self.syncs_no_complete(ins, drop=True)
        self.syncs_arrive_form(ins, "AR" if counted else "A1", "T0",
                               ins.srcs[1] if counted else None, drop=True)

    def syncs_no_complete(self, ins, drop: bool) -> None:
        """`.noComplete` with a count: TMASK arrivals, the lanes sharing one count value at
        a time where the count may differ between lanes (ptxas's loop)."""
        count = ins.srcs[1]
        if self.syncs_unused(ins):
            return self.syncs_arrive_form(ins, "AR", "T0", count, drop=drop, lane_address=True)
        if isinstance(count, ir.Value) and count.id in self.divergent:
            self.uniform_loop(self.reg_part(count), lambda ur: self.syncs_arrive_form(
                ins, "AR", "T0", count, drop=drop, tmask=True, lane_address=True))
            return
        self.syncs_arrive_form(ins, "AR", "T0", count, drop=drop, tmask=True, lane_address=True)

    def syncs_expect_tx(self, ins):
        self.syncs_arrive_form(ins, "A0", "TR", ins.srcs[1])

    def syncs_complete_tx(self, ins):
        self.syncs_arrive_form(ins, "A0", "TX", ins.srcs[1])

    # ------------------------------------------------------------------ waiting
    def syncs_phase_operand(self, ins):
        """The register PHASECHK compares the object's phase bit 31 with: the state's high
        word, or the parity shifted to bit 31."""
        if "parity" not in ins.modifiers:
            return self.reg_part(ins.srcs[1], 1)
        parity = self.known_constant(ins.srcs[1])
        if parity is not None and not parity & 1:
            return RZ
        t = VOp(self.mf.new_vreg())
        self.emit("SHF", ("L", "U32"), [t, self.reg_part(ins.srcs[1]), Imm(31), RZ])
        return t

    def syncs_wait(self, ins, try_wait: bool) -> None:
        """PHASECHK (.TRYWAIT for try_wait) into the predicate (PT when unused: a .relaxed
        wait whose result is unused is left out, as ptxas does); a time hint retries once
        after NANOSLEEP.SYNCS; `.acquire.cluster` invalidates the L1 where it succeeded."""
        d = ins.dests[0] if ins.dests else None
        unused = d is None or d.name == "_" or self.never_read(d)
        if unused and "relaxed" in ins.modifiers:
            return
        hint = ins.srcs[2] if try_wait and len(ins.srcs) > 2 else None
        mem = (self.syncs_lane_address if hint is not None else self.syncs_address)(ins.srcs[0])
        phase = self.syncs_phase_operand(ins)
        p = PT if unused else VOp(self.vreg(d))
        mods = ("PHASECHK", "TRANS64") + (("TRYWAIT",) if try_wait else ())
        self.emit("SYNCS", mods, [p, mem, phase], ndefs=1)
        saved = self.guard
        if hint is not None:
            if saved is None:
                self.guard = replace(p, inv=True) if isinstance(p, VOp) else NOT_PT
            h = self.known_constant(hint)
            self.emit("NANOSLEEP", ("SYNCS",), [self.imm32(h) if h is not None else self.reg_part(hint)],
                      ndefs=0)
            self.emit("SYNCS", ("PHASECHK", "TRANS64"), [p, mem, phase], ndefs=1)
            self.guard = saved
        if "acquire" in ins.modifiers and "cluster" in ins.modifiers:
            if isinstance(p, VOp) and saved is None:
                self.guard = p
            self.emit(*ACQUIRE_INVALIDATION, [], ndefs=0)
            self.guard = saved

    def syncs_test_wait(self, ins):
        self.syncs_wait(ins, try_wait=False)

    def syncs_try_wait(self, ins):
        self.syncs_wait(ins, try_wait=True)

    def syncs_pending_count(self, ins):
        """2^20 minus the pending field (bits 11..30) of the state's high word."""
        hi = self.reg_part(ins.srcs[0], 1)
        t = VOp(self.mf.new_vreg())
        self.emit("SHF", ("R", "U32", "HI"), [t, RZ, Imm(PENDING_SHIFT), hi])
        f = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [f, t, Imm(COUNT_LIMIT - 1), RZ, Imm(0x40), NOT_PT])
        self.emit("IADD3", (), [self.dst(ins.dests[0]), replace(f, neg=True), Imm(COUNT_LIMIT), RZ])

    # ------------------------------------------------------------------ cp.async
    def cp_async_mbarrier_arrive_syncs(self, ins):
        """An arrival once the lane's earlier cp.async copies are done: .noinc, an arrival
        (ARRIVES.LDGSTSBAR.64.ARVCNT); else one more expected transaction now (SYNCS
        .A0T1) that the copies' completion takes back (ARRIVES...TRANSCNT)."""
        noinc = "noinc" in ins.modifiers

        def body(mem):
            if not noinc:
                self.emit("SYNCS", ("ARRIVE", "TRANS64", "RED", "A0T1"), [RZ, mem, RZ])
            self.emit("ARRIVES", ("LDGSTSBAR", "64", "ARVCNT" if noinc else "TRANSCNT"), [mem], ndefs=0)
        self.with_uniform_address(ins.srcs[0], body)

