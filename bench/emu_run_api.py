"""ZLUDA launches through the public API, `emu.run(cubin bytes, ...)`: unlike
`bench/emu_speed.py` (each kernel loaded once, launches timed alone), every launch here
passes the cubin's bytes, so parsing and decoding count wherever `run` does them.

Each kernel is launched `--launches` times in a row (fresh NumPy buffers each time), a pass
over the corpus's 179 kernels; each pass's CPU time, best of `--passes`; with `--baseline
ROOT`, another checkout's emulator (bench/emu_baseline.py) in the same run, interleaved.
Every launch's output is compared with ZLUDA's recorded bytes.

    .venv/bin/python bench/emu_run_api.py [--baseline ROOT] [--launches 1] [--passes 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _pass(run, items, launches: int, hz: bool) -> tuple[int, int]:
    """(warp-instructions, right outputs) of one pass."""
    import numpy as np
    warp = right = 0
    for entry, cubin in items:
        for _ in range(launches):
            arrays = {"output": np.zeros(entry["output_alloc_bytes"], np.uint8)}
            if entry["input"] is not None:
                arrays["input"] = np.frombuffer(bytes.fromhex(entry["input"]["hex"]), np.uint8).copy()
            result = run(cubin, entry["kernel"], entry["grid"], entry["block"],
                         [arrays[p] for p in entry["params"]],
                         dynamic_shared_bytes=entry["dynamic_shared_bytes"], hazard_check=hz)
            warp += result.instructions
            right += arrays["output"][:entry["output_bytes"]].tobytes() == bytes.fromhex(entry["output"]["hex"])
    return warp, right


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="another checkout's root: time its emulator's run() too")
    ap.add_argument("--launches", type=int, default=1, help="launches of each kernel in a row")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args(argv)
    from ptx2sass.emu import launch
    from tools import emu_testing as testing
    runs = {"new": launch.run}
    if args.baseline:
        import emu_baseline
        runs = {"baseline": emu_baseline.load(args.baseline).launch.run, **runs}
    items = [(e, c) for e in testing.zluda_manifest() if (c := testing.zluda_cubin(e)) is not None]
    n = len(items) * args.launches
    print(f"ZLUDA through emu.run(cubin bytes): {len(items)} kernels, each launched {args.launches}x "
          f"in a row, CPU time of a pass, best of {args.passes}, interleaved")
    for hz in (False, True):
        best = {k: float("inf") for k in runs}
        got = {}
        for _ in range(args.passes):
            for name, run in runs.items():
                t = time.process_time()
                got[name] = _pass(run, items, args.launches, hz)
                best[name] = min(best[name], time.process_time() - t)
        for name in runs:
            warp, right = got[name]
            ratio = f", {best['baseline'] / best[name]:.2f}x baseline" if name != "baseline" and "baseline" in best else ""
            print(f"  hazards {'on ' if hz else 'off'} {name:9} {best[name]:.3f} s, {best[name] / n * 1e6:6.0f} us/launch, "
                  f"{warp / best[name]:9,.0f} warp-ins/s, {right}/{n} outputs right{ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
