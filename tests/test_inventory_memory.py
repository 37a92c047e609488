"""The per-form checker's load/store value kernels (tools/inventory_memory.py): ours and
ptxas's cubins run in the emulator, both equal to the NumPy model of the PTX ld/st
semantics; with the fixes they found (ld.param::func in a called function, byte fields of
struct parameters, the `.cluster` scope, CGAERRBAR after a fence's ERRBAR on sm_90)."""
import re

import pytest

from ptx2sass import codegen, oracle
from tools import inventory_memory
from tools.inventory_coverage import check_form, sm89_forms

FORMS_89 = ["ld.global.u8 V,m", "ld.weak.local.v2.s8 V,m", "ld.shared.v4.s32 V,m",
            "ld.weak.const.v4.u8 V,m", "ld.param.v2.b32 V,m", "ld.relaxed.sys.s16 V,m",
            "ld.global.nc.L2::cache_hint.v2.f32 V,m,r", "ldu.global.v2.s8 V,m",
            "st.shared.v2.b64 m,W", "st.volatile.local.v2.b16 m,W", "st.weak.v4.f32 m,W",
            "st.global.L2::cache_hint.u32 m,W,r", "st.release.cta.u64 m,W",
            # the inliner kept `.param::func` as a space of its own ('Unknown symbol') and
            # refused byte fields of a struct parameter ('not supported yet')
            "ld.param::func.f32 V,m", "ld.param::func.u8 V,m", "ld.param::func.s8 V,m"]
FORMS_90 = ["ld.shared::cluster.v4.b32 V,m", "st.shared::cluster.v2.s64 m,W",
            # `.cluster` scope was refused ('`ld.cluster` not supported yet')
            "ld.relaxed.cluster.global.u64 V,m", "ld.acquire.cluster.u64 V,m",
            "st.release.cluster.global.b32 m,W", "st.relaxed.cluster.shared.b32 m,W",
            "atom.cluster.shared.add.u32 d,m,a"]


def _forms(sm):
    return {f.name: f for f in sm89_forms(sm)}


@pytest.mark.parametrize("sm,name", [(89, n) for n in FORMS_89] + [(90, n) for n in FORMS_90])
def test_memory_form_matches_ptxas_and_model(sm, name):
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


def test_model_disagreement_is_reported(monkeypatch):
    """A check that cannot fail is worth nothing: a wrong model (one bit flipped) makes the
    form a mismatch although ours and ptxas's agree."""
    real = inventory_memory._model

    def wrong(*args):
        out = real(*args)
        out[5, 0] ^= 1
        return out
    monkeypatch.setattr(inventory_memory, "_model", wrong)
    status, detail = check_form(_forms(89)["ld.global.u8 V,m"], 0, 89)
    assert status == "mismatch" and "model" in detail


FENCES = """.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b64 %a;
.reg .b32 %r;
ld.param.u64 %a, [p];
st.release.sys.global.u32 [%a], 1;
ld.acquire.sys.global.u32 %r, [%a+4];
st.release.cta.global.u32 [%a+8], %r;
fence.acq_rel.cluster;
st.u32 [%a+12], %r;
fence.sc.cluster;
st.u32 [%a+16], %r;
st.release.cluster.global.u32 [%a+20], %r;
ld.acquire.cluster.global.u32 %r, [%a+24];
atom.release.sys.global.exch.b32 %r, [%a+28], %r;
st.u32 [%a+32], %r;
ret;
}
"""
ORDERING = re.compile(r"\b(MEMBAR\.\w+\.\w+|CGAERRBAR|ERRBAR|CCTL\.IVALL|(?:LDG|STG|LD|ST|ATOMG)\.E[\w.]*)")


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_fences_drain_the_cluster_error_barrier(arch):
    """From sm_90 on ptxas writes CGAERRBAR after the ERRBAR of every fence beyond the CTA
    (release stores, fence.acq_rel/sc, atomics): ours the same sequence of fences and
    accesses."""
    text = FENCES.replace("sm_90", arch).replace(".version 7.8", ".version 8.8" if arch != "sm_90" else ".version 7.8")
    theirs = oracle.ptxas(text, arch)
    assert theirs.ok, theirs.stderr
    cubin, _ = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch, filename="k.ptx")

    def sequence(c):
        return ORDERING.findall(oracle.nvdisasm(c))
    assert sequence(cubin) == sequence(theirs.output)
    assert "CGAERRBAR" in sequence(cubin)


# ---------------------------------------------------------------- textures and surfaces
TEXTURE_FORMS = [(89, "suld.b.2d.v2.b64.zero v2,S2"), (89, "sust.b.3d.v2.b16.trap S4,v2"),
                 (89, "sured.b.max.2d.u32.clamp S2,r"), (89, "sust.p.1d.v4.b32.trap S1,v4"),
                 (89, "suld.b.a2d.v4.b8.clamp v4,S4"), (89, "sust.b.a1d.b64.zero S2,r"),
                 (89, "tex.3d.v4.f32.f32 v4,t4"), (89, "tex.a2d.v4.u32.s32 v4,t4"),
                 (89, "tex.level.2d.v4.s32.f32 v4,t4,r"), (89, "tld4.b.2d.v4.s32.f32 v4,t2"),
                 (89, "tex.cube.v4.f32.f32 v4,t4"), (89, "txq.width.b32 d,T"), (89, "suq.height.b32 d,U"),
                 (90, "sured.b.add.1d.s32.trap S1,r"), (90, "suld.b.3d.v2.b16.zero v2,S4"),
                 (90, "tex.level.a2d.v4.u32.f32 v4,t4,r")]


@pytest.mark.parametrize("sm,name", TEXTURE_FORMS)
def test_texture_form_matches_ptxas(sm, name):
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


@pytest.mark.parametrize("name", ["sust.b.2d.v2.b32.zero S2,v2", "tex.2d.v4.f32.f32 v4,t2"])
def test_texture_kernels_are_not_trivial(name):
    """The kernels move data: ptxas's cubin changes most of the threads' surface words /
    returns texels that differ between threads, so equal results are not vacuous."""
    import random
    import numpy as np
    from ptx2sass.emu.launch import run
    from tools.inventory_coverage import version_for
    from tools.inventory_texture import is_surface_form, surface_kernel, texture_kernel
    form = _forms(89)[name]
    build = surface_kernel if is_surface_form(form) else texture_kernel
    text, data, outs, objects = build(form, version_for(form, 89), random.Random(3), 89)
    theirs = oracle.ptxas(text, "sm_89")
    bound = objects()
    before = {k: v.data.copy() for k, v in bound.items()}
    out = np.zeros((64, outs), np.uint64)
    run(theirs.output, "k", 1, 64, [out, data.copy()], textures=bound, hazard_check=False)
    if form.opcode == "sust":
        changed = (bound["surf0"].data != before["surf0"]).sum()      # words: 51 threads in range, 2 each
        assert changed >= 90
    else:
        assert len({tuple(r) for r in out[:, :4]}) >= 32


def test_surface_difference_is_reported(monkeypatch):
    """The surface's bytes after the run are compared: a surface that starts otherwise
    for one of the two runs makes the form a mismatch."""
    from tools import inventory_coverage, inventory_texture
    real = inventory_texture.surface_kernel
    calls = []

    def skewed(*args):
        text, data, outs, objects = real(*args)

        def objects2():
            bound = objects()
            calls.append(1)
            if len(calls) == 2:
                bound["surf0"].data.reshape(-1)[-1] ^= 1
            return bound
        return text, data, outs, objects2
    monkeypatch.setattr(inventory_coverage, "surface_kernel", skewed)
    status, detail = check_form(_forms(89)["sust.b.2d.v2.b32.zero S2,v2"], 0, 89)
    assert status == "mismatch" and "surf0" in detail


# ---------------------------------------------------------------- ldmatrix, cp.async, createpolicy
ASYNC_FORMS = [(89, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 v4,m"),
               (89, "ldmatrix.sync.aligned.m8n8.x1.b16 v1,m"),
               (89, "cp.async.ca.shared.global m,m,x:16,a"), (89, "cp.async.ca.shared.global m,m,x:4"),
               (89, "cp.async.cg.shared.global.L2::cache_hint m,m,x:16,r"), (89, "cp.async.wait_group x:0"),
               (89, "cp.async.wait_all"), (89, "createpolicy.fractional.L2::evict_unchanged.b64 d,a"),
               (89, "createpolicy.range.global.L2::evict_normal.L2::evict_first.b64 d,m,a,a"),
               (90, "ldmatrix.sync.aligned.m8n8.x2.shared.b16 v2,m")]


@pytest.mark.parametrize("sm,name", ASYNC_FORMS)
def test_async_form_matches_ptxas(sm, name):
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")


# atom/red.add.noftz.bf16 (sm_90+; was 'not supported yet'): the 16-bit CAS loop with
# HADD2.BF16_V2, as ptxas; each thread its own word (tools/inventory_coverage.atomic_kernel)
BF16_ATOMICS = [(90, "atom.shared.add.noftz.bf16 d,m,a"), (90, "atom.release.global.add.noftz.bf16 d,m,a"),
                (90, "red.add.noftz.bf16 m,a"), (90, "atom.sys.add.noftz.bf16 d,m,a"),
                (120, "atom.global.add.noftz.bf16 d,m,a"), (120, "red.shared.add.noftz.bf16 m,a")]


@pytest.mark.parametrize("sm,name", BF16_ATOMICS)
def test_bf16_atomic_add_matches_ptxas(sm, name):
    assert check_form(_forms(sm)[name], 0, sm) == ("match", "")
