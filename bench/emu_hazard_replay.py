"""The hazard checker's own cost: every `TimingModel.end` call of one pass over a corpus
(ZLUDA, or the first tinygrad kernels by sha256) captured with its arguments, then replayed
into fresh warp clocks, best of `--repeat` passes of process time. Replayed apart from the
emulator's steps, the figure moves far less with the machine's load than a corpus pass does.

    .venv/bin/python bench/emu_hazard_replay.py [--baseline ROOT] [--corpus zluda|tinygrad] [--repeat 15]

`--baseline ROOT`: time another checkout's checker instead (bench/emu_baseline.py); run
both, one after the other, to compare.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def capture(baseline, corpus: str, kernels: int):
    """(hazards module, [(model, clock, step, lanes, reads, writes)]) of one checked pass."""
    import emu_speed
    if baseline:
        emu = emu_speed._emulators(baseline)["baseline"]
        hazards = importlib.import_module("ptx2sass.emu_base.hazards")
    else:
        emu = emu_speed._emulators(None)["new"]
        from ptx2sass.emu import hazards
    runs = emu_speed._runs(emu, corpus, kernels)
    calls = []
    real = hazards.TimingModel.end

    def end(self, clock, step, lanes, reads, writes):
        calls.append((self, clock, step, lanes, tuple(reads), tuple(writes)))
        real(self, clock, step, lanes, reads, writes)
    hazards.TimingModel.end = end
    try:
        for run in runs:
            run(True)
    finally:
        hazards.TimingModel.end = real
    return hazards, calls


def replay(hazards, calls) -> float:
    """Process seconds to replay `calls`, each original clock replaced by a fresh one."""
    fresh = {}
    new = hazards.WarpTiming
    start = time.process_time()
    for model, clock, step, lanes, reads, writes in calls:
        c = fresh.get(id(clock))
        if c is None:
            c = fresh[id(clock)] = new()
        model.end(c, step, lanes, reads, writes)
    return time.process_time() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--corpus", default="zluda", choices=("zluda", "tinygrad"))
    ap.add_argument("--kernels", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    hazards, calls = capture(args.baseline, args.corpus, args.kernels)
    replay(hazards, calls)
    gc.disable()
    times = sorted(replay(hazards, calls) for _ in range(args.repeat))
    gc.enable()
    print(f"{hazards.__file__}: {len(calls)} end() calls; best {times[0] * 1e3:.2f} ms, "
          f"median {times[len(times) // 2] * 1e3:.2f} ms, {times[0] / len(calls) * 1e6:.2f} us a call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
