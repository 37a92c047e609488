"""Fuzz programs for sm_90 and newer (ptx2sass/fuzz/newarch.py): the campaign arch's own
`.target`, groups gated by what the manual says each target has, and programs for sm_89 and
older unchanged byte for byte."""
from __future__ import annotations

import hashlib

import pytest

from ptx2sass import oracle
from ptx2sass.fuzz import newarch
from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.program import render
from ptx2sass.fuzz.runner import ptx_for, run_case

# sha256 of the PTX the generator wrote for these (arch, seed) before the sm_90+ groups came
# (main at b0fe873c): they must stay as they were. Three changed since on purpose: branch
# inv32's audit corrected the `cvt.pack.sat.{s16,u16}.s32` spec lines, which made two more
# forms valid on sm_89 at PTX 8.5 and so drawable (the draw is otherwise frozen at the spec
# before that branch's section, `ptx2sass.fuzz.forms.DRAW_UNTIL`)
BEFORE = {
    ("sm_89", 1): "83ac8d4bee841ede7f8f080d34b9f5f476698847ef7a7706ecbf544b647e6d43",
    ("sm_89", 26000131): "ccebfee2a857284c23545ff7fa3c3b5d68c7fd6f187bc0571bd3ff363e969364",
    ("sm_89", 36002701): "3e7d7f291c5365e803a77bc22abc40378b61a1d1034db5422ec29d0a3339a710",
    ("sm_89", 43500000): "8c7de55bb19579920f5a4fbf7dc1a4b76443b5aeef6671767f8b5ce8e014cfd0",
    ("sm_89", 43600000): "2a9989794d8a9b6ad5aff358ebe59556cc951cf01f2048546fa8b8c367add2f5",
    ("sm_75", 1): "41c115731c080ef832c53e0bbd4a845584ebd24ddc7e55def59d7f552f7908b3",
    ("sm_75", 36002701): "e5b5085dbc2666e9e6526b001df2b343ace3232ed3b4db596372369a0d3f33ef",
    ("sm_75", 43600000): "f1402b8740c65eb58fa3585ecdb040ba5338b609af3501052ee8d6bbabc2799d",
    ("sm_86", 36002701): "fff5847c182ddbe4f359fec23b17a5538954ecc7a051ba0aeaaa2e483ebc8d3c",
    ("sm_86", 43600000): "2a9989794d8a9b6ad5aff358ebe59556cc951cf01f2048546fa8b8c367add2f5",
}


@pytest.mark.parametrize("arch,seed", sorted(BEFORE))
def test_older_archs_programs_are_byte_identical(arch, seed):
    text = render(generate(seed, arch=arch)).text
    assert hashlib.sha256(text.encode()).hexdigest() == BEFORE[arch, seed]


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a", "sm_100a", "sm_120a"])
def test_own_target_and_version(arch):
    text = render(generate(43500001, arch=arch)).text
    assert text.startswith(f".version {newarch.OWN_TARGET_PTX}\n.target {arch}\n")


def test_groups_follow_the_targets():
    """redux.f32 and the fp6/fp4 conversions: only arch-specific sm_100+ targets; the sm_90
    groups from sm_90 on; nothing new below sm_90."""
    assert newarch.groups_on("sm_90") == ["cluster", "elect", "fences", "bulk", "stmatrix", "async", "sparse"]
    assert [g for g in newarch.groups_on("sm_90a") if g != "maxnreg"] == newarch.groups_on("sm_90")
    assert "maxnreg" in newarch.groups_on("sm_90a") and "maxnreg" in newarch.groups_on("sm_120a")
    assert set(newarch.groups_on("sm_100a")) == set(newarch.GROUPS)
    assert "reduxf" not in newarch.groups_on("sm_100") and "fp6" not in newarch.groups_on("sm_120")
    for seed in range(43500000, 43500040):
        assert not set(generate(seed, arch="sm_89").features) & set(newarch.GROUPS)
        assert not {"reduxf", "fp6"} & set(generate(seed, arch="sm_90a").features)
        assert "maxnreg" not in generate(seed, arch="sm_90").features


@pytest.mark.parametrize("arch,group", [("sm_90a", g) for g in ("cluster", "elect", "fences", "bulk", "stmatrix")]
                         + [("sm_100a", g) for g in ("reduxf", "fp6", "cluster")] + [("sm_120a", "fp6")])
def test_group_programs_are_valid(arch, group):
    """ptxas takes programs made of each group (with plain arithmetic around it)."""
    for seed in (7, 8):
        prog = generate(seed, features={"int32", "f32", "branch", "warp", group}, arch=arch)
        case = case_from_program(prog)
        case.arch = arch
        r = oracle.ptxas(ptx_for(case), arch, name="fuzz.ptx")
        if r.returncode != 0 and "not found" in r.stderr:
            pytest.skip("ptxas not installed")
        assert r.ok, r.stderr
        assert group in prog.features


def test_cluster_program_agrees():
    """A cluster program (remote loads, stores and atomics between cluster barriers) runs the
    same from both compilers, every CTA of a cluster at once."""
    prog = generate(3, features={"int32", "cluster"}, arch="sm_90a")
    assert prog.cluster and prog.grid[0] % prog.cluster[0] == 0
    case = case_from_program(prog)
    case.arch = "sm_90a"
    assert ".reqnctapercluster" in case.text and "mapa" in case.text
    out = run_case(case)
    assert out.cls == "pass", f"{out.sig}: {out.detail}"


ELECT_PTX = """.version 9.1
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<8>; .reg .pred %p<3>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %tid.x;
    elect.sync %r1|%p1, 0xffffffff;
    mul.lo.u32 %r3, %r1, %r2;
    selp.u32 %r4, 1, 0, %p1;
    add.u32 %r3, %r3, %r4;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd2, %rd1, %rd2;
    st.global.u32 [%rd2], %r3;
    ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "sm_110a", "sm_120a"])
def test_elect_uniform_result_latency(arch):
    """ptxas 13.5 reads ELECT's uniform result (the elected lane) 2 cycles after it, as a
    UMOV's (the latency tables' `uniform_moves`); the emulator's checker asked 6 and called
    ptxas's code hazardous (campaign sm_90a seeds 43500005, 43500012, 43500013; sm_100a
    43600000, 43600004, 43600016)."""
    import numpy as np

    from ptx2sass.emu.launch import run
    r = oracle.ptxas(ELECT_PTX.format(arch=arch), arch)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    out = np.zeros(32, np.uint32)
    res = run(r.output, "k", (1, 1, 1), (32, 1, 1), [out], hazard_check=True)
    assert not res.hazards, res.hazards
    assert list(out[:3]) == [1, 0, 0]      # lane 0 elected: 0 * tid + 1, then 0 * tid + 0


def test_inventory_forms_after_the_draw_marker_are_not_drawn():
    """The generator draws the inventory as it stood before `forms.DRAW_UNTIL`'s section: the
    forms branch inv32's audit appended (video op2, vmad .po, sparse mma, ...) changed five of
    these pinned programs when the draw took them."""
    from ptx2sass.frontend import inventory
    from ptx2sass.fuzz.forms import _forms, drawable, isa_families
    later = {f.name for f in inventory.forms_for(89, (8, 5)) if not drawable(f)}
    assert later
    assert not later & {f.name for family in isa_families().values() for f in family}
    later_spellings = {f.spelling for f in inventory.forms() if f.name in later} - \
        {f.spelling for f in inventory.forms() if drawable(f)}
    assert not later_spellings & {d["spelling"] for forms in _forms().values() for d in forms}


@pytest.mark.parametrize("arch, has", [("sm_100a", True), ("sm_103a", True), ("sm_110a", False),
                                       ("sm_120a", False), ("sm_121a", False)])
def test_redux_f32_only_where_ptxas_takes_it(arch, has):
    """ptxas 13.5 refuses `redux.sync.min.f32` on sm_110a/120a/121a: a held-out sm_120a run
    (seeds 44,200,000-199) had 48 of 200 programs invalid for it."""
    assert ("reduxf" in newarch.groups_on(arch)) == has


@pytest.mark.parametrize("seed", [9500435, 9500547, 9500692])
def test_sparse_programs_launch_whole_warps(seed):
    """mma.sp is `.sync.aligned`: a CTA of 17 threads left it undefined, and the H200 gave
    ptxas's cubin and ours different bits (GPU run 27). A program with the `sparse` group
    launches whole warps, as one with `mma`, `warp` or `stmatrix` does."""
    from ptx2sass.fuzz.campaign import Options, make_program
    prog = make_program(seed, Options(arch="sm_90", exclude=["texture"]))
    assert "sparse" in prog.features
    assert prog.threads_per_block % 32 == 0, prog.block
