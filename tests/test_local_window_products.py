"""A `.local` table indexed by `mul.wide.u32` then `add.s64` to the depot's address: the
local window is 32 bits wide, so ptxas forms the address with a 32-bit IMAD (`IMAD R5, R2,
0x8, R1` then `LDL.64 R2, [R5]`); ours wrote `IMAD.WIDE.U32` into a pair
(isel/narrow_products.py's window rule). The kernel is real-world dp_sequences
lcs_bit_parallel's first loop: each of a string's 64 bytes sets its bit in its letter's
64-bit mask (a read-modify-write of the local table). With the byte loads first in the capped
pre-schedule (sched/pre_schedule.py FAR_LOADS_LAST_WHEN_FULL off) the source order was kept,
each load waiting for the last read-modify-write (emulated cycles 5747, ptxas 2997). Outputs are ptxas's cubin's, hazard-checked."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

STEPS = 64


def _ptx(arch: str) -> str:
    body = []
    for i in range(STEPS):
        body.append(f"""ld.global.nc.u8 %rs1, [%rd10+{i}];
cvt.u32.u8 %r6, %rs1;
and.b32 %r6, %r6, 3;
mul.wide.u32 %rd11, %r6, 8;
add.s64 %rd12, %rd7, %rd11;
ld.local.u64 %rd13, [%rd12];
or.b64 %rd14, %rd13, {1 << i};
st.local.u64 [%rd12], %rd14;""")
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 o)
{{
.local .align 16 .b8 __local_depot0[32];
.reg .b64 %SPL;
.reg .b16 %rs<4>;
.reg .b32 %r<12>;
.reg .b64 %rd<24>;
mov.u64 %SPL, __local_depot0;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
cvta.to.global.u64 %rd4, %rd1;
cvta.to.global.u64 %rd5, %rd2;
add.u64 %rd7, %SPL, 0;
mov.u32 %r1, %tid.x;
mov.u64 %rd8, 0;
st.local.v2.u64 [%rd7], {{%rd8, %rd8}};
st.local.v2.u64 [%rd7+16], {{%rd8, %rd8}};
mul.wide.u32 %rd9, %r1, {STEPS};
add.s64 %rd10, %rd4, %rd9;
{chr(10).join(body)}
ld.local.v2.u64 {{%rd15, %rd16}}, [%rd7];
ld.local.v2.u64 {{%rd17, %rd18}}, [%rd7+16];
mul.wide.u32 %rd19, %r1, 32;
add.s64 %rd20, %rd5, %rd19;
st.global.v2.u64 [%rd20], {{%rd15, %rd16}};
st.global.v2.u64 [%rd20+16], {{%rd17, %rd18}};
ret;
}}
"""


def _launch(cubin: bytes):
    data = np.random.default_rng(5).integers(0, 256, 32 * STEPS, dtype=np.uint64).astype(np.uint8)
    out = np.zeros(32 * 4, dtype=np.uint64)
    result = run(cubin, "k", 1, 32, [data, out], hazard_check=True)
    return out, result


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
def test_local_table_address_is_32_bit_and_loads_go_ahead(arch):
    ptx = _ptx(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    their_text, our_text = oracle.nvdisasm(theirs.output), oracle.nvdisasm(ours)
    wide = r"IMAD\.WIDE(\.U32)? R\d+, R\d+, 0x8,"        # the table's index times 8, as a pair
    narrow = r"IMAD R\d+, R\d+, 0x8, R1\b"
    assert re.search(narrow, their_text) and not re.search(wide, their_text)      # the premise
    assert not re.search(wide, our_text)
    our_out, our_run = _launch(ours)
    their_out, their_run = _launch(theirs.output)
    assert our_run.hazards == []
    np.testing.assert_array_equal(our_out, their_out)
    assert np.any(our_out)
    # the byte loads overlap the read-modify-writes as ptxas's do: near its cycles, not one
    # load's latency per step behind
    assert our_run.cycles <= 1.25 * their_run.cycles, (our_run.cycles, their_run.cycles)
