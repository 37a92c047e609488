"""Saved fuzz programs whose outputs depend on the bytes shared memory starts with.

    python -m tools.shared_fill_check FILE.ptx ... [--arch sm_90]

A GPU check compares a saved program (`--corpus fuzzfile`) with the emulator bit for bit, and
the GPU's shared memory starts with whatever earlier kernels left, the emulator's with zeros:
a program that reads shared memory it never wrote cannot match except by chance (GPU run 25,
hmma_f32_probe_s9620049). Each file's ptxas cubin runs in the emulator with shared memory
filled with 0 and with 0x5A; the words of `out` and `atom` that differ are printed per file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def fill_differences(path: Path, arch: str) -> str:
    """'out N, atom M' (words that follow shared memory's starting bytes) or why it did not run."""
    from ptx2sass.emu.launch import run_buffers
    from ptx2sass.fuzz.inputs import launch_data, read_case
    from ptx2sass.fuzz.runner import BUDGET, compile_ptxas, load
    case = read_case(path.read_text())
    if case is None:
        return "no fuzz-case header"
    case.arch = arch
    cubin, err = compile_ptxas(case)
    if cubin is None:
        return "ptxas: " + err.strip().splitlines()[0][:100]
    try:
        prog = load(cubin, case.kernel)
        runs = []
        for fill in (0, 0x5A):
            data = launch_data(case)        # afresh: a run writes into its surface objects
            res = run_buffers(prog, case.grid, case.block, data.params, data.buffers, budget=BUDGET,
                              hazard_check=False, objects=data.objects, shared_fill=fill)
            runs.append({n: np.frombuffer(bytes(res.buffers[n]), np.uint64) for n in ("out", "atom")})
    except Exception as e:  # noqa: BLE001 - a fault is a result to report
        return f"emulator: {type(e).__name__}: {str(e)[:100]}"
    return ", ".join(f"{n} {int((runs[0][n] != runs[1][n]).sum())}" for n in ("out", "atom"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--arch", default="sm_90", help="the arch the GPU check runs the files for")
    args = ap.parse_args(argv)
    counts = {"independent": 0, "depends": 0, "not run": 0}
    for path in args.files:
        verdict = fill_differences(path, args.arch)
        kind = ("independent" if verdict == "out 0, atom 0" else
                "depends" if verdict.startswith("out ") else "not run")
        counts[kind] += 1
        print(f"{path.name}: {verdict}", flush=True)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
