"""Check the PTX inventory against ptxas: every form it calls valid for a target is
accepted, every form it calls invalid (a newer target's, a newer PTX version's, or a
mutation whose spelling no form has) is refused.

    py -m tools.inventory_check [--sm 89] [--sample N] [--seed S] [--show 40]

Forms are batched, one instruction per line, many per ptxas run; ptxas names the line of
each error, and lines without an error are compiled again on their own batch until ptxas
accepts the rest whole.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from collections import defaultdict

from ptx2sass import oracle
from ptx2sass.frontend import inventory
from ptx2sass.frontend.inventory import Form
from tools.inventory_kernels import acceptance_module, instruction_text, version_for

_ERROR = re.compile(r"line (\d+); error\s*:\s*(.*)")


def ptxas_verdicts(items: list[tuple[str, bool]], sm: int, ptx: tuple[int, int],
                   batch: int = 200) -> list[tuple[bool, str]]:
    """(accepted, first error message) for each (instruction line, in_function) item."""
    out: list[tuple[bool, str] | None] = [None] * len(items)
    groups = defaultdict(list)
    for k, (line, in_fn) in enumerate(items):
        groups[in_fn].append(k)
    for in_fn, idxs in groups.items():
        for start in range(0, len(idxs), batch):
            pending = idxs[start:start + batch]
            while pending:
                text, first = acceptance_module([items[k][0] for k in pending], sm, ptx, in_fn)
                try:
                    run = oracle.ptxas(text, f"sm_{sm}")
                except oracle.OracleFailed as e:     # ptxas crashed: narrow it down
                    if len(pending) == 1:
                        out[pending[0]] = (False, f"ptxas crashed: {e}")
                        break
                    half = len(pending) // 2
                    for part in (pending[:half], pending[half:]):
                        for k, v in zip(part, ptxas_verdicts([items[k] for k in part], sm, ptx,
                                                             batch=max(1, len(part)))):
                            out[k] = v
                    break
                errs = {}
                for m in _ERROR.finditer(run.stderr):
                    errs.setdefault(int(m.group(1)), m.group(2).strip())
                if run.ok:
                    for k in pending:
                        out[k] = (True, "")
                    break
                bad = [k for j, k in enumerate(pending) if first + j in errs]
                if not bad:
                    if len(pending) == 1:
                        msg = run.stderr.strip().splitlines()
                        out[pending[0]] = (False, msg[0] if msg else "refused")
                        break
                    half = len(pending) // 2     # an error without a line: split the batch
                    for part in (pending[:half], pending[half:]):
                        for k, v in zip(part, ptxas_verdicts([items[k] for k in part], sm, ptx,
                                                             batch=max(1, len(part)))):
                            out[k] = v
                    break
                for j, k in enumerate(pending):
                    if first + j in errs:
                        out[k] = (False, errs[first + j])
                pending = [k for k in pending if out[k] is None]
    return out


def _in_function(form: Form) -> bool:
    return ".param::func" in form.spaces


ALL_TYPES = (".b8", ".b16", ".b32", ".b64", ".u8", ".u16", ".u32", ".u64", ".s8", ".s16",
             ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64", ".pred",
             ".b128", ".tf32")


def mutations(forms: list[Form], rng: random.Random, count: int) -> list[tuple[Form, str]]:
    """(form, spelling) pairs that no inventory form spells: one type swapped for another."""
    out = []
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        f = rng.choice(forms)
        if not f.types:
            continue
        toks = f.spelling.split(".")
        idx = [k for k, t in enumerate(toks) if "." + t in f.types]
        k = rng.choice(idx)
        new = rng.choice(ALL_TYPES)
        toks[k] = new[1:]
        spelling = ".".join(toks)
        if not inventory.spelling_known(spelling) and (f, spelling) not in out:
            out.append((f, spelling))
    return out


def check(sm: int = 89, sample: int | None = None, seed: int = 0,
          mutants: int = 0):
    """(disagreements, crashes): (form name, spelling tried, inventory's verdict, ptxas's
    message) for each form ptxas judges otherwise; the spellings that crash ptxas (a ptxas
    bug, not a verdict)."""
    rng = random.Random(seed)
    forms = [f for f in inventory.forms() if not f.arch_specific]
    if sample is not None and sample < len(forms):
        forms = rng.sample(forms, sample)
    cases: list[tuple[Form, str, bool]] = [(f, f.spelling, f.valid_on(sm, version_for(f, sm)))
                                           for f in forms]
    cases += [(f, s, False) for f, s in mutations(forms, rng, mutants)]
    by_version = defaultdict(list)
    for case in cases:
        by_version[version_for(case[0], sm)].append(case)
    bad, crashed = [], []
    for ptx, group in sorted(by_version.items()):
        items = [(instruction_text(f, s), _in_function(f)) for f, s, _ in group]
        for (f, s, want), (got, msg) in zip(group, ptxas_verdicts(items, sm, ptx)):
            if msg.startswith("ptxas crashed"):
                crashed.append(s)
            elif got != want:
                bad.append((f.name, s, want, msg))
    return bad, crashed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sm", type=int, default=89)
    ap.add_argument("--sample", type=int)
    ap.add_argument("--mutants", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=60)
    args = ap.parse_args(argv)
    bad, crashed = check(args.sm, args.sample, args.seed, args.mutants)
    if crashed:
        print(f"ptxas crashes on {len(crashed)} forms: {' '.join(crashed)}")
    for name, spelling, want, msg in bad[:args.show]:
        print(f"{'valid' if want else 'invalid':7} {spelling:50} [{name}] ptxas: {msg or 'accepted'}")
    print(f"{len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
