"""Shared-memory addresses with a uniform register term, `[R+UR+imm]` (sm_90, sm_100,
sm_120; docs/STATUS.md, branch q100_30).

ptxas 13.5 keeps the CTA's shared window base (`S2UR SR_CgaCtaId; ULEA UR4, UR5, UR4, 0x18`:
the rank << 24 plus the window's 0x400) in a uniform register and adds it in the access,
`LDS R13, [R8+UR4+0x100]`, so the lane's offset is the only general register per address
(Triton matmul_int8: `LDS.U8 R49, [R32+UR8+0x660]`). Before, ours computed the base with
`S2R; SHF; IADD3` into a general register live through the kernel and added it to every
lane offset. Expected values: ptxas's cubin of the same PTX and NumPy, both in the
emulator; the address forms and the register count are ptxas's listing's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

PTX = """.version 8.8
.target {arch}
.address_size 64
.shared .align 16 .b8 smem[1024];
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
.reg .b32 %r<40>; .reg .b64 %rd<16>;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
shl.b32 %r3, %r2, 6;
add.s32 %r4, %r3, %r1;
mul.wide.u32 %rd3, %r4, 16;
add.s64 %rd4, %rd1, %rd3;
ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4];
mov.u32 %r9, smem;
shl.b32 %r10, %r1, 2;
xor.b32 %r11, %r10, 4;
add.s32 %r13, %r9, %r11;
st.shared.u32 [%r13], %r5;
st.shared.u32 [%r13+256], %r6;
st.shared.u32 [%r13+512], %r7;
st.shared.u32 [%r13+768], %r8;
bar.sync 0;
shr.u32 %r14, %r1, 2;
and.b32 %r15, %r14, 15;
mul.lo.s32 %r16, %r1, 28;
xor.b32 %r17, %r16, %r15;
xor.b32 %r18, %r17, 16;
and.b32 %r19, %r18, 252;
add.s32 %r20, %r9, %r19;
ld.shared.u32 %r21, [%r20];
ld.shared.u32 %r22, [%r20+256];
ld.shared.u32 %r23, [%r20+512];
ld.shared.u32 %r24, [%r20+768];
add.s64 %rd6, %rd2, %rd3;
st.global.v4.u32 [%rd6], {{%r21, %r22, %r23, %r24}};
ret;
}}
"""
GRID, BLOCK = 3, 64
ARCHS = ("sm_90", "sm_100", "sm_120")
UR_TERM = re.compile(r"\[R\d+\+UR\d+(\+0x[0-9a-f]+)?\]")


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in oracle.nvdisasm(cubin, ("-c",)).splitlines()
            if re.search(r"/\*[0-9a-f]{4}\*/", line)]


def _uniform_terms(ops: list[str]) -> int:
    return sum(o.split(" ")[0] in ("LDS", "STS") and bool(UR_TERM.search(o)) for o in ops)


def _launch(cubin: bytes, src: np.ndarray) -> np.ndarray:
    dst = np.full_like(src, 0xDEADBEEF)
    res = run(cubin, "k", (GRID, 1, 1), (BLOCK, 1, 1), [src, dst], hazard_check=True)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return dst


def _expected(src: np.ndarray) -> np.ndarray:
    out = np.empty_like(src)
    for blk in range(GRID):
        for t in range(BLOCK):
            w = (((t * 28) ^ ((t >> 2) & 15) ^ 16) & 252) // 4     # the word thread t reads
            writer = w ^ 1                                          # the thread that stored it
            for j in range(4):
                out[(blk * BLOCK + t) * 4 + j] = src[(blk * BLOCK + writer) * 4 + j]
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_window_base_is_a_uniform_address_term(arch):
    ptx = PTX.format(arch=arch)
    ref = oracle.ptxas(ptx, arch)
    assert ref.ok, ref.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {}, filename="k.ptx")[0]
    theirs_ops, ours_ops = _ops(ref.output), _ops(ours)
    assert _uniform_terms(theirs_ops) == 8, theirs_ops            # ptxas: every access
    assert _uniform_terms(ours_ops) == _uniform_terms(theirs_ops), ours_ops
    assert "S2UR" in {o.split(" ")[0] for o in ours_ops if "SR_CgaCtaId" in o}, ours_ops
    assert not any(o.startswith("S2R ") and "SR_CgaCtaId" in o for o in ours_ops), ours_ops
    (k_ours,), (k_ref,) = read_cubin(ours).kernels, read_cubin(ref.output).kernels
    assert k_ours.regcount <= k_ref.regcount, (k_ours.regcount, k_ref.regcount)
    src = np.random.default_rng(30).integers(0, 1 << 32, GRID * BLOCK * 4, dtype=np.uint64).astype(np.uint32)
    got, want = _launch(ours, src), _launch(ref.output, src)
    assert got.tobytes() == want.tobytes()
    assert np.array_equal(got, _expected(src))


BROADCAST = """.version 8.8
.target {arch}
.address_size 64
.shared .align 16 .b8 smem[1024];
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
.reg .b32 %r<40>; .reg .b64 %rd<16>; .reg .pred %p<3>;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.x;
shl.b32 %r3, %r2, 6;
add.s32 %r4, %r3, %r1;
mul.wide.u32 %rd3, %r4, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r5, [%rd4];
setp.eq.s32 %p1, %r1, 5;
@%p1 st.shared.u32 [smem+16], %r5;
bar.sync 0;
ld.shared.u32 %r6, [smem+16];
add.s32 %r7, %r6, %r5;
add.s64 %rd6, %rd2, %rd3;
st.global.u32 [%rd6], %r7;
ret;
}}
"""
UR_ONLY = re.compile(r"\[UR\d+(\+0x[0-9a-f]+)?\]")


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_variable_read_through_a_uniform_address(arch):
    """`ld.shared [smem+16]`: ptxas's `LDS R7, [UR4+0x10]`, no general register for the address."""
    ptx = BROADCAST.format(arch=arch)
    ref = oracle.ptxas(ptx, arch)
    assert ref.ok, ref.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {}, filename="k.ptx")[0]
    theirs_ops, ours_ops = _ops(ref.output), _ops(ours)
    for ops in (theirs_ops, ours_ops):
        assert sum(bool(re.match(r"(@!?P\d )?(LDS|STS) ", o)) and bool(UR_ONLY.search(o)) for o in ops) == 2, ops
    (k_ours,), (k_ref,) = read_cubin(ours).kernels, read_cubin(ref.output).kernels
    assert k_ours.regcount <= k_ref.regcount, (k_ours.regcount, k_ref.regcount)
    src = np.random.default_rng(31).integers(0, 1 << 32, GRID * BLOCK, dtype=np.uint64).astype(np.uint32)
    got, want = _launch(ours, src), _launch(ref.output, src)
    assert got.tobytes() == want.tobytes()
    rows = src.reshape(GRID, BLOCK)
    assert np.array_equal(got.reshape(GRID, BLOCK), (rows + rows[:, 5:6]) & 0xFFFFFFFF)



LDMATRIX = """.version 8.8
.target {arch}
.address_size 64
.shared .align 16 .b8 smem[4096];
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
.reg .b32 %r<60>; .reg .b64 %rd<16>;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 16;
add.s64 %rd4, %rd1, %rd3;
mov.u32 %r9, smem;
shl.b32 %r10, %r1, 4;
add.s32 %r11, %r9, %r10;
ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4];
st.shared.v4.u32 [%r11], {{%r2, %r3, %r4, %r5}};
ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4+512];
st.shared.v4.u32 [%r11+512], {{%r2, %r3, %r4, %r5}};
ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4+1024];
st.shared.v4.u32 [%r11+1024], {{%r2, %r3, %r4, %r5}};
ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd4+1536];
st.shared.v4.u32 [%r11+1536], {{%r2, %r3, %r4, %r5}};
bar.sync 0;
and.b32 %r12, %r1, 15;
shl.b32 %r13, %r12, 5;
shr.u32 %r14, %r1, 4;
shl.b32 %r15, %r14, 4;
xor.b32 %r16, %r13, %r15;
add.s32 %r17, %r9, %r16;
ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r20, %r21, %r22, %r23}}, [%r17];
add.s32 %r18, %r17, 1024;
ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r24, %r25, %r26, %r27}}, [%r18];
add.s64 %rd5, %rd2, %rd3;
add.s64 %rd6, %rd5, %rd3;
st.global.v4.u32 [%rd6], {{%r20, %r21, %r22, %r23}};
st.global.v4.u32 [%rd6+16], {{%r24, %r25, %r26, %r27}};
ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_ldmatrix_second_buffer_keeps_the_uniform_term(arch):
    """`ldmatrix [a]` and `ldmatrix [a+1024]`, a = window + lane offset: ptxas's
    `LDSM.16.M88.4 R4, [R2+UR4]` and `LDSM.16.M88.4 R8, [R2+UR4+0x400]` (the add of 1024
    folded into the immediate, the window base a UR term); results = ptxas's in the emulator."""
    ptx = LDMATRIX.format(arch=arch)
    ref = oracle.ptxas(ptx, arch)
    assert ref.ok, ref.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {}, filename="k.ptx")[0]
    for ops in (_ops(ref.output), _ops(ours)):
        ldsm = [o for o in ops if o.startswith("LDSM")]
        assert len(ldsm) == 2 and all(UR_TERM.search(o) for o in ldsm), ops
        assert any(o.endswith("+0x400]") for o in ldsm), ldsm
    (k_ours,), (k_ref,) = read_cubin(ours).kernels, read_cubin(ref.output).kernels
    assert k_ours.regcount <= k_ref.regcount, (k_ours.regcount, k_ref.regcount)
    src = np.random.default_rng(32).integers(0, 1 << 32, 512, dtype=np.uint64).astype(np.uint32)
    outs = []
    for cubin in (ours, ref.output):
        dst = np.full(256, 0xDEADBEEF, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [src, dst], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(dst)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert not np.any(outs[0] == 0xDEADBEEF)
