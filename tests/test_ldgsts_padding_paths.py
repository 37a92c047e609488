"""The first LDGSTS after a DEPBAR and the first of a block get the three `@!PT LDS` too
(`ldgsts_padding`'s `also_after` / `at_block_starts`, sched/ldgsts_pad.py), as ptxas 13.5
pads them on sm_90a/sm_100a/sm_120a. We padded only the first LDGSTS after the entry or a
BAR in layout order, so a path that branched around it reached the next one unpadded
(fuzz seed 43500291, sm_90a, a cluster + cp.async program: the emulator's ldgsts_padding
check flagged our cubin). Expected values: ptxas's cubin of the same kernel."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.compiler import compile as compile_ours
from ptx2sass.emu.launch import run
from ptx2sass.oracle import ptxas

KERNEL = """
.version 9.1
.target {arch}
.address_size 64
.shared .align 16 .b8 buf[256];
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 skip)
{{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<6>;
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd1, [in];
  ld.param.u32 %r0, [skip];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  mad.lo.u32 %r3, %r1, 8, %r2;
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd3, %rd1, %rd2;
  st.shared.v2.u32 [%r3], {{%r1, %r1}};
  bar.sync 0;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra SKIP;
  cp.async.ca.shared.global [%r3], [%rd3], 4;
  cp.async.commit_group;
  cp.async.wait_group 0;
SKIP:
  cp.async.ca.shared.global [%r3+4], [%rd3+4], 4;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.v2.u32 {{%r4, %r5}}, [%r3];
  add.u64 %rd4, %rd0, %rd2;
  st.global.v2.u32 [%rd4], {{%r4, %r5}};
  ret;
}}
"""


def _run(cubin, skip):
    src = (np.arange(64, dtype=np.uint32) * 7 + 3)
    out = np.zeros(64, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, src, np.uint32(skip)])
    return out, res


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "sm_120a"])
@pytest.mark.parametrize("skip", [0, 1])
def test_ldgsts_reached_around_a_padded_one_is_padded(arch, skip):
    src = KERNEL.format(arch=arch)
    theirs = ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    expected, their_res = _run(theirs.output, skip)
    assert not their_res.hazards, [str(h) for h in their_res.hazards]
    got, res = _run(compile_ours(src, arch=arch), skip)
    assert not res.hazards, [str(h) for h in res.hazards]
    assert got.tolist() == expected.tolist()
