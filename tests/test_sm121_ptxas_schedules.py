"""ptxas's sm_121 schedules that the hazard checker flagged before blackwell.json (sm_120's
and sm_121's latency table) learnt the fact each one shows: programs of the lead's fuzz
campaign 24 (seeds 35000000-, held out until seen) and branch fuzz36's held-out sm_121a run
(seeds 48300000-399), peeled as a campaign does. ptxas's code is
taken as hazard-free, so a hazard the checker finds in it is the table's error.
"""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm121_schedules"

# seed -> the fact its ptxas cubin needs (what the checker flagged before)
RULES = {
    "35000246": "VOTEU's UP read by UPLOP3 1 after",
    "35000290": "IADD -> IMAD.WIDE's addend high half 3",
    "35000337": "HSET2 -> HSETP2 4",
    "35000994": "IDP -> IMAD.HI's addend high half 2",
    "35001454": "UF2I -> UIMAD 4",
    "35001803": "UIMNMX -> UIMAD.WIDE 5",
    "35002426": "LOP3 -> IMAD.HI's addend high half 4",
    "35003176": "CS2R -> STG 5",
    "35003277": "VOTEU's UP read by UISETP 1 after",
    "35003490": "PLOP3 -> R2UR's predicate 2",
    "35003579": "UFADD -> UIMAD 4",
    "35003608": "UI2F -> UIMAD 5",
    "48300039": "a UISETP predicate guarding S2UR 11 after (branch fuzz36's held-out sm_121a run)",
}

# programs written for the arch-specific target (their header's arch)
ARCH = {"48300039": "sm_121a"}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm121_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx", ARCH.get(seed, "sm_121"))
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"
