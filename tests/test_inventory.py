"""The PTX instruction inventory (frontend/ptx_isa.spec -> frontend/ptx_inventory.json):
the committed data is the generator's output, the loader's API holds, and ptxas agrees
with it for sm_89 on a sample of forms and of mutated spellings no form has.

PTX2SASS_SAMPLE bounds the ptxas check: default 400 forms + 150 mutants; a number N: N
forms; `all`: every form and 3000 mutants (`py -m tools.inventory_check` does the same)."""
import os

import pytest

from ptx2sass.frontend import inventory
from tools import gen_ptx_inventory
from tools.inventory_check import check, ptxas_verdicts
from tools.inventory_kernels import instruction_text, version_for

SAMPLE = os.environ.get("PTX2SASS_SAMPLE", "")


def test_committed_inventory_is_the_generators_output():
    assert gen_ptx_inventory.OUT.read_text() == gen_ptx_inventory.generate(), \
        "run `python -m tools.gen_ptx_inventory`"


def test_every_chapter_has_forms_and_names_are_unique():
    forms = inventory.forms()
    assert {f.chapter for f in forms} == set(inventory.CHAPTERS)
    assert len({f.name for f in forms}) == len(forms)
    lop3 = [f for f in forms if f.opcode == "lop3"]
    assert [f.spelling for f in lop3] == ["lop3.b32", "lop3.or.b32", "lop3.and.b32"]
    assert lop3[0].types == (".b32",) and lop3[0].min_ptx == (4, 3) and lop3[0].min_sm == 50
    assert [o.kind for o in lop3[1].operands] == ["dp", "a", "a", "a", "i", "q"]


def test_requirements_and_spelling_checks():
    fp8 = next(f for f in inventory.forms() if f.spelling == "cvt.rn.satfinite.e4m3x2.f32")
    assert fp8.valid_on(89, (8, 1)) and not fp8.valid_on(89, (7, 8))
    assert fp8.valid_on(90, (7, 8)) and not fp8.valid_on(80, (9, 0))
    assert fp8.min_ptx_for(89) == (8, 1) and fp8.min_ptx_for(90) == (7, 8)
    # independent options combine freely in the spelling check, though forms sample them
    assert inventory.spelling_valid("ld.global.L1::evict_last.u32", 89)
    assert inventory.spelling_valid("ld.weak.global.cs.u32", 89)
    assert not inventory.spelling_valid("add.sat.u32", 89)
    assert inventory.spelling_valid("add.sat.u32", 100, (9, 2))
    assert not inventory.spelling_valid("vote.any.pred", 89)     # deprecated below sm_70


def test_ptxas_agrees_with_the_inventory_for_sm89():
    if SAMPLE == "all":
        sample, mutants = None, 3000
    else:
        sample, mutants = int(SAMPLE or 400), 150
    bad, _crashed = check(89, sample=sample, seed=15, mutants=mutants)
    assert not bad, "\n".join(f"{'valid' if want else 'invalid'} {s}: ptxas {msg or 'accepted'}"
                              for _, s, want, msg in bad[:20])


@pytest.mark.parametrize("spelling", ["ld.global.v8.u16", "ld.v8.s16"])
def test_ptxas_crashes_on_sub_word_v8_loads_for_sm89(spelling):
    """ptxas 13.5 takes these spellings at PTX 8.8 but crashes (signal 11) compiling them
    for sm_89: a ptxas bug, which the check reports apart from its disagreements."""
    form = next(f for f in inventory.forms() if f.spelling == spelling)
    ((ok, msg),) = ptxas_verdicts([(instruction_text(form), False)], 89, version_for(form, 89))
    assert not ok and msg.startswith("ptxas crashed")


def test_quadpair_mma_lists_every_accumulator_pair_ptxas_accepts():
    """mma.m8n8k4 with f16 inputs: the manual's .dtype/.ctype are each .f16 or .f32, and
    ptxas 13.5 takes every pair but f16 D from f32 C (refused: tests/test_codegen_mma_quadpair.py);
    the inventory lists exactly those."""
    forms = {f.spelling for f in inventory.forms()
             if f.opcode == "mma" and ".m8n8k4." in f.spelling and ".f64" not in f.spelling}
    want = {f"mma.sync.aligned.m8n8k4.{a}.{b}.{d}.f16.f16.{c}"
            for a in ("row", "col") for b in ("row", "col")
            for d, c in (("f16", "f16"), ("f32", "f32"), ("f32", "f16"))}
    assert forms == want
    chosen = [f for f in inventory.forms() if f.spelling in want]
    verdicts = ptxas_verdicts([(instruction_text(f), False) for f in chosen], 89, version_for(chosen[0], 89))
    assert len(chosen) == 12 and all(ok for ok, _ in verdicts), [m for _, m in verdicts]


def _wgmma_sample():
    """Every wgmma.mma_async line of the spec at its first, a middle and its last N."""
    import re
    forms = [f for f in inventory.forms() if f.spelling.startswith("wgmma.mma_async")]
    def n(f):
        return int(re.search(r"\.m64n(\d+)k", f.spelling).group(1))
    return [f for f in forms if n(f) in (8, 24, 256)], forms


def test_wgmma_accumulators_and_ptxas_verdicts():
    """wgmma.mma_async in the inventory (every .m64nN shape, f16/bf16/tf32/fp8/integer/b1,
    A from a descriptor or registers): the accumulator operand holds N/2 registers (N/4 for
    f16 accumulators, two halves a register); ptxas 13.5 takes the forms on sm_90a (mixed
    s8/u8 from PTX 8.4 only, with its message below that) and none on sm_100a."""
    import re
    sample, forms = _wgmma_sample()
    assert len(forms) == 392 and len(sample) >= 40
    for f in sample:
        n = int(re.search(r"\.m64n(\d+)k", f.spelling).group(1))
        accumulators = instruction_text(f).split("}")[0].count("%acc")
        assert accumulators == (n // 4 if f.types[0] == ".f16" else n // 2), f.spelling
        assert f.valid_on(90, (8, 4), True) and not f.valid_on(90, (8, 4)) and not f.valid_on(100, (9, 0), True)
    verdicts = ptxas_verdicts([(instruction_text(f), False) for f in sample], "90a", (8, 4))
    assert all(ok for ok, _ in verdicts), [(f.spelling, m) for f, (ok, m) in zip(sample, verdicts) if not ok][:5]
    mixed = [f for f in sample if ".s8.u8" in f.spelling or ".u8.s8" in f.spelling]
    assert mixed and all(f.min_ptx_for(90) == (8, 4) for f in mixed)
    ((ok, msg),) = ptxas_verdicts([(instruction_text(mixed[0]), False)], "90a", (8, 0))
    assert not ok and "mixed integer types" in msg and "8.4" in msg
    ((ok, msg),) = ptxas_verdicts([(instruction_text(sample[0]), False)], "100a", (8, 8))
    assert not ok
    # each compiles with us as it stands, its results unread: no wait, so no `gsb0` (97 of
    # the 392 were 'cannot encode' before tools/isa_seeds/wgmma_{inventory,nogsb}_sm90.words)
    from ptx2sass import codegen
    from tools.inventory_kernels import acceptance_module
    for f in sample:
        text, _ = acceptance_module([instruction_text(f)], "90a", (8, 4))
        codegen.compile_ptx(text, "sm_90a", "k.ptx")


def test_multimem_forms_are_ptxas_s_and_compile():
    """multimem.ld_reduce/st/red in the inventory (integer and float types, vectors, orders
    and scopes, `.acc::f32` with `.add` only): ptxas 13.5 agrees on sm_89 (none), sm_90 and
    sm_100; every 8th form compiles with us (`.v2/.v4/.v8` of single halves in ld_reduce
    raised an internal KeyError before: tests/test_codegen_multimem.py runs them)."""
    from ptx2sass import codegen
    from tools.inventory_kernels import acceptance_module
    forms = [f for f in inventory.forms() if f.opcode == "multimem"]
    assert len(forms) > 400
    for sm in (89, 90, 100):
        verdicts = ptxas_verdicts([(instruction_text(f), False) for f in forms], sm, (8, 8))
        bad = [(f.spelling, m) for f, (ok, m) in zip(forms, verdicts) if ok != f.valid_on(sm, (8, 8))]
        assert not bad, (sm, bad[:5])
    for f in forms[::8]:
        if f.arch_specific or not f.valid_on(90, (8, 8)):     # (multimem.cp.*: PTX 9.1)
            continue
        text, _ = acceptance_module([instruction_text(f)], 90, (8, 8))
        codegen.compile_ptx(text, "sm_90", "k.ptx")


def test_multimem_fp8_forms_are_ptxas_s_and_compile():
    """multimem's fp8 lanes (ld_reduce add/min/max, `.acc::f16` adds, st of e4m3x4/e5m2x4 and
    vectors of e4m3x2/e5m2x2; PTX 8.6, arch-specific): ptxas 13.5 takes every form on sm_100a,
    sm_103a and sm_120a, none on sm_90a; every 3rd compiles with us on sm_100a (an internal
    KeyError before)."""
    from ptx2sass import codegen
    from tools.inventory_kernels import acceptance_module
    forms = [f for f in inventory.forms() if f.opcode == "multimem" and f.arch_specific]
    assert len(forms) >= 80 and all(any(t in f.spelling for t in ("e4m3", "e5m2")) for f in forms)
    for target in ("100a", "103a", "120a", "90a"):
        sm = int(target[:-1])
        verdicts = ptxas_verdicts([(instruction_text(f), False) for f in forms], target, (8, 8))
        bad = [(f.spelling, m) for f, (ok, m) in zip(forms, verdicts) if ok != f.valid_on(sm, (8, 8), True)]
        assert not bad, (target, bad[:5])
    for f in forms[::3]:
        text, _ = acceptance_module([instruction_text(f)], "100a", (8, 8))
        codegen.compile_ptx(text, "sm_100a", "k.ptx")


def test_tcgen05_forms_are_ptxas_s_and_compile():
    """tcgen05 in the inventory (alloc/dealloc/relinquish, ld/st of every shape and .xN with
    the register count it takes, wait, fences, commit, shift, cp, mma of the f16/tf32/f8f6f4
    kinds): ptxas 13.5 takes them on sm_100a and sm_103a, none on sm_120a or sm_90a; every
    8th compiles with us, and every cta_group::2 alloc/dealloc/relinquish (the pair's alloc
    since branch isa36: tests/test_tcgen05_pair_alloc.py)."""
    from ptx2sass import CompileError, codegen
    from tools.inventory_kernels import acceptance_module
    forms = [f for f in inventory.forms() if f.opcode == "tcgen05"]
    assert len(forms) >= 140
    for target in ("100a", "103a", "120a", "90a"):
        sm = int(target[:-1])
        verdicts = ptxas_verdicts([(instruction_text(f), False) for f in forms], target, (8, 8))
        bad = [(f.spelling, m) for f, (ok, m) in zip(forms, verdicts) if ok != f.valid_on(sm, (8, 8), True)]
        assert not bad, (target, bad[:5])
    ld = next(f for f in forms if f.spelling == "tcgen05.ld.sync.aligned.16x256b.x32.b32")
    assert instruction_text(ld).count("%acc") == 128
    pair = ("tcgen05.alloc.cta_group::2", "tcgen05.dealloc.cta_group::2",
            "tcgen05.relinquish_alloc_permit.cta_group::2")
    assert sum(f.spelling.startswith(pair[0]) for f in forms) == 2
    for f in forms[::8] + [f for f in forms if f.spelling.startswith(pair)]:
        text, _ = acceptance_module([instruction_text(f)], "100a", (8, 8))
        codegen.compile_ptx(text, "sm_100a", "k.ptx")


def _audit_forms():
    """The forms of the spec's section that branch inv32's audit of the PTX ISA manual added
    (the lines after its marker), and cvt.pack's corrected ones."""
    text = gen_ptx_inventory.SPEC.read_text()
    mark = next(i for i, line in enumerate(text.splitlines(), 1) if "branch inv32" in line)
    lines = {d["name"]: d["line"] for d in gen_ptx_inventory.parse_spec(text)[0]}
    return [f for f in inventory.forms() if lines[f.name] > mark or f.opcode == "cvt"
            and f.spelling.startswith("cvt.pack")]


def test_audit_forms_are_ptxas_s():
    """Each added form at its own first PTX version: ptxas 13.5 takes it exactly where the
    spec says, on sm_89, sm_90, sm_90a, sm_100a, sm_103a and sm_120a (tcgen05.mma of every
    kind and its .sp/.ws/.block_scale/collector/ashift variants, the bulk copies and
    reductions, mbarrier's orders and scopes, ...). Not expressible, so not checked: the
    kind::i8 forms also on sm_110a (the spec says sm_100a only)."""
    forms = _audit_forms()
    assert len(forms) > 950
    for target in ("89", "90", "90a", "100a", "103a", "120a"):
        sm = int(target.rstrip("a"))
        groups = {}
        for f in forms:
            version = version_for(f, sm)
            if target.endswith("a"):
                version = max(version, (8, 0))
            groups.setdefault(version, []).append(f)
        for version, group in groups.items():
            verdicts = ptxas_verdicts([(instruction_text(f), False) for f in group], target, version)
            bad = [(f.spelling, m) for f, (ok, m) in zip(group, verdicts)
                   if ok != f.valid_on(sm, version, target.endswith("a"))]
            assert not bad, (target, version, bad[:5])


def test_audit_forms_compile_or_are_named_gaps():
    """Every 6th added form that ptxas takes on sm_100a compiles with us, or is refused with
    a named 'not supported yet' (the gaps STATUS lists): never an internal error."""
    from ptx2sass import CompileError, codegen
    from tools.inventory_kernels import acceptance_module
    for f in [f for f in _audit_forms() if f.valid_on(100, (9, 0), True)][::6]:
        text, _ = acceptance_module([instruction_text(f)], "100a", max(version_for(f, 100), (8, 6)))
        try:
            codegen.compile_ptx(text, "sm_100a", "k.ptx")
        except CompileError as e:
            assert "not supported yet" in str(e) and "internal" not in str(e), (f.name, str(e)[:300])
