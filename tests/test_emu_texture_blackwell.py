"""Textures and surfaces on sm_120 and sm_100 (issue 18): tests/test_emu_texture.py's kernels
compiled by ptxas and by us for the arch and run on the same bound objects, compared with that
file's NumPy model. The handle is a uniform register named alone (`TEX R6, R12, R2, UR6, 2D`);
a result whose four components are all used has no component-mask operand (the blackwell
table's TEX/TLD/TLD4/TXD mask is an optional operand whose hidden default is 0xf, as ptxas's
sm_120 words of tools/isa_seeds/tex_surf_uniform_full.ptx print). sm_100's ptxas writes
TEX.LL at level -32.0 for a plain `tex`; the TEX.LL forms of every geometry, the 3D/2D_ARRAY
surface accesses with `.clamp` (no suffix) and SUST.P were probed into the blackwell table by
branch arch10 (tools/isa_seeds/blackwell_tex_ll_sust.words)."""
from __future__ import annotations

import re

import pytest

import tests.test_emu_texture as base
from ptx2sass import codegen, oracle
from tests.test_emu_texture import (  # noqa: F401  (collected here for each arch)
    test_size_queries, test_sured_2d, test_suld_b32_2d, test_suld_sizes_1d,
    test_sust_b32_geometries, test_sust_p_f32_rgba, test_tex_array_2d_point,
    test_tex_filtering_matches_model, test_tex_integer_coordinates_fetch,
    test_tex_level_integer_coordinates, test_tld4_footprint_order, test_tld4_with_a_component_mask,
    test_tex_normalized_address_modes, test_launch_file_textures)


@pytest.fixture(autouse=True, params=["sm_120", "sm_100"])
def arch(request, monkeypatch):
    monkeypatch.setattr(base, "ARCH", request.param)
    return request.param


SUST_3D_CLAMP = """.version 8.7
.target sm_120
.address_size 64
.visible .entry k(.param .u64 s, .param .u32 v)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [s];
	ld.param.u32 %r1, [v];
	mov.u32 %r2, %tid.x;
	sust.b.3d.b32.clamp [%rd1, {%r2, %r2, %r2, %r2}], {%r1};
	ret;
}
"""


TEX_LEVEL = SUST_3D_CLAMP.replace("sust.b.3d.b32.clamp [%rd1, {%r2, %r2, %r2, %r2}], {%r1};",
                                  "tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f5}], %f5;\n"
                                  "\tst.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};"
                                  ).replace(".reg .b32 %r<4>;", ".reg .b32 %r<4>;\n\t.reg .f32 %f<6>;")


def _unit_text(cubin: bytes) -> list[str]:
    """The texture/surface instructions of a cubin as nvdisasm prints them, registers unnamed."""
    text = oracle.nvdisasm(cubin, ("-c",))
    lines = [ln.split("*/", 1)[-1].strip(" ;") for ln in text.splitlines()
             if re.search(r"\b(TEX|TLD|TLD4|TXD|SULD|SUST|SURED)\b", ln)]
    return [re.sub(r"\bU?R\d+", "R", ln) for ln in lines]


@pytest.mark.parametrize("ptx", [SUST_3D_CLAMP, TEX_LEVEL], ids=["sust_3d_clamp", "tex_level"])
def test_formerly_refused_texture_forms_as_ptxas(arch, ptx):
    """`sust.b.3d...clamp` (SUST.D.BA.3D without a clamp suffix) and `tex.level` (TEX.LL) were
    refused for want of blackwell forms: both compile to ptxas's texture/surface instructions."""
    ptx = ptx.replace("sm_120", arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    assert _unit_text(ours) == _unit_text(theirs.output) != []
