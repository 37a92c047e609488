"""wmma.load/store without their optional stride operand (PTX ISA: the matrix is dense, so
the stride is its leading dimension): an internal IndexError before; now the fragments equal
what ptxas's cubin loads, multiplies and stores, for each shape and layout (m32n8k16 and
m8n32k16 tell the three dimensions apart)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{{
.reg .b32 %a<9>; .reg .b32 %b<9>; .reg .f32 %c<9>; .reg .f32 %d<9>; .reg .u64 %rd<5>;
ld.param.u64 %rd1, [p];
add.s64 %rd2, %rd1, 1024;
add.s64 %rd3, %rd1, 2048;
add.s64 %rd4, %rd1, 4096;
wmma.load.a.sync.aligned.{la}.{shape}.global.f16 {{%a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8}}, [%rd1];
wmma.load.b.sync.aligned.{lb}.{shape}.global.f16 {{%b1, %b2, %b3, %b4, %b5, %b6, %b7, %b8}}, [%rd2];
wmma.load.c.sync.aligned.{lc}.{shape}.global.f32 {{%c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8}}, [%rd3];
wmma.mma.sync.aligned.{la}.{lb}.{shape}.f32.f32 {{%d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8}}, {{%a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8}}, {{%b1, %b2, %b3, %b4, %b5, %b6, %b7, %b8}}, {{%c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8}};
wmma.store.d.sync.aligned.{lc}.{shape}.global.f32 [%rd4], {{%d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8}};
ret;
}}
"""

CASES = [(shape, la, lb, lc) for shape in ("m16n16k16", "m32n8k16", "m8n32k16")
         for la, lb, lc in (("row", "col", "row"), ("col", "row", "col"))]


@pytest.mark.parametrize("shape,la,lb,lc", CASES)
def test_dense_fragments_as_ptxas(shape, la, lb, lc):
    ptx = KERNEL.format(shape=shape, la=la, lb=lb, lc=lc)
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    rng = np.random.default_rng(7)
    init = np.zeros(8192 // 4, np.uint32)
    init[:256] = rng.integers(-4, 5, 512).astype(np.float16).view(np.uint32)          # A
    init[256:512] = rng.integers(-4, 5, 512).astype(np.float16).view(np.uint32)       # B
    init[512:768] = rng.integers(-8, 9, 256).astype(np.float32).view(np.uint32)       # C
    results = []
    for cubin in (codegen.compile_ptx(ptx), theirs.output):
        data = init.copy()
        run(cubin, "k", 1, 32, [data])
        results.append(data[1024:1024 + 256])
    np.testing.assert_array_equal(*results)
    assert results[0].any()
