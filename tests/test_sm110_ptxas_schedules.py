"""ptxas's sm_110 schedules that the hazard checker flagged before blackwell_sm110.json learnt
the fact each one shows (`evidence` "open16"): programs of branch open16's held-out audit sample
(fuzz seeds 33000000-33000059, `ptx2sass-fuzz show SEED --arch sm_110`, peeled as a campaign
does). ptxas's code is taken as hazard-free, so a hazard the checker finds in it is the table's
error.
"""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm110_schedules"

# seed -> the fact its ptxas cubin needs (what the checker flagged before)
RULES = {
    "33000014": "IMMA.16832 is fixed-latency, its result read 19 after issue; an LDS's address "
                "overwritten 25 cycles after issue (mio late reads 19)",
    "33000018": "HMMA.1688 -> SHF/SGXT 19",
    "33000020": "UISETP's UP guards an LDCU 11 after",
    "33000031": "IMMA.16816 -> IADD3 19 (and a WAW 17 after it)",
    "33000033": "ULOP3 -> UIMAD 4",
    "33000044": "an STG source overwritten after a later LDS's wait (global+mio read order); "
                "an LDS address overwritten 27 cycles after issue",
    # branch leftovers24's held-out audit sample (seeds 34110000-34110039)
    "34110035": "HFMA2.SAT -> IMAD.IADD (FMA pipe) 5",
    # the lead's fuzz campaign 22 (seeds 33000060-, held out): sm_100's later pairs
    "33000081": "VOTEU's UP guards LDCU 5 and UMOV 6 after",
    "33000474": "F2IP.U8 -> LOP3 4",
    "33000609": "VOTEU's UP read by PLOP3 1 after, guarding ULOP3 5 after",
    "33000636": "CS2R.32 -> IMAD 5",
    "33000369": "HSET2 -> HSETP2 4",
    "33000687": "HFMA2 -> HADD2 4",
    "33001409": "VOTEU's UP read by USEL 1 after",
    "33000695": "IADD3 -> IMAD.HI's addend high half 3",
    # branch triage25: campaign 22's single-program distances
    "33004171": "LOP3 -> IMAD.HI's addend high half 3",
    "33003835": "USHF -> UIMAD.WIDE's addend 4",
    "33002760": "UBREV -> UIMAD 4",
    "33003144": "IMAD.HI's carry-out -> IADD3.X 7",
    "33002525": "PLOP3 -> R2UR.OR's predicate 2 (as sm_90)",
    "33000338": "a SYNCS.ARRIVE's result overwrites a register an earlier SYNCS.PHASECHK reads under a "
                "read scoreboard without waiting on it (SYNCS reads in order: store_queue SYNCS)",
    # fuzz campaign 31 (branch fuzz31; sm_100, seeds 42000000-, held out until seen), its program compiled for sm_110
    "42000107": "CS2R R, SRZ -> MUFU.RCP64H of the pair 4 (div.rn.f64 by zero)",
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm110_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx", "sm_110")
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"


def test_our_sm110_hfma2_to_fma_pipe_distance_is_ptxas_s():
    """Our scheduler's distance from `HFMA2.SAT R34, R29, R34, R29` to the IMAD.IADD reading
    R34 is ptxas's (5 in seed 34110035's sm_110 code; the table had 6), as on sm_100."""
    from ptx2sass.encoder.model import Imm, Instruction, Reg
    from ptx2sass.sched.control import Slot, assign_controls
    from ptx2sass.sched.latency import model_for
    hfma = Instruction("HFMA2", ("SAT",), (Reg("R", 34), Reg("R", 29), Reg("R", 34), Reg("R", 29)))
    imad = Instruction("IMAD", ("IADD",), (Reg("R", 14), Reg("R", 34), Imm(1), Reg("R", 29, neg=True)))
    for arch in ("sm_110", "sm_100"):
        slots = assign_controls([Slot(hfma, reads=[("R", 29), ("R", 34)], writes=[("R", 34)]),
                                 Slot(imad, reads=[("R", 34), ("R", 29)], writes=[("R", 14)])], model_for(arch))
        assert [s.ins.opcode for s in slots if s.ins.opcode != "NOP"] == ["HFMA2", "IMAD"]
        assert sum(s.stall for s in slots[:-1]) == 5, arch
