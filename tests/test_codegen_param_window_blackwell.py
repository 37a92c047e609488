"""The parameter window on the blackwell archs (sm_100, sm_110, sm_120): ptxas 13.5 reads its
generic base at c[0x0][0x348] (the address of the first parameter, as sm_90's c[0x0][0x198])
and its last byte at c[0x0][0x350] for `cvta.param` and `isspacep.param` (refused before:
`Target.driver_cbank` had no param window there). Expected values: ptxas's cubin in the
emulator, which lays the window out from the same Target words."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 9.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u32 r)
{{
.reg .u64 %rd<8>; .reg .pred %p<3>; .reg .u32 %r<4>;
ld.param.u64 %rd1, [p];
mov.u64 %rd2, q;
cvta.param.u64 %rd3, %rd2;
ld.u64 %rd4, [%rd3];
mov.u64 %rd5, r;
cvta.param.u64 %rd6, %rd5;
ld.u32 %r3, [%rd6];
isspacep.param %p1, %rd3;
selp.u32 %r1, 1, 0, %p1;
isspacep.param %p2, %rd1;
selp.u32 %r2, 1, 0, %p2;
sub.u64 %rd7, %rd6, %rd3;
st.global.v2.u64 [%rd1], {{%rd4, %rd7}};
st.global.v4.u32 [%rd1+16], {{%r1, %r2, %r3, %r3}};
ret;
}}
"""


def _outputs(cubin: bytes) -> np.ndarray:
    out = np.zeros(8, dtype=np.uint32)
    run(cubin, "k", 1, 1, [out, np.uint64(0x1122334455667788), np.uint32(0xCAFE)])
    return out


@pytest.mark.parametrize("arch", ["sm_100", "sm_110", "sm_120"])
def test_cvta_and_isspacep_param_match_ptxas(arch):
    ptx = KERNEL.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    want = _outputs(theirs.output)
    # q's value read back through the window, r 8 bytes after q, in the window, p not
    assert want[:2].view(np.uint64)[0] == 0x1122334455667788
    assert want[2] == 8 and list(want[4:7]) == [1, 0, 0xCAFE]
    assert (_outputs(codegen.compile_ptx(ptx, arch)) == want).all()
