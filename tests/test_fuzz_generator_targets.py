"""The fuzz generator draws only what the program's target has (the PTX ISA inventory's
minimum targets): sm_80 programs wrote sm_86's min/max `.xorsign.abs` and sm_89's FP8
conversions and mma, and ptxas refused ~19% of them as a whole (seeds 39000000..199: 39).
Programs for sm_89 and newer (the generator's own `.target`) stay what they were."""
from __future__ import annotations

import pytest

from ptx2sass import oracle
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.program import render
from ptx2sass.fuzz.runner import ptx_for

# seeds whose sm_80 program ptxas refused before (`.abs`, FP8 cvt, FP8 mma), and two more
REFUSED_ON_SM80 = [39000017, 39000018, 39000041, 39000062, 39000067, 39000094, 39000105, 39000125,
                   39000153, 39000175]


def _ptxas_verdict(seed: int, arch: str):
    case = case_from_program(make_program(seed, Options(arch=arch)))
    case.arch = arch
    return oracle.ptxas(ptx_for(case), arch, () if case.fmad else ("--fmad=false",), name="fuzz.ptx")


@pytest.mark.parametrize("seed", REFUSED_ON_SM80)
def test_sm80_programs_are_valid_for_sm80(seed):
    r = _ptxas_verdict(seed, "sm_80")
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr


@pytest.mark.parametrize("seed", [39000070, 39000095])
def test_sm86_programs_keep_sm86_features(seed):
    """sm_86 has min/max `.xorsign.abs` (not FP8): still drawn there, and valid."""
    text = render(generate(seed, arch="sm_86")).text
    r = _ptxas_verdict(seed, "sm_86")
    assert r.ok, r.stderr
    assert ".e4m3" not in text and ".e5m2" not in text


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_programs_from_sm89_on_are_unchanged(arch):
    """A campaign's seeds give the programs they gave before on these archs."""
    for seed in range(39000000, 39000012):
        assert render(generate(seed, arch=arch)).text == render(generate(seed)).text
