"""The mbarrier family and cp.async.mbarrier.arrive on sm_80..sm_89, as ptxas writes them.

The 64-bit object (emu/ops_memory.py has the same picture): word 0 holds 2^30 minus the
expected arrival count, word 1 the current phase in bit 31 and 2^31 minus the pending
count below it. An arrival adds one to word 1 (ATOMS.ARRIVE.64 / ATOM.E.ARRIVE.64, which
also reload the pending count from word 0 when the phase completes); the state a thread
gets back is the object before its arrival, so its bit 31 names the phase it arrived in.
Warp-aggregated updates (arrive.noComplete's count, cp.async's pending increment) are made
by one leader lane for all active lanes, as ptxas does, each lane's state being the
leader's old value plus the counts of the lanes below it; where the object may differ
between lanes (a divergent address) each lane updates its own, as ptxas does then.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Label, Mem, Reg, SpecialReg
from ptx2sass.fences import release_fences
from ptx2sass.mir import MInstr, VMem, VOp
from ptx2sass.isel.common import NOT_PT, PT, RZ

PHASE = 0x80000000
PENDING_BASE = 0x80000000     # word 1 = phase | (2^31 - pending)
EXPECTED_BASE = 0x40000000    # word 0 = 2^30 - expected
SHARED_WINDOW = 0x18          # c[0x0][0x18]: the generic address of shared memory's start


class MbarrierSelection:
    def mbarrier_space(self, ins) -> str:
        """`.shared`/`.shared::cta` → shared; no space → generic (a variable named in the
        address decides, as for loads)."""
        if ins.space in ("shared", "shared::cta"):
            return "shared"
        addr = ins.srcs[0]
        if isinstance(addr, ir.Address) and isinstance(addr.base, ir.Symbol):
            p = self.placements.get(addr.base.name)
            if p is not None and p.space == "shared":
                return "shared"
        return "generic"

    def mbarrier_address(self, ins, offset: int = 0) -> tuple[str, VMem]:
        space = self.mbarrier_space(ins)
        return space, self.word_at(self.address(ins.srcs[0], space), offset)

    def word_at(self, mem: VMem, offset: int) -> VMem:
        """The address `offset` bytes further (word 1 of the object: 4)."""
        if not offset:
            return mem
        base = None if isinstance(mem.base, Reg) and mem.base.is_zero else mem.base
        return self.near_offset(replace(mem, base=base, offset=mem.offset + offset))

    def u32_operand(self, op):
        """A 32-bit source (a .b64 immediate's low word)."""
        if isinstance(op, ir.Const):
            return self.imm32(op.value)
        return self.part_of(op, 0)

    def require_mbarrier_atomics(self, what: str) -> None:
        if not self.arch.mbarrier_atomics:
            raise self.unsupported(f"{what} on {self.arch.name}")

    def sel_mbarrier(self, ins):
        mods = ins.modifiers
        if self.arch.mbarrier_syncs:
            return self.sel_mbarrier_syncs(ins)          # isel/mbarrier_syncs.py
        self.require_mbarrier_atomics(f"`mbarrier.{'.'.join(mods)}`")
        kind = mods[0] if mods else ""
        handler = getattr(self, f"mbarrier_{kind}", None)
        if handler is None:
            raise self.unsupported(f"`mbarrier.{'.'.join(mods)}`")
        handler(ins)

    # ------------------------------------------------------------------ set-up
    def mbarrier_init(self, ins):
        """Both words at once: {2^30 - count, 2^31 - count} (phase 0)."""
        space, mem = self.mbarrier_address(ins)
        count = ins.srcs[1]
        value = self.known_constant(count)
        data = self.new_pair()
        for k, base in enumerate((EXPECTED_BASE, PENDING_BASE)):
            if value is not None:
                self.move(VOp(data.reg, k), self.imm32(base - value))
            else:
                self.emit("IADD3", (), [VOp(data.reg, k), self.negated(self.reg_part(count)),
                                        self.imm32(base), RZ])
        self.store_pair(space, mem, data)

    def negated(self, op):
        return replace(op, neg=True) if isinstance(op, VOp) else op

    def store_pair(self, space: str, mem: VMem, data: VOp) -> None:
        if space == "shared":
            self.emit("STS", ("64",), [mem, data], ndefs=0)
        else:
            self.mf.uses_global_descriptor = True
            self.emit("ST", ("E", "64", "STRONG", "SM"), [mem, data], ndefs=0)

    def mbarrier_inval(self, ins):
        """Nothing to do: the object's memory may simply be used again (ptxas writes no
        instruction)."""

    # ------------------------------------------------------------------ arrivals
    def release_cta(self) -> None:
        self.fences(release_fences("CTA"))

    def with_uniform(self, mem: VMem) -> VMem:
        """The address with its `+URZ` term (the arrival forms have no other)."""
        return replace(mem, uniform_zero=True)

    def arrive_on(self, space: str, mem: VMem, d) -> None:
        dst = VOp(self.vreg(d)) if d is not None else RZ
        mem = self.with_uniform(mem)
        if space == "shared":
            self.emit("ATOMS", ("ARRIVE", "64"), [dst, mem])
        else:
            self.mf.uses_global_descriptor = True
            self.emit("ATOM", ("E", "ARRIVE", "64", "STRONG", "SM"), [PT, dst, mem], ndefs=2)

    def mbarrier_arrive(self, ins):
        if "noComplete" in ins.modifiers:
            return self.arrive_counted(ins, drop=False)
        space, mem = self.mbarrier_address(ins)
        self.release_cta()
        self.arrive_on(space, mem, ins.dests[0] if ins.dests else None)

    def mbarrier_arrive_drop(self, ins):
        """One fewer expected arrival from the next phase on (word 0 up by one per lane),
        then an arrival."""
        if "noComplete" in ins.modifiers:
            return self.arrive_counted(ins, drop=True)
        space, mem = self.mbarrier_address(ins)
        self.release_cta()
        if space == "shared":
            self.emit("ATOMS", ("POPC", "INC", "32"), [RZ, self.with_uniform(mem)])
        else:
            self.mf.uses_global_descriptor = True
            self.emit("ATOM", ("E", "POPC", "INC", "32", "STRONG", "SM"), [PT, RZ, self.with_uniform(mem)],
                      ndefs=2)
        self.arrive_on(space, mem, ins.dests[0] if ins.dests else None)

    def warp_leader(self, guard):
        """(active-lane mask, leader lane's predicate, number of active lanes): the lanes
        at this instruction (where its guard holds), the lowest of them leading."""
        active = VOp(self.mf.new_vreg())
        self.emit("VOTE", ("ANY",), [active, PT, guard if guard is not None else PT], ndefs=2,
                  guarded=False)
        lane = VOp(self.mf.new_vreg())
        self.emit("S2R", (), [lane, SpecialReg("SR_LANEID")], guarded=False)
        leader = VOp(self.mf.new_vreg())
        self.emit("FLO", ("U32",), [leader, active], guarded=False)
        count = VOp(self.mf.new_vreg())
        self.emit("POPC", (), [count, active], guarded=False)
        is_leader = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("EQ", "U32", "AND"), [is_leader, PT, leader, lane, PT], guarded=False)
        return active, is_leader, count, leader

    def arrive_counted(self, ins, drop: bool) -> None:
        """arrive[_drop].noComplete with a count: the leader adds count x the active lanes
        to word 1 (and word 0 for a drop) with ATOMS.ADD; no phase completes."""
        space, mem = self.mbarrier_address(ins)
        word1 = self.word_at(mem, 4)
        count = ins.srcs[1]
        base = ins.srcs[0].base if isinstance(ins.srcs[0], ir.Address) else ins.srcs[0]
        if isinstance(count, ir.Value) and count.id in self.divergent or \
                isinstance(base, ir.Value) and base.id in self.divergent:
            # a count, or an object (each lane its own mbarrier), that may differ between
            # lanes: no leader can add for the others
            return self.arrive_counted_per_lane(ins, drop, space, mem, word1)
        guard = self.guard
        self.release_cta()
        active, is_leader, lanes, leader = self.warp_leader(guard)
        below = VOp(self.mf.new_vreg())
        lt = VOp(self.mf.new_vreg())
        self.emit("S2R", (), [lt, SpecialReg("SR_LTMASK")], guarded=False)
        self.emit("LOP3", ("LUT",), [below, lt, active, RZ, Imm(0xC0), NOT_PT], guarded=False)
        value = self.known_constant(count)
        c = self.imm32(value) if value is not None else self.reg_part(count)
        total = VOp(self.mf.new_vreg())
        self.unguarded_imad(total, lanes, c, RZ)
        rank = VOp(self.mf.new_vreg())
        self.emit("POPC", (), [rank, below], guarded=False)
        old = VOp(self.mf.new_vreg())
        saved, self.guard = self.guard, is_leader
        self.mf.uses_global_descriptor |= space != "shared"
        if drop:
            self.counted_add(space, mem, RZ, total)
        self.counted_add(space, word1, old, total)
        self.guard = saved
        self.emit("SHFL", ("IDX",), [PT, old, old, leader, Imm(0x1F)], ndefs=2, guarded=False)
        d = ins.dests[0] if ins.dests else None
        if d is not None:
            state = VOp(self.mf.new_vreg())
            self.unguarded_imad(state, rank, c, old)
            self.move(self.dst(d, 0), state)
            self.move(self.dst(d, 1), state)

    def arrive_counted_per_lane(self, ins, drop: bool, space: str, mem: VMem, word1: VMem) -> None:
        """A count that may differ between lanes: each lane adds its own (ATOMS.ADD to word 1,
        and to word 0 for a drop); the state is word 1's old value in both halves."""
        self.release_cta()
        self.mf.uses_global_descriptor |= space != "shared"
        c = self.reg_part(ins.srcs[1])
        if drop:
            self.counted_add(space, mem, RZ, c)
        d = ins.dests[0] if ins.dests else None
        old = VOp(self.mf.new_vreg()) if d is not None else RZ
        self.counted_add(space, word1, old, c)
        if d is not None:
            self.move(self.dst(d, 0), old)
            self.move(self.dst(d, 1), old)

    def unguarded_imad(self, d, a, b, c) -> None:
        """a * b + c for every lane (IMAD, or the move/add/shift ptxas writes for a constant
        factor of 1 or a power of two)."""
        saved, self.guard = self.guard, None
        self.imad((), d, a, b, c)
        self.guard = saved

    def counted_add(self, space: str, mem: VMem, dst, value) -> None:
        if space == "shared":
            self.emit("ATOMS", ("ADD",), [dst, mem, value])
        else:
            self.emit("ATOM", ("E", "ADD", "STRONG", "SM"), [PT, dst, mem, value], ndefs=2)

    # ------------------------------------------------------------------ waiting
    def mbarrier_test_wait(self, ins):
        """Done when the object's phase bit differs from the one the state (or the parity
        operand) names: LDS of word 1, LOP3 of the two phase bits into the predicate."""
        space, word1 = self.mbarrier_address(ins, 4)
        current = VOp(self.mf.new_vreg())
        if space == "shared":
            self.emit("LDS", (), [current, word1])
        else:
            self.mf.uses_global_descriptor = True
            self.emit("LD", ("E", "STRONG", "SM"), [current, word1])
        if "parity" in ins.modifiers:
            parity = self.known_constant(ins.srcs[1])
            if parity is not None:
                phase = self.imm32((parity & 1) << 31)
            else:
                phase = VOp(self.mf.new_vreg())
                self.emit("IMAD", ("U32",), [phase, self.reg_part(ins.srcs[1]), Imm(PHASE), RZ])
        else:
            phase = self.reg_part(ins.srcs[1], 1)
        if isinstance(phase, Imm):      # phase bit set (a & b) or clear (~a & b)
            self.emit("LOP3", ("LUT",), [VOp(self.vreg(ins.dests[0])), RZ, current, Imm(PHASE), RZ,
                                          Imm(0xC0 if phase.value == 0 else 0x0C), NOT_PT], ndefs=2)
            return
        self.emit("LOP3", ("LUT",), [VOp(self.vreg(ins.dests[0])), RZ, current, Imm(PHASE), phase,
                                      Imm(0x48), NOT_PT], ndefs=2)

    def mbarrier_pending_count(self, ins):
        """2^31 minus the low 31 bits of the state's word 1."""
        hi = self.reg_part(ins.srcs[0], 1)
        t = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [t, hi, Imm(0x7FFFFFFF), RZ, Imm(0xC0), NOT_PT])
        self.emit("IADD3", (), [self.dst(ins.dests[0]), replace(t, neg=True), Imm(PENDING_BASE), RZ])

    # ------------------------------------------------------------------ cp.async
    def cp_async_mbarrier_arrive(self, ins):
        """An arrival once the lane's earlier cp.async copies are done (ARRIVES.LDGSTSBAR);
        without .noinc the pending count first grows by one per lane (the leader's
        ATOMS.ADD of minus the active lanes to word 1), so the arrival is not one of the
        expected ones."""
        if self.arch.mbarrier_syncs:
            return self.cp_async_mbarrier_arrive_syncs(ins)     # isel/mbarrier_syncs.py
        self.require_mbarrier_atomics("`cp.async.mbarrier.arrive`")
        space = self.mbarrier_space(ins)
        mem = self.address(ins.srcs[0], space)
        if space != "shared":          # the shared offset of a generic address
            off = VOp(self.mf.new_vreg())
            self.emit("IADD3", (), [off, self.part_of_mem(mem), ConstRef(0, SHARED_WINDOW, neg=True), RZ])
            mem = VMem(off, mem.offset, wide=False)
        if "noinc" not in ins.modifiers:
            _, is_leader, lanes, _ = self.warp_leader(self.guard)
            minus = VOp(self.mf.new_vreg())
            self.emit("IMAD", ("MOV",), [minus, RZ, RZ, replace(lanes, neg=True)], guarded=False)
            saved, self.guard = self.guard, is_leader
            self.emit("ATOMS", ("ADD", "S32"), [RZ, self.word_at(mem, 4), minus])
            self.guard = saved
        if mem.base is None or isinstance(mem.base, Reg):      # a fixed address: [URZ+imm]
            self.emit("ARRIVES", ("LDGSTSBAR", "64"), [self.with_uniform(replace(mem, base=None))],
                      ndefs=0)
            return
        self.uniform_loop(mem.base, lambda ur: self.emit(
            "ARRIVES", ("LDGSTSBAR", "64"), [Mem(ubase=ur, offset=mem.offset)], ndefs=0))

    LOOP_UR = Reg("UR", 6)        # scratch uniform register (UR4/UR5 hold the descriptor)

    def uniform_loop(self, value: VOp, body) -> None:
        """ARRIVES takes its address in a uniform register only: ptxas's loop over the
        distinct values of a per-lane register. Each turn R2UR copies one lane's value
        into UR6 and flags the lanes holding another; the others run `body(UR6)` (under
        the guard it emits with) and leave."""
        self.uniform_loop_values([(value, self.LOOP_UR)], lambda: body(self.LOOP_UR))

    def uniform_loop_values(self, values: list, body) -> None:
        """`uniform_loop` over several per-lane registers at once, each into its own uniform
        register (R2UR, then R2UR.OR for the others: a lane runs `body()` where all of them
        equal the first lane's)."""
        guard = self.guard
        pending = VOp(self.mf.new_vreg("P"))
        differs = VOp(self.mf.new_vreg("P"))
        self.emit("PLOP3", ("LUT",), [pending, PT, guard if guard is not None else PT, PT, PT,
                                      Imm(0x80), Imm(0)], guarded=False)
        self.emit("PLOP3", ("LUT",), [differs, PT, PT, PT, PT, Imm(0), Imm(0)], guarded=False)
        loop = self.start_block("waterfall")
        self.guard = pending
        for k, (value, ur) in enumerate(values):
            if k == 0:
                self.emit("R2UR", (), [differs, ur, value], ndefs=2)
            else:
                # reads its own predicate result (the earlier values' differences)
                mi = self.emit("R2UR", ("OR",), [differs, ur, value, differs], ndefs=2)
                mi.shown = (0, 1, 2)
        if guard is None:
            self.guard = VOp(differs.reg, inv=True)
        else:
            # lanes the guard left out never ran R2UR (their `differs` is still false):
            # the body runs where pending and not differing
            run = VOp(self.mf.new_vreg("P"))
            self.emit("PLOP3", ("LUT",), [run, PT, pending, differs, PT, Imm(0x20), Imm(0)], guarded=False)
            self.guard = run
        body()
        self.guard = pending
        self.emit("PLOP3", ("LUT",), [pending, PT, differs, PT, PT, Imm(0x80), Imm(0)])
        self.guard = guard
        self.out.append(MInstr("BRA", (), [Label(loop.name)], 0, differs, self.line))
        self.start_block("waterfall_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)

    def part_of_mem(self, mem: VMem):
        """The low word of a generic address's base register."""
        if mem.base is None:
            return RZ
        return VOp(mem.base.reg, 0) if mem.base.reg.width > 1 else mem.base
