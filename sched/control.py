"""Control codes for straight-line issue order: stall counts, yield, scoreboards, wait masks.

The pass walks the final instruction order once, keeping for every register when a
fixed-latency result becomes readable (`sched.latency`, the table the emulator's hazard
checker uses) and which scoreboard guards a pending variable-latency result. An instruction
that reads too early raises the stall count of the one before it; one that reads (or
overwrites) a scoreboarded register waits on that scoreboard.

Block boundaries are handled conservatively (correct for any control flow, loops
included): the last instruction before a block start stalls until every fixed-latency result
is ready for any reader the code has (guards included), and the first instruction of a block
waits on every scoreboard in use.
"""
from __future__ import annotations

from dataclasses import field, replace

from ptx2sass.records import dataclass
from ptx2sass.encoder.model import Control, Instruction
from ptx2sass.fences import (ACQUIRE_INVALIDATION, EFFECT_WAITERS, ORDERING_OPCODES, effect_on_read_scoreboard,
                             is_acquire_invalidation, memory_effect)
from ptx2sass.sched.latency import LatencyModel, model as latency_model

NUM_SCOREBOARDS = 6
MAX_STALL = 15
# A wait sees a scoreboard only a couple of cycles after its producer issued.
SCOREBOARD_VISIBLE = 2
STORES = {"ST", "STG", "STS", "STL", "RED", "REDG", "ATOM", "ATOMG", "ATOMS", "SUST", "SURED", "STSM", "REDAS"}
LOADS = {"LD", "LDG", "LDS", "LDL", "LDC", "S2R", "S2UR", "LDSM", "LDGMC", "LDTM"}
BRANCHES = {"BRA", "EXIT", "RET", "CALL", "BRX", "JMP"}
# Convergence barriers (ptx2sass/reconverge.py), as ptxas sets them on sm_89: BSYNC always
# stalls 5 cycles; both keep the yield bit set unless the stall is 12 or more (nvdisasm
# rejects the bit there).
CONVERGENCE = {"BSSY", "BSYNC"}
# DEPBAR (cp.async.wait_group) stalls at least 4 cycles in every ptxas cubin (206 of 206 on
# sm_80/86/89/90): its wait takes hold only then, so an instruction issued sooner (the
# BAR.SYNC or the shared load that follows) could pass before the copies it waits for land.
MIN_STALL = {"BSYNC": 5, "DEPBAR": 4}
# A BMOV that sets the active lanes (`BMOV.32[.PQUAD] MACTIVE, Bx`, tex.grad's helper lanes)
# stalls 2 cycles in ptxas 13.5's sm_89 code (40 of 40), before the lanes it names run on
MACTIVE_STALL = 2
NO_YIELD_STALL = 12
# An acquire access (a `.STRONG` load or atomic) is followed by CCTL.IVALL
# (`ptx2sass.fences.acquire_fences`); the invalidation waits for the access's result, so that
# no later load is served from L1 before the access is performed: ptxas 13.5 (sm_89, Triton's
# atomics_mix: `ATOMG.E.MIN.STRONG.GPU R2, [R2.64]` on SB2, `CCTL.IVALL` waiting on SB2, all
# six atomics). The invalidation of a fence (MEMBAR, ERRBAR, CCTL.IVALL) has no access of its
# own; after any CCTL the next invalidation waits for no earlier access either.
FENCES = ORDERING_OPCODES | {ACQUIRE_INVALIDATION[0]}


@dataclass
class Slot:
    """One instruction to schedule with its exact register footprint: lists of
    (file, index) such as ("R", 4), ("P", 0), ("UR", 4)."""
    ins: Instruction
    reads: list[tuple[str, int]] = field(default_factory=list)
    writes: list[tuple[str, int]] = field(default_factory=list)
    block_start: bool = False
    labels: list[str] = field(default_factory=list)   # block labels bound to this slot
    line: int | None = None        # the PTX line it came from (debug line tables); None: unknown
    # named PTX registers it writes, or (alias True) that a coalesced copy put in a register
    # it does not write: (name, PTX type, part, file, index, alias) (-g's register maps)
    values: tuple = ()
    # a call of the driver's system functions (vprintf, malloc ...: EIATTR_SYSCALL_OFFSETS),
    # not of the module's functions nor through a pointer, which read alike
    system_call: bool = False
    stall: int = 1
    wr_sb: int = 7
    rd_sb: int = 7
    wait: int = 0


def assign_controls(slots: list[Slot], lat: LatencyModel | None = None,
                    entry_waits: bool = False) -> list[Slot]:
    """Fill each slot's control fields and return the slots in order, each `ins` carrying
    its Control (NOP slots inserted where a stall would exceed 15 cycles); `lat` is the
    target's latency model (default: sm_8x's). `entry_waits`: the code is a function called
    from another text, whose caller may still have scoreboards in use (a store reading a
    register the function overwrites first): its first instruction waits on all of them."""
    lat = lat or latency_model("ampere")

    def _is_variable(ins: Instruction) -> bool:
        return lat.is_variable(ins.opcode)
    out: list[Slot] = []
    t = 0
    # register -> (issue cycle, opcode, modifiers) of its fixed-latency producer; when a
    # reader may read it depends on the reader too (`sched.latency.read_latency`).
    issued: dict[tuple, tuple] = {}
    # Opcodes that read registers anywhere in the code: a block start drains every fixed
    # latency towards the slowest of these readers (and guards), whatever the edge.
    readers = {lat.reader_key(s.ins.opcode, tuple(s.ins.modifiers)) for s in slots if s.reads}

    def ready_for(r: tuple, reader: str, guard: bool = False, addend: bool = False) -> int:
        t0, op, mods, part = issued[r]
        return t0 + lat.read_latency(op, mods, r[0], reader, guard, part, addend)

    def lands_after(r: tuple, writer: Instruction) -> int:
        """The first issue cycle at which `writer`'s result in `r` lands no sooner than the
        pending fixed-latency one (WAW across pipes: an MMA's unread result lands some 16
        cycles after issue, `result_lands`, over an ALU result written meanwhile).
        A variable-latency writer is taken to land the cycle after it issues."""
        t0, op, mods, _part = issued[r]
        earlier = t0 + lat.result_lands(op, mods, r[0])
        own = 1 if _is_variable(writer) else lat.result_lands(writer.opcode, tuple(writer.modifiers), r[0])
        return earlier - own

    worst: dict[tuple, int] = {}     # (opcode, modifiers, file) -> slowest reader's latency
    slowest = [0]                    # the largest of `worst`'s values

    def worst_of(op: str, mods: tuple, file: str) -> int:
        key = (op, mods, file)
        w = worst.get(key)
        if w is None:
            w = worst[key] = max([lat.read_latency(op, mods, file, rd) for rd in readers]
                                 + [lat.read_latency(op, mods, file, "", True)])
            slowest[0] = max(slowest[0], w)
        return w

    def drained() -> int:
        """When every fixed latency issued so far has drained, or a cycle no later than
        `t` when that is no later than `t` (the callers' `bump_previous` ignores those
        alike). `issued` holds its entries in issue order (a write pops the register
        first), so the walk goes newest first and stops at an entry issued `slowest`
        cycles or more before `t`: it and all older ones drained by `t` (was every
        register ever written, at every block start)."""
        out = 0
        bound = t - slowest[0]
        for r, (t0, op, mods, _part) in reversed(issued.items()):
            if t0 <= bound:
                break
            out = max(out, t0 + worst_of(op, mods, r[0]))
        return out
    last_barrier = None                          # issue cycle of the last BAR
    late_fixed: dict[tuple, int] = {}            # register -> cycle an MMA may read it until
    late_fixed_sb: dict[tuple, int] = {}         # register -> that MMA's read scoreboard, if any
    group_issued: dict[int, int] = {}            # issue group (lat.ISSUE_INTERVAL) -> last issue cycle
    pending: dict[tuple, int] = {}               # register -> scoreboard of its pending write
    sb_readers: dict[int, set] = {sb: set() for sb in range(NUM_SCOREBOARDS)}
    set_time = [0] * NUM_SCOREBOARDS
    in_use = [False] * NUM_SCOREBOARDS
    rr = 0
    acquire_sb = None      # write scoreboard of the last access, if a strong one (no fence since)
    # kind -> scoreboard of an instruction whose late memory effect (an mbarrier.inval's
    # write-back, a proxy fence, `ptx2sass.fences.memory_effect`) no waiter has waited for yet
    effect_sbs: dict[str, int] = {}

    def bump_previous(need: int) -> None:
        """Delay the current issue to cycle `need` by stalling the previous slot (or NOPs)."""
        nonlocal t
        if need <= t or not out:
            t = max(t, need) if not out else t
            return
        prev = out[-1]
        extra = need - t
        room = MAX_STALL - prev.stall
        take = min(extra, room)
        prev.stall += take
        extra -= take
        if extra > 0 and prev.ins.opcode in BRANCHES:
            # NOPs after a branch would delay its fall-through path only: pad before it,
            # moving the block label the branch may carry to the first NOP
            at = len(out) - 1
            pads = []
            while extra > 0:
                pads.append(Slot(Instruction("NOP"), stall=min(extra, MAX_STALL)))
                extra -= pads[-1].stall
            pads[0].block_start, pads[0].labels = prev.block_start, prev.labels
            prev.block_start, prev.labels = False, []
            out[at:at] = pads
        while extra > 0:
            nop = Slot(Instruction("NOP"), stall=min(extra, MAX_STALL))
            out.append(nop)
            extra -= nop.stall
        t = need

    # The scoreboard LDGDEPBAR counts cp.async groups on belongs to those groups alone (as in
    # every ptxas cubin with LDGDEPBAR): no other instruction sets it or waits on it, so that
    # DEPBAR.LE SB, n counts groups only.
    groups_sb = {s.wr_sb for s in slots if s.ins.opcode == "LDGDEPBAR" and s.wr_sb < NUM_SCOREBOARDS} | \
        {s.rd_sb for s in slots if s.ins.opcode == "UTMACMDFLUSH" and s.rd_sb < NUM_SCOREBOARDS}
    free_sbs = [sb for sb in range(NUM_SCOREBOARDS) if sb not in groups_sb]
    all_free = sum(1 << sb for sb in free_sbs)
    if entry_waits and slots:
        slots[0].wait |= all_free

    def alloc_sb() -> int:
        nonlocal rr
        for k in range(NUM_SCOREBOARDS):
            sb = (rr + k) % NUM_SCOREBOARDS
            if not in_use[sb] and sb not in groups_sb:
                rr = (sb + 1) % NUM_SCOREBOARDS
                in_use[sb] = True
                return sb
        sb = min(free_sbs, key=lambda s: set_time[s])
        return sb

    for slot in slots:
        ins = slot.ins
        reader = lat.reader_key(ins.opcode, tuple(ins.modifiers))
        if slot.block_start and out:
            # Drain fixed latencies into the block; wait on every scoreboard at its top: all
            # six (but cp.async groups' one), since an edge from further down (a loop's back edge) or one that skips a
            # wait in between may bring scoreboards this linear walk sees as free here.
            # A barrier's distance to the memory instructions after it is drained as well: a
            # branch over the block in between reaches them sooner than this walk counts.
            barrier_done = (last_barrier + lat.AFTER_BARRIER[1]
                            if last_barrier is not None and lat.AFTER_BARRIER[0] else 0)
            bump_previous(max(drained(), barrier_done))
            slot.wait |= all_free
        need = t
        wait = slot.wait
        if ins.opcode in ("CALL", "RET"):
            # the callee (another module's, ptxas's) knows nothing of this code's scoreboards,
            # nor the caller of a RET: wait for every one in use, as ptxas's CALL does (a
            # store's data and address, e.g. `STL [R1+0x8], R0` of a stack argument, may
            # still be read; an epilogue's `LDL R16` may not have landed)
            wait |= sum(1 << sb for sb in range(NUM_SCOREBOARDS) if in_use[sb] and sb not in groups_sb)
        if is_acquire_invalidation(ins.opcode, ins.modifiers) and acquire_sb is not None \
                and in_use[acquire_sb]:
            wait |= 1 << acquire_sb
        for kind, sb in effect_sbs.items():
            if in_use[sb] and ins.opcode in EFFECT_WAITERS[kind]:
                wait |= 1 << sb
        for r in slot.reads + slot.writes:
            if r in pending:
                wait |= 1 << pending[r]
        for r in slot.writes:
            for sb, regs in sb_readers.items():
                if r in regs:
                    wait |= 1 << sb
        if late_fixed and not _is_variable(ins) and ins.opcode not in lat.LATE_FIXED_READS:
            for r in slot.writes:
                # a wait on the MMA's read scoreboard covers its late reads (as ptxas's sm_75 code)
                if r in late_fixed and not wait >> late_fixed_sb.get(r, NUM_SCOREBOARDS) & 1:
                    need = max(need, late_fixed[r] - lat.LATE_FIXED_WRITE_EARLY.get(ins.opcode, 0))
        for r in slot.writes:
            if r in issued:
                need = max(need, lands_after(r, ins))
        for sb in range(NUM_SCOREBOARDS):
            if wait >> sb & 1 and in_use[sb]:
                need = max(need, set_time[sb] + SCOREBOARD_VISIBLE)
        guard = (ins.guard.file, ins.guard.index) if ins.guard is not None else None
        addend = lat.addend_registers(ins)
        for r in slot.reads:
            if r in issued:
                need = max(need, ready_for(r, reader, r == guard, r in addend))
        if guard is not None and guard in issued:
            need = max(need, ready_for(guard, reader, True))
        if ins.opcode in lat.AFTER_BARRIER[0] and last_barrier is not None:
            need = max(need, last_barrier + lat.AFTER_BARRIER[1])
        group = lat.ISSUE_INTERVAL.get(ins.opcode)
        if group is not None and group[0] in group_issued:
            need = max(need, group_issued[group[0]] + group[1])
        bump_previous(need)
        if group is not None:
            group_issued[group[0]] = max(t, need)
        if ins.opcode == "BAR":
            last_barrier = max(t, need)
        # The wait clears those scoreboards.
        if acquire_sb is not None and wait >> acquire_sb & 1:
            acquire_sb = None
        for kind in [k for k, sb in effect_sbs.items() if wait >> sb & 1 or slot.block_start]:
            del effect_sbs[kind]
        for sb in range(NUM_SCOREBOARDS):
            if wait >> sb & 1:
                for r in [r for r, s in pending.items() if s == sb]:
                    del pending[r]
                sb_readers[sb].clear()
                in_use[sb] = False
                for r in [r for r, s in late_fixed_sb.items() if s == sb]:
                    del late_fixed_sb[r], late_fixed[r]
        slot.wait = wait
        # This instruction's own effects.
        if ins.opcode in FENCES or slot.block_start:
            acquire_sb = None
        if _is_variable(ins) and slot.writes:
            sb = alloc_sb()
            slot.wr_sb = sb
            set_time[sb] = t
            if ins.opcode in LOADS or ins.opcode in STORES:
                acquire_sb = sb if "STRONG" in ins.modifiers else None
            for r in slot.writes:
                pending[r] = sb
                issued.pop(r, None)
        elif (effect := memory_effect(ins.opcode, ins.modifiers)) in lat.LATE_MEMORY_EFFECTS \
                and not effect_on_read_scoreboard(effect):
            effect_sbs[effect] = slot.wr_sb = alloc_sb()
            set_time[slot.wr_sb] = t
        else:
            first = {}
            for r in slot.writes:
                first.setdefault(r[0], r[1])
                # keyed as the checker keys producers (an IMAD.HI's immediate factor: `latency_modifiers`)
                mods = lat.latency_modifiers(ins)
                issued.pop(r, None)          # (kept in issue order: `drained`)
                issued[r] = (t, ins.opcode, mods, r[1] - first[r[0]])
                worst_of(ins.opcode, mods, r[0])
        reg_reads = [r for r in slot.reads if r[0] in ("R", "UR")]
        window = lat.late_fixed_window(ins.opcode, tuple(ins.modifiers))
        if window:
            for r in reg_reads:
                if not lat.read_at_issue(ins, r):
                    late_fixed[r] = max(t, need) + window
                    late_fixed_sb.pop(r, None)
        uniform_late = lat.uniform_late_reader(ins)
        if (ins.opcode in lat.LATE_SOURCE_READS or lat.UNIFORM_READ_AT_ISSUE) and not uniform_late:
            # a load that reads its address registers (not its uniform ones) after issue
            reg_reads = [r for r in reg_reads if r[0] == "R"]
        if reg_reads and (ins.opcode in STORES or ins.opcode in lat.LATE_SOURCE_READS or uniform_late
                          or (_is_variable(ins) and ins.opcode not in LOADS)):
            sb = alloc_sb()
            slot.rd_sb = sb
            set_time[sb] = t
            sb_readers[sb].update(reg_reads)
            if window:
                for r in reg_reads:
                    if r in late_fixed:
                        late_fixed_sb[r] = sb
        if (effect := memory_effect(ins.opcode, ins.modifiers)) in lat.LATE_MEMORY_EFFECTS \
                and effect_on_read_scoreboard(effect):
            if slot.rd_sb == 7:
                slot.rd_sb = alloc_sb()
                set_time[slot.rd_sb] = t
            effect_sbs[effect] = slot.rd_sb
        slot.stall = max(slot.stall, MIN_STALL.get(ins.opcode, 1))
        if ins.opcode == "BMOV" and getattr(ins.operands[0], "name", None) == "MACTIVE":
            slot.stall = max(slot.stall, MACTIVE_STALL)
        out.append(slot)
        t += slot.stall
    if out:
        bump_previous(drained())
    for s in out:
        variable = _is_variable(s.ins) or s.ins.opcode in STORES
        yield_ = s.stall <= 2 or variable or s.ins.opcode in BRANCHES
        if s.ins.opcode in CONVERGENCE:
            yield_ = s.stall < NO_YIELD_STALL
        if s.ins.opcode == "NOP" or s.stall >= 12:    # bit 109 with a stall of 12+ is illegal
            yield_ = False
        ctl = Control(stall=s.stall, yield_=yield_, wr_sb=s.wr_sb, rd_sb=s.rd_sb, wait=s.wait)
        s.ins = replace(s.ins, control=ctl)
    return out
