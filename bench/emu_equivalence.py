"""Does the emulator still compute exactly what it did? A sweep of the ZLUDA, tinygrad and CUDA
corpora under several launch configurations, recording for each launch a hash of every
output buffer, the warp-instruction count, the cycle estimate, the hazards and convergence
hazards (their text) and any fault; written to a JSON file and compared with another.

    .venv/bin/python bench/emu_equivalence.py --write /tmp/ref.json [--baseline ROOT]
    .venv/bin/python bench/emu_equivalence.py --check /tmp/ref.json

`--launches N` records, for each (launch, configuration), the last of N launches of the same
program: what a program keeps from its earlier launches (specialised forms, fused runs, the
checker's kept trails) is then what computes the record.

`--baseline ROOT` runs the emulator of another checkout (bench/emu_baseline.py) instead of
this one, e.g. to record the reference from `main` after this checkout has changed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

CONFIGS = {          # name → (hazard_check, reconverge)
    "opt": (False, "optimistic"),
    "opt+hz": (True, "optimistic"),
    "exp+hz": (True, "explicit"),
}


def _digest(result) -> dict:
    h = hashlib.sha256()
    for name in sorted(result.buffers):
        h.update(name.encode() + b"\0" + result.buffers[name])
    return {"buffers": h.hexdigest()[:16], "instructions": result.instructions, "cycles": result.cycles,
            "hazards": [str(x) for x in result.hazards],
            "convergence_hazards": [str(x) for x in result.convergence_hazards]}


def _record(outcome) -> dict:
    rec = {"ok": bool(getattr(outcome, "passed", getattr(outcome, "ok", False))), "reason": outcome.reason}
    if outcome.result is not None:
        rec.update(_digest(outcome.result))
    return rec


def _last(n: int, launch):
    """The outcome of the last of `n` calls of `launch()`."""
    for _ in range(n - 1):
        launch()
    return launch()


def sweep(emu, corpora, configs, tinygrad_threads: int, limit: int | None, log=print, launches: int = 1) -> dict:
    testing, load_program = emu.testing, emu.loader.load_program
    out = {}
    if "zluda" in corpora:
        for entry in testing.zluda_manifest()[:limit]:
            cubin = testing.zluda_cubin(entry)
            if cubin is None:
                continue
            program = load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))
            for c in configs:
                hz, mode = CONFIGS[c]
                out[f"zluda/{entry['name']}/{c}"] = _record(_last(launches, lambda: testing.run_zluda(
                    entry, hazard_check=hz, program=program, reconverge=mode)))
        log(f"zluda done: {len(out)} records")
    if "tinygrad" in corpora:
        kernels = [k for k in testing.tinygrad_manifest()
                   if math.prod(k["grid"]) * math.prod(k["block"]) <= tinygrad_threads]
        for entry in sorted(kernels, key=lambda k: k["sha256"])[:limit]:
            cubin = testing.tinygrad_cubin(entry)
            program = load_program(cubin, entry["entry"], testing.cubin_listing_decoder(cubin))
            for c in configs:
                hz, mode = CONFIGS[c]
                out[f"tinygrad/{entry['file']}/{c}"] = _record(_last(launches, lambda: testing.run_tinygrad(
                    entry, hazard_check=hz, program=program, reconverge=mode)))
        log(f"tinygrad done: {len(out)} records")
    if "cuda" in corpora:
        ref = testing.cuda_reference_module()
        for entry in ref.load_manifest()[:limit]:
            for c in configs:
                hz, mode = CONFIGS[c]
                out[f"cuda/{entry['name']}/{c}"] = _record(_last(launches, lambda: testing.run_cuda_launch(
                    entry, ref, hazard_check=hz, reconverge=mode)))
        log(f"cuda done: {len(out)} records")
    return out


def compare(want: dict, got: dict) -> list[str]:
    diffs = []
    for key in sorted(set(want) | set(got)):
        a, b = want.get(key), got.get(key)
        if a != b:
            if a is None or b is None:
                diffs.append(f"{key}: only in {'reference' if b is None else 'this run'}")
                continue
            fields = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
            diffs.append(f"{key}: " + "; ".join(f"{f}: {a.get(f)!r:.200} -> {b.get(f)!r:.200}" for f in fields))
    return diffs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", type=Path)
    ap.add_argument("--check", type=Path)
    ap.add_argument("--baseline", type=Path, help="run another checkout's emulator (its root)")
    ap.add_argument("--corpus", action="append", choices=("zluda", "tinygrad", "cuda"))
    ap.add_argument("--config", action="append", choices=tuple(CONFIGS))
    ap.add_argument("--tinygrad-threads", type=int, default=4096)
    ap.add_argument("--limit", type=int, default=None, help="first N launches of each corpus")
    ap.add_argument("--launches", type=int, default=1, help="record the last of N launches of each")
    args = ap.parse_args(argv)
    if args.baseline:
        import emu_baseline
        emu = emu_baseline.load(args.baseline)
    else:
        from types import SimpleNamespace

        from ptx2sass.emu import loader
        from tools import emu_testing as testing
        emu = SimpleNamespace(loader=loader, testing=testing)
    start = time.perf_counter()
    got = sweep(emu, args.corpus or ("zluda", "tinygrad", "cuda"), args.config or tuple(CONFIGS),
                args.tinygrad_threads, args.limit, launches=args.launches)
    print(f"{len(got)} records in {time.perf_counter() - start:.0f} s")
    if args.write:
        args.write.write_text(json.dumps(got, indent=0, sort_keys=True))
    if args.check:
        want = json.loads(args.check.read_text())
        if args.limit or args.corpus or args.config:      # a partial run: the records it made
            want = {k: v for k, v in want.items() if k in got}
            got = {k: v for k, v in got.items() if k in want}
        diffs = compare(want, got)
        for d in diffs:
            print(d)
        print(f"{len(diffs)} of {len(got)} records differ from {args.check}")
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
