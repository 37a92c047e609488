"""bf16 -> integer `cvt` on sm_90: one F2I with a .BF16 source, as ptxas writes it
(F2I[.S16/.U16/.U32/.S64/.U64].BF16[.TRUNC/.FLOOR/.CEIL][.NTZ]; the hopper table's forms
probed from tools/isa_seeds/cvt_bf16_int_sm90.ptx). Refused before ("`cvt.s32.bf16` not
supported yet"). Expected values: the PTX ISA's cvt (round to an integer in the mode,
saturate to the destination's range, NaN to 0), computed exactly from the bf16 bits."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

ARCH = "sm_90"
TYPES = {"s16": (16, True), "u16": (16, False), "s32": (32, True), "u32": (32, False),
         "s64": (64, True), "u64": (64, False)}
ROUNDINGS = {"rni": "half_even", "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{{
.reg .b16 %h<2>; .reg .b{w} %d<2>; .reg .b32 %r<2>; .reg .b64 %rd<6>;
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [inp];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 2;
add.s64 %rd3, %rd2, %rd3;
ld.global.b16 %h1, [%rd3];
cvt.{rnd}.{dst}.bf16 %d1, %h1;
mul.wide.u32 %rd4, %r1, {bytes};
add.s64 %rd4, %rd1, %rd4;
st.global.b{w} [%rd4], %d1;
ret;
}}
"""

# bf16 bit patterns: zeros, halves (ties), small and large magnitudes, values beyond every
# range, infinities, NaNs, a subnormal
INPUTS = np.array([0x0000, 0x8000, 0x3F00, 0x3FC0, 0x4020, 0xC020, 0xBFC0, 0x3F80, 0xBF80,
                   0x4B80, 0x4780, 0xC700, 0x46FF, 0xC6FF, 0x4F00, 0xCF00, 0x4F80, 0x5F00,
                   0xDF00, 0x5F80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x3F40, 0xBF40,
                   0x4120, 0x7F7F, 0xFF7F, 0x477F, 0x3E80], dtype=np.uint16)


def _bf16(bits: int) -> float:
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def expected(dst: str, rnd: str) -> np.ndarray:
    bits, signed = TYPES[dst]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    out = []
    for b in INPUTS.tolist():
        x = _bf16(b)
        if math.isnan(x):
            # the H200 converts NaN to 0 for 32 bits or fewer and to the sign bit alone for
            # 64-bit results (f32 sources, GPU run 5; bf16 taken to share F2I's rule)
            v = 1 << 63 if bits == 64 else 0
        elif math.isinf(x):
            v = hi if x > 0 else lo
        else:
            v = round(x) if ROUNDINGS[rnd] == "half_even" else ROUNDINGS[rnd](x)
            v = min(max(v, lo), hi)
        out.append(v & ((1 << bits) - 1))
    return np.array(out, dtype=np.uint64)


def _f2i(cubin: bytes) -> list[str]:
    return [re.sub(r"\bR\d+\b", "R", m.group(1)) for m in
            re.finditer(r"/\*[0-9a-f]{4}\*/\s+(F2I[^;]*?)\s*;", oracle.nvdisasm(cubin, ("-c",)))]


# sm_100/sm_120 write the same F2I (refused there before branch isa12: the blackwell table
# lacked the forms)
@pytest.mark.parametrize("arch", [ARCH, "sm_100", "sm_120"])
@pytest.mark.parametrize("rnd", sorted(ROUNDINGS))
@pytest.mark.parametrize("dst", sorted(TYPES))
def test_bf16_to_integer_is_ptxas_f2i(dst, rnd, arch):
    bits, _ = TYPES[dst]
    w = 16 if bits == 16 else bits
    ptx = KERNEL.format(w=w, dst=dst, rnd=rnd, bytes=w // 8)
    if arch != ARCH:
        ptx = ptx.replace(".target sm_90", f".target {arch}").replace(".version 8.0", ".version 8.7")
    theirs = oracle.ptxas(ptx.encode(), arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    assert _f2i(ours) == _f2i(theirs.output) and len(_f2i(ours)) == 1
    want = expected(dst, rnd)
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[w]
    for cubin, hazards in ((ours, True), (theirs.output, False)):
        out = np.zeros(len(INPUTS), dtype)
        res = run(cubin, "k", (1, 1, 1), (len(INPUTS), 1, 1), [out, INPUTS.copy()], hazard_check=hazards)
        if hazards:
            assert not res.hazards, res.hazards[:3]
        assert (out.astype(np.uint64) == want).all(), (np.nonzero(out.astype(np.uint64) != want)[0][:5])


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
@pytest.mark.parametrize("dst", sorted(TYPES))
def test_bf16_to_integer_refused_before_sm90_in_ptxas_words(arch, dst):
    from ptx2sass import CompileError
    bits, _ = TYPES[dst]
    w = 16 if bits == 16 else bits
    ptx = KERNEL.format(w=w, dst=dst, rnd="rzi", bytes=w // 8).replace("sm_90", arch)
    theirs = oracle.ptxas(ptx.encode(), arch)
    assert not theirs.ok
    first = theirs.stderr.strip().splitlines()[0].split("error   : ")[1]
    with pytest.raises(CompileError) as e:
        codegen.lower_ptx(ptx, arch, "k.ptx")
    assert first in str(e.value) and first == f"Feature 'cvt with .{dst}.bf16' requires .target sm_90 or higher"


FTZ_WIDEN = KERNEL.replace("cvt.{rnd}.{dst}.bf16", "cvt.ftz.f32.bf16").format(w=32, bytes=4)
# bf16 bit patterns: zeros, subnormals (flushed to a zero of their sign), the smallest and
# largest normals, infinities, NaNs (payload kept, quiet bit set: F2F's NaN rule, emu/ops_float.py)
FTZ_INPUTS = [0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x3f80, 0xbf80,
              0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x4049]


def test_cvt_ftz_f32_bf16_sm90_is_ptxas_f2f():
    """cvt.ftz.f32.bf16 on sm_90: F2F.FTZ.F32.BF16 as ptxas (was refused); values = the bf16
    bits widened, subnormals flushed to a signed zero (PTX ISA: .ftz), ours = ptxas's."""
    n = 32
    bits = np.array((FTZ_INPUTS * 2)[:n], np.uint16)
    want = bits.astype(np.uint32) << 16
    want = np.where((bits & 0x7f80) == 0, want & 0x80000000, want)
    want = np.where(((bits & 0x7f80) == 0x7f80) & ((bits & 0x7f) != 0), want | 0x400000, want)
    theirs = oracle.ptxas(FTZ_WIDEN, ARCH)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(FTZ_WIDEN, ARCH)
    for cubin in (theirs.output, ours):
        assert "F2F.FTZ.F32.BF16" in oracle.nvdisasm(cubin, ("-c",))
    for name, cubin in (("ptxas", theirs.output), ("ours", ours)):
        out = np.zeros(n, np.uint32)
        run(cubin, "k", 1, n, [out, bits.copy()], hazard_check=name == "ours")
        np.testing.assert_array_equal(out, want, err_msg=name)


def test_cvt_ftz_f32_bf16_refused_before_sm90_in_ptxas_words():
    ptx = FTZ_WIDEN.replace("sm_90", "sm_89")
    theirs = oracle.ptxas(ptx, "sm_89")
    msg = "Feature 'cvt with .f32.bf16.ftz' requires .target sm_90 or higher"
    assert not theirs.ok and msg in theirs.stderr
    with pytest.raises(CompileError, match=msg):
        codegen.compile_ptx(ptx, "sm_89")
