"""Straight-line runs of fast-path instructions fused into one generated Python function.

A ZLUDA-sized launch runs ~20 warp-instructions on groups of 1-64 lanes; per instruction,
the machine's loop (emu/machine.py `Machine._run_group`) looks the step up by PC, counts the
budget, tests the group's stop and merge PCs and the end of its turn, and picks the closure
for the group's width: about as much as a specialised single-lane closure costs itself. A
run of consecutive steps that the loop would send down its fast path one after the other
(`step.fast`, none reading the clock) needs none of that between them: the loop checks once
that the whole run fits (budget, stop/merge PC, turn) and calls the run's function, which
calls each step's closure in order, with its guard, exactly as the loop would.

The function is generated once per run and kind (source by `compile()` of our own text, kept
on the kernel's `Decoded`) and calls `step.run`/`step.run1` through the step, so a step that
specialises later (emu/program.py's tiers) is called in its current form. Traced (the hazard
checker on), a run serves a group whose warps share one clock: it clears the read/write
lists before each step and hands them to the timing model's `end` after it, as the loop
does; a guarded step whose guard holds on some warps' lanes and on none of another's ends
the run before it (the warps' footprints differ: the loop runs it per warp). A closure that
raises stops the run there: the function returns how many steps it finished and the
exception, and the loop accounts for them and handles it as its own (`PerWarp`: the step
runs per warp; a fault: located at that step).

Runs are made on a PC's second visit (straight-line code after it is decoded by then) and
only of steps already decoded; a run shorter than MIN_RUN is not made.
"""
from __future__ import annotations

from numpy import count_nonzero

MIN_RUN = 2
MAX_RUN = 256           # a turn (machine.QUANTUM) is 256 instructions


class Run:
    """A fused run of `n` steps from offset `start`. Its functions, each made on first use:
    `one(g, active)` for a group of one lane (the steps' `run1`), `many(g, active)` for any
    other group (`run`); `one_traced`/`many_traced(g, active, end, clock, bits, reads,
    writes)` for a traced group whose warps share one clock, calling the timing model's
    `end` after each step as the loop does. Each returns None when every step ran, else
    (k, exception): steps before k ran, step k raised; or, traced, (k, None): step k is
    left to the loop (its guard holds on some warps' lanes and on none of another's)."""

    __slots__ = ("start", "n", "steps", "one", "many", "one_traced", "many_traced")

    def __init__(self, start: int, steps: list):
        self.start = start
        self.n = len(steps)
        self.steps = steps
        self.one = self.many = self.one_traced = self.many_traced = None

    def make(self, kind: str):
        fn = _generate(self.steps, "run1" if kind.startswith("one") else "run", kind.endswith("traced"))
        setattr(self, kind, fn)
        return fn


def _generate(steps: list, attr: str, traced: bool):
    args = ", ".join(f"s{k}=s{k}" for k in range(len(steps)))
    head = "g, active, end, clock, bits, reads, writes" if traced else "g, active"
    lines = [f"def run({head}, {args}):", "    k = 0", "    try:"]
    for k, step in enumerate(steps):
        mask = "active" if step.guard is None else "mask"
        if k:
            lines.append(f"        k = {k}")
        if traced:
            lines.append("        reads.clear()")
            lines.append("        writes.clear()")
        if step.guard is not None:
            lines.append(f"        mask = active & g.pred(s{k}.guard)")
            if traced and attr == "run":
                # warps whose lanes the guard leaves on and off have different footprints:
                # the loop runs such a step per warp
                lines.append("        anyw = g.any_per_warp(mask)")
                lines.append("        if count_nonzero(anyw) and not anyw.all():")
                lines.append("            return k, None")
        lines.append(f"        s{k}.{attr}(g, s{k}, active, {mask})")
        if traced:
            lines.append(f"        end(clock, s{k}, bits, reads, writes)")
    lines += ["    except Exception as e:", "        return k, e", "    return None"]
    namespace = {f"s{k}": s for k, s in enumerate(steps)}
    namespace["count_nonzero"] = count_nonzero
    exec(compile("\n".join(lines), f"<emu run at 0x{steps[0].offset:x}>", "exec"), namespace)
    return namespace["run"]


def fusable(step) -> bool:
    return step is not None and step.fast and not step.reads_clock


def visit(decoded, offset: int):
    """What the machine keeps for `offset` in `decoded.runs` after this visit: a `Run` from
    there, 1 (seen once), or False (no run worth making)."""
    runs = decoded.runs
    seen = runs.get(offset)
    if seen is None:
        runs[offset] = 1
        return 1
    steps = decoded.steps
    run = []
    at = offset
    while len(run) < MAX_RUN:
        step = steps.get(at)
        if not fusable(step):
            break
        run.append(step)
        at += 16
    made = Run(offset, run) if len(run) >= MIN_RUN else False
    runs[offset] = made
    return made


def runs_of(decoded) -> dict:
    """The runs made for a kernel's decoding (kept with it, made again when it is)."""
    runs = decoded.__dict__.get("runs")
    if runs is None:
        runs = decoded.runs = {}
    return runs
