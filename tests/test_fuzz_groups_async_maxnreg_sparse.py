"""The sm_90+ fuzz groups of st.async / red.async, setmaxnreg and the mma.sp forms after the
inventory draw's marker (ptx2sass/fuzz/newarch.py, newarch_ops.py, forms.op_sparse): ptxas
takes their programs, both compilers agree on them, and sparse metadata follows the manual
(.tf32 is 1:2 sparse: only the nibbles 0b0100 and 0b1110 mean anything)."""
from __future__ import annotations

import re

import pytest

from ptx2sass import oracle
from ptx2sass.fuzz import newarch
from ptx2sass.fuzz.generator import Ctx, Generator, generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.runner import ptx_for, run_case


def _case(seed, group, arch):
    prog = generate(seed, features={"int32", "f32", "branch", group}, arch=arch)
    case = case_from_program(prog)
    case.arch = arch
    return prog, case


@pytest.mark.parametrize("arch,group", [("sm_90a", g) for g in ("async", "maxnreg", "sparse")]
                         + [("sm_100a", g) for g in ("async", "maxnreg", "sparse")] + [("sm_120a", "maxnreg")])
def test_group_programs_are_valid(arch, group):
    for seed in (7, 8, 9):
        prog, case = _case(seed, group, arch)
        r = oracle.ptxas(ptx_for(case), arch, name="fuzz.ptx")
        if r.returncode != 0 and "not found" in r.stderr:
            pytest.skip("ptxas not installed")
        assert r.ok, r.stderr
        assert group in prog.features


def test_async_program_runs_in_clusters_and_agrees():
    prog, case = _case(5, "async", "sm_90a")
    assert prog.cluster and ".reqnctapercluster" in case.text
    assert "st.async" in case.text or "red.async" in case.text
    out = run_case(case)
    assert out.cls == "pass", f"{out.sig}: {out.detail}"


def test_maxnreg_program_has_the_directive_and_agrees():
    prog, case = _case(5, "maxnreg", "sm_90a")
    assert f".maxnreg {prog.maxnreg}" in case.text and prog.maxnreg in newarch.MAXNREG_CHOICES
    counts = [int(n) for n in re.findall(r"setmaxnreg\.dec\.sync\.aligned\.u32 (\d+)", case.text)]
    assert counts and all(24 <= n < prog.maxnreg and n % 8 == 0 for n in counts)
    assert case.text.count("setmaxnreg.inc") == len(counts)
    out = run_case(case)
    assert out.cls == "pass", f"{out.sig}: {out.detail}"


def test_sparse_group_draws_the_late_forms_only_for_its_programs():
    from ptx2sass.fuzz.forms import drawable, late_sparse_forms
    forms = late_sparse_forms()
    assert any(".tf32" in f.spelling for f in forms) and not any(drawable(f) for f in forms)
    assert "sparse" not in generate(1, arch="sm_89").features


@pytest.mark.parametrize("shape", ["m16n8k8", "m16n8k16"])
def test_tf32_metadata_nibbles_are_the_meaningful_ones(shape):
    """Every nibble of a .tf32 mma.sp's metadata word is 0x4 or 0xE (the others are
    undefined for tf32); the 2:4 types keep their six."""
    from ptx2sass.fuzz.forms import _isa_mma, late_sparse_forms
    from ptx2sass.fuzz.generator import Builder
    form = next(f for f in late_sparse_forms() if f.spelling == f"mma.sp.sync.aligned.{shape}.row.col.f32.tf32.tf32.f32")
    seen = set()
    for seed in range(40):
        g = Generator(seed, {"int32", "mma"}, arch="sm_90a")
        g.program()
        f, (ops, pre) = _isa_mma(g, Ctx(), Builder(g, Ctx()), form)
        word = int(re.search(r"mov\.b32 \S+, (0x[0-9a-f]+);", pre[0]).group(1), 16)
        seen |= {(word >> (4 * i)) & 0xF for i in range(8)}
    assert seen == {0x4, 0xE}
