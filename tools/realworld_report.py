"""Print the real-world corpus table (tools/realworld.py), tuning part and held-back part apart.

Usage: .venv/bin/python -m tools.realworld_report [--arch sm_89 ...] [--module SUBSTR] [--details]
       [--json FILE] [--emu-arch A ...] [--retarget sm_120 --emu-arch sm_120]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import asdict

from tools import realworld as rw


def summary(outcomes: list[rw.ModuleOutcome]) -> dict[str, str]:
    mods = [o for o in outcomes if o.ptxas != "nvcc-refused"]
    taken = [o for o in mods if o.ptxas == "accepted"]
    ours = Counter(o.ours for o in taken)
    kernels = [k for o in taken for k in o.kernels if k.emu != "not-run"]
    emu = Counter(k.emu for k in kernels)
    return {
        "modules (ptxas accepts / built)": f"{len(taken)}/{len(mods)}",
        "we compile (of ptxas-accepted)": f"{ours['accepted']}/{len(taken)}",
        "  gaps ('not supported')": str(ours["gap"]),
        "  other clean refusals": str(ours["refused"]),
        "  bugs (internal errors, tracebacks)": str(ours["bug"]),
        "cubin bit-identical to ptxas": f"{sum(o.identical for o in taken)}/{len(taken)}",
        "kernels run in emulator: ours == ptxas": f"{emu['match']}/{len(kernels)}",
        "  differ": str(emu["differ"]),
        "  not compiled by us": str(emu["no-cubin"]),
        "  emulator cannot run ptxas's cubin": str(emu["ptxas-fault"]),
        "  emulator cannot run ours": str(emu["ours-fault"]),
        "nvcc/Numba refused the source": str(len(outcomes) - len(mods)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", help="only modules for these archs")
    ap.add_argument("--module", action="append", help="only modules whose id contains this (repeatable: any of them)")
    ap.add_argument("--emu-arch", action="append",
                    help=f"run the emulator on modules for these archs (default {' '.join(rw.EMU_ARCHS)})")
    ap.add_argument("--retarget", action="append",
                    help=f"instead of the corpus's own modules, its {rw.RETARGET_FROM} modules with "
                         "`.target` rewritten to this arch (sm_75, sm_120: archs it was not built for)")
    ap.add_argument("--details", action="store_true", help="one line per module and failing kernel")
    ap.add_argument("--json", help="write every outcome to this file")
    args = ap.parse_args(argv)
    outcomes = []
    modules = rw.manifest() if not args.retarget else \
        [m for arch in args.retarget for m in rw.retargeted(arch)]
    for m in modules:
        if args.arch and m["arch"] not in args.arch:
            continue
        if args.module and not any(sub in rw.module_id(m) for sub in args.module):
            continue
        o = rw.measure(m, emu_archs=tuple(args.emu_arch or rw.EMU_ARCHS))
        outcomes.append(o)
        if args.details:
            bad = [k for k in o.kernels if k.emu not in ("match", "not-run")]
            print(f"{o.id:45s} {'held' if o.held_back else 'tune'} ptxas={o.ptxas} ours={o.ours} "
                  f"identical={o.identical} run={sum(k.emu == 'match' for k in o.kernels)}/"
                  f"{sum(k.emu != 'not-run' for k in o.kernels)} {o.message[:150]}", flush=True)
            for k in bad:
                print(f"    {k.entry}: {k.emu} {k.detail}", flush=True)
    parts = {"tuning": [o for o in outcomes if not o.held_back],
             "held back": [o for o in outcomes if o.held_back]}
    tables = {name: summary(part) for name, part in parts.items()}
    print(f"\n{'':44s} {'tuning':>10s} {'held back':>10s}")
    for row in tables["tuning"]:
        print(f"{row:44s} {tables['tuning'][row]:>10s} {tables['held back'][row]:>10s}")
    messages = Counter((o.ours, re.sub(r"^\S+\.ptx(, line \d+)?; ", "", o.message))
                       for o in outcomes if o.ours in ("gap", "refused", "bug"))
    if messages:
        print("\nour refusals and failures (modules, class, message without file and line):")
        for (cls, msg), n in messages.most_common():
            print(f"  {n:3d} {cls:7s} {msg[:200]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(o) for o in outcomes], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
