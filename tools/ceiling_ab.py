"""A/B of the pre-scheduler's occupancy ceiling (sched/pre_schedule.py `_occupancy_ceiling`)
over a quality.py corpus: every kernel compiled with the ceiling off (255: main's code path
before branch regs30) and on; where the cubins differ, `bench.quality.measure` both ways.
One JSON line per kernel; `--summary` prints each figure's factor on the set's geomean.

    .venv/bin/python -m tools.ceiling_ab --corpus tinygrad --split tune OUT.jsonl
    .venv/bin/python -m tools.ceiling_ab --corpus tinygrad --split held OUT.jsonl
    .venv/bin/python -m tools.ceiling_ab --corpus triton --split all OUT.jsonl
    .venv/bin/python -m tools.ceiling_ab --summary OUT.jsonl

`tune` is `bench/quality.py --corpus tinygrad --limit 120`'s set, `held` its
`--limit 0 --exclude-limit 120 --hash-split q28:6:0`. A run resumes where OUT stops."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys

from bench import quality as q
from ptx2sass import codegen
from ptx2sass.errors import CompileError
from ptx2sass.sched import pre_schedule as ps

_REAL = ps._occupancy_ceiling


def _mode(on: bool) -> None:
    ps._occupancy_ceiling = _REAL if on else (lambda *a, **k: 255)


def _select(corpus, split: str) -> list:
    entries = corpus.entries()
    if split == "all":
        return entries
    tuned = q.spread(entries, 120)
    if split == "tune":
        return tuned
    ids = {id(e) for e in tuned}
    return [e for e in entries if id(e) not in ids
            and hashlib.sha256(f"q28:{corpus.describe(e)[0]}".encode()).digest()[0] % 6 == 0]


def run(corpus_name: str, split: str, out_path: str, arch: str = "sm_89") -> None:
    corpus = q.CORPORA[corpus_name]()
    done = set()
    if os.path.exists(out_path):
        done = {json.loads(line)["name"] for line in open(out_path) if line.strip()}
    with open(out_path, "a") as out:
        for e in _select(corpus, split):
            name, ptx, _, filename = corpus.describe(e)
            if name in done:
                continue
            cubins = []
            for on in (False, True):
                _mode(on)
                try:
                    cubins.append(codegen.generate_module(codegen.lower_ptx(ptx, arch, filename), arch, {},
                                                          filename=filename)[0])
                except CompileError:
                    cubins.append(None)
            rec = {"name": name, "held": corpus.held_back(e), "changed": cubins[0] != cubins[1]}
            if rec["changed"]:
                for on in (False, True):
                    _mode(on)
                    rec["on" if on else "off"] = q.measure(corpus, e, arch)
            out.write(json.dumps(rec) + "\n")
            out.flush()
    _mode(True)


def summary(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    both = [r for r in rows if r["changed"] and isinstance(r.get("off"), dict) and isinstance(r.get("on"), dict)]
    print(f"{len(rows)} kernels, {sum(r['changed'] for r in rows)} cubins differ, {len(both)} measured both ways")
    for key in ("regs", "insts", "cycles", "sm_cycles"):
        logs = [math.log((r["on"][key][0] / r["on"][key][1]) / (r["off"][key][0] / r["off"][key][1]))
                for r in both if r["on"][key][1] and r["off"][key][1]]
        print(f"  {key}: x{math.exp(sum(logs) / max(len(rows), 1)):.4f} on the set's geomean")
    over = lambda m: m["regs"][0] > 1.05 * m["regs"][1]  # noqa: E731
    print(f"  above 1.05x registers among them: {sum(over(r['off']) for r in both)} -> {sum(over(r['on']) for r in both)}")
    for r in both:
        print(f"    {r['name'][:48]:48} regs {r['off']['regs'][0]} -> {r['on']['regs'][0]} (ptxas {r['on']['regs'][1]})"
              f"  SM {r['off']['sm_cycles'][0]} -> {r['on']['sm_cycles'][0]} ({r['on']['sm_cycles'][1]})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--corpus", default="tinygrad", choices=sorted(q.CORPORA))
    ap.add_argument("--split", default="all", choices=("all", "tune", "held"))
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args(argv)
    if args.summary:
        summary(args.out)
    else:
        run(args.corpus, args.split, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
