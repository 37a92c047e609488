"""CTA barriers for a whole group at once (`ops_control._bar_group`, `Machine._release_barriers_at_once`)
against the warp-by-warp, CTA-by-CTA forms they stand in for: same outputs, instruction
counts, barrier reductions, on ptxas's code for kernels with barriers in many CTAs (some
threads exiting first, CTAs taking different branches to different barriers, reductions,
a counted named barrier), and against NumPy."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import machine as machine_module
from ptx2sass.emu import ops_control, run
from ptx2sass.emu.lanes import PerWarp
from tools.emu_testing import cubin_listing_decoder

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"

# a block sum through shared memory: threads at or past n leave before the barriers
BLOCK_SUM = HEAD + r"""
.visible .entry block_sum(.param .u64 inp, .param .u64 out, .param .u32 n)
{
    .reg .u32 %r<12>; .reg .u64 %rd<8>; .reg .pred %p<4>;
    .shared .align 4 .b32 buf[128];
    ld.param.u64 %rd1, [inp]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r3, %r4, %r2;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd3, %r5, 4; add.u64 %rd4, %rd1, %rd3;
    ld.global.u32 %r6, [%rd4];
    shl.b32 %r7, %r2, 2; mov.u32 %r8, buf; add.u32 %r8, %r8, %r7;
    st.shared.u32 [%r8], %r6;
    bar.sync 0;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra DONE;
    mov.u32 %r9, 0; mov.u32 %r10, buf; mov.u32 %r11, 0;
LOOP:
    ld.shared.u32 %r6, [%r10]; add.u32 %r9, %r9, %r6;
    add.u32 %r10, %r10, 4; add.u32 %r11, %r11, 1;
    add.u32 %r6, %r3, 1; mul.lo.u32 %r6, %r6, %r4;
    min.u32 %r6, %r6, %r1; sub.u32 %r6, %r6, %r5;
    setp.lt.u32 %p3, %r11, %r6;
    @%p3 bra LOOP;
    mul.wide.u32 %rd3, %r3, 4; add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r9;
DONE:
    ret;
}
"""

# even and odd CTAs reach different barrier instructions (the even ones one more: the group
# at it holds every other CTA), then a second barrier they share; bar.red counts and votes
PARITY = HEAD + r"""
.visible .entry parity(.param .u64 out)
{
    .reg .u32 %r<12>; .reg .u64 %rd<6>; .reg .pred %p<6>;
    .shared .align 4 .b32 s[64];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
    shl.b32 %r4, %r1, 2; mov.u32 %r5, s; add.u32 %r5, %r5, %r4;
    and.b32 %r6, %r2, 1;
    setp.eq.u32 %p1, %r6, 1;
    @%p1 bra ODD;
    add.u32 %r7, %r1, 100;
    st.shared.u32 [%r5], %r7;
    bar.sync 0;
    ld.shared.u32 %r7, [%r5];
    add.u32 %r7, %r7, 1;
    st.shared.u32 [%r5], %r7;
    bar.sync 0;
    bra.uni JOIN;
ODD:
    mul.lo.u32 %r7, %r1, 3;
    st.shared.u32 [%r5], %r7;
    bar.sync 0;
JOIN:
    sub.u32 %r8, %r3, 1; sub.u32 %r8, %r8, %r1; shl.b32 %r8, %r8, 2;
    mov.u32 %r9, s; add.u32 %r9, %r9, %r8;
    ld.shared.u32 %r10, [%r9];
    and.b32 %r11, %r10, 1;
    setp.eq.u32 %p2, %r11, 1;
    bar.red.popc.u32 %r11, 0, %p2;
    setp.lt.u32 %p3, %r10, 40;
    bar.red.and.pred %p4, 0, %p3;
    bar.red.or.pred %p5, 0, %p3;
    selp.u32 %r6, 1000, 0, %p4; add.u32 %r11, %r11, %r6;
    selp.u32 %r6, 10000, 0, %p5; add.u32 %r11, %r11, %r6;
    mad.lo.u32 %r6, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r6, 8; add.u64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r10, %r11};
    ret;
}
"""

# a named barrier with a thread count (the group form leaves counted ones to the warps)
COUNTED = HEAD + r"""
.visible .entry counted(.param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<2>;
    .shared .align 4 .b32 s[96];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x;
    shl.b32 %r3, %r1, 2; mov.u32 %r4, s; add.u32 %r4, %r4, %r3;
    st.shared.u32 [%r4], %r1;
    setp.lt.u32 %p1, %r1, 64;
    @%p1 bar.sync 1, 64;
    xor.b32 %r5, %r1, 32; and.b32 %r5, %r5, 63; shl.b32 %r5, %r5, 2;
    mov.u32 %r6, s; add.u32 %r6, %r6, %r5;
    ld.shared.u32 %r7, [%r6];
    mad.lo.u32 %r5, %r2, 96, %r1;
    mul.wide.u32 %rd2, %r5, 4; add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
"""


@pytest.fixture(scope="module")
def cubins():
    out = {}
    for name, ptx in (("block_sum", BLOCK_SUM), ("parity", PARITY), ("counted", COUNTED)):
        r = oracle.ptxas(ptx, "sm_89")
        assert r.ok, r.stderr
        out[name] = r.output
    return out


def _warp_by_warp(monkeypatch):
    def per_warp(*a, **k):
        raise PerWarp()
    monkeypatch.setattr(ops_control, "_bar_group", per_warp)
    monkeypatch.setattr(machine_module.Machine, "_release_barriers_at_once", lambda self, ctas: None)


def _spied(monkeypatch):
    """Count the group forms' completed calls."""
    seen = {"group": 0, "release": 0, "apart": 0}
    group, release = ops_control._bar_group, machine_module.Machine._release_barriers_at_once

    def g(*a, **k):
        group(*a, **k)
        seen["group"] += 1

    def r(self, ctas):
        per = self.warps_per_cta * 32
        st = self.state[:len(self.ctaids) * per].reshape(-1, per)
        rows = list(ctas)
        due = [c for c in rows if np.count_nonzero(st[c] == machine_module.AT_BAR)
               and np.all((st[c] == machine_module.AT_BAR) | (st[c] == machine_module.EXITED))]
        out = release(self, ctas)
        seen["release"] += out is True
        seen["apart"] += out is True and rows != list(range(rows[0], rows[0] + len(rows)))
        for c in due:                       # every CTA whose live threads all arrived goes on
            assert out and not np.count_nonzero(st[c] == machine_module.AT_BAR)
        return out
    monkeypatch.setattr(ops_control, "_bar_group", g)
    monkeypatch.setattr(machine_module.Machine, "_release_barriers_at_once", r)
    return seen


def _run(cubin, kernel, grid, block, params, hz):
    res = run(cubin, kernel, grid, block, params, decoder=cubin_listing_decoder(cubin), hazard_check=hz)
    return res.stats["instructions"], res.stats.get("cycles")


@pytest.mark.parametrize("hz", [False, True])
@pytest.mark.parametrize("n,grid,block", [(1000, 9, 128), (300, 3, 128), (77, 2, 64), (4096, 32, 128)])
def test_block_sum_as_numpy_and_as_warp_by_warp(cubins, monkeypatch, hz, n, grid, block):
    rng = np.random.default_rng(n + grid)
    x = rng.integers(0, 1 << 20, n).astype(np.uint32)
    got = np.zeros(grid, np.uint32)
    seen = _spied(monkeypatch)
    counts = _run(cubins["block_sum"], "block_sum", (grid,), (block,), [x, got, np.uint32(n)], hz)
    want = np.zeros(grid, np.uint32)
    for c in range(grid):
        part = x[c * block:min((c + 1) * block, n)]
        if len(part):
            want[c] = np.uint32(part.astype(np.uint64).sum() & 0xFFFFFFFF)
    assert np.array_equal(got, want)
    if not hz:
        assert seen["group"] and seen["release"]          # the group forms ran
    monkeypatch.undo()
    _warp_by_warp(monkeypatch)
    again = np.zeros(grid, np.uint32)
    assert _run(cubins["block_sum"], "block_sum", (grid,), (block,), [x, again, np.uint32(n)], hz) == counts
    assert np.array_equal(again, got)


@pytest.mark.parametrize("hz", [False, True])
@pytest.mark.parametrize("grid,block", [(6, 64), (5, 32), (16, 64)])
def test_parity_barriers_and_reductions(cubins, monkeypatch, hz, grid, block):
    got = np.zeros(grid * block * 2, np.uint32)
    seen = _spied(monkeypatch)
    counts = _run(cubins["parity"], "parity", (grid,), (block,), [got], hz)
    # each thread reads its mirror's value, then the CTA's popc of odd values and the
    # and/or of "value < 40" (NumPy, from the kernel's definition)
    want = np.zeros((grid, block, 2), np.uint32)
    for c in range(grid):
        t = np.arange(block)
        vals = (t * 3) if c & 1 else (t + 101)
        read = vals[block - 1 - t]
        red = np.count_nonzero(read & 1) + 1000 * bool(np.all(read < 40)) + 10000 * bool(np.any(read < 40))
        want[c, :, 0] = read
        want[c, :, 1] = red
    assert np.array_equal(got.reshape(grid, block, 2), want)
    if not hz:
        assert seen["group"] and seen["release"] and seen["apart"]     # every other CTA too
    monkeypatch.undo()
    _warp_by_warp(monkeypatch)
    again = np.zeros_like(got)
    assert _run(cubins["parity"], "parity", (grid,), (block,), [again], hz) == counts
    assert np.array_equal(again, got)


def test_a_counted_barrier_goes_warp_by_warp(cubins, monkeypatch):
    got = np.zeros(3 * 96, np.uint32)
    seen = _spied(monkeypatch)
    counts = _run(cubins["counted"], "counted", (3,), (96,), [got], False)
    t = np.arange(96)
    want = np.where(t < 64, (t ^ 32) & 63, -1)
    for c in range(3):
        assert np.array_equal(got[c * 96:c * 96 + 64], want[:64])
    assert seen["group"] == 0                                  # counted: per warp
    monkeypatch.undo()
    _warp_by_warp(monkeypatch)
    again = np.zeros_like(got)
    assert _run(cubins["counted"], "counted", (3,), (96,), [again], False) == counts
    assert np.array_equal(again, got)
