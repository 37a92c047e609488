"""Conversions between FP32 and FP16 that ptxas writes with HADD2 on sm_75.

`cvt.sat.f32.f16` on sm_75: ptxas writes `HADD2.F32.SAT R, R.H0_H0, -RZ.H0_H0`, and the
emulator converted without the clamp (its `.F32` result path returned before `.SAT`): 15.0
stayed 15.0 (fuzz campaign 15's seed 27000659). The PTX manual: `.sat` clamps the result to
[0.0, 1.0], NaN to +0.0. Expected values from that rule on the inputs (NumPy)."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

# one thread per element: load `src` from a, convert with `cvt`, store `dst` to b
PTX = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 b)
{{
.reg .b16 %h<1>; .reg .b32 %r<2>; .reg .b64 %d<5>;
ld.param.u64 %d0, [a];
ld.param.u64 %d1, [b];
mov.u32 %r0, %tid.x;
mul.wide.u32 %d2, %r0, {src_bytes};
add.s64 %d3, %d0, %d2;
ld.global.{src} {src_reg}, [%d3];
{cvt};
mul.wide.u32 %d2, %r0, {dst_bytes};
add.s64 %d4, %d1, %d2;
st.global.{dst} [%d4], {dst_reg};
ret;
}}
"""
F16_TO_F32 = dict(src_bytes=2, src="b16", src_reg="%h0", dst_bytes=4, dst="b32", dst_reg="%r1")
F32_TO_F16 = dict(src_bytes=4, src="f32", src_reg="%r1", dst_bytes=2, dst="b16", dst_reg="%h0")


@pytest.mark.parametrize("arch", ["sm_75", "sm_89"])
def test_cvt_sat_f32_f16_clamps(arch):
    x = np.array([15.0, -2.0, 0.5, 1.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, 0.999], np.float16)
    build = oracle.ptxas(PTX.format(arch=arch, cvt="cvt.sat.f32.f16 %r1, %h0", **F16_TO_F32), arch)
    assert build.ok
    out = np.zeros(len(x), np.float32)
    run(build.output, "k", (1, 1, 1), (len(x), 1, 1), [x.view(np.uint16).copy(), out])
    want = np.where(np.isnan(x), 0.0, np.clip(x.astype(np.float32), 0.0, 1.0)).astype(np.float32)
    want = np.where(want == 0, np.float32(0.0), want)      # -0 saturates to +0
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def _f16_toward_zero(x: np.ndarray) -> np.ndarray:
    """IEEE round-toward-zero of FP32 values to FP16 (exact rationals: every FP32 value and
    every FP16 value are exact in FP64)."""
    h = x.astype(np.float64).astype(np.float16)
    away = np.abs(h.astype(np.float64)) > np.abs(x.astype(np.float64))
    return np.where(away, np.nextafter(h, np.float16(0)), h)


@pytest.mark.parametrize("mode", ["rz", "rz.sat"])
def test_cvt_rz_f16_f32_on_sm75_truncates(mode):
    """sm_75's cvt.rz.f16.f32 is `HADD2 R, R.F32, -RZ.H0_H0` in ptxas's code: the `.F32`
    source is narrowed toward zero (the emulator rounded it to nearest: campaign 15's
    27000663). Expected: the manual's .rz (and .sat: clamp to [0, 1]) by an exact model."""
    x = np.array([0.50011, 1.0 / 3, -1.0 / 3, 70000.0, -70000.0, 3e-6, -3e-6, 0.99999,
                  np.inf, 2049.7, 1e-9], np.float32)
    build = oracle.ptxas(PTX.format(arch="sm_75", cvt=f"cvt.{mode}.f16.f32 %h0, %r1", **F32_TO_F16), "sm_75")
    assert build.ok
    assert ".F32, -RZ.H0_H0" in oracle.nvdisasm(build.output, ("-c",))
    out = np.zeros(len(x), np.uint16)
    run(build.output, "k", (1, 1, 1), (len(x), 1, 1), [x.copy(), out])
    want = _f16_toward_zero(x)
    if mode.endswith("sat"):
        want = np.clip(want, np.float16(0), np.float16(1))
    assert out.tolist() == want.view(np.uint16).tolist()
