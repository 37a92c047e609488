"""The traced scalar path against the machine over the test suite's own launches.

Runs test files one at a time (pytest, one process, `nice`) with PTX2SASS_EMU_TRACED_CHECK
set to a log per file: every one-thread launch under the hazard checker that
`emu.scalar.suits_traced` admits then runs both ways from the same state and the outcomes
(buffers, heap, counts, cycles, hazards, printf, faults) are compared (emu/traced_check.py);
a difference fails the test that made the launch and is logged. Prints, per file, the
launches compared, how many differ and pytest's summary; `--resume` skips files with a
finished log. The tally is written to OUT/summary.json.

    py -m tools.emu_traced_sweep --out /tmp/sweep tests/test_emu_*.py
    py -m tools.emu_traced_sweep --out /tmp/sweep --all      # every test file
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def all_tests() -> list[Path]:
    """Every test file (launches come through many helpers: emu_testing, the fuzz runner,
    the tinygrad backend, the CLI; a file with none costs only its own time)."""
    return sorted((ROOT / "tests").glob("test_*.py"))


def tally(log: Path) -> tuple[int, int, list]:
    """(launches compared, launches that differ, the differing lines) of one log."""
    n, bad = 0, []
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            n += 1
            if rec["differ"]:
                bad.append(rec)
    return n, len(bad), bad


def run_file(test: Path, out: Path, timeout: int, nice: int) -> dict:
    log = out / (test.stem + ".jsonl")
    log.unlink(missing_ok=True)
    env = dict(os.environ, PTX2SASS_EMU_TRACED_CHECK=str(log))
    cmd = ["nice", "-n", str(nice), sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)]
    start = time.time()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    summary = next((ln for ln in reversed(lines) if re.search(r"passed|failed|error|no tests ran", ln)), lines[-1] if lines else "")
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    n, nbad, bad = tally(log)
    rec = {"file": test.name, "rc": rc, "seconds": round(time.time() - start, 1), "compared": n, "differ": nbad,
           "summary": summary.strip("= "), "failed": failed[:50], "differing": bad[:20]}
    (out / (test.stem + ".done")).write_text(json.dumps(rec))
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help="every test file")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--resume", action="store_true", help="skip files with a finished log")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per file")
    ap.add_argument("--nice", type=int, default=10)
    args = ap.parse_args(argv)
    tests = all_tests() if args.all else [t.resolve() for t in args.tests]
    args.out.mkdir(parents=True, exist_ok=True)
    for test in tests:
        done = args.out / (test.stem + ".done")
        if args.resume and done.exists():
            continue
        rec = run_file(test, args.out, args.timeout, args.nice)
        print(f"{rec['file']}: {rec['compared']} compared, {rec['differ']} differ; rc {rec['rc']}, "
              f"{rec['seconds']} s; {rec['summary']}", flush=True)
        for ln in rec["failed"]:
            print("   ", ln, flush=True)
    recs = [json.loads(p.read_text()) for p in sorted(args.out.glob("*.done"))]
    total = {"files": len(recs), "compared": sum(r["compared"] for r in recs),
             "differ": sum(r["differ"] for r in recs),
             "files_failing": [r["file"] for r in recs if r["rc"] not in (0, 5)]}
    (args.out / "summary.json").write_text(json.dumps(total, indent=1))
    print(json.dumps(total))
    return 1 if total["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
