"""Unrolling: the largest number of copies dividing the trip count that fits; up to 32 trips, fully.

A tinygrad-style reduction (`ridx = -1; bra END; LOOP: ld.v4; max x4; END: ridx += 1;
setp.lt ridx, N; @p bra LOOP`) over N rows of 128-bit loads by one warp is bound by its loads'
latency: each exit test waits for the loads of the copies before it. With the copies chosen
from (32, 16, 8, 4, 5, 3, 7) a 50-trip loop ran 5 copies (ten waits for memory; tinygrad
logsumexp_float32__r_32_50_4, SM model 2.59x ptxas's, which unrolls the loop fully), and loops
of 17-32 trips unrolled fully only up to 16 (max_axis1_int32__r_2_32_25_4: 25 trips, 5 copies,
1.83x). Expected values: NumPy's row maxima, ptxas's cubin's outputs, and ptxas's time on the SM model."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee

REDUCE = """.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
.maxntid 32
{
.reg .s32 %r<8>;
.reg .u64 %rd<6>;
.reg .f32 %f<10>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mov.b32 %f9, 0fFF800000;
mov.u32 %r2, -1;
bra END;
LOOP:
shl.b32 %r3, %r2, 2;
mad.lo.s32 %r4, %r1, STRIDE, %r3;
cvt.s64.s32 %rd3, %r4;
mad.lo.s64 %rd3, %rd3, 4, %rd2;
ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd3+0];
max.f32 %f5, %f1, %f2;
max.f32 %f6, %f5, %f3;
max.f32 %f7, %f6, %f4;
max.f32 %f9, %f9, %f7;
END:
add.s32 %r2, %r2, 1;
setp.lt.s32 %p1, %r2, TRIPS;
@%p1 bra LOOP;
cvt.s64.s32 %rd4, %r1;
mad.lo.s64 %rd4, %rd4, 4, %rd1;
st.global.f32 [%rd4+0], %f9;
ret;
}
"""


@pytest.mark.parametrize("trips", [50, 36, 25])
def test_reduction_loop_waits_for_memory_few_times(trips):
    """50 trips ran 5 copies per exit test, 36 ran 4, 25 ran 5 (ptxas: fully unrolled): now 10,
    12 and full. SM model ours/ptxas, before -> after: 7373/2849 -> 4787/2849,
    5799/2369 -> 3116/2369, 3744/2011 -> 2511/2011; every "before" fails the bound. (Branch
    quality27: all three fully unrolled, MAX_TRIPS 64; see test_pre_schedule_load_window.py.)"""
    ptx = REDUCE.replace("TRIPS", str(trips)).replace("STRIDE", str(4 * trips))
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(trips).standard_normal(32 * 4 * trips).astype(np.float32)
    expected = data.reshape(32, 4 * trips).max(axis=1)
    sm, outs = [], []
    for cubin in (ours, theirs):
        out = np.zeros(32, dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=True,
                  timing=Tee.checked)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
        sm.append(from_result(res, "sm_89").cycles)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert np.array_equal(outs[0], expected)
    assert sm[0] <= 1.75 * sm[1], sm
