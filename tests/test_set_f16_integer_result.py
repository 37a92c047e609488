"""`set` of f16/f16x2 sources into an integer result needs PTX 6.5 (ptxas 13.5: "Feature 'half
precision floating point set instruction with integer result' requires PTX ISA .version 6.5
or later"; ours compiled it at any version). Found by the per-form checker's sm_75 sample
(seed 38), whose kernels are written at a form's lowest version."""
import pytest

from ptx2sass import codegen, oracle
from ptxas_refusals import assert_refused_as_ptxas

# (instruction, result register, source register type)
FORMS = [("set.eq.s16.f16", "%h1", ".f16"), ("set.ne.u16.f16", "%h1", ".f16"),
         ("set.lt.ftz.u32.f16", "%r1", ".f16"), ("set.geu.or.s32.f16x2", "%r1", ".b32"),
         ("set.eq.and.s16.f16", "%h1", ".f16"), ("set.gt.f16.f16", "%h2", ".f16"),
         ("set.le.f16x2.f16x2", "%r1", ".b32")]


def _ptx(version, spelling, dst, src_type):
    bool_op = ".and." in spelling or ".or." in spelling
    return f""".version {version}
.target sm_75
.address_size 64
.visible .entry k(.param .u64 p)
{{
.reg .b64 %rd<4>; .reg .b16 %h<4>; .reg .b32 %r<4>; .reg .pred %p<2>;
.reg {src_type} %s<3>;
ld.param.u64 %rd1, [p];
ld.global{'.b16' if src_type == '.f16' else '.b32'} %s1, [%rd1];
setp.ne.u64 %p1, %rd1, 0;
{spelling} {dst}, %s1, %s1{', %p1' if bool_op else ''};
st.global.b{16 if dst.startswith('%h') else 32} [%rd1], {dst};
ret;
}}
"""


@pytest.mark.parametrize("version", ["6.3", "6.4", "6.5"])
@pytest.mark.parametrize("spelling,dst,src_type", FORMS)
def test_integer_result_needs_ptx_6_5(version, spelling, dst, src_type):
    ptx = _ptx(version, spelling, dst, src_type)
    theirs = oracle.ptxas(ptx, "sm_75")
    if theirs.ok:
        codegen.compile_ptx(ptx, "sm_75")
        assert version == "6.5" or spelling.split(".")[-2] in ("f16", "f16x2")
    else:
        assert_refused_as_ptxas(ptx, "sm_75")
