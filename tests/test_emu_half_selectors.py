"""The packed-half operand selector `.H0_NH1` (the pair times i: low = -high, high = low).

ptxas 13.5.37 writes the cross terms of CUDA's `__hcmadd` (a complex multiply-add of half2
values, four `fma.rn.f16` in the PTX) as `HFMA2 R7, R3.H1_H1, R3.H0_NH1, R0`. The emulator
read `.H0_NH1` as no selector at all, so ptxas's cubin computed something else than the PTX
(the real-world corpus's intrinsics_misc.cu, k_halfmath). Expected values: each `fma.rn.f16`
exactly rounded (a product of halves and a half sum are exact in binary64, so one rounding
to binary16 is the PTX ISA's result)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run as emu_run

# d = (x0*x0 - x1*x1 + x0, x0*x1 + x1*x0 + x1) as nvcc writes __hcmadd(x, x, x)
PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 o, .param .u64 a)
{{
    .reg .b16 %rs<21>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [o];
    ld.param.u64 %rd2, [a];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.v2.u16 {{%rs19, %rs20}}, [%rd6];
    fma.rn.f16 %rs1, %rs19, %rs19, %rs19;
    fma.rn.f16 %rs5, %rs19, %rs20, %rs20;
    neg.f16 %rs9, %rs20;
    fma.rn.f16 %rs11, %rs9, %rs20, %rs1;
    fma.rn.f16 %rs15, %rs20, %rs19, %rs5;
    add.s64 %rd7, %rd3, %rd5;
    st.global.v2.u16 [%rd7], {{%rs11, %rs15}};
    ret;
}}
"""


def _fma(a, b, c):
    return (a.astype(np.float64) * b + c).astype(np.float16)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_ptxas_s_complex_multiply_add_computes_the_ptx(arch):
    ptx = PTX.format(arch=arch).replace(".version 8.0", ".version 8.7")
    got = oracle.ptxas(ptx, arch)
    assert got.output is not None, got.stderr
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (64, 2)).astype(np.float16)
    out = np.zeros((64, 2), np.float16)
    emu_run(got.output, "k", (1, 1, 1), (64, 1, 1), [out.view(np.uint16), x.view(np.uint16)])
    x0, x1 = x[:, 0], x[:, 1]
    rs1, rs5 = _fma(x0, x0, x0), _fma(x0, x1, x1)
    want = np.stack([_fma(-x1, x1, rs1), _fma(x1, x0, rs5)], axis=1)
    assert out.view(np.uint16).tolist() == want.view(np.uint16).tolist()
