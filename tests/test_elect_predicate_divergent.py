"""elect.sync's predicate is true in the elected lane alone (PTX ISA, elect.sync: "the
predicate ... is set to True for the elected leader thread and False for all other
threads"), so a branch on it splits the warp: the lanes must meet again (BSSY/BSYNC)
before a warp-wide collective. Taken as warp-uniform, the branch got no reconvergence and
the SHFL after it ran with the leader alone (fuzz seeds 44100082 sm_100a, 43500082 and
43500102 sm_90a). Expected values: ptxas's cubin of the same kernel in the emulator."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.codegen import lower_ptx
from ptx2sass.compiler import compile as compile_ours
from ptx2sass.divergence import divergent_values
from ptx2sass.emu.launch import run
from ptx2sass.oracle import ptxas

KERNEL = """
.version 9.1
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<3>;
  ld.param.u64 %rd0, [out];
  mov.u32 %r0, %tid.x;
  add.u32 %r1, %r0, 100;
  elect.sync %r4|%p0, 0xffffffff;
  @%p0 bra SKIP;
  add.u32 %r1, %r1, 1000;
  atom.global.add.u32 %r5, [%rd0+128], 1;
  add.u32 %r1, %r1, %r5;
SKIP:
  shfl.sync.idx.b32 %r2, %r1, 0, 0x1f, 0xffffffff;
  shfl.sync.bfly.b32 %r3, %r1, 1, 0x1f, 0xffffffff;
  add.u32 %r2, %r2, %r3;
  add.u32 %r2, %r2, %r4;
  mul.wide.u32 %rd1, %r0, 4;
  add.u64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}}
"""


def _run(cubin):
    out = np.zeros(33, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out], reconverge="explicit")
    return out, res


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "sm_120a"])
def test_branch_on_elect_predicate_meets_before_shuffles(arch):
    src = KERNEL.format(arch=arch)
    theirs = ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    expected, their_res = _run(theirs.output)
    assert not their_res.convergence_hazards and not their_res.hazards
    got, res = _run(compile_ours(src, arch=arch))
    assert not res.convergence_hazards, res.convergence_hazards
    assert not res.hazards
    assert got.tolist() == expected.tolist()


def test_elect_predicate_divergent_leader_uniform():
    module = lower_ptx(KERNEL.format(arch="sm_90a"), "sm_90a")
    fn = next(iter(module.functions.values())) if isinstance(module.functions, dict) else module.functions[0]
    elect = next(i for b in fn.blocks for i in b.instrs if i.opcode == "elect")
    div = divergent_values(fn)
    assert elect.dests[1].id in div
    assert elect.dests[0].id not in div
