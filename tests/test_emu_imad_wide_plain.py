"""IMAD.WIDE with no carry in or out and a plain addend (`ops_int.op_imad`'s shortcut, what
its first executions run) and `Lanes.w64`'s word halves, against Python's integers: ptxas's
code for 64-bit `a * b + c` with signed and unsigned 32-bit factors, on random and extreme
values, on one lane, a few and many, over four launches (generic handler, then specialised)."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import run
from ptx2sass.emu.loader import load_program
from tools.emu_testing import cubin_listing_decoder

PTX = r"""
.version 8.0
.target sm_89
.address_size 64
.visible .entry wide(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 out, .param .u32 n)
{
    .reg .u32 %r<6>; .reg .u64 %rd<16>; .reg .pred %p1;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c]; ld.param.u64 %rd4, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mad.lo.u32 %r2, %r3, 32, %r2;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd5, %r2, 4;
    add.u64 %rd6, %rd1, %rd5; ld.global.u32 %r4, [%rd6];
    add.u64 %rd7, %rd2, %rd5; ld.global.u32 %r5, [%rd7];
    mul.wide.u32 %rd8, %r2, 8; add.u64 %rd9, %rd3, %rd8; ld.global.u64 %rd10, [%rd9];
    mad.wide.s32 %rd11, %r4, %r5, %rd10;
    mad.wide.u32 %rd12, %r4, %r5, %rd10;
    mul.wide.u32 %rd13, %r2, 16; add.u64 %rd14, %rd4, %rd13;
    st.global.u64 [%rd14], %rd11; st.global.u64 [%rd14+8], %rd12;
DONE:
    ret;
}
"""

EDGES32 = [0, 1, 4, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x10000, 12345]
EDGES64 = [0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 1 << 32, 0x123456789ABCDEF]


@pytest.fixture(scope="module")
def program():
    r = oracle.ptxas(PTX, "sm_89")
    assert r.ok, r.stderr
    listing = r.output
    return listing, load_program(listing, "wide", cubin_listing_decoder(listing))


def _s32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


@pytest.mark.parametrize("lanes", [1, 3, 32, 100])
def test_plain_imad_wide_as_python_integers(program, lanes):
    cubin, prog = program
    rng = np.random.default_rng(lanes)
    a = rng.integers(0, 1 << 32, lanes, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, lanes, dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 1 << 63, lanes, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, lanes, dtype=np.uint64)
    k = min(lanes, len(EDGES32))
    a[:k] = EDGES32[:k]
    b[:k] = EDGES32[::-1][:k]
    c[:min(lanes, len(EDGES64))] = EDGES64[:min(lanes, len(EDGES64))]
    want = np.array([[(_s32(int(x)) * _s32(int(y)) + int(z)) % (1 << 64), (int(x) * int(y) + int(z)) % (1 << 64)]
                     for x, y, z in zip(a, b, c)], dtype=np.uint64)
    assert any("IMAD.WIDE" in ins.mnemonic for _, ins in prog.instructions)
    for _ in range(4):
        out = np.zeros(2 * lanes, np.uint64)
        run(cubin, "wide", (-(-lanes // 32),), (32,), [a, b, c, out, np.uint32(lanes)],
            hazard_check=False, program=prog)
        assert np.array_equal(out.reshape(lanes, 2), want)
