"""tools/mma_read_sites.py measures ptxas's cubins for the arch it is asked about: its fuzz
programs are drawn as a campaign for that arch draws them (`Options(arch=...)`, as
tools/latency_audit.py's) and compiled for it (fuzz.campaign.peel sets the case's arch)."""
from ptx2sass.fuzz import runner
from tools import mma_read_sites


def test_programs_are_built_for_the_arch(monkeypatch):
    archs = []

    def compile_ptxas(case):
        archs.append(case.arch)
        return None, "not compiled"
    monkeypatch.setattr(runner, "compile_ptxas", compile_ptxas)
    mma_read_sites.measure(range(900000, 900002), "sm_90")
    assert archs and set(archs) == {"sm_90"}
