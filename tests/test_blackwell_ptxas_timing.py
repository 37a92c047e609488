"""ptxas's own sm_100/sm_120 timing, which the emulator's hazard checker must accept (found by
the per-arch fuzz campaigns, branch archfuzz; sched/latency/blackwell*.json's evidence):
a generic 64-bit atomic's "done" predicate is read after its read scoreboard only
(`predicate_with_reads`), and IMAD.WIDE.U32.X takes an IADD3.X result as its addend's
high half 3 cycles later (`addend_fixed`). Outputs are checked against Python's integers."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

GENERIC_ATOM = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 %r<4>; .reg .b64 %rd<10>;
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3,%r1,16; add.s64 %rd4,%rd2,%rd3; cvta.global.u64 %rd5, %rd4;
 ld.global.u64 %rd6,[%rd4+8];
 atom.and.b64 %rd7, [%rd5], %rd6;
 atom.or.b64 %rd8, [%rd5], %rd7;
 st.global.u64 [%rd4+8], %rd8; ret;}}
"""

WIDE_HIGH = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 %r<4>; .reg .b64 %rd<12>;
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3,%r1,16; add.s64 %rd4,%rd2,%rd3;
 ld.global.u64 %rd5,[%rd4]; ld.global.u64 %rd6,[%rd4+8];
 mul.hi.u64 %rd7, %rd5, %rd6; mul.hi.u64 %rd8, %rd7, %rd5; mul.hi.u64 %rd9, %rd8, %rd6;
 st.global.v2.u64 [%rd4], {{%rd7, %rd9}}; ret;}}
"""

M = (1 << 64) - 1
A = [0, 1, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001, 0x123456789ABCDEF0, 0xFFFFFFFF, 0x100000000, 0xDEADBEEFCAFEF00D]


def _runs_on_pairs(ptx: str, arch: str):
    """ptxas's cubin and ours, each run on every pair of A (one thread a pair, the pair in
    place) with no hazard: yields (buffer, pairs) for each."""
    n = len(A) * len(A)
    pairs = [(a, b) for a in A for b in A]
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        buf = np.zeros((n, 2), dtype=np.uint64)
        buf[:, 0] = [a for a, _ in pairs]
        buf[:, 1] = [b for _, b in pairs]
        res = run(cubin, "k", (1, 1, 1), (n, 1, 1), [buf])
        assert not res.hazards, res.hazards[:3]
        yield buf, pairs


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_generic_atomic_predicate(arch):
    for buf, pairs in _runs_on_pairs(GENERIC_ATOM.format(arch=arch), arch):
        for i, (a, b) in enumerate(pairs):
            # the and returns a and leaves a & b; the or of a leaves a and returns a & b
            assert int(buf[i, 0]) == a and int(buf[i, 1]) == a & b


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_wide_multiply_high_addend(arch):
    for buf, pairs in _runs_on_pairs(WIDE_HIGH.format(arch=arch), arch):
        for i, (a, b) in enumerate(pairs):
            h1 = (a * b) >> 64
            h3 = ((((h1 * a) >> 64) & M) * b) >> 64
            assert (int(buf[i, 0]), int(buf[i, 1])) == (h1, h3)
