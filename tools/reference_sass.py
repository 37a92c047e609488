"""Print the reference SASS and resource use that the pinned ptxas gives for a PTX file.

Usage: python -m tools.reference_sass FILE.ptx [-arch sm_89]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ptx2sass import oracle


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ptx")
    ap.add_argument("-arch", "--gpu-name", dest="arch", default="sm_89")
    args = ap.parse_args(argv)
    path = Path(args.ptx)
    run = oracle.ptxas(path.read_bytes(), args.arch, ("-v",), name=path.name)
    sys.stderr.write(run.stderr)
    if not run.ok:
        return 1
    print(f"// ptxas {oracle.tool_version('ptxas')} -arch={args.arch} {path}")
    print(oracle.cuobjdump_sass(run.output))
    print(run.stdout.rstrip() or run.stderr.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
