"""The LLVM corpus end to end: for each kernel LLVM's NVPTX back end wrote through the pinned
Zig compiler (tools/harvest_llvm.py), ptxas's cubin and ours run in the emulator on the same
inputs; both must meet the reference of what the Zig kernel computes (tests/llvm_corpus.py),
and ours must equal ptxas's bit for bit with zero hazards."""
from __future__ import annotations

import hashlib

import pytest

from codegen_harness import assert_corpus_kernel_matches, with_hopper
import llvm_corpus as lc

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


# Known gaps ((kernel file, arch) -> reason), run as strict xfails.
GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("entry, arch", [pytest.param(
    k, arch, id=f"{k['file']}-{arch}",
    marks=[pytest.mark.xfail(strict=True, reason=GAPS[k["file"], arch])] if (k["file"], arch) in GAPS else [])
    for k, arch in with_hopper(lc.runnable())])
def test_ours_equals_ptxas_and_the_reference(entry, arch):
    assert_corpus_kernel_matches(lc, lc.LLVM_DIR, entry, arch)
