"""The Triton corpus end to end: for each kernel Triton 3.9 wrote (tools/harvest_triton.py),
ptxas's cubin and ours run in the emulator on the same inputs; both must meet the NumPy
reference of what the Triton kernel computes, and ours must equal ptxas's bit for bit with
zero hazards."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import triton_corpus as tc
from ptx2sass import codegen, oracle

KERNELS = tc.manifest()


def test_manifest_matches_files():
    files = sorted(p.name for p in tc.TRITON_DIR.glob("*.ptx"))
    assert files == sorted(k["file"] for k in KERNELS)
    for k in KERNELS:
        text = (tc.TRITON_DIR / k["file"]).read_bytes()
        assert hashlib.sha256(text).hexdigest() == k["sha256"], k["file"]


def test_every_kernel_has_a_reference():
    for k in KERNELS:
        data = tc.inputs(k)
        outputs = {p["name"] for p in k["params"] if p.get("access") in ("out", "inout")}
        checked = set(tc.reference(k, data)) | ({"out"} if k["file"] == "dropout.ptx" else set())
        assert outputs <= checked, k["file"]


# Known gaps (kernel file -> reason), run as strict xfails; none at present.
GAPS: dict[str, str] = {}


@pytest.mark.parametrize("entry", [pytest.param(k, marks=pytest.mark.xfail(
    reason=GAPS[k["file"]], strict=True)) if k["file"] in GAPS else k for k in KERNELS],
    ids=lambda k: k["file"])
def test_ours_equals_ptxas_and_the_reference(entry):
    ptx = (tc.TRITON_DIR / entry["file"]).read_text()
    theirs_result, theirs = tc.launch(entry, oracle.ptxas(ptx).output)
    assert not theirs_result.hazards, [str(h) for h in theirs_result.hazards[:3]]
    assert tc.check_reference(entry, theirs) == []
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                       filename=entry["file"])
    ours_result, ours = tc.launch(entry, cubin)
    assert not ours_result.hazards, [str(h) for h in ours_result.hazards[:3]]
    for name, want in theirs.items():
        got = ours[name]
        bad = np.nonzero(got.view(np.uint8) != want.view(np.uint8))[0]
        assert not len(bad), f"{name}: {len(bad)} bytes differ from ptxas's, first at byte {bad[0]}"
    assert tc.check_reference(entry, ours) == []
