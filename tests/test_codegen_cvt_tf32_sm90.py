"""`cvt.rn.tf32.f32` / `cvt.rz.tf32.f32` on sm_90 (was 'not supported yet'): one
F2FP.TF32.F32.PACK_B[.RZ] as ptxas 13.5. Ours and ptxas's cubins in the emulator = the
exact rounding to TF32's 10 mantissa bits (nearest even / toward zero, in integer
arithmetic on the bit patterns: ties, carries into the exponent, overflow to infinity,
subnormals, ±0, ±inf; NaN inputs left out: the model does not know their result)."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %g;
.reg .b32 %a, %b, %t;
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, 4;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
ld.global.u32 %a, [%ri];
cvt.{rnd}.tf32.f32 %b, %a;
st.global.u32 [%ro], %b;
ret;
}}
"""


def model(x: np.ndarray, rnd: str) -> np.ndarray:
    x = x.astype(np.uint64)
    if rnd == "rz":
        return (x & 0xFFFFE000).astype(np.uint32)
    low, odd = x & 0x1FFF, (x >> 13) & 1
    up = (low > 0x1000) | ((low == 0x1000) & (odd == 1))
    r = (x & 0xFFFFE000) + np.where(up, 0x2000, 0)
    inf = (x & 0x7FFFFFFF) == 0x7F800000
    return np.where(inf, x, r).astype(np.uint32)


@pytest.mark.parametrize("rnd", ["rn", "rz"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_cvt_tf32(rnd, arch):
    ptx = KERNEL.format(rnd=rnd)
    if arch != "sm_90":       # the same F2FP there (blackwell table: cvt_tf32_sm120.ptx)
        ptx = ptx.replace(".version 8.6\n.target sm_90", ".version 8.8\n.target " + arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    forms = re.compile(r"\bF2FP(?:\.\w+)*")
    assert forms.findall(oracle.nvdisasm(ours)) == forms.findall(oracle.nvdisasm(theirs.output))
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    x[:16] = [0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF, 0x7F7FF000, 0x7F7FFFFF, 0xFF7FF000,
              0x00001000, 0x00003000, 0x80000000, 0, 0x7F800000, 0xFF800000, 0x3FFFF000, 0x0000FFFF, 0x807FF000]
    x = np.where((x & 0x7FFFFFFF) > 0x7F800000, x & 0xFF7FFFFF, x).astype(np.uint32)   # no NaN
    want = model(x, rnd)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(256, np.uint32)
        res = run(cubin, "k", 1, 256, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)


@pytest.mark.parametrize("mods", [".relu", ".satfinite", ".satfinite.relu"])
@pytest.mark.parametrize("rnd", ["rn", "rz"])
@pytest.mark.parametrize("arch", ["sm_100a", "sm_120"])
def test_cvt_tf32_clamps(mods, rnd, arch):
    """cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32 (branch cvt31; was 'not supported yet'):
    F2FP[.SATFINITE][.RELU].TF32.F32.PACK_B[.RZ] as ptxas; .satfinite makes an infinite
    result (infinities, a rounded-up overflow) the largest finite tf32 of its sign, .relu
    negatives and -0 +0 (the PTX ISA's clamps; not hardware-checked)."""
    ptx = KERNEL.format(rnd=rnd + mods).replace(".version 8.6\n.target sm_90", ".version 9.1\n.target " + arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    forms = re.compile(r"\bF2FP(?:\.\w+)*")
    assert forms.findall(oracle.nvdisasm(ours)) == forms.findall(oracle.nvdisasm(theirs.output))
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    x[:10] = [0x7F7FF000, 0x7F7FFFFF, 0xFF7FF000, 0x7F800000, 0xFF800000, 0x80000000, 0, 0x3F801000,
              0xBF801000, 0x807FF000]
    x = np.where((x & 0x7FFFFFFF) > 0x7F800000, x & 0xFF7FFFFF, x).astype(np.uint32)   # no NaN
    want = model(x, rnd).astype(np.uint64)
    if "satfinite" in mods:
        big = (want & 0x7FFFFFFF) >= 0x7F800000
        want = np.where(big, (want & 0x80000000) | 0x7F7FE000, want)
    if "relu" in mods:
        want = np.where(want & 0x80000000, 0, want)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(256, np.uint32)
        res = run(cubin, "k", 1, 256, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want.astype(np.uint32), err_msg=name)
