"""getctarank (sm_90+, was 'PTX instruction `getctarank` not supported yet'): the CTA rank
bits of a shared::cluster address (bits 24..31 of the address's low word, for a generic
address too), ptxas 13.5's `SHF.L.U64.HI d, lo, 0x8, RZ`; ours and ptxas's cubins in the
emulator on random addresses and this CTA's own shared addresses, shared::cluster and
generic (rank 0: a launch without clusters is a cluster of one), against NumPy."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %g, %t, %h;
.reg .b32 %a, %r, %s, %u, %v, %tx, %sa;
.shared .align 8 .b8 sbuf[64];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %t, %tx, 16;
add.s64 %rdi, %rdi, %t;
add.s64 %rdo, %rdo, %t;
ld.global.u32 %a, [%rdi];
ld.global.u64 %g, [%rdi+8];
getctarank.shared::cluster.u32 %r, %a;
getctarank.u64 %s, %g;
mov.u32 %sa, sbuf;
add.u32 %sa, %sa, %tx;
getctarank.shared::cluster.u32 %u, %sa;
cvta.shared.u64 %h, sbuf;
getctarank.u64 %v, %h;
st.global.v4.u32 [%rdo], {{%r, %s, %u, %v}};
ret;
}}
"""


@pytest.mark.parametrize("arch,version", [("sm_90", "8.0"), ("sm_120", "8.8")])
def test_getctarank(arch, version):
    ptx = KERNEL.format(arch=arch, version=version)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**64, (32, 2), dtype=np.uint64)
    x[:, 0] &= 0xFFFFFFFF
    want = np.zeros((32, 4), np.uint32)
    want[:, 0] = (x[:, 0] >> np.uint64(24)).astype(np.uint32)
    want[:, 1] = ((x[:, 1] & np.uint64(0xFFFFFFFF)) >> np.uint64(24)).astype(np.uint32)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((32, 4), np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
