"""Control flow and synchronisation: branches, calls, exit, convergence barriers, warp sync,
CTA barriers."""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Imm, Label, Reg, SpecialReg

from . import externs
from .errors import EmuFault
from .lanes import PerWarp, widen
from .machine import AT_BAR, AT_BSYNC, AT_WARPSYNC, EXITED, FULL, LANES, int_to_mask, mask_to_int  # noqa: F401
from .registry import semantics

LANE_SHIFTS = np.arange(LANES)          # a lane's bit in a 32-lane mask: 1 << lane


def _target(s):
    for op in s.ins.operands:
        if isinstance(op, Label):
            if op.offset is None:
                raise EmuFault(f"unresolved branch target {op.name}")
            return op.offset
    for op in s.ins.operands:      # a raw listing prints targets as absolute offsets
        if isinstance(op, Imm) and op.text is None:
            return op.value
    raise EmuFault("branch without a target")


def _uniform_mask(w, op, active) -> int:
    """A mask operand meant to be warp-uniform, read from the first executing lane (lane 0
    may be elsewhere)."""
    if isinstance(op, Imm):
        return op.value & FULL
    lane = int(np.argmax(active)) if active.any() else 0
    v = int(widen(w.r(op), 32)[lane])
    return v & FULL


def _predicate_operand(ops) -> bool:
    return bool(ops) and isinstance(ops[0], Reg) and ops[0].file in ("P", "UP")


@semantics("BRA", vector=True)
def op_bra(w, s, active, mask):
    mods = s.ins.modifiers
    ops = s.ins.operands
    target = _target(s)
    taken = mask
    if "DIV" in mods or "CONV" in mods:
        if not w.per_warp:
            raise PerWarp()
        # sm_75's `BRA.DIV target` names no mask: the warp's lanes that have not exited
        m = (_uniform_mask(w, ops[0], active) if ops and not isinstance(ops[0], Label)
             else mask_to_int(w.live_mask & (w.state != EXITED)))
        act = mask_to_int(active)
        # The guard is part of the test, not a per-lane condition: the lanes are together
        # when every lane of m is here and the guard holds in every lane here; else the whole
        # warp takes the slow path (BRA.DIV taken, BRA.CONV not). ptxas guards these with
        # "my member mask differs from another lane's" (`R2UR P`, or MATCH.ANY + LOP3) and
        # then runs VOTE.ANY with no mask on the fast path, which is the PTX result (members'
        # bits only) only if a lane with another mask never falls through to it.
        converged = (act & m) == m and bool((mask == active).all())
        cond = converged if "CONV" in mods else not converged
        taken = active if cond else np.zeros(32, bool)
        # BRA.CONV taken / BRA.DIV not taken: the lanes go on knowing they are together on m
        w.sync_hint[active] = m if converged else FULL
    elif "ANY" in mods:
        # `@P BRA.U.ANY [Q]`: the warp's lanes here all go where the guard (and the predicate
        # operand, which nvdisasm prints from bits 87-90 as for a plain BRA) holds in any of
        # them (ptxas's ELECT loops: the lanes stay together)
        cond = mask & w.pred(ops[0]) if _predicate_operand(ops) else mask
        taken = active if cond.any() else cond
    elif _predicate_operand(ops):
        taken = mask & w.pred(ops[0])   # BRA with a predicate operand (BRA.U !UP0 …)
    elif "U" in mods:
        # `@P BRA.U`: unanimous, taken only where the guard holds in every lane here, else by
        # none; the lanes stay together. ptxas skips a predicated subroutine call that way,
        # `@P1 BRA.U join; BSSY B0, join; @P1 BRA inner; CALL; inner: BSYNC B0; join:` (the
        # inner per-lane test, fuzz seed 34007738 on sm_89): per lane, the P1 lanes would
        # reach the join apart from the BSSY and run a BMMA there without the calling lanes.
        taken = active if bool((mask == active).all()) else np.zeros_like(mask)
    w.set_pc(taken, target)


@semantics("YIELD", vector=True)
def op_yield(w, s, active, mask):
    """YIELD: no effect on registers; the lanes count as yielded at a convergence barrier
    they have not reached, and one whose missing members have all yielded lets the lanes
    waiting there go at once (machine.Warp.release_yielded): an H200 ran the code after
    such a BSYNC with the warp split (GPU run 12). A control step, so that the machine
    picks its groups afresh after a release."""
    m = w.m
    lanes = w.lanes(mask)
    m.yielded[lanes] = True
    # number this YIELD's executions; a lane that yields again at a PC it yielded at before
    # records the earlier number (machine: spinning since a barrier's BSSY)
    last, repeat, count = m.yield_last, m.yield_repeat, m.yield_count
    for lane, pc in zip(np.atleast_1d(lanes).tolist(), np.atleast_1d(m.pc[lanes]).tolist()):
        seen = last.setdefault(lane, {})
        before = seen.get(pc)
        if before is not None:
            repeat[lane] = max(int(repeat[lane]), before)
        seen[pc] = count[0]
        count[0] += 1
    for wid in np.unique(lanes // LANES).tolist():
        if (m.state[wid * LANES:(wid + 1) * LANES] == AT_BSYNC).any() and m.warp(wid).release_yielded():
            m.dirty.add(wid)


@semantics("JMP", vector=True)
def op_jmp(w, s, active, mask):
    w.set_pc(mask, _target(s))


@semantics("BRX", "BRXU", "JMX", vector=True)
def op_brx(w, s, active, mask):
    """BRX/BRXU (a general or uniform register): relative to the next instruction; JMX absolute."""
    reg = s.ins.operands[0]
    offset = s.ins.operands[1].value if len(s.ins.operands) > 1 and isinstance(s.ins.operands[1], Imm) else 0
    base = s.offset + 16 if s.ins.opcode in ("BRX", "BRXU") else 0
    dest = w.r(reg).astype(np.int64) + offset + base
    w.set_pc(mask, widen(dest, w.width))


def _register_destination(w, s) -> np.ndarray:
    """CALL/RET through a register: nvdisasm prints `CALL.REL.NOINC R6 `(kernel)`, the
    register holding the target relative to the named function's start (an absolute
    .text offset when there is no label); CALL.ABS.NOINC R6 reads a 64-bit address."""
    ops = s.ins.operands
    base = next((o.offset or 0 for o in ops if isinstance(o, Label)), 0)
    base += sum(o.value for o in ops if isinstance(o, Imm))      # RET.ABS.NODEC R20 0x0
    reg = next(o for o in ops if isinstance(o, Reg) and o.file in ("R", "UR"))
    if "ABS" in s.ins.modifiers and s.ins.opcode == "CALL" and reg.file == "R":
        target = w.r64(reg).astype(np.int64)
    else:
        target = w.r(reg).astype(np.int64)
    return widen(target + base, w.width)


def _register_target(w, s, mask):
    w.set_pc(mask, _register_destination(w, s))


@semantics("CALL", vector=True)
def op_call(w, s, active, mask):
    if any(isinstance(o, Reg) and o.file in ("R", "UR") for o in s.ins.operands):
        dest = _register_destination(w, s)
    else:
        dest = np.full(w.width, _target(s), np.int64)
    external = mask & (dest >= externs.EXTERN_BASE) & (dest < externs.EXTERN_BASE + externs.WINDOW)
    if external.any():
        _call_externs(w, external, dest)
        mask = mask & ~external
    w.set_pc(mask, dest)


def _call_externs(w, calling: np.ndarray, dest: np.ndarray) -> None:
    """Lanes that call a driver-linked function (emu/externs.py) run it here and go on
    at their return address, R20:R21."""
    from .ops_memory import _generic       # generic addressing: global, shared, local

    m = w.m

    def read64(p, r):
        lane = w.idx[p]
        return int(m.R[r][lane]) | int(m.R[r + 1][lane]) << 32

    def set64(p, r, value):
        lane = w.idx[p]
        m.R[r][lane], m.R[r + 1][lane] = value & 0xFFFFFFFF, value >> 32 & 0xFFFFFFFF

    def read_bytes(p, addr, size):
        one = np.zeros(w.width, bool)
        one[p] = True
        return _generic(w, np.array([addr], np.uint64), size, one, None)[0].tobytes()

    for target in sorted(set(dest[calling].tolist())):
        name = externs.name_at(target)
        here = calling & (dest == target)
        externs.call(w, np.nonzero(here)[0], name, read64, read_bytes, set64)
        back = np.zeros(w.width, np.int64)
        for p in np.nonzero(here)[0]:
            back[p] = read64(p, 20)
        w.set_pc(here, back)


@semantics("LEPC", vector=True)
def op_lepc(w, s, active, mask):
    """LEPC Rd: the instruction's own code address, 64 bits (calls to driver-linked
    functions compute their return address from it). sm_90's `LEPC Rd, label` gives the
    label's address instead: ptxas's return address, so no add follows."""
    d = s.ins.operands[0]
    at = _target(s) if len(s.ins.operands) > 1 else s.offset
    w.w(d, np.uint32(at & 0xFFFFFFFF), mask)
    w.w(Reg("R", d.index + 1), np.uint32(at >> 32), mask)


@semantics("RET", vector=True)
def op_ret(w, s, active, mask):
    _register_target(w, s, _with_predicate_operands(w, s, mask))


def _with_predicate_operands(w, s, mask):
    """The lanes that act: a predicate operand (`@P0 EXIT P1`, `EXIT !P2`: ptxas folds an
    `and.pred` into the guarded instruction) must hold as well as the guard."""
    for op in s.ins.operands:
        if isinstance(op, Reg) and op.file in ("P", "UP"):
            mask = mask & w.pred(op)
    return mask


@semantics("EXIT", "KILL", vector=True)
def op_exit(w, s, active, mask):
    w.exit_lanes(_with_predicate_operands(w, s, mask))


@semantics("BPT", vector=True)
def op_bpt(w, s, active, mask):
    if mask.any():
        raise EmuFault(f"breakpoint/trap {s.ins.mnemonic} executed (a failed check of the kernel, "
                       f"e.g. debug code's stack-overflow test)")


@semantics("BSSY", vector=True)
def op_bssy(w, s, active, mask):
    """BSSY Bx: the executing lanes become the members of a new barrier on Bx (each lane
    keeps its own copy: machine.Warp.B)."""
    b = s.ins.operands[0]
    bits = w.warp_bits(mask)
    lanes = w.lanes(mask)
    w.m.B[b.index, lanes] = bits[mask] if np.ndim(bits) else bits
    if "sync_hint" in w.m.__dict__:
        w.m.bssy_hint[b.index, lanes] = w.m.sync_hint[lanes]
    if "yielded" in w.m.__dict__:
        w.m.yielded[lanes] = False
    if "yield_count" in w.m.__dict__:
        w.m.yield_join[b.index, lanes] = w.m.yield_count[0]


@semantics("BSYNC")
def op_bsync(w, s, active, mask):
    """BSYNC Bx: members wait until every live member of their barrier waits too; a lane
    that is not a member of its own Bx (it left by BREAK) goes on."""
    b = s.ins.operands[0]
    own = (w.B[b.index] >> LANE_SHIFTS) & 1 != 0
    waiting = mask & own
    w.state[waiting] = AT_BSYNC
    w.wait_arg[waiting] = b.index
    w.release_convergence()


@semantics("BREAK")
def op_break(w, s, active, mask):
    """BREAK Bx: the executing lanes leave convergence barrier Bx (a loop's break path), so a
    BSYNC on it no longer waits for them: every member's copy of the mask loses them."""
    x = s.ins.operands[-1].index
    row = w.B[x]
    for m in sorted(set(row[mask].tolist())):
        leaving = mask_to_int(mask & (row == m))
        row[row == m] = m & ~leaving & FULL
    w.release_convergence()


@semantics("BMOV")
def op_bmov(w, s, active, mask):
    """BMOV.32 Bx, R / Rd, Bx / Bx, By: move barrier masks, per lane. `.CLEAR` also empties
    the source barrier (ptxas: a callee saving its caller's barrier before its own BSSY)."""
    d, src = s.ins.operands[0], s.ins.operands[-1]
    if isinstance(src, SpecialReg) and src.name == "MACTIVE":
        val = np.full(32, mask_to_int(active), dtype=np.int64)
    elif isinstance(src, Reg) and src.file == "B":
        val = w.B[src.index].copy()
        if "CLEAR" in s.ins.modifiers:
            w.B[src.index, mask] = 0
    else:
        val = widen(w.r(src), 32).astype(np.int64)
    if isinstance(d, SpecialReg) and d.name == "MACTIVE":
        _set_active(s, val, active, mask)
    elif isinstance(d, Reg) and d.file == "B":
        w.B[d.index, mask] = val[mask]
    else:
        w.w(d, (val & FULL).astype(np.uint32), mask)


def _set_active(s, val, active, mask) -> None:
    """`BMOV.32[.PQUAD] MACTIVE, Bx` (ptxas's tex.grad code): the warp's active lanes become
    Bx's (`.PQUAD`: every lane of a quad holding one of them, helper lanes that run the
    quad's derivatives). Modelled only where that is the set already active (whole quads):
    starting a lane that has exited or waits elsewhere is not."""
    want = int(val[mask][0]) & FULL if mask.any() else 0
    if "PQUAD" in s.ins.modifiers:
        quads = 0
        for q in range(8):
            if want >> (4 * q) & 0xF:
                quads |= 0xF << (4 * q)
        want = quads
    if want != mask_to_int(active):
        raise EmuFault(f"{s.ins.mnemonic}: active lanes {mask_to_int(active):#010x} -> {want:#010x}: "
                       "helper lanes of a partly active quad are not modelled")


@semantics("WARPSYNC")
def op_warpsync(w, s, active, mask):
    """WARPSYNC m: each lane waits for the live lanes of its own mask (a register may hold
    a different mask in each lane: cooperative groups' tiles). `.EXCLUSIVE` also keeps the
    lanes of different masks apart afterwards (machine `excl`): ptxas's run-time-mask
    REDUX, whose result is one uniform value per group. `.COLLECTIVE m, label` (sm_90 and
    later: ptxas's run-time-mask vote/shfl/match, closed by ENDCOLLECTIVE just before `label`)
    keeps them apart the same way; the BSYNC ptxas puts at `label` joins them again."""
    ops = [o for o in s.ins.operands if not isinstance(o, Label)]
    if "ALL" in s.ins.modifiers or not ops:
        m = np.full(32, FULL, dtype=np.int64)
    elif isinstance(ops[-1], Imm):
        m = np.full(32, ops[-1].value & FULL, dtype=np.int64)
    else:
        m = widen(w.r(ops[-1]), 32).astype(np.int64) & FULL
    waiting = mask.copy()
    if "EXCLUSIVE" in s.ins.modifiers or "COLLECTIVE" in s.ins.modifiers:
        w.excl[waiting] = m[waiting]
    elif "excl" in w.m.__dict__:
        # a plain WARPSYNC joins what an EXCLUSIVE one kept apart: lanes that last passed an
        # EXCLUSIVE of this same mask are no longer a group of their own (fuzz 34001774: a
        # loop's WARPSYNC.EXCLUSIVE 0xffffffff left its early leavers tagged, so the full
        # WARPSYNC before an HMMA released the warp as two groups)
        w.excl[waiting] = 0
    w.state[waiting] = AT_WARPSYNC
    w.wait_arg[waiting] = m[waiting]
    w.release_convergence()


@semantics("BAR", vector=True)
def op_bar(w, s, active, mask):
    """BAR.SYNC/RED wait at a CTA barrier, BAR.ARV arrives without waiting. A barrier with a
    thread count counts **warp arrivals**, as the PTX ISA describes the instruction ("marks
    warps' arrival at the barrier"; the count a multiple of the warp size): each execution
    by a warp adds one warp (32 threads) whatever its active lanes, and the barrier
    completes when the arrivals reach the count (machine `_release_cta_barriers`). So two
    halves of a diverged warp that arrive at two different BARs count twice, which is why
    ptxas makes a diverged warp meet (`WARPSYNC 0xffffffff`) in one routine before its BAR
    for a non-aligned `barrier` (isel/memory.py). A model from the manual's words and
    ptxas's code, not checked on a GPU. A barrier without a count waits for every live
    thread of the CTA."""
    mods = s.ins.modifiers
    ops = list(s.ins.operands)
    if not w.per_warp and ("ARV" in mods or len(ops) > 1):
        raise PerWarp()
    if "ARV" in mods:
        if np.count_nonzero(mask):
            bar_id, count = _bar_id_count(w, ops, mask)
            if count:
                _arrive(w, bar_id, count, mask, wait=False)
        return
    if not w.per_warp:
        return _bar_group(w, s, mods, ops, mask)
    # a register's value from a lane that executes (ptxas's -g code reaches a `BAR.SYNC R4`
    # with part of a warp: the others' registers hold anything)
    bar_id, count = _bar_id_count(w, ops, mask)
    pred = next((op for op in ops[1:] if isinstance(op, Reg) and op.file in ("P", "UP")), None)
    if pred is not None:
        w.bar_pred[:] = widen(w.pred(pred), 32)
    else:
        w.bar_pred[:] = True
    w.bar_kind[bar_id] = "AND" if "AND" in mods else "OR" if "OR" in mods else "POPC"
    w.state[mask] = AT_BAR
    w.wait_arg[mask] = bar_id
    if count and np.count_nonzero(mask):
        _arrive(w, bar_id, count, mask, wait=True)


def _bar_id_count(w, ops, mask):
    """(barrier id, thread count or None) of a BAR's operands, registers read in its first
    executing lane; one register holding both has the count in bits 16..27."""
    first = int(np.argmax(mask)) if mask.any() else 0
    bar_id = int(ops[0].value) if ops and isinstance(ops[0], Imm) else \
        int(widen(w.r(ops[0]), 32)[first]) if ops else 0
    count = None
    for op in ops[1:]:
        if isinstance(op, Reg) and op.file in ("P", "UP"):
            continue
        if isinstance(op, Reg) and isinstance(ops[0], Reg) and op.file == ops[0].file \
                and op.index == ops[0].index and not op.is_zero:
            count = (bar_id >> 16) & 0xFFF
            bar_id &= 0xF
        elif isinstance(op, (Imm, Reg)):
            count = int(widen(w.r(op), 32)[first])
    return bar_id, count


def _arrive(w, bar_id: int, count: int, mask, wait: bool) -> None:
    """One warp's arrival at counted barrier `bar_id` of its CTA. Lanes inside a
    `WARPSYNC.COLLECTIVE` section (sm_90+: ptxas's non-aligned barrier for a diverged warp,
    one section at each of the barrier's places) arrive for the warp together: the warp
    counts once all live lanes of the section's mask have run a BAR there. An arrive-only
    one that completes the barrier with no thread waiting on it ends that phase here (the
    next arrivals count toward the next); otherwise the machine releases the waiting lanes."""
    key = (id(w.cta), bar_id)
    launch = w.launch
    if "excl" in w.m.__dict__:
        tags = w.m.excl[w.idx]
        if tags[mask].any():
            members = int(tags[mask][0]) & ~mask_to_int(w.state == EXITED)
            pending = launch.__dict__.setdefault("bar_collective", {})
            here = (id(w.cta), bar_id, w.warp)
            done = pending.get(here, 0) | mask_to_int(mask)
            if members & ~done:
                pending[here] = done
                return
            pending.pop(here, None)
    launch.bar_counts[key] = count
    arrivals = launch.__dict__.setdefault("bar_arrivals", {})
    arrivals[key] = arrivals.get(key, 0) + 1
    if not wait and arrivals[key] * 32 >= count:
        m = w.m
        per = m.warps_per_cta * 32
        first = w.cta.index * per
        st, args = m.state[first:first + per], m.wait_arg[first:first + per]
        if not np.count_nonzero((st == AT_BAR) & (args == bar_id)):
            arrivals.pop(key, None)
            launch.bar_counts.pop(key, None)


def _bar_group(g, s, mods, ops, mask):
    """BAR with an immediate barrier (or none) and no count or predicate, for every warp of
    a group at once: what the per-warp form below does warp by warp (each warp's predicate
    lanes all true, its reduction kind, its masked lanes waiting). Other forms, and groups
    an observer or explicit reconvergence watches warp by warp, go per warp (PerWarp)."""
    m = g.m
    if m.tracing or m.explicit or len(ops) > 1 or (ops and not isinstance(ops[0], Imm)):
        raise PerWarp()
    bar_id = int(ops[0].value) if ops else 0
    kind = "AND" if "AND" in mods else "OR" if "OR" in mods else "POPC"
    warps = g.warps
    m.bar_pred.reshape(-1, 32)[warps] = True
    kinds = m.bar_kinds
    for wi in warps.tolist():
        kinds[wi][bar_id] = kind
    if mask is g.active:
        at = g.at
    else:
        at = g.idx[mask]
    m.state[at] = AT_BAR
    m.wait_arg[at] = bar_id


@semantics("B2R")
def op_b2r(w, s, active, mask):
    ops = s.ins.operands
    d = ops[0]
    bar_id = w.last_bar        # B2R.RESULT reads the reduction of the latest barrier
    pd = None
    for op in ops[1:]:
        if isinstance(op, Reg) and op.file == "P":
            pd = op
        elif isinstance(op, Imm):
            bar_id = int(op.value)
    count, all_, any_ = w.bar_result.get(bar_id, (0, False, False))
    if "RESULT" in s.ins.modifiers:
        if pd is not None:
            # The predicate result of the reduction just completed (AND or OR, per the BAR).
            kind = w.bar_kind.get(bar_id, "POPC")
            w.wp(pd, np.full(32, all_ if kind == "AND" else any_), mask)
        w.w(d, np.full(32, count, dtype=np.uint32), mask)
    else:
        raise EmuFault("unsupported B2R form")


@semantics("USETMAXREG", vector=True)
def op_usetmaxreg(w, s, active, mask):
    """`setmaxnreg`'s register-pool requests. The emulator's register file is never short
    (every thread has all 255 registers), so TRY_ALLOC always gets its registers: its
    uniform predicate is true at once and ptxas's retry loop runs one turn; DEALLOC (giving
    registers back) changes nothing here. Reading a register above the count a thread holds
    is undefined on the device and not checked."""
    if "TRY_ALLOC" in s.ins.modifiers:
        w.wp(s.ins.operands[0], np.ones(w.width, bool), mask)
