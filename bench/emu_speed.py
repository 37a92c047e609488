"""Emulator speed over the ZLUDA corpus: warp-instructions executed per second of
emulation (instructions come from nvdisasm's listing; decoding and compilation by ptxas are
cached and excluded from the timing, program preparation is included).

    .venv/bin/python bench/emu_speed.py [--hazards] [--repeat N]
"""
from __future__ import annotations

import argparse
import time

from ptx2sass.emu.testing import cubin_listing_decoder, run_zluda, zluda_cubin, zluda_manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hazards", action="store_true", help="with the hazard checker and cycle model")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    prepared = []
    for entry in zluda_manifest():
        cubin = zluda_cubin(entry)
        if cubin is not None:
            prepared.append((entry, cubin, cubin_listing_decoder(cubin)))
    best = None
    for _ in range(args.repeat):
        instructions = 0
        start = time.perf_counter()
        for entry, cubin, decoder in prepared:
            outcome = run_zluda(entry, hazard_check=args.hazards, decoder=decoder, cubin=cubin)
            if outcome.result is not None:
                instructions += outcome.result.instructions
        elapsed = time.perf_counter() - start
        rate = instructions / elapsed
        best = rate if best is None else max(best, rate)
    print(f"{len(prepared)} kernels, {instructions} warp-instructions, "
          f"{best:,.0f} warp-instructions/s (best of {args.repeat}, hazards {'on' if args.hazards else 'off'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
