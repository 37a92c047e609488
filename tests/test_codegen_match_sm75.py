"""match.all.sync on sm_75 (found by the sm_75 fuzz campaign, branch archfuzz): ours wrote
MATCH.ALL, which the turing table lacks ("cannot encode"); ptxas writes MATCH.ANY and
compares the equal lanes with the member mask. Ours = ptxas's cubin = the PTX semantics
computed in Python."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

MATCH = """.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 p){
 .reg .b32 %r<12>; .reg .b64 %rd<6>; .reg .pred %p<3>;
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3,%r1,16; add.s64 %rd2,%rd2,%rd3;
 ld.global.u32 %r2,[%rd2]; ld.global.u64 %rd4,[%rd2+8];
 match.all.sync.b32 %r3|%p1, %r2, 0xffffffff; match.all.sync.b64 %r4|%p2, %rd4, 0xffffffff;
 selp.u32 %r5,1,0,%p1; selp.u32 %r6,1,0,%p2;
 st.global.v4.u32 [%rd2],{%r3,%r4,%r5,%r6}; ret;}
"""


@pytest.mark.parametrize("case", ["all_equal", "one_differs", "high_word_differs"])
def test_match_all_sm75(case):
    lo = np.full(32, 7, dtype=np.uint32)
    wide = np.full(32, 0x500000007, dtype=np.uint64)
    if case == "one_differs":
        lo[5] = 8
        wide[9] = 0x500000008
    elif case == "high_word_differs":
        wide[31] = 0x600000007
    want32 = 0xFFFFFFFF if (lo == lo[0]).all() else 0
    want64 = 0xFFFFFFFF if (wide == wide[0]).all() else 0
    for cubin in (oracle.ptxas(MATCH, "sm_75").output, compile_ptx(MATCH, "sm_75")):
        buf = np.zeros((32, 4), dtype=np.uint32)
        buf[:, 0] = lo
        buf[:, 2:4] = wide.view(np.uint32).reshape(32, 2)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [buf])
        assert not res.hazards, res.hazards[:3]
        assert (buf[:, 0] == want32).all() and (buf[:, 1] == want64).all()
        assert (buf[:, 2] == int(want32 != 0)).all() and (buf[:, 3] == int(want64 != 0)).all()
