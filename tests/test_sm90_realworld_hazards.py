"""The hazard checker accepts ptxas's own sm_90 (and Blackwell) code for the real-world corpus: ptxas 13.5's
cubins are right on silicon, so a finding on them is a latency rule that is too strict (and
our scheduler, which uses the same rules, gives away cycles). Five modules the GPU check's
real-world bundle flagged (FP64 results read by the conversion unit 6 cycles after DMUL/DFMA;
a uniform predicate guarding SYNCS 11 cycles after its VOTEU); the whole corpus:
`py -m tools.gpu_check prepare --arch sm_90 --corpus realworld ...` (the `emu.hazards` column)."""
from __future__ import annotations

import pytest

from ptx2sass import oracle
from tools import realworld as rw
from tools.realworld_hazards import findings

MODULES = ("math_f64", "complex_fft", "bulk_pipeline", "intrinsics_misc", "rounding_math")


def _kernels():
    for m in rw.manifest():
        if m["arch"] == "sm_90" and m["ptx"] and m["ptx"].split("/")[-1].split(".")[0] in MODULES:
            for k in m.get("kernels", []):
                if k.get("run") and "cluster" not in k["run"]:
                    yield pytest.param(m, k, id=f"{m['ptx'].split('/')[-1][:-4]}.{k['entry']}")


_CUBINS: dict[str, bytes] = {}


def hazards(cubin: bytes, kernel: dict) -> list[str]:
    return [str(h) for h in findings(cubin, kernel)][:3]


@pytest.mark.parametrize("module, kernel", list(_kernels()))
def test_ptxas_sm90_code_has_no_hazard_findings(module, kernel):
    if module["ptx"] not in _CUBINS:
        theirs = oracle.ptxas((rw.CORPUS / module["ptx"]).read_text(), "sm_90", name="m.ptx")
        assert theirs.ok, theirs.stderr
        _CUBINS[module["ptx"]] = theirs.output
    assert not hazards(_CUBINS[module["ptx"]], kernel)


@pytest.mark.parametrize("arch", ["sm_100", "sm_110", "sm_120"])
def test_ptxas_blackwell_sync_guard_distance_is_accepted(arch):
    """The same SYNCS guard 11 cycles after its VOTEU in ptxas's Blackwell code (the sm_89
    module retargeted, as tools/realworld.retargeted does)."""
    module = next(m for m in rw.retargeted(arch) if "bulk_pipeline" in (m["ptx"] or ""))
    theirs = oracle.ptxas(module["ptx_text"], arch, name="m.ptx")
    assert theirs.ok, theirs.stderr
    kernel = next(k for k in module["kernels"] if k["entry"] == "split_arrive_wait")
    assert not hazards(theirs.output, kernel)


def test_ptxas_sm110_constant_move_into_a_wide_addend_is_accepted():
    """sm_110: ptxas feeds an HFMA2 constant move to IMAD.WIDE's addend high half 3 cycles
    after it (crypto_rounds mul_acc_256 retargeted), as on sm_100/sm_120."""
    module = next(m for m in rw.retargeted("sm_110") if "crypto_rounds" in (m["ptx"] or ""))
    theirs = oracle.ptxas(module["ptx_text"], "sm_110", name="m.ptx")
    assert theirs.ok, theirs.stderr
    kernel = next(k for k in module["kernels"] if k["entry"] == "mul_acc_256")
    assert not hazards(theirs.output, kernel)
