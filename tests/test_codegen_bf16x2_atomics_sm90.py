"""`atom/red.add.noftz.bf16x2` on shared and generic addresses, sm_90 (was '`red.shared.add
.bf16x2` not supported yet'): the shared unit has no bf16x2 add, so a compare-and-swap loop
as ptxas 13.5 writes it (LDS, the bf16x2 sum, ATOMS.CAST.SPIN until it took; ptxas forms the
sum with HFMA2.MMA.BF16_V2 x, 1, 1, v, ours with HADD2.BF16_V2: the same rounding). Ours and
ptxas's cubins in the emulator = NumPy (each half rounded to nearest even), the old values
too where atom returns them."""
import math

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %g, %ga;
.reg .b32 %s, %t, %v, %w, %old;
.shared .align 4 .b32 sb[64];
ld.param.u64 %ro, [out];
ld.param.u64 %ri, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, 8;
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
ld.global.v2.u32 {{%w, %v}}, [%ri];
mov.u32 %s, sb;
mad.lo.u32 %s, %t, 4, %s;
st.shared.u32 [%s], %w;
cvta.shared.u64 %ga, sb;
mul.wide.u32 %g, %t, 4;
add.s64 %ga, %ga, %g;
mov.u32 %old, 0;
{op}
ld.shared.u32 %w, [%s];
st.global.v2.u32 [%ro], {{%w, %old}};
ret;
}}
"""


def _bf16(bits):
    return float(np.uint32(int(bits) << 16).view(np.float32))


def _round_bf16(x: float) -> int:
    if x == 0:
        return 0x8000 if math.copysign(1, x) < 0 else 0
    m, e = math.frexp(x)
    return int(np.float32(round(m * 256) / 256 * 2.0 ** e).view(np.uint32)) >> 16


@pytest.mark.parametrize("op", ["red.shared", "atom.shared", "red", "atom"])
def test_bf16x2_add(op):
    addr = "[%ga]" if op in ("red", "atom") else "[%s]"
    line = (f"{op}.add.noftz.bf16x2 %old, {addr}, %v;" if op.startswith("atom")
            else f"{op}.add.noftz.bf16x2 {addr}, %v;")
    ptx = KERNEL.format(op=line)
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_90", "k.ptx"), "sm_90", filename="k.ptx")
    rng = np.random.default_rng(6)
    sign = rng.integers(0, 2, (32, 2, 2)) << 15
    exp = rng.integers(120, 134, (32, 2, 2)) << 7
    man = rng.integers(0, 128, (32, 2, 2))
    halves = (sign | exp | man).astype(np.uint32)
    x = (halves[..., 0] | halves[..., 1] << 16).astype(np.uint32)     # (word, addend) per thread
    want = np.zeros((32, 2), np.uint32)
    for t in range(32):
        lo = _round_bf16(_bf16(halves[t, 0, 0]) + _bf16(halves[t, 1, 0]))
        hi = _round_bf16(_bf16(halves[t, 0, 1]) + _bf16(halves[t, 1, 1]))
        want[t] = [lo | hi << 16, x[t, 0] if op.startswith("atom") else 0]
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros((32, 2), np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out, want, err_msg=name)
