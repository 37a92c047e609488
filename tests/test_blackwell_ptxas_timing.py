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


MBARRIER_PHASE = """.version 9.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<2>;
 .shared .align 8 .b64 bar[64];
 ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3,%r1,4; add.s64 %rd4,%rd2,%rd3;
 mov.u32 %r2, bar; shl.b32 %r3, %r1, 3; add.u32 %r2, %r2, %r3;
 mbarrier.init.shared.b64 [%r2], 1;
 mbarrier.arrive.shared.b64 %rd5, [%r2];
 mbarrier.test_wait.shared.b64 %p1, [%r2], %rd5;
 selp.u32 %r4, 1, 0, %p1;
 st.global.u32 [%rd4], %r4; ret;}}
"""


@pytest.mark.parametrize("arch", ["sm_100", "sm_110", "sm_120"])
def test_mbarrier_arrive_then_phase_check(arch):
    """ptxas gives `SYNCS.ARRIVE.TRANS64.A1T0 R2, [R7+URZ], RZ` a write scoreboard and the
    SYNCS.PHASECHK reading R3 right after it waits on that (SYNCS is variable-latency, as on
    sm_90); the table had SYNCS as a 4-cycle fixed result and flagged ptxas's code (fuzz seed
    21100014). Each thread's own barrier expects one arrival, so its phase is complete."""
    ptx = MBARRIER_PHASE.format(arch=arch)
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        buf = np.zeros(64, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [buf])
        assert not res.hazards, res.hazards[:3]
        assert (buf == 1).all()
