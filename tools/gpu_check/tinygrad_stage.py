"""tinygrad's test programs (tests/tinygrad_programs.py) on the GPU through ptx2sass
(`DEV=CUDA:SASS`: our cubins loaded by the CUDA driver; `NV:SASS`: by tinygrad's own NVIDIA
driver), and through the driver's own JIT of the same PTX (`CUDA:PTX`) as a control; each
result compared with tinygrad's CPU device, computed at prepare time (`reference`).

The GPU machine has neither ptx2sass's dependencies nor tinygrad: the bundle carries their
wheels, unpacked at run time into a scratch folder beside a view of this checkout laid out as
the installed package (`ptx2sass/` with `ptx2sass.emu` ← `emu/` ...).

    python -m tools.gpu_check.tinygrad_stage reference OUT.npz     (prepare; DEV=CPU)
    python -m tools.gpu_check.tinygrad_stage worker ...            (run; one device)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
# `NV:SASS` (tinygrad's own driver, straight to the kernel module) is left out unless asked
# for: on the lent H200 machine it hung the whole machine on its first run.
DEVICES = ("CUDA:SASS", "CUDA:PTX")
SUBPACKAGES = ("frontend", "regalloc", "sched", "encoder", "emu")     # pyproject's package-dir


def _programs():
    sys.path.insert(0, str(REPO / "tests"))
    import tinygrad_programs
    return tinygrad_programs


def reference(out: Path) -> int:
    """Every program on tinygrad's CPU device: OUT (npz) and OUT.json (programs that failed)."""
    import numpy as np
    progs = _programs()
    launcher = progs.clang_launcher()
    if launcher:
        os.environ["CC"] = launcher
    results, failures = {}, {}
    for name, program in progs.PROGRAMS.items():
        try:
            results[name] = np.asarray(program("CPU"))
        except Exception as e:  # noqa: BLE001
            failures[name] = f"{type(e).__name__}: {e}"[:300]
    np.savez(out, **results)
    out.with_suffix(".json").write_text(json.dumps(failures))
    return 0


def site(bundle, scratch: Path) -> list[str] | str:
    """PYTHONPATH entries for the tinygrad worker: the bundle's wheels unpacked, and this
    checkout as an installed ptx2sass; or a reason why not."""
    wheels = bundle.wheels()
    names = {w.name.split("-")[0].lower() for w in wheels}
    missing = [n for n in ("ply", "pyelftools", "tinygrad") if n not in names]
    if missing:
        return f"wheels missing from the bundle: {', '.join(missing)} (see docs/gpu_check.md)"
    target = scratch / "site"
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            z.extractall(target)
    pkg = scratch / "pkg" / "ptx2sass"
    pkg.mkdir(parents=True, exist_ok=True)
    for child in (REPO / "ptx2sass").iterdir():
        if child.name != "__pycache__" and not (pkg / child.name).exists():
            (pkg / child.name).symlink_to(child)
    for sub in SUBPACKAGES:
        if not (pkg / sub).exists():
            (pkg / sub).symlink_to(REPO / sub)
    return [str(scratch / "pkg"), str(target), str(REPO), str(REPO / "tests")]


def run_stage(bundle, report, work: Path, deadline: float, unit_timeout: float, log, beat=None,
              devices: tuple[str, ...] = DEVICES, hard_end: float | None = None) -> None:
    from .run import Supervisor
    try:
        import numpy as np
    except ImportError:
        report.note("tinygrad", "skipped: NumPy is not importable here (tinygrad's programs need it)")
        return
    info = bundle.manifest.get("tinygrad_programs")
    if not info or not info.get("reference"):
        report.note("tinygrad", "skipped: the bundle has no tinygrad references (prepared with --no-tinygrad?)")
        return
    paths = site(bundle, work / "tinygrad")
    if isinstance(paths, str):
        report.note("tinygrad", f"skipped: {paths}")
        return
    ref_file = work / "tinygrad" / "reference.npz"
    ref_file.write_bytes(bundle.blob(info["reference"]))
    with np.load(ref_file) as z:
        programs = sorted(z.files)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHONDONTWRITEBYTECODE="1")
    env.pop("DEV", None)
    for n, device in enumerate(devices):
        remaining = deadline - time.time()
        if remaining < 20:
            report.note("tinygrad", f"stopped before {device}: out of time")
            break
        share = time.time() + remaining / (len(devices) - n)

        def command(units_file, results_file, dl, device=device):
            return [sys.executable, "-m", "tools.gpu_check.tinygrad_stage", "worker", "--device", device,
                    "--reference", str(ref_file), "--units", str(units_file), "--results", str(results_file),
                    "--deadline", str(dl)]
        sup = Supervisor(f"tinygrad-{device.replace(':', '-')}", command, work, log, unit_timeout, env=env,
                         cwd=work, hard_end=hard_end)
        started = time.time()
        results = sup.run([("tinygrad", p) for p in programs], share,
                          lambda e, device=device: report.tinygrad_event(device, e), beat)
        ok = sum(r.get("status") == "ok" and r.get("match") for r in results.values())
        log(f"  tinygrad {device}: {ok}/{len(programs)} match the CPU device ({len(results)} ran)")
        report.stage(f"tinygrad {device}", len(programs), len(results), time.time() - started, sup.workers,
                     sup.stderr_tail)
        if not results and sup.stderr_tail:
            report.note(f"tinygrad {device}", f"no program ran: {sup.stderr_tail.strip()[-300:]}")
        report.write()


def worker(args) -> int:
    """One device: each program run, compared with the CPU reference, one JSON line each."""
    import numpy as np
    out = open(args.results, "a")

    def emit(event):
        out.write(json.dumps(event) + "\n")
        out.flush()
    try:
        import ptx2sass.tinygrad  # noqa: F401 - registers the SASS renderer on CUDA and NV
        progs = _programs()
        from tinygrad import Device
        Device[args.device.split(":")[0]]
    except Exception as e:  # noqa: BLE001 - no such device here, or the imports fail
        emit({"event": "no_device", "why": f"{type(e).__name__}: {e}"[:500]})
        return 0
    emit({"event": "device", "info": {"device": args.device}})
    with np.load(args.reference) as z:
        refs = {k: z[k] for k in z.files}
    for unit in json.loads(Path(args.units).read_text()):
        if args.deadline and time.time() > args.deadline:
            emit({"event": "stop", "why": "deadline"})
            return 0
        name = unit[1]
        emit({"event": "begin", "unit": unit})
        t0 = time.perf_counter()
        try:
            got = np.asarray(progs.PROGRAMS[name](args.device))
            ref = refs[name]
            match = bool(progs.same(got, ref))
            detail = "" if match else _difference(got, ref)
            emit({"event": "result", "unit": unit, "status": "ok", "match": match, "detail": detail,
                  "seconds": round(time.perf_counter() - t0, 3)})
        except Exception as e:  # noqa: BLE001
            emit({"event": "result", "unit": unit, "status": "error",
                  "error": f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"[:400],
                  "seconds": round(time.perf_counter() - t0, 3)})
    return 0


def _difference(got, ref) -> str:
    import numpy as np
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return f"{got.dtype}{list(got.shape)} where the CPU device gives {ref.dtype}{list(ref.shape)}"
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    return f"max abs difference {np.nanmax(diff) if diff.size else 0:.3g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.gpu_check.tinygrad_stage")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reference")
    r.add_argument("out", type=Path)
    w = sub.add_parser("worker")
    w.add_argument("--device", required=True)
    w.add_argument("--reference", required=True)
    w.add_argument("--units", required=True)
    w.add_argument("--results", required=True)
    w.add_argument("--deadline", type=float, default=0.0)
    args = ap.parse_args(argv)
    if args.cmd == "reference":
        return reference(args.out)
    return worker(args)


if __name__ == "__main__":
    sys.exit(main())
