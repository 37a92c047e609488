"""elect.sync d|p, membermask (sm_90): ELECT Pp, UR, PT then MOV d, UR, as ptxas 13.5
writes it (refused before: "PTX instruction `elect` not supported yet"); a register mask
that may differ between lanes runs each mask's lanes apart (WARPSYNC.EXCLUSIVE). Model (PTX
ISA): among the executing threads of the membermask one leader, the lowest lane; d is its
lane in every thread of the group, p true in the leader alone."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL_MASK = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 first)
{
.reg .b32 %r<6>; .reg .pred %p<3>; .reg .u64 %rd<3>;
ld.param.u64 %rd1, [p];
ld.param.u32 %r2, [first];
mov.u32 %r3, %tid.x;
mul.wide.u32 %rd2, %r3, 4;
add.u64 %rd1, %rd1, %rd2;
setp.lt.u32 %p2, %r3, %r2;
@%p2 bra DONE;
elect.sync %r1|%p1, {mask};
selp.u32 %r4, 1000, 0, %p1;
add.u32 %r4, %r4, %r1;
st.global.u32 [%rd1], %r4;
DONE:
ret;
}
"""
KERNEL = KERNEL_MASK.replace("{mask}", "0xffffffff")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("first", [0, 5])
def test_elect_sync_is_ptxas_and_the_model(first, arch):
    ptx = KERNEL.replace(".version 8.0", ".version 8.8").replace("sm_90", arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    want = np.full(32, 0xDEAD, np.uint32)
    want[first:] = first
    want[first] += 1000
    for name, cubin in (("ptxas", theirs.output), ("ours", ours)):
        out = np.full(32, 0xDEAD, np.uint32)
        res = run(cubin, "k", 1, 32, [out, np.uint32(first)], hazard_check=name == "ours")
        if name == "ours":
            assert not res.hazards, res.hazards[:3]
        np.testing.assert_array_equal(out, want, err_msg=name)


KERNEL_LANE_MASK = KERNEL_MASK.replace(".param .u32 first)", ".param .u64 m, .param .u32 first)").replace(
    "{mask}", "%r5").replace("@%p2 bra DONE;", """@%p2 bra DONE;
ld.param.u64 %rd3, [m];
add.u64 %rd3, %rd3, %rd2;
ld.global.u32 %r5, [%rd3];""").replace(".reg .u64 %rd<3>", ".reg .u64 %rd<4>")

LANE_MASKS = {
    "full": [0xFFFFFFFF] * 32,
    "halves": [0x0000FFFF] * 16 + [0xFFFF0000] * 16,
    "even-odd": [0x55555555 if lane % 2 == 0 else 0xAAAAAAAA for lane in range(32)],
    "octets": [0xFF << (8 * (lane // 8)) for lane in range(32)],
}


def _lane_mask_model(masks, first):
    """Each executing lane's group: the executing lanes of its mask; its leader the lowest."""
    want = np.full(32, 0xDEAD, np.uint32)
    for lane in range(first, 32):
        leader = min(j for j in range(first, 32) if masks[lane] >> j & 1)
        want[lane] = leader + (1000 if leader == lane else 0)
    return want


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_elect_sync_with_a_per_lane_mask_is_ptxas_and_the_model(arch):
    """A membermask in a register, the same or different between lanes (divergent groups),
    with and without lanes branched away: each group elects its own lowest lane (ptxas:
    BSSY, WARPSYNC.EXCLUSIVE Rmask, ELECT; refused before)."""
    ptx = KERNEL_LANE_MASK.replace(".version 8.0", ".version 8.8").replace("sm_90", arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    for label, masks in LANE_MASKS.items():
        for first in (0, 3, 10):
            want = _lane_mask_model(masks, first)
            for name, cubin in (("ptxas", theirs.output), ("ours", ours)):
                out = np.full(32, 0xDEAD, np.uint32)
                res = run(cubin, "k", 1, 32, [out, np.array(masks, np.uint32), np.uint32(first)],
                          hazard_check=name == "ours")
                if name == "ours":
                    assert not res.hazards, res.hazards[:3]
                np.testing.assert_array_equal(out, want, err_msg=f"{name} {label} first={first}")
