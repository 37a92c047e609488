"""Cheap loop invariants are recomputed inside a crowded loop instead of held across it.

The IR hoists every loop-invariant computation in front of its loop; each result then holds
a register for the whole loop. Where the loop needs more registers than the pressure limit
(`sched.pre_schedule.PRESSURE_LIMIT`), ptxas recomputes the cheap ones next to their readers:
in Triton's matmul_masked it ORs the lane's row index with 4, 8, ... 24 (`LOP3.LUT R61, R56,
0x4, RZ, 0xfc`) in every iteration instead of keeping six row indices live; ours kept them
(and the loop needed 105 registers to ptxas's 64).

A candidate is a 32-bit register written once, outside the loop, by an unguarded pure
integer instruction with one result (LOP3, IADD3, SHF, SGXT, LEA, IMAD, MOV) whose register
operands are single-write 32-bit registers already live across the whole loop (so the copy
reads the same values and lengthens no live range), and read only inside the loop. Each
block of the loop that reads it gets a copy of the instruction in front of its first reader.
Candidates go in order of fewest copies, only as many as bring the loop's pressure (the
registers the allocator's liveness counts live at once, `pre_schedule._pressure`) down to
the limit, so a loop within the limit keeps its code.

A loop is a back edge's layout range (header to the furthest block jumping back to it,
`regalloc.loops`), taken only where every block after the header has all its predecessors
inside the range.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import ConstRef, Reg
from ptx2sass.mir import IMPLICIT_DEF, MFunction, MInstr, VOp, register_operands
from ptx2sass.regalloc.liveness import UNIT_BITS, fresh_writes, liveness, unit_liveness, use_def
from ptx2sass.sched.pre_schedule import PRESSURE_LIMIT, _pressure, units_in

LIMIT = PRESSURE_LIMIT
ROUNDS = 3          # a copied invariant's source may become one in the next round
CHEAP = frozenset({"LOP3", "IADD3", "SHF", "SGXT", "LEA", "IMAD", "MOV"})


def _loops(mf: MFunction) -> list[tuple[int, int]]:
    """(header, tail) block index ranges of the loops, innermost (shortest) first."""
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    tails: dict[int, int] = {}
    for i, b in enumerate(mf.blocks):
        for s in b.succs:
            h = index[id(s)]
            if h <= i:
                tails[h] = max(i, tails.get(h, i))
    # a loop is taken where blocks h+1..t have all their predecessors in h..t: the least
    # and the most predecessor index over that range, from sparse tables (asking each
    # block of each loop walked ~N^2/2 blocks for N nested loops)
    n = len(mf.blocks)
    lows = [[min((index[id(p)] for p in b.preds), default=n) for b in mf.blocks]]
    highs = [[max((index[id(p)] for p in b.preds), default=-1) for b in mf.blocks]]
    span = 1
    while 2 * span <= n:
        lo, hi = lows[-1], highs[-1]
        lows.append([min(lo[k], lo[k + span]) for k in range(n - 2 * span + 1)])
        highs.append([max(hi[k], hi[k + span]) for k in range(n - 2 * span + 1)])
        span *= 2
    out = []
    for h, t in tails.items():
        if t > h:
            level = (t - h).bit_length() - 1         # blocks h+1..t: t - h of them
            a, b = t - (1 << level) + 1, h + 1
            if (min(lows[level][b], lows[level][a]) < h
                    or max(highs[level][b], highs[level][a]) > t):
                continue
        out.append((h, t))
    return sorted(out, key=lambda r: r[1] - r[0])


def _candidate_instr(ins: MInstr) -> VOp | None:
    """The 32-bit result (one whole register, or one part of a wide one) of a copyable
    cheap instruction, or None."""
    if (ins.opcode not in CHEAP or ins.guard is not None or ins.ndefs != 1 or ins.widths
            or ins.clobbers or ins.shown is not None or ins.warp_combine is not None):
        return None
    d = ins.operands[0]
    if type(d) is not VOp or d.reg.cls != "R" or d.width != 1 or d.suffix:
        return None
    for op in ins.operands[1:]:
        if type(op) is Reg and op.file not in ("R", "P"):
            return None             # uniform registers: their writers are not tracked here
        if type(op) is VOp and (op.reg.cls != "R" or op.width != 1 or op.part is not None):
            return None
        if type(op) is ConstRef and op.ureg is not None:
            return None
    return d


class _Facts:
    """Who writes and reads each register, and the liveness, of the function as it is now."""

    def __init__(self, mf: MFunction):
        self.writers: dict[int, list[tuple[MInstr, int]]] = {}
        self.readers: dict[int, list[tuple[int, VOp | None]]] = {}   # vreg -> (block, operand)
        for bi, b in enumerate(mf.blocks):
            for ins in b.instrs:
                for i, op, is_def in register_operands(ins):
                    if is_def:
                        self.writers.setdefault(op.reg.id, []).append((ins, bi))
                    else:
                        self.readers.setdefault(op.reg.id, []).append((bi, op if i not in ins.widths else None))
        self.width = {v.id: v.width for v in mf.vregs if v.cls == "R"}
        self.fresh = fresh_writes(mf)
        self.live_out = liveness(mf, self.fresh)
        self.units_out = unit_liveness(mf, self.fresh)
        self.pressure: dict[int, int] = {}  # block -> its pressure, asked by every loop around it
        self.units: set[int] | None = None
        self._eligible: dict[int, tuple] | None = None
        self._eligible_ids: set[int] = set()
        self._ranges: dict[int, tuple[int, int]] = {}   # h -> (t, the most pressure in h..t)

    def range_pressure(self, mf: MFunction, h: int, t: int) -> int:
        """The most pressure of blocks h..t. A range asked before inside this one counts as
        its answer (a loop nest asks each enclosing range: the inner one is walked once)."""
        most, k = 0, h
        while k <= t:
            got = self._ranges.get(k)
            if got is not None and got[0] <= t:
                most, k = max(most, got[1]), got[0] + 1
            else:
                most, k = max(most, self.block_pressure(mf, k)), k + 1
        if self._ranges.get(h, (-1,))[0] < t:
            self._ranges[h] = (t, most)
        return most

    def single(self, v: int) -> tuple[MInstr, int] | None:
        """v's one writer (and its block) besides IMPLICIT_DEFs, or None."""
        w = [x for x in self.writers.get(v, []) if x[0].opcode != IMPLICIT_DEF]
        return w[0] if len(w) == 1 else None

    def eligible(self, mf: MFunction) -> dict[int, tuple]:
        """What makes a register a candidate in any loop, asked once per state of the code
        (each loop of a deep nest has hundreds of registers live through it, nearly none of
        them candidates): v -> (its writer, its block, the first and last block reading it)
        for a register written once by a copyable instruction, read only by operands of
        that instruction's part, not precoloured. A loop takes those whose writer is
        outside it and whose readers are inside."""
        if self._eligible is None:
            self._eligible = {}
            for v, reads in self.readers.items():
                w = self.single(v)
                if w is None or v in mf.precolored:
                    continue
                d = _candidate_instr(w[0])
                if d is None or any(op is None or op.part != d.part for _, op in reads):
                    continue
                blocks = [k for k, _ in reads]
                self._eligible[v] = (w[0], w[1], min(blocks), max(blocks))
            self._eligible_ids = set(self._eligible)
        return self._eligible

    def block_pressure(self, mf: MFunction, k: int) -> int:
        p = self.pressure.get(k)
        if p is None:
            if self.units is None:
                self.units = units_in(self.units_out, self.width)
            p = self.pressure[k] = _pressure(mf.blocks[k].instrs, self.units_out[k], self.width, self.fresh,
                                             self.units)
        return p


def remat_invariants(mf: MFunction, limit: int | None = None, solved: dict | None = None) -> int:
    """Copies cheap invariants into crowded loops; returns how many registers it freed.
    `limit`: the pressure a loop may have (None: `LIMIT`). `solved`, where given, receives
    the liveness of the code as this leaves it, where it has it (`fresh`, `live_out`,
    `units_out`: what `sched.pre_schedule` would solve again)."""
    limit = LIMIT if limit is None else limit
    freed = 0
    facts = None
    for h, t in _loops(mf):
        for _ in range(ROUNDS):
            facts = facts or _Facts(mf)
            n = _round(mf, facts, h, t, limit)
            if not n:
                break
            freed += n
            facts = None        # any change: the facts go (so those left are the code's)
    if solved is not None and facts is not None:
        solved.update(fresh=facts.fresh, live_out=facts.live_out, units_out=facts.units_out)
    return freed


def _round(mf: MFunction, facts: _Facts, h: int, t: int, limit: int) -> int:
    """One round on the loop of blocks h..t: the registers it freed."""
    writers, readers = facts.writers, facts.readers
    width, fresh, live_out, units_out = facts.width, facts.fresh, facts.live_out, facts.units_out
    freed = 0
    single = facts.single

    pressure = facts.range_pressure(mf, h, t)
    if pressure <= limit:
        return 0
    header = mf.blocks[h]
    live_in = set(live_out[h])
    for ins in reversed(header.instrs):
        uses, kills = use_def(ins, fresh)
        live_in.difference_update(kills)
        live_in.update(uses)
    def written_inside(v: int) -> bool:     # (a set over the loop's blocks costs its size)
        return any(h <= bi <= t for _, bi in writers.get(v, ()))

    def through(v: int) -> bool:            # live across the whole loop
        return v in live_in and not written_inside(v)

    eligible = facts.eligible(mf)
    cands = []
    for v in sorted(live_in & facts._eligible_ids):
        ins, wb, first, last = eligible[v]
        if h <= wb <= t or not h <= first or not last <= t or written_inside(v):
            continue
        srcs = {op.reg.id for _, op, is_def in register_operands(ins) if not is_def}
        if not all(single(r) is not None and not h <= single(r)[1] <= t and r not in mf.precolored
                   and not written_inside(r) for r in srcs):
            continue
        cands.append((v, ins, frozenset(r for r in srcs if not through(r)),
                      sorted({k for k, _ in readers[v]})))
    # those reading only registers live across the loop first (each frees one), then
    # groups that make one more register live across it for several freed
    groups: dict[frozenset, list] = {}
    for c in cands:
        groups.setdefault(c[2], []).append(c)
    order = sorted(groups.items(), key=lambda g: (len(g[0]) - len(g[1]), len(g[0])))
    room = pressure - limit
    chosen: set[int] = set()
    sources: set[int] = set()
    for new_live, group in order:
        if room <= 0:
            break
        take = []
        for c in sorted(group, key=lambda c: (len(c[3]), c[0])):
            v, ins = c[0], c[1]
            srcs = {op.reg.id for _, op, d in register_operands(ins) if not d}
            if v in sources or srcs & chosen or len(take) - len(new_live) >= room:
                continue
            take.append(c)
            chosen.add(v)
            sources.update(srcs)
        if len(take) - len(new_live) <= 0:
            continue        # (those left chosen are only skipped by the others: harmless)
        for v, ins, _, blocks in take:
            _copy_into_readers(mf, v, ins, blocks)
            for w, wb in writers[v]:        # it and a wide register's IMPLICIT_DEF go
                if w in mf.blocks[wb].instrs:
                    mf.blocks[wb].instrs.remove(w)
        room -= len(take) - len(new_live)
        freed += len(take) - len(new_live)
    return freed


def _copy_into_readers(mf: MFunction, v: int, ins: MInstr, blocks: list[int]) -> None:
    for k in blocks:
        b = mf.blocks[k]
        first = next(i for i, x in enumerate(b.instrs)
                     if any(op.reg.id == v and not is_def for _, op, is_def in register_operands(x)))
        new = mf.new_vreg("R")
        copy = MInstr(ins.opcode, ins.modifiers, [VOp(new)] + list(ins.operands[1:]), ndefs=1,
                      line=b.instrs[first].line)
        for x in b.instrs[first:]:
            x.operands = [_renamed(op, v, new) for op in x.operands]
            if type(x.guard) is VOp and x.guard.reg.id == v:
                x.guard = replace(x.guard, reg=new, part=None)
        b.instrs.insert(first, copy)


def _renamed(op, v: int, new):
    from ptx2sass.mir import VMem
    from ptx2sass.encoder.model import ConstRef
    if type(op) is VOp and op.reg.id == v:
        return replace(op, reg=new, part=None)
    if type(op) is VMem and op.ubase is not None and op.ubase.reg.id == v:
        op = replace(op, ubase=replace(op.ubase, reg=new, part=None))
    if type(op) is VMem and type(op.base) is VOp and op.base.reg.id == v:
        return replace(op, base=replace(op.base, reg=new, part=None))
    if type(op) is ConstRef and type(op.ureg) is VOp and op.ureg.reg.id == v:
        return replace(op, ureg=replace(op.ureg, reg=new, part=None))
    return op
