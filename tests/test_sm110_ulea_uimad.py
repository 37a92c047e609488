"""sm_110: ptxas 13.5 reads an ULEA's uniform result in UIMAD 4 cycles after it
(blackwell_sm110.json `uniform_pair_fixed` ULEA -> UIMAD 4, as sm_90's and sm_100's tables).
The held-out sm_110a fuzz seeds 45400035, 45400072, 45400078, 45400094 hold it in the
cluster prelude's `rem.u32 %g_cnx, %cluster_ctarank + 1, 2`, which ptxas divides in uniform
registers (`ULEA UR6, -UR5, URZ, 0x1` then `UIMAD.WIDE.U32 UR4, UR5, UR6, UR4`); the checker
wanted 6 and flagged ptxas's own cubin. A hand kernel with the same `rem` keeps it in vector
registers, and the reducer left 413 of 463 lines, so the seed's own program is the test (its
listing is checked to still hold the pair)."""
import re

from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.runner import compile_ptxas, execute, load, run_case
from ptx2sass.oracle import nvdisasm


def test_ulea_result_read_by_uimad_at_ptxas_distance_s45400035():
    # the program as generated before the sm_90+ groups async/maxnreg/sparse (fuzz34) existed
    case = case_from_program(make_program(45400035, Options(arch="sm_110a", exclude=["async", "maxnreg", "sparse", "corner"])))
    case.arch = "sm_110a"
    cubin, _ = compile_ptxas(case)
    listing = nvdisasm(cubin)
    ulea = re.search(r"ULEA (UR\d+), -UR\d+, URZ, 0x1 ;", listing)
    assert ulea and re.search(rf"UIMAD\.WIDE\.U32 UR\d+, UR\d+, {ulea.group(1)}, ", listing)
    res = execute(load(cubin, case.kernel), case)
    assert not res.hazards, [str(h) for h in res.hazards]
    out = run_case(case)
    assert out.cls == "pass" and not out.findings, (out.sig, out.detail)
