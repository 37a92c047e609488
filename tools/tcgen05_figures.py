"""Size, registers and emulated cycles of ptxas's and our cubins of the tcgen05 kernels of
tests/test_codegen_tcgen05.py (alloc/st/ld/dealloc round trip, commit, a 32x32b.x32 store and
load), each run in the emulator with its hazard count (docs/STATUS.md, branch tcgen05b).

    py -m tools.tcgen05_figures
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ptx2sass.emu.launch import run  # noqa: E402
from ptx2sass.encoder.cubin import read_cubin  # noqa: E402
from test_codegen_tcgen05 import COMMIT, ROUND_TRIP, THREADS, _ldst_kernel, _ours, _ptxas  # noqa: E402


def main() -> int:
    kernels = [("round_trip", ROUND_TRIP, THREADS, (THREADS, 4)), ("commit", COMMIT, 64, (64,)),
               ("32x32b.x32", _ldst_kernel(32, False), THREADS, (THREADS, 32))]
    for name, ptx, threads, shape in kernels:
        row = [name]
        for who, cubin in (("ptxas", _ptxas(ptx)), ("ours", _ours(ptx))):
            out = np.zeros(shape, np.uint32)
            result = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out])
            k = read_cubin(cubin).kernels[0]
            row.append(f"{who}: {len(k.text) // 16} words, {k.regcount} registers, "
                       f"{result.cycles} cycles, {len(result.hazards)} hazards")
        print(" | ".join(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
