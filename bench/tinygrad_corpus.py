"""The tinygrad corpus through ptx2sass (issue 7's figure): for each kernel ptxas accepts,
compile it with ptx2sass and run our cubin and ptxas's in the emulator on the same
deterministic inputs; count the kernels that compile, that run without fault or hazard and
whose outputs equal ptxas's bit for bit. Prints a table and the kernels that differ.

    .venv/bin/python bench/tinygrad_corpus.py [--max-threads 4096] [--limit N]

Launches above --max-threads threads are left out (the emulator runs ~30-60k
warp-instructions per second); the count of those is printed.
"""
from __future__ import annotations

import argparse
import collections
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass import CompileError, codegen  # noqa: E402
from tools.emu_testing import TINYGRAD_DIR, run_tinygrad, tinygrad_manifest  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-threads", type=int, default=4096)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    manifest = tinygrad_manifest()
    accepted = [k for k in manifest if "ptxas_error" not in k]
    kernels = [k for k in accepted
               if math.prod(k["grid"]) * math.prod(k["block"]) <= args.max_threads][:args.limit]
    stats: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    differ = []
    start = time.perf_counter()
    for k in kernels:
        ptx = (TINYGRAD_DIR / k["file"]).read_text()
        try:
            cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", k["file"]), "sm_89",
                                               filename=k["file"])
        except CompileError as e:
            stats["refused"] += 1
            reasons[e.message.split(": ", 1)[-1] if "kernel" in e.message else e.message] += 1
            continue
        theirs = run_tinygrad(k, hazard_check=False)
        if not theirs.ok:
            stats["ptxas cubin faults"] += 1
            continue
        ours = run_tinygrad(k, cubin=cubin)
        if not ours.ok or ours.result.hazards:
            stats["fault or hazard"] += 1
            differ.append((k["file"], ours.reason or str(ours.result.hazards[0])))
        elif any(ours.result.buffers[n] != b for n, b in theirs.result.buffers.items()):
            stats["outputs differ"] += 1
            differ.append((k["file"], "outputs differ from ptxas's"))
        else:
            stats["same as ptxas"] += 1
    elapsed = time.perf_counter() - start
    print(f"tinygrad corpus: {len(manifest)} kernels, {len(accepted)} accepted by ptxas, "
          f"{len(kernels)} within {args.max_threads} threads ({elapsed:.0f} s)")
    print(f"| outcome | kernels | share |\n|---|---|---|")
    for key in ("same as ptxas", "outputs differ", "fault or hazard", "refused", "ptxas cubin faults"):
        print(f"| {key} | {stats[key]} | {stats[key] / max(len(kernels), 1):.1%} |")
    if reasons:
        print("\nrefused because:")
        for msg, n in reasons.most_common(12):
            print(f"  {n:4d}  {msg}")
    for f, why in differ[:20]:
        print(f"  DIFFERS {f}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
