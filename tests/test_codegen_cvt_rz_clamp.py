"""cvt.rz.{relu,satfinite}.{bf16,f16}.f32 (was 'not supported yet'; .rn only): ptxas's
F2FP.<clamp>.<type>.MERGE_C.RZ on sm_80/89/90/120 (table forms probed from
tools/isa_seeds/f2fp_rz_clamp.ptx), compared with ptxas's cubin in the emulator over edge
and random inputs, and with exact round-toward-zero + clamp in NumPy."""
import numpy as np
import pytest

from codegen_harness import run_both

EDGES = np.array([0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
                  0x7F7FFFFF, 0xFF7FFFFF, 0x477FF000, 0x47800000, 0xC77FF000, 0x3F8FFFFF,
                  0xBF8FFFFF, 0x00000001, 0x387FFFFF], np.uint32)


def _model(x: np.ndarray, ty: str, relu: bool, sat: bool) -> np.ndarray:
    """Round toward zero to bf16/f16 (truncation of the magnitude), .relu: negatives and
    -0 to +0 (NaN stays NaN), .satfinite: beyond the largest finite (and +-inf) to it;
    NaN as the canonical 0x7fff / 0x7fff."""
    f = x.view(np.float32).astype(np.float64)
    out = np.zeros(len(x), np.uint16)
    for i, v in enumerate(f):
        if np.isnan(v):
            out[i] = 0x7FFF
            continue
        if relu and (v < 0 or (v == 0 and np.signbit(v))):
            v = 0.0
        if ty == "bf16":
            bits = int(np.float32(v).view(np.uint32))
            r = bits >> 16                      # truncation is toward zero for bf16
            big = 0x7F7F
        else:
            big = 0x7BFF
            a = abs(v)
            if a >= 65520.0 or np.isinf(a):
                r = 0x7C00 if np.isinf(a) else big
            else:
                h = np.float16(a)
                if float(h) > a:               # toward zero
                    h = np.nextafter(h, np.float16(0))
                r = int(h.view(np.uint16))
            if v < 0 or (v == 0 and np.signbit(v)):
                r |= 0x8000
        if sat and (r & 0x7FFF) > big:
            r = (r & 0x8000) | big
        out[i] = r
    return out


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("mods", [".relu", ".satfinite", ".relu.satfinite"])
@pytest.mark.parametrize("ty", ["bf16", "f16"])
def test_cvt_rz_clamp(arch, mods, ty):
    rng = np.random.default_rng(5)
    x = np.concatenate([EDGES, rng.integers(0, 2**32, 48, dtype=np.uint64).astype(np.uint32)])
    ours, theirs, _ = run_both(f"cvt.rz{mods}.{ty}.f32 %o, %a0;", 32, 1, 16, data=x,
                               version="8.8" if arch == "sm_120" else "8.1", arch=arch, target=arch)
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(theirs, _model(x, ty, "relu" in mods, "satfinite" in mods))
