"""Loop-invariant code motion (`opt/hoist_invariants.py`) and loops left with nothing to do
(`opt/dead_loops.py`): a do-while loop of a data-dependent trip count that reloads a
constant-bank vector and a shared word it never writes; ptxas loads both once and drops the
loop. Before these passes ours kept the loop and reloaded both on every iteration (fuzz seed
21000113: 2.5x ptxas's emulated cycles). Ours and ptxas's cubins run on the same inputs:
outputs bit-identical; neither keeps a branch. A loop whose count is read after it, and one
that stores, stay loops (their results equal ptxas's)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

LOOP = """.version 8.0
.target sm_89
.address_size 64
.const .align 16 .b32 tab[8] = {3, 5, 7, 11, 13, 17, 19, 23};
.shared .align 16 .b32 sh[64];
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
.reg .b32 %r<20>;
.reg .b64 %rd<8>;
.reg .pred %p<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd4, %rd2, %rd3;
ld.global.u32 %r3, [%rd4];
shl.b32 %r10, %r2, 2;
mov.u32 %r11, sh;
add.u32 %r11, %r11, %r10;
st.shared.u32 [%r11], %r3;
bar.sync 0;
and.b32 %r4, %r3, 3;
add.u32 %r4, %r4, 2;
mov.u32 %r5, 0;
LOOP:
ld.const.v4.u32 {%r6, %r7, %r8, %r9}, [tab+16];
xor.b32 %r12, %r2, 1;
shl.b32 %r12, %r12, 2;
mov.u32 %r13, sh;
add.u32 %r13, %r13, %r12;
ld.shared.u32 %r14, [%r13];
EXTRA
add.u32 %r5, %r5, 1;
setp.lt.u32 %p1, %r5, %r4;
@%p1 bra.uni LOOP;
add.s64 %rd5, %rd1, %rd3;
add.u32 %r15, %r6, %r9;
add.u32 %r15, %r15, %r14;
RESULT
st.global.u32 [%rd5], %r15;
ret;
}
"""
VARIANTS = {
    "dead": ("", ""),
    "count_read_after": ("", "add.u32 %r15, %r15, %r5;"),
    "stores": ("st.global.u32 [%rd4+256], %r5;", ""),
}


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_invariant_loads_leave_the_loop_and_the_empty_loop_goes(variant):
    extra, result = VARIANTS[variant]
    ptx = LOOP.replace("EXTRA", extra).replace("RESULT", result)
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(3).integers(0, 1 << 30, 128, dtype=np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(64, dtype=np.uint32)
        buf = data.copy()
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, buf, np.uint32(5)], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append((out, buf))
    assert outs[0][0].tobytes() == outs[1][0].tobytes()
    assert outs[0][1].tobytes() == outs[1][1].tobytes()
    mine, ptxas_ops = _ops(ours), _ops(theirs)
    before_exit = mine[:mine.index("EXIT")]
    if variant == "dead":
        assert not [o for o in ptxas_ops[:ptxas_ops.index("EXIT")] if "BRA" in o]   # ptxas drops the loop
        assert not [o for o in before_exit if "BRA" in o], mine
    else:
        assert [o for o in before_exit if "BRA" in o], mine
    # the constant vector and the shared word are loaded once, outside any loop
    assert sum(o.startswith("LDS") for o in mine) == 1, mine


@pytest.mark.parametrize("load", ["ld.relaxed.cta.shared.u32", "ld.relaxed.gpu.shared.u32", "ld.volatile.shared.u32"])
def test_strong_loads_stay_in_their_loop(load):
    """A relaxed or volatile load reads memory again on every iteration (another thread's store
    must become visible: a spin on a flag), so it neither leaves the loop nor goes with it;
    ptxas keeps the loop and the load in it. The weak load of the same loop leaves it (above)."""
    ptx = LOOP.replace("EXTRA", "").replace("RESULT", "").replace("ld.shared.u32 %r14", load + " %r14")
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    for ops in (_ops(ours), _ops(oracle.ptxas(ptx).output)):
        before_exit = ops[:ops.index("EXIT")]
        assert [o for o in before_exit if o.startswith("@P0 BRA")], ops      # the loop stays
        assert sum(o.startswith("LDS") for o in ops) == 1, ops
