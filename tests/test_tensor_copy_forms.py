"""The tensor-copy forms branch tensor33 found ptxas 13.5.37 taking beyond frontend/ptx_isa.spec
(`.cta_group::1/::2` on every load mode and dimension, into shared::cta too, with multicast
and/or a cache hint; im2col::w[::128] with multicast on 3d/5d and with a cache hint; tile and
im2col into shared::cta on 4d/5d and with a hint; the scatter4 reduction's and the w-mode
prefetch's cache hint), now inventory forms (branch isa34's spec section, each spelling
probed with ptxas on sm_100a and the other targets), and a sample of them compiled as ptxas
does: tools/tensor_copy_forms checks all of them (every issue of a UTMA* instruction in the
emulator: the same mnemonic and operand values by role)."""
import pytest

from ptx2sass.frontend import inventory
from tools.tensor_copy_forms import forms_after, is_tensor_copy, line
from tools.tensor_copy_variants import check

MARKER = "branch isa34"


def test_the_inventory_has_the_forms():
    forms = forms_after(MARKER)
    names = {f.spelling for f in forms}
    assert len(forms) == 281
    # a few the manual's syntax allows and ptxas takes (sm_100a)
    for spelling in (
            "cp.async.bulk.tensor.5d.shared::cta.global.im2col.mbarrier::complete_tx::bytes.cta_group::2.L2::cache_hint",
            "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes.multicast::cluster",
            "cp.async.bulk.tensor.5d.shared::cluster.global.im2col::w::128.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::1.L2::cache_hint",
            "cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.tile::scatter4.bulk_group.L2::cache_hint",
            "cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes"):
        assert spelling in names, spelling
    # the plain ones are sm_90's (PTX 8.6 into shared::cta), cta_group sm_100a-like only
    by = {f.spelling: f for f in forms}
    assert by["cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes"].valid_on(90, (8, 6))
    assert not by["cp.async.bulk.tensor.5d.shared::cta.global.im2col.mbarrier::complete_tx::bytes.cta_group::2"
                  ".L2::cache_hint"].valid_on(100, (9, 0))


SAMPLE = forms_after(MARKER)[::23] if any(is_tensor_copy(f) for f in inventory.forms()) else []


@pytest.mark.parametrize("form", SAMPLE, ids=[f.spelling for f in SAMPLE])
@pytest.mark.parametrize("per_lane", [False, True])
def test_a_sample_compiles_as_ptxas(form, per_lane):
    status, detail = check(line(form, per_lane), "sm_100a")
    assert status == "match", detail


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_the_plain_shared_cta_forms_on_other_targets(arch):
    sm = int(arch[3:])
    # (sm_120's multicast: ptxas calls a routine of its own there, ours refuses it by name)
    plain = [f for f in forms_after(MARKER) if f.valid_on(sm, (8, 7))
             and not (sm == 120 and ".multicast::cluster" in f.modifiers)]
    assert plain
    for form in plain[::4]:
        status, detail = check(line(form, True), arch)
        assert status == "match", (form.spelling, detail)
