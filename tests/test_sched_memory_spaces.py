"""Memory instructions of disjoint state spaces may pass each other (sched/list_schedule.py
`memory_spaces`): a global load need not wait behind a shared store, as ptxas's code shows
(cuda corpus `ldmatrix_mma_bf16`: four LDGs then four STS where ours interleaved them, 2.26x
ptxas's SM-model cycles). Accesses whose spaces may meet (generic ones, strong ones) keep
their order: the kernels below read back what they stored and must compute what ptxas's
cubin computes."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

# Global -> shared staging, as CUDA kernels write it: load, store, load, store, ...
STAGING = HEADER + """.visible .entry k(.param .u64 p)
{
.shared .align 4 .b8 tile[512];
.reg .u32 %r<12>; .reg .u64 %rd<4>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
shl.b32 %r2, %r1, 2;
mov.u32 %r3, tile;
add.u32 %r4, %r3, %r2;
ld.global.u32 %r5, [%rd3];
st.shared.u32 [%r4], %r5;
ld.global.u32 %r6, [%rd3+128];
st.shared.u32 [%r4+128], %r6;
ld.global.u32 %r7, [%rd3+256];
st.shared.u32 [%r4+256], %r7;
ld.global.u32 %r8, [%rd3+384];
st.shared.u32 [%r4+384], %r8;
bar.sync 0;
xor.b32 %r9, %r2, 4;
add.u32 %r10, %r3, %r9;
ld.shared.u32 %r11, [%r10];
st.global.u32 [%rd3], %r11;
ret;
}
"""


def _order(cubin: bytes) -> list[str]:
    return re.findall(r"\b(LDG|STS)\b", oracle.nvdisasm(cubin))


def test_global_loads_pass_shared_stores_as_in_ptxas():
    theirs = oracle.ptxas(STAGING, "sm_89")
    assert theirs.ok, theirs.stderr
    assert _order(theirs.output)[:4] == ["LDG"] * 4          # the premise, from ptxas
    ours = codegen.compile_ptx(STAGING)
    assert _order(ours)[:4] == ["LDG"] * 4
    results = []
    for cubin in (ours, theirs.output):
        data = np.arange(128, dtype=np.uint32) * 7 + 3
        run(cubin, "k", 1, 32, [data])
        results.append(data)
    np.testing.assert_array_equal(*results)


# Pairs that touch the same word through spaces that meet: each must stay in order.
SAME_WORD = [
    ("st.u32 [%rd3], %r5;", "ld.global.u32 %r6, [%rd4];"),          # generic store, global load
    ("st.global.u32 [%rd4], %r5;", "ld.u32 %r6, [%rd3];"),          # global store, generic load
    ("st.volatile.global.u32 [%rd4], %r5;", "ld.volatile.global.u32 %r6, [%rd4];"),
    ("st.shared.u32 [%r4], %r5;", "ld.u32 %r6, [%rd5];"),           # shared store, generic load
    ("st.u32 [%rd5], %r5;", "ld.shared.u32 %r6, [%r4];"),           # generic store, shared load
]


@pytest.mark.parametrize("store,load", SAME_WORD)
def test_accesses_whose_spaces_meet_keep_their_order(store, load):
    ptx = HEADER + f""".visible .entry k(.param .u64 p)
{{
.shared .align 4 .b8 cell[128];
.reg .u32 %r<8>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [p];
cvta.to.global.u64 %rd4, %rd1;
mov.u64 %rd3, %rd1;
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
mov.u32 %r3, cell;
add.u32 %r4, %r3, %r2;
st.shared.u32 [%r4], 0;
cvta.shared.u64 %rd2, cell;
cvt.u64.u32 %rd5, %r2;
add.s64 %rd5, %rd2, %rd5;
ld.global.u32 %r5, [%rd4+4];
add.u32 %r5, %r5, %r1;
{store}
{load}
st.global.u32 [%rd4+8], %r6;
ret;
}}
"""
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    results = []
    for cubin in (codegen.compile_ptx(ptx), theirs.output):
        data = np.array([11, 22, 33, 44], dtype=np.uint32)
        run(cubin, "k", 1, 1, [data])
        results.append(data)
    np.testing.assert_array_equal(*results)
    assert results[0][2] == 22          # the load saw the store (thread 0: 22 + 0)
