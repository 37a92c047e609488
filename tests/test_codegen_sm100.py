"""sm_100 family (B200 and kin) and sm_120: local-window addresses, CREDUX, the newer
Blackwell targets (issue 18 phase 2). Expected values come from ptxas 13.5's cubins and
NumPy; our own output is never the reference."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

# A local array reached through its generic address (`cvta.local`), as LLVM's debug code and
# calls write: each thread stores its values through the generic pointer and reads them
# back with ld.local; the generic base of the local window is a per-target driver word.
LOCAL_GENERIC = """.version 8.7
.target {target}
.address_size 64
.visible .entry lg(.param .u64 pout){{
 .local .align 8 .b8 buf[32];
 .reg .b32 r<8>; .reg .b64 d<8>;
 ld.param.u64 d0,[pout]; cvta.to.global.u64 d0,d0;
 mov.u32 r1,%tid.x; mov.u64 d1,buf; cvta.local.u64 d2,d1;
 mad.lo.u32 r2,r1,3,7; st.u32 [d2],r2; add.u32 r3,r2,r1; st.u32 [d2+12],r3;
 ld.local.u32 r4,[buf]; ld.local.u32 r5,[buf+12];
 cvta.to.local.u64 d3,d2; ld.local.u32 r6,[d3+12];
 add.u32 r4,r4,r5; add.u32 r4,r4,r6;
 mul.wide.u32 d4,r1,4; add.s64 d5,d0,d4; st.global.u32 [d5],r4; ret; }}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_cvta_local_uses_the_targets_window_word(arch):
    """cvta.local adds the local window's generic base, which the driver keeps at a
    per-target constant-bank word (sm_100/sm_120: not sm_8x's 0x20): ours = ptxas's = exact."""
    ptx = LOCAL_GENERIC.format(target=arch)
    tid = np.arange(64, dtype=np.uint32)
    want = (tid * 3 + 7) + 2 * (tid * 4 + 7)
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        out = np.zeros(64, dtype=np.uint32)
        res = run(cubin, "lg", (1, 1, 1), (64, 1, 1), [out])
        assert not res.hazards, res.hazards[:3]
        assert (out == want).all()
