"""Frontend speed (issue 5): parse + check + SSA per PTX file, in-process, against the pinned
ptxas's whole compile of the same file, both measured in the same run.

    .venv/bin/python bench/frontend_speed.py [--repeat 3] [--limit N] [--arch sm_89] [--all]

Each figure is the best of `--repeat` runs. Times are CPU seconds by default (this
process's for the frontend, the child's user+system for ptxas): on a machine shared with
other jobs, wall-clock figures mostly measure the queue for a core. `--clock wall` gives
wall-clock time instead. The frontend is warmed up first (its parser tables loaded), so
the figure is the per-file cost; its one-off import time is printed separately. Files
ptxas rejects are left out.
The target: median ratio under 10% of ptxas's time.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = {"cuda": REPO / "tests" / "corpus" / "cuda",
           "tinygrad": REPO / "tests" / "corpus" / "tinygrad",
           "zluda": REPO.parent / "shared" / "corpus" / "zluda"}


def corpus_files(limit_per_corpus: int | None) -> list[tuple[str, Path]]:
    """(corpus, file) pairs; with a limit, an even spread over each corpus."""
    out = []
    for name, folder in CORPORA.items():
        files = sorted(folder.glob("*.ptx")) if folder.is_dir() else []
        if limit_per_corpus and len(files) > limit_per_corpus:
            step = len(files) / limit_per_corpus
            files = [files[int(i * step)] for i in range(limit_per_corpus)]
        out += [(name, f) for f in files]
    return out


CLOCK = {"mode": "cpu"}


def now() -> float:
    """This process's clock: CPU time (default) or wall-clock time."""
    return time.process_time() if CLOCK["mode"] == "cpu" else time.perf_counter()


def timed_child(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """Run a command; its CPU time (user + system, all threads) or its wall-clock time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return proc, (cpu if CLOCK["mode"] == "cpu" else wall)


def best_child(repeat: int, cmd: list[str]) -> float:
    return min(timed_child(cmd)[1] for _ in range(repeat))


def frontend_pass(text: str, name: str, arch: str) -> tuple[float, float, float]:
    """Seconds spent in parse, check and SSA construction."""
    from ptx2sass import frontend
    from ptx2sass.frontend.to_ssa import lower_module
    t0 = now()
    module = frontend.parse(text, name)
    t1 = now()
    frontend.check(module, arch)
    t2 = now()
    lower_module(module)
    t3 = now()
    return t1 - t0, t2 - t1, t3 - t2


def best_phases(repeat: int, text: str, name: str, arch: str) -> tuple[float, float, float]:
    return min((frontend_pass(text, name, arch) for _ in range(repeat)), key=sum)


def ptxas_command(ptxas: str, path: Path, arch: str, out: str) -> list[str]:
    return [ptxas, f"-arch={arch}", str(path), "-o", out]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="files per corpus (even spread)")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--all", action="store_true", help="print every file, not only a summary")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args(argv)
    CLOCK["mode"] = args.clock

    from ptx2sass import CompileError, oracle
    ptxas = str(oracle.tool_path("ptxas"))

    start = now()
    import ptx2sass.frontend  # noqa: F401  (the import is what is timed)
    import ptx2sass.frontend.to_ssa  # noqa: F401
    import_s = now() - start
    warm_s = sum(frontend_pass(".version 8.0\n.target sm_89\n.address_size 64\n",
                               "warm.ptx", args.arch))

    rows, refused, failed = [], 0, []
    with tempfile.TemporaryDirectory(prefix="ptx2sass-bench-") as tmp:
        out = str(Path(tmp) / "out.cubin")
        for corpus, path in corpus_files(args.limit):
            if timed_child(ptxas_command(ptxas, path, args.arch, out))[0].returncode != 0:
                refused += 1
                continue
            text = path.read_bytes().decode("latin-1")
            try:
                frontend_pass(text, path.name, args.arch)
            except CompileError as e:
                failed.append(f"{corpus}/{path.name}: {e}")
                continue
            phases = best_phases(args.repeat, text, path.name, args.arch)
            ours = sum(phases)
            theirs = best_child(args.repeat, ptxas_command(ptxas, path, args.arch, out))
            rows.append((f"{corpus}/{path.name}", len(text), ours, theirs, ours / theirs,
                         phases))

    if args.all:
        print(f"{'file':56} {'bytes':>7} {'frontend ms':>11} {'(parse/check/ssa)':>20} "
              f"{'ptxas ms':>9} {'ratio':>7}")
        for name, size, ours, theirs, ratio, phases in sorted(rows, key=lambda r: r[4]):
            split = "/".join(f"{p * 1e3:.1f}" for p in phases)
            print(f"{name[:56]:56} {size:7d} {ours * 1e3:11.2f} {split:>20} "
                  f"{theirs * 1e3:9.2f} {ratio:7.1%}")
    print(f"frontend import {import_s * 1e3:.0f} ms, first (warm-up) call {warm_s * 1e3:.0f} ms;"
          f" arch {args.arch}; best of {args.repeat}; {args.clock} time")
    for corpus in CORPORA:
        sub = [r for r in rows if r[0].startswith(corpus + "/")]
        if sub:
            _summary(corpus, sub)
    if rows:
        _summary("all", rows)
        worst = max(rows, key=lambda r: r[4])
        print(f"worst file: {worst[0]} ({worst[2] * 1e3:.1f} ms vs {worst[3] * 1e3:.1f} ms)")
    print(f"{refused} files left out (ptxas rejects them); {len(failed)} accepted by ptxas "
          "but refused by the frontend")
    for line in failed[:10]:
        print("  " + line)
    return 0


def _summary(label: str, rows) -> None:
    ratios = [r[4] for r in rows]
    ours = statistics.median(r[2] for r in rows)
    theirs = statistics.median(r[3] for r in rows)
    shares = [sum(r[5][i] for r in rows) / sum(r[2] for r in rows) for i in range(3)]
    print(f"{label:9} {len(rows):4d} files: median ratio {statistics.median(ratios):6.1%}, "
          f"worst {max(ratios):6.1%}; median frontend {ours * 1e3:6.2f} ms, "
          f"median ptxas {theirs * 1e3:6.2f} ms; time in parse/check/ssa "
          + "/".join(f"{x:.0%}" for x in shares))


if __name__ == "__main__":
    sys.exit(main())
