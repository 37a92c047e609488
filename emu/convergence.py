"""Pessimistic reconvergence: which instructions need their warp converged, and the check
that flags a "convergence hazard" when they run apart.

On Volta and later (independent thread scheduling) lanes that diverge at a branch are only
guaranteed to run together again where the code says so: a BSYNC whose convergence barrier
(set by BSSY) all its members have reached, a WARPSYNC of a member mask, and a CTA barrier
that releases them together. In the launch mode `reconverge="explicit"` the machine
(`machine.Warp`) keeps diverged lane groups apart until one of those joins them; this module
says, for each instruction, which lanes must be executing it together:

* `.sync` warp-collective operations (SHFL, VOTE, REDUX, MATCH): the lanes of the member
  mask. SASS carries no mask on them: a mask that is not known to be the full warp is made
  to meet first, by a WARPSYNC (ptxas: inline, or in its `shflsync` subroutine; our
  selector likewise) or by a `BRA.CONV mask` / `BRA.DIV mask` test that picks the fast
  path only when they are together. So the members are the lanes last met with no control
  instruction since: those a WARPSYNC released together (lanes of its mask parked at a
  BSYNC do not hold it up, nor count), or the mask a BRA.CONV/DIV found together; else
  the whole warp. A BSSY splits nothing, and a BSYNC that releases every member of its
  barrier gives them back what they met on at the BSSY (ptxas's converged path: BRA.CONV
  m; BSSY; WARPSYNC.EXCLUSIVE m; REDUX; BSYNC; MATCH of m); one that lets lanes go
  without partners that yielded (GPU run 12's split) leaves the whole warp. VOTE is also
  `activemask` (`VOTE.ANY R, PT, PT`), which is no collective but a meeting of the lanes
  present (code that reads it goes on with those lanes as members): where the cubin lists its
  warp-synchronous instructions (COOP_GROUP_INSTR_OFFSETS) a VOTE counts only if listed,
  otherwise only if its predicate source is not PT.
* matrix instructions (HMMA, IMMA, DMMA, BMMA, LDSM, MOVM): every lane of the warp that
  has not exited.

A hazard names the instruction, the lanes that ran it and the member lanes that were
elsewhere: still live, or exited after the warp split them from the runners with no meeting
since (another schedule would have run the collective before they exited).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx2sass.encoder.model import Reg

from .hazards import Hazard

FULL = 0xFFFFFFFF
MEMBER_MASK_OPS = {"SHFL", "VOTE", "REDUX", "MATCH"}
WHOLE_WARP_OPS = {"HMMA", "IMMA", "QMMA", "OMMA", "DMMA", "BMMA", "LDSM", "STSM", "MOVM"}
RECONVERGE_MODES = ("optimistic", "explicit")


@dataclass(frozen=True)
class Collective:
    """What an instruction needs: the whole warp (`whole_warp`), or its member mask."""
    whole_warp: bool = False


def _is_activemask(ins) -> bool:
    src = ins.operands[-1] if ins.operands else None
    return isinstance(src, Reg) and src.file in ("P", "UP") and src.index == 7 and not src.inv


def _same_reg(a, b) -> bool:
    return isinstance(a, Reg) and isinstance(b, Reg) and (a.file, a.index) == (b.file, b.index)


_CONTROL = {"BRA", "BRX", "BRXU", "JMP", "JMX", "BSYNC", "WARPSYNC", "EXIT", "RET", "CALL",
            "YIELD", "BAR", "BPT", "KILL"}


def presence_probes(instructions) -> set[int]:
    """Offsets of the REDUXes and MATCHes that only ask whether their lanes are together:
    ptxas's converged-path test for a member mask held in a register R, `REDUX.OR UR, R`
    (and `MATCH.ANY Rm, R` + LOP3 with activemask: every lane present has the same mask)
    then `BRA.DIV UR, slow`, which compares the OR of the masks with the lanes present. Such
    an instruction runs on whichever lanes arrive, by design: no member is missing from it.
    Found as: a BRA.DIV/CONV whose mask UR a REDUX wrote in the straight run before it; the
    REDUXes and MATCHes of that run that read the REDUX's source."""
    probes = set()
    for j, (_, bra) in enumerate(instructions):
        if bra.opcode != "BRA" or not bra.operands:
            continue
        mask = bra.operands[0]
        if not (("DIV" in bra.modifiers or "CONV" in bra.modifiers) and isinstance(mask, Reg)
                and mask.file == "UR"):
            continue
        run = []
        for offset, ins in reversed(instructions[max(0, j - 8):j]):
            if ins.opcode in _CONTROL:
                break
            run.append((offset, ins))
        source = next((ins.operands[-1] for _, ins in run if ins.opcode == "REDUX" and ins.operands
                       and _same_reg(ins.operands[0], mask)), None)
        if not isinstance(source, Reg):
            continue
        probes.update(offset for offset, ins in run
                      if ins.opcode in ("REDUX", "MATCH") and ins.operands and _same_reg(ins.operands[-1], source))
    return probes


def prepare_step(s, warp_sync_offsets: set[int] | None, probes: set[int] = frozenset()) -> None:
    """Mark a step that needs its warp converged (`step.aux["collective"]`), one that meets
    its lanes (`meets`) and an activemask (`present_meet`)."""
    op = s.ins.opcode
    if op == "WARPSYNC" or (op == "BRA" and ("CONV" in s.ins.modifiers or "DIV" in s.ins.modifiers)):
        s.aux["meets"] = True          # sets the lanes' sync_hint itself
    if op in ("BSSY", "BSYNC"):
        # BSSY splits nothing (its lanes go on together) and records their sync_hint; a
        # BSYNC that releases every member gives it back (machine.release_convergence), one
        # that lets lanes go without their partners (a YIELD) sets the full warp
        s.aux["meets"] = True
    if op in ("VOTE", "VOTEU") and _is_activemask(s.ins):
        # `activemask`: the lanes here are the members of what follows it with no
        # control instruction between (a warp-aggregated atomic's REDUX, ptxas's and ours)
        s.aux["present_meet"] = True
    if op in WHOLE_WARP_OPS:
        s.aux["collective"] = Collective(whole_warp=True)
    elif op in MEMBER_MASK_OPS:
        if op == "VOTE" and (s.offset not in warp_sync_offsets if warp_sync_offsets else _is_activemask(s.ins)):
            return
        if s.offset in probes:
            return
        s.aux["collective"] = Collective()


def check(warp, step, active: np.ndarray, need: Collective) -> None:
    """Flag the step if a live member lane is not among the `active` lanes running it. The
    member mask is what the lanes last met on (`Warp.sync_hint`), else the full warp."""
    from .machine import EXITED, mask_to_int
    ran = mask_to_int(active)
    first = int(np.argmax(active))
    # lanes that could still be running it: live ones, and exited ones that left apart
    # from these (they may not have exited yet when the collective ran)
    present = mask_to_int(warp.state != EXITED) | ran | int(warp.apart[first])
    if need.whole_warp:
        members = present
    else:
        members = int(warp.sync_hint[first]) & present
    missing = members & ~ran
    if missing:
        what = "the warp's live lanes" if need.whole_warp else "member lanes"
        warp.launch.flag_convergence(step.offset, f"convergence hazard: {step.ins.opcode} run by lanes "
                                     f"{ran:#010x} without {what} {missing:#010x}")


class ConvergenceLog:
    """The convergence hazards of one launch (one per offset and message)."""

    def __init__(self, kernel: str, limit: int = 100):
        self.kernel = kernel
        self.limit = limit
        self.hazards: list[Hazard] = []
        self._seen: set = set()

    def flag(self, offset: int, message: str) -> None:
        if offset in self._seen or len(self.hazards) >= self.limit:
            return
        self._seen.add(offset)
        self.hazards.append(Hazard(self.kernel, offset, message))
