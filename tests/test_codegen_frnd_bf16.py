"""`cvt.{rni,rzi,rmi,rpi}.bf16.bf16` (sm_90+; was 'not supported yet', found by the real-world
corpus's narrow_atomics_fp8.cu `hrint` on sm_90): one FRND.BF16[.TRUNC/.FLOOR/.CEIL] as
ptxas 13.5 writes, of a register and of a parameter (a uniform register). Ours and ptxas's
cubins in the emulator = NumPy's rounding of the bfloat16 value (exact in f32), NaN in ->
NaN out."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .b16 p)
{{
.reg .b64 %ro, %ri, %g, %go;
.reg .b32 %t;
.reg .b16 %a, %b, %c, %q;
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
ld.param.b16 %q, [p];
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, 2;
mul.wide.u32 %go, %t, 4;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %go;
ld.global.b16 %a, [%ri];
cvt.{rnd}.bf16.bf16 %b, %a;
cvt.{rnd}.bf16.bf16 %c, %q;
st.global.v2.b16 [%ro], {{%b, %c}};
ret;
}}
"""

ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def model(bits: np.ndarray, rnd: str) -> np.ndarray:
    x = (bits.astype(np.uint32) << 16).view(np.float32)
    r = ROUND[rnd](x).astype(np.float32)
    return (r.view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("rnd", sorted(ROUND))
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_cvt_integral_bf16(rnd, arch):
    ptx = KERNEL.format(version="8.5" if arch == "sm_90" else "8.8", arch=arch, rnd=rnd)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    forms = re.compile(r"\bU?FRND((?:\.\w+)*)")      # ptxas rounds the parameter with UFRND on sm_120
    assert set(forms.findall(oracle.nvdisasm(ours))) == set(forms.findall(oracle.nvdisasm(theirs.output)))
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2**16, 128, dtype=np.uint32).astype(np.uint16)
    # ties (0.5, 1.5, 2.5, -0.5), just off them, 2^7 and up (integral already), ±0, ±inf,
    # tiny and subnormal values
    x[:16] = [0x3F00, 0x3FC0, 0x4020, 0xBF00, 0x3F01, 0xBFBF, 0x4300, 0x4301, 0xC37F,
              0x0000, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x8001, 0x3E80]
    x = np.where((x & 0x7FFF) > 0x7F80, x & 0xBFFF, x).astype(np.uint16)    # no NaN
    for p, pw in ((0xC0A0, 0xC0A0), (0xC0B0, None)):
        want_p = model(np.array([p], np.uint16), rnd)[0] if pw is None else pw
        want = np.stack([model(x, rnd), np.full(128, want_p, np.uint16)], axis=1).reshape(-1)
        for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
            out = np.zeros(256, np.uint16)
            res = run(cubin, "k", 1, 128, [out, x.copy(), np.uint16(p)], hazard_check=name == "ours")
            assert not res.hazards
            np.testing.assert_array_equal(out, want, err_msg=name)


def test_nan_stays_nan():
    ptx = KERNEL.format(version="8.5", arch="sm_90", rnd="rni")
    for cubin in (codegen.compile_ptx(ptx, "sm_90", "k.ptx"), oracle.ptxas(ptx, "sm_90").output):
        out = np.zeros(4, np.uint16)
        run(cubin, "k", 1, 2, [out, np.array([0x7FC0, 0xFFC1], np.uint16), np.uint16(0x7FC0)])
        assert all((v & 0x7FFF) > 0x7F80 for v in out)
