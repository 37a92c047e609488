"""The hazard checker stays silent on ptxas's own cubins of fuzz programs that exposed an
over-strict timing rule (ptxas's code runs right on hardware, so each flag was a checker bug).

Each case is a generated program (`ptx2sass-fuzz show SEED`) compiled by the pinned ptxas for
the arch and run in the emulator with the hazard checker; before the rule named beside it was
corrected, the checker flagged the cubin (the message in the comment).
"""
import dataclasses

import pytest

from ptx2sass.fuzz import runner
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.inputs import case_from_program

CASES = [
    # "overwrites R# while the instruction at 0x# may still read it (SBn not waited)": a later
    # LDS/ATOMS result over the data of an earlier STG/STL/RED (source_read_order global+mio)
    (841045, "sm_89"), (844039, "sm_89"), (840323, "sm_89"),
    # ... and the writer's guard is the reader's, negated (@P1 STG R33 / @!P1 PRMT R33 ...)
    (842562, "sm_89"), (840576, "sm_89"),
    # "reads R# 4 cycles after F2IP at 0x# issued; LOP3 needs 8" (fixed F2IP.U8)
    (840955, "sm_89"),
    # "reads P# written by ATOM ... without waiting on scoreboard SB5" (predicate_with_reads)
    (9400004, "sm_90"), (9400028, "sm_90"),
    # "reads R# 6 cycles after DMUL at 0x# issued; MUFU needs 10" (reader_pair_fixed)
    (9400061, "sm_90"),
    # "reads R# 3 cycles after IADD3 at 0x# issued; IMAD needs 5" (addend_fixed IADD3)
    (9400008, "sm_90"),
    # "overwrites R# 22 cycles after the load at 0x# issued ... (no read scoreboard)": a wait on
    # a later @P0 LDG's read scoreboard, whatever P0 holds
    (9400069, "sm_90"),
    # "reads R# 23 cycles after HMMA at 0x# issued; MOVM needs 24" (mma_to_memory_readers)
    (9400161, "sm_90"),
]


@pytest.mark.parametrize("seed,arch", CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_no_hazard_in_ptxas_cubin(seed, arch):
    case = dataclasses.replace(case_from_program(make_program(seed, Options())), arch=arch)
    cubin, err = runner.compile_ptxas(case)
    assert cubin is not None, err
    result = runner.execute(runner.load(cubin, case.kernel), case)
    assert result.hazards == [], [str(h) for h in result.hazards[:3]]
