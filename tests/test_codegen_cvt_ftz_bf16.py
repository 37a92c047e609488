"""cvt.{rn,rz}.ftz.bf16.f32 (was refused with an internal operand in the message: the
source was flushed by FMUL.FTZ and the flushed register handed to the table): one
F2F.FTZ.BF16.F32[.RZ] as ptxas 13.5 on sm_80/89/90/120; ours and ptxas's cubins in the
emulator against NumPy (subnormal sources flushed to a signed zero, then rounded to bf16:
to nearest even / toward zero); NaN sources: ours = ptxas's (the NaN F2F writes is the
emulator's, not checked here)."""
import numpy as np
import pytest

from codegen_harness import run_both


def _model(x: np.ndarray, rnd: str) -> np.ndarray:
    out = np.zeros(len(x), np.uint16)
    for i, b in enumerate(x.tolist()):
        if (b & 0x7F800000) == 0:
            b &= 0x80000000                        # flushed to zero, sign kept
        if rnd == "rz":
            out[i] = b >> 16
        else:
            lower = b & 0xFFFF
            r = b >> 16
            if lower > 0x8000 or (lower == 0x8000 and r & 1):
                r += 1
            out[i] = r
    return out


@pytest.mark.parametrize("arch,version", [("sm_80", "7.8"), ("sm_89", "7.8"), ("sm_90", "7.8"), ("sm_120", "8.8")])
@pytest.mark.parametrize("rnd", ["rn", "rz"])
def test_cvt_ftz_bf16(arch, version, rnd):
    x = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x3F808000,
                  0x3F818000, 0x3F808001, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                  0xBF7FFFFF], np.uint32)
    x = np.concatenate([x, np.random.default_rng(9).integers(0, 2**32, 48, dtype=np.uint64).astype(np.uint32)])
    ours, theirs, _ = run_both(f"cvt.{rnd}.ftz.bf16.f32 %o, %a0;", 32, 1, 16, data=x,
                               version=version, arch=arch, target=arch)
    want = _model(x, rnd)
    nan = ((x & 0x7F800000) == 0x7F800000) & ((x & 0x7FFFFF) != 0)
    for name, out in (("ours", ours), ("ptxas", theirs)):
        np.testing.assert_array_equal(out[~nan], want[~nan], err_msg=name)
    np.testing.assert_array_equal(ours, theirs)
