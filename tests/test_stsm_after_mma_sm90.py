"""STSM reads an MMA result as a store does (hopper.json `mma_to_memory_readers`): ptxas
13.5 on sm_90a stores an HMMA.16816's D registers with stmatrix 23 cycles after it, a
single-pass HMMA.1688's 15 after, an IMMA.8816's 12 after (the `mma_to_memory` figures);
the checker held STSM to the ALU figure (24 / 16 / 13) and flagged ptxas's own cubin (fuzz
seed 43900126, sm_90a: "reads R12 23 cycles after HMMA at 0x0920 issued; STSM needs 24").
ptxas's cubins must run clean, ours give their values."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.compiler import compile as compile_ours
from ptx2sass.emu.launch import run
from ptx2sass.oracle import ptxas

SHAPES = {
    "m16n8k16.f32": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, 4),
    "m16n8k8.f32": ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, 4),
    "m16n8k16.f16": ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, 2),
    "m8n8k16.s8": ("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 1, 1, 2, 2),
}


def _kernel(mma: str, na: int, nb: int, nc: int, x: int) -> str:
    def regs(p, n):
        return "{" + ", ".join(f"%{p}{i}" for i in range(n)) + "}"
    lines = [".version 9.1", ".target sm_90a", ".address_size 64", ".shared .align 16 .b8 sm[2048];",
             ".visible .entry k(.param .u64 out, .param .u64 in) {",
             " .reg .b32 %a<8>; .reg .b32 %b<8>; .reg .b32 %c<8>; .reg .b32 %d<8>; .reg .b32 %t<8>;"
             " .reg .b64 %rd<6>;",
             " ld.param.u64 %rd0, [in]; ld.param.u64 %rd1, [out]; mov.u32 %t0, %tid.x;",
             " mul.wide.u32 %rd2, %t0, 64; add.u64 %rd3, %rd0, %rd2;"]
    lines += [f" ld.global.b32 %a{i}, [%rd3+{4 * i}];" for i in range(na)]
    lines += [f" ld.global.b32 %b{i}, [%rd3+{16 + 4 * i}];" for i in range(nb)]
    lines += [f" ld.global.b32 %c{i}, [%rd3+{32 + 4 * i}];" for i in range(nc)]
    lines.append(f" {mma} {regs('d', nc)}, {regs('a', na)}, {regs('b', nb)}, {regs('c', nc)};")
    lines.append(" mov.u32 %t1, sm; mad.lo.u32 %t2, %t0, 16, %t1;")
    lines.append(f" stmatrix.sync.aligned.m8n8.x{x}.shared.b16 [%t2], {regs('d', x)};")
    lines.append(" bar.sync 0; ld.shared.v4.u32 {%t3, %t4, %t5, %t6}, [%t2]; add.u64 %rd4, %rd1, %rd2;"
                 " st.global.v4.u32 [%rd4], {%t3, %t4, %t5, %t6}; ret; }")
    return "\n".join(lines) + "\n"


def _run(cubin):
    rng = np.random.default_rng(7)
    src = rng.integers(0, 1 << 14, 32 * 16, dtype=np.uint32) | np.uint32(0x3c003c00 & 0x38003800)
    out = np.zeros(32 * 16, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, src])
    return out, res


@pytest.mark.parametrize("shape", list(SHAPES))
def test_stsm_of_an_mma_result_at_ptxas_distance(shape):
    mma, na, nb, nc, x = SHAPES[shape]
    src = _kernel(mma, na, nb, nc, x)
    theirs = ptxas(src, "sm_90a")
    assert theirs.ok, theirs.stderr
    expected, their_res = _run(theirs.output)
    assert not their_res.hazards, [str(h) for h in their_res.hazards]
    got, res = _run(compile_ours(src, arch="sm_90a"))
    assert not res.hazards, [str(h) for h in res.hazards]
    assert got.tolist() == expected.tolist()
