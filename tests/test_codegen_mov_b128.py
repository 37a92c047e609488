"""`mov.b128 q, {a, b}` and `mov.b128 {a, b}, q` (PTX 8.3, sm_70+; was '`mov` packing 2
elements into b128 not supported yet'): the quad's words are the elements' words, first
element lowest. Ours and ptxas's cubins in the emulator, sm_89 and sm_90: the elements come
back swapped through two quads as NumPy says."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.3
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %g, %a, %b;
.reg .b32 %tx, %w<4>;
.reg .b128 %q<3>;
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %g, %tx, 16;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
ld.global.v2.u64 {{%a, %b}}, [%ri];
mov.b128 %q0, {{%b, %a}};
mov.b128 {{%a, %b}}, %q0;
ld.global.v4.u32 {{%w0, %w1, %w2, %w3}}, [%ri];
mov.b128 %q1, {{%w3, %w2, %w1, %w0}};
mov.b128 {{%w0, %w1, %w2, %w3}}, %q1;
xor.b32 %w0, %w0, %w3;
cvt.u64.u32 %g, %w0;
xor.b64 %a, %a, %g;
st.global.v2.u64 [%ro], {{%a, %b}};
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_mov_b128(arch):
    ptx = KERNEL.format(arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    x = np.random.default_rng(3).integers(0, 2**63, (32, 2), dtype=np.uint64)
    w = x.view(np.uint32).reshape(32, 4)
    want = np.stack([x[:, 1] ^ (w[:, 3] ^ w[:, 0]).astype(np.uint64), x[:, 0]], axis=1)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((32, 2), np.uint64)
        res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
