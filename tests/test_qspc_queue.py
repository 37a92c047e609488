"""QSPC (the address-space test of generic atomics) is a shared-memory-unit (mio) instruction
on sm_100 and sm_120 as on sm_90: ptxas 13.5 gives an earlier LDS/ATOMS no write scoreboard
and reads its result after waiting only on a later QSPC's (sched/latency/blackwell*.json,
`queue`). ptxas's code is taken as hazard-free, so a hazard the checker finds in it is the
table's error. Programs: fuzz seeds 30000750 (campaign 19) and 28000084 (campaign 16), stored
with the arch in their header (`ptx2sass-fuzz show SEED`, peeled as the campaign does).
"""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_qspc_queue"

# (file, arch) -> what ptxas's cubin shows
CASES = {
    ("s30000750_sm100", "sm_100"): "ATOMS.EXCH R29 with no write scoreboard; PLOP3 waits on the later "
                                   "QSPC.E.G's SB1, then VABSDIFF reads R29 with no other wait",
    ("s28000084_sm120", "sm_120"): "LDS.64 R18 with no write scoreboard; ISETP waits on the later "
                                   "QSPC.E.S's SB1, then DMMA reads R18 with no mio wait",
    ("s30000750_sm120", "sm_120"): "QSPC.E.G before ATOMS.EXCH, each with its own scoreboard",
}


@pytest.mark.parametrize("name,arch", sorted(CASES))
def test_ptxas_qspc_queue_has_no_hazard(name, arch):
    hazards = hazards_in_ptxas_cubin(HERE / f"{name}.ptx", arch)
    assert not hazards, f"{CASES[name, arch]}: {hazards[0].message}"


# hand-written probes (`.target` rewritten per arch): isspacep on a pointer parameter next to
# two LDS whose results are read with it (branch open16, ptxas 13.5.37)
PROBES = {
    "isspacep_shared_lds": "sm_75: `QSPC.E.S P1, RZ, [UR4]` with no scoreboard, then `LDS.U R2` with SB0; "
                           "@!P1 is read after the wait on SB0 only. sm_110: `LDS R4` with no scoreboard, "
                           "read after the wait on the later `QSPC.E.S`'s SB0 only",
    "isspacep_shared_local_lds": "sm_75: QSPC.E.L and QSPC.E.S with no scoreboard, their predicates read "
                                 "after the wait on a later LDS's SB only; sm_110 as above",
}


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90", "sm_100", "sm_110", "sm_120"])
@pytest.mark.parametrize("probe", sorted(PROBES))
def test_ptxas_qspc_probe_has_no_hazard(probe, arch):
    """QSPC is in the mio queue on every arch; on sm_110 it is variable-latency as on sm_100."""
    import numpy as np
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    text = (HERE / f"{probe}.ptx").read_text().replace(".target sm_75", f".target {arch}")
    run_ = oracle.ptxas(text, arch=arch)
    assert run_.output is not None, run_.stderr
    out, g, h = (np.zeros(64, dtype=np.uint32) for _ in range(3))
    res = run(run_.output, "k", (1, 1, 1), (32, 1, 1), [out, g, h])
    assert not res.hazards, f"{PROBES[probe]}: {res.hazards[0]}"
