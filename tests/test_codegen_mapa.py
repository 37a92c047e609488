"""`mapa[.shared::cluster].{u32,u64} d, a, rank` on sm_90 (was 'PTX instruction `mapa` not
supported yet'): the address's rank byte (bits 24..31 of a shared-window address on sm_90)
replaced by the rank's low byte, `PRMT d, rank, 0x654, a` as ptxas 13.5; a generic address
keeps its high word. Ours and ptxas's cubins in the emulator = the model for every thread
(rank = the thread index and a parameter)."""
import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 r)
{
.reg .b64 %rdo, %g, %h;
.reg .b32 %a, %b, %rk, %c, %s;
.shared .align 4 .b32 sbuf[64];
ld.param.u64 %rdo, [out];
ld.param.u32 %rk, [r];
mov.u32 %a, sbuf;
mov.u32 %s, sbuf;
mov.u32 %c, %tid.x;
add.u32 %a, %a, %c;
mapa.shared::cluster.u32 %b, %a, %rk;
cvta.shared.u64 %g, sbuf;
mapa.u64 %h, %g, %c;
mul.wide.u32 %g, %c, 16;
add.s64 %rdo, %rdo, %g;
st.global.u32 [%rdo], %b;
st.global.u32 [%rdo+4], %s;
st.global.u64 [%rdo+8], %h;
ret;
}
"""


def test_mapa():
    theirs = oracle.ptxas(KERNEL, "sm_90")
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(KERNEL, "sm_90", "k.ptx"), "sm_90", filename="k.ptx")
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((32, 4), np.uint32)
        res = run(cubin, "k", 1, 32, [out, np.uint32(0x1234_5603)], hazard_check=name == "ours")
        assert not res.hazards
        base = out[0, 1]                  # the shared window address of sbuf (rank 0 here)
        t = np.arange(32, dtype=np.uint32)
        np.testing.assert_array_equal(out[:, 0], ((base + t) & 0xFFFFFF) | (0x03 << 24), err_msg=name)
        generic = out[:, 2].astype(np.uint64) | out[:, 3].astype(np.uint64) << 32
        assert (out[:, 2] >> 24 == t).all(), name
        assert (out[:, 2] & 0xFFFFFF == base & 0xFFFFFF).all(), name
        assert len(set(out[:, 3])) == 1 and generic[0] >> 32 != 0, name
