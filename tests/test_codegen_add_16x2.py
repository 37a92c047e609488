"""add.{u16x2,s16x2} on sm_90+ (was an internal error, KeyError 'u16x2'): one VIADD.16x2 as
ptxas 13.5 writes it (forms probed from tools/isa_seeds/viadd_16x2.ptx); ours and ptxas's
cubins in the emulator against NumPy's per-half wrapping add."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %t;
.reg .b32 %a, %b, %c, %d, %tx;
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %t, %tx, 8;
add.s64 %rdi, %rdi, %t;
add.s64 %rdo, %rdo, %t;
ld.global.v2.b32 {{%a, %b}}, [%rdi];
add.{ty} %c, %a, %b;
add.{ty} %d, %c, %a;
st.global.v2.b32 [%rdo], {{%c, %d}};
ret;
}}
"""


def _add16x2(a, b):
    lo = (a + b) & 0xFFFF
    hi = ((a >> 16) + (b >> 16)) & 0xFFFF
    return (hi << 16 | lo).astype(np.uint32)


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
@pytest.mark.parametrize("ty", ["u16x2", "s16x2"])
def test_add_16x2(arch, ty):
    ptx = KERNEL.format(arch=arch, ty=ty).replace(".version 8.0", ".version 8.8" if arch == "sm_120" else ".version 8.0")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    rng = np.random.default_rng(6)
    x = rng.integers(0, 2**32, (64, 2), dtype=np.uint64)
    x[:8] = [[0xFFFFFFFF, 1], [0x7FFF7FFF, 0x00010001], [0x80008000, 0x80008000], [0, 0],
             [0xFFFF0000, 0x00010000], [0x0000FFFF, 1], [0x12345678, 0xEDCBA988], [0x8000, 0x8000]]
    x = x.astype(np.uint32)
    a, b = x[:, 0].astype(np.uint64), x[:, 1].astype(np.uint64)
    c = _add16x2(a, b)
    want = np.stack([c, _add16x2(c.astype(np.uint64), a)], axis=1)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((64, 2), np.uint32)
        res = run(cubin, "k", 1, 64, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
