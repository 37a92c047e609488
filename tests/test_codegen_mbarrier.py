"""The mbarrier family and cp.async.mbarrier.arrive on sm_80/86/89, sm_90, sm_100, sm_110 and sm_120.

Two kinds of check:
* pipelines whose result the PTX ISA fixes (threads publish data, arrive, spin on
  test_wait until the phase completes, read what other warps wrote): ours and ptxas's cubins
  run in the emulator (warps interleaved, so the spin-waits block) and both must give the
  values NumPy computes, ours hazard-free;
* the barrier's state itself (the values arrive returns, the object's words after each
  form, pending_count, test_wait on states and parities): ours and ptxas's code must agree
  bit for bit in the emulator, for shared and generic addresses, uniform and per-thread.
Forms ptxas refuses before sm_90 are refused in ptxas's words."""
import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

# sm_90, sm_100, sm_120: the SYNCS unit (isel/mbarrier_syncs.py)
ARCHES = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_110", "sm_120")
# the first PTX version each Blackwell target takes (the kernels say 7.8)
MIN_VERSION = {"sm_100": "8.6", "sm_110": "9.0", "sm_120": "8.7"}


def _versioned(ptx, arch: str):
    if arch not in MIN_VERSION:
        return ptx
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    text = re.sub(r"\.version \d+\.\d+", f".version {MIN_VERSION[arch]}", text, count=1)
    return text.encode() if isinstance(ptx, bytes) else text
THREADS = 128


def _both(ptx: str, arch: str):
    ptx = _versioned(ptx, arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    return ours, theirs.output


def _run_both(ptx: str, arch: str, make_args, threads: int = THREADS):
    """Each cubin's output buffers (ours first); ours must run hazard-free."""
    outs = []
    for cubin, hazards in zip(_both(ptx, arch), (True, False)):
        args = make_args()
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), args, hazard_check=hazards)
        if hazards:
            assert not res.hazards, res.hazards[:3]
        outs.append(args)
    return outs


# Three phases of a pipeline on one barrier expecting all THREADS: thread t publishes
# f(t, k) = t * 7 + k * 1000 + 1, arrives, waits for the phase, then adds what thread
# (t + 37) % DROP published. In phase 1 the threads t >= DROP leave with arrive_drop, so
# phase 2 completes with the others alone. {wait} is the waiting loop's test.
PIPELINE = """.version {ver}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<24>;
.reg .pred %p<6>;
.shared .align 8 .b64 bar;
.shared .align 4 .b32 buf[{n3}];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
{addr}
setp.ne.u32 %p1, %r1, 0;
@%p1 bra L_inited;
mbarrier.init{space}.b64 [%rb], {n};
L_inited:
bar.sync 0;
mov.u32 %r2, 0;
mov.u32 %r3, 0;
mov.u32 %r20, buf;
L_phase:
mad.lo.u32 %r4, %r2, {n}, %r1;
shl.b32 %r4, %r4, 2;
add.u32 %r4, %r4, %r20;
mad.lo.u32 %r5, %r1, 7, 1;
mad.lo.u32 %r5, %r2, 1000, %r5;
st.shared.u32 [%r4], %r5;
setp.eq.u32 %p2, %r2, 1;
setp.ge.u32 %p3, %r1, {drop};
and.pred %p2, %p2, %p3;
@%p2 bra L_drop;
mbarrier.arrive{space}.b64 %rd2, [%rb];
L_wait:
{wait}
@!%p4 bra L_wait;
add.u32 %r6, %r1, 37;
rem.u32 %r6, %r6, {drop};
mad.lo.u32 %r7, %r2, {n}, %r6;
shl.b32 %r7, %r7, 2;
add.u32 %r7, %r7, %r20;
ld.shared.u32 %r8, [%r7];
add.u32 %r3, %r3, %r8;
add.u32 %r2, %r2, 1;
setp.lt.u32 %p5, %r2, 3;
@%p5 bra L_phase;
bra L_done;
L_drop:
mbarrier.arrive_drop{space}.b64 %rd2, [%rb];
L_wait_drop:
{wait}
@!%p4 bra L_wait_drop;
L_done:
mbarrier.pending_count.b64 %r9, %rd2;
mul.wide.u32 %rd3, %r1, 8;
add.s64 %rd4, %rd1, %rd3;
st.global.u32 [%rd4], %r3;
st.global.u32 [%rd4+4], %r9;
ret;
}}
"""
DROP = 96
WAITS = {
    "state": "mbarrier.test_wait{space}.b64 %p4, [%rb], %rd2;",
    "parity": "mbarrier.test_wait.parity{space}.b64 %p4, [%rb], %r2;",
}
ADDRESSES = {
    # the barrier by its shared address, and by a generic one
    "shared": ("mov.u32 %rb, bar;", ".shared", ".reg .b32 %rb;"),
    "generic": ("cvta.shared.u64 %rb, bar;", "", ".reg .b64 %rb;"),
}


def pipeline_expected() -> np.ndarray:
    t = np.arange(THREADS)
    src = (t + 37) % DROP
    total = np.zeros(THREADS, np.uint64)
    for k in range(3):
        took = (t < DROP) | (k == 0)        # the dropping threads leave before reading in phase 1
        total += np.where(took, src * 7 + k * 1000 + 1, 0).astype(np.uint64)
    return total.astype(np.uint32)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("wait", sorted(WAITS))
@pytest.mark.parametrize("where", sorted(ADDRESSES))
def test_pipeline_waits_for_every_arrival(arch, wait, where):
    addr, space, decl = ADDRESSES[where]
    text = PIPELINE.format(ver="7.8", arch=arch, n=THREADS, n3=3 * THREADS, drop=DROP, addr=decl + "\n" + addr,
                           space=space, wait=WAITS[wait].format(space=space))
    expected = pipeline_expected()
    ours, theirs = (o[0] for o in _run_both(text, arch, lambda: [np.zeros((THREADS, 2), np.uint32)]))
    for got, who in ((ours, "ours"), (theirs, "ptxas")):
        assert (got[:, 0] == expected).all(), (who, np.nonzero(got[:, 0] != expected)[0][:5])
    assert (ours[:, 1] == theirs[:, 1]).all()       # pending counts of the last states


# cp.async copies into shared memory tracked by the barrier: .noinc arrivals are among the
# expected ones (init THREADS); without .noinc the pending count grows first, so each
# thread's own arrive completes the phase (init THREADS as well).
CP_ASYNC = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<24>;
.reg .pred %p<6>;
.shared .align 8 .b64 bar;
.shared .align 16 .b32 buf[{n}];
ld.param.u64 %rd1, [out];
ld.param.u64 %rd5, [in];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd5, %rd5;
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra L_inited;
mbarrier.init.shared.b64 [bar], {n};
L_inited:
bar.sync 0;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd6, %rd5, %rd3;
mov.u32 %r20, buf;
shl.b32 %r4, %r1, 2;
add.u32 %r4, %r4, %r20;
cp.async.ca.shared.global [%r4], [%rd6], 4;
{arrive}
L_wait:
mbarrier.test_wait.parity.shared.b64 %p4, [bar], 0;
@!%p4 bra L_wait;
add.u32 %r6, %r1, 53;
rem.u32 %r6, %r6, {n};
shl.b32 %r7, %r6, 2;
add.u32 %r7, %r7, %r20;
ld.shared.u32 %r8, [%r7];
add.s64 %rd4, %rd1, %rd3;
st.global.u32 [%rd4], %r8;
ret;
}}
"""
CP_ARRIVALS = {
    "noinc": "cp.async.mbarrier.arrive.noinc.shared.b64 [bar];",
    "inc": "cp.async.mbarrier.arrive.shared.b64 [bar];\nmbarrier.arrive.shared.b64 %rd2, [bar];",
    "inc_per_thread": "cp.async.mbarrier.arrive.shared.b64 [%r21];\nmbarrier.arrive.shared.b64 %rd2, [bar];",
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("arrive", sorted(CP_ARRIVALS))
def test_cp_async_arrivals(arch, arrive):
    body = CP_ARRIVALS[arrive]
    if "%r21" in body:          # the barrier's address in a register (ARRIVES's R2UR loop)
        body = "mov.u32 %r21, bar;\n" + body
    text = CP_ASYNC.format(arch=arch, n=THREADS, arrive=body)
    data = np.random.default_rng(5).integers(0, 1 << 32, THREADS, dtype=np.uint64).astype(np.uint32)
    expected = data[(np.arange(THREADS) + 53) % THREADS]
    for out in _run_both(text, arch, lambda: [np.zeros(THREADS, np.uint32), data.copy()]):
        assert (out[0] == expected).all()


# The object's words and the states after every form, shared and generic, with uniform and
# per-thread addresses, uniform and per-lane counts (tools/isa_seeds/mbarrier_and_mmio.ptx
# has the same forms for isa_probe); each thread stores its states, pending counts and
# test_wait results, and the first threads the barrier words at the end. One warp: the
# states arrivals return depend on the order of the arrivals, which for lanes of one warp
# is fixed (lane order) but for warps is the emulator's scheduling of two different programs.
STATES = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n, .param .u64 words)
{{
.reg .b64 %rd<24>;
.reg .b32 %r<24>;
.reg .pred %p<8>;
.shared .align 8 .b64 bars[{nbars}];
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
ld.param.u64 %rd20, [words];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd20, %rd20;
mov.u32 %r2, %tid.x;
and.b32 %r3, %r2, 15;
shl.b32 %r3, %r3, 3;
mov.u32 %r4, bars;
add.u32 %r4, %r4, %r3;
cvta.shared.u64 %rd2, bars;
cvt.u64.u32 %rd21, %r3;
add.s64 %rd2, %rd2, %rd21;
setp.ge.u32 %p1, %r2, 16;
@%p1 bra L_inited;
mbarrier.init.shared.b64 [%r4], %r1;
mbarrier.init.b64 [%rd2+128], 40;
L_inited:
setp.ne.u32 %p1, %r2, 0;
@%p1 bra L_inited2;
mbarrier.init.shared.b64 [bars+256], %r1;
mbarrier.init.shared.b64 [bars+264], 100;
L_inited2:
bar.sync 0;
mbarrier.arrive.shared.b64 %rd3, [%r4];
mbarrier.arrive.shared.b64 %rd4, [bars+256];
mbarrier.arrive_drop.shared.b64 %rd5, [%r4+8];
mbarrier.arrive_drop.shared.b64 %rd6, [bars+264];
mbarrier.arrive.noComplete.shared.b64 %rd7, [bars+256], 1;
mbarrier.arrive_drop.noComplete.shared.b64 %rd8, [bars+264], %r1;
mbarrier.arrive.b64 %rd9, [%rd2+128];
mbarrier.arrive_drop.b64 %rd10, [%rd2+136];
and.b32 %r12, %r2, 3;
add.u32 %r12, %r12, 1;
mbarrier.arrive.noComplete.shared.b64 %rd16, [%r4], %r12;
mbarrier.arrive_drop.noComplete.b64 %rd17, [%rd2+8], %r12;
cp.async.mbarrier.arrive.shared.b64 [%r4];
cp.async.mbarrier.arrive.noinc.shared.b64 [bars+256];
cp.async.mbarrier.arrive.b64 [%rd2+128];
mbarrier.test_wait.shared.b64 %p2, [%r4], %rd3;
mbarrier.test_wait.b64 %p3, [%rd2+128], %rd9;
mbarrier.test_wait.parity.shared.b64 %p4, [bars+256], %r2;
mbarrier.test_wait.parity.b64 %p5, [%rd2], 1;
mbarrier.pending_count.b64 %r5, %rd3;
mbarrier.pending_count.b64 %r6, %rd8;
mbarrier.pending_count.b64 %r7, %rd9;
selp.u32 %r8, 1, 0, %p2;
selp.u32 %r9, 2, 0, %p3;
selp.u32 %r10, 4, 0, %p4;
selp.u32 %r11, 8, 0, %p5;
or.b32 %r8, %r8, %r9;
or.b32 %r8, %r8, %r10;
or.b32 %r8, %r8, %r11;
mul.wide.u32 %rd11, %r2, 96;
add.s64 %rd11, %rd1, %rd11;
st.global.u64 [%rd11], %rd3;
st.global.u64 [%rd11+8], %rd4;
st.global.u64 [%rd11+16], %rd5;
st.global.u64 [%rd11+24], %rd6;
st.global.u64 [%rd11+32], %rd7;
st.global.u64 [%rd11+40], %rd8;
st.global.u64 [%rd11+48], %rd9;
st.global.u64 [%rd11+56], %rd10;
st.global.u32 [%rd11+64], %r5;
st.global.u32 [%rd11+68], %r6;
st.global.u32 [%rd11+72], %r7;
st.global.u32 [%rd11+76], %r8;
st.global.u64 [%rd11+80], %rd16;
st.global.u64 [%rd11+88], %rd17;
bar.sync 0;
setp.ge.u32 %p1, %r2, {half};
@%p1 bra L_end;
mul.wide.u32 %rd12, %r2, 16;
mov.u64 %rd13, bars;
add.s64 %rd13, %rd13, %rd12;
ld.shared.v2.u64 {{%rd14, %rd18}}, [%rd13];
add.s64 %rd15, %rd20, %rd12;
st.global.v2.u64 [%rd15], {{%rd14, %rd18}};
L_end:
ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("n", [7, 64, 200])
def test_states_match_ptxas(arch, n):
    nbars = 34
    text = STATES.format(arch=arch, nbars=nbars, half=nbars // 2)
    ours, theirs = _run_both(text, arch, lambda: [np.zeros((32, 12), np.uint64), np.uint32(n),
                                                  np.zeros(nbars, np.uint64)], threads=32)
    assert (ours[0] == theirs[0]).all(), np.nonzero((ours[0] != theirs[0]).any(axis=1))[0][:5]
    assert (ours[2] == theirs[2]).all()


def test_inval_writes_nothing():
    """ptxas writes no instruction for inval: the kernel is the empty kernel's code."""
    empty = """.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
.shared .align 8 .b64 bar;
ret;
}
"""
    text = empty.replace("ret;", "mbarrier.inval.shared.b64 [bar];\nret;")

    def opcodes(ptx):
        _, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_80", "k.ptx"), "sm_80", filename="k.ptx")
        return [(i.opcode, i.modifiers) for i in codes[0].instructions]
    assert opcodes(text) == opcodes(empty)


REFUSED = [
    ("7.8", "mbarrier.try_wait.shared.b64 %p1, [bar], %rd3;"),
    ("7.8", "mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r1;"),
    ("7.8", "mbarrier.try_wait.shared.b64 %p1, [bar], %rd3, %r1;"),
    ("8.0", "mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], %r1;"),
    ("8.0", "mbarrier.expect_tx.shared.b64 [bar], %r1;"),
]


@pytest.mark.parametrize("ver,ins", REFUSED)
def test_sm90_forms_refused_as_ptxas(ver, ins):
    text = f""".version {ver}
.target sm_89
.address_size 64
.visible .entry k(.param .u32 n)
{{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<2>;
.shared .align 8 .b64 bar;
ld.param.u32 %r1, [n];
mov.b64 %rd3, {{%r1, %r1}};
{ins}
ret;
}}
"""
    theirs = oracle.ptxas(text, "sm_89")
    assert not theirs.ok
    with pytest.raises(CompileError) as e:
        codegen.lower_ptx(text, "sm_89", "k.ptx")
    first = theirs.stderr.strip().splitlines()[0].split("error   : ")[1]
    assert first in str(e.value)


def test_arrive_with_count_refused_before_sm90():
    text = """.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u32 n)
{
.reg .b64 %rd<4>; .reg .b32 %r<4>;
.shared .align 8 .b64 bar;
ld.param.u32 %r1, [n];
mbarrier.arrive.shared.b64 %rd3, [bar], %r1;
ret;
}
"""
    assert not oracle.ptxas(text, "sm_89").ok
    with pytest.raises(CompileError, match=r"line 9; error   : Feature 'mbarrier.arrive with a count' "
                                           r"requires .target sm_90 or higher"):
        codegen.lower_ptx(text, "sm_89", "k.ptx")


FORMS = [
    "mbarrier.init.shared.b64 [bar], %r1;",
    "mbarrier.init.b64 [%rd2], 7;",
    "mbarrier.init.shared::cta.b64 [bar], %r1;",
    "mbarrier.inval.shared.b64 [bar];",
    "mbarrier.arrive.shared.b64 %rd3, [bar];",
    "mbarrier.arrive.shared.b64 _, [bar];",
    "mbarrier.arrive.shared::cta.b64 %rd3, [bar];",
    "mbarrier.arrive.shared.b64 %rd3, [bar], %r1;",
    "mbarrier.arrive.release.cta.shared.b64 %rd3, [bar];",
    "mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], %r1;",
    "mbarrier.arrive.noComplete.shared.b64 %rd3, [bar], 3;",
    "mbarrier.arrive_drop.shared.b64 %rd3, [bar], %r1;",
    "mbarrier.arrive_drop.noComplete.shared.b64 %rd3, [bar], %r1;",
    "mbarrier.test_wait.b64 %p1, [%rd2], %rd3;",
    "mbarrier.test_wait.parity.shared.b64 %p1, [bar], %r1;",
    "mbarrier.test_wait.acquire.cta.shared.b64 %p1, [bar], %rd3;",
    "mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r1;",
    "mbarrier.pending_count.b64 %r3, %rd3;",
    "cp.async.mbarrier.arrive.noinc.b64 [%rd2];",
    "cp.async.mbarrier.arrive.shared::cta.b64 [bar];",
    "ld.shared::cta.u32 %r3, [bar];",
]


@pytest.mark.parametrize("version", ["7.0", "7.8", "8.0"])
@pytest.mark.parametrize("ins", FORMS)
def test_versions_and_targets_like_ptxas(ins, version):
    """Accepted where ptxas accepts the form (PTX version, sm_80), else the same first
    message (ptxas names no feature for a count before sm_90: '(null)')."""
    text = f""".version {version}
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n, .param .u64 g)
{{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<2>;
.shared .align 8 .b64 bar;
ld.param.u32 %r1, [n];
ld.param.u64 %rd2, [g];
mov.b64 %rd3, {{%r1, %r1}};
{ins}
ret;
}}
"""
    theirs = oracle.ptxas(text, "sm_80")
    try:
        codegen.generate_module(codegen.lower_ptx(text, "sm_80", "k.ptx"), "sm_80", filename="k.ptx")
        ours = None
    except CompileError as e:
        ours = str(e)
    assert (ours is None) == theirs.ok, (theirs.stderr, ours)
    if ours is not None:
        first = theirs.stderr.strip().splitlines()[0].split(": ", 1)[1]
        assert first.replace("'(null)'", "'mbarrier.arrive with a count'").replace(
            "'(null)'", "") in ours or "(null)" in first, (first, ours)


GUARDED = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<16>;
.reg .pred %p<4>;
.shared .align 8 .b64 bars[8];
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r2, %tid.x;
and.b32 %r3, %r2, 3;
shl.b32 %r3, %r3, 3;
mov.u32 %r4, bars;
add.u32 %r4, %r4, %r3;
setp.ge.u32 %p3, %r2, 8;
@%p3 bra L_inited;
mov.u32 %r5, bars;
shl.b32 %r6, %r2, 3;
add.u32 %r5, %r5, %r6;
mbarrier.init.shared.b64 [%r5], %r1;
L_inited:
bar.sync 0;
mov.b64 %rd2, 0;
mov.b64 %rd3, 0;
mov.b64 %rd4, 0;
mov.b64 %rd5, 0;
and.b32 %r7, %r2, 5;
setp.ne.u32 %p1, %r7, 0;
setp.lt.u32 %p2, %r2, 19;
@%p1 mbarrier.arrive.shared.b64 %rd2, [%r4];
@%p2 mbarrier.arrive.noComplete.shared.b64 %rd3, [bars+32], %r1;
@!%p1 mbarrier.arrive_drop.shared.b64 %rd4, [%r4+32];
@%p2 cp.async.mbarrier.arrive.shared.b64 [%r4];
@!%p2 mbarrier.arrive_drop.noComplete.shared.b64 %rd5, [bars+40], 2;
mov.u32 %r8, 7;
@%p1 mbarrier.pending_count.b64 %r8, %rd2;
selp.u32 %r9, 1, 0, %p1;
@%p2 mbarrier.test_wait.shared.b64 %p1, [%r4], %rd2;
selp.u32 %r10, 2, 0, %p1;
add.u32 %r9, %r9, %r10;
mul.wide.u32 %rd6, %r2, 48;
add.s64 %rd6, %rd1, %rd6;
st.global.u64 [%rd6], %rd2;
st.global.u64 [%rd6+8], %rd3;
st.global.u64 [%rd6+16], %rd4;
st.global.u64 [%rd6+24], %rd5;
st.global.u32 [%rd6+32], %r8;
st.global.u32 [%rd6+36], %r9;
bar.sync 0;
setp.ge.u32 %p3, %r2, 8;
@%p3 bra L_end;
mov.u32 %r5, bars;
shl.b32 %r6, %r2, 3;
add.u32 %r5, %r5, %r6;
ld.shared.u64 %rd7, [%r5];
st.global.u64 [%rd6+40], %rd7;
L_end:
ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHES)
def test_guarded_forms_match_ptxas(arch):
    """Each form under a predicate that differs between lanes (leaders, loops over
    addresses and counts then take only the lanes where it holds), one warp."""
    ours, theirs = _run_both(GUARDED.format(arch=arch), arch,
                             lambda: [np.zeros((32, 6), np.uint64), np.uint32(40)], threads=32)
    assert (ours[0] == theirs[0]).all(), np.nonzero((ours[0] != theirs[0]).any(axis=1))[0][:5]
