"""Warp-aggregated atomics, as ptxas writes them: an `atom`/`red` whose address is the same in
every lane (ptx2sass.divergence) and whose old value nothing reads is done once for the
warp, by its lowest active lane, with the lanes' contributions combined first:

    S2R lane, SR_LANEID
    VOTEU.ANY UR6, UPT, PT            ; the active lanes
    UFLO.U32 UR7, UR6                 ; the lowest of them
    POPC c, UR6 ; IMAD v, c, value    ; add of a uniform value: value x the lane count
      or REDUX.<op> UR8, x ; MOV v    ; otherwise the lanes' values combined (sm_80+)
    ISETP.EQ.U32.AND P, PT, lane, UR7, PT
    @P RED.E.ADD... [a], v

One memory transaction per warp instead of one per lane (the atomic unit serialises
same-address updates). Integer add/min/max/and/or/xor on 32 bits only: they are associative
and commutative, so the result in memory is exactly the lanes' updates done one by one.
An atomic whose result is read is left alone (each lane would need its own prefix of the
warp's sum, which ptxas computes and we do not yet), as is a guarded one that would need
REDUX (it would combine the lanes the guard leaves out), and one only a single thread
reaches (`if (threadIdx.x == 0)`: ptxas leaves those alone too). A guarded add votes with
its guard (`VOTEU.ANY UR6, UPT, P0`).

Selection (isel/memory.py) decides and marks the atomic (`MInstr.warp_combine`, its data a
fresh register); `aggregate_warp_atomics` below writes the leader election and the value
in front of it. Target flags: `warp_aggregated_atomics`, `warp_reduce_atomics` (REDUX)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Reg, SpecialReg
from ptx2sass.isel.common import PT, RZ
from ptx2sass.mir import MFunction, MInstr, VOp

OPS = ("add", "min", "max", "and", "or", "xor")
REDUX_OPS = {"add": ("SUM",), "min": ("MIN",), "max": ("MAX",), "and": (), "or": ("OR",),
             "xor": ("XOR",)}       # AND is REDUX's default operation (nvdisasm leaves it unnamed)
# Scratch uniform registers (UR4/UR5 hold the global-memory descriptor); the sequence is
# short and its VOTEU/UFLO/REDUX stay in place (no scheduler moves them), so one set serves
# every atomic.
MASK_UR, LEADER_UR, SUM_UR = Reg("UR", 6), Reg("UR", 7), Reg("UR", 8)
UPT = Reg("UP", 7)
THREAD_INDEX = ("%tid.x", "%tid.y", "%tid.z")


def warp_combination(sel, ins: ir.Instr, op: str, ty: str, d, sem, sources) -> tuple | None:
    """("count", value operand) or ("reduce", (REDUX modifiers, register)) when selection may
    leave the atomic to one lane of the warp; None to keep it per lane."""
    target = sel.arch
    kind, bits = ir.TYPES[ty]
    if not (target.warp_aggregated_atomics and d is None and sem is None
            and op in OPS and bits == 32 and kind in ("u", "s", "b") and len(sources) == 1):
        return None
    address = ins.srcs[0]
    if not isinstance(address, ir.Address) or (isinstance(address.base, ir.Value)
                                               and address.base.id in sel.divergent):
        return None
    if _one_thread(sel, ins):
        return None
    value = sources[0]
    uniform = isinstance(value, ir.Const) or (isinstance(value, ir.Value) and value.id not in sel.divergent)
    if op == "add" and uniform:
        if isinstance(value, ir.Const):
            return "count", Imm(value.value & 0xFFFFFFFF)
        return "count", sel.part_of(value, 0)       # a register or a parameter's c[0x0][..]
    if not target.warp_reduce_atomics or sel.guard is not None:
        return None        # (REDUX would combine the lanes the guard leaves out too)
    src = sel.reg_part(value)
    if not isinstance(src, VOp):
        src = sel.as_reg(src)
    signed = kind == "s" and op in ("min", "max")
    return "reduce", (REDUX_OPS[op] + (("S32",) if signed else ()), src)


def _one_thread(sel, ins: ir.Instr) -> bool:
    """The atomic runs only where a thread index equals a constant (its guard, or a branch
    on the way to its block through single-predecessor blocks, is `setp.eq %tid.x, c` where
    true or `setp.ne` where false)."""
    cache = getattr(sel, "_warp_combine_facts", None)
    if cache is None:
        defs = {d.id: i for b in sel.fn.blocks for i in b.instrs for d in i.dests}
        homes = {id(i): b for b in sel.fn.blocks for i in b.instrs}
        cache = sel._warp_combine_facts = (defs, homes)
    defs, homes = cache

    def thread_index(v) -> bool:
        if isinstance(v, ir.SpecialReg):
            return v.name in THREAD_INDEX
        mov = defs.get(v.id) if isinstance(v, ir.Value) else None
        return (mov is not None and mov.opcode == "mov" and mov.guard is None and len(mov.srcs) == 1
                and isinstance(mov.srcs[0], ir.SpecialReg) and mov.srcs[0].name in THREAD_INDEX)

    def one_index(setp, holds: bool) -> bool:
        """`setp` (on the side where its result is `holds`) says a thread index is a constant."""
        if not (setp is not None and setp.opcode == "setp" and setp.guard is None and len(setp.srcs) == 2
                and setp.modifiers and (setp.modifiers[0], holds) in (("eq", True), ("ne", False))):
            return False
        a, b = setp.srcs
        return (thread_index(a) and isinstance(b, ir.Const)) or (thread_index(b) and isinstance(a, ir.Const))

    if ins.guard is not None and one_index(defs.get(ins.guard.id), not ins.guard_negated):
        return True
    node, seen = homes.get(id(ins)), set()
    while node is not None and len(node.preds) == 1 and id(node) not in seen:
        seen.add(id(node))
        pred = node.preds[0]
        term = pred.instrs[-1] if pred.instrs else None
        if (term is not None and term.opcode == "bra" and term.guard is not None
                and len(pred.succs) == 2 and pred.succs[0] is not pred.succs[1]):
            holds = (node is pred.succs[0]) != term.guard_negated     # the guard on this edge
            if one_index(defs.get(term.guard.id), holds):
                return True
        node = pred
    return False


def combine_registers(mi: MInstr) -> list[VOp]:
    """The registers a marked atomic's combination will read (kept live until the pass)."""
    if mi.warp_combine is None:
        return []
    kind, value = mi.warp_combine
    op = value if kind == "count" else value[1]
    return [op] if isinstance(op, VOp) else []


# Instructions after which the warp's active lanes or the scratch registers may differ: a
# later atomic of the block holds its own vote.
_NEW_VOTE = frozenset({"BAR", "WARPSYNC", "BSSY", "BSYNC", "CALL", "BRA", "EXIT", "RET", "YIELD",
                       "NANOSLEEP", "BPT"})


def aggregate_warp_atomics(mf: MFunction) -> None:
    """Write the leader election and the warp's value in front of every marked atomic. In a
    block, one lane-index read serves them all, and atomics with the same voting lanes share
    one vote, leader and lane count (ptxas's code for two `atomicAdd`s in a row)."""
    for b in mf.blocks:
        if not any(mi.warp_combine is not None for mi in b.instrs):
            continue
        out: list[MInstr] = []
        lane = None
        vote = None          # (voters, leader predicate, lane count or None) of the last vote
        for mi in b.instrs:
            if mi.warp_combine is None:
                if vote is not None and _ends_vote(mi, vote[0]):
                    vote = None
                out.append(mi)
                continue
            if lane is None:
                lane = VOp(mf.new_vreg())
                out.append(MInstr("S2R", (), [lane, SpecialReg("SR_LANEID")], 1, None, mi.line))
            vote = _leader_sequence(mf, mi, lane, vote, out)
            out.append(mi)
        b.instrs = out


def _ends_vote(mi: MInstr, voters) -> bool:
    if mi.opcode in _NEW_VOTE or mi.clobbers:
        return True
    for op in mi.defs:
        if isinstance(op, Reg) and op.file == "UR" and not op.is_zero:
            return True
        if isinstance(voters, VOp) and isinstance(op, VOp) and op.reg.id == voters.reg.id:
            return True
    return False


def _same_voters(a, b) -> bool:
    if isinstance(a, VOp) and isinstance(b, VOp):
        return a.reg.id == b.reg.id and a.inv == b.inv
    return a == b


def _leader_sequence(mf: MFunction, mi: MInstr, lane: VOp, vote, out: list) -> tuple:
    """Append the vote (unless `vote` serves), the warp's value and the leader's guard."""
    kind, value = mi.warp_combine
    mi.warp_combine = None
    data = mi.operands[-1]          # the warp's value: the atomic's last operand
    line = mi.line
    # a guarded atomic: the lanes whose guard holds vote (the leader is one of them)
    voters = mi.guard if mi.guard is not None else PT
    if vote is None or not _same_voters(vote[0], voters):
        leader = VOp(mf.new_vreg("P"))
        out.append(MInstr("VOTEU", ("ANY",), [MASK_UR, UPT, voters], 2, None, line))
        out.append(MInstr("UFLO", ("U32",), [LEADER_UR, MASK_UR], 1, None, line))
        out.append(MInstr("ISETP", ("EQ", "U32", "AND"), [leader, PT, lane, LEADER_UR, PT], 2, None, line))
        vote = (voters, leader, None)
    voters, leader, count = vote
    if kind == "count":
        if count is None:
            count = VOp(mf.new_vreg())
            out.append(MInstr("POPC", (), [count, MASK_UR], 1, None, line))
            vote = (voters, leader, count)
        k = value.value if isinstance(value, Imm) else None
        if k == 1:
            mi.operands[-1] = count
        elif k is not None and k > 1 and k & (k - 1) == 0:        # x 2^n: a shift, as ptxas
            out.append(MInstr("SHF", ("L", "U32"), [data, count, Imm(k.bit_length() - 1), RZ], 1, None, line))
        else:
            out.append(MInstr("IMAD", (), [data, count, value, RZ], 1, None, line))
    else:
        mods, src = value
        out.append(MInstr("REDUX", mods, [SUM_UR, src], 1, None, line))
        out.append(MInstr("IMAD", ("U32",), [data, RZ, RZ, SUM_UR], 1, None, line))
    mi.guard = leader
    return vote
