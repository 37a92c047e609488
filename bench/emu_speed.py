"""Emulator speed: warp-instructions executed per second of emulation, over the ZLUDA corpus
or a deterministic sample of the tinygrad corpus. Each kernel is loaded once (cubin parsing
and decoding, here from nvdisasm's cached listing, are reported separately and excluded);
the timing covers launches: per-launch program preparation, memory set-up and execution.

    .venv/bin/python bench/emu_speed.py [--corpus zluda|tinygrad] [--hazards] [--repeat N]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools import emu_testing as testing  # noqa: E402
from ptx2sass.emu.loader import load_program  # noqa: E402


def _zluda():
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            program = load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))
            yield lambda hz, e=entry, p=program: testing.run_zluda(e, hazard_check=hz, program=p)


def _tinygrad(count: int):
    kernels = sorted(testing.tinygrad_manifest(), key=lambda k: k["sha256"])[:count]
    for entry in kernels:
        cubin = testing.tinygrad_cubin(entry)
        program = load_program(cubin, entry["entry"], testing.cubin_listing_decoder(cubin))
        yield lambda hz, e=entry, p=program: testing.run_tinygrad(e, hazard_check=hz, program=p)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", choices=("zluda", "tinygrad"), default="zluda")
    ap.add_argument("--kernels", type=int, default=40, help="tinygrad kernels (first by sha256)")
    ap.add_argument("--hazards", action="store_true", help="with the hazard checker and cycle model")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    runs = list(_zluda() if args.corpus == "zluda" else _tinygrad(args.kernels))
    loading = time.perf_counter() - start
    best = None
    for _ in range(args.repeat):
        instructions = 0
        start = time.perf_counter()
        for run in runs:
            outcome = run(args.hazards)
            if outcome.result is not None:
                instructions += outcome.result.instructions
        elapsed = time.perf_counter() - start
        rate = instructions / elapsed
        best = rate if best is None else max(best, rate)
    print(f"{args.corpus}: {len(runs)} kernels, {instructions} warp-instructions, "
          f"{best:,.0f} warp-instructions/s (best of {args.repeat}, hazards {'on' if args.hazards else 'off'}); "
          f"loading (cubin parse + decode) {loading:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
