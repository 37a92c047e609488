"""Counted loops tested at the top with the induction step in the body
(`i = 0; LOOP: setp.lt p, i, N; @!p bra END; ...; add i, i, 1; bra LOOP`), the shape
a C `for` loop takes before loop rotation and the fuzz generator's loop shape. The trip
count was evaluated from the header's instructions only, so such loops stayed loops
(fuzz seed 20000044: 389 emulated cycles, ptxas 172, which unrolls the loop and folds it).
Ours and ptxas's cubins run on the same inputs: outputs bit-identical; up to 16 trips the
loop is unrolled fully (as bottom-tested loops are) and takes no more emulated cycles than
ptxas's code (ptxas keeps this loop, rotated to a bottom test)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

LOOP = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<12>;
.reg .f32 %f<8>;
.reg .b64 %rd<8>;
.reg .pred %p<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
ld.global.f32 %f1, [%rd4];
ld.global.u32 %r2, [%rd4+256];
mov.u32 %r3, 0;
mov.u32 %r4, TRIPS;
LOOP:
setp.lt.u32 %p1, %r3, %r4;
@!%p1 bra.uni END;
fma.rn.f32 %f1, %f1, 0f3F000000, 0f3F800000;
xor.b32 %r2, %r2, %r3;
add.u32 %r3, %r3, STEP;
bra.uni LOOP;
END:
add.s64 %rd5, %rd1, %rd3;
st.global.f32 [%rd5], %f1;
st.global.u32 [%rd5+256], %r2;
ret;
}
"""


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


@pytest.mark.parametrize("trips,step", [(5, 1), (12, 3), (0, 1), (64, 1)])
def test_top_tested_counted_loop_unrolls_as_ptxas(trips, step):
    ptx = LOOP.replace("TRIPS", str(trips)).replace("STEP", str(step))
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(trips).integers(0, 1 << 30, 128, dtype=np.uint32)
    data[:64] = np.random.default_rng(step).standard_normal(64).astype(np.float32).view(np.uint32)
    outs, cycles = [], []
    for cubin in (ours, theirs):
        out = np.zeros(128, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
        cycles.append(res.cycles)
    assert outs[0].tobytes() == outs[1].tobytes()
    if trips <= 16:
        mine = _ops(ours)
        assert not [o for o in mine[:mine.index("EXIT")] if "BRA" in o], mine
        assert cycles[0] <= cycles[1], cycles
