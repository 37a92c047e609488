"""ld/st .v8 of 8- and 16-bit elements (128 bits, any target; ptxas 13.5 takes them for sm_89,
where 256-bit .v8 of 32-bit elements needs sm_100): we refused them with the 256-bit message.
Ours copies what the PTX manual says (NumPy); ptxas's cubin stores only the first element."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run


@pytest.mark.parametrize("ty,reg", [("b16", "%h"), ("b8", "%h")])
def test_v8_subword_copy_equals_ptxas(ty, reg):
    n = 8
    size = 2 if ty == "b16" else 1
    regs = ", ".join(f"{reg}{i}" for i in range(n))
    # ptxas 13.5 crashes (signal 11) on these ld.v8 forms next to a store: two .v4 loads
    load = (f"ld.global.v4.{ty} {{%h0, %h1, %h2, %h3}}, [%rd2];\n"
            f"ld.global.v4.{ty} {{%h4, %h5, %h6, %h7}}, [%rd2+{4 * size}];")
    ptx = f""".version 8.3
.target sm_89
.address_size 64
.visible .entry k(.param .u64 pout, .param .u64 pin)
{{
.reg .b16 %h<8>; .reg .b64 %rd<6>; .reg .b32 %r<2>;
ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [pin];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 16;
add.s64 %rd2, %rd2, %rd4; add.s64 %rd1, %rd1, %rd4;
{load}
st.global.v8.{ty} [%rd1], {{{", ".join(f"{reg}{(i + 3) % n}" for i in range(n))}}};
ret;
}}
"""
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_89", "k.ptx")
    src = np.random.default_rng(2).integers(0, 256, 32 * 16, dtype=np.uint8)
    want = np.zeros(32 * 16, np.uint8)
    for t in range(32):
        for i in range(n):
            j = (i + 3) % n
            want[t * 16 + i * size: t * 16 + (i + 1) * size] = src[t * 16 + j * size: t * 16 + (j + 1) * size]
    results = []
    for cubin in (theirs.output, ours):
        out = np.zeros(32 * 16, np.uint8)
        run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, src.copy()])
        results.append(out)
    assert (results[1] == want).all()
    # ptxas 13.5 stores only the first element of st.global.v8.b16/.b8 (one STG.E.U16/.U8):
    # a ptxas bug, ours follows the PTX manual; its first element is right
    rows = results[0].reshape(32, 16)
    assert (rows[:, :size] == want.reshape(32, 16)[:, :size]).all() and not rows[:, size:].any()
