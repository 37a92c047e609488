"""sm_103's `MUFU.EX2.F16x2` (ptxas 13.5.37 writes it for `ex2.approx.f16x2` on sm_103 only;
sm_100's nvdisasm rejects the word): the decoder reads it with the blackwell table's sm_103
form, and the emulator computes each half as `MUFU.EX2.F16` does (2^x of the half, rounded to
FP16, a NaN the canonical 0x7fff). Campaign 25 (seeds 36000240, 36000965: undecodable words,
then mismatches on ex2.approx.f16x2). Expected values: an H200's measured MUFU.EX2.F16 / .BF16
of each half (sm_90, every input, `tools/gpu_mufu_capture.py`; sm_103's unit is not measured
and assumed the same)."""
from pathlib import Path
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

SRC = """.version 8.8
.target sm_103
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<4>;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %d0, %r0, 4;
    ld.param.u64 %d1, [in];
    add.s64 %d1, %d1, %d0;
    ld.global.b32 %r1, [%d1];
    ex2.approx.f16x2 %r2, %r1;
    ld.param.u64 %d2, [out];
    add.s64 %d2, %d2, %d0;
    st.global.b32 [%d2], %r2;
    ret;
}
"""


H200 = np.load(Path(__file__).resolve().parents[1] / "emu" / "data" / "mufu_sm90.npz")


def _want(words: np.ndarray) -> list[int]:
    table = H200["ex2_f16"]
    return [int(table[w & 0xFFFF]) | int(table[w >> 16]) << 16 for w in words.tolist()]


@pytest.mark.parametrize("by", ["ptxas", "ours"])
def test_ex2_f16x2_on_sm103_is_two_half_ex2s(by):
    rng = np.random.default_rng(103)
    halves = rng.uniform(-20, 20, 64).astype(np.float16).view(np.uint16)
    halves[:6] = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001]     # 0, -0, inf, -inf, NaN, subnormal
    words = (halves[0::2].astype(np.uint32) | halves[1::2].astype(np.uint32) << 16)
    cubin = oracle.ptxas(SRC, "sm_103").output if by == "ptxas" else ptx2sass.compile(SRC, "sm_103")
    if by == "ptxas":
        assert "MUFU.EX2.F16x2" in oracle.nvdisasm(cubin, ("-c",))
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", (1,), (32,), [words.copy(), out], hazard_check=True)
    assert not res.hazards
    assert out.tolist() == _want(words)


def _want_bf16(words: np.ndarray) -> list[list[int]]:
    table = H200["ex2_bf16"]
    return [[int(table[w & 0xFFFF]), int(table[w >> 16])] for w in words.tolist()]


@pytest.mark.parametrize("by", ["ptxas", "ours"])
def test_ex2_bf16x2_on_sm103_is_two_half_ex2s(by):
    """sm_103's `MUFU.EX2.BF16x2` (`ex2.approx.ftz.bf16x2`; branch isaleft32): the decoder
    read it as an f32 `MUFU.EX2` and the emulator ran that; ours wrote two MUFU.EX2.BF16 and
    a PRMT. Now both cubins hold the one MUFU and give 2^x of each half, a NaN half
    a NaN (the H200's measured half results, above). Inputs: normal bf16 values in [-20, 20],
0, -0, inf, -inf, NaN."""
    src = SRC.replace("ex2.approx.f16x2", "ex2.approx.ftz.bf16x2")
    rng = np.random.default_rng(1032)
    f = rng.uniform(-20, 20, 64).astype(np.float32).view(np.uint32)
    halves = ((f + 0x7FFF + (f >> 16 & 1)) >> 16).astype(np.uint16)
    halves[:5] = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0]
    words = (halves[0::2].astype(np.uint32) | halves[1::2].astype(np.uint32) << 16)
    cubin = oracle.ptxas(src, "sm_103").output if by == "ptxas" else ptx2sass.compile(src, "sm_103")
    assert "MUFU.EX2.BF16x2" in oracle.nvdisasm(cubin, ("-c",))
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", (1,), (32,), [words.copy(), out], hazard_check=True)
    assert not res.hazards
    for got, want in zip(out.tolist(), _want_bf16(words)):
        for k, h in enumerate(want):
            assert got >> (16 * k) & 0xFFFF == h, (hex(got), hex(h))
