"""The LLVM corpus end to end: for each kernel LLVM's NVPTX back end wrote through the pinned
Zig compiler (tools/harvest_llvm.py), ptxas's cubin and ours run in the emulator on the same
inputs; both must meet the reference of what the Zig kernel computes (tests/llvm_corpus.py),
and ours must equal ptxas's bit for bit with zero hazards."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import llvm_corpus as lc
from ptx2sass import codegen, oracle

KERNELS = lc.manifest()


def test_manifest_matches_files():
    files = sorted(p.name for p in lc.LLVM_DIR.glob("*.ptx"))
    assert files == sorted(k["file"] for k in KERNELS)
    for k in KERNELS:
        text = (lc.LLVM_DIR / k["file"]).read_bytes()
        assert hashlib.sha256(text).hexdigest() == k["sha256"], k["file"]


def test_every_kernel_has_a_reference():
    for k in lc.runnable():
        data = lc.inputs(k)
        outputs = {p["name"] for p in k["params"] if p.get("access") in ("out", "inout")}
        assert outputs and outputs <= set(lc.reference(k, data)), k["file"]


@pytest.mark.parametrize("entry", lc.runnable(), ids=lambda k: k["file"])
def test_ours_equals_ptxas_and_the_reference(entry):
    ptx = (lc.LLVM_DIR / entry["file"]).read_text()
    theirs_result, theirs = lc.launch(entry, oracle.ptxas(ptx).output)
    assert not theirs_result.hazards, [str(h) for h in theirs_result.hazards[:3]]
    assert lc.check_reference(entry, theirs) == []
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                       filename=entry["file"])
    ours_result, ours = lc.launch(entry, cubin)
    assert not ours_result.hazards, [str(h) for h in ours_result.hazards[:3]]
    for name, want in theirs.items():
        got = ours[name]
        bad = np.nonzero(got.view(np.uint8) != want.view(np.uint8))[0]
        assert not len(bad), f"{name}: {len(bad)} bytes differ from ptxas's, first at byte {bad[0]}"
    assert lc.check_reference(entry, ours) == []
