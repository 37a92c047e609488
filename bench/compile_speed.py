"""Compile speed (issues 6, 14), each against NVIDIA's compiler measured in the same run:

1. in-process: `ptx2sass.compile` against nvJitLink (`tools/nvjitlink.py`, ctypes on the
   pinned libnvJitLink) in this same process, per file: total, median and worst ratio.
   Targets: total <= 1.0x, median <= 1.0x, worst file <= 3x.
2. whole process: the `ptx2sass` command of a wheel installed into a fresh venv (what
   `pip install .` gives: no editable finder; `tools/wheel_env.py`), against the `ptxas`
   process on the same file: median ratio (target <= 3x). `--editable` runs this checkout's
   `python -m ptx2sass` instead.

    .venv/bin/python bench/compile_speed.py [--repeat 2] [--limit N] [--corpus NAME ...]
                                            [--no-process] [--no-in-process] [--editable]
    .venv/bin/python bench/compile_speed.py --check-only     # virtual target: start-up + frontend

Corpora: those of tools/corpora.py and `tinygrad_large` (tools/harvest_tinygrad.py --set
large), whose held-back quarter (`tools.corpora.held_back`, by content hash) is reported on
its own: it is not tuned on. Only files both compilers accept are timed; the refusals are
counted. CPU time, best of `--repeat`; children run without PYTHONDONTWRITEBYTECODE
(`--dont-write-bytecode`: with it, which must not change the figure by 10%).
`--check-only` runs both with `-arch=compute_XX`, where neither generates code: process
start, imports and the frontend, the floor under every compile.
"""
from __future__ import annotations

import argparse
import collections
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools.corpora import all_corpus_dirs, held_back, ptx_files  # noqa: E402

DEFAULT_CORPORA = ("zluda", "tinygrad", "cuda", "triton", "llvm", "tinygrad_large")


def cpu_best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def child_cpu(cmd: list[str], cwd: str) -> tuple[subprocess.CompletedProcess, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def child_best(cmd: list[str], cwd: str, repeat: int) -> float:
    return min(child_cpu(cmd, cwd)[1] for _ in range(repeat))


def corpus_files(corpora, limit: int | None) -> list[tuple[str, Path]]:
    out = []
    for name in corpora:
        files = ptx_files(name)
        if limit and len(files) > limit:
            step = len(files) / limit
            files = [files[int(i * step)] for i in range(limit)]
        out += [(name, f) for f in files]
    return out


def label(corpus: str, path: Path) -> str:
    return f"{corpus}/{path.relative_to(all_corpus_dirs()[corpus])}"


def in_process(files, arch: str, repeat: int, show_all: bool) -> list[tuple]:
    import ptx2sass
    from tools import nvjitlink
    vecadd = (REPO / "examples" / "vecadd.ptx").read_text()
    nvjitlink.compile_ptx(vecadd.encode(), arch)            # first-call set-up, untimed
    ptx2sass.compile(vecadd, arch)
    rows, refused = [], collections.Counter()
    for corpus, path in files:
        text = path.read_bytes().decode("latin-1")
        try:
            nvjitlink.compile_ptx(text.encode("latin-1"), arch)
        except nvjitlink.NvJitLinkError:
            continue                                         # NVIDIA refuses it too
        try:
            ptx2sass.compile(text, arch)                     # warm: first-use caches
        except ptx2sass.CompileError as e:
            refused[str(e).split(": ", 1)[-1][:90]] += 1
            continue
        gc.collect()
        ours = cpu_best(lambda: ptx2sass.compile(text, arch), repeat)
        theirs = cpu_best(lambda: nvjitlink.compile_ptx(text.encode("latin-1"), arch), repeat)
        rows.append((corpus, label(corpus, path), ours, theirs, held_back(path)))
        if show_all:
            print(f"  {label(corpus, path)[:70]:70} {ours * 1e3:8.1f} {theirs * 1e3:8.1f} "
                  f"{ours / theirs:6.2f}x", flush=True)
    print(f"in-process, {arch}, CPU time best of {repeat}: ptx2sass.compile vs nvJitLink in "
          f"the same process (targets: total <= 1.0x, median <= 1.0x, worst <= 3x)")
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault(r[0] + (" held-back" if r[4] else ""), []).append(r)
    for name, sub in groups.items():
        _in_process_line(name, sub)
    if rows:
        _in_process_line("all", rows)
        _in_process_line("all tuned", [r for r in rows if not r[4]])
    for reason, n in refused.most_common(5):
        print(f"  refused by ptx2sass only: {n:4d}  {reason}")
    return rows


def _in_process_line(name: str, rows) -> None:
    if not rows:
        return
    ours, theirs = sum(r[2] for r in rows), sum(r[3] for r in rows)
    ratios = [r[2] / r[3] for r in rows]
    worst = max(rows, key=lambda r: r[2] / r[3])
    print(f"  {name:26} {len(rows):4d} files: total {ours:7.2f} s vs {theirs:7.2f} s = "
          f"{ours / theirs:5.2f}x, median {statistics.median(ratios):5.2f}x, worst "
          f"{max(ratios):5.2f}x ({worst[1]})")


def whole_process(files, arch: str, repeat: int, editable: bool, check_only: bool,
                  show_all: bool, no_bytecode_writes: bool = False) -> None:
    from ptx2sass import oracle
    ptxas = str(oracle.tool_path("ptxas"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if no_bytecode_writes:        # as container images often run: start-up must not care
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    target = arch.replace("sm_", "compute_") if check_only else arch
    with tempfile.TemporaryDirectory(prefix="ptx2sass-bench-") as tmp:
        if editable:
            ours_cmd, how = [sys.executable, "-m", "ptx2sass"], "this checkout's python -m ptx2sass"
        else:
            from tools import wheel_env
            env = wheel_env.install(wheel_env.build_wheel(Path(tmp)), Path(tmp))
            ours_cmd, how = [str(env["bin"] / "ptx2sass")], "ptx2sass from a wheel in a fresh venv"
        out = str(Path(tmp) / "out.cubin")
        rows, refused = [], 0
        for corpus, path in files:
            theirs_cmd = [ptxas, f"-arch={target}", str(path), "-o", out]
            if child_cpu(theirs_cmd, tmp)[0].returncode != 0:
                continue
            mine = ours_cmd + [f"-arch={target}", str(path), "-o", out]
            if child_cpu(mine, tmp)[0].returncode != 0:        # also warms caches
                refused += 1
                continue
            ours, theirs = child_best(mine, tmp, repeat), child_best(theirs_cmd, tmp, repeat)
            rows.append((corpus, label(corpus, path), ours, theirs))
            if show_all:
                print(f"  {label(corpus, path)[:70]:70} {ours * 1e3:8.1f} {theirs * 1e3:8.1f} "
                      f"{ours / theirs:6.2f}x", flush=True)
    mode = "check only (virtual target)" if check_only else "full compile"
    print(f"whole process, {mode}, -arch={target}, CPU time best of {repeat}: {how} vs the "
          f"ptxas process (target: median <= 3x)")
    for corpus in dict.fromkeys(r[0] for r in rows):
        _process_line(corpus, [r for r in rows if r[0] == corpus])
    _process_line("all", rows)
    if refused:
        print(f"  {refused} files accepted by ptxas but refused by ptx2sass")


def _process_line(name: str, rows) -> None:
    if not rows:
        return
    ratios = [r[2] / r[3] for r in rows]
    print(f"  {name:26} {len(rows):4d} files: median {statistics.median(ratios):5.2f}x, worst "
          f"{max(ratios):5.2f}x; median ptx2sass {statistics.median(r[2] for r in rows) * 1e3:.1f}"
          f" ms, ptxas {statistics.median(r[3] for r in rows) * 1e3:.1f} ms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="files per corpus (even spread)")
    ap.add_argument("--corpus", action="append", choices=DEFAULT_CORPORA,
                    help="corpora to time (default: all)")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--no-process", action="store_true", help="skip the whole-process part")
    ap.add_argument("--no-in-process", action="store_true", help="skip the in-process part")
    ap.add_argument("--editable", action="store_true",
                    help="whole process: this checkout's `python -m ptx2sass`, not a wheel")
    ap.add_argument("--check-only", action="store_true",
                    help="whole process only, virtual target: no code generation on either side")
    ap.add_argument("--dont-write-bytecode", action="store_true",
                    help="whole process: run the children with PYTHONDONTWRITEBYTECODE=1")
    ap.add_argument("--all", action="store_true", help="print every file")
    args = ap.parse_args(argv)
    files = corpus_files(args.corpus or DEFAULT_CORPORA, args.limit)
    if not args.no_in_process and not args.check_only:
        in_process(files, args.arch, args.repeat, args.all)
    if not args.no_process:
        whole_process(files, args.arch, args.repeat, args.editable, args.check_only, args.all,
                      args.dont_write_bytecode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
