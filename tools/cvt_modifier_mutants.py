"""cvt spellings one modifier away from an inventory form, on an `a` target: ptxas 13.5's
verdict and messages vs ours (branch cvt31, issue 15). Each variant takes a cvt form valid
on the target and drops one of its modifiers, replaces one by another cvt modifier, or adds
one at a random place; the acceptance kernel of tools/inventory_kernels.py holds it. A seed
draws a fixed sample (seeds 3100.. were first run after the fixes of cvt31: held out).

    py -m tools.cvt_modifier_mutants --arch 100a --n 200 --seed 3100 [--show]
"""
from __future__ import annotations

import argparse
import random
import re
from collections import Counter

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.frontend import inventory
from ptx2sass.frontend.instructions import TARGET_MIN_VERSION
from tools.inventory_kernels import acceptance_module, instruction_text, version_for

POOL = (".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni", ".rzi", ".rmi", ".rpi", ".ftz", ".sat",
        ".relu", ".satfinite")


def _lines(text: str) -> list[str]:
    return re.findall(r"line \d+; (?:error|fatal|warning)\s*: .*", text)


def variants(forms, n: int, seed: int):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        f = rng.choice(forms)
        parts = f.spelling.split(".")
        mods = [m for m in f.modifiers if m[1:] in parts]
        how = rng.choice(["drop", "replace", "add"])
        if how != "add" and not mods:
            continue
        if how == "drop":
            parts.remove(rng.choice(mods)[1:])
        elif how == "replace":
            parts[parts.index(rng.choice(mods)[1:])] = rng.choice(POOL)[1:]
        else:
            parts.insert(rng.randrange(1, len(parts) - 1), rng.choice(POOL)[1:])
        out.append((f, ".".join(parts), how))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="100a")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3100)
    ap.add_argument("--show", action="store_true", help="print each disagreement")
    args = ap.parse_args(argv)
    sm = int(re.match(r"\d+", args.arch).group())
    target = f"sm_{args.arch}"
    forms = [f for f in inventory.forms() if f.opcode == "cvt" and f.valid_on(sm, version_for(f, sm), True)]
    tally: Counter = Counter()
    for f, spelling, how in variants(forms, args.n, args.seed):
        version = max(version_for(f, sm), TARGET_MIN_VERSION.get(target, (8, 0)))
        text, _ = acceptance_module([instruction_text(f, spelling)], sm, version)
        text = text.replace(f".target sm_{sm}\n", f".target {target}\n", 1)
        try:
            theirs = oracle.ptxas(text, target)
        except oracle.OracleFailed:
            tally["ptxas crash"] += 1
            continue
        try:
            codegen.compile_ptx(text, target, "k.ptx")
            ok, ours = True, []
        except CompileError as e:
            ok, ours = False, _lines("\n".join(str(d) for d in e.diagnostics))
        except Exception as e:  # noqa: BLE001 - a crash is a finding
            ok, ours = None, [f"{type(e).__name__}: {e}"]
        if ok is None:
            verdict = "crash"
        elif ok != theirs.ok:
            verdict = "verdict"
        elif not ok and ours != _lines(theirs.stderr):
            verdict = "message"
        else:
            verdict = "agree"
        tally[verdict] += 1
        if verdict != "agree" and args.show:
            print(f"[{verdict}] {how} {spelling}: ptxas={theirs.ok} {_lines(theirs.stderr)} ours={ok} {ours}")
    print(target, f"seed {args.seed}", dict(tally))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
