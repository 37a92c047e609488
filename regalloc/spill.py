"""Spill code: what the allocator does with the virtual registers it could not colour.

Spill everywhere (Chaitin): each spilled register gets a home, every instruction that reads
it gets a reload into a fresh short-lived register just before, and every instruction that
writes it gets a store just after. Three homes, cheapest first:

* *recompute*: a register written once by a move of a constant (an immediate or a
  constant-bank word) is not stored at all; the move is repeated before each reader.
* *predicate in a general register*: ptxas keeps a spilled predicate in an R register and
  tests it again with `ISETP.NE` (seen in its output for tinygrad's sqrt kernels, where it
  saves predicates with `P2R`); here the save is `SEL Rs, RZ, 0x1, !Pt` (Rs = Pt ? 1 : 0),
  which names the predicate as an ordinary operand. That R register can itself be spilled
  to memory later.
* *local memory*: a slot of the kernel's stack frame (`ptx2sass.frame`), `STL [R1+slot]` and
  `LDL R, [R1+slot]` with the width's size modifier (.64 for pairs, .128 for quads), as
  ptxas writes its spill code.

A write of one part of a wide register, or a guarded write, reads the old value too, so it
gets a reload before and a store after. Whole-register copies to or from a spilled register
become the store or the reload themselves.
"""
from __future__ import annotations

from dataclasses import field, replace

from ptx2sass.records import dataclass
from ptx2sass.encoder.model import ConstRef, Imm, Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp, register_operands, writers

STACK_POINTER = Reg("R", 1)
RZ = Reg("R", 255)
PT = Reg("P", 7)
SIZE_MODIFIER = {1: (), 2: ("64",), 4: ("128",)}     # 32-bit registers -> STL/LDL size
REMATERIALISABLE = frozenset({"MOV", "IMAD"})         # moves of a constant (IMAD.MOV.U32)
SHARE_SLOTS = True       # copy-joined registers spilled together share a slot (`shared_slots`; A/B flag)


@dataclass
class SpillStats:
    """Static spill traffic, as ptxas's -v counts it: bytes of every STL/LDL it inserted."""
    store_bytes: int = 0
    load_bytes: int = 0
    spilled: list[int] = field(default_factory=list)        # vreg ids sent to memory
    recomputed: list[int] = field(default_factory=list)     # vreg ids whose move is repeated
    predicates: list[int] = field(default_factory=list)     # predicates kept in R registers


def _is_constant_operand(op) -> bool:
    if isinstance(op, (VOp, VMem)):
        return False
    if isinstance(op, ConstRef):
        return op.ureg is None and op.ubank is None
    if isinstance(op, Reg):
        return op.is_zero or op == PT
    return isinstance(op, Imm)


def definitions(mf: MFunction) -> dict[int, list[MInstr]]:
    """vreg id -> the instructions that write it (IMPLICIT_DEF included), in program order."""
    return writers(mf)


def recomputable_definition(mf: MFunction, vid: int, defs: dict[int, list[MInstr]]) -> MInstr | None:
    """The single unguarded whole-register move of a constant that defines `vid`, if any."""
    sites = defs.get(vid, [])
    if len(sites) != 1:
        return None
    ins = sites[0]
    if (ins.opcode not in REMATERIALISABLE or ins.guard is not None or ins.ndefs != 1
            or not isinstance(ins.operands[0], VOp) or ins.operands[0].part is not None
            or ins.operands[0].reg.id != vid):
        return None
    if all(_is_constant_operand(op) for op in ins.uses):
        return ins
    return None


def _whole_copy(ins: MInstr) -> tuple[int, int] | None:
    """(destination, source) vreg ids of an unguarded whole-register COPY between two
    general registers of one width, else None."""
    if ins.opcode != COPY or ins.guard is not None or len(ins.operands) != 2:
        return None
    dst, src = ins.operands
    if not (isinstance(dst, VOp) and isinstance(src, VOp) and dst.part is None and src.part is None
            and dst.reg.cls == src.reg.cls == "R" and dst.reg.width == src.reg.width
            and not (src.neg or src.abs or src.inv or src.suffix) and dst.reg.id != src.reg.id):
        return None
    return dst.reg.id, src.reg.id


def shared_slots(mf: MFunction, vids: list[int], edges: dict[int, set[int]]) -> dict[int, int]:
    """vreg id -> the id whose slot it takes, for registers going to memory together that
    a copy joins and that do not interfere (the groups grow copy by copy, a group taking
    another only where none of its members interferes with the other's). A loop's values
    spilled with their phi copies then stay in one slot each: the copy at the back edge
    was an LDL and an STL every iteration (register_pressure many_accumulators on sm_90,
    32 registers: 26 such pairs in the loop)."""
    going = set(vids)
    parent = {v: v for v in vids}
    members = {v: {v} for v in vids}

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v
    for b in mf.blocks:
        for ins in b.instrs:
            pair = _whole_copy(ins)
            if pair is None or pair[0] not in going or pair[1] not in going:
                continue
            a, c = find(pair[0]), find(pair[1])
            if a == c or any(edges.get(x, set()) & members[c] for x in members[a]):
                continue
            if len(members[a]) < len(members[c]):
                a, c = c, a
            parent[c] = a
            members[a] |= members.pop(c)
    return {v: find(v) for v in vids if find(v) != v}


class Spiller:
    """Rewrites a function so that the given registers live in their homes between uses.
    `unspillable` collects the short-lived registers it creates, which must never be chosen
    for spilling again (they live for one instruction)."""

    def __init__(self, mf: MFunction, frame, unspillable: set[int], stats: SpillStats) -> None:
        self.mf, self.frame, self.unspillable, self.stats = mf, frame, unspillable, stats

    def spill(self, vids: list[int], edges: dict[int, set[int]] | None = None) -> None:
        """Send `vids` to their homes. `edges` (the interference graph of the code as it
        is, where the caller has one): registers joined by a copy that do not interfere
        share one slot, and the copy goes (`shared_slots`)."""
        mf = self.mf
        defs = definitions(mf)
        recompute: dict[int, MInstr] = {}
        slot: dict[int, int] = {}           # R vreg -> frame offset
        home: dict[int, VOp] = {}           # P vreg -> the R register keeping it
        to_memory: list[int] = []
        for vid in sorted(vids):
            v = mf.vregs[vid]
            ins = recomputable_definition(mf, vid, defs)
            if ins is not None:
                recompute[vid] = ins
                self.stats.recomputed.append(vid)
            elif v.cls == "P":
                home[vid] = VOp(mf.new_vreg("R"))
                self.stats.predicates.append(vid)
            else:
                to_memory.append(vid)
        group = shared_slots(mf, to_memory, edges) if edges is not None and SHARE_SLOTS else {}
        for vid in to_memory:
            root = group.get(vid, vid)
            if root not in slot:
                size = 4 * mf.vregs[vid].width
                slot[root] = self.frame.allocate(size, size, f"spill.{root}")
            slot[vid] = slot[root]
            self.stats.spilled.append(vid)
        self.recompute, self.slot, self.home = recompute, slot, home
        dropped = set(map(id, recompute.values()))
        spilled = set(vids)
        for b in mf.blocks:
            out: list[MInstr] = []
            for ins in b.instrs:
                if id(ins) in dropped:
                    continue
                pair = _whole_copy(ins)
                if pair is not None and pair[0] in slot and pair[1] in slot \
                        and slot[pair[0]] == slot[pair[1]]:
                    continue                       # the value is in the slot already
                named = sorted({op.reg.id for _, op, _ in register_operands(ins)} & spilled)
                if not named:
                    out.append(ins)
                elif ins.opcode == IMPLICIT_DEF:
                    continue                       # the home's old contents serve as undefined
                elif not self._copy_through_memory(ins, named, out):
                    self._rewrite(ins, named, out)
            b.instrs = out

    # --- the three homes -------------------------------------------------------------------

    def _memory(self, vid: int, offset: int = 0) -> VMem:
        return VMem(STACK_POINTER, self.slot[vid] + offset, wide=False)

    def _reload(self, vid: int, into: VOp, out: list[MInstr], word: int | None = None) -> None:
        if vid in self.recompute:
            original = self.recompute[vid]
            out.append(MInstr(original.opcode, original.modifiers, [into, *original.uses], 1, None,
                              original.line, dict(original.widths)))
        elif vid in self.home:
            out.append(MInstr("ISETP", ("NE", "AND"), [into, PT, self.home[vid], RZ, PT], 2))
        else:
            width = self.mf.vregs[vid].width if word is None else 1
            out.append(MInstr("LDL", SIZE_MODIFIER[width], [into, self._memory(vid, 4 * (word or 0))], 1))
            self.stats.load_bytes += 4 * width

    def _store(self, vid: int, value: VOp, out: list[MInstr], word: int | None = None) -> None:
        if vid in self.home:
            out.append(MInstr("SEL", (), [self.home[vid], RZ, Imm(1), replace(value, inv=True)], 1))
        else:
            width = self.mf.vregs[vid].width if word is None else 1
            out.append(MInstr("STL", SIZE_MODIFIER[width], [self._memory(vid, 4 * (word or 0)), value], 0))
            self.stats.store_bytes += 4 * width

    # --- rewriting -------------------------------------------------------------------------

    def _copy_through_memory(self, ins: MInstr, named: list[int], out: list[MInstr]) -> bool:
        """A whole-register copy with exactly one side in memory becomes the store or the
        reload itself. Only between registers of one class: STL/LDL take R registers, so a
        copy from or to a uniform register (a UR value moved into a spilled R) keeps its
        move and goes through a temporary."""
        if ins.opcode != COPY or ins.guard is not None or len(named) != 1:
            return False
        dst, src = ins.operands[0], ins.operands[1]
        if not (isinstance(dst, VOp) and isinstance(src, VOp) and dst.part is None
                and src.part is None and dst.reg.width == src.reg.width and not src.inv
                and dst.reg.cls == src.reg.cls):
            return False
        vid = named[0]
        if vid not in self.slot:
            return False
        if dst.reg.id == vid:
            self._store(vid, src, out)
        else:
            self._reload(vid, dst, out)
        return True

    def _rewrite(self, ins: MInstr, named: list[int], out: list[MInstr]) -> None:
        temp: dict[int, tuple] = {}          # vid -> (temp vreg, the one part it stands for)
        reads, writes = set(), set()
        guarded = ins.guard is not None
        occurrences: dict[int, list] = {}
        for _, op, is_def in register_operands(ins):
            if op.reg.id in named:
                occurrences.setdefault(op.reg.id, []).append((op, is_def))
        for vid in named:
            ops = occurrences[vid]
            parts = {op.part for op, _ in ops}
            reg = ops[0][0].reg
            # one 32-bit word of a register kept in memory: reload or store just that word
            # (a write of it then leaves the other words alone, so it needs no reload)
            word = parts.pop() if (len(parts) == 1 and vid in self.slot and reg.width > 1
                                   and None not in parts and not guarded) else None
            t = self.mf.new_vreg(reg.cls, 1 if word is not None else reg.width)
            self.unspillable.add(t.id)
            temp[vid] = (t, word)
            for op, is_def in ops:
                if is_def:
                    writes.add(vid)
                    if word is None and (op.part is not None or guarded):
                        reads.add(vid)
                else:
                    reads.add(vid)
        for vid in named:
            if vid in reads:
                t, word = temp[vid]
                self._reload(vid, VOp(t), out, word)
        ins.operands = [self._renamed(op, temp) for op in ins.operands]
        if isinstance(ins.guard, VOp):
            ins.guard = self._renamed(ins.guard, temp)
        out.append(ins)
        for vid in named:
            if vid in writes:
                t, word = temp[vid]
                self._store(vid, VOp(t), out, word)

    @staticmethod
    def _renamed(op, temp: dict):
        def swap(v: VOp) -> VOp:
            t, word = temp[v.reg.id]
            return replace(v, reg=t, part=None) if word is not None else replace(v, reg=t)
        if isinstance(op, VOp) and op.reg.id in temp:
            return swap(op)
        if isinstance(op, VMem) and isinstance(op.base, VOp) and op.base.reg.id in temp:
            op = replace(op, base=swap(op.base))
        if isinstance(op, VMem) and op.ubase is not None and op.ubase.reg.id in temp:
            op = replace(op, ubase=swap(op.ubase))
        if isinstance(op, VMem):
            return op
        if isinstance(op, ConstRef) and isinstance(op.ureg, VOp) and op.ureg.reg.id in temp:
            return replace(op, ureg=swap(op.ureg))
        return op
