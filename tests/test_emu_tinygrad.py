"""ptxas's cubins (sm_89, and sm_90 on every other kernel of the sample: all of them with
PTX2SASS_SAMPLE=all) of the tinygrad corpus run in the emulator: no fault, zero hazards, and the
outputs agree with tinygrad itself running the same kernel on its PYTHON device (a UOp
interpreter, independent of PTX and of this emulator) on the same deterministic inputs.
Launches run with explicit reconvergence and must show zero convergence hazards.

The default run takes a deterministic sample (PTX2SASS_SAMPLE kernels, default 40, chosen by
the sha256 of their PTX among the cheaper launches); PTX2SASS_SAMPLE=all runs every kernel
that the pinned ptxas accepts."""
import importlib.util
import math
import os
import tempfile
from pathlib import Path

import pytest

from tools.emu_testing import (TINYGRAD_DIR, compare_tinygrad, run_tinygrad, tinygrad_manifest,
                                  tinygrad_references)

KERNELS = tinygrad_manifest() if (TINYGRAD_DIR / "manifest.json").is_file() else []
# Launches with more threads than this cost seconds each in the emulator (and much more in
# tinygrad's PYTHON interpreter): the default sample leaves them to PTX2SASS_SAMPLE=all.
CHEAP_THREADS = 4096


def _sample() -> list[dict]:
    wanted = os.environ.get("PTX2SASS_SAMPLE", "40")
    if wanted == "all":
        return KERNELS
    cheap = [k for k in KERNELS if math.prod(k["grid"]) * math.prod(k["block"]) <= CHEAP_THREADS]
    return sorted(cheap, key=lambda k: k["sha256"])[:int(wanted)]


SAMPLE = _sample()


class _References:
    """tinygrad's outputs, computed chunk by chunk (one subprocess per CHUNK kernels of the
    sample) as the tests ask for them."""
    CHUNK = 40

    def __init__(self, root: Path):
        self.root = root
        self.files = [k["file"] for k in SAMPLE]
        self.done: dict[str, dict] = {}

    def __getitem__(self, file: str) -> dict:
        if importlib.util.find_spec("tinygrad") is None:
            return {"missing": "tinygrad is not installed"}
        if file not in self.done:
            start = self.files.index(file) // self.CHUNK * self.CHUNK
            chunk = self.files[start:start + self.CHUNK]
            out = self.root / f"chunk{start}"
            out.mkdir()
            self.done.update(tinygrad_references(chunk, out))
        return self.done[file]


@pytest.fixture(scope="module")
def references():
    with tempfile.TemporaryDirectory() as d:
        yield _References(Path(d))


HOPPER = SAMPLE if os.environ.get("PTX2SASS_SAMPLE") == "all" else SAMPLE[::2]


@pytest.mark.parametrize("entry, arch", [pytest.param(k, a, id=f"{k['file']}-{a}")
                                         for a, ks in (("sm_89", SAMPLE), ("sm_90", HOPPER)) for k in ks])
def test_tinygrad_kernel(entry, arch, references):
    outcome = run_tinygrad(entry, reconverge="explicit", arch=arch)
    assert outcome.ok, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards[:5]]
    assert not outcome.result.convergence_hazards, [str(h) for h in outcome.result.convergence_hazards]
    ref = references[entry["file"]]
    if "missing" in ref:
        pytest.skip(f"no tinygrad reference ({ref['missing']}); ran without fault or hazard")
    why = compare_tinygrad(entry, outcome.result.buffers, ref["buffers"])
    assert not why, why


def test_sample_is_deterministic_and_spread():
    """The default sample covers several kinds of kernel, not one family."""
    if os.environ.get("PTX2SASS_SAMPLE", "40") == "all" or not KERNELS:
        pytest.skip("full run")
    programs = {k["program"].split("_")[0] for k in SAMPLE}
    assert len(programs) >= 10, programs
    assert SAMPLE == _sample()
