"""cvt.{rn,rz,rm,rp}.bf16.f64 on sm_90+ (was 'not supported yet'): one
F2F.BF16.F64[.RZ|.RM|.RP] as ptxas 13.5 (forms probed from tools/isa_seeds/f2f_bf16_f64.ptx);
ours and ptxas's cubins in the emulator against exact rounding of the f64 to bf16 in each
mode (one rounding, subnormals kept, overflow as IEEE says); NaN sources: ours = ptxas's."""
import math

import numpy as np
import pytest

from codegen_harness import run_both


def _bf16(v: float, rnd: str) -> int:
    sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
    a = abs(v)
    if math.isinf(a):
        return sign | 0x7F80
    if a == 0:
        return sign
    ulp = 2.0 ** (max(math.floor(math.log2(a)), -126) - 7)
    while a / ulp >= 256 and ulp < 2.0 ** 120:         # log2's rounding near powers of two
        ulp *= 2
    q = a / ulp
    n = math.floor(q)
    frac = q - n
    toward_inf = {"rn": frac > 0.5 or (frac == 0.5 and n % 2 == 1), "rz": False,
                  "rp": frac > 0 and not sign, "rm": frac > 0 and bool(sign)}[rnd]
    n += toward_inf
    r = n * ulp
    if r >= 2.0 ** 128:
        return sign | (0x7F80 if rnd == "rn" or toward_inf else 0x7F7F)
    bits = int(np.float32(r).view(np.uint32)) >> 16
    return sign | bits


@pytest.mark.parametrize("arch,version", [("sm_90", "8.1"), ("sm_120", "8.8")])
@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_cvt_bf16_f64(arch, version, rnd):
    edges = [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.005859375, 1.0029296875, -1.0029296875, 3.0e38, -3.0e38,
             3.3961775292304957e38, 3.4e38, 1e-39, -1e-39, 1e-45, 9.183549615799121e-41, math.inf, -math.inf,
             1e300, -1e-300, 2.0 ** -133, 2.0 ** -134, 3 * 2.0 ** -135, math.nan]
    rng = np.random.default_rng(10)
    rand = list(rng.standard_normal(20) * 10.0 ** rng.integers(-40, 40, 20))
    x = np.array((edges + rand + [float(v) for v in rng.uniform(-4, 4, 64)])[:64], np.float64)
    want = np.array([_bf16(float(v), rnd) if not math.isnan(v) else 0 for v in x], np.uint16)
    nan = np.isnan(x)
    ours, theirs, _ = run_both(f"cvt.{rnd}.bf16.f64 %o, %a0;", 64, 1, 16, data=x.view(np.uint64),
                               version=version, arch=arch, target=arch)
    for name, out in (("ours", ours), ("ptxas", theirs)):
        np.testing.assert_array_equal(out[~nan], want[~nan], err_msg=name)
    np.testing.assert_array_equal(ours, theirs)
