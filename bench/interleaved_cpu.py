"""CPU time (user + sys, from `wait4`) of `ptx2sass` against `ptxas` on one input, and
optionally against another checkout's `ptx2sass`, run in turn in every round, so that a
loaded machine's swings fall on all of them alike; min and median per command.

    .venv/bin/python bench/interleaved_cpu.py FILE.ptx [--other /work/main/.venv/bin/ptx2sass ...]
                                              [--rounds 5] [--arch sm_89]

(`--other` may be repeated: e.g. a base and a branch checkout each run through a wrapper
`python tools/cubin_identity.py --run CHECKOUT "$@"`, so both pay the same start-up.)

(`bench/memory_scaling.py --keep DIR` writes its generated inputs, e.g. line40000.ptx.)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def cpu_seconds(argv: list[str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"{argv[0]} failed ({status})")
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("--other", action="append", default=[],
                    help="another checkout's ptx2sass (e.g. main's); may be given several times")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--arch", default="sm_89")
    args = ap.parse_args(argv)
    from ptx2sass import oracle
    commands = {"ptx2sass": str(Path(sys.executable).with_name("ptx2sass")),
                "ptxas": str(oracle.tool_path("ptxas"))}
    for k, other in enumerate(args.other):
        commands["other" if k == 0 else f"other{k + 1}"] = other
    times: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="ptx2sass-interleaved-") as tmp:
        for _ in range(args.rounds):
            for name, tool in commands.items():
                out = os.path.join(tmp, f"{name}.cubin")
                times[name].append(cpu_seconds([tool, args.input, f"-arch={args.arch}", "-o", out]))
    base = sorted(times["ptxas"])
    for name, values in times.items():
        values.sort()
        low, mid = values[0], values[len(values) // 2]
        print(f"{name:9} min {low:6.3f} s  median {mid:6.3f} s  "
              f"({low / base[0]:.2f}x / {mid / base[len(base) // 2]:.2f}x ptxas)  "
              + " ".join(f"{v:.2f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
