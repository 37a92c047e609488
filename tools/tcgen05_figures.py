"""Size, registers and emulated cycles of ptxas's and our cubins of the tcgen05 kernels of
tests/test_codegen_tcgen05.py (alloc/st/ld/dealloc round trip, commit, a 32x32b.x32 store and
load), each run in the emulator with its hazard count (docs/STATUS.md, branch tcgen05b); and
of tests/test_emu_utcmma.py's tcgen05.mma kernels (branch utcgen26), whose values are also
checked against NumPy.

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
    mma_figures()
    ws_figures()
    return 0


def mma_figures() -> None:
    import numpy as np
    from ptx2sass.compiler import compile as compile_ptx
    from test_emu_utcmma import launch
    cases = [("f16", {}), ("e4m3", {"a_tmem": True}), ("s8", {"en_imm": 0}),
             ("f16", {"lanes": np.array([0xF00F, 1, 0, 0xFFFF0000], np.uint32)})]
    for kind, kw in cases:
        row = [f"mma {kind} {' '.join(sorted(kw))}".strip()]
        for who, compiler in (("ptxas", None), ("ours", lambda p: compile_ptx(p, "sm_100a"))):
            cubins = []

            def keep(ptx, compiler=compiler):
                from test_emu_utcmma import ptxas
                cubins.append((compiler or ptxas)(ptx))
                return cubins[-1]
            got, want, result = launch(kind, 32, compiler=keep, hazards=True, **kw)
            k = read_cubin(cubins[0]).kernels[0]
            row.append(f"{who}: {len(k.text) // 16} words, {k.regcount} registers, "
                       f"{result.cycles} cycles, {len(result.hazards)} hazards, "
                       f"{'= NumPy' if np.array_equal(got, want) else 'WRONG'}")
        print(" | ".join(row))


def ws_figures() -> None:
    """tests/test_tcgen05_mma_ws.py's tcgen05.mma.ws kernels (branch tcgen28)."""
    from ptx2sass.compiler import compile as compile_ptx
    from test_tcgen05_mma_ws import MASKS, launch_ws
    m, n, desc, cols, shift = MASKS["m32_shift"]
    cases = [("f16", 128, 64, {}), ("e4m3", 64, 64, {}), ("s8", 32, 64, {}),
             ("f16", 32, 64, dict(mask=desc, zero_cols=cols, shift=shift))]
    for kind, m, n, kw in cases:
        row = [f"mma.ws {kind} M{m} N{n} {' '.join(sorted(kw))}".strip()]
        for who, compiler in (("ptxas", None), ("ours", lambda p: compile_ptx(p, "sm_100a"))):
            cubins = []

            def keep(ptx, compiler=compiler):
                from test_emu_utcmma import ptxas
                cubins.append((compiler or ptxas)(ptx))
                return cubins[-1]
            got, want, result = launch_ws(kind, m, n, compiler=keep, hazards=True, **kw)
            k = read_cubin(cubins[0]).kernels[0]
            row.append(f"{who}: {len(k.text) // 16} words, {k.regcount} registers, "
                       f"{result.cycles} cycles, {len(result.hazards)} hazards, "
                       f"{'= NumPy' if np.array_equal(got, want) else 'WRONG'}")
        print(" | ".join(row))


if __name__ == "__main__":
    raise SystemExit(main())
