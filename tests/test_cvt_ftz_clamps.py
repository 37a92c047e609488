"""cvt with .ftz and a clamp (.relu/.satfinite), checked against ptxas 13.5's verdicts and
words: a clamp after .ftz "cannot be combined", before it (or on a packed type) .ftz is
illegal. Ours passed a machine operand back into the selection and stopped with
"operand VOp(...) of `cvt` not supported yet" (fuzz campaign 9, seed 20000694)."""
import re

import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.errors import CompileError

CASES = ["cvt.rz.ftz.relu.bf16.f32 %h1, %r1;", "cvt.rn.ftz.relu.satfinite.bf16.f32 %h1, %r1;",
         "cvt.rn.ftz.satfinite.relu.f16.f32 %h1, %r1;", "cvt.rn.relu.ftz.f16.f32 %h1, %r1;",
         "cvt.rn.ftz.relu.f16x2.f32 %r3, %r1, %r2;", "cvt.rn.ftz.satfinite.e4m3x2.f32 %h1, %r1, %r2;",
         "cvt.rz.ftz.bf16.f32 %h1, %r1;"]


@pytest.mark.parametrize("stmt", CASES)
def test_ftz_with_clamps_as_ptxas(stmt):
    ptx = (".version 8.3\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b16 %h<3>; .reg .b32 %r<4>; .reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
           "cvta.to.global.u64 %rd1, %rd1;\nld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1+4];\n"
           f"{stmt}\nst.global.u16 [%rd1+8], %h1;\nret;\n}}\n")
    theirs = oracle.ptxas(ptx, "sm_89")
    try:
        ptx2sass.compile(ptx, "sm_89", "k.ptx")
    except CompileError as e:
        assert not theirs.ok, str(e)
        assert re.search(r"error\s*: (.*)", theirs.stderr).group(1).strip() in str(e)
        return
    assert theirs.ok, theirs.stderr


VERSIONED = [("8.0", "cvt.rna.satfinite.tf32.f32 %r3, %r1;"), ("8.0", "cvt.rz.satfinite.bf16.f32 %h1, %r1;"),
             ("8.0", "cvt.rn.satfinite.f16.f32 %h1, %r1;"), ("8.0", "cvt.rn.satfinite.f16x2.f32 %r3, %r1, %r2;"),
             ("8.0", "cvt.rn.satfinite.e4m3x2.f32 %h1, %r1, %r2;"), ("8.3", "cvt.rn.tf32.f32 %r3, %r1;"),
             ("8.3", "cvt.rz.relu.tf32.f32 %r3, %r1;"), ("8.3", "cvt.rna.satfinite.tf32.f32 %r3, %r1;"),
             ("8.1", "cvt.rn.satfinite.e4m3x2.f32 %h1, %r1, %r2;"), ("7.8", "cvt.rn.f16x2.e5m2x2 %r3, %h1;")]


@pytest.mark.parametrize("version,stmt", VERSIONED)
def test_satfinite_and_tf32_need_what_ptxas_needs(version, stmt):
    """.satfinite on cvt to f16/bf16(x2)/tf32 needs PTX 8.1 (campaign 9 compiled it at 8.0
    silently); tf32's .rn/.rz are sm_90 PTX (ours said 'not supported yet' on sm_89); fp8
    pairs on sm_89 need PTX 8.1 (accepted at any version before)."""
    ptx = (f".version {version}\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n"
           ".reg .b16 %h<3>; .reg .b32 %r<4>; .reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
           "cvta.to.global.u64 %rd1, %rd1;\nld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1+4];\n"
           f"mov.b16 %h1, 0;\nmov.u32 %r3, 0;\n{stmt}\nst.global.u16 [%rd1+8], %h1;\n"
           "st.global.u32 [%rd1+12], %r3;\nret;\n}\n")
    theirs = oracle.ptxas(ptx, "sm_89")
    try:
        ptx2sass.compile(ptx, "sm_89", "k.ptx")
    except CompileError as e:
        assert not theirs.ok, str(e)
        assert re.search(r"error\s*: (.*)", theirs.stderr).group(1).strip() in str(e)
        return
    assert theirs.ok, theirs.stderr


LINES = ["cvt.rn.ftz.relu.satfinite.f16.f32 %h1, %r1;", "cvt.rn.satfinite.relu.ftz.f16.f32 %h1, %r1;",
         "cvt.rn.ftz.relu.f16.f32 %h1, %r1;", "cvt.rn.satfinite.ftz.f16.f32 %h1, %r1;",
         "cvt.rn.satfinite.ftz.relu.bf16.f32 %h1, %r1;", "cvt.rz.relu.ftz.satfinite.bf16.f32 %h1, %r1;",
         "cvt.rn.relu.ftz.bf16.f32 %h1, %r1;", "cvt.rn.ftz.sat.relu.f16.f32 %h1, %r1;",
         # a clamp with a rounding other than .rn/.rz (ours took .rm/.rp, then 'not supported
         # yet' at isel; tools/cvt_modifier_mutants.py seed 3101)
         "cvt.rm.relu.bf16.f32 %h1, %r1;", "cvt.rp.satfinite.f16.f32 %h1, %r1;",
         "cvt.rm.relu.satfinite.bf16.f32 %h1, %r1;", "cvt.rna.relu.bf16.f32 %h1, %r1;"]


@pytest.mark.parametrize("stmt", LINES)
def test_ftz_with_clamps_lines_as_ptxas(stmt):
    """Every line ptxas gives, in its order (branch cvt31): into bf16 each clamp "cannot be
    combined" with .ftz (.relu's first), into f16 .ftz is illegal (after .satfinite's line),
    whatever the order written."""
    from tests.ptxas_refusals import assert_refused_as_ptxas
    ptx = (".version 9.1\n.target sm_100a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b16 %h<3>; .reg .b32 %r<4>; .reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
           f"ld.global.u32 %r1, [%rd1];\n{stmt}\nst.global.u16 [%rd1+8], %h1;\nret;\n}}\n")
    assert_refused_as_ptxas(ptx, "sm_100a")


REPEATED = ["cvt.relu.rn.relu.f16.f32 %h1, %r1;", "cvt.satfinite.rn.satfinite.e5m2x2.bf16x2 %h1, %r1;",
            "cvt.relu.rn.satfinite.relu.e4m3x2.f32 %h1, %r1, %r2;"]


@pytest.mark.parametrize("stmt", REPEATED)
def test_repeated_clamp_taken_as_once(stmt):
    """ptxas 13.5.37 takes a .relu or .satfinite written twice as once (ours: "Illegal
    modifier"; seeds 3101/3102 of tools/cvt_modifier_mutants.py)."""
    ptx = (".version 9.1\n.target sm_100a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b16 %h<3>; .reg .b32 %r<4>; .reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"
           f"ld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1+4];\n{stmt}\nst.global.u16 [%rd1+8], %h1;\nret;\n}}\n")
    assert oracle.ptxas(ptx, "sm_100a").ok
    ptx2sass.compile(ptx, "sm_100a", "k.ptx")
