"""sm_90 half-precision forms (issue 15): `fma.rn.oob[.relu].{f16,f16x2,bf16,bf16x2}` as
HFMA2[.BF16_V2].OOB[.RELU] (was 'not supported yet'), `tanh.approx.{bf16,bf16x2}` and
`ex2.approx.ftz.{bf16,bf16x2}` as MUFU.TANH/EX2.BF16 (the high half read as `R.H1`, joined
by PRMT), as ptxas 13.5. Ours and ptxas's cubins run in the emulator; the MUFU/HFMA2 forms
equal ptxas's; fma.oob on inputs that are no NaN (where .oob changes nothing) = exact
rounding of a*b+c (NumPy/Python model), the relu forms clamping negatives to +0."""
import math
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %g;
.reg .b32 %a, %b, %c, %d;
.reg .b16 %ha, %hb, %hc, %hd, %x;
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
mov.u32 %a, %tid.x;
mul.wide.u32 %g, %a, 16;
add.s64 %ri, %ri, %g;
mul.wide.u32 %g, %a, 4;
add.s64 %ro, %ro, %g;
ld.global.v4.u32 {{%a, %b, %c, %d}}, [%ri];
mov.b32 {{%ha, %x}}, %a;
mov.b32 {{%hb, %x}}, %b;
mov.b32 {{%hc, %x}}, %c;
{body}
st.global.u32 [%ro], %d;
ret;
}}
"""
FORMS = re.compile(r"\b(?:HFMA2|MUFU)(?:\.\w+)*")


def _compile(body, arch="sm_90"):
    ptx = KERNEL.format(body=body)
    if arch != "sm_90":       # ptxas 13.5 writes the same forms on sm_100/sm_120
        ptx = ptx.replace(".version 8.6\n.target sm_90", ".version 8.8\n.target " + arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert FORMS.findall(oracle.nvdisasm(ours)) == FORMS.findall(oracle.nvdisasm(theirs.output))
    return ours, theirs.output


def _run(cubin, x, name):
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
    assert not res.hazards
    return out


def _halves(rng, kind, n):
    """Normal halves with exponents -4..3 (a*b+c is then exact in float64)."""
    sign = rng.integers(0, 2, n)
    exp = rng.integers(-4, 4, n)
    bits = 10 if kind == "f16" else 7
    mant = rng.integers(0, 1 << bits, n)
    vals = (-1.0) ** sign * (1 + mant / (1 << bits)) * 2.0 ** exp
    return vals


def _bits(vals, kind):
    if kind == "f16":
        return vals.astype(np.float16).view(np.uint16).astype(np.uint32)
    return (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)


def _round(x: float, kind: str, relu: bool) -> int:
    if relu and (x < 0 or (x == 0 and math.copysign(1, x) < 0)):
        x = 0.0
    if kind == "f16":
        return int(np.float64(x).astype(np.float16).view(np.uint16))
    if x == 0:
        return 0x8000 if math.copysign(1, x) < 0 else 0
    m, e = math.frexp(x)
    r = round(m * 256) / 256 * 2.0 ** e          # round half to even on 8 significant bits
    return int(np.float32(r).view(np.uint32)) >> 16


@pytest.mark.parametrize("ty", ["f16", "f16x2", "bf16", "bf16x2"])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_fma_oob(ty, relu, arch):
    kind = ty[:-2] if ty.endswith("x2") else ty
    mod = ".relu" if relu else ""
    if ty.endswith("x2"):
        body = f"fma.rn.oob{mod}.{ty} %d, %a, %b, %c;"
    else:
        body = f"fma.rn.oob{mod}.{ty} %hd, %ha, %hb, %hc;\nmov.b32 %d, {{%hd, %hd}};"
    ours, theirs = _compile(body, arch)
    rng = np.random.default_rng(5 + relu)
    v = _halves(rng, kind, (32, 4, 2))
    b = _bits(v, kind)
    x = (b[..., 0] | b[..., 1] << 16).astype(np.uint32)
    lanes = 2 if ty.endswith("x2") else 1
    want = np.zeros(32, np.uint32)
    for t in range(32):
        r = [_round(v[t, 0, h] * v[t, 1, h] + v[t, 2, h], kind, relu) for h in range(lanes)]
        want[t] = r[0] | (r[1] if lanes == 2 else r[0]) << 16
    for name, cubin in (("ours", ours), ("ptxas", theirs)):
        np.testing.assert_array_equal(_run(cubin, x, name), want, err_msg=name)


@pytest.mark.parametrize("fn", ["tanh.approx", "ex2.approx.ftz"])
@pytest.mark.parametrize("ty", ["bf16", "bf16x2"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_mufu_bf16(fn, ty, arch):
    if ty == "bf16x2":
        body = f"{fn}.{ty} %d, %a;"
    else:
        body = f"{fn}.{ty} %hd, %ha;\n{fn}.{ty} %hc, %hb;\nmov.b32 %d, {{%hd, %hc}};"
    ours, theirs = _compile(body, arch)
    rng = np.random.default_rng(9)
    x = rng.integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    x[:, :2] = (x[:, :2] & 0x3FFF3FFF) ^ (x[:, :2] & 0x80008000)     # moderate magnitudes
    np.testing.assert_array_equal(_run(ours, x, "ours"), _run(theirs, x, "ptxas"))
