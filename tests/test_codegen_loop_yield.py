"""YIELD at the top of the PTX's loops where ptxas puts one (ptx2sass/loop_yield.py): loops
with an atomic, and loops with a strong (volatile, relaxed, acquire, release) access that may
run while other lanes of the warp are elsewhere. The count per kernel is compared with
ptxas's: a CAS spin lock and a loop of `atom` get one; a loop of `red`, a warp-uniform
polling loop, loops of plain accesses and the CAS loop made for a 16-bit `atom.cas` get none;
a polling loop behind a divergent branch, or with a per-lane exit, gets one unless the lanes
that branched off went straight to `ret`. On sm_90 a per-lane exit counts only where the loop
stores strongly or its exit depends on what it read (both archs are compared)."""
from __future__ import annotations

import re

import pytest

from ptx2sass import codegen, oracle

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

# A loop of 32-lane strides over a histogram of 16 words; {op} is its one memory operation.
_COUNTED_LOOP = """.visible .entry k(.param .u64 h, .param .u32 n)
{{
.reg .pred %p<2>; .reg .u32 %r<6>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [h];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
LOOP:
and.b32 %r3, %r2, 15;
mul.wide.u32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
{op}
add.u32 %r2, %r2, 32;
setp.lt.u32 %p1, %r2, %r1;
@%p1 bra LOOP;
ret;
}}"""

# A branch on %tid.x (or, with {cond}, anything) around a loop; {body} is the loop's body,
# {exit} the loop's exit test on r0, {other} what the lanes that branch off do.
_BRANCHED_LOOP = """.visible .entry k(.param .u64 f, .param .u32 n)
{{
.reg .pred p, q; .reg .b32 r<8>; .reg .b64 a<6>;
.shared .u32 s[4];
ld.param.u64 a0, [f];
ld.param.u32 r5, [n];
mov.u32 r1, %tid.x;
mov.u32 r6, s;
mul.wide.u32 a1, r1, 4;
add.s64 a2, a0, a1;
mov.u32 r2, 0;
setp.{cond};
@p bra other;
loop:
{body}
add.u32 r2, r2, 1;
{exit}
@q bra loop;
st.global.u32 [a0+8], r0;
ret;
other:
{other}
ret;
}}"""


# A loop whose trip count (1..8) differs per lane: {body}, then the exit test {exit} (on %p0);
# {after} runs after the loop (`own_exit` fills it with nothing).
OWN_EXIT_LOOP = """.visible .entry k(.param .u64 p_out, .param .u64 p_in, .param .u32 n)
{{
.reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %d<6>;
ld.param.u64 %d0, [p_in];
ld.param.u64 %d1, [p_out];
ld.param.u32 %r9, [n];
mov.u32 %r0, %tid.x;
mul.wide.u32 %d2, %r0, 4;
add.s64 %d3, %d0, %d2;
ld.global.u32 %r1, [%d3];
and.b32 %r2, %r1, 7;
add.u32 %r2, %r2, 1;
mov.u32 %r3, 0;
mov.u32 %r4, 0;
L1:
{body}
add.u32 %r3, %r3, 1;
{exit}
@%p0 bra L1;
{after}
add.s64 %d4, %d1, %d2;
st.global.u32 [%d4], %r4;
ret;
}}"""


def own_exit(body: str, exit: str, after: str = "") -> str:
    return OWN_EXIT_LOOP.format(body=body, exit=exit, after=after)


def _branched(body: str, exit: str = "setp.eq.u32 q, r0, 0;", other: str = "st.volatile.global.u32 [a0], 1;",
              cond: str = "eq.u32 p, r1, 0") -> str:
    return _BRANCHED_LOOP.format(body=body, exit=exit, other=other, cond=cond)


# A guarded grid-stride loop over bytes into a shared histogram between two CTA barriers;
# {op} is its one shared-memory operation, {bar} the barrier after it.
_GRID_STRIDE = """.visible .entry k(.param .u64 pv, .param .u64 ph, .param .u32 pn)
{
.reg .pred %p<3>; .reg .b32 %r<30>; .reg .b64 %rd<10>;
.shared .align 4 .b8 loc[1024];
ld.param.u64 %rd2, [pv]; ld.param.u64 %rd3, [ph]; ld.param.u32 %r8, [pn];
mov.u32 %r1, %tid.x; shl.b32 %r9, %r1, 2; mov.u32 %r10, loc; add.s32 %r2, %r10, %r9;
st.shared.u32 [%r2], 0;
bar.sync 0;
mov.u32 %r3, %ntid.x; mov.u32 %r12, %ctaid.x; mad.lo.s32 %r20, %r12, %r3, %r1;
setp.ge.s32 %p1, %r20, %r8;
@%p1 bra L3;
mov.u32 %r13, %nctaid.x; mul.lo.s32 %r5, %r13, %r3; cvta.to.global.u64 %rd1, %rd2;
L2:
cvt.s64.s32 %rd4, %r20; add.s64 %rd5, %rd1, %rd4;
ld.global.u8 %r14, [%rd5]; shl.b32 %r14, %r14, 2; add.s32 %r16, %r10, %r14;
{op}
add.s32 %r20, %r20, %r5; setp.lt.s32 %p2, %r20, %r8;
@%p2 bra L2;
L3:
{bar}
cvta.to.global.u64 %rd6, %rd3; mul.wide.u32 %rd7, %r1, 4; add.s64 %rd8, %rd6, %rd7;
ld.shared.u32 %r18, [%r2];
atom.global.add.u32 %r19, [%rd8], %r18;
ret;
}"""


def grid_stride(op: str, bar: str = "bar.sync 0;") -> str:
    return _GRID_STRIDE.replace("{op}", op).replace("{bar}", bar)



# An mbarrier in shared memory that lanes {guard} (set %p2) skip polling in LOOP ({poll},
# which branches back to LOOP until done); everyone stores its %tid.x after.
_GUARDED_POLL = """.visible .entry k(.param .u64 out, .param .u32 n)
{
.reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
.shared .align 8 .b64 bar;
ld.param.u64 %rd1, [out];
ld.param.u32 %r4, [n];
mov.u32 %r1, %tid.x;
mov.u32 %r2, bar;
{guard}
@%p2 bra DONE;
LOOP:
{poll}
DONE:
st.global.u32 [%rd1], %r1;
ret;
}"""


def _guarded_poll(poll: str, guard: str = "setp.lt.u32 %p2, %r1, 32;") -> str:
    return _GUARDED_POLL.replace("{guard}", guard).replace("{poll}", poll)


KERNELS = {
    "spin_lock": """.visible .entry k(.param .u64 lock, .param .u64 data)
{
.reg .pred %p<2>; .reg .u32 %r<6>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [lock];
ld.param.u64 %rd2, [data];
SPIN:
atom.global.cas.b32 %r1, [%rd1], 0, 1;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra SPIN;
ld.volatile.global.u32 %r2, [%rd2];
add.u32 %r3, %r2, 1;
st.volatile.global.u32 [%rd2], %r3;
atom.global.exch.b32 %r4, [%rd1], 0;
ret;
}""",
    "red_loop": _COUNTED_LOOP.format(op="red.global.add.u32 [%rd3], 1;"),
    "atom_loop": _COUNTED_LOOP.format(op="atom.global.add.u32 %r4, [%rd3], 1;"),   # result unused
    "volatile_spin": """.visible .entry k(.param .u64 flag)
{
.reg .pred %p<2>; .reg .u32 %r<4>; .reg .u64 %rd<3>;
ld.param.u64 %rd1, [flag];
WAIT:
ld.volatile.global.u32 %r1, [%rd1];
setp.eq.u32 %p1, %r1, 0;
@%p1 bra WAIT;
st.global.u32 [%rd1+4], %r1;
ret;
}""",
    "flag_handoff": _branched("ld.volatile.global.u32 r0, [a0];"),
    "flag_handoff_uniform_branch": _branched("ld.volatile.global.u32 r0, [a0];", cond="eq.u32 p, r5, 0"),
    "poll_after_bare_return": _branched("ld.volatile.global.u32 r0, [a0];", other=""),
    "poll_per_lane_address": _branched("ld.volatile.global.u32 r0, [a2];", cond="eq.u32 p, r5, 0"),
    "acquire_poll": _branched("ld.acquire.gpu.global.u32 r0, [a0];"),
    "relaxed_poll": _branched("ld.relaxed.sys.global.u32 r0, [a0];"),
    "volatile_shared_poll": _branched("ld.volatile.shared.u32 r0, [r6];"),
    "volatile_store_counted": _branched("st.volatile.global.u32 [a0+4], r2;\nmov.u32 r0, r2;",
                                        exit="setp.lt.u32 q, r2, r5;"),
    "release_store_counted_uniform": _branched("st.release.gpu.global.u32 [a0+4], r2;\nmov.u32 r0, r2;",
                                               exit="setp.lt.u32 q, r2, r5;", cond="eq.u32 p, r5, 0"),
    "plain_loads_and_stores": _branched("ld.global.u32 r0, [a2];\nst.global.u32 [a0+4], r2;"),
    "fence_only": _branched("membar.gl;\nmov.u32 r0, r2;", exit="setp.lt.u32 q, r2, r5;"),
    # in a function, lanes that `ret` go back to the caller: they count (ptxas: one YIELD)
    "poll_in_function_after_ret": """.func poll(.param .u64 f)
{
.reg .pred p, q; .reg .b32 r<4>; .reg .b64 a<2>;
ld.param.u64 a0, [f];
mov.u32 r1, %tid.x;
setp.eq.u32 p, r1, 0;
@p bra done;
wait:
ld.volatile.global.u32 r0, [a0];
setp.eq.u32 q, r0, 0;
@q bra wait;
st.global.u32 [a0+8], r0;
done:
ret;
}
.visible .entry k(.param .u64 f)
{
.reg .b64 a<2>;
ld.param.u64 a0, [f];
{ .param .u64 pa; st.param.u64 [pa], a0; call.uni poll, (pa); }
st.global.u32 [a0+12], 1;
ret;
}""",
    # sm_90 and later (Target.loop_yield_own_exit "waits"): a loop whose only divergence is
    # its own exit yields only with a strong store or an exit that depends on what it read
    "volatile_load_per_lane_trip": own_exit(body="ld.volatile.global.u32 %r5, [%d3];\nadd.u32 %r4, %r4, %r5;",
                                                    exit="setp.lt.u32 %p0, %r3, %r2;"),
    "volatile_store_per_lane_trip": own_exit(body="st.volatile.global.u32 [%d3+4], %r3;",
                                                     exit="setp.lt.u32 %p0, %r3, %r2;"),
    "atom_result_in_exit": own_exit(body="atom.global.add.u32 %r5, [%d0], 1;\nadd.u32 %r4, %r4, %r5;",
                                            exit="setp.lt.u32 %p0, %r5, 100;"),
    "uniform_flag_and_per_lane_trip": own_exit(
        body="ld.volatile.global.u32 %r5, [%d0];\nadd.u32 %r4, %r4, %r5;",
        exit="setp.ne.u32 %p1, %r5, 0;\nsetp.lt.u32 %p2, %r3, %r2;\nand.pred %p0, %p1, %p2;"),
    "inner_volatile_loop_in_per_lane_loop": own_exit(
        body="mov.u32 %r7, 0;\nI: ld.volatile.global.u32 %r5, [%d3];\nadd.u32 %r4, %r4, %r5;\nadd.u32 %r7, %r7, 1;\n"
             "setp.lt.u32 %p1, %r7, %r9;\n@%p1 bra I;", exit="setp.lt.u32 %p0, %r3, %r2;"),
    # CUDA's grid-stride histogram (tests/corpus/cuda patterns.cu): the test before the
    # rotated loop is the loop's own exit before the first trip; sm_90: none (GPU runs 25-26)
    "grid_stride_shared_histogram": grid_stride("atom.shared.add.u32 %r17, [%r16], 1;"),
    "grid_stride_volatile_store": grid_stride("st.volatile.shared.u32 [%r16], %r20;"),
    # mbarrier waits poll a phase other threads complete: one behind a divergent branch
    # yields (both archs), a warp-uniform one does not; a divergent test that only guards a
    # polling loop is its own exit, and on sm_90 that loop yields (its exit reads the poll)
    "mbarrier_wait_divergent": _guarded_poll("mbarrier.test_wait.parity.shared.b64 %p3, [%r2], 0;\n"
                                             "@!%p3 bra LOOP;"),
    "mbarrier_wait_uniform": _guarded_poll("mbarrier.test_wait.parity.shared.b64 %p3, [%r2], 0;\n"
                                           "@!%p3 bra LOOP;", guard="setp.lt.u32 %p2, %r4, 32;"),
    "guarded_volatile_poll": _guarded_poll("ld.volatile.global.u32 %r3, [%rd1+16];\n"
                                           "setp.eq.u32 %p3, %r3, 0;\n@%p3 bra LOOP;"),
    "guarded_acquire_poll": _guarded_poll("ld.acquire.gpu.global.u32 %r3, [%rd1+16];\n"
                                          "setp.eq.u32 %p3, %r3, 0;\n@%p3 bra LOOP;"),
    "cas16": """.visible .entry k(.param .u64 p)
{
.reg .u64 %rd<3>; .reg .b16 %h<4>;
ld.param.u64 %rd1, [p];
mov.b16 %h1, 5;
atom.global.cas.b16 %h2, [%rd1], %h1, 7;
st.global.b16 [%rd1+8], %h2;
ret;
}""",
}


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", KERNELS)
def test_yields_where_ptxas_puts_them(name, arch):
    ptx = HEADER.replace("sm_89", arch) + KERNELS[name]
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    count = lambda cubin: len(re.findall(r"\bYIELD\b", oracle.nvdisasm(cubin)))   # noqa: E731
    assert count(codegen.compile_ptx(ptx, arch)) == count(theirs.output)


# sm_90 only: try_wait, and a test_wait with `.relaxed` (PTX 8.6): ptxas yields whatever
# the wait's semantics
SM90_KERNELS = {
    "mbarrier_try_wait_divergent": _guarded_poll("mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;\n"
                                                 "@!%p3 bra LOOP;"),
    "mbarrier_relaxed_wait_divergent": _guarded_poll(
        "mbarrier.test_wait.parity.relaxed.cta.shared::cta.b64 %p3, [%r2], 0;\n@!%p3 bra LOOP;"),
    "mbarrier_try_wait_uniform": _guarded_poll("mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;\n"
                                               "@!%p3 bra LOOP;", guard="setp.lt.u32 %p2, %r4, 32;"),
}


@pytest.mark.parametrize("name", SM90_KERNELS)
def test_sm90_mbarrier_waits_yield_where_ptxas_does(name):
    ptx = ".version 8.6\n.target sm_90\n.address_size 64\n" + SM90_KERNELS[name]
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    count = lambda cubin: len(re.findall(r"\bYIELD\b", oracle.nvdisasm(cubin)))   # noqa: E731
    assert count(codegen.compile_ptx(ptx, "sm_90")) == count(theirs.output)


BARRIERS = {"bar.sync": "bar.sync 0;", "bar.arrive": "bar.arrive 1, 64;",
            "bar.red": "bar.red.popc.u32 %r25, 0, %p1;"}


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("bar", BARRIERS)
def test_cta_barriers_after_a_yielding_loop_wait_for_the_whole_warp(bar, arch):
    """After a yielding loop ptxas puts a WARPSYNC of the whole warp before each CTA barrier
    (a YIELD lets lanes waiting at a BSYNC go on: the H200 ran our grid-stride histogram's
    BAR.SYNC with the warp split, GPU runs 25-26). Checked on ptxas's code first."""
    ptx = HEADER.replace("sm_89", arch) + grid_stride(
        "st.volatile.shared.u32 [%r16], %r20;", BARRIERS[bar])

    def before_barriers(cubin):
        lines = [ln.split(";")[0].split("*/")[-1].strip() for ln in oracle.nvdisasm(cubin).splitlines()
                 if re.search(r"\*/\s+\S", ln) and "NOP" not in ln]
        assert any(ln == "YIELD" for ln in lines)
        return [lines[i - 1].split()[0] for i, ln in enumerate(lines) if ln.startswith("BAR.") and i > 0][1:]

    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    assert before_barriers(theirs.output) == ["WARPSYNC"] or before_barriers(theirs.output) == ["WARPSYNC.ALL"]
    assert before_barriers(codegen.compile_ptx(ptx, arch))[0].startswith("WARPSYNC")
