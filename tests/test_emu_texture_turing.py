"""Textures and surfaces on sm_75 (issue 18): tests/test_emu_texture.py's kernels compiled by
ptxas and by us for sm_75 and run on the same bound objects, compared with that file's NumPy
model. The turing table lacked every TEX/TLD/TLD4/TXD form (sm_75 texture code was refused at
the line); branch arch10 probed ptxas's sm_75 words of them (tools/isa_seeds/turing_tex.words:
one word per opcode variant, from tools/isa_seeds/tex_surf.ptx)."""
from __future__ import annotations

import pytest

import tests.test_emu_texture as base
from tests.test_emu_texture import (  # noqa: F401  (collected here for each arch)
    test_tex_array_2d_point, test_tex_filtering_matches_model, test_tex_integer_coordinates_fetch,
    test_tex_level_integer_coordinates, test_tld4_footprint_order, test_tld4_with_a_component_mask,
    test_tex_normalized_address_modes)


@pytest.fixture(autouse=True, params=["sm_75"])
def arch(request, monkeypatch):
    monkeypatch.setattr(base, "ARCH", request.param)
    cubins = base.cubins
    # the kernels say `.target sm_89`; ptxas compiles a target only for it or above
    monkeypatch.setattr(base, "cubins", lambda ptx: cubins(ptx.replace(".target sm_89", ".target sm_75")))
    return request.param
