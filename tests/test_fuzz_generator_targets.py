"""The fuzz generator draws only what the program's target has (the PTX ISA inventory's
minimum targets): sm_80 programs wrote sm_86's min/max `.xorsign.abs` and sm_89's FP8
conversions and mma, and ptxas refused ~19% of them as a whole (seeds 39000000..199: 39).
Programs for sm_89 and newer (the generator's own `.target`) stay what they were.
sm_75 programs drew sm_80 features the inventory knew about from groups that did not ask it
(mbarrier, bf16, cache hints, createpolicy, redux, cp.async) and three the inventory had
wrong or lacked (min/max `.NaN`, `.L2::256B`, mma `.and.popc`, `.satfinite` f16x2): 55/200 of
seeds 39000000..199 refused; each statement's instructions are now checked (`Builder.build`)."""
from __future__ import annotations

import pytest

from ptx2sass import oracle
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.generator import generate, spelling_on_target, spellings
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


def test_sm89_programs_are_unchanged():
    """An sm_89 campaign's seeds give the programs they gave before (sm_90 and newer get
    their own `.target` and groups: tests/test_fuzz_newarch.py)."""
    for seed in range(39000000, 39000012):
        assert render(generate(seed, arch="sm_89")).text == render(generate(seed)).text


# seeds whose sm_75 program ptxas refused before, one or two per feature: mbarrier, createpolicy
# with `.L2::cache_hint`, redux, bf16, cvt.relu.f16x2.f32, `.satfinite` f16x2 and `.NaN`, min/max
# `.NaN`, mma `.and.popc`, `.L2::256B`, cp.async, createpolicy.range, cvt.bf16x2.f32
REFUSED_ON_SM75 = [39000008, 39000042, 39000054, 39000055, 39000087, 39000094, 39000017, 39000171,
                   39000179, 39000187, 39000188, 39000142]


@pytest.mark.parametrize("seed", REFUSED_ON_SM75)
def test_sm75_programs_are_valid_for_sm75(seed):
    r = _ptxas_verdict(seed, "sm_75")
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr


@pytest.mark.parametrize("spelling,first", [
    ("max.NaN.f32", 80), ("min.ftz.NaN.f32", 80), ("max.f32", 10), ("ld.global.L2::256B.b32", 80),
    ("ld.global.nc.L2::256B.u16", 80), ("ld.global.L2::128B.u32", 75), ("mbarrier.init.shared.b64", 80),
    ("createpolicy.fractional.L2::evict_last.b64", 80), ("redux.sync.add.u32", 80), ("fma.rn.bf16", 80),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc", 80),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 75),
    ("cvt.rn.satfinite.f16x2.f32", 80), ("cvt.pack.sat.u16.s32", 72)])
def test_first_target_of_drawn_spellings(spelling, first):
    """The manual's first target (ptxas 13.5's errors name the same) of spellings the generator
    writes, as the inventory (or `FIRST_TARGET` where it cannot tell) gives it."""
    assert [sm for sm in (70, 72, 75, 80, 86, 89) if spelling_on_target(spelling, sm)] == \
        [sm for sm in (70, 72, 75, 80, 86, 89) if sm >= first]


def test_statement_spellings():
    text = "@@ld.global.L2::cache_hint.b32 %r0, [%rd1], %rd2;\n@!%p1 cp.async.commit_group;\n$L1:\n{\nret;"
    assert spellings(text) == ["ld.global.L2::cache_hint.b32", "cp.async.commit_group", "ret"]


def test_sm75_programs_draw_no_sm80_spelling():
    """Over 30 seeds, no instruction of an sm_75 program is one the inventory puts on sm_80+."""
    for seed in range(39000000, 39000030):
        text = render(generate(seed, arch="sm_75")).text
        body = "\n".join(ln for ln in text.splitlines() if not ln.startswith((".", "//")))
        assert all(spelling_on_target(s, 75) for s in spellings(body)), seed
