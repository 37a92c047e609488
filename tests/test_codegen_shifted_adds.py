"""`shl.b64 t, x, k; add.s64 d, b, t` is `LEA d.lo, P, x.lo, b.lo, k` and `LEA.HI.X d.hi,
x.lo, b.hi, x.hi, k, P`, as ptxas writes it (isel/shifted_adds.py; the stencil's output
address took four instructions before). Forms from ptxas's cubin; results, with 64-bit
offsets whose high words matter (negative ones), against ptxas's cubin in the emulator."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

# out[tid] = base[off[tid]] for a 64-bit element offset off (may be negative; base points
# into the middle of the buffer)
KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 off, .param .u64 data, .param .u64 out)
{
 .reg .b32 %r<4>; .reg .b64 %rd<14>;
 ld.param.u64 %rd1, [off];
 ld.param.u64 %rd2, [data];
 ld.param.u64 %rd3, [out];
 cvta.to.global.u64 %rd4, %rd1;
 cvta.to.global.u64 %rd5, %rd2;
 cvta.to.global.u64 %rd6, %rd3;
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd7, %r1, 8;
 add.s64 %rd8, %rd4, %rd7;
 ld.global.u64 %rd9, [%rd8];
 add.s64 %rd10, %rd5, 512;
 shl.b64 %rd11, %rd9, 2;
 add.s64 %rd12, %rd10, %rd11;
 ld.global.u32 %r2, [%rd12];
 mul.wide.u32 %rd13, %r1, 4;
 add.s64 %rd13, %rd6, %rd13;
 st.global.u32 [%rd13], %r2;
 ret;
}
"""


def test_shifted_add_is_two_leas_and_computes_what_ptxas_computes():
    theirs = oracle.ptxas(KERNEL, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(KERNEL)
    for cubin in (theirs.output, ours):          # ptxas's first: the premise
        text = oracle.nvdisasm(cubin)
        assert re.search(r"LEA R\d+, P\d, R\d+, U?R\d+, 0x2 ?;", text), text[-2000:]
        assert re.search(r"LEA\.HI\.X R\d+, R\d+, U?R\d+, R\d+, 0x2, P\d ?;", text), text[-2000:]
        assert "SHF.L.U64.HI" not in text
    rng = np.random.default_rng(27)
    off = rng.integers(-128, 128, 64).astype(np.int64)
    data = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    results = []
    for cubin in (ours, theirs.output):
        out = np.zeros(64, np.uint32)
        run(cubin, "k", 1, 64, [off.copy(), data.copy(), out])
        results.append(out)
    np.testing.assert_array_equal(*results)
    np.testing.assert_array_equal(results[0], data[128 + off])
