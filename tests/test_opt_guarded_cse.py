"""Common-subexpression elimination of guarded instructions (`opt/cse.py`): `@p y = f(a)`
keeping `m` where `p` is false is a dominating `@p x = f(a)` when `m` is `x` or what `x`
kept. An unrolled constant-trip loop whose body guards a loop-invariant computation (fuzz
seed 28001850, sm_100: `@%p0 vmad.s32.s32.s32.shr15 %r3, %r1, %r2, %r0` in a 12-trip loop)
left twelve guarded copies, each in registers of its own: 131 registers to ptxas's 30."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, frontend, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program
from ptx2sass.frontend.to_ssa import lower_module
from ptx2sass.opt.cse import eliminate_common_subexpressions
from ptx2sass.opt.propagate import propagate_copies

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _function(body: str):
    module = frontend.parse(HEADER + ".visible .entry k(.param .u64 p)\n{\n" + body + "\n}\n",
                            "x.ptx")
    frontend.check(module, "sm_89")
    fn = lower_module(module).functions[0]
    propagate_copies(fn)
    return fn


def _mads(fn):
    return [ins for b in fn.blocks for ins in b.instrs if ins.opcode == "mad"]


def test_identical_guarded_computations_merge_and_others_stay():
    body = """.reg .u32 %r<12>;
.reg .u64 %rd1;
.reg .pred %p<3>;
ld.param.u64 %rd1, [p];
ld.global.u32 %r1, [%rd1];
ld.global.u32 %r2, [%rd1+4];
ld.global.u32 %r3, [%rd1+8];
setp.ne.u32 %p1, %r1, 0;
setp.ne.u32 %p2, %r2, 0;
mov.u32 %r4, %r3;
@%p1 mad.lo.u32 %r4, %r1, %r2, 7;
@%p1 mad.lo.u32 %r4, %r1, %r2, 7;
st.global.u32 [%rd1+12], %r4;
@%p2 mad.lo.u32 %r4, %r1, %r2, 7;
st.global.u32 [%rd1+16], %r4;
@!%p1 mad.lo.u32 %r4, %r1, %r2, 7;
st.global.u32 [%rd1+20], %r4;
mov.u32 %r5, %r3;
@%p1 mad.lo.u32 %r5, %r1, %r2, 7;
st.global.u32 [%rd1+24], %r5;
mov.u32 %r6, %r3;
add.u32 %r6, %r6, 1;
@%p1 mad.lo.u32 %r6, %r1, %r2, 7;
st.global.u32 [%rd1+28], %r6;
ret;"""
    fn = _function(body)
    before = _mads(fn)
    assert len(before) == 6
    first, second, other_guard, negated, same_kept, written_between = before
    assert eliminate_common_subexpressions(fn) is True
    after = _mads(fn)
    # the second copy merges the first; the copy keeping the first's own kept value (%r3)
    # equals it too; a different guard, the guard's negation and a kept value written in
    # between (%r3 + 1) each compute something else where the guard is false
    assert [id(i) for i in after] == [id(first), id(other_guard), id(negated), id(written_between)]
    stored = [ins.srcs[1] for b in fn.blocks for ins in b.instrs if ins.opcode == "st"]
    assert stored[0] is first.dests[0] and stored[3] is first.dests[0]
    assert other_guard.merge[0] is first.dests[0]
    assert stored[4] is written_between.dests[0]


LOOP = HEADER + """.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .b32 %r<10>;
.reg .b64 %rd<8>;
.reg .pred %p<3>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 16;
add.s64 %rd4, %rd2, %rd3;
ld.global.u32 %r2, [%rd4];
ld.global.u32 %r3, [%rd4+4];
ld.global.u32 %r4, [%rd4+8];
ld.global.u32 %r5, [%rd4+12];
and.b32 %r6, %r5, 1;
setp.ne.u32 %p0, %r6, 0;
mov.u32 %r7, 0;
$L1:
setp.lt.u32 %p1, %r7, 12;
@!%p1 bra.uni $L2;
cvt.rzi.ftz.sat.u32.f32 %r0, %r2;
@%p0 vmad.s32.s32.s32.shr15 %r3, %r2, %r4, %r0;
add.u32 %r7, %r7, 1;
bra.uni $L1;
$L2:
mul.wide.u32 %rd5, %r1, 8;
add.s64 %rd6, %rd1, %rd5;
st.global.u32 [%rd6], %r3;
st.global.u32 [%rd6+4], %r0;
ret;
}
"""


def test_unrolled_guarded_loop_body_matches_ptxas():
    arch = "sm_100"
    theirs = oracle.ptxas(LOOP, arch=arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(LOOP, arch, "k.ptx"), arch, filename="k.ptx")
    rng = np.random.default_rng(28001850)
    data = rng.integers(0, 1 << 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    data[::3, 0] = rng.uniform(0, 3e9, 22).astype(np.float32).view(np.uint32)   # in range
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros((64, 2), dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    regs = [load_program(c, "k").regcount for c in (ours, theirs)]
    assert regs[0] <= 1.1 * regs[1] + 2, regs
