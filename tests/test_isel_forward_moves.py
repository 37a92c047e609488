"""isel/forward_moves.py: a 32-bit value widened into a 64-bit register (`cvt.u64.u32`) and
read only through its low word is read as the original, so no register-to-register MOV
keeps a second copy live across the loop (Triton's matmul_masked kept three so).

Expected forms from ptxas's cubin (it writes no register-to-register move here), results
from ptxas's cubin in the emulator and NumPy."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run


SRC = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u32 n)
{
 .reg .b32 %r<24>; .reg .b64 %rd<16>; .reg .pred %p<6>;
 ld.param.u64 %rd1, [p];
 ld.param.u64 %rd2, [q];
 ld.param.u32 %r9, [n];
 mov.u32 %r1, %tid.x;
 and.b32 %r2, %r1, 31;
 shr.u32 %r3, %r1, 5;
 cvt.u64.u32 %rd3, %r2;
 cvt.u64.u32 %rd4, %r3;
 cvt.u64.u32 %rd5, %r9;
 mov.b64 %rd6, 0;
 mov.b32 %r4, 0;
LOOP:
 add.s64 %rd7, %rd3, %rd6;
 setp.lt.u64 %p1, %rd7, %rd5;
 add.s64 %rd8, %rd4, %rd6;
 setp.lt.u64 %p2, %rd8, %rd5;
 shl.b64 %rd9, %rd7, 2;
 add.s64 %rd10, %rd1, %rd9;
 mov.b32 %r5, 0;
 @%p1 ld.global.u32 %r5, [%rd10];
 shl.b64 %rd11, %rd8, 2;
 add.s64 %rd12, %rd1, %rd11;
 mov.b32 %r6, 0;
 @%p2 ld.global.u32 %r6, [%rd12];
 mad.lo.s32 %r7, %r5, %r2, %r6;
 mad.lo.s32 %r4, %r7, %r3, %r4;
 add.s64 %rd6, %rd6, 32;
 setp.lt.u64 %p3, %rd6, %rd5;
 @%p3 bra LOOP;
 mul.wide.u32 %rd13, %r1, 4;
 add.s64 %rd14, %rd2, %rd13;
 st.global.u32 [%rd14], %r4;
 ret;
}
"""

REGISTER_MOVE = re.compile(r"^(MOV R\d+, R\d+|IMAD\.MOV\.U32 R\d+, RZ, RZ, R\d+)$")


def _texts(cubin: bytes) -> list[str]:
    return [re.sub(r"\s+", " ", m.group(1)).strip()
            for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", oracle.nvdisasm(cubin))]


def _compiled():
    theirs = oracle.ptxas(SRC, "sm_89")
    assert theirs.ok, theirs.stderr
    return codegen.compile_ptx(SRC), theirs.output


def test_widened_lane_indices_are_not_copied():
    # the loop is copied 4 times per exit test, as ptxas copies it (opt/runtime_unroll.py), its
    # remainders guarded copies as ptxas's: no join of the 64-bit counter (branches to them
    # left two MOVs of it)
    ours, theirs = _compiled()
    for cubin in (theirs, ours):         # ptxas's first: the premise
        moves = [t for t in _texts(cubin) if REGISTER_MOVE.match(t)]
        assert moves == [], moves


def test_results_equal_ptxas_and_numpy():
    ours, theirs = _compiled()
    rng = np.random.default_rng(24)
    n = 200
    src = rng.integers(-1000, 1000, 256).astype(np.int32)
    tid = np.arange(128)
    lane, warp = tid & 31, tid >> 5
    expect = np.zeros(128, np.int64)
    for base in range(0, n, 32):         # the body runs, then the counter is tested
        a = np.where(lane + base < n, src[np.minimum(lane + base, 255)], 0).astype(np.int64)
        b = np.where(warp + base < n, src[np.minimum(warp + base, 255)], 0).astype(np.int64)
        expect = expect + (a * lane + b) * warp
    results = []
    for cubin in (ours, theirs):
        out = np.full(128, -1, np.int32)
        run(cubin, "k", 1, 128, [src.copy(), out, np.uint32(n)])
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], expect.astype(np.int32))
