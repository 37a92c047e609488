"""Packed `add/sub/mul/fma.f32x2` (sm_100+; was an internal error, KeyError 'f32x2'): each
half the f32 operation with the instruction's modifiers (ptx2sass/f32x2.py). Expected
values: NumPy's float32 arithmetic (round to nearest) for add/sub/mul .rn, and ptxas 13.5's
sm_120 cubin in the emulator for every form (its two FADD/FMUL/FFMA); ours on sm_100 and
ptxas's sm_100 cubin (its FADD2/FMUL2/FFMA2 on register pairs) = ptxas's sm_120 results."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

FORMS = ["add.rn.f32x2", "sub.rz.f32x2", "mul.rn.ftz.f32x2", "add.rm.ftz.f32x2", "fma.rn.f32x2",
         "fma.rp.ftz.f32x2", "sub.rn.f32x2", "mul.rp.f32x2", "mul.rm.f32x2", "fma.rz.f32x2",
         "add.rp.f32x2"]


def _ptx(arch, form):
    fma = form.startswith("fma")
    return f""".version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<8>; .reg .b32 %r<4>; .reg .b64 %x<4>;
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 24; add.s64 %rd4, %rd2, %rd3;
ld.global.b64 %x0, [%rd4]; ld.global.b64 %x1, [%rd4+8]; ld.global.b64 %x2, [%rd4+16];
{form} %x3, %x0, %x1{", %x2" if fma else ""};
mul.wide.u32 %rd5, %r1, 8; add.s64 %rd6, %rd1, %rd5; st.global.b64 [%rd6], %x3;
ret;
}}"""


def _inputs():
    rng = np.random.default_rng(3)
    v = (rng.standard_normal(64 * 6) * 10.0 ** rng.integers(-3, 4, 64 * 6)).astype(np.float32)
    v[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, 3e38, 0.5, 1.0, -1.0]
    return v


def _run(cubin, data):
    out = np.zeros(64 * 2, np.float32)
    res = run(cubin, "k", 1, 64, [out, data.copy()], hazard_check=True)
    return out, res.hazards


@pytest.mark.parametrize("form", FORMS)
def test_f32x2_elementwise(form):
    data = _inputs()
    theirs, _ = _run(oracle.ptxas(_ptx("sm_120", form), "sm_120").output, data)
    for arch in ("sm_120", "sm_100"):
        ours, hazards = _run(codegen.compile_ptx(_ptx(arch, form), arch), data)
        assert not hazards, hazards[:3]
        np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32), err_msg=arch)
    packed, _ = _run(oracle.ptxas(_ptx("sm_100", form), "sm_100").output, data)
    np.testing.assert_array_equal(packed.view(np.uint32), theirs.view(np.uint32), err_msg="ptxas sm_100")
    if form in ("add.rn.f32x2", "sub.rn.f32x2"):
        a, b = data.reshape(64, 3, 2)[:, 0], data.reshape(64, 3, 2)[:, 1]
        with np.errstate(all="ignore"):
            want = (a + b if form.startswith("add") else a - b).ravel()
        np.testing.assert_array_equal(theirs, want)


@pytest.mark.parametrize("form", ["add.rm.ftz.sat.f32x2", "fma.rn.sat.f32x2"])
def test_f32x2_sat_refused_as_ptxas(form):
    ptx = _ptx("sm_120", form)
    theirs = oracle.ptxas(ptx, "sm_120")
    assert not theirs.ok and "Illegal modifier '.sat'" in theirs.stderr
    with pytest.raises(CompileError, match=r"line 10; error.*Illegal modifier '.sat' for instruction"):
        codegen.compile_ptx(ptx, "sm_120")
