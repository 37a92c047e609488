"""Chains of logic operations over at most three values are one LOP3 each, as ptxas writes
them (`ptx2sass/isel/lop3_chains.py`): `a ^ b ^ c` is `LOP3.LUT d, a, b, c, 0x96`, a
majority `(a & b) | (a & c) | (b & c)` one LOP3, `(~b & c) | a` one; `(x & 127) & 0xff` is `x & 127`. Keccak's theta/chi
steps and SHA-256's Ch/Maj are such chains. Expected values come from ptxas: its cubin's
outputs in the emulator and the count of LOP3s in its listing (nvdisasm)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run

# (PTX lines computing %r20 from a=%r2, b=%r3, c=%r4, d=%r5, x=%rd10, y=%rd11, z=%rd12;
#  the result is stored as the thread's output word)
CHAINS = {
    "xor3": ["xor.b32 %r6, %r2, %r3;", "xor.b32 %r20, %r6, %r4;"],
    "majority": ["and.b32 %r6, %r2, %r3;", "and.b32 %r7, %r2, %r4;", "or.b32 %r8, %r6, %r7;",
                 "and.b32 %r9, %r3, %r4;", "or.b32 %r20, %r8, %r9;"],
    "immediate": ["and.b32 %r6, %r2, 16711935;", "xor.b32 %r7, %r6, %r3;", "or.b32 %r20, %r7, %r4;"],
    "andnot_or": ["not.b32 %r6, %r3;", "and.b32 %r7, %r6, %r4;", "or.b32 %r20, %r7, %r2;"],
    "bitselect": ["and.b32 %r6, %r2, %r3;", "not.b32 %r7, %r2;", "and.b32 %r8, %r7, %r4;",
                  "or.b32 %r20, %r6, %r8;"],
    "xor3_64": ["xor.b64 %rd13, %rd10, %rd11;", "xor.b64 %rd14, %rd13, %rd12;",
                "cvt.u32.u64 %r6, %rd14;", "shr.u64 %rd15, %rd14, 32;", "cvt.u32.u64 %r7, %rd15;",
                "add.s32 %r20, %r6, %r7;"],
    "shared_inner": ["xor.b32 %r6, %r2, %r3;", "and.b32 %r7, %r6, %r4;", "add.s32 %r20, %r7, %r6;"],
    # tinygrad's fp8 decoding: `and 127`, then cvt.u16.u8 and cvt.u32.u16 (masks 0xff, 0xffff)
    "masks": ["cvt.u16.u32 %rs1, %r2;", "and.b16 %rs2, %rs1, 127;", "cvt.u16.u8 %rs3, %rs2;",
              "cvt.u32.u16 %r6, %rs3;", "and.b16 %rs4, %rs2, 96;", "cvt.u32.u16 %r7, %rs4;",
              "shl.b32 %r8, %r7, 8;", "add.s32 %r20, %r6, %r8;"],
    "four_values": ["xor.b32 %r6, %r2, %r3;", "xor.b32 %r7, %r4, %r5;", "and.b32 %r20, %r6, %r7;"],
}


def _ptx(lines: list[str]) -> str:
    body = "\n".join("    " + x for x in lines)
    return f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{{
    .reg .b16 %rs<8>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<24>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [q];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 16;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd6];
    mov.b64 %rd10, {{%r2, %r3}};
    mov.b64 %rd11, {{%r4, %r5}};
    mov.b64 %rd12, {{%r3, %r2}};
{body}
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd4, %rd7;
    st.global.u32 [%rd8], %r20;
    ret;
}}
"""


def _lop3_count(cubin: bytes) -> int:
    return sum(1 for line in oracle.nvdisasm(cubin).splitlines() if "LOP3.LUT" in line)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_logic_chain_as_ptxas(name):
    ptx = _ptx(CHAINS[name])
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None, got.stderr
    theirs = got.output
    assert _lop3_count(ours) <= _lop3_count(theirs)
    rng = np.random.default_rng(11)
    words = rng.integers(0, 2**32, 4 * 128, dtype=np.uint64).astype(np.uint32)
    words[:16] = [0, 0xFFFFFFFF, 0x0F0F0F0F, 0xF0F0F0F0, 1, 2, 4, 8, 0x80000000, 0x7FFFFFFF,
                  0xFFFF0000, 0x0000FFFF, 0xAAAAAAAA, 0x55555555, 0xCCCCCCCC, 0x33333333]
    outs = []
    for cubin, check in ((theirs, False), (ours, True)):
        out = np.zeros(128, dtype=np.uint32)
        result = emu_run(cubin, "k", (1, 1, 1), (128, 1, 1), [words.copy(), out], hazard_check=check)
        if check:
            assert result.hazards == []
        outs.append(out.tobytes())
    assert outs[0] == outs[1]
