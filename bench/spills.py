"""Kernels where ptx2sass spills registers to local memory and ptxas does not (issue 6's
quality bar: "no spills where ptxas has none"), over every corpus file both compile.

    .venv/bin/python bench/spills.py [--corpus NAME ...]

ptxas's figures come from its `-v` report, ours from the back end's spill report (what
`ptx2sass -v` prints)."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ptx2sass import CompileError, codegen, oracle  # noqa: E402
from tools.corpora import corpus_dirs, ptx_files  # noqa: E402

_PROPERTIES = re.compile(r"Function properties for (\S+)\n\s+\d+ bytes stack frame, "
                         r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpus_dirs()))
    args = ap.parse_args(argv)
    kernels = ours = theirs = 0
    worse = []
    for corpus in args.corpus or sorted(corpus_dirs()):
        for path in ptx_files(corpus):
            ptx = path.read_text()
            run = oracle.ptxas(ptx, options=("-v",))
            if not run.ok:
                continue
            ptxas_spills = {m.group(1): int(m.group(2)) + int(m.group(3))
                            for m in _PROPERTIES.finditer(run.stderr)}
            report: dict = {}
            try:
                codegen.compile_module(codegen.lower_ptx(ptx, "sm_89", path.name), "sm_89",
                                       {"spill_report": report}, path.name)
            except CompileError:
                continue
            for name, (stores, loads) in report.items():
                kernels += 1
                ours += stores + loads > 0
                theirs += ptxas_spills.get(name, 0) > 0
                if stores + loads and not ptxas_spills.get(name):
                    worse.append((corpus, path.name, stores, loads))
    print(f"{kernels} kernels: ptx2sass spills in {ours}, ptxas in {theirs}; "
          f"ptx2sass spills where ptxas does not: {len(worse)}")
    for corpus, name, stores, loads in worse:
        print(f"  {corpus}/{name}: {stores} bytes spill stores, {loads} bytes spill loads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
