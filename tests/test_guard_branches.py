"""Guarded instructions the code generator writes as sequences (ptx2sass/guard_branches.py):
each compiled as a branch around the unguarded instruction, against ptxas's cubin on the
same inputs (some lanes guarded on, some off; the skipped lanes keep the destination).
Fuzz campaigns refused all of these ("guarded `rem` not supported yet", ...)."""
import numpy as np
import pytest

from codegen_harness import inputs, kernel

CASES = {
    "rem.u32": ("setp.lt.u32 %p0, %a0, %a1; mov.u32 %o, %a0; @%p0 rem.u32 %o, %a0, %a1;", 32, 2, 32),
    "div.s32": ("setp.lt.s32 %p0, %a0, %a1; mov.u32 %o, %a1; @!%p0 div.s32 %o, %a0, %a1;", 32, 2, 32),
    "rem.u64": ("setp.lt.u64 %p0, %a0, %a1; mov.b64 %o, %a0; @%p0 rem.u64 %o, %a1, %a0;", 64, 2, 64),
    "ex2.approx": ("setp.lt.u32 %p0, %a0, %a1; mov.b32 %o, %a0; @%p0 ex2.approx.f32 %o, %a1;", 32, 2, 32),
    "tanh.approx": ("setp.lt.u32 %p0, %a0, %a1; mov.b32 %o, %a0; @%p0 tanh.approx.f32 %o, %a1;", 32, 2, 32),
    "rcp.rn.f32": ("setp.lt.u32 %p0, %a0, %a1; mov.b32 %o, %a0; @%p0 rcp.rn.f32 %o, %a1;", 32, 2, 32),
    "div.rn.f32": ("setp.lt.u32 %p0, %a0, %a1; mov.b32 %o, %a0; @%p0 div.rn.f32 %o, %a1, %a0;", 32, 2, 32),
    "min.f64": ("setp.lt.u64 %p0, %a0, %a1; mov.b64 %o, %a0; @%p0 min.f64 %o, %a1, %a0;", 64, 2, 64),
    "bfe.s64": ("setp.lt.u64 %p0, %a0, %a1; mov.b64 %o, %a0; @%p0 bfe.s64 %o, %a1, 3, 17;", 64, 2, 64),
    "bfi.b64": ("setp.lt.u64 %p0, %a0, %a1; mov.b64 %o, %a0; @%p0 bfi.b64 %o, %a1, %a0, 5, 40;", 64, 2, 64),
    "cvt.sat.u8.u64": ("setp.lt.u64 %p0, %a0, %a1; mov.b64 %o, %a0; @%p0 cvt.sat.u8.u64 %o, %a1;", 64, 2, 64),
}


@pytest.mark.parametrize("name", list(CASES))
def test_guarded_expanded_instruction_matches_ptxas(name):
    import ptx2sass
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    body, ib, n, ob = CASES[name]
    src = kernel(body, ib, n, ob)
    dtype = {32: np.uint32, 64: np.uint64}[ob]
    outs = []
    for cubin in (ptx2sass.compile(src), oracle.ptxas(src).output):
        out = np.zeros(64, dtype)
        res = run(cubin, "k", 1, 64, [out, inputs(ib, n)])
        assert res.hazards == []
        outs.append(out)
    assert outs[0].tolist() == outs[1].tolist()
    # both guard outcomes occur on these inputs, or the test would not see the branch
    a = inputs(ib, n).view({32: np.uint32, 64: np.uint64}[ib])[: 64 * n]
    assert len({bool(x) for x in (a[0::n] < a[1::n])}) == 2


def test_carry_chain_under_a_guard_stays_refused():
    """Carry flags do not cross blocks yet: a guarded addc is not branched around."""
    import ptx2sass
    from ptx2sass.errors import CompileError
    src = kernel("setp.lt.u32 %p0, %a0, %a1; add.cc.u32 %x0, %a0, %a1; @%p0 addc.cc.u32 %x1, %a0, %a0;"
                 " addc.u32 %o, %a1, 0;", 32, 2, 32)
    with pytest.raises(CompileError, match="guarded `addc`"):
        ptx2sass.compile(src)


CLUSTER_KERNEL = """
.version 9.1
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out) .reqnctapercluster 2, 1, 1
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd0, [out];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mad.lo.u32 %r2, %r1, 32, %r0;
  and.b32 %r3, %r0, 1;
  setp.ne.u32 %p0, %r3, 0;
  mov.u32 %r4, 777;
  mov.u32 %r5, 555;
  @%p0 mov.u32 %r4, %clusterid.x;
  @!%p0 mov.u32 %r5, %cluster_ctaid.x;
  add.u32 %r6, %r4, %r5;
  mul.wide.u32 %rd1, %r2, 4;
  add.u64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r6;
  ret;
}
"""


def test_guarded_mov_of_divided_cluster_registers_matches_ptxas():
    """sm_90's %clusterid.x / %cluster_ctaid.x are %ctaid.x divided by the cluster's shape (a
    sequence): guarded, they were refused ("guarded `mov` not supported yet", held-out fuzz
    seeds 45000057 and 45000141 on sm_90a); now branched around. Values: ptxas's cubin."""
    import ptx2sass
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    theirs = oracle.ptxas(CLUSTER_KERNEL, "sm_90a")
    assert theirs.ok, theirs.stderr
    outs = []
    for cubin in (ptx2sass.compile(CLUSTER_KERNEL, arch="sm_90a"), theirs.output):
        out = np.zeros(6 * 32, np.uint32)
        res = run(cubin, "k", (6, 1, 1), (32, 1, 1), [out])
        assert res.hazards == []
        outs.append(out)
    assert outs[0].tolist() == outs[1].tolist()
    assert len(set(outs[1].tolist())) > 2       # both guards' values and several clusters
