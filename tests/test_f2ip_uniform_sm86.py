"""`cvt.{rni,rzi}.u8.f32` of a value computed from a parameter on sm_86: ptxas 13.5 converts the
uniform register (`ULOP3` of the parameter) with `F2IP.U8.F32[.TRUNC].NTZ R, RZ, UR, RZ`; the
round-to-nearest word was one the ampere table could not decode (fuzz campaign 27, seed
38004473: emu_fail; `tools/isa_seeds/campaign27b_sm86.words`). ptxas's cubin and ours in the emulator =
NumPy's rounding clamped to the 8-bit range (PTX cvt: float-to-integer conversions saturate,
NaN gives 0), for ties, out-of-range values, subnormals, ±0, ±inf and NaN. sm_89 alike (fuzz
campaign 31, seed 42100239: the same word with UR6 was read on sm_86 only;
`tools/isa_seeds/campaign31_sm89.words`)."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .b32 p)
{{
.reg .b64 %ro, %ri, %g;
.reg .b32 %t;
.reg .f32 %a;
.reg .b32 %q;
.reg .b16 %b, %c;
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
ld.param.b32 %q, [p];
xor.b32 %q, %q, 0x80000000;
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, 4;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
ld.global.f32 %a, [%ri];
cvt.{rnd}.{d}.f32 %b, %a;
cvt.{rnd}.{d}.f32 %c, %q;
st.global.v2.b16 [%ro], {{%b, %c}};
ret;
}}
"""

ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
RANGE = {"u8": (0, 255)}
VALUES = np.array([0.5, 1.5, 2.5, -0.5, 254.5, 255.49, 255.5, 256.0, 1e9, -1.0, -0.0, 0.0, 3.7, 127.5,
                   -128.5, -129.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 7.0], np.float32)


def model(x: np.ndarray, rnd: str, d: str) -> np.ndarray:
    lo, hi = RANGE[d]
    with np.errstate(invalid="ignore"):
        r = np.clip(ROUND[rnd](x.astype(np.float64)), lo, hi)
    r = np.where(np.isnan(x), 0, r).astype(np.int64)
    return (r & 0xFF).astype(np.uint16)       # the register's low byte (the store's b16 is masked by ptxas too)


@pytest.mark.parametrize("arch", ["sm_86", "sm_89"])
@pytest.mark.parametrize("rnd", ["rni", "rzi"])
def test_cvt_u8_of_uniform_value(rnd, arch):
    """The parameter's sign flipped (`xor`, a ULOP3) and converted: F2IP from the UR."""
    d = "u8"
    ptx = KERNEL.format(rnd=rnd, d=d, arch=arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    listing = oracle.nvdisasm(theirs.output)
    assert re.search(r"F2IP\.U8\.F32\S* R\d+, RZ, UR\d+, RZ", listing), listing
    x = VALUES
    for p in VALUES:
        want = np.stack([model(x, rnd, d), np.full(len(x), model(-np.array([p]), rnd, d)[0], np.uint16)],
                        axis=1).reshape(-1)
        for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
            out = np.zeros(2 * len(x), np.uint16)
            res = run(cubin, "k", 1, len(x), [out, x.copy(), np.float32(p)], hazard_check=True)
            assert not res.hazards, (name, res.hazards[:1])
            np.testing.assert_array_equal(out, want, err_msg=f"{name} p={p}")
