"""A kernel's repeated launches: the tinygrad backend's test programs' captured launches
(bench/emu_tinygrad_launches.py --capture) replayed L times on the same program objects in
one process, CPU time of each round (all programs' launches), for this checkout's emulator
and other checkouts' (`--tree ROOT`, each with its own .venv), interleaved: a fresh process
per (variant, run), variants taking turns, so they share the machine's load.

The first round decodes and runs every step for the first time; later rounds find what
earlier ones made on the program (`_decoded`: steps, their tiers, fused runs), as a program
launched again in one process does (tinygrad keeps its program objects). emu31 found the
second round costing more than the first (fused runs made and compiled there).

    .venv/bin/python bench/emu_repeat_launch.py --capture launches.pkl
    .venv/bin/python bench/emu_repeat_launch.py --replay launches.pkl [--launches 4] [--runs 3]
        [--tree ROOT ...] [--hot N ...] [--tree-hot N ...] [--write times.json]

`--hot N` adds a variant of this checkout with `emu.blocks.HOT = N` (uses of a fused run as a
loop before its code is generated; 0: generated on first use, as before emu32); `--tree-hot N`
the same for each `--tree` (without it, the tree as it is). Every
variant's output digests (each launch's buffers after it) must agree, round by round.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def rounds(path: Path, launches: int, hot: int | None) -> dict:
    """One process's replay: CPU seconds of each round, and a digest of every output."""
    import numpy as np

    from ptx2sass.emu import registry
    from ptx2sass.emu.launch import Launch
    from ptx2sass.encoder import sass_text  # noqa: F401  (immediates' float spellings, as the device loads)
    registry.load_all()
    if hot is not None:
        from ptx2sass.emu import blocks
        blocks.HOT = hot
    kept = pickle.loads(path.read_bytes())
    records = [r for rs in kept.values() for r in rs]
    programs = {}
    for r in records:             # unpickled outside the timing (the user's load step)
        if r["program"] not in programs:
            programs[r["program"]] = pickle.loads(r["program"])
    times, digest = [], hashlib.sha256()
    for _ in range(launches):
        start = time.process_time()
        for r in records:
            launch = Launch(programs[r["program"]], r["grid"], r["block"], hazard_check=False)
            placed = {k: launch.gmem.allocate(k, len(v), np.frombuffer(v, np.uint8))
                      for k, v in r["buffers"].items()}
            launch.set_params(r["params"], placed)
            launch.run()
            for k in sorted(placed):
                digest.update(bytes(placed[k].data))
        times.append(time.process_time() - start)
    return {"times": times, "digest": digest.hexdigest(), "launches": len(records)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", type=Path)
    ap.add_argument("--replay", type=Path)
    ap.add_argument("--launches", type=int, default=4, help="rounds of every launch per process")
    ap.add_argument("--runs", type=int, default=3, help="processes per variant, interleaved")
    ap.add_argument("--tree", action="append", default=[], help="another checkout (with .venv)")
    ap.add_argument("--hot", type=int, action="append", default=[], help="a variant of this checkout with blocks.HOT = N")
    ap.add_argument("--tree-hot", type=int, action="append", default=[],
                    help="variants of each --tree with blocks.HOT = N")
    ap.add_argument("--write", type=Path)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--one-hot", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.capture:
        sys.path.insert(0, str(HERE))
        import emu_tinygrad_launches
        emu_tinygrad_launches.capture(args.capture)
        return 0
    if args.one:                  # a worker: print one replay's result as JSON
        print(json.dumps(rounds(args.replay, args.launches, args.one_hot)))
        return 0
    variants = [("this", str(REPO), None)] if not args.hot else []
    variants += [(f"this HOT={h}", str(REPO), h) for h in args.hot]
    variants += [(f"tree {t}", t, None) for t in args.tree if not args.tree_hot]
    variants += [(f"tree {t} HOT={h}", t, h) for t in args.tree for h in args.tree_hot]
    results: dict[str, list] = {name: [] for name, _, _ in variants}
    digests = {}
    for run in range(args.runs):
        for name, root, hot in variants:
            python = str(Path(root) / ".venv" / "bin" / "python")
            cmd = [python, str(Path(__file__).resolve()), "--one", "--replay", str(args.replay.resolve()),
                   "--launches", str(args.launches)]
            if hot is not None:
                cmd += ["--one-hot", str(hot)]
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
            if out.returncode:
                print(out.stderr[-2000:])
                return 1
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[name].append(r["times"])
            digests.setdefault(r["digest"], []).append(name)
            load = os.getloadavg()[0]
            print(f"run {run + 1} {name:40} " + " / ".join(f"{t * 1e3:6.0f}" for t in r["times"])
                  + f" ms  (load {load:.1f})", flush=True)
    print("median of runs, ms per round:")
    for name, runs in results.items():
        med = [statistics.median(col) * 1e3 for col in zip(*runs)]
        print(f"  {name:40} " + " / ".join(f"{t:6.0f}" for t in med))
    same = len(digests) == 1
    print("outputs identical across variants and runs" if same else f"outputs DIFFER: {digests}")
    if args.write:
        args.write.write_text(json.dumps({"results": results, "same_outputs": same}))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
