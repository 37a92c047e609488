"""The CUDA corpus through ptx2sass: every launch of tests/corpus/cuda/manifest.json compiled by
ptx2sass, run in the emulator with the hazard check, compared with the NumPy reference.
Prints the counts and the launches that differ or are refused (by reason).

    .venv/bin/python bench/cuda_corpus.py [-g | -Ofc LEVEL] [--arch sm_90]

With -g, compiled as `ptx2sass -g` compiles (debug information, no optimisation); with
-Ofc min/mid/max as `ptx2sass -Ofc LEVEL` does.
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass import CompileError, codegen  # noqa: E402
from tools import emu_testing as testing  # noqa: E402


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    arch = args[args.index("--arch") + 1] if "--arch" in args else "sm_89"
    options = {"debug": True, "opt_level": 0} if "-g" in args else {}
    if "-Ofc" in args:
        options = {"fast_compile": args[args.index("-Ofc") + 1]}
    ref = testing.cuda_reference_module()
    launches = ref.load_manifest()
    counts: collections.Counter = collections.Counter()
    refusals: collections.Counter = collections.Counter()
    differ = []
    for entry in launches:
        try:
            out = testing.run_cuda_launch(entry, ref, hazard_check=True,
                                          compiler=lambda text, name: codegen.compile_ptx(text, arch, name, **options))
        except CompileError as e:
            counts["refused"] += 1
            refusals[f"{entry['ptx']}: {e.message}"] += 1
            continue
        counts["pass" if out.passed else "differ"] += 1
        if out.result is not None and out.result.hazards:
            counts["with hazards"] += 1
            differ.append(f"{entry['name']}: hazard {out.result.hazards[0]}")
        if not out.passed:
            differ.append(f"{entry['name']}: {out.reason[:120]}")
    print(f"CUDA corpus ({arch}), {len(launches)} launches: {counts['pass']} match NumPy with our cubins, "
          f"{counts['differ']} differ or fault, {counts['refused']} refused, "
          f"{counts['with hazards']} with hazards")
    for line in differ:
        print("  differs:", line)
    for reason, n in refusals.most_common():
        print(f"  refused {n:3d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
