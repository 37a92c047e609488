"""isspacep.param / .param::entry (was 'not supported yet'): a range test of the driver's
parameter window, as ptxas writes it (sm_8x: the bank's base + the parameters' offset ..
base + the window-end word; sm_90: the two addresses). Ours and ptxas's cubins run in the
emulator on generic addresses inside and around the kernel's parameters (cvta.param of a
parameter's address) and on a global pointer; the expected answers are the PTX ISA's: an
address inside the kernel's parameters is in the param space, one outside is not (the
window's extent past them is the emulator's model: the kernel's parameter bytes). sm_75 was
refused (its window-end word, c[0x0][0x114], was not in the Target; fuzz campaign 15)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.3
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 pad, .param .u32 last)
{{
.reg .b64 %rdo, %a, %b;
.reg .b32 %r, %s, %k;
.reg .pred %p, %q;
ld.param.u64 %rdo, [out];
mov.u32 %k, %tid.x;
mov.u64 %a, out;
cvta.param.u64 %a, %a;
// thread k tests out's generic address + (k - 2): 0 and 1 lie before the parameters
cvt.u64.u32 %b, %k;
add.s64 %a, %a, %b;
add.s64 %a, %a, -2;
setp.eq.u32 %p, %k, 31;
selp.b64 %a, %rdo, %a, %p;       // thread 31: a global address
isspacep.param %p, %a;
isspacep.param::entry %q, %a;
selp.b32 %r, 1, 0, %p;
selp.b32 %s, 1, 0, %q;
mul.wide.u32 %b, %k, 8;
add.s64 %rdo, %rdo, %b;
st.global.v2.b32 [%rdo], {{%r, %s}};
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_isspacep_param(arch):
    ptx = KERNEL.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    # parameters: out (8 bytes), pad (8), last (4): 20 bytes from out's address
    want = np.zeros((32, 2), np.uint32)
    for k in range(31):
        want[k] = 1 if 0 <= k - 2 < 20 else 0
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((32, 2), np.uint32)
        res = run(cubin, "k", 1, 32, [out, np.uint64(0), np.uint32(0)], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
