"""`ptx2sass diff` over corpus files: does it run on every one, and what does it find?

    py bench/diff_corpus.py [--limit N] [--seed S] [GLOB ...]

Each file is compiled both ways and run in the emulator on generated inputs (see
ptx2sass/fuzz/diff.py); a file is counted as: same outputs, different outputs (or a fault
or hazard in ours), a compiler refusing it, or the tool itself failing (the number that
must stay 0). Default: every .ptx of tests/corpus and ../shared/corpus/zluda.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import glob
import io
import random
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [str(ROOT / "tests/corpus/*/*.ptx"), str(ROOT.parent / "shared/corpus/zluda/*.ptx")]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("globs", nargs="*", default=DEFAULT)
    ap.add_argument("--limit", type=int, default=0, help="a random sample of this many files")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from ptx2sass.fuzz import diff
    files = sorted({f for g in args.globs for f in glob.glob(g)})
    if args.limit:
        random.Random(args.seed).shuffle(files)
        files = sorted(files[:args.limit])
    verdicts = collections.Counter()
    tool_failures = []
    t0 = time.time()
    for path in files:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                rc = diff.main([path, "--no-listing"])
        except Exception as e:  # noqa: BLE001 - what this bench counts
            tool_failures.append(f"{path}: {type(e).__name__}: {e}")
            continue
        text = out.getvalue()
        verdict = {0: "same outputs", 1: "differ (or fault/hazard in ours)", 2: "a compiler refuses"}[rc]
        verdicts[verdict] += 1
        if rc == 1:
            line = next((ln for ln in text.splitlines() if "difference" in ln or "faults" in ln or "hazard" in ln), "")
            print(f"{path}: {line[:150]}")
    print(f"\n{len(files)} files in {time.time() - t0:.0f} s: " + ", ".join(f"{v} {k}" for k, v in verdicts.items())
          + f", {len(tool_failures)} tool failures")
    for f in tool_failures:
        print("  " + f)
    return 1 if tool_failures else 0


if __name__ == "__main__":
    sys.exit(main())
