"""A/B of one slow_paths.MIN_USES rule in one tree (branch idiv33): the kernels of a
quality.py corpus split whose module PTX matches a pattern are compiled with the rule's
kinds off (base: inline) and with the rule (`kind=N`: called from the Nth use on), the changed ones measured both ways
(`bench.quality.measure`), and each figure's factor printed on the split's geomean, the
corpus's held-back kernels apart (kernels the pattern rules out cannot change and count as
unchanged).

    py -m tools.slow_path_ab realworld all '(div|rem)\\.[su]64' u64=2,s64=2 OUT.jsonl
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys

KEYS = ("regs", "insts", "cycles", "sm_cycles")


def _code(ptx, kernel, filename, arch):
    from bench import quality as q
    from ptx2sass import codegen
    from ptx2sass.encoder.cubin import read_cubin
    cubin = codegen.generate_module(codegen.lower_ptx(ptx, arch, filename), arch, dict(q.OPTIONS),
                                    filename=filename)[0]
    k = next(k for k in read_cubin(cubin).kernels if k.name == kernel)
    return hashlib.sha256(bytes(k.text)).hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("split", choices=("all", "tune", "held"))
    ap.add_argument("pattern")
    ap.add_argument("rule", help="MIN_USES entries measured, as u64=2,s64=2 (the base: None)")
    ap.add_argument("out")
    ap.add_argument("--arch", default="sm_89")
    a = ap.parse_args(argv)
    from bench import quality as q
    from ptx2sass import slow_paths
    from tools.ceiling_ab import _select
    saved = dict(slow_paths.MIN_USES)
    wanted = dict(kv.split("=") for kv in a.rule.split(","))
    rule = {**saved, **{k: int(v) for k, v in wanted.items()}}
    base = {**saved, **{k: None for k in wanted}}
    corpus = q.CORPORA[a.corpus]()
    entries = _select(corpus, a.split)
    totals = {False: 0, True: 0}
    logs = {held: {k: [] for k in KEYS} for held in (False, True)}
    with open(a.out, "w") as out:
        for e in entries:
            name, ptx, kernel, filename = corpus.describe(e)
            held = bool(corpus.held_back(e))
            totals[held] += 1
            if not re.search(a.pattern, ptx):
                continue
            figures = []
            for r in (base, rule):
                slow_paths.MIN_USES = r
                slow_paths._compiled.clear()
                try:
                    figures.append(_code(ptx, kernel, filename, a.arch))
                except Exception as exc:          # (a kernel neither compiles: unchanged)
                    figures.append(f"error {type(exc).__name__}")
            if figures[0] == figures[1]:
                continue
            ms = []
            for r in (base, rule):
                slow_paths.MIN_USES = r
                slow_paths._compiled.clear()
                ms.append(q.measure(corpus, e, a.arch))
            out.write(json.dumps({"name": name, "held": held, "old": ms[0], "new": ms[1]}) + "\n")
            out.flush()
            o, n = ms
            if not isinstance(o, dict) or not isinstance(n, dict):
                print(f"{name}: {o if isinstance(o, str) else 'measured'} -> {n if isinstance(n, str) else 'measured'}")
                continue
            print(f"{name[:52]:52} {'H' if held else ' '} " + "  ".join(
                f"{k} {o[k][0]}->{n[k][0]} ({n[k][1]})" for k in KEYS) + f"  hazards {n['hazards']}",
                flush=True)
            for k in KEYS:
                if o[k][0] and n[k][0]:
                    logs[held][k].append(math.log(n[k][0] / o[k][0]))
    slow_paths.MIN_USES = saved
    for held in (False, True):
        if totals[held]:
            print(f"{'held back' if held else 'tuning'} ({totals[held]} kernels, {len(logs[held]['regs'])} changed): "
                  + "  ".join(f"{k} x{math.exp(sum(v) / totals[held]):.5f}" for k, v in logs[held].items()))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ".")
    sys.exit(main())
