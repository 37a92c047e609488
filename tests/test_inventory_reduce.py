"""The per-form checker's sm_90 kernels for multimem, vector atom/red, bulk reductions and
the mbarrier-completing stores (tools/inventory_reduce.py), and the diverged-warp kernel of
the non-aligned barriers (tools/inventory_sync.py). Each kind must match ptxas's cubin in
the emulator, and catch a planted difference: our compiler fed an altered kernel (elements
swapped, an address moved, the form left out, `.aligned` added) is not a match."""
import re

import pytest

from tools import inventory_coverage
from tools.inventory_coverage import check_form, sm89_forms
from tools.inventory_reduce import is_reduce_form

# one or two forms of each shape the kernels take (all "compiled" before: no value kernel)
FORMS = ["multimem.ld_reduce.add.u32 d,m", "multimem.ld_reduce.global.max.u32 d,m",
         "multimem.ld_reduce.add.v2.f16x2 V,m", "multimem.ld_reduce.max.v8.bf16 V,m",
         "multimem.ld_reduce.global.add.v4.f32 V,m", "multimem.ld_reduce.acquire.cluster.add.f64 d,m",
         "multimem.st.global.b32 m,r", "multimem.st.v2.f16x2 m,W", "multimem.st.release.gpu.global.f64 m,r",
         "multimem.red.min.u64 m,r", "multimem.red.add.v2.f16x2 m,W", "multimem.red.relaxed.cta.add.f64 m,r",
         "atom.add.v2.f32 V,m,W", "atom.global.max.noftz.v8.f16 V,m,W", "atom.add.noftz.v2.f16x2 V,m,W",
         "red.add.noftz.v8.bf16 m,W", "red.global.min.noftz.v4.f16x2 m,W", "red.release.add.v4.f32 m,W",
         "cp.reduce.async.bulk.global.shared::cta.bulk_group.and.b32 m,m,a",
         "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.and.b32 m,m,a,r",
         "multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 m,m,a",
         "multimem.cp.async.bulk.global.shared::cta.bulk_group m,m,a",
         "st.async.mbarrier::complete_tx::bytes.shared::cluster.v2.b32 m,W,m",
         "st.async.mbarrier::complete_tx::bytes.shared::cluster.v4.s32 m,W,m",
         "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 m,a,m",
         "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.and.b32 m,m,a,m",
         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint m,m,a,m,r",
         "atom.exch.b128 d,m,a", "atom.release.shared.exch.b128 d,m,a", "atom.global.cas.b128 d,m,a,a",
         "atom.gpu.shared.cas.b128 d,m,a,a"]


def _forms(sm=90):
    return {f.name: f for f in sm89_forms(sm)}


@pytest.mark.parametrize("name", FORMS)
def test_reduce_form_matches_ptxas(name):
    form = _forms()[name]
    assert is_reduce_form(form)
    assert check_form(form, 0, 90) == ("match", "")


# (form, what is changed in the kernel our compiler gets (a regular expression), into what)
PLANTED = [
    ("multimem.ld_reduce.add.v2.f16x2 V,m", r"\{%v0, %v1\}", "{%v1, %v0}"),
    ("multimem.ld_reduce.add.u32 d,m", r"(ld_reduce\.add\.u32 %v0, \[%rdi)\+\d+\]", r"\1+60]"),
    ("multimem.st.global.b32 m,r", r"multimem\.st\.global\.b32 [^;]*;", ""),
    ("multimem.red.add.v2.f16x2 m,W", r"\{%w0, %w1\}", "{%w1, %w0}"),
    ("atom.add.v2.f32 V,m,W", r"(atom\.add\.v2\.f32 )\{%v0, %v1\}", r"\1{%v1, %v0}"),
    ("red.global.min.noftz.v4.f16x2 m,W", r"\{%w0, %w1, %w2, %w3\}", "{%w0, %w1, %w3, %w2}"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.and.b32 m,m,a", r"bulk_group\.and\.b32 ", "bulk_group.xor.b32 "),
    ("st.async.mbarrier::complete_tx::bytes.shared::cluster.v2.b32 m,W,m", r"\{%w0, %w1\}", "{%w1, %w0}"),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 m,a,m",
     r"(add\.u64 )\[%sd\]", r"\1[%sd+8]"),
    ("atom.global.cas.b128 d,m,a,a", r"%q1, %q2;", "%q2, %q1;"),
    ("atom.release.shared.exch.b128 d,m,a", r"mov\.b128 %q1, \{%x2, %x3\}", "mov.b128 %q1, {%x3, %x2}"),
]


def _with_planted(monkeypatch, pattern, repl, count=1):
    real = inventory_coverage.codegen.lower_ptx
    seen = []

    def altered(src, *args, **kwargs):
        new = re.sub(pattern, repl, src, count=count)
        seen.append(new != src)
        return real(new, *args, **kwargs)
    monkeypatch.setattr(inventory_coverage.codegen, "lower_ptx", altered)
    return seen


@pytest.mark.parametrize("name,pattern,repl", PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_difference_is_reported(monkeypatch, name, pattern, repl):
    """A kernel that cannot fail is worth nothing: ours compiled from the altered kernel
    (ptxas's from the real one) is a mismatch."""
    seen = _with_planted(monkeypatch, pattern, repl)
    status, detail = check_form(_forms()[name], 0, 90)
    assert seen == [True]
    assert status == "mismatch", detail


NONALIGNED = ["barrier.arrive a,a", "barrier.cta.arrive a,a", "barrier.sync a,a", "barrier.cta.sync a,a"]


@pytest.mark.parametrize("sm", [89, 90, 80, 75])
@pytest.mark.parametrize("name", NONALIGNED)
def test_nonaligned_barrier_of_a_diverged_warp_matches_ptxas(name, sm):
    """The first warp's lanes reach the barrier apart: ptxas's routine (sm_8x) or collective
    section (sm_90) counts the warp once; ours must too (before: BAR alone, the barrier
    completed on the first warp's two halves: a deadlock; and its instructions missing)."""
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


@pytest.mark.parametrize("sm", [89, 90])
@pytest.mark.parametrize("name", NONALIGNED)
def test_aligned_barrier_in_the_diverged_kernel_is_reported(monkeypatch, name, sm):
    """Ours compiled with `.aligned` added (a BAR at each of the two places, no meeting)
    deadlocks in the emulator, where ptxas's cubin of the real kernel runs."""
    spelling = name.split()[0]
    seen = _with_planted(monkeypatch, re.escape(spelling) + r" 1,", f"{spelling}.aligned 1,", count=2)
    status, detail = check_form(_forms(sm)[name], 0, sm)
    assert seen == [True]
    assert status != "match" and "deadlock" in detail, (status, detail)


@pytest.mark.parametrize("sm", [89, 90])
@pytest.mark.parametrize("name", ["atom.shared.add.f64 d,m,a", "red.shared.add.f64 m,a", "red.cta.shared.add.f64 m,a"])
def test_shared_f64_atomic_add_takes_ptxas_operand_order(name, sm):
    """The shared-memory f64 add's CAS loop (ATOMS.CAST.SPIN.64): ptxas adds `DADD new, v,
    old`; of two NaNs DADD keeps one by position, so ours (`old, v`) gave the other NaN's
    bits (found by the per-form checker on sm_90, seed 81: 1 thread of 64 differed)."""
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


CLUSTER_BARRIERS = ["barrier.cluster.arrive", "barrier.cluster.arrive.release.aligned",
                    "barrier.cluster.arrive.relaxed", "barrier.cluster.wait",
                    "barrier.cluster.wait.acquire.aligned"]


@pytest.mark.parametrize("name", CLUSTER_BARRIERS)
def test_cluster_barrier_matches_ptxas(name):
    """barrier.cluster.arrive/wait as a CTA barrier in a cluster launch of one CTA (was
    "compiled": no value kernel)."""
    assert check_form(_forms()[name], 0, 90) == ("match", "")


@pytest.mark.parametrize("name,pattern,repl", [
    ("barrier.cluster.arrive", r"barrier\.cluster\.arrive;", ""),
    ("barrier.cluster.arrive.release.aligned", r"\.release\.aligned;", ".relaxed.aligned;"),
    ("barrier.cluster.wait.acquire.aligned", r"barrier\.cluster\.wait\.acquire\.aligned;", "")])
def test_cluster_barrier_planted_difference_is_reported(monkeypatch, name, pattern, repl):
    """The form left out, or the arrive's release made relaxed: ptxas's instructions for
    the form are missing from ours (the emulator runs the CTA's warps so that a missing
    wait changes no value here: the listing check catches it). (`.acquire` is the wait's
    default and `.release` the arrive's: those spellings give the same code.)"""
    seen = _with_planted(monkeypatch, pattern, repl)
    status, detail = check_form(_forms()[name], 0, 90)
    assert seen == [True]
    assert status == "mismatch" or "deadlock" in detail, (status, detail)   # (no arrive: a deadlock)


@pytest.mark.parametrize("name", ["griddepcontrol.launch_dependents", "griddepcontrol.wait"])
def test_griddepcontrol_matches_ptxas_and_is_missed_when_left_out(monkeypatch, name):
    """griddepcontrol in the ordering kernel (was "compiled"); left out of ours, ptxas's
    instruction for it is missing."""
    assert check_form(_forms()[name], 0, 90) == ("match", "")
    seen = _with_planted(monkeypatch, re.escape(name) + ";", "")
    status, detail = check_form(_forms()[name], 0, 90)
    assert seen == [True]
    assert status == "mismatch", detail


@pytest.mark.parametrize("sm", [90, 100, 120])
@pytest.mark.parametrize("name", ["cvt.pack.sat.s2.s32.b32 d,r,r,r", "cvt.pack.sat.u2.s32.b32 d,r,r,r"])
def test_two_bit_pack_encodes_on_hopper_and_blackwell(name, sm):
    """I2IP.S2/U2.S32.SAT was in the turing and ampere tables only: an internal "cannot
    encode" on sm_90+ (found by the held-out sample, sm_90 seed 83); seeded from ptxas's words
    (tools/isa_seeds/cvt_pack_2bit_sm90.words)."""
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


@pytest.mark.parametrize("sm", [90, 100, 120])
def test_txq_mipmap_levels_reads_back(sm):
    """The checker compared a whole-symbol relocation (`MOV R, `(.nv.unified.texrefDescSize)`)
    with nvdisasm's reading of it, a label: "readback" (found by the held-out sample, sm_90
    seed 83); our words were right."""
    assert check_form(_forms(sm)["txq.num_mipmap_levels.b32 d,T"], 0, sm) == ("match", "")
