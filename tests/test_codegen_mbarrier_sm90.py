"""The mbarrier family and cp.async.mbarrier.arrive on sm_90, sm_100, sm_110 and sm_120 (the SYNCS
unit; ptxas 13.5 writes the same forms on all four but for init with a per-lane count).

* Per form (tools/isa_seeds/mbarrier_sm90.ptx: one kernel per PTX form, state used and
  unused): our SYNCS-unit instructions (SYNCS.*, ARRIVES, NANOSLEEP.SYNCS, CCTL, the
  MEMBAR/ERRBAR fences of .release.cluster) equal ptxas's, opcode, modifiers and operand
  shapes, register numbers aside. Before isel/mbarrier_syncs.py every form was refused.
* Kernels whose results the PTX ISA fixes (pipelines of arrivals and spin-waits, cp.async
  arrivals, transaction counts with expect_tx/complete_tx, try_wait with and without a
  time hint): ours and ptxas's cubins in the emulator give NumPy's values; ours hazard-free.
  tests/test_codegen_mbarrier.py runs its own kernels on sm_90 as well.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

SEED = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds" / "mbarrier_sm90.ptx"
UNIT = ("SYNCS", "ARRIVES", "NANOSLEEP", "CCTL", "MEMBAR", "ERRBAR", "CGAERRBAR")
ARCHS = ("sm_90", "sm_100", "sm_110", "sm_120")
# the first PTX version with the target (8.7 for sm_100/sm_120, 9.0 for sm_110)
VERSION = {"sm_100": "8.7", "sm_110": "9.0", "sm_120": "8.7"}


def for_arch(ptx: str, arch: str) -> str:
    """The sm_90 kernel retargeted."""
    if arch == "sm_90":
        return ptx
    return re.sub(r"\.version \d+\.\d+", f".version {VERSION[arch]}", ptx).replace(".target sm_90", f".target {arch}")


def _kernels() -> tuple[str, dict[str, str]]:
    head, *kernels = re.split(r"(?=\.visible \.entry)", SEED.read_text())
    return head, {re.search(r"\.entry (\w+)", k).group(1): k for k in kernels}


HEAD, KERNELS = _kernels()


def unit_lines(cubin: bytes) -> list[str]:
    """The SYNCS-unit instructions of a cubin, register numbers replaced by their file."""
    out = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and any(u in m.group(1) for u in UNIT):
            text = re.sub(r"\b(U?R)\d+\b", r"\1", m.group(1))
            out.append(re.sub(r"\bU?P[0-6]\b", "P", text))
    return out


def _ours(ptx: str, arch: str) -> bytes:
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    return cubin


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_syncs_instructions_equal_ptxas(name, arch):
    ptx = for_arch(HEAD + KERNELS[name], arch)
    theirs = oracle.ptxas(ptx.encode(), arch, name=name)
    assert theirs.ok, theirs.stderr
    expected = unit_lines(theirs.output)
    assert unit_lines(_ours(ptx, arch)) == expected
    if "mbarrier" in KERNELS[name] and "pending_count" not in KERNELS[name] and not name.endswith("d"):
        assert expected         # the form's instructions are there to compare


@pytest.mark.parametrize("arch", ARCHS)
def test_pending_count_is_ptxas_arithmetic(arch):
    """pending_count reads the state's high word as ptxas does: SHF.R.U32.HI by 11, LOP3
    with 0xfffff, IADD3 from 0x100000 (the whole listing equal, register numbers aside)."""
    name = next(n for n, k in KERNELS.items() if "pending_count" in k and not n.endswith("d"))
    ptx = for_arch(HEAD + KERNELS[name], arch)

    def lines(cubin):
        out = []
        for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
            m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
            if m and m.group(1).split()[0] in ("SHF.R.U32.HI", "LOP3.LUT", "IADD3", "IADD"):
                out.append(re.sub(r"\bR\d+\b", "R", m.group(1)))
        return out
    theirs = oracle.ptxas(ptx.encode(), arch, name=name)
    assert lines(_ours(ptx, arch)) == lines(theirs.output)
    assert lines(theirs.output)[:2] == ["SHF.R.U32.HI R, RZ, 0xb, R", "LOP3.LUT R, R, 0xfffff, RZ, 0x40, !PT"]


def _run_both(ptx: str, make_args, threads: int, arch: str):
    ptx = for_arch(ptx, arch)
    theirs = oracle.ptxas(ptx.encode(), arch)
    assert theirs.ok, theirs.stderr
    outs = []
    for cubin, hazards in ((_ours(ptx, arch), True), (theirs.output, False)):
        args = make_args()
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), args, hazard_check=hazards)
        if hazards:
            assert not res.hazards, res.hazards[:3]
        outs.append(args)
    return outs


# Transaction counts: thread 0 expects 4 bytes per thread (expect_tx) before anyone
# completes; every thread stores its word, completes its 4 bytes (complete_tx) and arrives
# (init: every thread); all wait for the phase ({wait}: a loop on the state or the parity)
# and read another thread's word. The phase can complete only when both counts are zero.
TX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 hint)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<16>;
.reg .pred %p<4>;
.shared .align 8 .b64 bar;
.shared .align 4 .b32 buf[{n}];
ld.param.u64 %rd1, [out];
ld.param.u32 %r9, [hint];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra L_init;
mbarrier.init.shared::cta.b64 [bar], {n};
L_init:
bar.sync 0;
@%p1 bra L_expect;
{expect}
L_expect:
bar.sync 0;
mov.u32 %r2, buf;
shl.b32 %r3, %r1, 2;
add.u32 %r3, %r3, %r2;
mad.lo.u32 %r4, %r1, 2654435761, 12345;
st.shared.u32 [%r3], %r4;
mbarrier.complete_tx.shared::cta.b64 [bar], 4;
mbarrier.arrive.shared::cta.b64 %rd2, [bar];
L_wait:
{wait}
@!%p2 bra L_wait;
add.u32 %r5, %r1, 37;
rem.u32 %r5, %r5, {n};
shl.b32 %r5, %r5, 2;
add.u32 %r5, %r5, %r2;
ld.shared.u32 %r6, [%r5];
mbarrier.pending_count.b64 %r7, %rd2;
mul.wide.u32 %rd3, %r1, 8;
add.s64 %rd3, %rd1, %rd3;
st.global.u32 [%rd3], %r6;
st.global.u32 [%rd3+4], %r7;
ret;
}}
"""
EXPECTS = {
    "expect_tx": "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], {bytes};",
    "expect_tx_register": "mov.u32 %r10, {bytes};\nmbarrier.expect_tx.shared::cta.b64 [bar], %r10;",
}
TX_WAITS = {
    "test_wait": "mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd2;",
    "try_wait": "mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd2;",
    "try_wait_hint": "mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd2, %r9;",
    "try_wait_parity": "mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;",
    "try_wait_parity_hint": "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0, 1000;",
}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("wait", sorted(TX_WAITS))
@pytest.mark.parametrize("expect", sorted(EXPECTS))
def test_transaction_counts_hold_the_phase(expect, wait, arch):
    n = 96
    ptx = TX.format(n=n, expect=EXPECTS[expect].format(bytes=4 * n), wait=TX_WAITS[wait])
    t = np.arange(n, dtype=np.uint64)
    words = ((t * 2654435761 + 12345) & 0xFFFFFFFF).astype(np.uint32)
    expected = words[(np.arange(n) + 37) % n]
    ours, theirs = _run_both(ptx, lambda: [np.zeros((n, 2), np.uint32), np.uint32(100)], n, arch)
    for got, who in ((ours[0], "ours"), (theirs[0], "ptxas")):
        assert (got[:, 0] == expected).all(), (who, np.nonzero(got[:, 0] != expected)[0][:5])
    assert (ours[0][:, 1] == theirs[0][:, 1]).all()     # pending counts of the arrivals' states


# arrive.expect_tx by every thread (each expects its own 4 bytes and arrives), the bytes
# completed by cp.async copies tracked with cp.async.mbarrier.arrive (no .noinc: a
# transaction of one per thread, taken back when its copies land) and by complete_tx;
# arrive_drop.expect_tx by the upper half in a second phase.
ASYNC_TX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<12>;
.reg .b32 %r<16>;
.reg .pred %p<4>;
.shared .align 8 .b64 bar;
.shared .align 16 .b32 buf[{n}];
ld.param.u64 %rd1, [out];
ld.param.u64 %rd5, [in];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd5, %rd5;
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra L_init;
mbarrier.init.shared.b64 [bar], {n};
L_init:
bar.sync 0;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd6, %rd5, %rd3;
mov.u32 %r2, buf;
shl.b32 %r3, %r1, 2;
add.u32 %r3, %r3, %r2;
mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 4;
cp.async.ca.shared.global [%r3], [%rd6], 4;
cp.async.mbarrier.arrive.shared.b64 [bar];
mbarrier.complete_tx.shared::cta.b64 [bar], 4;
L_wait:
mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
@!%p2 bra L_wait;
add.u32 %r5, %r1, 53;
rem.u32 %r5, %r5, {n};
shl.b32 %r5, %r5, 2;
add.u32 %r5, %r5, %r2;
ld.shared.u32 %r6, [%r5];
bar.sync 0;
setp.lt.u32 %p3, %r1, {half};
@%p3 bra L_stay;
mbarrier.arrive_drop.expect_tx.shared::cta.b64 %rd4, [bar], 0;
bra L_done;
L_stay:
mbarrier.arrive.shared::cta.b64 %rd4, [bar];
L_wait2:
mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;
@!%p2 bra L_wait2;
L_done:
mbarrier.pending_count.b64 %r7, %rd4;
mul.wide.u32 %rd7, %r1, 8;
add.s64 %rd7, %rd1, %rd7;
st.global.u32 [%rd7], %r6;
st.global.u32 [%rd7+4], %r7;
ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_cp_async_and_expect_tx_arrivals(arch):
    n = 128
    ptx = ASYNC_TX.format(n=n, half=n // 2)
    data = np.random.default_rng(7).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    expected = data[(np.arange(n) + 53) % n]
    ours, theirs = _run_both(ptx, lambda: [np.zeros((n, 2), np.uint32), data.copy()], n, arch)
    for got, who in ((ours[0], "ours"), (theirs[0], "ptxas")):
        assert (got[:, 0] == expected).all(), (who, np.nonzero(got[:, 0] != expected)[0][:5])
    assert (ours[0][:, 1] == theirs[0][:, 1]).all()


# The object's words after init, as ptxas's sm_90 code writes them (its SYNCS.EXCH.64 of
# (2^20 - count) << 1 and (2^20 - count) << 11), read back with ld.shared, then after one
# arrival of each lane of a warp (pending lowered by 32: the high word up by 32 << 11).
WORDS = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
.reg .b64 %rd<8>;
.reg .b32 %r<8>;
.reg .pred %p<2>;
.shared .align 8 .b64 bar;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r2, %tid.x;
setp.ne.u32 %p1, %r2, 0;
@%p1 bra L1;
mbarrier.init.shared.b64 [bar], %r1;
L1:
bar.sync 0;
ld.shared.u64 %rd2, [bar];
bar.sync 0;
mbarrier.arrive.shared.b64 %rd3, [bar];
bar.sync 0;
ld.shared.u64 %rd4, [bar];
@%p1 bra L2;
st.global.u64 [%rd1], %rd2;
st.global.u64 [%rd1+8], %rd4;
L2:
ret;
}
"""


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("count", [1, 40, 1000])
def test_object_words_are_ptxas_layout(count, arch):
    lo = (0x100000 - count) << 1
    hi = (0x100000 - count) << 11
    after = hi + (32 << 11) if count > 32 else (1 << 31) | hi if count == 32 else None
    ours, theirs = _run_both(WORDS, lambda: [np.zeros(2, np.uint64), np.uint32(count)], 32, arch)
    for got in (ours[0], theirs[0]):
        assert int(got[0]) == lo | hi << 32
        if count > 32:
            assert int(got[1]) == lo | after << 32
    assert (ours[0] == theirs[0]).all()
