"""`mov.b64 d, {a, b, c, d}` of four 16-bit registers (fuzz seed 8900308 refused it:
"`mov` packing 4 elements into b64"), guarded and not: against ptxas's cubin and the
manual's layout (the first element in the low bits) worked out with Python integers."""
import numpy as np
import pytest

PTX = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .pred %p0;
    .reg .b16 %h<4>;
    .reg .b32 %r<2>;
    .reg .b64 %d<6>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %d2, %r0, 8;
    add.s64 %d3, %d1, %d2;
    add.s64 %d4, %d0, %d2;
    ld.global.v4.u16 {{%h0, %h1, %h2, %h3}}, [%d3];
    and.b32 %r1, %r0, 1;
    setp.eq.u32 %p0, %r1, 0;
    mov.b64 %d5, 0x1122334455667788;
    {guard}mov.b64 %d5, {{%h0, %h1, %h2, %h3}};
    st.global.b64 [%d4], %d5;
    ret;
}}
"""


@pytest.mark.parametrize("guard", ["", "@%p0 "])
def test_four_halves_pack_into_b64(guard):
    import ptx2sass
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    src = PTX.format(guard=guard)
    vals = np.array([(t * 0x9E3779B97F4A7C15 + 0x0123) % (1 << 64) for t in range(32)], np.uint64)
    outs = []
    for cubin in (ptx2sass.compile(src), oracle.ptxas(src).output):
        out = np.zeros(32, np.uint64)
        res = run(cubin, "k", 1, 32, [out, vals])
        assert res.hazards == []
        outs.append(out.tolist())
    halves = vals.view(np.uint16).reshape(32, 4).tolist()
    expect = [sum(h << (16 * k) for k, h in enumerate(row)) for row in halves]
    if guard:
        expect = [e if t % 2 == 0 else 0x1122334455667788 for t, e in enumerate(expect)]
    assert outs[0] == expect
    assert outs[1] == expect
