"""The one-command GPU check (docs/gpu_check.md).

    python -m tools.gpu_check prepare --arch sm_90 --out .gpu_bundle      # here: ptxas, ptx2sass, emulator
    python3 -m tools.gpu_check run --bundle .gpu_bundle --report $OUT/gpu_report.json   # on the GPU

`run` needs only the standard library (libcuda.so.1 through ctypes); without a GPU it
writes a report that says "skipped" and exits 4."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _prepare(args) -> int:
    from .prepare import prepare
    from .sources import CORPORA, EXTRA_CORPORA
    corpora = args.corpus or list(CORPORA)
    unknown = [c for c in corpora if c not in CORPORA + EXTRA_CORPORA]
    if unknown:
        print(f"gpu_check: unknown corpus {', '.join(unknown)} (known: {', '.join(CORPORA + EXTRA_CORPORA)})",
              file=sys.stderr)
        return 2
    kinds = None
    if args.calibration is not None:
        kinds = [] if args.calibration == "none" else args.calibration.split(",")
    prepare(args.arch, Path(args.out), corpora, args.limit, args.max_threads, args.jobs, kinds,
            tinygrad=not args.no_tinygrad, wheels=not args.no_wheels, pattern=args.select)
    return 0


def _run(args) -> int:
    from .run import run
    stages = tuple(args.stages.split(","))
    return run(Path(args.bundle), Path(args.report), budget_s=args.budget_s, device=args.device,
               repeats=args.repeats, unit_timeout=args.unit_timeout, stages=stages,
               variants=tuple(args.variants.split(",")), select=args.select,
               tinygrad_devices=tuple(args.tinygrad_devices.split(",")) if args.tinygrad_devices else None)


def _variants(args) -> int:
    from .variants import TRANSFORMS, add_variants, transform
    names = args.variants.split(",")
    unknown = []
    for n in names:
        try:
            transform(n)
        except KeyError:
            unknown.append(n)
    if unknown:
        print(f"gpu_check: unknown variant {', '.join(unknown)} (known: {', '.join(TRANSFORMS)})", file=sys.stderr)
        return 2
    return 0 if add_variants(Path(args.bundle), args.select, names) else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.gpu_check", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="build the bundle (needs ptx2sass, the pinned ptxas, the emulator)")
    p.add_argument("--arch", default="sm_90", help="the GPU's arch (default sm_90: H100/H200)")
    p.add_argument("--out", default=".gpu_bundle")
    p.add_argument("--corpus", action="append",
                   help="zluda, cuda, tinygrad, triton, llvm (repeatable; default these five), tinygrad_large")
    p.add_argument("--limit", type=int, default=None, help="launches per corpus (a fixed spread by hash)")
    p.add_argument("--max-threads", type=int, default=16384, help="leave out launches with more threads")
    p.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    p.add_argument("--calibration", default=None,
                   help="calibration kinds, comma-separated (chain, throughput, chase, bank, occupancy, "
                        "stream, empty), or 'none'; default all")
    p.add_argument("--no-tinygrad", action="store_true", help="no tinygrad references (corpus or programs)")
    p.add_argument("--no-wheels", action="store_true", help="do not download the wheels the GPU machine lacks")
    p.add_argument("--select", default=None, help="regular expression over `corpus/key`: only the launches it matches")
    v = sub.add_parser("variants", help="add experiment cubins (control-code rewrites) to a bundle's launches")
    v.add_argument("--bundle", default=".gpu_bundle")
    v.add_argument("--select", required=True, help="regular expression over launch ids")
    v.add_argument("--variants", default="slow", help="comma-separated: slow, ldgsts_spaced, ltc128b, barrier_waits")
    r = sub.add_parser("run", help="run a bundle on the GPU and write the report")
    r.add_argument("--bundle", default=".gpu_bundle")
    r.add_argument("--report", default="gpu_report.json")
    r.add_argument("--budget-s", type=float, default=420.0)
    r.add_argument("--device", default="cuda", choices=("cuda", "emulator"),
                   help="'emulator' stands in for a GPU (tests of this tool)")
    r.add_argument("--repeats", type=int, default=5, help="timed launches per cubin, after one warm-up")
    r.add_argument("--unit-timeout", type=float, default=30.0, help="seconds before a silent worker is killed")
    r.add_argument("--stages", default="launches,calibration,tinygrad")
    r.add_argument("--variants", default="ptxas,ours",
                   help="cubins to run per launch; 'all' adds every experiment variant in the bundle")
    r.add_argument("--select", default=None, help="regular expression: only launches/benchmarks whose id matches")
    r.add_argument("--tinygrad-devices", default=None,
                   help="tinygrad devices for its programs (default CUDA:SASS,CUDA:PTX; NV:SASS on request: it hung a lent machine; "
                        "SASSEMU with --device emulator)")
    sub.add_parser("worker", help="(internal) the process that runs units on the device")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        from .worker import main as worker_main
        return worker_main(argv[1:])
    args = ap.parse_args(argv)
    return {"prepare": _prepare, "variants": _variants, "run": _run}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
