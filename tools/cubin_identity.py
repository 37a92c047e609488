"""sha256 of `ptx2sass.cli.main`'s cubin, exit code and stderr per (file, mode: plain, -g,
-lineinfo), with the compiler taken from one checkout ROOT: for before/after checks of a
change that must not change the output (issue 21's speed work).

    .venv/bin/python tools/cubin_identity.py ROOT OUT.json [--inputs DIR] [--corpus 80]
    .venv/bin/python tools/cubin_identity.py --compare A.json B.json

ROOT may be another checkout (e.g. `git worktree add --detach /tmp/base main`): a meta-path
finder maps `ptx2sass` and its subpackages (emu, encoder, frontend, regalloc, sched) to it,
whatever the venv's editable install points at. The corpus sample: tests/corpus without
invalid/ and tinygrad_large/, sorted, `random.Random(7).shuffle`, the first N. One process
compiles everything: cub_device's cubins vary between processes and runs on main itself.
`python tools/cubin_identity.py --run ROOT ptx2sass-args...` runs that checkout's command line.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.abc
import importlib.util
import io
import json
import os
import random
import sys

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "corpus")
ZLUDA = os.path.normpath(os.path.join(os.path.dirname(os.path.dirname(CORPUS)), "..", "shared", "corpus", "zluda"))
SUBPACKAGES = ("emu", "encoder", "frontend", "regalloc", "sched")


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root: str):
        self.map = {"ptx2sass": os.path.join(root, "ptx2sass")}
        self.map.update({f"ptx2sass.{s}": os.path.join(root, s) for s in SUBPACKAGES})

    def find_spec(self, fullname, path=None, target=None):
        p = self.map.get(fullname)
        if p is None:
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(p, "__init__.py"),
                                                      submodule_search_locations=[p])


def use(root: str) -> None:
    """Import ptx2sass from checkout `root` (before anything imported it)."""
    root = os.path.abspath(root)
    sys.meta_path.insert(0, _Finder(root))
    import ptx2sass
    assert ptx2sass.__file__.startswith(root), ptx2sass.__file__


def corpus_sample(n: int, zluda: bool = False) -> list[str]:
    """The first n of the sample; with `zluda`, the shared ZLUDA corpus's files (as
    `zluda/<path>`) join the list before the shuffle."""
    files = sorted(os.path.relpath(os.path.join(d, f), CORPUS) for d, _, fs in os.walk(CORPUS)
                   for f in fs if f.endswith(".ptx"))
    files = [f for f in files if not f.startswith(("invalid/", "tinygrad_large/"))]
    if zluda:
        files = sorted(files + [f"zluda/{os.path.relpath(d, ZLUDA)}/{f}".replace("/./", "/")
                                for d, _, fs in os.walk(ZLUDA) for f in fs if f.endswith(".ptx")])
    random.Random(7).shuffle(files)
    return [os.path.join(ZLUDA, f[6:]) if f.startswith("zluda/") else os.path.join(CORPUS, f)
            for f in files[:n]]


def hashes(files: list[str], arch: str, tmp: str) -> dict[str, list]:
    from ptx2sass import cli
    out = {}
    for f in files:
        for mode, extra in (("plain", []), ("g", ["-g"]), ("lineinfo", ["-lineinfo"])):
            if os.path.exists(tmp):
                os.remove(tmp)
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    rc = cli.main([f, f"-arch={arch}", "-o", tmp] + extra)
                except SystemExit as e:
                    rc = e.code
            cubin = hashlib.sha256(open(tmp, "rb").read()).hexdigest() if os.path.exists(tmp) else None
            text = err.getvalue().replace(tmp, "OUT").encode()
            key = (os.path.relpath(f, CORPUS) if f.startswith(CORPUS) else
                   "zluda/" + os.path.relpath(f, ZLUDA) if f.startswith(ZLUDA) else f)
            out[f"{key}|{mode}"] = [
                rc, cubin, hashlib.sha256(text).hexdigest()]
            print(f, mode, rc, (cubin or "-")[:12], flush=True)
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--run"]:
        use(argv[1])
        from ptx2sass.cli import console
        sys.argv = ["ptx2sass", *argv[2:]]
        console()           # as the installed command: no interpreter teardown (it frees
        return 0            # every object of the compile one by one: ~0.8 s at nestloops:300)
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs=2)
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--inputs", help="a folder of .ptx files (bench/memory_scaling.py --keep)")
    ap.add_argument("--corpus", type=int, default=80)
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--zluda", action="store_true", help="the sample draws from ZLUDA's files too")
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.load(open(p)) for p in args.paths)
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        print(f"{len(a) - len(differ)}/{len(a)} identical", *differ, sep="\n")
        return 1 if differ else 0
    root, out = args.paths
    use(root)
    files = sorted(os.path.join(args.inputs, f) for f in os.listdir(args.inputs)
                   if f.endswith(".ptx")) if args.inputs else []
    files += corpus_sample(args.corpus, args.zluda)
    json.dump(hashes(files, args.arch, f"{out}.{os.getpid()}.cubin"), open(out, "w"), indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
