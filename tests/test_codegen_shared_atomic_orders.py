"""Shared-memory atomics with a memory order (`atom.{release,acquire,acq_rel}[.scope].shared`,
was '`atom.shared` with .release not supported yet'): the release fences before ATOMS as for
global memory, and on sm_90 ptxas's CCTL.IVALL after an acquire beyond the CTA (none on
sm_89). Compared with ptxas 13.5: the fence/ATOMS sequence, and the values in the emulator
(each thread exchanges/adds into shared words, results = NumPy)."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.6
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %g;
.reg .b32 %s, %t, %v, %w, %x, %y, %z;
.shared .align 16 .b32 sb[128];
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
mov.u32 %t, %tid.x;
mov.u32 %s, sb;
mad.lo.u32 %s, %t, 16, %s;
st.shared.v4.u32 [%s], {{%t, %t, %t, %t}};
mul.wide.u32 %g, %t, 16;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
ld.global.u32 %v, [%ri];
atom.release.shared.exch.b32 %w, [%s], %v;
atom.acquire.gpu.shared.add.u32 %x, [%s+4], %v;
atom.acq_rel.cta.shared.exch.b32 %y, [%s+8], %x;
atom.acq_rel.sys.shared.add.u32 %z, [%s+12], %y;
st.global.v4.u32 [%ro], {{%w, %x, %y, %z}};
bar.sync 0;
ld.shared.v4.u32 {{%w, %x, %y, %z}}, [%s];
st.global.v4.u32 [%ro+512], {{%w, %x, %y, %z}};
ret;
}}
"""
ORDER = re.compile(r"\b(MEMBAR\.\w+\.\w+|CGAERRBAR|ERRBAR|CCTL\.IVALL|ATOMS\.\w+)")


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_shared_atomic_orders(arch):
    ptx = KERNEL.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert ORDER.findall(oracle.nvdisasm(ours)) == ORDER.findall(oracle.nvdisasm(theirs.output))
    x = np.random.default_rng(2).integers(0, 2**31, (32, 4), dtype=np.uint64).astype(np.uint32)
    t = np.arange(32, dtype=np.uint32)
    v = x[:, 0]
    old = np.stack([t, t, t, t], axis=1)                   # each atomic's old value
    words = np.stack([v, t + v, t, t + t], axis=1)          # the shared words afterwards
    want = np.concatenate([old, words]).astype(np.uint32)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((64, 4), np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
