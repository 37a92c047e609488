"""`div.full.f32` by one denominator, several times in a block (Triton's softmax divides a
row's values by their sum): ptxas tests and scales the denominator once and takes one
reciprocal (one MUFU.RCP), scaling only each numerator. Ours expanded every division alone,
each with its own copy of the denominator live at once (softmax_rows_w1: 30 registers,
ptxas 20). Ours and ptxas's cubins run on the same inputs (denominators huge, subnormal,
zero, infinite, NaN and ordinary): outputs bit-identical; the MUFU.RCP count is ptxas's."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

DIVS = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<4>;
.reg .f32 %f<20>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 20;
add.s64 %rd4, %rd2, %rd3;
ld.global.f32 %f1, [%rd4];
ld.global.f32 %f2, [%rd4+4];
ld.global.f32 %f3, [%rd4+8];
ld.global.f32 %f4, [%rd4+12];
ld.global.f32 %f5, [%rd4+16];
div.fullFTZ.f32 %f6, %f1, %f5;
div.fullFTZ.f32 %f7, %f2, %f5;
div.fullFTZ.f32 %f8, %f3, %f5;
div.fullFTZ.f32 %f9, %f4, %f5;
mul.wide.u32 %rd5, %r1, 16;
add.s64 %rd6, %rd1, %rd5;
st.global.v4.f32 [%rd6], {%f6, %f7, %f8, %f9};
ret;
}
"""


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


@pytest.mark.parametrize("ftz", [False, True])
def test_divisions_by_one_denominator_share_its_reciprocal(ftz):
    ptx = DIVS.replace("FTZ", ".ftz" if ftz else "")
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    rng = np.random.default_rng(11)
    den = np.array([3.0, -7.5, 2.0 ** 127, -2.0 ** 126 * 1.5, 1e-39, -3e-42, 0.0, -0.0, np.inf, np.nan,
                    1e-30, 6e37, 1.0, 2.0 ** -126, 2.0 ** 126, 0.1] * 4, dtype=np.float32)
    num = rng.standard_normal((64, 4)).astype(np.float32) * np.float32(1e3)
    num[::5, 0] = np.float32(3e38)
    num[::7, 1] = np.float32(1e-40)
    num[::3, 2] = np.inf
    data = np.concatenate([num, den[:, None]], axis=1).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros((64, 4), dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    count = lambda ops: sum(o.startswith("MUFU.RCP") for o in ops)
    assert count(_ops(ours)) == count(_ops(theirs)) == 1, _ops(ours)
