"""Loads from a `.local` array whose stores are known take the stored values
(`opt/forward_local_stores.py`): a table of constants written then read at constant offsets
(bytes with sign and zero extension, a vector, a 64-bit value across two stores, a stored
register read back whole) has no local memory left (ptxas keeps this one in memory, but
forwards the fuzz programs' constant tables; before, ours stored and reloaded them: fuzz seed
21000155, 67 registers, ptxas 40). An array also read at a
computed index, and one written under a guard, keep their memory. Ours and ptxas's cubins
run on the same inputs: outputs bit-identical."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

TABLE = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.local .align 16 .b32 t[8];
.reg .b16 %h<4>;
.reg .b32 %r<20>;
.reg .b64 %rd<12>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
ld.global.u32 %r2, [%rd4];
setp.ne.u32 %p1, %r2, 7;
st.local.u32 [t], 2654435769;
st.local.u32 [t+4], 0x80ff7f01;
st.local.v2.u32 [t+8], {1013904242, 3668340011};
STORE12
st.local.u32 [t+16], %r2;
st.local.u32 [t+20], 5;
ld.local.s8 %h1, [t+5];
ld.local.u16 %h2, [t+6];
ld.local.v4.u32 {%r3, %r4, %r5, %r6}, [t];
ld.local.u64 %rd5, [t+8];
ld.local.u32 %r7, [t+16];
ld.local.s8 %r8, [t+7];
DYNAMIC
cvt.u32.u16 %r9, %h1;
cvt.u32.u16 %r10, %h2;
mul.wide.u32 %rd6, %r1, 64;
add.s64 %rd7, %rd1, %rd6;
st.global.v4.u32 [%rd7], {%r3, %r4, %r5, %r6};
st.global.u64 [%rd7+16], %rd5;
st.global.v4.u32 [%rd7+32], {%r7, %r8, %r9, %r10};
st.global.u32 [%rd7+48], %r11;
st.global.u32 [%rd7+52], %r12;
ret;
}
"""
VARIANTS = {
    "constants": ("st.local.u32 [t+12], 17;", "mov.u32 %r11, 1; mov.u32 %r12, 2;"),
    "computed_index": ("st.local.u32 [t+12], 17;",
                       "and.b32 %r13, %r2, 7; shl.b32 %r13, %r13, 2; mov.u32 %r14, t; add.u32 %r14, %r14, %r13; "
                       "ld.local.u32 %r11, [%r14]; mov.u32 %r12, 2;"),
    "guarded_store": ("@%p1 st.local.u32 [t+12], 17;", "ld.local.u32 %r11, [t+12]; mov.u32 %r12, 2;"),
}


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_local_loads_take_the_stored_values(variant):
    store12, dynamic = VARIANTS[variant]
    ptx = TABLE.replace("STORE12", store12).replace("DYNAMIC", dynamic)
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(8).integers(0, 16, 64, dtype=np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros((64, 16), dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert (outs[0][:, 0] == 2654435769).all() and (outs[0][:, 9] == 0xFFFFFF80).all()   # t[0]; s8 of 0x80
    if variant == "constants":
        local = lambda ops: [o for o in ops if o.startswith(("LDL", "STL"))]
        assert not local(_ops(ours)), _ops(ours)
