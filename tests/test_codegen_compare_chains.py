"""A chain of compares joined by or.pred/and.pred is a chain of ISETPs each accumulating the
last (`ISETP.GE.OR P0, PT, R0, R2, P0`), as ptxas writes a stencil's bounds test, not
ISETPs and PLOP3s (isel/compare_chains.py; `stencil_5pt` 1.017x ptxas's SM cycles before).
Forms from ptxas's cubin; results against ptxas's cubin in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

# out[i] = border(x, y) ? 1 : 2 for x = v[i], y = v[i + 64]; the test is `or` (or `and`) of
# four compares, written as nvcc writes it
KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 v, .param .u64 out, .param .u32 n)
{{
 .reg .pred %p<8>; .reg .b32 %r<12>; .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [v];
 ld.param.u64 %rd2, [out];
 ld.param.u32 %r1, [n];
 cvta.to.global.u64 %rd3, %rd1;
 cvta.to.global.u64 %rd4, %rd2;
 mov.u32 %r2, %tid.x;
 mul.wide.u32 %rd5, %r2, 4;
 add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r3, [%rd6];
 ld.global.u32 %r4, [%rd6+256];
 setp.lt.s32 %p1, %r3, 1;
 setp.lt.s32 %p2, %r4, 1;
 {join}.pred %p3, %p1, %p2;
 add.s32 %r5, %r1, -1;
 setp.ge.s32 %p4, %r3, %r5;
 {join}.pred %p5, %p3, %p4;
 setp.ge.s32 %p6, %r4, %r5;
 {join}.pred %p7, %p6, %p5;
 mov.u32 %r6, 2;
 @%p7 mov.u32 %r6, 1;
 add.s64 %rd7, %rd4, %rd5;
 st.global.u32 [%rd7], %r6;
 ret;
}}
"""


@pytest.mark.parametrize("join", ["or", "and"])
def test_compare_chain_is_ptxas_s(join):
    ptx = KERNEL.format(join=join)
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx)
    folded = "ISETP.GE." + join.upper()
    for cubin in (theirs.output, ours):          # ptxas's first: the premise
        text = oracle.nvdisasm(cubin)
        assert "PLOP3" not in text
        assert len(re.findall(r"ISETP\.\w+\." + join.upper() + r" P\d, PT, R\d+, [^,]+, !?P\d ?;", text)) == 3
        assert folded in text
    rng = np.random.default_rng(26)
    v = rng.integers(-2, 10, 128).astype(np.int32)
    results = []
    for cubin in (ours, theirs.output):
        out = np.zeros(64, np.int32)
        run(cubin, "k", 1, 64, [v.copy(), out, np.uint32(8)])
        results.append(out)
    np.testing.assert_array_equal(*results)
    x, y = v[:64], v[64:]
    tests = [x < 1, y < 1, x >= 7, y >= 7]
    border = np.logical_or.reduce(tests) if join == "or" else np.logical_and.reduce(tests)
    np.testing.assert_array_equal(results[0], np.where(border, 1, 2))
