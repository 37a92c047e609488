"""A loop that provably runs at most once keeps its invariant work (`opt/hoist_invariants.py`):
`i = 0; L: setp.lt p, i, n & 1; @!p bra END; ...; i += 1` runs its body zero or one times, so
moving work out of it saves no iteration and runs that work where the loop is skipped (fuzz
seed 21000186: an f64 `min` and NaN test moved out, 323 -> 378 emulated cycles; ptxas keeps
them in). Ours and ptxas's cubins run on the same inputs (half the threads skipping the loop, then
all): outputs bit-identical. In both cubins every f64 instruction follows the loop's exit branch."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program

ONCE = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<12>;
.reg .b64 %rd<8>;
.reg .f64 %fd<8>;
.reg .pred %p<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 16;
add.s64 %rd4, %rd2, %rd3;
ld.global.u32 %r2, [%rd4];
ld.global.f64 %fd1, [%rd4+8];
mov.f64 %fd2, %fd1;
and.b32 %r3, %r2, 1;
mov.u32 %r4, 0;
L:
setp.lt.u32 %p1, %r4, %r3;
@!%p1 bra.uni END;
min.f64 %fd3, %fd1, 0dFFF0000000000000;
testp.notanumber.f64 %p2, %fd3;
selp.f64 %fd4, 0d7FF8000000000000, %fd3, %p2;
mul.f64 %fd5, %fd4, %fd1;
fma.rn.f64 %fd2, %fd5, %fd1, %fd4;
add.u32 %r4, %r4, 1;
bra.uni L;
END:
add.s64 %rd5, %rd1, %rd3;
st.global.f64 [%rd5], %fd2;
st.global.u32 [%rd5+8], %r4;
ret;
}
"""


F64 = ("DSETP", "DMUL", "DFMA", "DADD")


def _ours() -> bytes:
    return codegen.generate_module(codegen.lower_ptx(ONCE, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]


def _run_both(data: np.ndarray):
    theirs, ours = oracle.ptxas(ONCE).output, _ours()
    results = []
    for cubin in (ours, theirs):
        out = np.zeros((64, 4), dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        results.append((out, res))
    (mine, rmine), (want, rwant) = results
    assert mine.tobytes() == want.tobytes()
    return rmine, rwant


def test_invariant_work_stays_in_a_loop_that_runs_at_most_once():
    rng = np.random.default_rng(186)
    data = np.zeros((64, 4), dtype=np.uint32)
    data[:, 0] = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    data[:, 2:4] = rng.standard_normal(64).view(np.uint32).reshape(64, 2)
    data[::7, 2:4] = np.array([np.nan]).view(np.uint32)
    _run_both(data)                                  # half the threads run the loop once
    data[:, 0] &= ~np.uint32(1)                      # every thread skips it
    _run_both(data)
    for cubin in (_ours(), oracle.ptxas(ONCE).output):   # ptxas's too: the check means what it says
        ops = [ins.opcode for _, ins in load_program(cubin, "k").instructions]
        first_branch = ops.index("BRA")
        assert all(k > first_branch for k, op in enumerate(ops) if op in F64), ops
