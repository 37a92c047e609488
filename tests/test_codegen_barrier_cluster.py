"""barrier.cluster.arrive[.release|.relaxed][.aligned] / barrier.cluster.wait[.acquire]
[.aligned] on sm_90 (was 'not supported yet'): as ptxas 13.5, a run-time test of the
driver's cluster-launch word c[0x0][0x140]: UCGABAR_ARV after the release fences /
UCGABAR_WAIT then CCTL.IVALL in a cluster launch, else (a CTA is its own cluster) nothing /
BAR.SYNC 0. Compared with ptxas's cubin: the cluster-barrier, fence and BAR instructions
in order; and in the emulator (no cluster launch): threads exchange values through shared
memory across warps around arrive + wait, as NumPy says."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %t;
.reg .b32 %tx, %o, %v, %sa, %sb;
.shared .align 4 .b32 sbuf[64];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %t, %tx, 4;
add.s64 %rdi, %rdi, %t;
add.s64 %rdo, %rdo, %t;
ld.global.u32 %v, [%rdi];
mov.u32 %sa, sbuf;
mad.lo.u32 %sb, %tx, 4, %sa;
st.shared.u32 [%sb], %v;
barrier.cluster.arrive{arrive};
barrier.cluster.wait{wait};
add.u32 %o, %tx, 37;
rem.u32 %o, %o, 64;
mad.lo.u32 %sb, %o, 4, %sa;
ld.shared.u32 %v, [%sb];
st.global.u32 [%rdo], %v;
ret;
}}
"""
ORDER = re.compile(r"\b(UCGABAR_\w+|MEMBAR\.\w+\.\w+|CGAERRBAR|ERRBAR|CCTL\.IVALL|BAR\.SYNC[\w.]*)")


@pytest.mark.parametrize("arrive,wait", [(".aligned", ".aligned"), ("", ""), (".release", ".acquire"),
                                         (".relaxed.aligned", ".acquire.aligned")])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_barrier_cluster(arrive, wait, arch):
    """sm_100/sm_120 (branch isa8): the cluster-launch word is c[0x0][0x36c] there (ptxas
    tests it with LDCU/UISETP, ours with LDC/ISETP); the same barrier instructions."""
    ptx = KERNEL.format(arrive=arrive, wait=wait, arch=arch, version="8.0" if arch == "sm_90" else "8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert sorted(ORDER.findall(oracle.nvdisasm(ours))) == sorted(ORDER.findall(oracle.nvdisasm(theirs.output)))
    x = np.random.default_rng(8).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    want = x[(np.arange(64) + 37) % 64]
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
