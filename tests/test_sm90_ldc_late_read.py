"""sm_90 LDC with a register index reads its index after issue, and a later LDC does not show
that it has (hopper.json `late_source_reads` + `unordered_late_reads`): the H200
(docs/gpu/2026-11-26-h200-sm90-run2.md) got 30 lanes of cuda/constant_mem wrong where our
cubin overwrote an indexed LDC's address with the next LDC. The emulator's hazard check must
flag that cubin, ptxas's must stay clean, and ours must wait on the LDC's read scoreboard."""
import copy
import json

import pytest

from ptx2sass import codegen
from ptx2sass.sched.latency import model_for
from tools.emu_testing import CUDA_DIR, cuda_reference_module, run_cuda_launch


def _entry():
    manifest = json.loads((CUDA_DIR / "manifest.json").read_text())
    entries = manifest if isinstance(manifest, list) else manifest.get("launches", manifest.get("entries"))
    return next(e for e in entries if e["name"] == "constant_mem")


def _compile(ldc_late: bool):
    """Our sm_90 compiler; `ldc_late=False`: control codes from a model that believes LDC
    reads its index at issue (what main emitted before the fix)."""
    import ptx2sass

    def compile_(ptx, name):
        if ldc_late:
            return ptx2sass.compile(ptx, "sm_90", name)
        real = codegen.assign_controls

        def early(slots, lat=None):
            lat = copy.copy(lat or model_for("sm_90"))
            lat.LATE_SOURCE_READS = lat.LATE_SOURCE_READS - {"LDC"}
            return real(slots, lat)
        codegen.assign_controls = early
        try:
            return ptx2sass.compile(ptx, "sm_90", name)
        finally:
            codegen.assign_controls = real
    return compile_



def test_hopper_table_lists_ldc():
    lat = model_for("sm_90")
    assert "LDC" in lat.LATE_SOURCE_READS and "LDC" in lat.UNORDERED_LATE_READS
    assert not model_for("sm_89").UNORDERED_LATE_READS


def test_ptxas_cubin_is_clean():
    res = run_cuda_launch(_entry(), cuda_reference_module(), arch="sm_90")
    assert res.passed, res.reason
    assert not res.result.hazards, [str(h) for h in res.result.hazards[:3]]


def test_emulator_flags_index_overwritten_by_a_later_ldc():
    res = run_cuda_launch(_entry(), cuda_reference_module(), compiler=_compile(False), arch="sm_90")
    assert res.result is not None
    flagged = [str(h) for h in res.result.hazards if "may still read" in str(h) or "no read scoreboard" in str(h)]
    assert flagged, [str(h) for h in res.result.hazards[:3]]


def test_our_cubin_waits_for_the_ldc_read():
    res = run_cuda_launch(_entry(), cuda_reference_module(), compiler=_compile(True), arch="sm_90")
    assert res.passed, res.reason
    assert not res.result.hazards, [str(h) for h in res.result.hazards[:3]]
