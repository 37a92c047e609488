"""Textures and surfaces on sm_90+ (issue 15/18): the emulator tests of
tests/test_emu_texture.py, each kernel compiled by ptxas and by us for the arch (the handle in
a uniform register: ULDC for parameter and module handles, an R2UR loop for per-thread
ones), both run on the same bound objects and compared with that file's NumPy model."""
from __future__ import annotations

import pytest

import tests.test_emu_texture as base
from tests.test_emu_texture import (  # noqa: F401  (collected here for each arch)
    test_size_queries, test_sured_2d, test_suld_b32_2d, test_suld_sizes_1d,
    test_sust_b32_geometries, test_sust_p_f32_rgba, test_tex_array_2d_point,
    test_tex_filtering_matches_model, test_tex_integer_coordinates_fetch,
    test_tex_level_integer_coordinates, test_tld4_footprint_order, test_tld4_with_a_component_mask,
    test_tex_normalized_address_modes, test_launch_file_textures, test_txq_descriptor_fields,
    test_suq_descriptor_fields)


@pytest.fixture(autouse=True, params=["sm_90"])
def arch(request, monkeypatch):
    monkeypatch.setattr(base, "ARCH", request.param)
    return request.param
