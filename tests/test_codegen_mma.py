"""mma.sync on the tensor cores (HMMA f16/bf16/tf32 shapes): the tinygrad corpus kernels that
use it, compiled by ptx2sass, give bit for bit the outputs of ptxas's cubin in the emulator,
with zero hazards."""
import math

import pytest

from ptx2sass import codegen
from ptx2sass.emu.testing import TINYGRAD_DIR, run_tinygrad, tinygrad_manifest

KERNELS = [k for k in (tinygrad_manifest() if (TINYGRAD_DIR / "manifest.json").is_file() else [])
           if "mma.sync" in (TINYGRAD_DIR / k["file"]).read_text()
           and math.prod(k["grid"]) * math.prod(k["block"]) <= 128]


def test_the_corpus_has_mma_kernels_of_each_accumulator():
    texts = [(TINYGRAD_DIR / k["file"]).read_text() for k in KERNELS]
    assert any(".f32.f16.f16.f32" in t for t in texts)
    assert any(".f16.f16.f16.f16" in t for t in texts)
    assert any(".tf32.tf32" in t for t in texts)


@pytest.mark.parametrize("entry", KERNELS, ids=lambda k: k["file"])
def test_mma_kernel_matches_ptxas(entry):
    ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    cubin, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                           filename=entry["file"])
    assert any(i.opcode == "HMMA" for c in codes for i in c.instructions)
    theirs = run_tinygrad(entry, hazard_check=False)
    ours = run_tinygrad(entry, cubin=cubin)
    assert ours.ok, ours.reason
    assert not ours.result.hazards
    for name, want in theirs.result.buffers.items():
        assert ours.result.buffers[name] == want, name
