"""emu/scalar_runs.py: the one-thread interpreter's fused runs change nothing a launch reports.

Every one-thread ZLUDA launch, three times in a row (runs are made from the second), with
and without fused runs (`MAX_RUN = 0`: none made): outputs, warp- and thread-instruction
counts equal, and with budgets that run out before, inside and after the kernel's runs.
A step that raises inside a run (an LD or ST off its fast path, here a fault) is where the
machine takes over: the fault, its offset and the counts equal the unfused path's."""

import pytest

from tools import emu_testing as testing
from ptx2sass.emu import scalar_runs
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, Param

BAD = 0x7000_0000_0000      # an address no buffer holds


PROGRAMS = testing.zluda_one_thread_programs()


def _forget_runs(program) -> None:
    decoded = program.__dict__.get("_decoded")
    if decoded is not None:
        decoded.__dict__.pop("scalar_runs", None)


def _launch(entry, program, budget=None, bad: str | None = None):
    """(kind, output bytes or fault text, warp-instructions, thread-instructions)."""
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                    hazard_check=False, **({} if budget is None else {"budget": budget}))
    buffers = {"output": launch.gmem.allocate("output", entry["output_alloc_bytes"])}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    launch.set_params([Param(type="u64", value=BAD) if p == bad else Param(buffer=p) for p in entry["params"]],
                      buffers)
    try:
        launch.run()
    except EmuFault as e:
        return "fault", str(e), launch.budget.used, launch.thread_instructions
    return "ok", buffers["output"].data.tobytes(), launch.budget.used, launch.thread_instructions


def _made(program) -> int:
    """Steps in the fused runs kept for `program`."""
    kept = program._decoded.__dict__.get("scalar_runs", {})
    return sum(r[1] for runs in kept.values() for r in runs.values() if r)


def _both(monkeypatch, entry, program, launches):
    """`launches(entry, program)`'s outcomes without fused runs, then with them."""
    monkeypatch.setattr(scalar_runs, "MAX_RUN", 0)
    _forget_runs(program)
    want = launches(entry, program)
    monkeypatch.undo()
    _forget_runs(program)
    return want, launches(entry, program)


@pytest.mark.skipif(not PROGRAMS, reason="no ZLUDA corpus")
def test_runs_change_no_outcome(monkeypatch):
    fused = 0
    for entry, program in PROGRAMS:
        def three(entry, program):
            return [_launch(entry, program) for _ in range(3)]
        want, got = _both(monkeypatch, entry, program, three)
        assert got == want, entry["name"]
        assert want[0][0] == "ok", (entry["name"], want[0][1])
        fused += _made(program) > 0
    assert fused > len(PROGRAMS) // 2, fused         # most kernels have a run


@pytest.mark.skipif(not PROGRAMS, reason="no ZLUDA corpus")
def test_budgets_inside_runs(monkeypatch):
    """Every budget from 1 to the whole kernel on the ten kernels with the longest runs."""
    sized = []
    for entry, program in PROGRAMS:
        _launch(entry, program)
        _launch(entry, program)
        sized.append((_made(program), entry["name"], entry, program))
    for _, _, entry, program in sorted(sized, key=lambda s: s[:2])[-10:]:
        n = _launch(entry, program)[2]

        def budgets(entry, program):
            _launch(entry, program)
            _launch(entry, program)
            return [_launch(entry, program, budget) for budget in range(1, n + 2)]
        want, got = _both(monkeypatch, entry, program, budgets)
        assert got == want, entry["name"]
        assert any(w[0] == "fault" for w in want) and want[-1][0] == "ok"


@pytest.mark.skipif(not PROGRAMS, reason="no ZLUDA corpus")
@pytest.mark.parametrize("bad", ["input", "output"])
def test_a_step_raising_inside_a_run(monkeypatch, bad):
    """`add`'s run (0x0-0x90) holds its LD.E.64 (step 4) and ST.E.64 (step 9): a pointer to
    no buffer makes one of them fault on the third launch, after the run was made."""
    entry, program = next((e, p) for e, p in PROGRAMS if e["name"] == "add")

    def faulting(entry, program):
        return [_launch(entry, program), _launch(entry, program), _launch(entry, program, bad=bad)]
    want, got = _both(monkeypatch, entry, program, faulting)
    assert _made(program) >= 10
    assert want[2][0] == "fault" and "out-of-bounds" in want[2][1], want[2]
    assert got == want


@pytest.mark.skipif(not PROGRAMS, reason="no ZLUDA corpus")
def test_shapes_compiled_again_past_the_limit(monkeypatch):
    """With room for two shapes the code cache is emptied again and again; runs still made
    and outcomes unchanged."""
    monkeypatch.setattr(scalar_runs, "_CODE", {})
    monkeypatch.setattr(scalar_runs, "CODE_LIMIT", 2)
    picked = PROGRAMS[:20]
    want = []
    monkeypatch.setattr(scalar_runs, "MAX_RUN", 0)
    for entry, program in picked:
        _forget_runs(program)
        want.append(_launch(entry, program))
    monkeypatch.setattr(scalar_runs, "MAX_RUN", 64)
    for entry, program in picked:
        _forget_runs(program)
        got = [_launch(entry, program) for _ in range(3)]
        assert got == [want[picked.index((entry, program))]] * 3, entry["name"]
    assert 0 < len(scalar_runs._CODE) <= 2
