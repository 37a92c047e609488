"""`run`: the bundle on a GPU, within a time budget, losing nothing to a fault.

Work goes to worker processes (`worker.py`, `tinygrad_stage.py`) that write one JSON line per
event; this supervisor reads them as they come. A worker that dies (a fault that spoils the
context, a crash) or stops answering (a kernel that never ends: `--unit-timeout`) is killed
and replaced, starting after the unit it was on, which is recorded as `crash`/`timeout`.
Three stages share the budget, each ending by its share of it (earlier stages leave what they
do not use to later ones): corpus launches (55%), calibration (78%), tinygrad's programs
(97%). The report is rewritten after every stage and every few seconds, so a kill from
outside still leaves one.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .bundle import Bundle
from .report import Report

STAGE_ENDS = {"launches": 0.55, "calibration": 0.78, "tinygrad": 0.97}
START_TIMEOUT = 90.0            # seconds for a worker to open the device
MAX_RESTARTS = 1000             # worker processes per stage (each fault costs one)
NO_GPU = 4                      # exit status when no GPU could be opened (the report says why)
REPO = Path(__file__).resolve().parent.parent.parent


class Supervisor:
    """Runs `units` through worker processes started by `command(units_file, results_file,
    deadline)`; `on_event(event)` sees every line. Returns {unit (tuple): result event}."""

    def __init__(self, name: str, command, workdir: Path, log, unit_timeout: float,
                 env: dict | None = None, cwd: Path | None = None, hard_end: float | None = None):
        self.name, self.command, self.workdir, self.log = name, command, workdir, log
        self.unit_timeout, self.env, self.cwd = unit_timeout, env, cwd
        self.hard_end = hard_end        # the whole run's end: no worker outlives it
        self.workers = 0
        self.device_events: list[dict] = []
        self.stderr_tail = ""

    def run(self, units: list, deadline: float, on_event=None, beat=None) -> dict:
        pending = [tuple(u) for u in units]
        results: dict[tuple, dict] = {}
        idle_starts = 0
        last_kill = deadline + self.unit_timeout
        if self.hard_end is not None:
            deadline, last_kill = min(deadline, self.hard_end), min(last_kill, self.hard_end)
        while pending and time.time() < deadline and self.workers < MAX_RESTARTS:
            self.workers += 1
            tag = f"{self.name}{self.workers}"
            units_file = self.workdir / f"{tag}.units.json"
            results_file = self.workdir / f"{tag}.jsonl"
            stderr_file = self.workdir / f"{tag}.stderr"
            units_file.write_text(json.dumps([list(u) for u in pending]))
            results_file.write_text("")
            with open(stderr_file, "w") as err:
                proc = subprocess.Popen(self.command(units_file, results_file, deadline), stdout=err,
                                        stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd,
                                        start_new_session=True)
            current, last, progressed, stop = None, time.time(), False, None
            offset = 0
            while True:
                exited = proc.poll() is not None         # then everything it wrote is there
                with open(results_file, "rb") as f:
                    f.seek(offset)
                    chunk = f.read()
                complete = chunk[:chunk.rfind(b"\n") + 1]
                offset += len(complete)
                for line in complete.decode(errors="replace").splitlines():
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    kind = event.get("event")
                    if kind == "begin":
                        current, last = tuple(event["unit"]), time.time()
                    elif kind == "result":
                        unit = tuple(event["unit"])
                        results[unit] = event
                        if unit in pending:
                            pending.remove(unit)
                        current, last, progressed = None, time.time(), True
                    elif kind in ("device", "no_device"):
                        self.device_events.append(event)
                        last = time.time()
                    elif kind == "stop":
                        stop = event.get("why")
                    if on_event:
                        on_event(event)
                if exited:
                    break
                now = time.time()
                waited = now - last
                # silent for too long: inside a unit, between units, or before the first
                patience = self.unit_timeout if current is not None or progressed else START_TIMEOUT
                if waited > patience or now > last_kill:
                    _kill(proc)
                    if current is not None:
                        why = f"no answer in {waited:.0f} s (killed)" if waited > patience else \
                            "still running at the end of the stage's time (killed)"
                        results[current] = {"event": "result", "unit": list(current), "status": "timeout",
                                            "error": why}
                        pending.remove(current)
                        if on_event:
                            on_event(results[current])
                        current = None
                    break
                if beat:
                    beat()
                time.sleep(0.05)
            proc.wait()
            self.stderr_tail = stderr_file.read_text(errors="replace")[-1500:]
            if current is not None:                      # died inside a unit
                results[current] = {"event": "result", "unit": list(current), "status": "crash",
                                    "error": f"worker exited with status {proc.returncode}: "
                                             f"{self.stderr_tail.strip()[-300:]}"}
                pending.remove(current)
                if on_event:
                    on_event(results[current])
            if any(e.get("event") == "no_device" for e in self.device_events):
                break
            if stop == "deadline":
                break
            idle_starts = 0 if progressed else idle_starts + 1
            if idle_starts >= 2:
                self.log(f"  {self.name}: two workers in a row did nothing; giving up "
                         f"({self.stderr_tail.strip()[-300:]})")
                break
        return results


def nvidia_smi(timeout: float = 10.0) -> str | None:
    """The GPU's clocks, power and temperature as nvidia-smi reports them (None without it):
    timings depend on them."""
    query = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu"
    try:
        run = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"], capture_output=True,
                             text=True, timeout=max(1.0, timeout))
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _interleave(bundle: Bundle, variants: tuple[str, ...], select=None) -> list[tuple]:
    """Launch units, taking the corpora in turn, so that a budget cut leaves each a share."""
    by_corpus: dict[str, list[int]] = {}
    for i, spec in enumerate(bundle.launches):
        if select is None or select.search(spec["id"]):
            by_corpus.setdefault(spec["corpus"], []).append(i)
    order = []
    queues = list(by_corpus.values())
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    units = []
    for i in order:
        spec = bundle.launches[i]
        for variant in variants:
            if variant == "jit" or spec["cubins"].get(variant, {}).get("status") == "ok":
                units.append(("launch", i, variant))
    return units


def run(bundle_dir: Path, report_path: Path, budget_s: float = 420.0, device: str = "cuda",
        repeats: int = 5, unit_timeout: float = 30.0, stages: tuple[str, ...] = ("launches", "calibration", "tinygrad"),
        variants: tuple[str, ...] = ("ptxas", "ours"), select: str | None = None,
        tinygrad_devices: tuple[str, ...] | None = None, log=print) -> int:
    """Run the bundle; `select` (a regular expression) keeps the launches and calibration
    benchmarks whose id it matches."""
    t0 = time.time()
    pattern = re.compile(select) if select else None
    report = Report(report_path, budget_s)
    try:
        bundle = Bundle(bundle_dir)
    except (OSError, ValueError) as e:
        report.finish("error", f"cannot read the bundle: {e}")
        log(f"gpu_check: cannot read the bundle: {e}")
        return 2
    report.set_bundle(bundle)
    if "all" in variants:           # every experiment variant in the bundle, after ptxas's cubin
        extra = sorted({v for spec in bundle.launches for v in spec["cubins"]} - {"ptxas", "ours"})
        variants = tuple(v for v in variants if v != "all") + tuple(extra)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    dump = work / "mismatches"

    def worker_command(units_file, results_file, deadline):
        return [sys.executable, "-m", "tools.gpu_check", "worker", "--bundle", str(bundle_dir),
                "--units", str(units_file), "--results", str(results_file), "--device", device,
                "--repeats", str(repeats), "--deadline", str(deadline), "--dump", str(dump)]

    last_write = [0.0]

    def beat():
        if time.time() - last_write[0] > 5:
            report.write()
            last_write[0] = time.time()

    # the device first: a machine without one gets a report that says so, and exit status 0
    hard_end = t0 + budget_s
    probe = Supervisor("probe", worker_command, work, log, unit_timeout, hard_end=hard_end)
    probe.run([("probe",)], t0 + min(START_TIMEOUT, budget_s))
    events = probe.device_events
    if not events:
        why = f"the worker process did not start: {probe.stderr_tail.strip()[-400:]}"
        report.finish("error", why)
        log(f"gpu_check: {why}")
        return 1
    if events[0]["event"] == "no_device":
        report.finish("skipped", f"no GPU: {events[0]['why']}")
        log(f"gpu_check: no GPU here, nothing ran: {events[0]['why']}")
        return NO_GPU
    info = events[0]["info"]
    info["nvidia_smi_before"] = nvidia_smi() if device == "cuda" else None
    report.set_device(info)
    log(f"gpu_check: {info.get('name')} ({info.get('arch')}, {info.get('sms')} SMs); bundle for {bundle.arch}, "
        f"{len(bundle.launches)} launches, {len(bundle.calibration)} calibration kernels; budget {budget_s:.0f} s")

    if "launches" in stages:
        if info.get("arch") != bundle.arch:
            report.note("launches", f"skipped: the bundle's cubins are for {bundle.arch}, the device is "
                                    f"{info.get('arch')} (prepare with --arch {info.get('arch')})")
        else:
            units = _interleave(bundle, variants, pattern)
            sup = Supervisor("launch", worker_command, work, log, unit_timeout, hard_end=hard_end)
            t = time.time()
            results = sup.run(units, t0 + budget_s * STAGE_ENDS["launches"], report.launch_event, beat)
            # ptxas's cubins that the driver would not load: its own JIT of the PTX instead
            unloaded = [("launch", u[1], "jit") for u, r in results.items()
                        if u[2] == "ptxas" and r.get("status") == "load error" and "jit" not in variants]
            if unloaded:
                report.note("jit", f"{len(unloaded)} of ptxas's cubins did not load; the driver's JIT of "
                                   f"their PTX ran instead (variant 'jit')")
                results.update(sup.run(unloaded, t0 + budget_s * STAGE_ENDS["launches"], report.launch_event, beat))
                units += unloaded
            report.stage("launches", len(units), len(results), time.time() - t, sup.workers, sup.stderr_tail)
            log(f"  launches: {len(results)}/{len(units)} units in {time.time() - t:.0f} s, {sup.workers} worker(s)")
        report.write()
    if "calibration" in stages:
        units = [("bench", i) for i, spec in enumerate(bundle.calibration)
                 if pattern is None or pattern.search(spec["id"])]
        sup = Supervisor("bench", worker_command, work, log, unit_timeout, hard_end=hard_end)
        t = time.time()
        results = sup.run(units, t0 + budget_s * STAGE_ENDS["calibration"], report.bench_event, beat)
        report.stage("calibration", len(units), len(results), time.time() - t, sup.workers, sup.stderr_tail)
        log(f"  calibration: {len(results)}/{len(units)} kernels in {time.time() - t:.0f} s")
        report.write()
    if "tinygrad" in stages:
        from . import tinygrad_stage
        t = time.time()
        if tinygrad_devices is None:   # the emulator device stands in for a GPU: so does SASSEMU
            tinygrad_devices = tinygrad_stage.DEVICES if device == "cuda" else ("SASSEMU",)
        tinygrad_stage.run_stage(bundle, report, work, t0 + budget_s * STAGE_ENDS["tinygrad"],
                                 unit_timeout=max(unit_timeout, 120.0), log=log, beat=beat,
                                 devices=tinygrad_devices, hard_end=hard_end)
        log(f"  tinygrad: {time.time() - t:.0f} s")
    if device == "cuda" and time.time() < hard_end:
        info["nvidia_smi_after"] = nvidia_smi(hard_end - time.time())
    report.attach_mismatches(dump)
    status = "ok" if time.time() - t0 < budget_s and not report.incomplete() else "partial"
    report.finish(status)
    log(f"gpu_check: {status} in {time.time() - t0:.0f} s; report {report_path} and "
        f"{report_path.with_suffix('.md')}")
    return 0
