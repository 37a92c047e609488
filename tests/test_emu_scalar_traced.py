"""One-thread launches under the hazard checker on the scalar interpreter (emu/scalar.py
`run_traced`): the checker must see exactly what it sees when the machine runs the thread.

The reference is the machine itself (the scalar path switched off): for every one-thread
ZLUDA launch, three launches each (a step's first, second and specialised executions), the
sequence of the checker's `end` calls (instruction, lanes, registers read and written, the
clock before it) must be equal, and so must outputs, counts, cycles and hazards; the same
under a stressed latency model that makes the checker flag hundreds of hazards (their text
and order), and with a budget that runs out half-way.
"""
from __future__ import annotations

import copy
import functools
import math

import pytest

from tools import emu_testing as testing
from ptx2sass.emu import hazards, scalar
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.hazards import TimingModel
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program


def _entries():
    if not testing.ZLUDA_DIR.joinpath("manifest.json").is_file():
        return []
    return [e for e in testing.zluda_manifest()
            if testing.zluda_cubin(e) is not None and math.prod(e["grid"]) * math.prod(e["block"]) == 1]


ENTRIES = _entries()


def _programs():
    """Each kernel freshly loaded: its steps start at their first execution."""
    out = []
    for entry in ENTRIES:
        cubin = testing.zluda_cubin(entry)
        out.append(load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin)))
    return out


def _stressed(model):
    """`model` judging with a latency model under which ptxas's code is mostly hazards
    (fixed latencies 3 cycles longer, IADD3/MOV/LOP3 variable latency with no scoreboard),
    as bench/emu_hazard_stress.py does."""
    class Stressed(model):
        def __init__(self, launch):
            super().__init__(launch, max_hazards=1 << 30)
            lat = copy.copy(self.lat)
            lat.FIXED = {k: v + 3 for k, v in self.lat.FIXED.items()}
            lat.DEFAULT_FIXED = self.lat.DEFAULT_FIXED + 3
            lat.VARIABLE = {**self.lat.VARIABLE, "IADD3": 20, "MOV": 20, "LOP3": 20}
            lat.read_latency = functools.lru_cache(maxsize=None)(lat._read_latency)
            self.lat = lat
    return Stressed


def _sweep(monkeypatch, traced: bool, timing=None, launches: int = 3) -> tuple[list, int]:
    """(per launch: outcome and the checker's end() calls, launches that ran to the end on
    the scalar path)."""
    calls: list = []
    orig_end = TimingModel.end

    def end(self, clock, step, lanes, reads, writes):
        calls.append((step.offset, int(lanes), tuple(reads), tuple(writes), clock.t))
        return orig_end(self, clock, step, lanes, reads, writes)
    monkeypatch.setattr(hazards.TimingModel, "end", end)
    done = [0]
    if traced:
        orig_run = scalar.run_traced

        def run_traced(launch):
            handed = []
            orig_machine = scalar._machine
            monkeypatch.setattr(scalar, "_machine", lambda *a: handed.append(1) or orig_machine(*a))
            try:
                orig_run(launch)
            finally:
                monkeypatch.setattr(scalar, "_machine", orig_machine)
            done[0] += not handed
        monkeypatch.setattr(scalar, "run_traced", run_traced)
    else:
        monkeypatch.setattr(scalar, "suits_traced", lambda launch: False)
    out = []
    programs = _programs()
    for _ in range(launches):
        for entry, program in zip(ENTRIES, programs):
            calls.clear()
            o = testing.run_zluda(entry, hazard_check=True, program=program, timing=timing)
            r = o.result
            out.append((entry["name"], o.passed, o.reason,
                        r and (r.buffers, r.instructions, r.thread_instructions, r.cycles,
                               [str(h) for h in r.hazards]), list(calls)))
    monkeypatch.undo()
    return out, done[0]


@pytest.mark.skipif(not ENTRIES, reason="no ZLUDA corpus")
def test_checker_sees_what_it_sees_on_the_machine(monkeypatch):
    want, _ = _sweep(monkeypatch, traced=False)
    got, done = _sweep(monkeypatch, traced=True)
    for w, g in zip(want, got):
        assert g == w, w[0]
    assert all(w[1] for w in want)
    # the path ran: most launches to their EXIT (a BSSY or a clock read hands a few over)
    assert done >= 0.9 * len(got), done


@pytest.mark.skipif(not ENTRIES, reason="no ZLUDA corpus")
def test_stressed_checker_flags_the_same_hazards(monkeypatch):
    model = _stressed(TimingModel)
    assert scalar._plain_checker(model)          # (it only judges with another model)
    want, _ = _sweep(monkeypatch, traced=False, timing=model, launches=1)
    got, done = _sweep(monkeypatch, traced=True, timing=model, launches=1)
    assert sum(len(w[3][4]) for w in want if w[3]) > 200          # hazards of every kind
    for w, g in zip(want, got):
        assert g == w, w[0]
    assert done >= 0.9 * len(got), done


def _budgeted(entry, program, budget):
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                    budget=budget, hazard_check=True)
    launch.timing_model = TimingModel(launch)
    out = launch.gmem.allocate("output", entry["output_alloc_bytes"])
    buffers = {"output": out}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
    try:
        launch.run()
    except EmuFault as e:
        return "fault", str(e), launch.budget.used, launch.timing_model.cycles
    return "ok", out.data.tobytes(), launch.budget.used, launch.timing_model.cycles


@pytest.mark.skipif(not ENTRIES, reason="no ZLUDA corpus")
def test_budget_running_out_half_way(monkeypatch):
    programs = _programs()
    for entry, program in zip(ENTRIES, programs):
        full = testing.run_zluda(entry, hazard_check=True, program=program).result.instructions
        half = max(full // 2, 1)
        got = _budgeted(entry, program, half)
        monkeypatch.setattr(scalar, "suits_traced", lambda launch: False)
        want = _budgeted(entry, program, half)
        monkeypatch.undo()
        assert got[0] == "fault" and got == want, entry["name"]


def test_checkers_that_watch_more_take_the_machine():
    class Watching(TimingModel):
        def end(self, clock, step, lanes, reads, writes):
            return super().end(clock, step, lanes, reads, writes)

    class Judging(TimingModel):
        def __init__(self, launch):
            super().__init__(launch)

    assert scalar._plain_checker(TimingModel) and scalar._plain_checker(Judging)
    assert not scalar._plain_checker(Watching)
    assert not scalar._plain_checker(object)
