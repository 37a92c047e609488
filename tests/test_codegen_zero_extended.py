"""8/16-bit values the selected code already leaves zero-extended (a U8/U16 load, a logical
right shift) are not masked again where an instruction needs them extended: ptxas writes
`LDG.E.U8 R0; SHF.R.U32.HI R0, RZ, 0x4, R0`, ours wrote two `LOP3 … 0xffff` around the
shift (cuda corpus `local_histogram`). Signed uses of a value extended from its own width
still sign-extend it. Every variant must compute what ptxas's cubin computes."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{{
.reg .u16 %h<8>; .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .s16 %s<4>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 2;
add.s64 %rd3, %rd1, %rd2;
{body}
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3+256], %r7;
ret;
}}
"""

BODIES = {
    "u8 load, shr.u16, cvt": "ld.global.u8 %h1, [%rd3];\nshr.u16 %h2, %h1, 4;\ncvt.u32.u16 %r7, %h2;",
    "u16 load, shr twice": "ld.global.u16 %h1, [%rd3];\nshr.u16 %h2, %h1, 3;\nshr.b16 %h3, %h2, 1;\ncvt.u32.u16 %r7, %h3;",
    "u16 load as s16": "ld.global.u16 %h1, [%rd3];\ncvt.s32.s16 %r7, %h1;",
    "u8 load as s16": "ld.global.u8 %h1, [%rd3];\ncvt.s32.s16 %r7, %h1;",
    "s8 load, shr.u16": "ld.global.s8 %h1, [%rd3];\nshr.u16 %h2, %h1, 1;\ncvt.u32.u16 %r7, %h2;",
    "u16 load, add, shr": "ld.global.u16 %h1, [%rd3];\nadd.u16 %h2, %h1, 0xfff0;\nshr.u16 %h3, %h2, 2;\ncvt.u32.u16 %r7, %h3;",
}


@pytest.mark.parametrize("name", BODIES)
def test_extended_values_compute_what_ptxas_computes(name):
    ptx = KERNEL.format(body=BODIES[name])
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    results = []
    for cubin in (codegen.compile_ptx(ptx), theirs.output):
        data = np.zeros(128, dtype=np.uint32)
        data[:32] = np.array([0xffffffff, 0x80808080, 0x7f7f7f7f, 0x12345678] * 8, dtype=np.uint32)
        run(cubin, "k", 1, 32, [data])
        results.append(data)
    np.testing.assert_array_equal(*results)


def test_no_mask_after_a_byte_load_or_a_logical_shift():
    ptx = KERNEL.format(body=BODIES["u8 load, shr.u16, cvt"])
    listing = oracle.nvdisasm(codegen.compile_ptx(ptx))
    assert "0xffff" not in " ".join(re.findall(r"LOP3\.LUT[^;]*;", listing))
