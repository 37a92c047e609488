"""Textures and surfaces on sm_120 (issue 18): tests/test_emu_texture.py's kernels compiled by
ptxas and by us for sm_120 and run on the same bound objects, compared with that file's NumPy
model. The handle is a uniform register named alone (`TEX R6, R12, R2, UR6, 2D`); a result
whose four components are all used has no component-mask operand (the blackwell table's
TEX/TLD/TLD4/TXD mask is an optional operand whose hidden default is 0xf, as ptxas's sm_120
words of tools/isa_seeds/tex_surf_uniform_full.ptx print). Surface accesses the table cannot
encode (SUST.P, 3D/2D_ARRAY without a clamp suffix) are refused at their line."""
from __future__ import annotations

import pytest

import tests.test_emu_texture as base
from ptx2sass import codegen
from ptx2sass.errors import CompileError
from tests.test_emu_texture import (  # noqa: F401  (collected here for each arch)
    test_size_queries, test_sured_2d, test_suld_b32_2d, test_suld_sizes_1d,
    test_sust_b32_geometries, test_sust_p_f32_rgba, test_tex_array_2d_point,
    test_tex_filtering_matches_model, test_tex_integer_coordinates_fetch,
    test_tex_level_integer_coordinates, test_tld4_footprint_order, test_tld4_with_a_component_mask,
    test_tex_normalized_address_modes, test_launch_file_textures)

# refused on sm_120 (no encoding form in the blackwell table): strict, so a table that gains
# the form turns them into failures to look at
REFUSED = {"test_sust_b32_geometries[sm_120-3d-clamp]", "test_sust_p_f32_rgba[sm_120]"}


@pytest.fixture(autouse=True, params=["sm_120"])
def arch(request, monkeypatch):
    monkeypatch.setattr(base, "ARCH", request.param)
    if request.node.name in REFUSED:
        request.applymarker(pytest.mark.xfail(strict=True, raises=CompileError,
                                              reason="no blackwell encoding: refused at the line"))
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


@pytest.mark.parametrize("target", ["sm_120", "sm_100"])
@pytest.mark.parametrize("ptx", [SUST_3D_CLAMP, TEX_LEVEL], ids=["sust_3d_clamp", "tex_level"])
def test_unencodable_texture_form_refused_at_its_line(arch, target, ptx):
    """A surface form the table lacks, TEX.LL (`tex.level`: no sm_120 encoding; fuzz crashes)
    and any texture code on sm_100 are refused at the instruction's line, not an internal error."""
    ptx = ptx.replace("sm_120", target)
    with pytest.raises(CompileError) as e:
        codegen.generate_module(codegen.lower_ptx(ptx, target, "k.ptx"), target, filename="k.ptx")
    assert "internal error" not in str(e.value) and "not supported yet" in str(e.value)
    assert ", line 1" in str(e.value)
