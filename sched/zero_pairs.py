"""Two zeroed halves of an aligned register pair written by one `CS2R Rd, SRZ`.

ptxas 13.5 zeroes a register pair R2k/R2k+1 with one CS2R from the zero special register
(every arch it targets, sm_75 to sm_120: 64-bit zeros, MMA accumulators initialised to
0.0, Triton's loop-carried accumulators re-zeroed each iteration), where a move per half
costs two issue slots. Which pairs get zeroed together is decided by the allocator; this
pass, after allocation and before scheduling, merges two single-register zero moves of the
same pair in one straight-line run of movable instructions when neither half is read or
written between them. Whether the target does it is `Target.cs2r_zero_pairs` (data)."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm, Instruction, Reg, SpecialReg

from ptx2sass.sched.control import Slot
from ptx2sass.sched.list_schedule import _movable

_RZ = Reg("R", 255)


def _zeroed(s: Slot) -> int | None:
    """The register an unguarded single-register zero move writes, else None."""
    ins = s.ins
    if ins.guard is not None or len(s.writes) != 1 or s.writes[0][0] != "R" or s.reads:
        return None
    ops = ins.operands
    if not ops or not isinstance(ops[0], Reg) or ops[0] != Reg("R", s.writes[0][1]):
        return None
    zero = all(op == _RZ or op == Imm(0) for op in ops[1:])
    if ins.opcode == "MOV" and not ins.modifiers and len(ops) == 2 and zero:
        return ops[0].index
    if ins.opcode == "IMAD" and tuple(ins.modifiers) == ("MOV", "U32") and len(ops) == 4 and zero:
        return ops[0].index
    return None


def _cs2r(first: Slot, second: Slot, even: int, at: Slot) -> Slot:
    """The CS2R in `at`'s place (its labels and block start)."""
    return Slot(Instruction("CS2R", (), (Reg("R", even), SpecialReg("SRZ"))), [],
                [("R", even), ("R", even + 1)], block_start=at.block_start,
                labels=at.labels, line=first.line, values=first.values + second.values)


# uniform constant loads (isel/target_forms.py) and uniform arithmetic (isel/uniform_datapath.py)
_UNIFORM = frozenset({"ULDC", "LDCU", "S2UR", "UIADD3", "UIMAD", "ULEA", "USHF", "ULOP3", "UISETP",
                      "USEL", "UMOV"})


def _uniform_constant_load(s: Slot) -> bool:
    """An unguarded ULDC/LDCU (isel/target_forms.py's uniform constants) or uniform
    arithmetic (isel/uniform_datapath.py): it reads no general register and writes only
    URs/UPs, so a zero move's write may pass it."""
    return (s.ins.opcode in _UNIFORM and s.ins.guard is None
            and not any(f == "R" for f, _ in s.reads + s.writes))


def _touches(s: Slot, r: int) -> bool:
    return ("R", r) in s.reads or ("R", r) in s.writes


def merge_zero_pairs(slots: list[Slot], enabled: bool = True) -> list[Slot]:
    """`slots` with each mergeable pair of zero moves replaced by one CS2R: at the earlier
    move's place when nothing between touches the later one's register (its write moves
    up), else at the later one's when nothing between touches the earlier one's."""
    if not enabled:
        return slots
    out = list(slots)
    dead: set[int] = set()
    for i, s in enumerate(out):
        r = _zeroed(s) if i not in dead else None
        if r is None or r | 1 == 255:        # R254's partner is RZ
            continue
        up = True                             # may the partner's write move up / r's down
        down = not (s.labels or s.block_start)
        for j in range(i + 1, len(out)):
            t = out[j]
            if j in dead:
                continue
            if t.block_start or t.labels or not (_movable(t) or _uniform_constant_load(t)):
                break
            if _zeroed(t) == r ^ 1 and (up or down):
                if up:
                    out[i], dead_k = _cs2r(s, t, r & ~1, s), j
                else:
                    out[j], dead_k = _cs2r(s, t, r & ~1, t), i
                dead.add(dead_k)
                break
            up = up and not _touches(t, r ^ 1)
            down = down and not _touches(t, r)
            if not (up or down):
                break
    return [s for k, s in enumerate(out) if k not in dead]
