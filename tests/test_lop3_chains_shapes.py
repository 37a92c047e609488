"""Logic trees as three-input LOP3s (`isel/lop3_chains.py`), over more shapes and archs than
tests/test_lop3_chains.py: a kernel-parameter word (a constant-bank operand, a uniform register
on sm_90: slot b only) with and without an immediate, an inner value read twice, four inputs, a
chain tested for non-zero (then `fold_lop3_predicates`'s), on sm_75, sm_89 and sm_90.

ptxas writes `(a ^ b) & 0xfefefefe` as one `LOP3.LUT d, a, 0xfefefefe, b, 0x48` and a XOR
of three values as one `LOP3 ... 0x96`; we wrote a two-input LOP3 per PTX instruction
(1.25x ptxas's instructions on the SIMD-in-a-word intrinsics of the real-world corpus's
simd_video.cu). Expected values are ptxas's: its cubin's outputs for the same PTX in the
emulator (ours hazard-checked) and its count of LOP3s."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run

# (PTX statements computing %r9 from %r1 (a), %r2 (b), %r3 (c), %r4 (d) and the parameter k)
EXPRESSIONS = {
    "and_of_xor_and_immediate": "xor.b32 %r5, %r1, %r2; and.b32 %r9, %r5, -16843010;",
    "xor3": "xor.b32 %r5, %r1, %r2; xor.b32 %r9, %r5, %r3;",
    "nor_then_and": "or.b32 %r5, %r1, %r2; not.b32 %r6, %r5; and.b32 %r9, %r6, %r3;",
    "select_by_mask": "and.b32 %r5, %r1, %r2; not.b32 %r6, %r1; and.b32 %r7, %r6, %r3; or.b32 %r9, %r5, %r7;",
    "majority": "or.b32 %r5, %r1, %r2; or.b32 %r6, %r1, %r3; or.b32 %r7, %r2, %r3; "
                "and.b32 %r8, %r5, %r6; and.b32 %r9, %r8, %r7;",
    "four_inputs": "xor.b32 %r5, %r1, %r2; xor.b32 %r6, %r3, %r4; and.b32 %r9, %r5, %r6;",
    "parameter_word": "xor.b32 %r5, %r1, %r10; and.b32 %r9, %r5, %r2;",
    "parameter_and_immediate": "xor.b32 %r5, %r1, %r10; and.b32 %r9, %r5, 16711935;",
    "shared_inner_value": "and.b32 %r5, %r1, %r2; xor.b32 %r6, %r5, %r3; or.b32 %r7, %r5, %r4; "
                          "add.s32 %r9, %r6, %r7;",
    "double_not": "not.b32 %r5, %r1; not.b32 %r6, %r5; xor.b32 %r9, %r6, %r2;",
    "same_input_twice": "and.b32 %r5, %r1, %r2; xor.b32 %r6, %r5, %r1; or.b32 %r9, %r6, %r2;",
    "tested_for_nonzero": "and.b32 %r5, %r1, %r2; xor.b32 %r6, %r5, %r3; setp.ne.s32 %p1, %r6, 0; "
                          "selp.b32 %r9, 7, 9, %p1;",
}


def _kernel(body: str, arch: str) -> str:
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 kp)
{{
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r10, [kp];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r11, %tid.x;
    mul.wide.u32 %rd2, %r11, 20;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r1, [%rd3];
    ld.global.u32 %r2, [%rd3+4];
    ld.global.u32 %r3, [%rd3+8];
    ld.global.u32 %r4, [%rd3+12];
    {body}
    st.global.u32 [%rd3+16], %r9;
    ret;
}}
"""


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    words = rng.integers(0, 2**32, (64, 5), dtype=np.uint64).astype(np.uint32)
    edges = np.array([0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x01010101, 0xFEFEFEFE], np.uint32)
    words[:36, :4] = np.array(np.meshgrid(edges, edges)).reshape(2, -1).T.repeat(2, axis=1)
    words[:, 4] = 0
    return words.reshape(-1)


def _run(cubin: bytes, check: bool) -> bytes:
    buf = _inputs()
    result = emu_run(cubin, "k", (1, 1, 1), (64, 1, 1), [buf, np.uint32(0x0F0FF0F0)],
                     hazard_check=check)
    if check:
        assert result.hazards == []
    return buf.tobytes()


def _lop3_count(cubin: bytes) -> int:
    return sum(" LOP3" in line for line in oracle.nvdisasm(cubin).splitlines())


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_75"])
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_fused_logic_computes_what_ptxas_s_code_computes(name, arch):
    ptx = _kernel(EXPRESSIONS[name], arch)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {})[0]
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.output is not None, theirs.stderr
    assert _run(ours, True) == _run(theirs.output, False)


@pytest.mark.parametrize("name", ["and_of_xor_and_immediate", "xor3", "nor_then_and",
                                  "select_by_mask", "majority", "parameter_word", "double_not",
                                  "same_input_twice"])
def test_no_more_lop3s_than_ptxas(name):
    """Trees of at most three inputs are one LOP3 each, as in ptxas's code (two or more
    before: one per PTX instruction)."""
    ptx = _kernel(EXPRESSIONS[name], "sm_89")
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    theirs = oracle.ptxas(ptx, "sm_89").output
    assert _lop3_count(ours) <= _lop3_count(theirs)
