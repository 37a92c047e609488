"""The generator's systematic sweep of the PTX ISA inventory (issue 17's coverage bar).

Each program walks its own stretch of every inventory family's form list (and the next
seed's), so SWEEP_SEEDS consecutive seeds draw every form; a form the generator cannot write
is never reached, whatever the seeds. These tests pin forms that could not be written
before: every integer `mma.sync` (ptxas wants a vector of one braced, "Vector expected"),
`mma.sp.sync` (2:4 metadata), the tf32 / s4 / u4 / b1 `wmma` multiplies (the inventory has
no `wmma.load.c`/`store.d` for their shapes; the b1 spellings put `.xor.popc` first), and
`ld.param::func` in `.func` bodies; and the quota every program reaches."""
import re

import pytest

import ptx2sass.fuzz.forms as forms
from ptx2sass.fuzz.generator import Ctx, Generator, generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.program import render
from ptx2sass.fuzz.runner import run_case


def _forced(monkeypatch, family: str, spelling: str):
    fs = forms.isa_families()[family] if family != "wmma" else forms.wmma_index()["mma"]
    form = next(f for f in fs if f.spelling == spelling)
    real = forms.sweep_pick
    monkeypatch.setattr(forms, "sweep_pick",
                        lambda g, fam, choices, share=1.0: form if fam == family else real(g, fam, choices, share))
    g = Generator(1, features={"int32", "mma", "forms"})
    g.block_threads = 32
    return g


MMA_FORMS = ["mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32",          # B: {r}
             "mma.sync.aligned.m8n8k32.row.col.satfinite.s32.u4.s4.s32",  # A and B: {r}
             "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc",
             "mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
             "mma.sp.sync.aligned.m16n8k64.row.col.s32.u8.s8.s32"]


@pytest.mark.parametrize("spelling", MMA_FORMS)
def test_mma_sync_form_is_written(monkeypatch, spelling):
    if not forms.isa_families()["mma"]:
        pytest.skip("no PTX ISA inventory")
    g = _forced(monkeypatch, "mma", spelling)
    made = forms.op_isa(g, Ctx(), "mma")
    assert made is not None, spelling
    assert spelling in made.text
    if ".sp." in spelling:              # metadata: eight valid 2:4 nibbles
        word = int(re.search(r"mov\.b32 \$t\d+, (0x[0-9a-f]{8});", made.text).group(1), 16)
        assert all((word >> (4 * i)) & 15 in forms.SPARSE_NIBBLES for i in range(8))


WMMA_FORMS = ["wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32",
              "wmma.mma.sync.aligned.row.col.m8n8k32.s32.u4.u4.s32.satfinite",
              "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32"]


@pytest.mark.parametrize("spelling", WMMA_FORMS)
def test_wmma_form_without_inventory_accumulator_forms_is_written(monkeypatch, spelling):
    if not forms.wmma_index()["mma"]:
        pytest.skip("no PTX ISA inventory")
    g = _forced(monkeypatch, "wmma", spelling)
    made = forms.op_wmma(g, Ctx())
    assert made is not None, spelling
    assert spelling in made.text and "wmma.load.c" in made.text and "wmma.store.d" in made.text


def test_wmma_b1_spelling_is_parsed():
    assert forms._wmma_types("wmma.mma.and.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32") == \
        ("row", "col", "m8n8k128", "b1", "b1", "s32", "s32")


def test_every_program_walks_its_sweep_stretch():
    """Draws of each family reach the quota (before: 10% of programs drew no arithmetic form
    and 30% fewer than their stretch, leaving ~270 forms of 1,000 seeds undrawn)."""
    fam = forms.isa_families()
    if not fam["alu"]:
        pytest.skip("no PTX ISA inventory")
    for seed in range(5000, 5012):
        g = Generator(seed)
        g.program()
        if not g.on("forms"):
            continue
        for family in ("alu", "mem", "atom"):
            assert g.isa_draws.get(family, 0) >= forms.sweep_quota(family, len(fam[family])), (seed, family)
        if g.on("mma"):
            assert g.isa_draws.get("wmma", 0) >= forms.sweep_quota("wmma", len(forms.wmma_index()["mma"]))


def test_sweep_positions_cover_the_list():
    """The stretches of SWEEP_SEEDS consecutive seeds, each walked to its quota, cover every
    form of a family (arithmetic: 2,700+ forms, ~3 a seed)."""
    n = 2742
    q = forms.sweep_quota("alu", n)
    seen = set()
    for seed in range(forms.SWEEP_SEEDS):
        start = seed * n // forms.SWEEP_SEEDS
        seen.update((start + k) % n for k in range(q))
    assert seen == set(range(n))


PARAM_FUNC = re.compile(r"ld\.param::func\.(\w+) %\w+, \[fn\d+_a\d+\];")


def test_func_bodies_read_arguments_with_param_func_types():
    found = set()
    for seed in range(40):
        found.update(PARAM_FUNC.findall(render(generate(seed, {"int32", "call"})).text))
    assert {"s8", "u8", "b8", "f32", "f64", "s16", "u64"} <= found, found


@pytest.mark.parametrize("seed", [8, 32])
def test_param_func_reads_agree_with_ptxas(seed):
    """Programs whose `.func`s read their arguments as bytes and as floats (seed 8: `.u8`,
    `.f64`, `.s64`; seed 32: `.u8`, `.f32`, `.f64` ...): ptx2sass's outputs equal ptxas's in
    the emulator."""
    prog = generate(seed, {"int32", "call"})
    assert {"u8", "f64"} <= set(PARAM_FUNC.findall(render(prog).text))
    out = run_case(case_from_program(prog))
    assert out.cls == "pass", f"{out.sig}: {out.detail}"
