"""ptxas 13.5.37's sm_100 (and sm_103) schedules that the hazard checker flagged before the sm_100 latency
table learnt the rule each one shows (sched/latency/blackwell_sm100.json, `evidence`:
`campaign16_fuzz`, `qspc`, `arch15`): programs of the lead's fuzz campaign 16 (sm_100, tuning seeds
28,000,000-28,000,999; held out: 28,001,000-28,001,399, which branch arch15
took as tuning (its held-out range: 28,002,400-28,002,799)). ptxas's cubin of each must run with zero hazards."""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm100_schedules"

# seed -> the rule its ptxas cubin needs (what the checker flagged before)
RULES = {
    "28000010": "a global-queue REDG reads its address before a later LDS.64 overwrites it (source_read_order)",
    "28000151": "ST.E reads its address before a later LDSM overwrites it (source_read_order)",
    "28000201": "REDG reads its address before a later ATOMS overwrites it (source_read_order)",
    "28000169": "an LDS with no read scoreboard has read its address 19 cycles after issue",
    "28000078": "VOTEU's UP guards LDCU 5 and UMOV 8 after; an LDS has read its address 33 after issue",
    "28000065": "VOTEU's UP guards LDCU 8 after",
    "28000090": "VOTEU's UP -> PLOP3 1",
    "28000079": "HSET2 -> HSETP2 4",
    "28000203": "ULOP3 -> UIMAD 4",
    "28000084": "QSPC is in the shared-memory unit's in-order queue: waiting on its scoreboard covers "
                "an earlier LDS.64 issued with none",
    "28000261": "VOTEU's UP -> UISETP 1",
    "28000433": "UPOPC -> UIMAD 4",
    "28000476": "F2IP.U8 -> LOP3 4",
    "28000484": "F2IP.U8 -> LOP3 4 (F2IP.U8.F32.TRUNC.NTZ)",
    "28000715": "HMMA.1684.F32.TF32 -> HMMA (its accumulator) 20",
    "28000819": "HMMA.SP.16832.F32 -> PRMT 19",
    "28000836": "HMMA.SP.16832.F32.BF16 -> FMNMX 19, IMAD 20",
    "28000589": "UISETP's UP guards S2UR 11 after (as a uniform instruction)",
    "28001425": "CS2R.32 R, SR_CgaSize -> IMAD 5 (campaign 17, held-out range, seen after its figures)",
    "28001923": "VIMNMX -> IMAD.HI reading it as its addend's high half 3 (campaign 17, as above)",
    "28000972": "CS2R.32 R, SR_CgaSize -> IMAD 5",
    "28001138": "HMNMX2 -> HSETP2 4",
    "28001139": "FMUL -> HMMA 8 (an HMMA reads an FMUL result 7 after, as any other)",
    "28001193": "HMMA.1684.F32.TF32 -> IDP.2A 19 (HMMA -> HMMA 20)",
    "28002530": "VOTEU's UP -> USEL 1 (arch15's held-out range, seen after its figures)",
    "28002796": "CS2R R, SRZ -> STS of the pair 5 (as above)",
    "28002835": "USHF -> UIMAD.WIDE's addend high half 5 (campaign 17, held-out range, seen after its figures)",
    "36000040": "HFMA2 -> IMAD.WIDE's addend high half 3 (campaign 25, sm_103, held out until seen; sm_100 alike)",
    "36000620": "IMAD.HI's carry-out -> IADD3.X 7 (campaign 25, as above)",
    "36000487": "VOTEU's UP -> UPLOP3 1 (campaign 25, as above)",
    "36000374": "HSETP2's P -> PLOP3 4 (campaign 25: sm_103's code)",
    "36001496": "USHF -> UIMAD.WIDE's factors 4 (campaign 25: sm_103's code)",
    "36001788": "PRMT -> IMAD.HI's addend high half 3 (campaign 25: sm_103's code)",
    "36002489": "PLOP3 -> R2UR's predicate 2 (campaign 25: sm_103's code)",
    "36003320": "HSETP2's P -> LOP3 4 (campaign 25: sm_103's code)",
    "36003642": "LOP3 -> IMAD.HI's addend high half 3 (campaign 25: sm_103's code)",
    "36004760": "CS2R -> SUST of the pair 4 (campaign 25: sm_103's code)",
    "36004680": "HMUL2 -> HADD2 4 (campaign 25: sm_103's code)",
    "36004211": "UBMSK -> UIMAD 4 (campaign 25: sm_103's code)",
    "36005577": "ULEA -> UIMAD 4 (campaign 25: sm_103's code)",
    "36005376": "CS2R -> ATOMS of the pair 5 (campaign 25: sm_103's code)",
    "42000107": "CS2R R, SRZ -> MUFU.RCP64H of the pair 4 (campaign 31, held out until seen; "
                "div.rn.f64 by zero; sm_103 5)",
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm100_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx")   # sm_100, or sm_103 (its header says)
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"
