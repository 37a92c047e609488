"""Where a fresh `ptx2sass` process spends its time (issue 6): the imports, the first compile
(tables loaded, the encoder's searches for each spelling, PLY's tables), and a second
compile of the same file in the same process (what remains once all that is warm).

    .venv/bin/python bench/start_speed.py [--repeat 3] [file.ptx ...]

Each file runs in new interpreters without PYTHONDONTWRITEBYTECODE (bytecode as users have
it), CPU time, best of `--repeat`. Triton calls ptxas once per kernel: it pays the imports and
the first compile every time; `ptx2sass.compile` in a long-lived process pays the second.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = ["examples/vecadd.ptx", "tests/corpus/tinygrad/abs_float16__E_16_32_4.ptx",
           "tests/corpus/triton/softmax_rows.ptx", "tests/corpus/triton/matmul_f16.ptx"]

CHILD = """
import gc, json, sys, time
gc.disable()                                   # as the ptx2sass command runs
t0 = time.process_time()
from ptx2sass.cli import _code_generator
generate = _code_generator()
import ptx2sass.frontend, ptx2sass.frontend.to_ssa, ptx2sass.inline
t1 = time.process_time()
text = open(sys.argv[1], "rb").read().decode("latin-1")
generate(text, "sm_89")
t2 = time.process_time()
generate(text, "sm_89")
t3 = time.process_time()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    print(f"{'file':50} {'imports ms':>10} {'first ms':>9} {'second ms':>9}")
    for name in args.files:
        path = (REPO / name) if not os.path.isabs(name) else Path(name)
        runs = []
        for _ in range(args.repeat + 1):       # the first run warms bytecode and caches
            out = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, cwd=REPO,
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout))
        best = [min(r[i] for r in runs[1:]) * 1e3 for i in range(3)]
        print(f"{path.name[:50]:50} {best[0]:10.1f} {best[1]:9.1f} {best[2]:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
