"""ptxas's sm_89 (and sm_80) schedules that the hazard checker flagged before it learnt the fact
each one shows: programs of the lead's fuzz campaigns 23 (sm_89, seeds 34000000-, held out) and
26 (sm_80, seeds 37000000-, held out) and branch fuzz31's sm_89 run (seeds 42100000-, held out), peeled as a campaign does. ptxas's code is taken as hazard-free, so a hazard the checker finds in it is the
checker's (or the latency table's) error.
"""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm89_schedules"

# seed -> the fact its ptxas cubin needs (what the checker flagged before)
RULES = {
    "34000492": "`DEPBAR.LE SB0, 0x0, {1}` also waits for SB1 (an R2UR's result read after it)",
    "34004672": "HSET2 -> SUST's data 4",
    "34005581": "CS2R -> I2F.U64 5",
    "37000480": "CS2R -> STL.128's data 5 (sm_80)",
    "37003564": "CS2R -> SUST.64's data 4 (sm_80)",
    "38003358": "HSET2 -> SURED's data 4 (sm_86)",
    "38003908": "ERRBAR holds issue until an IMMA issued just before it has landed (sm_86; drains_fixed_results)",
    "42100832": "CS2R -> F2F.F32.F64 4 (branch fuzz31's held-out sm_89 run, left open there)",
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm89_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx")   # sm_89, or sm_80 (its header says)
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"
