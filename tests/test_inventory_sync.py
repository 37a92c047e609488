"""The per-form checker's kernels for forms without register results of their own
(tools/inventory_sync.py): barriers, fences and cache hints, control flow, vector `mov`.
Each kind must match ptxas's cubin, and each must catch a planted difference: our compiler
fed a deliberately altered kernel (the form left out, another scope, swapped targets or
elements) must be reported as a mismatch."""
import pytest

from ptx2sass import codegen
from tools import inventory_coverage
from tools.inventory_coverage import check_form, sm89_forms

FORMS = ["bar.sync a,a", "bar.arrive a,a", "barrier.sync a,a", "bar.warp.sync a",
         # barrier.cta.sync without .aligned was BAR.SYNC.DEFER_BLOCKING (ptxas: BAR.SYNC, as
         # barrier.sync: diverged threads may reach it)
         "barrier.cta.sync a,a", "barrier.cta.arrive.aligned a,a",
         "fence.sc.gpu", "membar.proxy.alias", "prefetch.local.L2 m", "prefetch.L1 m",
         "discard.global.L2 m,x:128", "applypriority.L2::evict_normal m,x:128",
         "nanosleep.u32 a", "pmevent x:1", "trap",
         "bra l", "brx.idx r,L", "brx.idx.uni r,L", "call f", "ret", "exit",
         "mov.b64 d,v4", "mov.b32 v2,r", "stackrestore.u32 r", "stackrestore.u64 r",
         # the inventory's b128 load/store shapes (`d, m` / `m, r`) in the memory kernel
         "ld.global.b128 d,m", "st.global.b128 m,r"]


def _forms(sm=89):
    return {f.name: f for f in sm89_forms(sm)}


@pytest.mark.parametrize("name", FORMS)
def test_sync_form_matches_ptxas(name):
    assert check_form(_forms()[name], 0, 89) == ("match", "")


@pytest.mark.parametrize("name", ["barrier.sync a,a", "barrier.cta.sync a,a", "bar.arrive a,a",
                                  "barrier.arrive a,a", "fence.proxy.alias", "mov.b128 d,v2"])
def test_sync_form_matches_ptxas_sm90(name):
    """sm_90: ptxas's non-aligned barrier.sync of a converged warp is BAR.SYNC.DEFER_BLOCKING
    (ours was BAR.SYNC, sm_8x's)."""
    assert check_form(_forms(90)[name], 0, 90) == ("match", "")


# (form, the text in the kernel, what our compiler gets instead)
PLANTED = [
    ("bar.sync a,a", "bar.sync 1, 64;", ""),                    # no barrier: the listing check
    ("bar.arrive a,a", "bar.arrive 1, 64;", "bar.sync 1, 64;"),
    ("fence.sc.gpu", "fence.sc.gpu;", "fence.sc.cta;"),
    ("prefetch.global.L2 m", "prefetch.global.L2 [%rdi];", ""),
    ("trap", "@%pz trap;", ""),
    ("bra l", "@%pl bra L_taken;", "@!%pl bra L_taken;"),         # the values
    ("brx.idx r,L", "L_tab: .branchtargets L_0, L_1, L_2, L_3;",
     "L_tab: .branchtargets L_0, L_2, L_1, L_3;"),
    ("ret", "@%xp ret;", ""),
    ("exit", "@%pl exit;", ""),
    ("mov.b64 d,v4", "mov.b64 %whole, {%e0, %e1, %e2, %e3};", "mov.b64 %whole, {%e0, %e2, %e1, %e3};"),
    ("mov.b32 v2,r", "mov.b32 {%e0, %e1}, %whole;", "mov.b32 {%e1, %e0}, %whole;"),
    ("stackrestore.u64 r", "stackrestore.u64 %stks;", ""),
    ("st.global.b128 m,r", "mov.b128 %v0, {%lo, %hi};", "mov.b128 %v0, {%hi, %lo};"),
]


@pytest.mark.parametrize("name,text,planted", PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_difference_is_reported(monkeypatch, name, text, planted):
    """A kernel that cannot fail is worth nothing: ours compiled from the altered kernel
    (ptxas's from the real one) is a mismatch."""
    real = codegen.lower_ptx
    seen = []

    def altered(src, *args, **kwargs):
        seen.append(text in src)
        return real(src.replace(text, planted), *args, **kwargs)
    monkeypatch.setattr(inventory_coverage.codegen, "lower_ptx", altered)
    status, detail = check_form(_forms()[name], 0, 89)
    assert seen == [True]
    assert status == "mismatch", detail
