"""Values ptxas keeps out of general registers: words of `__constant__` variables at fixed
places, and 32-bit values widened to 64 bits only to be narrowed again (branch regs31).

crypto_rounds.cu's keccak_f1600 loads its 25 rotate amounts from a `__constant__` table
before the round loop; NVVM widens each (`cvt.u64.u32`), subtracts it from 64 and narrows
both back (`cvt.u32.u64`) for the shifts and the `r == 0` compares. We held the amount, its
widened copy and 64 - r in registers across the loop: 139 registers against ptxas's 78.
ptxas reads the amounts in place (`SHF.L.U32 R, R, c[0x3][0x1c0], RZ`,
`ISETP.NE.AND P1, PT, RZ, c[0x3][0x1c0], PT`). sha256_block reads its K table's words the
same way (65 -> 56 registers; ptxas 38: the rest is the order of the unrolled rounds, not
done here).

Expected values are ptxas's: its register counts for the same PTX and its cubin's outputs
in the emulator (hazard-checked for ours)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run
from ptx2sass.encoder.cubin import read_cubin
from tools import realworld as rw

RUNS = {"keccak_f1600": {"grid": 1, "block": 32, "args": ["u64*800", "u64*800"]},
        "sha256_block": {"grid": 1, "block": 32, "args": ["u32*512", "u32*256"]}}


def _kernel_ptx(kernel: str, arch: str) -> str:
    # the whole module: its `__constant__` tables are declared between the kernels
    return (rw.CORPUS / f"cuda/crypto_rounds.{arch}.ptx").read_text()


def _registers(cubin: bytes, kernel: str) -> int:
    (k,) = [k for k in read_cubin(cubin).kernels if k.name == kernel]
    return k.regcount


def _ours(ptx: str, arch: str) -> bytes:
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {})[0]


def _theirs(ptx: str, arch: str) -> bytes:
    got = oracle.ptxas(ptx, arch)
    assert got.output is not None, got.stderr
    return got.output


def _same_outputs(theirs: bytes, ours: bytes, kernel: str, run: dict) -> None:
    outs = []
    for cubin, check in ((theirs, False), (ours, True)):
        params = rw.launch_params(run, 0)
        result = emu_run(cubin, kernel, rw._dim(run["grid"]), rw._dim(run["block"]), params,
                         hazard_check=check)
        if check:
            assert result.hazards == []
        outs.append([p.tobytes() for p in params if isinstance(p, np.ndarray)])
    assert outs[0] == outs[1]


@pytest.mark.parametrize("kernel, bar", [
    ("keccak_f1600", 1.10),     # 139 before (1.78x ptxas's 78); 84 now
    ("sha256_block", 1.50),     # 65 before (1.71x ptxas's 38); 56 now
])
def test_crypto_rounds_registers_near_ptxas_s(kernel, bar):
    ptx = _kernel_ptx(kernel, "sm_89")
    ours, theirs = _ours(ptx, "sm_89"), _theirs(ptx, "sm_89")
    assert _registers(ours, kernel) <= bar * _registers(theirs, kernel)
    _same_outputs(theirs, ours, kernel, RUNS[kernel])


def test_sha256_on_sm90_reads_its_constants_from_uniform_registers():
    """sm_90 loads constant operands into URs (isel/target_forms.py) before adds are
    combined; a UR then went to IADD3's third slot, which takes none (an internal error
    "cannot encode IADD3 R26, R22, R25, UR1"): it goes in the middle slot."""
    ptx = _kernel_ptx("sha256_block", "sm_90")
    ours, theirs = _ours(ptx, "sm_90"), _theirs(ptx, "sm_90")
    _same_outputs(theirs, ours, "sha256_block", RUNS["sha256_block"])


# A 32-bit value widened and narrowed again is the value: zero- and sign-extensions of u32
# and s32, narrowed as u32, s32 and b32; a u16 widened and narrowed to u16 is left as it is
# (a 16-bit register's high bits are the selector's business). The shifts read the narrowed
# values as amounts (the shift clamps), the stores write them out.
NARROWED = r"""
.version 8.5
.target sm_89
.address_size 64

.const .align 4 .b32 TAB[4] = {1, 0, 31, 40};

.visible .entry narrowed(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b16 %h<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<32>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    ld.global.u32 %r3, [%rd4+4];
    mul.wide.u32 %rd5, %r1, 48;
    add.s64 %rd6, %rd2, %rd5;
    cvt.s64.s32 %rd7, %r2;
    cvt.u32.u64 %r4, %rd7;
    cvt.u64.u32 %rd8, %r3;
    cvt.s32.s64 %r5, %rd8;
    cvt.u64.s32 %rd9, %r3;
    cvt.u32.s64 %r6, %rd9;
    and.b32 %r7, %r5, 63;
    shl.b64 %rd10, %rd7, %r7;
    st.global.u64 [%rd6], %rd10;
    xor.b32 %r8, %r4, %r6;
    st.global.u32 [%rd6+8], %r8;
    ld.const.u32 %r9, [TAB+8];
    cvt.u64.u32 %rd11, %r9;
    cvt.u32.u64 %r10, %rd11;
    setp.eq.s32 %p1, %r10, 0;
    shl.b64 %rd12, %rd8, %r10;
    mov.u32 %r11, 64;
    sub.s32 %r12, %r11, %r10;
    shr.u64 %rd13, %rd8, %r12;
    or.b64 %rd14, %rd12, %rd13;
    selp.b64 %rd15, %rd8, %rd14, %p1;
    st.global.u64 [%rd6+16], %rd15;
    ld.const.u32 %r13, [TAB+4];
    setp.ne.s32 %p2, %r13, 0;
    selp.u32 %r14, %r2, %r3, %p2;
    st.global.u32 [%rd6+24], %r14;
    cvt.u16.u32 %h1, %r2;
    cvt.u64.u16 %rd16, %h1;
    cvt.u16.u64 %h2, %rd16;
    cvt.s64.s16 %rd17, %h2;
    st.global.u64 [%rd6+32], %rd17;
    ld.const.u32 %r15, [TAB+12];
    shr.u64 %rd18, %rd7, %r15;
    add.s32 %r16, %r15, %r4;
    st.global.u64 [%rd6+40], %rd18;
    st.global.u32 [%rd6+12], %r16;
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_narrowed_extensions_and_constant_words_compute_as_ptxas_s(arch):
    ptx = NARROWED.replace("sm_89", arch)
    ours, theirs = _ours(ptx, arch), _theirs(ptx, arch)
    rng = np.random.default_rng(31)
    words = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    words[:8] = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF8000, 63, 64]
    results = []
    for cubin, check in ((theirs, False), (ours, True)):
        params = [words.copy(), np.zeros(32 * 48, np.uint8)]
        result = emu_run(cubin, "narrowed", (1, 1, 1), (32, 1, 1), params, hazard_check=check)
        if check:
            assert result.hazards == []
        results.append(params[1].tobytes())
    assert results[0] == results[1]
