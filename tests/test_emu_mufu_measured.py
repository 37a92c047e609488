"""The emulator's MUFU against an H200's own results (sm_90; `tools/gpu_mufu_capture.py` on
2026-11-30, the samples in tests/gpu_truth/mufu_sm90_samples.json written from that capture by
`tools/mufu_tables.py --samples`): RCP/RSQ/SQRT/EX2/LG2 at the exponents measured whole and at
the sampled ones, and the F16/BF16 EX2 and TANH. Half of each sweep's samples are inputs
where the GPU does not give the correctly rounded value, so the emulator before the measured
tables (correctly rounded results) fails them. Each runs ptxas's sm_90 cubin of the same
PTX instruction the capture used, once with a warp per 32 samples (the vector path) and
once one thread at a time for a few (the one-thread interpreter)."""
import json
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

SAMPLES = json.loads((Path(__file__).parent / "gpu_truth" / "mufu_sm90_samples.json").read_text())["sweeps"]

# the capture's instruction for each function (tools/gpu_mufu_capture.FUNCTIONS)
PTX_OP = {"rcp": ("rcp.approx.ftz.f32", "f32"), "rsq": ("rsqrt.approx.ftz.f32", "f32"),
          "sqrt": ("sqrt.approx.ftz.f32", "f32"), "ex2": ("ex2.approx.ftz.f32", "f32"), "lg2": ("lg2.approx.ftz.f32", "f32"), "ex2_f16": ("ex2.approx.f16", "f16"),
          "tanh_f16": ("tanh.approx.f16", "f16"), "ex2_bf16": ("ex2.approx.ftz.bf16", "bf16"),
          "tanh_bf16": ("tanh.approx.bf16", "bf16")}


def _kernel(fn: str) -> bytes:
    op, kind = PTX_OP[fn]
    if kind == "f32":
        body = f"mov.b32 %f1, %r1; {op} %f2, %f1; mov.b32 %r2, %f2;"
        regs = ".reg .f32 %f<3>;"
    else:
        body = f"cvt.u16.u32 %h1, %r1; {op} %h2, %h1; cvt.u32.u16 %r2, %h2;"
        regs = ".reg .b16 %h<3>;"
    src = f""".version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .b32 %r<3>;
    .reg .b64 %d<4>;
    {regs}
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %d0, %r0, 4;
    ld.param.u64 %d1, [in];
    add.s64 %d1, %d1, %d0;
    ld.global.b32 %r1, [%d1];
    {body}
    ld.param.u64 %d2, [out];
    add.s64 %d2, %d2, %d0;
    st.global.b32 [%d2], %r2;
    ret;
}}
"""
    result = oracle.ptxas(src, "sm_90")
    assert result.ok, result.stderr
    return result.output


def _sweep_function(name: str) -> str:
    return next(fn for fn in sorted(PTX_OP, key=len, reverse=True) if name.startswith(fn + "_"))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_emulator_gives_the_h200s_mufu_results(name):
    fn = _sweep_function(name)
    pairs = np.array(SAMPLES[name], dtype=np.uint64)
    inputs, want = pairs[:, 0].astype(np.uint32), pairs[:, 1].astype(np.uint32)
    cubin = _kernel(fn)
    n = len(inputs) - len(inputs) % 32
    out = np.zeros(n, np.uint32)
    run(cubin, "k", (1,), (n,), [inputs[:n].copy(), out])
    assert [hex(v) for v in out] == [hex(v) for v in want[:n]]
    for i in range(0, len(inputs), max(1, len(inputs) // 6)):     # one thread: the scalar paths
        one = np.zeros(1, np.uint32)
        run(cubin, "k", (1,), (1,), [inputs[i:i + 1].copy(), one])
        assert hex(one[0]) == hex(want[i]), f"input {inputs[i]:#x}"
