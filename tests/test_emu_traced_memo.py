"""Kept checker trails. The traced scalar path (emu/scalar.py `_finish_alone`): a one-thread
launch under the checker whose trail of `end` calls equals an earlier launch's takes that
launch's clock and hazards instead of making the calls. The machine (emu/checker_trail.py):
its calls to the checker are kept and made at its end, or a kept trail's outcome taken.
Every outcome must equal what the calls themselves give (the memo switched off:
`scalar.MEMO_TRAILS = 0`; on the machine the calls made as they come: `checker_trail.DEFER =
False`): the ZLUDA launches, three each, with the plain checker and with a stressed latency
model that flags hundreds of hazards (under a small and a large hazard limit), tinygrad
kernels (several CTAs, barriers), a budget running out, and a kernel whose path (its trip
count) comes from its input, launched with trip counts that come back in another order.
"""
from __future__ import annotations

import copy
import functools

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu import checker_trail, run, scalar
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.hazards import TimingModel
from ptx2sass.emu.loader import load_program
from tools import emu_testing as testing
from tools.emu_testing import cubin_listing_decoder

ALL = [e for e in testing.zluda_manifest() if testing.zluda_cubin(e) is not None] \
    if testing.ZLUDA_DIR.joinpath("manifest.json").is_file() else []
ENTRIES = [e for e in ALL if e["grid"] == [1, 1, 1] and e["block"] == [1, 1, 1]]
MANY = [e for e in ALL if e not in ENTRIES]


def _stressed(limit: int):
    """A checker flagging up to `limit` hazards under a latency model (one per arch, shared by
    every launch: the memo keys on the model object) that makes ptxas's code mostly hazards,
    as bench/emu_hazard_stress.py does."""
    lats: dict = {}

    class Stressed(TimingModel):
        def __init__(self, launch):
            super().__init__(launch, max_hazards=limit)
            arch = launch.program.arch
            if arch not in lats:
                lats[arch] = _stressed_of(self.lat)
            self.lat = lats[arch]
    return Stressed


def _stressed_of(base):
    lat = copy.copy(base)
    lat.FIXED = {k: v + 3 for k, v in base.FIXED.items()}
    lat.DEFAULT_FIXED = base.DEFAULT_FIXED + 3
    lat.VARIABLE = {**base.VARIABLE, "IADD3": 20, "MOV": 20, "LOP3": 20}
    lat.read_latency = functools.lru_cache(maxsize=None)(lat._read_latency)
    return lat


def _count_hits(monkeypatch) -> list:
    """[hits, misses] of the kept trails over the launches that follow."""
    seen = [0, 0]
    orig = scalar._finish_alone

    def finish(t, tm, entries):
        first = entries[0] if entries else None
        out = orig(t, tm, entries)
        if entries is not None:
            seen[0 if entries and entries[0] is first else 1] += 1
        return out
    monkeypatch.setattr(scalar, "_finish_alone", finish)
    return seen


def _zluda_sweep(timing=None, launches: int = 2, entries=None) -> list:
    out = []
    entries = ENTRIES if entries is None else entries
    programs = [load_program(testing.zluda_cubin(e), e["kernel"], testing.cubin_listing_decoder(testing.zluda_cubin(e)))
                for e in entries]
    for _ in range(launches):
        for entry, program in zip(entries, programs):
            o = testing.run_zluda(entry, hazard_check=True, program=program, timing=timing)
            r = o.result
            out.append((entry["name"], o.passed, o.reason,
                        r and (r.buffers, r.instructions, r.thread_instructions, r.cycles,
                               [str(h) for h in r.hazards])))
    return out


@pytest.mark.skipif(not ENTRIES, reason="no ZLUDA corpus")
@pytest.mark.parametrize("stress", [None, 3, 1 << 30])
def test_kept_trails_give_what_the_calls_give(monkeypatch, stress):
    timing = None if stress is None else _stressed(stress)
    entries = ENTRIES if stress is None else ENTRIES[::3]      # (a third under the stressed models)
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 0)
    want = _zluda_sweep(timing, entries=entries)
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 4)
    seen = _count_hits(monkeypatch)
    got = _zluda_sweep(timing, entries=entries)
    for w, g in zip(want, got):
        assert g == w, w[0]
    # the kept trails were taken: most launches after each kernel's first
    assert seen[0] >= 0.9 * len(entries), seen
    if stress is not None:
        assert sum(len(w[3][4]) for w in want if w[3]) > (200 if stress > 3 else 50)


PTX = r"""
.version 8.0
.target sm_89
.address_size 64
.visible .entry loop(.param .u64 inp, .param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [inp]; ld.param.u64 %rd2, [out];
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
LOOP:
    setp.ge.u32 %p1, %r4, %r1;
    @%p1 bra DONE;
    mad.lo.u32 %r3, %r3, %r2, %r4;
    and.b32 %r5, %r4, 1;
    setp.eq.u32 %p2, %r5, 0;
    @%p2 xor.b32 %r3, %r3, 0x5bd1e995;
    add.u32 %r4, %r4, 1;
    bra LOOP;
DONE:
    st.global.u32 [%rd2], %r3;
    ret;
}
"""


def _reference(n: int, k: int) -> int:
    acc = 0
    for i in range(n):
        acc = (acc * k + i) & 0xFFFFFFFF
        if i % 2 == 0:
            acc ^= 0x5BD1E995
    return acc


@pytest.mark.parametrize("threads", [1, 64])
@pytest.mark.parametrize("stress", [None, 1 << 30])
def test_trails_that_differ_by_input(monkeypatch, stress, threads):
    r = oracle.ptxas(PTX, "sm_89")
    assert r.ok, r.stderr
    timing = None if stress is None else _stressed(stress)
    trips = [3, 1, 3, 2, 0, 1, 5, 2, 3, 6, 7, 8, 3, 1]

    def sweep():
        prog = load_program(r.output, "loop", cubin_listing_decoder(r.output))
        got = []
        for n in trips:
            out = np.zeros(1, np.uint32)
            res = run(r.output, "loop", (1,), (threads,), [np.array([n, 7], np.uint32), out],
                      hazard_check=True, program=prog, timing=timing)
            assert int(out[0]) == _reference(n, 7), n
            got.append((n, int(out[0]), res.instructions, res.cycles, [str(h) for h in res.hazards]))
        return got
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 0)
    monkeypatch.setattr(checker_trail, "DEFER", False)
    want = sweep()
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 4)
    monkeypatch.setattr(checker_trail, "DEFER", True)
    seen = _count_hits(monkeypatch) if threads == 1 else _count_machine_hits(monkeypatch)
    got = sweep()
    assert got == want
    assert len({w[3] for w in want}) >= 6          # the trip count shows in the cycles
    assert seen[0] >= 4 and seen[1] >= 4, seen     # taken where a trail came back, made where not


def _count_machine_hits(monkeypatch) -> list:
    """[machines that took a kept outcome, machines that made the calls] from now on."""
    seen = [0, 0]
    orig_run, orig_replay = checker_trail.run_machine, checker_trail._replay

    def run_machine(*a):
        seen[0] += 1
        return orig_run(*a)

    def replay(*a):
        seen[0] -= 1
        seen[1] += 1
        return orig_replay(*a)
    monkeypatch.setattr(checker_trail, "run_machine", run_machine)
    monkeypatch.setattr(checker_trail, "_replay", replay)
    return seen


@pytest.mark.skipif(not MANY, reason="no ZLUDA corpus")
@pytest.mark.parametrize("stress", [None, 3, 1 << 30])
def test_machine_trails_give_what_the_calls_give(monkeypatch, stress):
    timing = None if stress is None else _stressed(stress)
    monkeypatch.setattr(checker_trail, "DEFER", False)
    want = _zluda_sweep(timing, entries=MANY)
    monkeypatch.setattr(checker_trail, "DEFER", True)
    seen = _count_machine_hits(monkeypatch)
    got = _zluda_sweep(timing, entries=MANY)
    for w, g in zip(want, got):
        assert g == w, w[0]
    assert seen[0] >= 0.9 * len(MANY) and seen[1] >= len(MANY), seen
    if stress is not None:
        assert sum(len(w[3][4]) for w in want if w[3]) > 100


TINYGRAD = sorted((e for e in testing.tinygrad_manifest() if testing.tinygrad_cubin(e) is not None),
                  key=lambda e: e["file"])[::40] if testing.TINYGRAD_DIR.joinpath("manifest.json").is_file() else []


@pytest.mark.skipif(not TINYGRAD, reason="no tinygrad corpus")
@pytest.mark.parametrize("stress", [None, 1 << 30])
def test_machine_trails_on_tinygrad_kernels(monkeypatch, stress):
    timing = None if stress is None else _stressed(stress)
    programs = [load_program(testing.tinygrad_cubin(e), e["entry"], cubin_listing_decoder(testing.tinygrad_cubin(e)))
                for e in TINYGRAD]
    released = [0]
    orig = checker_trail.MachineTrail.barrier_release

    def barrier_release(self, machine, warps):
        released[0] += 1
        return orig(self, machine, warps)
    monkeypatch.setattr(checker_trail.MachineTrail, "barrier_release", barrier_release)

    def sweep():
        out = []
        for _ in range(2):
            for e, p in zip(TINYGRAD, programs):
                o = testing.run_tinygrad(e, hazard_check=True, program=p, timing=timing)
                r = o.result
                out.append((e["file"], o.ok, o.reason, r and (r.buffers, r.instructions, r.cycles,
                                                              [str(h) for h in r.hazards])))
        return out
    monkeypatch.setattr(checker_trail, "DEFER", False)
    want = sweep()
    monkeypatch.setattr(checker_trail, "DEFER", True)
    got = sweep()
    for w, g in zip(want, got):
        assert g == w, w[0]
    assert released[0] > 0                          # barriers among the kept calls
    if stress is not None:
        assert sum(len(w[3][3]) for w in want if w[3]) > 100


def _budgeted(entry, program, budget):
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                    budget=budget, hazard_check=True)
    launch.timing_model = _stressed(1 << 30)(launch)
    out = launch.gmem.allocate("output", entry["output_alloc_bytes"])
    buffers = {"output": out}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
    tm = launch.timing_model
    try:
        launch.run()
    except EmuFault as e:
        return "fault", str(e), launch.budget.used, [str(h) for h in tm.hazards]
    return "ok", out.data.tobytes(), launch.budget.used, [str(h) for h in tm.hazards]


@pytest.mark.skipif(not MANY, reason="no ZLUDA corpus")
def test_machine_budget_running_out_half_way(monkeypatch):
    """A machine that stops at a fault leaves the checker as the calls made up to it do."""
    flagged = 0
    for entry in MANY:
        cubin = testing.zluda_cubin(entry)
        program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
        full = testing.run_zluda(entry, hazard_check=True, program=program).result.instructions
        half = max(full // 2, 1)
        monkeypatch.setattr(checker_trail, "DEFER", True)
        got = _budgeted(entry, program, half)
        monkeypatch.setattr(checker_trail, "DEFER", False)
        want = _budgeted(entry, program, half)
        assert got[0] == "fault" and got == want, entry["name"]
        flagged += bool(want[3])
    assert flagged >= len(MANY) // 2


BARRIER_PTX = r"""
.version 8.0
.target sm_89
.address_size 64
.visible .entry staged(.param .u64 inp, .param .u64 out)
{
    .reg .u32 %r<10>; .reg .u64 %rd<6>; .reg .pred %p<4>;
    ld.param.u64 %rd1, [inp]; ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    ld.global.u32 %r2, [%rd1];
    mov.u32 %r3, 1;
    mov.u32 %r4, 0;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra WAIT;
FIRST:
    setp.ge.u32 %p2, %r4, %r2;
    @%p2 bra WAIT;
    mad.lo.u32 %r3, %r3, 3, %r4;
    add.u32 %r4, %r4, 1;
    bra FIRST;
WAIT:
    bar.sync 0;
    mov.u32 %r4, 0;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra DONE;
SECOND:
    setp.ge.u32 %p3, %r4, %r2;
    @%p3 bra DONE;
    mad.lo.u32 %r3, %r3, 5, %r4;
    add.u32 %r4, %r4, 1;
    bra SECOND;
DONE:
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}
"""


def test_barrier_release_among_kept_calls(monkeypatch):
    """One warp works before a barrier, the other after it: the release that sets the second
    warp's clock to the first's must be among the kept calls, in its place."""
    r = oracle.ptxas(BARRIER_PTX, "sm_89")
    assert r.ok, r.stderr

    def sweep():
        prog = load_program(r.output, "staged", cubin_listing_decoder(r.output))
        got = []
        for n in (5, 9, 5, 9):
            out = np.zeros(64, np.uint32)
            res = run(r.output, "staged", (1,), (64,), [np.array([n], np.uint32), out],
                      hazard_check=True, program=prog)
            got.append((n, out.tobytes(), res.instructions, res.cycles))
        return got
    monkeypatch.setattr(checker_trail, "DEFER", False)
    want = sweep()
    monkeypatch.setattr(checker_trail, "DEFER", True)
    seen = _count_machine_hits(monkeypatch)
    assert sweep() == want
    assert seen == [2, 2], seen


@pytest.mark.skipif(not ALL, reason="no ZLUDA corpus")
def test_long_trails_pass_their_calls_on(monkeypatch):
    """Past `MAX_EVENTS` / `MAX_TRAIL` (made 5 here) the kept calls are made and the rest go
    to the checker as they come: the outcome is the same, and no trail is kept."""
    timing = _stressed(1 << 30)
    entries = ENTRIES[::4] + MANY
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 0)
    monkeypatch.setattr(checker_trail, "DEFER", False)
    want = _zluda_sweep(timing, entries=entries)
    monkeypatch.setattr(scalar, "MEMO_TRAILS", 4)
    monkeypatch.setattr(checker_trail, "DEFER", True)
    monkeypatch.setattr(scalar, "MAX_TRAIL", 5)
    monkeypatch.setattr(checker_trail, "MAX_EVENTS", 5)
    direct = [0]
    orig = checker_trail.MachineTrail._go_direct

    def go_direct(self, machine):
        direct[0] += 1
        return orig(self, machine)
    monkeypatch.setattr(checker_trail.MachineTrail, "_go_direct", go_direct)
    alone = [0]
    finish = scalar._finish_alone

    def finish_alone(*a):
        alone[0] += 1
        return finish(*a)
    monkeypatch.setattr(scalar, "_finish_alone", finish_alone)
    got = _zluda_sweep(timing, entries=entries)
    for w, g in zip(want, got):
        assert g == w, w[0]
    assert direct[0] >= len(MANY)
    # one-thread launches past 5 steps at a branch or their EXIT: flushed, no trail kept
    assert alone[0] < len(ENTRIES[::4]), alone
    assert sum(len(w[3][4]) for w in want if w[3]) > 100
