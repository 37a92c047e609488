"""Coalescing of copies between a scalar register and one part of a wide one (before the
whole-register coalescing of `regalloc.coalesce`).

A vector load writes a pair or quad and selection copies each element out into a scalar
(`d = COPY t.k`); a vector store reads a quad that selection packs from scalars
(`COPY s.k = x`). Interference is per virtual register, so colouring cannot give `d` the
register of `t.k` while the other parts of `t` are live, and ptxas's code has none of these
MOVs. Where it is safe the scalar is renamed to the part itself:

* load side: `d = COPY t.k` is `d`'s only definition, every write of `t` precedes the copy
  in the same block, and `d` is not live into that block — so `t.k` keeps `d`'s value for
  as long as `d` is live;
* store side: `COPY s.k = x` where `x` has one unguarded whole definition earlier in the same
  block, is not live into it, and `s` is written only by one IMPLICIT_DEF and one copy per
  part in that block and is not live into it — `x`'s definition then writes `s.k` directly
  and the IMPLICIT_DEF moves up to the first such definition.

The renamed register's live range becomes the wide register's, as in ptxas's allocation.
A wide register filled part by part from the same parts of another (`_whole_copies`)
becomes one whole copy, for the whole-register coalescing.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.encoder.model import ConstRef
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp, register_operands
from ptx2sass.regalloc.liveness import fresh_writes, liveness, use_def


class _LazyLiveIn:
    """`_live_in(mf)`, computed at the first question: most functions have no copy that
    asks one (nested loops paid two liveness solutions here for nothing)."""

    def __init__(self, mf: MFunction):
        self.mf, self.sets = mf, None

    def __getitem__(self, bi: int) -> set[int]:
        if self.sets is None:
            self.sets = _live_in(self.mf)
        return self.sets[bi]


def _live_in(mf: MFunction) -> list[set[int]]:
    fresh = fresh_writes(mf)
    live_out = liveness(mf, fresh)
    result = []
    for i, b in enumerate(mf.blocks):
        live = set(live_out[i])
        for ins in reversed(b.instrs):
            uses, kills = use_def(ins, fresh)
            live.difference_update(kills)
            live.update(uses)
        result.append(live)
    return result


def _defs(mf: MFunction) -> dict[int, list[tuple[int, int, MInstr]]]:
    """vreg id -> [(block index, position, instruction)] of every write."""
    out: dict[int, list] = {}
    for bi, b in enumerate(mf.blocks):
        for ii, ins in enumerate(b.instrs):
            for _, op, is_def in register_operands(ins):
                if is_def:
                    out.setdefault(op.reg.id, []).append((bi, ii, ins))
    return out


def _mentions_in_widths(mf: MFunction) -> set[int]:
    """Registers named by an operand with an extra footprint (never renamed to a part)."""
    out = set()
    for b in mf.blocks:
        for ins in b.instrs:
            for i in ins.widths:
                op = ins.operands[i]
                if isinstance(op, VOp):
                    out.add(op.reg.id)
    return out


def _plain_part(op) -> bool:
    return isinstance(op, VOp) and not (op.neg or op.abs or op.inv or op.suffix)


def _rename(mf: MFunction, renames: dict[int, VOp]) -> None:
    def sub(op):
        if isinstance(op, VOp) and op.reg.id in renames and op.part is None:
            to = renames[op.reg.id]
            return replace(op, reg=to.reg, part=to.part)
        if isinstance(op, VMem) and (isinstance(op.base, VOp) or op.ubase is not None):
            return replace(op, base=sub(op.base), ubase=sub(op.ubase))
        if isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
            return replace(op, ureg=sub(op.ureg))
        return op
    for b in mf.blocks:
        for ins in b.instrs:
            ins.operands = [sub(op) for op in ins.operands]


def coalesce_parts(mf: MFunction) -> int:
    """Rename scalars to the parts of wide registers they are copied from/into (see the
    module docstring). Returns the number of copies removed."""
    return _load_side(mf) + _whole_copies(mf) + _store_side(mf)


def _candidates_ok(mf: MFunction, vid: int, excluded: set[int]) -> bool:
    v = mf.vregs[vid]
    return v.cls == "R" and v.width == 1 and vid not in mf.precolored and vid not in excluded


def _load_side(mf: MFunction) -> int:
    defs, live_in, excluded = _defs(mf), _LazyLiveIn(mf), _mentions_in_widths(mf)
    renames: dict[int, VOp] = {}
    dropped: set[int] = set()
    for bi, b in enumerate(mf.blocks):
        for ii, ins in enumerate(b.instrs):
            if ins.opcode != COPY or ins.guard is not None:
                continue
            d, s = ins.operands[0], ins.operands[1]
            if not (isinstance(d, VOp) and d.part is None and _plain_part(s) and s.part is not None):
                continue
            t = s.reg
            if (not _candidates_ok(mf, d.reg.id, excluded) or t.cls != "R" or t.id in mf.precolored
                    or t.id in renames or d.reg.id in live_in[bi] or len(defs.get(d.reg.id, ())) != 1):
                continue
            if not all(dbi == bi and dii < ii for dbi, dii, _ in defs.get(t.id, ())):
                continue
            renames[d.reg.id] = VOp(t, s.part)
            dropped.add(id(ins))
    if not renames:
        return 0
    for b in mf.blocks:
        b.instrs = [ins for ins in b.instrs if id(ins) not in dropped]
    _rename(mf, renames)
    return len(dropped)


def _store_side(mf: MFunction) -> int:
    defs, live_in, excluded = _defs(mf), _LazyLiveIn(mf), _mentions_in_widths(mf)
    renames: dict[int, VOp] = {}
    dropped: set[int] = set()
    moves: list[tuple[int, MInstr, int]] = []        # (block, IMPLICIT_DEF, new position)
    for vid, writes in defs.items():
        s = mf.vregs[vid]
        if s.cls != "R" or s.width == 1 or vid in mf.precolored or vid in renames:
            continue
        bi = writes[0][0]
        if any(w[0] != bi for w in writes):
            continue
        imp = [w for w in writes if w[2].opcode == IMPLICIT_DEF]
        copies = [w for w in writes if w[2].opcode == COPY and w[2].guard is None
                  and w[2].operands[0].part is not None]
        if len(imp) != 1 or len(imp) + len(copies) != len(writes) or imp[0][1] > min(w[1] for w in copies or [imp[0]]):
            continue
        if vid in live_in[bi]:
            continue
        parts = [w[2].operands[0].part for w in copies]
        if len(set(parts)) != len(parts):
            continue
        first = imp[0][1]
        for _, ii, ins in copies:
            x = ins.operands[1]
            if not (_plain_part(x) and x.part is None) or x.reg.id in renames:
                continue
            xid = x.reg.id
            xdefs = defs.get(xid, ())
            if (not _candidates_ok(mf, xid, excluded) or xid in live_in[bi] or len(xdefs) != 1):
                continue
            xbi, xii, xins = xdefs[0]
            if xbi != bi or xii >= ii or xins.guard is not None or xins.opcode == IMPLICIT_DEF:
                continue
            if any(op.reg.id == xid and op.part is not None
                   for _, op, is_def in register_operands(xins) if is_def):
                continue
            renames[xid] = VOp(s, ins.operands[0].part)
            dropped.add(id(ins))
            first = min(first, xii)
        if first < imp[0][1]:
            moves.append((bi, imp[0][2], first))
    if not renames:
        return 0
    for bi, imp, pos in moves:
        b = mf.blocks[bi]
        anchor = b.instrs[pos]
        b.instrs.remove(imp)
        b.instrs.insert(b.instrs.index(anchor), imp)
    for b in mf.blocks:
        b.instrs = [ins for ins in b.instrs if id(ins) not in dropped]
    _rename(mf, renames)
    return len(dropped)


def _whole_copies(mf: MFunction) -> int:
    """`IMPLICIT_DEF s; COPY s.0 = t.0; ...; COPY s.{w-1} = t.{w-1}` (every part of a wide
    `t` into the same part of `s`, which nothing else in that block writes) becomes one
    `COPY s = t` at the last part copy, which whole-register coalescing can then remove (a
    pipelined loop's tile group filled from the tiles its preheader loaded). Only where
    nothing writes t or reads s from the first part copy to the last, and s is not live into
    the block: t then still holds what was copied, and s is whole before it is read."""
    live_in = _LazyLiveIn(mf)
    found = []
    for vid, all_writes in _defs(mf).items():
        s = mf.vregs[vid]
        if s.cls != "R" or s.width == 1 or vid in mf.precolored or all_writes[0][2].opcode != IMPLICIT_DEF:
            continue
        bi = all_writes[0][0]
        writes = [w for w in all_writes if w[0] == bi]     # other blocks' writes stay as they are
        if len(writes) != s.width + 1 or any(w[2].opcode == IMPLICIT_DEF for w in writes[1:]):
            continue
        copies = [w[2] for w in writes[1:]]
        sources = [ins.operands[1] for ins in copies if ins.opcode == COPY and ins.guard is None]
        if len(sources) != s.width or not all(_plain_part(x) and x.part == ins.operands[0].part
                                              for x, ins in zip(sources, copies)):
            continue
        t = sources[0].reg
        if (any(x.reg is not t for x in sources) or t.width != s.width or t is s or t.id in mf.precolored
                or sorted(x.part for x in sources) != list(range(s.width)) or vid in live_in[bi]):
            continue
        found.append((mf.blocks[bi], s, t, writes[0][2], copies))
    changed = 0
    for b, s, t, imp, copies in found:
        first, last = b.instrs.index(copies[0]), b.instrs.index(copies[-1])
        if any((op.reg is t and is_def) or (op.reg is s and not is_def)
               for ins in b.instrs[first:last + 1] for _, op, is_def in register_operands(ins)):
            continue
        drop = {id(imp)} | {id(ins) for ins in copies[:-1]}
        whole = MInstr(COPY, (), [VOp(s), VOp(t)], 1, line=copies[-1].line)
        b.instrs = [whole if ins is copies[-1] else ins for ins in b.instrs if id(ins) not in drop]
        changed += 1
    return changed
