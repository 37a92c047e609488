"""`stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16` on sm_90 (was 'PTX instruction
`stmatrix` not supported yet'): STSM.16.M88/MT88[.2/.4] as ptxas 13.5 writes it, at a
shared address or a generic one's low word. Ours and ptxas's cubins run in the emulator
(emu/ops_memory.py's STSM: LDSM's inverse) and leave the shared bytes the PTX ISA's
fragment layout gives (NumPy model below); ptxas's listing has the same STSM forms."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %g, %ga;
.reg .b32 %sa, %sb, %tx, %row, %a<4>, %v, %i;
.reg .pred %p;
.shared .align 16 .b8 sbuf[512];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %g, %tx, 16;
add.s64 %rdi, %rdi, %g;
ld.global.v4.u32 {{%a0,%a1,%a2,%a3}}, [%rdi];
mov.u32 %sa, sbuf;
mov.u32 %i, 0;
L_zero:
mad.lo.u32 %sb, %i, 4, %sa;
mad.lo.u32 %sb, %tx, 16, %sb;
st.shared.u32 [%sb], 0;
add.u32 %i, %i, 1;
setp.lt.u32 %p, %i, 4;
@%p bra L_zero;
bar.sync 0;
and.b32 %row, %tx, {rows};
mad.lo.u32 %sb, %row, 16, %sa;
cvta.shared.u64 %ga, sbuf;
mul.wide.u32 %g, %row, 16;
add.s64 %ga, %ga, %g;
stmatrix.sync.aligned.m8n8.x{n}{trans}{space}.b16 [{addr}], {{{regs}}};
bar.sync 0;
mul.wide.u32 %g, %tx, 16;
add.s64 %rdo, %rdo, %g;
mad.lo.u32 %sb, %tx, 16, %sa;
ld.shared.v4.u32 {{%a0,%a1,%a2,%a3}}, [%sb];
st.global.v4.u32 [%rdo], {{%a0,%a1,%a2,%a3}};
ret;
}}
"""
STSM = re.compile(r"\bSTSM(?:\.\w+)*")


def model(words: np.ndarray, n: int, trans: bool) -> np.ndarray:
    """The shared bytes (as u16) after stmatrix: matrix i at 128 * i, row r at + 16 r."""
    out = np.zeros(512 // 2, np.uint16)
    for i in range(n):
        lanes = np.arange(32)
        elems = np.zeros((8, 8), np.uint16)
        w = words[:, i]
        elems[lanes // 4, 2 * (lanes % 4)] = w & 0xFFFF
        elems[lanes // 4, 2 * (lanes % 4) + 1] = w >> 16
        if trans:
            elems = elems.T
        out[64 * i:64 * i + 64] = elems.reshape(-1)
    return out


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("space", [".shared", "", ".shared::cta"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_stmatrix(n, trans, space, arch):
    addr = "%ga" if space == "" else "%sb"
    regs = ",".join(f"%a{k}" for k in range(n))
    ptx = KERNEL.format(n=n, trans=".trans" if trans else "", space=space, addr=addr,
                        regs=regs, rows=8 * n - 1)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert STSM.findall(oracle.nvdisasm(ours)) == STSM.findall(oracle.nvdisasm(theirs.output))
    x = np.random.default_rng(n * 10 + trans).integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    want = model(x, n, trans)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(128, np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.reshape(-1).copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out.view(np.uint16), want, err_msg=name)
