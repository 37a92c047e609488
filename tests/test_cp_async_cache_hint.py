"""cp.async with `.L2::cache_hint` and a cache policy but no source size (`[d], [s], 16,
policy`): ptxas accepts it (the source size is optional before the policy); the frontend
took the policy for the source size ("Arguments mismatch", fuzz seeds 8900246, 8900370,
8900418) and the selection would have too. Against ptxas's cubin in the emulator, with and
without a source size."""
import numpy as np
import pytest

PTX = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .shared .align 16 .b8 buf[1024];
    .reg .b32 %r<8>;
    .reg .b64 %d<8>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %d2, %r0, 16;
    add.s64 %d3, %d1, %d2;
    add.s64 %d4, %d0, %d2;
    mov.u32 %r1, buf;
    mul.lo.u32 %r2, %r0, 16;
    add.u32 %r1, %r1, %r2;
    createpolicy.fractional.L2::evict_last.b64 %d5, 1.0;
    {copy}
    cp.async.wait_all;
    ld.shared.v4.u32 {{%r3, %r4, %r5, %r6}}, [%r1];
    st.global.v4.u32 [%d4], {{%r3, %r4, %r5, %r6}};
    ret;
}}
"""

COPIES = {
    "policy_only": "cp.async.cg.shared.global.L2::cache_hint.L2::256B [%r1], [%d3], 16, %d5;",
    "policy_only_ca": "cp.async.ca.shared::cta.global.L2::cache_hint.L2::64B [%r1], [%d3], 16, %d5;",
    "size_and_policy": "cp.async.cg.shared.global.L2::cache_hint [%r1], [%d3], 16, 8, %d5;",
}


@pytest.mark.parametrize("name", list(COPIES))
def test_cp_async_with_a_cache_policy_matches_ptxas(name):
    import ptx2sass
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    src = PTX.format(copy=COPIES[name])
    vals = (np.arange(32 * 4, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    outs = []
    for cubin in (ptx2sass.compile(src), oracle.ptxas(src).output):
        out = np.zeros(32 * 4, np.uint32)
        res = run(cubin, "k", 1, 32, [out, vals.astype(np.uint32)])
        assert res.hazards == []
        outs.append(out.tolist())
    assert outs[0] == outs[1]
    rows = vals.reshape(32, 4)
    if name == "size_and_policy":      # 8 bytes copied, the rest zero-filled
        rows = np.concatenate([rows[:, :2], np.zeros((32, 2), np.uint32)], axis=1)
    assert outs[0] == rows.reshape(-1).tolist()
