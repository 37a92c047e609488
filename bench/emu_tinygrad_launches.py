"""The tinygrad backend's test programs' kernel launches, captured once and replayed in one
process: CPU time of each program's launches from a cold start (a fresh copy of every
kernel's program, so decoding and first executions count, as in a user's first run), best of
N, for this checkout's emulator or another's (`--baseline ROOT`, see bench/emu_baseline.py).

bench/emu_speed.py's tinygrad section times the same launches in a fresh process per program
and device, with tinygrad around them; on a loaded machine its figures move by 2x between
runs. Replaying the captured launches in one process compares two emulators on identical
work within seconds (interleave runs of both to share the load), and checks that both give
the same output bytes.

    .venv/bin/python bench/emu_tinygrad_launches.py --capture launches.pkl
    .venv/bin/python bench/emu_tinygrad_launches.py --replay launches.pkl [--baseline ROOT]
        [--repeat 3] [--programs a,b] [--write times.json] [--outputs out.json | --check out.json]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))


def capture(path: Path) -> None:
    """Run every program on DEV=SASSEMU and keep each launch: the kernel's program (pickled
    before its first launch), grid, block, buffers and parameters."""
    sys.path.insert(0, str(REPO / "tests"))
    import ptx2sass.tinygrad as backend
    from ptx2sass.emu import launch as launch_module
    from tinygrad_programs import PROGRAMS, on

    import emu_speed
    kept: dict[str, list] = {}
    current = [None]
    init, call = backend.SASSEmuProgram.__init__, backend.SASSEmuProgram.__call__

    def recording_init(self, dev, obj):
        init(self, dev, obj)
        p = self.program
        decoded = p.__dict__.pop("_decoded", None)
        self._pickled = pickle.dumps(p)
        if decoded is not None:
            p._decoded = decoded

    def recording_call(self, *bufs, **kw):
        record = {"program": self._pickled, "grid": tuple(kw.get("global_size", (1, 1, 1))),
                  "block": tuple(kw.get("local_size", (1, 1, 1)))}
        set_params = launch_module.Launch.set_params

        def keep(launch, params, placed):
            record["params"] = params
            record["buffers"] = {k: bytes(v.data) for k, v in placed.items()}
            return set_params(launch, params, placed)
        launch_module.Launch.set_params = keep
        try:
            return call(self, *bufs, **kw)
        finally:
            launch_module.Launch.set_params = set_params
            kept.setdefault(current[0], []).append(record)

    backend.SASSEmuProgram.__init__, backend.SASSEmuProgram.__call__ = recording_init, recording_call
    for name, program in PROGRAMS.items():
        current[0] = name
        program("SASSEMU")
    current[0] = "issue19_conv2d"
    with on("SASSEMU"):
        emu_speed._issue_conv2d("SASSEMU")
    path.write_bytes(pickle.dumps(kept))
    print({k: len(v) for k, v in kept.items()})


def replay(path: Path, baseline: str | None, repeat: int, programs: list[str] | None) -> tuple[dict, dict]:
    """Per program: (best CPU seconds of its launches, output digests)."""
    import numpy as np
    if baseline:
        import importlib

        import emu_baseline
        base = emu_baseline.load(baseline)
        Launch = base.launch.Launch
        importlib.import_module("ptx2sass.emu_base.registry").load_all()
    else:
        from ptx2sass.emu import registry
        from ptx2sass.emu.launch import Launch
        registry.load_all()
    from ptx2sass.encoder import sass_text  # noqa: F401  (immediates' float spellings, as the device loads)
    kept = pickle.loads(path.read_bytes())
    times, outputs = {}, {}
    for name, records in kept.items():
        if programs and name not in programs:
            continue
        best = float("inf")
        for _ in range(repeat):
            fresh = {}
            for r in records:              # unpickled outside the timing (the user's load step)
                if r["program"] not in fresh:
                    fresh[r["program"]] = pickle.loads(r["program"])
            digests = []
            start = time.process_time()
            for r in records:
                launch = Launch(fresh[r["program"]], r["grid"], r["block"], hazard_check=False)
                placed = {k: launch.gmem.allocate(k, len(v), np.frombuffer(v, np.uint8))
                          for k, v in r["buffers"].items()}
                launch.set_params(r["params"], placed)
                launch.run()
                digests.append(hashlib.sha256(b"".join(bytes(placed[k].data) for k in sorted(placed))).hexdigest())
            best = min(best, time.process_time() - start)
        times[name], outputs[name] = best, digests
        print(f"  {name:24} {best * 1e3:9.2f} ms", flush=True)
    return times, outputs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", type=Path)
    ap.add_argument("--replay", type=Path)
    ap.add_argument("--baseline", help="another checkout's root: replay with its emulator")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--programs", help="comma-separated program names")
    ap.add_argument("--write", type=Path, help="the times as JSON")
    ap.add_argument("--outputs", type=Path, help="write the output digests")
    ap.add_argument("--check", type=Path, help="compare the output digests with these")
    args = ap.parse_args(argv)
    if args.capture:
        capture(args.capture)
        return 0
    times, outputs = replay(args.replay, args.baseline, args.repeat,
                            args.programs.split(",") if args.programs else None)
    print(f"  total {sum(times.values()) * 1e3:.1f} ms")
    if args.write:
        args.write.write_text(json.dumps(times))
    if args.outputs:
        args.outputs.write_text(json.dumps(outputs))
    if args.check:
        want = json.loads(args.check.read_text())
        bad = [k for k in outputs if want.get(k) != outputs[k]]
        print(f"outputs differ: {bad}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
