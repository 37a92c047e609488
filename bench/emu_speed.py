"""Emulator speed: warp-instructions and thread-instructions executed per second of emulation,
over the ZLUDA corpus and a deterministic sample of the tinygrad corpus, with the hazard
checker off and on; and tinygrad programs (the backend's test programs) timed on
`DEV=SASSEMU` against tinygrad's own `DEV=PYTHON` interpreter.

Each corpus kernel is loaded once (cubin parsing and decoding, here from nvdisasm's cached
listing, are excluded); the timing covers launches: per-launch preparation, memory set-up
and execution. `--baseline ROOT` also times another checkout's emulator (e.g. `main`, see
bench/emu_baseline.py) in the same run, interleaved, and prints the ratio: the machine's
load changes from minute to minute, so only figures from one run compare.

The tinygrad section runs each program in a fresh process per device and reports the time
spent in the device's kernel launches (`Program.__call__`: emulation, or tinygrad's UOp
interpreter) and the whole program's wall time (which adds tinygrad's scheduling and code
generation and, for SASSEMU, ptx2sass's compilation).

    .venv/bin/python bench/emu_speed.py [--baseline ROOT] [--corpus zluda|tinygrad]
        [--kernels 40] [--repeat 3] [--no-tinygrad] [--programs a,b] [--profile DIR] [--stages] [--cpu]
        [--tree ROOT] [--cold] [--sites [--hazards]]

The tinygrad section prints wall-clock and CPU time of the launches: on the shared machine a
load of ~20 stretches PYTHON's short launches' wall time far more than their CPU time, so
the CPU ratio is the steadier one. SASSEMU runs with tinygrad's disk cache as a user has it
(kernels compiled and programs loaded in an earlier run are read back: best of N is then
warm); `--cold` adds SASSEMU with the cache off, `--tree ROOT` another checkout's whole
SASSEMU (its compiler, backend and emulator through ROOT/.venv) in the same run.

`--cpu` times each corpus launch by the process's CPU time and keeps each launch's best of
`--repeat` (after one untimed pass that decodes and specialises): on a shared machine whose
load moves a pass's wall time by 2x, the sum of those is the steadier figure.

`--stages` prints, instead, the CPU time of a ZLUDA launch by stage (Launch construction,
buffers, parameter bank, Machine construction, execution, the rest of Launch.run, result
read-back and comparison), to tell per-launch set-up from execution.

`--sites` prints where execution goes by instruction site: each step's calls timed, each
site's least time over `--repeat` warm passes (robust to the machine's load, which moves a
pass's time by 2x), summed by opcode, form (specialised closure or generic handler) and group
width, and the launches' totals by thread count (the rest beside the steps: set-up, engine).
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))


def _emulators(baseline):
    from ptx2sass.emu import launch, loader
    from tools import emu_testing as testing
    emus = {"new": SimpleNamespace(launch=launch, loader=loader, testing=testing)}
    if baseline:
        import emu_baseline
        emus = {"baseline": emu_baseline.load(baseline), **emus}
    return emus


def _runs(emu, corpus: str, count: int):
    """Callables `run(hazards) -> LaunchResult` for the corpus's kernels, loaded once."""
    testing, load = emu.testing, emu.loader.load_program
    runs = []
    if corpus == "zluda":
        for entry in testing.zluda_manifest():
            cubin = testing.zluda_cubin(entry)
            if cubin is not None:
                program = load(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))
                runs.append(lambda hz, e=entry, p=program: testing.run_zluda(e, hazard_check=hz, program=p))
    else:
        kernels = sorted(testing.tinygrad_manifest(), key=lambda k: k["sha256"])[:count]
        for entry in kernels:
            cubin = testing.tinygrad_cubin(entry)
            program = load(cubin, entry["entry"], testing.cubin_listing_decoder(cubin))
            runs.append(lambda hz, e=entry, p=program: testing.run_tinygrad(e, hazard_check=hz, program=p))
    return runs


def _time(runs, hz: bool) -> tuple[float, int, int]:
    warp = thread = 0
    start = time.perf_counter()
    for run in runs:
        outcome = run(hz)
        if outcome.result is not None:
            warp += outcome.result.instructions
            thread += getattr(outcome.result, "thread_instructions", 0)
    return time.perf_counter() - start, warp, thread


def _time_cpu(runs, hz: bool, best: list, exec_best: list | None = None, spent: list | None = None) -> tuple[int, int]:
    """CPU time of each launch, kept in `best` where lower (per launch, best of the passes);
    with `exec_best`, also the CPU time inside `Launch.run` alone (`spent[0]`, which
    `_exec_timer` adds to), kept the same way."""
    warp = thread = 0
    clock = time.process_time
    for k, run in enumerate(runs):
        if spent is not None:
            spent[0] = 0.0
        start = clock()
        outcome = run(hz)
        t = clock() - start
        if t < best[k]:
            best[k] = t
        if exec_best is not None and spent[0] < exec_best[k]:
            exec_best[k] = spent[0]
        if outcome.result is not None:
            warp += outcome.result.instructions
            thread += getattr(outcome.result, "thread_instructions", 0)
    return warp, thread


def _exec_timer(emu, spent: list):
    """Wrap `emu.launch.Launch.run` (execution: every CTA run, machines made and released)
    to add its CPU time to `spent[0]`; returns the undo."""
    cls = emu.launch.Launch
    run, clock = cls.run, time.process_time

    def timed(self):
        t = clock()
        try:
            return run(self)
        finally:
            spent[0] += clock() - t
    cls.run = timed
    return lambda: setattr(cls, "run", run)


def corpus_section(emus, corpora, count: int, repeat: int, cpu: bool = False) -> list[dict]:
    """Rows per corpus, hazard setting and emulator. With `cpu`, each row also has the rate
    counting execution alone (`exec_seconds`, `exec_warp_ips`: CPU time inside `Launch.run`,
    each launch's best) beside the per-launch rate (Launch construction, buffers, parameter
    bank, execution, result read-back and the harness's comparison)."""
    rows = []
    spent = {name: [0.0] for name in emus}
    undo = [_exec_timer(emu, spent[name]) for name, emu in emus.items()] if cpu else []
    try:
        for corpus in corpora:
            rows += _corpus_rows(emus, corpus, count, repeat, cpu, spent)
    finally:
        for u in undo:
            u()
    return rows


def _corpus_rows(emus, corpus: str, count: int, repeat: int, cpu: bool, spent: dict) -> list[dict]:
    rows = []
    runs = {name: _runs(emu, corpus, count) for name, emu in emus.items()}
    for hz in (False, True):
        best = {name: None for name in emus}
        exec_best = {name: None for name in emus}
        counts = {}
        per_launch = {name: [math.inf] * len(runs[name]) for name in emus}
        per_exec = {name: [math.inf] * len(runs[name]) for name in emus}
        if cpu:
            for name in emus:             # decoded and specialised before timing
                _time_cpu(runs[name], hz, [0.0] * len(runs[name]))
        for _ in range(repeat):
            for name in emus:             # interleaved: both see the same load
                if cpu:
                    counts[name] = _time_cpu(runs[name], hz, per_launch[name], per_exec[name], spent[name])
                    best[name] = sum(per_launch[name])
                    exec_best[name] = sum(per_exec[name])
                    continue
                t, warp, thread = _time(runs[name], hz)
                best[name] = t if best[name] is None else min(best[name], t)
                counts[name] = (warp, thread)
        # thread-instructions: counted by the new emulator (the same work either way)
        warp, thread = counts["new"]
        for name in emus:
            if counts[name][0] != warp:
                print(f"warning: {name} ran {counts[name][0]} warp-instructions, new {warp}")
            row = {"corpus": corpus, "kernels": len(runs[name]), "hazards": hz, "emulator": name,
                   "seconds": best[name], "warp_ips": warp / best[name], "thread_ips": thread / best[name],
                   "ratio": best.get("baseline", 0) / best[name] if "baseline" in best else None}
            if cpu:
                row["exec_seconds"] = exec_best[name]
                row["exec_warp_ips"] = warp / exec_best[name]
                row["exec_ratio"] = (exec_best["baseline"] / exec_best[name]) if "baseline" in exec_best else None
            rows.append(row)
    return rows


def print_corpus(rows: list[dict], repeat: int, cpu: bool = False) -> None:
    print(f"corpus launches ({'CPU time, each launch' if cpu else 'wall time, each pass'} best of {repeat}, "
          "interleaved):")
    extra = f" {'exec s':>7} {'exec warp-ins/s':>15} {'vs baseline':>11}" if cpu else ""
    print(f"  {'corpus':9} {'kernels':>7} {'hazards':7} {'emulator':9} {'seconds':>8} {'warp-ins/s':>12} "
          f"{'thread-ins/s':>13} {'vs baseline':>11}{extra}")
    for r in rows:
        ratio = f"{r['ratio']:.1f}x" if r["ratio"] and r["emulator"] != "baseline" else ""
        line = (f"  {r['corpus']:9} {r['kernels']:7} {'on' if r['hazards'] else 'off':7} {r['emulator']:9} "
                f"{r['seconds']:8.3f} {r['warp_ips']:12,.0f} {r['thread_ips']:13,.0f} {ratio:>11}")
        if cpu:
            xr = f"{r['exec_ratio']:.1f}x" if r["exec_ratio"] and r["emulator"] != "baseline" else ""
            line += f" {r['exec_seconds']:7.3f} {r['exec_warp_ips']:15,.0f} {xr:>11}"
        print(line)
    if cpu:
        print("  (warp-ins/s: per launch, everything a launch costs (Launch construction, buffers, "
              "parameter bank, execution, read-back, the harness's comparison); exec: the same "
              "launches' CPU time inside Launch.run alone)")


# --------------------------------------------------------------------------- tinygrad

def _issue_conv2d(device):
    """The program of issue 19: a 1x3x16x16 conv2d with 8 filters, relu, sum."""
    import numpy as np
    from tinygrad import Tensor
    rng = np.random.default_rng(19)
    x = Tensor(rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
    w = Tensor(rng.uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32))
    return x.conv2d(w).relu().sum().numpy()


def tinygrad_worker(device: str, name: str, baseline: str | None) -> None:
    """One program on one device in this (fresh) process; prints its timings as JSON."""
    sys.path.insert(0, str(REPO / "tests"))
    import ptx2sass.tinygrad as backend
    from tinygrad.runtime.ops_python import PythonProgram
    from tinygrad_programs import PROGRAMS, on
    if baseline:
        import emu_baseline
        base = emu_baseline.load(baseline)
        import ptx2sass.emu.launch
        import ptx2sass.emu.loader
        ptx2sass.emu.launch.Launch, ptx2sass.emu.launch.Param = base.launch.Launch, base.launch.Param
        ptx2sass.emu.loader.load_program = base.loader.load_program
    spent = {"exec": 0.0, "exec_cpu": 0.0, "launches": 0}

    def timed(call):
        def wrapper(self, *args, **kw):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return call(self, *args, **kw)
            finally:
                spent["exec"] += time.perf_counter() - start
                spent["exec_cpu"] += time.process_time() - cpu
                spent["launches"] += 1
        return wrapper

    backend.SASSEmuProgram.__call__ = timed(backend.SASSEmuProgram.__call__)
    PythonProgram.__call__ = timed(PythonProgram.__call__)
    if name == "issue19_conv2d":
        def program(dev):
            with on(dev):
                return _issue_conv2d(dev)
    else:
        program = PROGRAMS[name]
    start, cpu = time.perf_counter(), time.process_time()
    program(device)
    print(json.dumps({"wall": time.perf_counter() - start, "wall_cpu": time.process_time() - cpu, **spent,
                      "code": str(Path(backend.__file__).resolve().parent.parent)}))


def _worker(device: str, name: str, baseline: str | None, timeout: int, tree: str | None = None,
            cold: bool = False) -> dict:
    python = str(Path(tree) / ".venv" / "bin" / "python") if tree else sys.executable
    cmd = [python, str(Path(__file__).resolve()), "--tinygrad-worker", device, name]
    if baseline:
        cmd += ["--baseline", str(baseline)]
    if tree:
        cmd += ["--as-tree", str(tree)]
    env = {k: v for k, v in os.environ.items() if k not in ("DEV",)}
    if cold:
        env["CACHELEVEL"] = "0"             # tinygrad's disk cache off: every kernel compiled
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    return {**{k: min(r[k] for r in ok) for k in ("exec", "wall", "exec_cpu", "wall_cpu")},
            "launches": ok[0]["launches"]}


def tinygrad_section(names: list[str], baseline, timeout: int, repeat: int, tree: str | None = None,
                     cold: bool = False) -> list[dict]:
    """Each program on each device, interleaved, best of `repeat`. `SASSEMU` runs with
    tinygrad's disk cache as a user has it (compiled cubins and loaded programs kept from the
    first run on); `SASSEMU cold` (`cold`) with it off; `SASSEMU tree` (`tree`) is another
    checkout's whole SASSEMU (its compiler, backend and emulator, with its own .venv)."""
    rows = []
    for name in names:
        workers = {"PYTHON": ("PYTHON", None, None, False), "SASSEMU": ("SASSEMU", None, None, False)}
        if cold:
            workers["SASSEMU cold"] = ("SASSEMU", None, None, True)
        if baseline:
            workers["SASSEMU baseline"] = ("SASSEMU", baseline, None, False)
        if tree:
            workers["SASSEMU tree"] = ("SASSEMU", None, tree, False)
        runs: dict[str, list] = {k: [] for k in workers}
        for _ in range(repeat):               # interleaved, best of `repeat` per device
            for k, (device, base, root, off) in workers.items():
                runs[k].append(_worker(device, name, base, timeout, root, off))
        row = {"program": name, **{k: _best(v) for k, v in runs.items()}}
        rows.append(row)
        print(f"  {name}: " + "; ".join(f"{k} " + (f"exec {v['exec']:.3f} s (CPU {v['exec_cpu']:.3f}), wall {v['wall']:.2f} s (CPU {v['wall_cpu']:.2f})"
                                                     if "error" not in v else v["error"][:80])
                                        for k, v in row.items() if k != "program"), flush=True)
    return rows


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def print_tinygrad(rows: list[dict]) -> None:
    keys = [k for k in rows[0] if k not in ("program", "PYTHON")] if rows else []
    for k in keys:
        ok = [r for r in rows if "error" not in r["PYTHON"] and "error" not in r[k]
              and r["program"] != "issue19_conv2d"]
        ex = _geomean([r["PYTHON"]["exec"] / r[k]["exec"] for r in ok])
        wall = _geomean([r["PYTHON"]["wall"] / r[k]["wall"] for r in ok])
        ex_cpu = _geomean([r["PYTHON"]["exec_cpu"] / r[k]["exec_cpu"] for r in ok])
        # (the whole program's CPU time leaves out tinygrad's compile workers: not summarised)
        print(f"  {k} vs PYTHON over {len(ok)} programs (geomean): kernel launches {ex:.2f}x as fast, "
              f"whole program {wall:.2f}x (wall-clock); kernel launches by CPU time {ex_cpu:.2f}x")
    for r in rows:
        if r["program"] == "issue19_conv2d":
            print("  issue 19's conv2d: " + "; ".join(f"{k} exec {v['exec']:.2f} s, wall {v['wall']:.2f} s"
                                                     for k, v in r.items() if k != "program" and "error" not in v))


# --------------------------------------------------------------------------- stages

STAGES = ("Launch()", "buffers", "set_params", "Machine()", "Machine.run", "Launch.run rest",
          "result+compare")


def stages(repeat: int) -> dict:
    """CPU microseconds per ZLUDA launch in each stage of `tools.emu_testing.run_zluda`,
    hazards off and on (the sum over the corpus, best of `repeat`): where the per-launch
    set-up ends and execution begins."""
    from ptx2sass.emu import machine as machine_mod
    from ptx2sass.emu.launch import Launch, Param, _result
    from tools import emu_testing as testing
    progs = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            progs.append((entry, emu_load(cubin, entry["kernel"], testing)))
    clock = time.process_time
    spent: dict[str, float] = {}
    init, run = machine_mod.Machine.__init__, machine_mod.Machine.run

    def timed_init(self, *a, **kw):
        t = clock()
        init(self, *a, **kw)
        spent["Machine()"] += clock() - t

    def timed_run(self, *a, **kw):
        t = clock()
        run(self, *a, **kw)
        spent["Machine.run"] += clock() - t

    def once(hz: bool) -> dict:
        for k in STAGES:
            spent[k] = 0.0
        warp = 0
        for entry, program in progs:
            t0 = clock()
            launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"], hazard_check=hz)
            if hz:
                launch.timing_model = testing._timing_model(None)(launch)
            t1 = clock()
            buffers = {}
            if entry["input"] is not None:
                buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"],
                                                        bytes.fromhex(entry["input"]["hex"]))
            buffers["output"] = launch.gmem.allocate("output", entry["output_alloc_bytes"])
            t2 = clock()
            launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
            t3 = clock()
            before = spent["Machine()"] + spent["Machine.run"]
            launch.run()
            t4 = clock()
            result = _result(launch, buffers)
            if result.buffers["output"][:entry["output_bytes"]] != bytes.fromhex(entry["output"]["hex"]):
                raise SystemExit(f"{entry['name']}: output differs")
            t5 = clock()
            warp += result.instructions
            spent["Launch()"] += t1 - t0
            spent["buffers"] += t2 - t1
            spent["set_params"] += t3 - t2
            spent["Launch.run rest"] += (t4 - t3) - (spent["Machine()"] + spent["Machine.run"] - before)
            spent["result+compare"] += t5 - t4
        return {**spent, "warp": warp}

    machine_mod.Machine.__init__, machine_mod.Machine.run = timed_init, timed_run
    try:
        out = {}
        for hz in (False, True):
            once(hz)                                    # decoded and specialised once
            runs = [once(hz) for _ in range(repeat)]
            best = min(runs, key=lambda r: sum(r[k] for k in STAGES))
            out[hz] = {k: best[k] / len(progs) * 1e6 for k in STAGES} | {
                "launches": len(progs), "warp_per_launch": best["warp"] / len(progs)}
        return out
    finally:
        machine_mod.Machine.__init__, machine_mod.Machine.run = init, run


def emu_load(cubin, kernel, testing):
    from ptx2sass.emu import loader
    return loader.load_program(cubin, kernel, testing.cubin_listing_decoder(cubin))


def print_stages(out: dict) -> None:
    n = out[False]["launches"]
    print(f"ZLUDA launch stages, CPU microseconds per launch ({n} launches, "
          f"{out[False]['warp_per_launch']:.1f} warp-instructions each):")
    print(f"  {'stage':18} {'hazards off':>12} {'hazards on':>12}")
    for k in STAGES:
        print(f"  {k:18} {out[False][k]:12.1f} {out[True][k]:12.1f}")
    print(f"  {'total':18} {sum(out[False][k] for k in STAGES):12.1f} {sum(out[True][k] for k in STAGES):12.1f}")


def sites(repeat: int, hz: bool = False) -> dict:
    """Where a ZLUDA launch's execution goes, in a form the machine's load moves little: every
    decoded step's `run`/`run1`/`handler` timed (wall clock) per call, and per instruction
    site (kernel, offset, group width) the least time over `repeat` warm passes, summed by
    opcode, form (a specialised closure, or the generic handler: `op_*`) and width; the
    fused straight-line runs (emu.blocks) are off so that every step is seen, and the
    cycle collector is paused while timing. Also each
    launch's least total, by the launch's thread count: what is left beside the steps is
    per-launch set-up and the engine (group formation, the step loop, control)."""
    from ptx2sass.emu import machine as machine_mod
    from tools import emu_testing as testing
    progs = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            progs.append((entry, emu_load(cubin, entry["kernel"], testing)))
    clock = time.perf_counter_ns
    current: dict = {}

    def timed(f, key):
        def call(w, s, active, mask):
            t = clock()
            try:
                return f(w, s, active, mask)
            finally:
                k = key + ("1" if w.width == 1 else "2-32" if w.width <= 32 else ">32",)
                current[k] = current.get(k, 0) + clock() - t
        return call

    def threads(entry) -> int:
        n = 1
        for v in (entry["block"], entry["grid"]):
            for d in (v if isinstance(v, (list, tuple)) else [v]):
                n *= d
        return n

    runs_of = machine_mod.runs_of
    machine_mod.runs_of = lambda decoded, launch=None: None
    kept = []
    try:
        for _ in range(3):                  # decoded, then specialised (at a step's third run)
            for entry, program in progs:
                testing.run_zluda(entry, hazard_check=hz, program=program)
        for entry, program in progs:
            for step in program._decoded.steps.values():
                for attr in ("run", "run1", "handler"):
                    f = getattr(step, attr)
                    kept.append((step, attr, f))
                    form = "generic" if getattr(f, "__name__", "").startswith("op_") else "specialised"
                    setattr(step, attr, timed(f, (entry["name"], step.offset, step.ins.opcode, form)))
        best: dict = {}
        totals = [math.inf] * len(progs)
        gc.collect()
        gc.disable()                        # a collection would land on whichever site ran
        for _ in range(repeat):
            for i, (entry, program) in enumerate(progs):
                current.clear()
                t = clock()
                testing.run_zluda(entry, hazard_check=hz, program=program)
                totals[i] = min(totals[i], clock() - t)
                for k, v in current.items():
                    best[k] = min(best.get(k, math.inf), v)
    finally:
        gc.enable()
        machine_mod.runs_of = runs_of
        for step, attr, f in kept:
            setattr(step, attr, f)
    by_form: dict = {}
    for (name, _, opcode, form, width), v in best.items():
        row = by_form.setdefault((opcode, form, width), [0, 0])
        row[0] += v
        row[1] += 1
    by_threads: dict = {}
    step_of = {}
    for (name, *_), v in best.items():
        step_of[name] = step_of.get(name, 0) + v
    for (entry, _), total in zip(progs, totals):
        row = by_threads.setdefault(threads(entry), [0, 0, 0])
        row[0] += 1
        row[1] += total
        row[2] += step_of.get(entry["name"], 0)
    return {"forms": by_form, "threads": by_threads, "total": sum(totals), "hazards": hz}


def print_sites(out: dict, top: int = 30) -> None:
    total = out["total"]
    print(f"ZLUDA execution by instruction site (least of the passes, wall clock, hazards "
          f"{'on' if out['hazards'] else 'off'}; fused runs off): launches' total {total / 1e6:.1f} ms")
    print(f"  {'threads':>8} {'launches':>8} {'total ms':>9} {'steps ms':>9} {'steps':>6}")
    for n, (count, t, steps) in sorted(out["threads"].items()):
        print(f"  {n:8d} {count:8d} {t / 1e6:9.2f} {steps / 1e6:9.2f} {steps / t:6.0%}")
    print(f"  {'opcode':10} {'form':12} {'lanes':>5} {'ms':>7} {'share':>6} {'sites':>6} {'us a site':>9}")
    for (opcode, form, width), (t, n) in sorted(out["forms"].items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"  {opcode:10} {form:12} {width:>5} {t / 1e6:7.2f} {t / total:6.1%} {n:6d} {t / n / 1e3:9.1f}")


# --------------------------------------------------------------------------- profiles

def profile(out_dir: Path, corpora, count: int, baseline) -> None:
    """cProfile summaries (top functions by own time) of the emulator (and the baseline's)
    over the corpora, hazards off and on, one file each."""
    import cProfile
    import io
    import pstats
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, emu in _emulators(baseline).items():
        for corpus in corpora:
            runs = _runs(emu, corpus, count)
            _time(runs, False)                      # decode once before profiling
            for hz in (False, True):
                pr = cProfile.Profile()
                pr.enable()
                _time(runs, hz)
                pr.disable()
                buf = io.StringIO()
                pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(25)
                text = buf.getvalue()
                for root in (str(REPO) + "/", str(Path(baseline).resolve()) + "/" if baseline else None, sys.prefix + "/"):
                    if root:
                        text = text.replace(root, "")
                (out_dir / f"{name}-{corpus}-hazards-{'on' if hz else 'off'}.txt").write_text(text)


def main(argv=None) -> int:
    global REPO
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="another checkout's root: time its emulator too")
    ap.add_argument("--corpus", action="append", choices=("zluda", "tinygrad"))
    ap.add_argument("--kernels", type=int, default=40, help="tinygrad kernels (first by sha256)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--no-tinygrad", action="store_true")
    ap.add_argument("--programs", help="comma-separated tinygrad programs (default: all, and issue 19's)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per tinygrad program and device")
    ap.add_argument("--tinygrad-repeat", type=int, default=3, help="processes per tinygrad program and device")
    ap.add_argument("--profile", type=Path, help="write cProfile summaries here instead of timing")
    ap.add_argument("--cpu", action="store_true",
                    help="corpus: CPU time of each launch, best of --repeat, summed (steadier than a "
                         "pass's wall time on a loaded machine)")
    ap.add_argument("--stages", action="store_true",
                    help="CPU time per ZLUDA launch by stage (set-up vs execution) instead of timing")
    ap.add_argument("--sites", action="store_true",
                    help="ZLUDA execution time by instruction site, opcode and form (each site's best "
                         "of --repeat passes) instead of timing")
    ap.add_argument("--hazards", action="store_true", help="--sites: with the hazard checker")
    ap.add_argument("--tree", help="tinygrad programs: also time another checkout's SASSEMU "
                    "(ROOT with its own .venv, e.g. `git archive main` after `make setup`)")
    ap.add_argument("--cold", action="store_true",
                    help="tinygrad programs: also time SASSEMU with tinygrad's disk cache off (CACHELEVEL=0)")
    ap.add_argument("--tinygrad-worker", nargs=2, metavar=("DEVICE", "PROGRAM"), help=argparse.SUPPRESS)
    ap.add_argument("--as-tree", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.as_tree:        # a worker for another checkout: its tools and tests, not this one's
        sys.path[:] = [p for p in sys.path if p not in (str(REPO), str(HERE))]
        sys.path.insert(0, args.as_tree)
        REPO = Path(args.as_tree)
    sys.path.insert(0, str(HERE))
    if args.tinygrad_worker:
        tinygrad_worker(*args.tinygrad_worker, args.baseline)
        return 0
    corpora = args.corpus or ["zluda", "tinygrad"]
    if args.profile:
        profile(args.profile, corpora, args.kernels, args.baseline)
        return 0
    if args.stages:
        print_stages(stages(args.repeat))
        return 0
    if args.sites:
        print_sites(sites(args.repeat, args.hazards))
        return 0
    if not args.no_corpus:
        rows = corpus_section(_emulators(args.baseline), corpora, args.kernels, args.repeat, args.cpu)
        print_corpus(rows, args.repeat, args.cpu)
    if not args.no_tinygrad:
        sys.path.insert(0, str(REPO / "tests"))
        from tinygrad_programs import PROGRAMS
        names = args.programs.split(",") if args.programs else [*PROGRAMS, "issue19_conv2d"]
        print(f"tinygrad programs, a process per program and device, best of {args.tinygrad_repeat} "
              "(kernel launches / whole program):")
        print_tinygrad(tinygrad_section(names, args.baseline, args.timeout, args.tinygrad_repeat,
                                        args.tree, args.cold))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
