"""A/B of two source trees over a quality.py corpus split: which kernels' code changed, and
`bench.quality.measure` of those in each tree (branch regs31).

Run `hash` and `measure` from each tree's root (its own `ptx2sass` importable: its .venv, or
the same .venv with the editable finder's paths pointed at the other tree), then `diff` and
`summary` anywhere:

    py -m tools.tree_ab hash realworld all A/new_realworld.jsonl          # in the branch tree
    py -m tools.tree_ab hash realworld all A/old_realworld.jsonl          # in the base tree
    py -m tools.tree_ab diff A/old_realworld.jsonl A/new_realworld.jsonl A/changed_realworld.txt
    py -m tools.tree_ab measure realworld A/changed_realworld.txt A/mnew_realworld.jsonl   # each tree
    py -m tools.tree_ab summary A/mold_realworld.jsonl A/mnew_realworld.jsonl A/new_realworld.jsonl

Splits as `tools.ceiling_ab` (`tune`/`held` for tinygrad, `all`). `hash` records each
kernel's register count and a hash of its SASS text (`--arch`, default sm_89; `--set` flips
a module switch first, an A/B of one change within one tree); `summary` prints every changed
kernel old -> new (ptxas) and each figure's factor on the split's geomean, the corpus's
held-back kernels apart. Runs resume where their output stops."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys


def _rows(path: str) -> dict:
    return {r["name"]: r for r in (json.loads(line) for line in open(path) if line.strip())}


def hash_split(corpus_name: str, split: str, out_path: str, arch: str = "sm_89") -> None:
    from bench import quality as q
    from ptx2sass import codegen
    from ptx2sass.encoder.cubin import read_cubin
    from ptx2sass.errors import CompileError
    from tools.ceiling_ab import _select
    corpus = _corpus(q, corpus_name, arch)
    done = set(_rows(out_path)) if os.path.exists(out_path) else set()
    last: tuple = (None, None)
    with open(out_path, "a") as out:
        for e in _select(corpus, split):
            name, ptx, kernel, filename = corpus.describe(e)
            if name in done:
                continue
            ptx = _retarget(ptx, arch)
            key = hashlib.sha256(ptx.encode()).hexdigest()
            if last[0] != key:          # a module's kernels come one after another
                try:
                    cubin = codegen.generate_module(codegen.lower_ptx(ptx, arch, filename), arch,
                                                    dict(q.OPTIONS), filename=filename)[0]
                    last = (key, read_cubin(cubin))
                except CompileError:
                    last = (key, None)
            rec = {"name": name, "held": bool(corpus.held_back(e))}
            k = next((k for k in last[1].kernels if k.name == kernel), None) if last[1] else None
            if k is None:
                rec["error"] = True
            else:
                rec["regs"] = k.regcount
                rec["h"] = hashlib.sha256(bytes(k.text)).hexdigest()[:16]
            out.write(json.dumps(rec) + "\n")
            out.flush()


def _corpus(q, corpus_name: str, arch: str):
    """The corpus as `bench/quality.py --arch` reads it (the real-world one: that arch's modules)."""
    corpus = q.CORPORA[corpus_name]()
    if hasattr(corpus, "arch"):
        corpus.arch = arch
    return corpus


def _retarget(ptx: str, arch: str) -> str:
    """PTX written for a newer arch than `arch` with its `.target` rewritten (what
    `quality.measure` does where ptxas refuses it): sm_89 modules hashed for sm_80."""
    import re
    m = re.search(r"\.target\s+sm_(\d+)", ptx)
    if m and int(m.group(1)) > int(re.match(r"sm_(\d+)", arch).group(1)):
        ptx = ptx[:m.start()] + re.sub(r"sm_\d+\w*", arch, m.group(0)) + ptx[m.end():]
    return ptx


def diff(old_path: str, new_path: str, out_path: str) -> None:
    old, new = _rows(old_path), _rows(new_path)
    changed = [n for n, r in new.items() if n in old and (r.get("h"), r.get("error")) != (old[n].get("h"), old[n].get("error"))]
    for n in changed:
        print(f"{n[:60]:60} {old[n].get('regs')} -> {new[n].get('regs')}{'  (held back)' if new[n]['held'] else ''}")
    print(f"{len(new)} kernels, {len(changed)} changed ({sum(new[n]['held'] for n in changed)} held back)")
    with open(out_path, "w") as f:
        f.write("\n".join(changed))


def measure(corpus_name: str, names_path: str, out_path: str, arch: str = "sm_89") -> None:
    from bench import quality as q
    names = set(open(names_path).read().split())
    corpus = _corpus(q, corpus_name, arch)
    done = set(_rows(out_path)) if os.path.exists(out_path) else set()
    with open(out_path, "a") as out:
        for e in corpus.entries():
            name = corpus.describe(e)[0]
            if name in names and name not in done:
                out.write(json.dumps({"name": name, "held": bool(corpus.held_back(e)),
                                      "m": q.measure(corpus, e, arch)}) + "\n")
                out.flush()


KEYS = ("regs", "insts", "cycles", "sm_cycles")


def summary(old_path: str, new_path: str, hashes_path: str) -> None:
    old, new, every = _rows(old_path), _rows(new_path), _rows(hashes_path)
    logs = {held: {k: [] for k in KEYS} for held in (False, True)}
    for n, row in new.items():
        if n not in old:
            continue
        o, r = old[n]["m"], row["m"]
        if not isinstance(o, dict) or not isinstance(r, dict):
            print(f"{n}: before {o if isinstance(o, str) else 'measured'}, after {r if isinstance(r, str) else 'measured'}")
            continue
        print(f"{n[:52]:52} {'H' if row['held'] else ' '} " + "  ".join(
            f"{k} {o[k][0]}->{r[k][0]} ({r[k][1]})" for k in KEYS) + f"  hazards {r['hazards']}")
        for k in KEYS:
            if o[k][0] and r[k][0]:
                logs[row["held"]][k].append(math.log(r[k][0] / o[k][0]))
    for held in (False, True):
        total = sum(1 for r in every.values() if r["held"] == held)
        if total:
            print(f"{'held back' if held else 'tuning'} ({total} kernels, {len(logs[held]['regs'])} changed): "
                  + "  ".join(f"{k} x{math.exp(sum(v) / total):.4f}" for k, v in logs[held].items()))


def main(argv=None) -> int:
    sys.path.insert(0, os.getcwd())        # the tree run from is the one measured
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hash")
    h.add_argument("corpus")
    h.add_argument("split", choices=("all", "tune", "held"))
    h.add_argument("out")
    d = sub.add_parser("diff")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("out")
    m = sub.add_parser("measure")
    m.add_argument("corpus")
    m.add_argument("names")
    m.add_argument("out")
    s = sub.add_parser("summary")
    s.add_argument("old")
    s.add_argument("new")
    s.add_argument("hashes")
    for p in (h, m):
        p.add_argument("--arch", default="sm_89", help="target of both compilers (default sm_89)")
        p.add_argument("--set", action="append", default=[], metavar="MODULE:NAME=N",
                       help="set a module's switch first (an A/B of one change in one tree: "
                            "ptx2sass.isel.target_forms:HOIST_CONSTANTS=0)")
    args = ap.parse_args(argv)
    for spec in getattr(args, "set", []):
        import importlib
        import importlib.util
        module, _, assignment = spec.partition(":")
        name, _, value = assignment.partition("=")
        if not module.startswith("ptx2sass.") and importlib.util.find_spec("ptx2sass." + module.split(".")[0]):
            module = "ptx2sass." + module   # `sched.x` imported alone is a second copy codegen never reads
        mod = importlib.import_module(module)
        setattr(mod, name, type(getattr(mod, name))(int(value)))     # a bool or an int switch
    if args.cmd == "hash":
        hash_split(args.corpus, args.split, args.out, args.arch)
    elif args.cmd == "diff":
        diff(args.old, args.new, args.out)
    elif args.cmd == "measure":
        measure(args.corpus, args.names, args.out, args.arch)
    else:
        summary(args.old, args.new, args.hashes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
