"""The ZLUDA corpus through ptx2sass: every launch of the manifest whose PTX the pinned
ptxas compiles for sm_89, compiled by ptx2sass, run in the emulator with the hazard check,
compared with the output ZLUDA's harness expects. Prints the counts and the launches that
differ, fault, are refused or show hazards.

    .venv/bin/python bench/zluda_corpus.py [-g]

With -g, compiled as `ptx2sass -g` compiles (debug information, no optimisation).
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass import CompileError, codegen  # noqa: E402
from tools import emu_testing as testing  # noqa: E402


def main(argv: list[str]) -> int:
    options = {"debug": True, "opt_level": 0} if "-g" in argv else {}
    counts: collections.Counter = collections.Counter()
    notes = []
    for entry in testing.zluda_manifest():
        if testing.zluda_cubin(entry) is None:
            continue
        try:
            cubin = codegen.compile_ptx(testing.zluda_ptx(entry), "sm_89", entry["ptx"], **options)
        except CompileError as e:
            counts["refused"] += 1
            notes.append(f"refused {entry['name']}: {e.message}"[:160])
            continue
        out = testing.run_zluda(entry, hazard_check=True, cubin=cubin)
        counts["pass" if out.passed else "differ"] += 1
        if not out.passed:
            notes.append(f"differs {entry['name']}: {out.reason[:120]}")
        if out.result is not None and out.result.hazards:
            counts["with hazards"] += 1
            notes.append(f"hazard {entry['name']}: {out.result.hazards[0]}")
    print(f"ZLUDA corpus, {sum(counts[k] for k in ('pass', 'differ', 'refused'))} launches ptxas "
          f"compiles: {counts['pass']} as expected with our cubins, {counts['differ']} differ or "
          f"fault, {counts['refused']} refused, {counts['with hazards']} with hazards")
    for line in notes:
        print(" ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
