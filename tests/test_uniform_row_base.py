"""A row base from %ctaid and 64-bit kernel parameters on the uniform datapath (sm_90 and
later, isel/uniform_datapath.py on by default there; docs/STATUS.md, branch q100_28).

ptxas 13.5 computes `src + ctaid * stride * 4` with `S2UR`, `UIMAD.WIDE.U32` + `UIMAD` (the
64-bit product), `USHF.L.U64.HI` (the shift) and `UIADD3`/`UIADD3.X` (the 64-bit add with a
uniform carry), then copies the base into a register pair just before the `IMAD.WIDE.U32`
that adds the lane's offset (Triton int64_rows' store address), so no general register
holds the row base while the lane's work runs. Expected values: ptxas's cubin of the same
PTX and NumPy, both in the emulator; the uniform opcodes and the register count are
ptxas's listing's."""
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
.visible .entry k(.param .u64 src, .param .u64 dst, .param .u64 stride, .param .u32 n)
{{
.reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .pred %p<4>;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
ld.param.u64 %rd3, [stride];
ld.param.u32 %r1, [n];
mov.u32 %r2, %ctaid.x;
cvt.u64.u32 %rd4, %r2;
mov.u32 %r3, %tid.x;
setp.lt.s32 %p1, %r3, %r1;
mul.lo.s64 %rd5, %rd3, %rd4;
shl.b64 %rd6, %rd5, 2;
add.s64 %rd7, %rd1, %rd6;
mul.wide.u32 %rd8, %r3, 4;
add.s64 %rd9, %rd7, %rd8;
mov.u32 %r4, 7;
@%p1 ld.global.u32 %r4, [%rd9];
mul.lo.s32 %r5, %r4, %r4;
xor.b32 %r6, %r5, %r3;
mad.lo.s32 %r7, %r6, 3, %r4;
add.s64 %rd10, %rd2, %rd6;
add.s64 %rd11, %rd10, %rd8;
@%p1 st.global.u32 [%rd11], %r7;
ret;
}}
"""
GRID, BLOCK, STRIDE = 3, 64, 80          # rows of 80 words, the first 48 of each read
ARCHS = ("sm_90", "sm_100", "sm_120")
# ptxas's uniform 64-bit arithmetic for the row base (each in its listing, checked below);
# the 64-bit add is UIADD3/UIADD3.X on sm_90 and sm_100, a vector `IADD.64 R2, R2, UR8` on sm_120
ROW_BASE_OPS = ("S2UR", "UIMAD.WIDE.U32", "USHF.L.U64.HI")
CARRY_ADD = "UIADD3.X"


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in oracle.nvdisasm(cubin, ("-c",)).splitlines()
            if re.search(r"/\*[0-9a-f]{4}\*/", line)]


def _launch(cubin: bytes, src: np.ndarray, n: int) -> np.ndarray:
    dst = np.full_like(src, 0xDEADBEEF)
    res = run(cubin, "k", (GRID, 1, 1), (BLOCK, 1, 1), [src, dst, np.uint64(STRIDE), np.uint32(n)],
              hazard_check=True)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return dst


def _regs(cubin: bytes) -> int:
    (k,) = read_cubin(cubin).kernels
    return k.regcount


@pytest.mark.parametrize("arch", ARCHS)
def test_row_base_on_the_uniform_datapath(arch):
    ptx = PTX.format(arch=arch)
    ref = oracle.ptxas(ptx, arch)
    assert ref.ok, ref.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {}, filename="k.ptx")[0]
    theirs_ops, ours_ops = _ops(ref.output), _ops(ours)
    for op in ROW_BASE_OPS:
        assert any(o.split(" ")[0] == op for o in theirs_ops), (op, theirs_ops)
        assert any(o.split(" ")[0] == op for o in ours_ops), (op, ours_ops)
    if any(o.split(" ")[0] == CARRY_ADD for o in theirs_ops):
        assert any(o.split(" ")[0] == CARRY_ADD for o in ours_ops), ours_ops
    assert not any(o.startswith("IMAD.WIDE.U32") and "UR" in o for o in ours_ops), ours_ops
    assert _regs(ours) <= _regs(ref.output), (_regs(ours), _regs(ref.output))
    rng = np.random.default_rng(18)
    src = rng.integers(0, 1 << 32, GRID * STRIDE, dtype=np.uint64).astype(np.uint32)
    for n in (48, 0, 64):
        got, want = _launch(ours, src, n), _launch(ref.output, src, n)
        assert got.tobytes() == want.tobytes(), n
        expect = np.full_like(src, 0xDEADBEEF)
        for row in range(GRID):
            for t in range(min(n, BLOCK)):
                x = int(src[row * STRIDE + t])
                expect[row * STRIDE + t] = ((((x * x) & 0xFFFFFFFF) ^ t) * 3 + x) & 0xFFFFFFFF
        assert np.array_equal(got, expect), n
