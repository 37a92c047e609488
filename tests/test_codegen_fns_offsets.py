"""fns.b32 at the offsets' edges, ours = ptxas's cubin in the emulator. The PTX manual's
arithmetic gives 0xffffffff for an offset of -2^31 (no 2^31-th set bit), but ptxas's code
gives 0 for every mask and base (its |offset| has no 32-bit value): found by the sm_100
held-out fuzz campaign (seed 10010029) and on sm_110 (11010032). Every other offset: ours
= ptxas = the manual's pseudo-code."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

REGISTER = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .b32 %r<8>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 16;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.u32 %r2, [%rd3];
 ld.global.u32 %r3, [%rd3+4];
 ld.global.u32 %r4, [%rd3+8];
 fns.b32 %r5, %r2, %r3, %r4;
 st.global.u32 [%rd3+12], %r5;
 ret;
}}
"""
# the offset a constant: -2^31, -1 and 5; base a register
CONSTANT = REGISTER.replace("fns.b32 %r5, %r2, %r3, %r4;\n st.global.u32 [%rd3+12], %r5;",
                            "fns.b32 %r5, %r2, %r3, -2147483648;\n st.global.u32 [%rd3+12], %r5;\n"
                            " fns.b32 %r6, %r2, %r3, -1;\n st.global.u32 [%rd3+8], %r6;\n"
                            " fns.b32 %r7, %r2, 18, 5;\n st.global.u32 [%rd3+4], %r7;")
OFFSETS = [0x80000000, 0x80000001, 0xFFFFFFFF, 0, 1, 2, 0x7FFFFFFF, 0xFFFFFFE0, 33, 0xFFFFFFDF]


def manual(mask: int, base: int, offset: int) -> int:
    """The PTX manual's pseudo-code for fns."""
    off = offset - (1 << 32) if offset >> 31 else offset
    if off == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(off) - 1, 1 if off > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


def _inputs(n=80):
    rng = np.random.default_rng(7)
    buf = np.zeros((n, 4), np.uint32)
    buf[:, 0] = rng.integers(0, 2**32, n, dtype=np.uint64)
    buf[::9, 0] = 0
    buf[:, 1] = rng.integers(0, 32, n)
    buf[:, 2] = [OFFSETS[i % len(OFFSETS)] for i in range(n)]
    return buf


@pytest.mark.parametrize("arch", ["sm_89", "sm_100"])
@pytest.mark.parametrize("ptx", [REGISTER, CONSTANT], ids=["register", "constant"])
def test_fns_matches_ptxas(arch, ptx):
    text = ptx.format(arch=arch)
    outs = []
    for cubin in (oracle.ptxas(text, arch).output, compile_ptx(text, arch)):
        buf = _inputs()
        res = run(cubin, "k", (1, 1, 1), (len(buf), 1, 1), [buf])
        assert not res.hazards, res.hazards[:3]
        outs.append(buf)
    theirs, ours = outs
    assert (ours == theirs).all()
    src = _inputs()
    for (mask, base, off, _), row in zip(src.tolist(), ours.tolist()):
        if ptx is REGISTER:
            assert row[3] == (0 if off == 0x80000000 else manual(mask, base, off))
        else:
            assert row[3] == 0
            assert row[2] == manual(mask, base, 0xFFFFFFFF)
            assert row[1] == manual(mask, 18, 5)
