"""Emulator semantics that run 11 on an H200 (sm_90) showed wrong on ptxas's own cubins of
fresh fuzz programs (seeds 9,300,800-9,301,199; docs/gpu/2026-11-27-h200-sm90-run11.md). Each
test runs ptxas's sm_90 cubin of a small kernel in the emulator; the expected values are exact
arithmetic that the GPU's recorded bytes agree with (the whole fuzz launches are kept in
tests/gpu_truth where the emulator now reproduces them bit for bit)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _run(body: str, in_bits: int, n_in: int, out_bits: int, data: np.ndarray, n_out: int) -> np.ndarray:
    from codegen_harness import kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    build = oracle.ptxas(kernel(body, in_bits, n_in, out_bits, target="sm_90"), "sm_90")
    assert build.ok, build.stderr
    out = np.zeros(n_out, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[out_bits])
    run(build.output, "k", 1, n_out, [out, data])
    return out


def test_tanh_approx_f32_keeps_subnormals():
    """MUFU.TANH does not flush: tanh of a subnormal x is x (|x| < 2^-126, so tanh(x) = x
    to far below an ulp). The H200 gave 0x3c0, 0x7fffc0, 0x40 … for fuzz 9300822 where
    the emulator flushed to 0."""
    xs = np.array([0x3C0, 0x7FFFC0, 0x40, 0x1, 0x807FFFFF, 0x80000040, 0x3F000000], dtype=np.uint32)
    got = _run("tanh.approx.f32 %o, %a0;", 32, 1, 32, xs, len(xs))
    assert [hex(v) for v in got[:6]] == [hex(v) for v in xs[:6]]
    assert abs(float(got[6:].view(np.float32)[0]) - np.tanh(0.5)) < 2 ** -10     # a normal input still works


@pytest.mark.parametrize("kind", ["e4m3x2", "e5m2x2"])
def test_cvt_satfinite_relu_fp8_clamps_negatives_to_zero(kind):
    """`cvt.rn.satfinite.relu.e4m3x2.f32` (F2FP.SATFINITE.RELU.E4M3.F32.PACK_AB_MERGE_C):
    a negative input becomes +0 before narrowing. The H200 stored 0x0000 for fuzz 9300925
    where the emulator kept the saturated -448 (0xfefe)."""
    vals = np.array([-1e30, -3.0, -0.0, 2.0, 1e30, 0.5], dtype=np.float32)
    body = (f".reg .b16 %h;\ncvt.rn.satfinite.relu.{kind}.f32 %h, %a0, %a0;\ncvt.u32.u16 %o, %h;")
    got = _run(body, 32, 1, 32, vals.view(np.uint32), len(vals))
    big = 0x7E if kind == "e4m3x2" else 0x7B           # the largest finite code of each format
    two = 0x40                                          # 2.0: e4m3 0_1000_000, e5m2 0_10000_00
    half = 0x30 if kind == "e4m3x2" else 0x38           # 0.5
    want = [0, 0, 0, two * 0x101, big * 0x101, half * 0x101]
    assert [hex(v) for v in got] == [hex(v) for v in want]


_DMMA = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
.reg .b64 %p<4>;
.reg .f64 %a, %b, %c<2>, %d<2>;
ld.param.u64 %p0, [pa]; ld.param.u64 %p1, [pb]; ld.param.u64 %p2, [pc]; ld.param.u64 %p3, [pd];
wmma.load.a.sync.aligned.row.m8n8k4.global.f64 {%a}, [%p0], 4;
wmma.load.b.sync.aligned.col.m8n8k4.global.f64 {%b}, [%p1], 4;
wmma.load.c.sync.aligned.row.m8n8k4.global.f64 {%c0, %c1}, [%p2], 8;
wmma.mma.sync.aligned.row.col.m8n8k4.MODE.f64.f64.f64.f64 {%d0, %d1}, {%a}, {%b}, {%c0, %c1};
wmma.store.d.sync.aligned.row.m8n8k4.global.f64 [%p3], {%d0, %d1}, 8;
ret;
}"""


def _dmma(mode: str, a: float, b: float, c: float) -> np.ndarray:
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    build = oracle.ptxas(_DMMA.replace("MODE", mode), "sm_90")
    assert build.ok, build.stderr
    A, B, C = np.full(32, a), np.full(32, b), np.full(64, c)
    D = np.zeros(64)
    run(build.output, "k", 1, 32, [A, B, C, D])
    return D


def test_dmma_rounds_after_each_of_its_four_products():
    """wmma m8n8k4 f64 (DMMA.8x8x4) is four fused multiply-adds in k order, each rounded: an
    H200 gave that for fuzz 9300912/9300803 (run 11) where one rounding of the exact sum was
    1-2 ulps off. With C = 1 and each product 2^-53 (half an ulp of 1), every step ties back
    to 1 (round to even), where the exact sum 1 + 2^-51 is representable."""
    D = _dmma("rn", 2.0 ** -27, 2.0 ** -26, 1.0)
    assert set(D.tolist()) == {1.0}
    D = _dmma("rp", 2.0 ** -27, 2.0 ** -26, 1.0)      # each step rounds up by an ulp: 1 + 4 * 2^-52
    assert set(D.tolist()) == {1.0 + 4 * 2.0 ** -52}


def test_dmma_rm_overflow_gives_the_largest_double():
    """.rm of a positive result beyond the range is the largest finite double, not +inf (an
    H200, fuzz 9300912: 0x7fefffffffffffff where the emulator gave 0x7ff0000000000000)."""
    D = _dmma("rm", 2.0 ** 600, 2.0 ** 500, 0.0)
    assert set(D.tolist()) == {np.finfo(np.float64).max}
    D = _dmma("rn", 2.0 ** 600, 2.0 ** 500, 0.0)
    assert set(D.tolist()) == {np.inf}


def test_shared_fill_shows_reads_of_unwritten_shared_memory():
    """Fuzz programs read a warp's wmma scratch where no store wrote it (ldm wider than the
    tile: run 11's 9300912/9300803/9300924/9301099): the H200 returned what an earlier
    kernel left there. tools/gpu_truth runs the emulator with two shared-memory fills to
    class such words `undefined`; the fill must reach exactly the unwritten bytes."""
    from ptx2sass import oracle
    from ptx2sass.emu.launch import Param, run_buffers
    from ptx2sass.emu.loader import load_program
    ptx = """.version 8.0
.target sm_90
.address_size 64
.shared .align 4 .b32 s[64];
.visible .entry k(.param .u64 out)
{
.reg .b64 %a; .reg .b32 %r<4>;
ld.param.u64 %a, [out];
mov.u32 %r0, 7;
st.shared.u32 [s], %r0;
bar.sync 0;
ld.shared.u32 %r1, [s];
ld.shared.u32 %r2, [s+4];
st.global.v2.u32 [%a], {%r1, %r2};
ret;
}"""
    build = oracle.ptxas(ptx, "sm_90")
    assert build.ok, build.stderr
    prog = load_program(build.output, "k")
    got = {}
    for fill in (0, 0x5A):
        res = run_buffers(prog, 1, 1, [Param(buffer="out")], {"out": (8, bytes(8))}, hazard_check=False,
                          shared_fill=fill)
        got[fill] = np.frombuffer(bytes(res.buffers["out"]), np.uint32).tolist()
    assert got == {0: [7, 0], 0x5A: [7, 0x5A5A5A5A]}
