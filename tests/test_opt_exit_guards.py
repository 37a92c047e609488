"""A guarded exit decides its predicate for what follows (`opt/exit_guards.py`): past
`@!p exit`, p holds, so `@p st` is a plain store, `selp a, b, p` is a, `@p exit` ends every
thread and what follows it (here an f32 division: FCHK, MUFU.RCP and a slow path) is never
run. Ours and ptxas's cubins run on the same inputs: outputs bit-identical; our code has no
division left (before the pass it computed one that no thread reaches: fuzz seed 21000055 ran
2.4x ptxas's emulated cycles so)."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

EXITS = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<20>;
.reg .f32 %f<8>;
.reg .b64 %rd<8>;
.reg .pred %p<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd4, %rd2, %rd3;
add.s64 %rd5, %rd1, %rd3;
ld.global.u32 %r3, [%rd4];
ld.global.f32 %f1, [%rd4+256];
setp.ne.u32 %p1, %r3, 0;
st.global.u32 [%rd5], %r2;
@!%p1 exit;
div.rn.f32 %f2, %f1, %f1;
@%p1 st.global.u32 [%rd5+256], %r3;
selp.u32 %r4, 7, 9, %p1;
st.global.u32 [%rd5+512], %r4;
@%p1 exit;
st.global.f32 [%rd5+768], %f2;
ret;
}
"""


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


def test_exit_guard_decides_its_predicate_after_it():
    theirs = oracle.ptxas(EXITS).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(EXITS, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    rng = np.random.default_rng(5)
    data = rng.integers(0, 3, 128, dtype=np.uint32)
    data[64:] = rng.standard_normal(64).astype(np.float32).view(np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(256, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert (outs[0][128:192] == 7).sum() == (data[:64] != 0).sum()     # the selp took its first operand
    mine = _ops(ours)
    assert not [o for o in mine if o.startswith(("FCHK", "MUFU", "CALL"))], mine
    assert sum(o.endswith("EXIT") for o in mine) == 2, mine


# integer compares of a value with itself are decided (fuzz seed 28001599: `setp.le.u64 p,
# x, x; @p exit` left a hundred loads and stores past it, 117 registers, ptxas 32); a float
# one is not (NaN compares unequal to itself)
SELF = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<20>;
.reg .f32 %f<4>;
.reg .b64 %rd<8>;
.reg .pred %p<6>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 16;
add.s64 %rd4, %rd2, %rd3;
add.s64 %rd5, %rd1, %rd3;
ld.global.u64 %rd6, [%rd4];
ld.global.u32 %r3, [%rd4+8];
ld.global.f32 %f1, [%rd4+12];
setp.ne.s32 %p1, %r3, %r3;
@%p1 st.global.u32 [%rd5], 99;
setp.eq.f32 %p2, %f1, %f1;
selp.u32 %r4, 1, 2, %p2;
st.global.u32 [%rd5+4], %r4;
setp.gt.u32 %p3|%p4, %r3, %r3;
selp.u32 %r5, 3, 4, %p4;
st.global.u32 [%rd5+8], %r5;
setp.le.u64 %p5, %rd6, %rd6;
@%p5 exit;
ld.global.u32 %r6, [%rd4+1024];
st.global.u32 [%rd5+12], %r6;
ret;
}
"""


def test_integer_compare_of_a_value_with_itself_is_decided():
    theirs = oracle.ptxas(SELF).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(SELF, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(28001599).integers(0, 1 << 32, (128, 4), dtype=np.uint64).astype(np.uint32)
    data[::3, 3] = 0x7FC00000                                          # NaN
    outs = []
    for cubin in (ours, theirs):
        out = np.full((64, 4), 7, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert (outs[0][:, 0] == 7).all() and (outs[0][:, 2] == 3).all() and (outs[0][:, 3] == 7).all()
    assert (outs[0][::3, 1] == 2).all()                                # NaN != NaN: not folded
    mine = _ops(ours)
    assert [o for o in mine if "EXIT" in o] == ["EXIT"], mine          # one exit, unguarded
    assert not [o for o in mine if "+0x400]" in o], mine               # nothing loaded past it
    assert not [o for o in mine if o.startswith(("ISETP", "@"))], mine
