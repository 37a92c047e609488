"""Both ways: a one-thread launch under the checker run on the scalar interpreter
(`scalar.run_traced`) and on the machine, from the same state, and the two outcomes compared.

Switched on by the environment variable PTX2SASS_EMU_TRACED_CHECK (read at import): every
launch `scalar.suits_traced` admits then runs the traced path first, its outcome is kept, the
launch's state (global memory and heap, surfaces, counts, printf, the checker) is put back,
and the machine runs it; the launch is left with the machine's outcome. Compared: every
buffer's bytes (and any heap block's), the budget's warp-instructions, thread-instructions
(unless both faulted alike: no result reports the count then), cycles, the hazards (offset
and text, in order), printf's output, a fault's type and text.
A difference raises `TracedMismatch` (so the test that made the launch fails) after a line
is written; with the variable set to a path, one JSON line per compared launch is appended
there (tools/emu_traced_sweep.py counts them). Off by default: it doubles a launch's time.
"""
from __future__ import annotations

import copy
import json
import os

from . import scalar

SETTING = os.environ.get("PTX2SASS_EMU_TRACED_CHECK", "")


class TracedMismatch(AssertionError):
    """The traced scalar path and the machine disagree on a launch."""


def _save(launch) -> dict:
    gmem = launch.gmem
    state = {
        "buffers": [(b, b.backing.copy()) for b in gmem.buffers],
        "next": gmem._next, "base_list": list(gmem._base_list),
        "used": launch.budget.used,
        "thread_instructions": launch.__dict__.get("thread_instructions"),
        "heap": launch.__dict__.get("heap_allocations"),
        "printf": list(launch.printf),
        "bar_counts": dict(launch.bar_counts),
        "surfaces": [(o, o.data.copy()) for o in _surfaces(launch)],
        "checker": _copy_checker(launch.timing_model),
    }
    return state


def _surfaces(launch) -> list:
    b = launch.__dict__.get("_bindings")
    return [] if b is None else [o for o in b.objects if hasattr(o, "data") and type(o).__name__ == "Surface"]


def _copy_checker(tm):
    """A copy of the checker as it is before the run (its own lists, sets and dicts)."""
    c = copy.copy(tm)
    for k, v in vars(tm).items():
        if isinstance(v, (list, set, dict)):
            setattr(c, k, copy.copy(v))
    return c


def _restore(launch, state) -> None:
    gmem = launch.gmem
    kept = len(state["buffers"])
    del gmem.buffers[kept:]
    for b, backing in state["buffers"]:
        b.backing[:] = backing
    gmem._next = state["next"]
    gmem._base_list = list(state["base_list"])
    gmem._bases = None
    gmem.last_hit = (0, 0, None)
    launch.budget.used = state["used"]
    for name in ("thread_instructions", "heap_allocations"):
        v = state["thread_instructions" if name == "thread_instructions" else "heap"]
        if v is None:
            launch.__dict__.pop(name, None)
        else:
            launch.__dict__[name] = v
    launch.printf[:] = state["printf"]
    launch.bar_counts.clear()
    launch.bar_counts.update(state["bar_counts"])
    for o, data in state["surfaces"]:
        o.data[...] = data
    launch.timing_model = _copy_checker(state["checker"])


def _outcome(launch, fault) -> dict:
    tm = launch.timing_model
    return {
        "buffers": [(b.name, b.base, b.backing.tobytes()) for b in launch.gmem.buffers],
        "used": launch.budget.used,
        "thread_instructions": launch.thread_instructions,
        "cycles": tm.cycles,
        "hazards": [(h.offset, str(h)) for h in tm.hazards],
        "printf": list(launch.printf),
        "surfaces": [o.data.tobytes() for o in _surfaces(launch)],
        "fault": None if fault is None else (type(fault).__name__, str(fault)),
    }


def _attempt(run, launch):
    try:
        run(launch)
    except Exception as e:          # a fault (or budget) on either path: compared as text
        return e
    return None


def run_both(launch, machine_run) -> None:
    """Run `launch` the traced way and the machine's way (`machine_run(launch)`), compare,
    and leave the machine's outcome (raising its fault, if it had one)."""
    state = _save(launch)
    fault = _attempt(scalar.run_traced, launch)
    traced = _outcome(launch, fault)
    _restore(launch, state)
    fault = _attempt(machine_run, launch)
    machine = _outcome(launch, fault)
    differ = sorted(k for k in machine if machine[k] != traced[k])
    if machine["fault"] is not None and machine["fault"] == traced["fault"]:
        # after a fault no result reports the thread-instruction count (run() raises), and
        # the machine leaves out the faulting run's share of it while a scalar path has
        # counted its own instructions before handing over (as scalar.run always did)
        differ = [k for k in differ if k != "thread_instructions"]
    _log(launch, differ, traced, machine)
    if differ:
        raise TracedMismatch(f"{launch.program.name}: the traced scalar path and the machine differ in "
                             f"{', '.join(differ)}: " + "; ".join(f"{k}: traced {_short(traced[k])} "
                                                                    f"machine {_short(machine[k])}" for k in differ))
    if fault is not None:
        raise fault


def _short(v) -> str:
    text = repr(v)
    return text if len(text) < 400 else text[:400] + "..."


def _log(launch, differ, traced, machine) -> None:
    if SETTING in ("", "1"):
        return
    line = {"kernel": launch.program.name, "arch": launch.program.arch, "differ": differ,
            "instructions": machine["used"], "hazards": len(machine["hazards"]),
            "fault": machine["fault"] is not None, "test": os.environ.get("PYTEST_CURRENT_TEST", "")}
    if differ:
        line["detail"] = {k: [_short(traced[k]), _short(machine[k])] for k in differ}
    with open(SETTING, "a") as f:
        f.write(json.dumps(line) + "\n")
