"""Compile speed (issue 6): the whole `ptx2sass` process against the whole `ptxas` process
on the same file, same run; and `ptx2sass.compile` in-process per file.

    .venv/bin/python bench/compile_speed.py [--repeat 3] [--limit N] [--arch sm_89] [--all]
    .venv/bin/python bench/compile_speed.py --check-only     # virtual target: start-up + frontend

Only files both compilers accept are timed (ours refuses kernels its code generator does not
support yet); the refusals are counted, with their most common reasons. `--check-only`
runs both with `-arch=compute_XX`, where neither generates code: it measures process start,
imports and the frontend, the floor under every compile. Each time is the best of
`--repeat`, in CPU time by default (see bench/frontend_speed.py; `--clock wall` for
wall-clock). The target: median whole-process ratio no worse than 2x ptxas.

The children run without PYTHONDONTWRITEBYTECODE: an installed ptx2sass has its bytecode
compiled, and with the variable set (as some shells here have it) every process recompiles
every module from source (~110 ms), which is no cost a user pays. The encoding table's
marshal cache (encoder/table_cache.py) is warmed by the first, untimed run of each file.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from frontend_speed import (CLOCK, CORPORA, best_child, corpus_files, now,  # noqa: E402
                            timed_child)


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return timed_child(cmd)[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="files per corpus (even spread)")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--check-only", action="store_true",
                    help="virtual target: no code generation on either side")
    ap.add_argument("--all", action="store_true", help="print every file")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args(argv)
    CLOCK["mode"] = args.clock
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    from ptx2sass import oracle
    ptxas = str(oracle.tool_path("ptxas"))
    arch = args.arch.replace("sm_", "compute_") if args.check_only else args.arch
    ours_cmd = [sys.executable, "-m", "ptx2sass"]

    rows, refused_by_ptxas, refusals = [], 0, collections.Counter()
    in_process = []
    with tempfile.TemporaryDirectory(prefix="ptx2sass-bench-") as tmp:
        out = str(Path(tmp) / "out.cubin")
        for corpus, path in corpus_files(args.limit):
            theirs_cmd = [ptxas, f"-arch={arch}", str(path), "-o", out]
            if run(theirs_cmd).returncode != 0:
                refused_by_ptxas += 1
                continue
            mine = ours_cmd + [f"-arch={arch}", str(path), "-o", out]
            first = run(mine)
            if first.returncode != 0:
                lines = first.stderr.strip().splitlines()
                reason = lines[0].split(": ", 1)[-1] if lines else f"exit {first.returncode}"
                refusals[reason[:90]] += 1
                continue
            ours = best_child(args.repeat, mine)
            theirs = best_child(args.repeat, theirs_cmd)
            rows.append((f"{corpus}/{path.name}", ours, theirs, ours / theirs))
            if not args.check_only:
                in_process.append((path, _in_process_time(path, arch, args.repeat)))

    mode = "check only (virtual target)" if args.check_only else "full compile"
    print(f"{mode}, -arch={arch}, best of {args.repeat}, {args.clock} time; ptx2sass runs as "
          f"`{Path(sys.executable).name} -m ptx2sass`")
    if args.all:
        print(f"{'file':60} {'ptx2sass ms':>12} {'ptxas ms':>9} {'ratio':>7}")
        for name, ours, theirs, ratio in sorted(rows, key=lambda r: r[3]):
            print(f"{name[:60]:60} {ours * 1e3:12.1f} {theirs * 1e3:9.1f} {ratio:7.2f}x")
    for corpus in CORPORA:
        sub = [r for r in rows if r[0].startswith(corpus + "/")]
        if sub:
            _summary(corpus, sub)
    if rows:
        _summary("all", rows)
    if in_process:
        times = [t for _, t in in_process]
        print(f"in-process ptx2sass.compile: median {statistics.median(times) * 1e3:.1f} ms, "
              f"worst {max(times) * 1e3:.1f} ms over {len(times)} files")
    print(f"{refused_by_ptxas} files left out (ptxas rejects them); "
          f"{sum(refusals.values())} accepted by ptxas but refused by ptx2sass")
    for reason, n in refusals.most_common(10):
        print(f"  {n:4d}  {reason}")
    return 0


def _in_process_time(path: Path, arch: str, repeat: int) -> float:
    from ptx2sass.cli import _code_generator
    generate = _code_generator()
    text = path.read_bytes().decode("latin-1")
    best = float("inf")
    for _ in range(repeat):
        start = now()
        generate(text, arch)
        best = min(best, now() - start)
    return best


def _summary(label: str, rows) -> None:
    ratios = [r[3] for r in rows]
    print(f"{label:9} {len(rows):4d} files: median ratio {statistics.median(ratios):.2f}x, "
          f"worst {max(ratios):.2f}x; median ptx2sass "
          f"{statistics.median(r[1] for r in rows) * 1e3:.1f} ms, median ptxas "
          f"{statistics.median(r[2] for r in rows) * 1e3:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
