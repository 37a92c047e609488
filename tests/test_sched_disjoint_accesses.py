"""Accesses of one state space through one unchanged base register (or both absolute) whose
byte ranges are disjoint need no order (sched/memory_order.py): a Game of Life's halo copy
`if (tid < 16) { g[0][k] = g[16][k]; g[17][k] = g[1][k]; }` (real-world physics_sim
life_steps) is LDS, LDS, STS, STS in ptxas's code, where ours was LDS, STS, LDS, STS, each
store waiting for its load (1.45x ptxas's single-warp cycles). Accesses that may overlap (the
same byte, overlapping widths, a base rewritten in between, absolute ones at one place) keep
their order: each kernel below must compute what ptxas's cubin computes, hazard-checked."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

# An 18x18 byte grid; rows 0 and 17 are the halo, copied from rows 16 and 1.
HALO = HEADER + """.visible .entry k(.param .u64 p)
{
.shared .align 4 .b8 g[324];
.reg .pred %p<3>; .reg .u32 %r<20>; .reg .u64 %rd<4>; .reg .u16 %h<4>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
mov.u32 %r3, g;
shl.b32 %r2, %r1, 2;
add.u32 %r4, %r3, %r2;
setp.lt.u32 %p1, %r1, 81;
@%p1 ld.global.u32 %r5, [%rd3];
@%p1 st.shared.u32 [%r4], %r5;
bar.sync 0;
setp.ge.u32 %p2, %r1, 16;
@%p2 bra SKIP;
add.u32 %r6, %r3, %r1;
ld.shared.u8 %h1, [%r6+289];
st.shared.u8 [%r6+1], %h1;
ld.shared.u8 %h2, [%r6+19];
st.shared.u8 [%r6+307], %h2;
SKIP:
bar.sync 0;
@%p1 ld.shared.u32 %r7, [%r4];
@%p1 st.global.u32 [%rd3], %r7;
ret;
}
"""


def _run(cubin: bytes, words: int, threads: int) -> np.ndarray:
    data = (np.arange(words, dtype=np.uint32) * 0x9E3779B1 + 0x01234567).astype(np.uint32)
    run(cubin, "k", 1, threads, [data], hazard_check=True)
    return data


def _shared_order(cubin: bytes) -> list[str]:
    return re.findall(r"\b(LDS|STS)(?:\.U8)?\b", oracle.nvdisasm(cubin))


def test_halo_copy_loads_before_stores_as_in_ptxas():
    theirs = oracle.ptxas(HALO, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(HALO)
    # the halo copy: the four byte accesses between the fill's STS and the read-back's LDS
    assert _shared_order(theirs.output)[1:5] == ["LDS", "LDS", "STS", "STS"]   # the premise
    assert _shared_order(ours)[1:5] == ["LDS", "LDS", "STS", "STS"]
    np.testing.assert_array_equal(_run(ours, 128, 128), _run(theirs.output, 128, 128))


# Each thread owns 8 bytes of shared memory at %r4 (both words set first); the pair stores
# %r6 (a late global load) and loads %r7, which goes to global memory with both words.
PAIR = HEADER + """.visible .entry k(.param .u64 p)
{{
.shared .align 8 .b8 g[256];
.reg .u32 %r<20>; .reg .u64 %rd<6>; .reg .u16 %h<4>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
mov.u32 %r3, g;
shl.b32 %r2, %r1, 3;
add.u32 %r4, %r3, %r2;
mad.lo.u32 %r5, %r1, 16843009, 271590464;
st.shared.u32 [%r4], %r5;
not.b32 %r8, %r5;
st.shared.u32 [%r4+4], %r8;
bar.sync 0;
ld.global.u32 %r6, [%rd3];
mul.lo.u32 %r6, %r6, %r6;
{pair}
st.global.u32 [%rd3], %r7;
bar.sync 0;
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd1, %rd4;
ld.shared.u32 %r9, [%r4];
ld.shared.u32 %r10, [%r4+4];
st.global.u32 [%rd5+128], %r9;
st.global.u32 [%rd5+132], %r10;
ret;
}}
"""

PAIRS = {
    # the same byte: the load must see the store
    "same-byte": "cvt.u16.u32 %h1, %r6;\nst.shared.u8 [%r4+5], %h1;\nld.shared.u8 %h2, [%r4+5];\ncvt.u32.u16 %r7, %h2;",
    # a word store and a byte load inside it
    "byte-in-word": "st.shared.u32 [%r4+4], %r6;\nld.shared.u8 %h2, [%r4+6];\ncvt.u32.u16 %r7, %h2;",
    # a half store overlapping a word load's upper half
    "half-in-word": "cvt.u16.u32 %h1, %r6;\nst.shared.u16 [%r4+2], %h1;\nld.shared.u32 %r7, [%r4];",
    # a 64-bit store and a word load at its second half
    "word-in-double": "mov.b64 %rd4, {%r6, %r6};\nst.shared.u64 [%r4], %rd4;\nld.shared.u32 %r7, [%r4+4];",
    # the base moves between them: [%r4+4] then [%r4'] is the same word (the base's
    # rewrite, after the store reads it and before the load does, orders them too)
    "rewritten-base": "st.shared.u32 [%r4+4], %r6;\nadd.u32 %r4, %r4, 4;\nld.shared.u32 %r7, [%r4];\nsub.u32 %r4, %r4, 4;",
    # a load before a store to its byte (write after read)
    "load-then-store": "ld.shared.u8 %h2, [%r4+1];\ncvt.u16.u32 %h1, %r6;\nst.shared.u8 [%r4+1], %h1;\ncvt.u32.u16 %r7, %h2;",
    # neighbouring bytes: may pass each other, either order gives the same result
    "disjoint-bytes": "cvt.u16.u32 %h1, %r6;\nst.shared.u8 [%r4+5], %h1;\nld.shared.u8 %h2, [%r4+4];\ncvt.u32.u16 %r7, %h2;",
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pairs_compute_what_ptxas_computes(name):
    ptx = PAIR.format(pair=PAIRS[name])
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx)
    np.testing.assert_array_equal(_run(ours, 96, 32), _run(theirs.output, 96, 32))


# Absolute addresses (a one-thread kernel): the same word keeps its order, another may pass.
ABSOLUTE = HEADER + """.visible .entry k(.param .u64 p)
{
.shared .align 4 .b8 g[64];
.reg .u32 %r<12>; .reg .u64 %rd<4>;
ld.param.u64 %rd1, [p];
st.shared.u32 [g+8], 5;
st.shared.u32 [g+12], 7;
ld.global.u32 %r1, [%rd1];
mul.lo.u32 %r1, %r1, %r1;
st.shared.u32 [g+8], %r1;
ld.shared.u32 %r2, [g+8];
ld.shared.u32 %r3, [g+12];
st.global.u32 [%rd1+4], %r2;
st.global.u32 [%rd1+8], %r3;
ret;
}
"""


def test_absolute_addresses():
    theirs = oracle.ptxas(ABSOLUTE, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ABSOLUTE)
    np.testing.assert_array_equal(_run(ours, 4, 1), _run(theirs.output, 4, 1))
