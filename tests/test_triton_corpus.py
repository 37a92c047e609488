"""The Triton corpus end to end: for each kernel Triton 3.9 wrote (tools/harvest_triton.py),
ptxas's cubin and ours run in the emulator on the same inputs; both must meet the NumPy
reference of what the Triton kernel computes, and ours must equal ptxas's bit for bit with
zero hazards."""
from __future__ import annotations

import hashlib

import pytest

from codegen_harness import assert_corpus_kernel_matches, with_hopper
import triton_corpus as tc

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


@pytest.mark.parametrize("entry, arch", [pytest.param(k, arch, id=f"{k['file']}-{arch}")
                                         for k, arch in with_hopper(KERNELS)])
def test_ours_equals_ptxas_and_the_reference(entry, arch):
    assert_corpus_kernel_matches(tc, tc.TRITON_DIR, entry, arch)
