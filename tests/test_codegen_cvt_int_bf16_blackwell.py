"""integer -> bf16 `cvt` on sm_100/sm_120: one I2F.BF16.<type>.<rounding> as ptxas 13.5 writes
it (was refused 'not supported yet': the blackwell table lacked the forms). Expected values:
the exact integer rounded to bf16's 8 significant bits in the instruction's mode (PTX ISA)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

TYPES = {"s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64}
KERNEL = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{{
.reg .b16 %h<2>; .reg .b{w} %d<2>; .reg .b32 %r<2>; .reg .b64 %rd<6>;
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [inp];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 8; add.s64 %rd3, %rd2, %rd3;
ld.global.b{w} %d1, [%rd3];
cvt.{rnd}.bf16.{src} %h1, %d1;
mul.wide.u32 %rd4, %r1, 2; add.s64 %rd4, %rd1, %rd4;
st.global.b16 [%rd4], %h1;
ret;
}}
"""


def _bf16_bits(x: int, rnd: str) -> int:
    """x rounded to bf16 (8 significant bits) in mode rnd, as bits."""
    if x == 0:
        return 0
    sign, m = (0x8000 if x < 0 else 0), abs(x)
    e = m.bit_length() - 8            # drop e low bits (e <= 0: exact)
    if e > 0:
        q, r = divmod(m, 1 << e)
        half = 1 << (e - 1)
        up = {"rn": r > half or (r == half and q & 1), "rz": False,
              "rm": r and sign, "rp": r and not sign}[rnd]
        m = (q + bool(up)) << e
    v = np.array([float(-m if sign else m)], np.float32).view(np.uint32)[0]   # exact now
    return int(v) >> 16


def _inputs(src):
    bits = TYPES[src]
    signed = src.startswith("s")
    rng = np.random.default_rng(bits)
    vals = [0, 1, -1, 255, 256, 257, 383, 384, 385, 0x7FFF, -0x8000, 12345, -12345]
    vals += [int(v) for v in rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), 19, dtype=np.int64)]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    vals = [min(max(v if signed else abs(v), lo), hi) for v in vals] + [lo, hi]
    return vals


@pytest.mark.parametrize("src,rnd,arch", [(s, r, "sm_120") for s in sorted(TYPES) for r in ("rn", "rz", "rm", "rp")]
                         + [(s, "rn", "sm_100") for s in ("s64", "u32")])
def test_int_to_bf16(src, rnd, arch):
    w = TYPES[src]
    ptx = KERNEL.format(arch=arch, w=w, rnd=rnd, src=src)
    vals = _inputs(src)
    data = np.array([v & ((1 << 64) - 1) for v in vals], np.uint64)     # each in an 8-byte slot
    want = np.array([_bf16_bits(v, rnd) for v in vals], np.uint16)
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    cubins = [(ours, True)]
    if arch == "sm_120":
        theirs = oracle.ptxas(ptx, arch)
        assert theirs.ok, theirs.stderr
        cubins.append((theirs.output, False))
    for cubin, hazards in cubins:
        out = np.zeros(len(vals), np.uint16)
        res = run(cubin, "k", 1, len(vals), [out, data.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards), res.hazards[:3]
        np.testing.assert_array_equal(out, want)
    assert "I2F.BF16" in oracle.cuobjdump_sass(ours)
