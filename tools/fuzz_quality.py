"""Code quality of fuzz programs, ours over ptxas, split into a tuning and a held-back half.

    py -m tools.fuzz_quality BEFORE/results.jsonl [AFTER/results.jsonl ...]

Each `ptx2sass-fuzz run` result carries both compilers' registers, static instructions and
the emulator's executed instructions and single-warp cycles. This prints their geomean
ratios over the programs that pass in every file given (so runs of the same seeds at two
commits compare like with like), per half: a seed is held back when sha256 of its decimal
text is odd (`held_back`), a fixed split no tuning looks at.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math

KEYS = ("cycles", "registers", "instructions", "executed")


def held_back(seed: int) -> bool:
    return int(hashlib.sha256(str(seed).encode()).hexdigest(), 16) % 2 == 1


def load(path: str) -> dict[int, dict]:
    with open(path) as f:
        return {r["seed"]: r for r in map(json.loads, f)}


def geomeans(results: dict[int, dict], seeds) -> dict[str, float]:
    return {k: math.exp(sum(math.log(results[s]["ours"][k] / results[s]["theirs"][k]) for s in seeds)
                        / len(seeds)) for k in KEYS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="results.jsonl files of runs of the same seeds")
    args = ap.parse_args(argv)
    runs = [load(p) for p in args.results]
    common = set.intersection(*({s for s, r in run.items() if r["class"] == "pass"} for run in runs))
    print("| part | programs | run | " + " | ".join(KEYS) + " |")
    print("|---|---|---|" + "---|" * len(KEYS))
    for part, name in ((False, "tuning"), (True, "held back")):
        seeds = sorted(s for s in common if held_back(s) == part)
        if not seeds:
            continue
        for path, run in zip(args.results, runs):
            g = geomeans(run, seeds)
            print(f"| {name} | {len(seeds)} | {path} | " + " | ".join(f"{g[k]:.3f}" for k in KEYS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
