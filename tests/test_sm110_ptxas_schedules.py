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
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm110_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx", "sm_110")
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"
