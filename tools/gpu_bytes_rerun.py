"""Today's emulator against the bytes a GPU run recorded, launch by launch, straight from the
bundle (its cubins, buffers and parameters), without re-creating the fuzz programs.

    python -m tools.gpu_bytes_rerun BUNDLE_DIR RUN_DIR [--select REGEX] [--without-hmma-model]
        [--f16-accumulation exact|trunc_rn|trunc_rz] [--rcp64h-rounding extra4|trunc]

BUNDLE_DIR holds `bundle.json` + `blobs.zip` (what `tools.gpu_check prepare` wrote for that
run); RUN_DIR the run's `gpu_report_mismatches.zip` (the GPU's bytes of every launch/variant
whose outputs failed a comparison). For every ptxas or our cubin whose GPU bytes the zip
holds, the number of 64-bit words where the emulator's outputs differ from the GPU's is
printed; `--without-hmma-model` also runs the emulator with HMMA.F32 as the exactly rounded
sum (emu/ops_mma.py `_MIN_EXP` emptied) and prints both counts, to measure that model on
runs it was not fitted on. `tools/gpu_truth.py` classes the differences of fuzz launches
(it needs the generator to give the program again); this tool only needs the bundle.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _words_off(bundle: Path, launch: dict, which: str, gpu: dict, blob) -> int:
    from ptx2sass.emu.launch import Param, run_buffers
    from tools.gpu_check.prepare import load_program
    params = [Param(buffer=p["buffer"]) if "buffer" in p else Param(type="bytes", value=bytes.fromhex(p["bytes"]))
              for p in launch["params"]]
    buffers = {n: (b["size"], blob(b["init"])) for n, b in launch["buffers"].items()}
    prog = load_program(blob(launch["cubins"][which]["cubin"]), launch["kernel"])
    res = run_buffers(prog, launch["grid"], launch["block"], params, buffers,
                      dynamic_shared_bytes=launch.get("dynamic_shared_bytes", 0), budget=10**9, hazard_check=False)
    return sum(int(np.count_nonzero(np.frombuffer(bytes(res.buffers[n]), np.uint8).view(np.uint64)
                                    != np.frombuffer(g, np.uint8).view(np.uint64)))
               for n, g in gpu.items() if len(g) % 8 == 0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("run", type=Path)
    ap.add_argument("--select", default="", help="regular expression over launch ids")
    ap.add_argument("--without-hmma-model", action="store_true")
    ap.add_argument("--f16-accumulation", choices=("exact", "trunc_rn", "trunc_rz"),
                    help="HMMA.F16's model (emu/ops_mma.py F16_ACCUMULATION)")
    ap.add_argument("--rcp64h-rounding", choices=("extra4", "trunc"),
                    help="MUFU.RCP64H/RSQ64H's high word (emu/ops_float.py RCP64H_ROUNDING)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from ptx2sass.emu import ops_float, ops_mma
    if args.f16_accumulation:
        ops_mma.F16_ACCUMULATION = args.f16_accumulation
    if args.rcp64h_rounding:
        ops_float.RCP64H_ROUNDING = args.rcp64h_rounding
    model = dict(ops_mma._MIN_EXP)
    data = json.loads((args.bundle / "bundle.json").read_text())
    blobs = zipfile.ZipFile(args.bundle / "blobs.zip")
    index = {n[:32]: n for n in blobs.namelist()}

    def blob(key: str) -> bytes:
        return blobs.read(index[key[:32]])
    zipped = zipfile.ZipFile(args.run / "gpu_report_mismatches.zip")
    names = set(zipped.namelist())
    totals = {"now": 0, "without": 0}
    pattern = re.compile(args.select)
    for launch in data["launches"]:
        if not pattern.search(launch["id"]):
            continue
        key = launch["id"].replace("/", "__")
        for which in ("ptxas", "ours"):
            if launch.get("cubins", {}).get(which, {}).get("status") != "ok":
                continue
            gpu = {n: zipped.read(f"{key}.{which}.{n}.bin") for n in launch["buffers"]
                   if f"{key}.{which}.{n}.bin" in names}
            if not gpu:
                continue
            counts = {}
            for mode in (("now", "without") if args.without_hmma_model else ("now",)):
                ops_mma._MIN_EXP.clear()
                if mode == "now":
                    ops_mma._MIN_EXP.update(model)
                try:
                    counts[mode] = _words_off(args.bundle, launch, which, gpu, blob)
                except Exception as e:  # noqa: BLE001 - a launch the emulator cannot run is reported
                    counts[mode] = f"error: {type(e).__name__}: {str(e)[:80]}"
            ops_mma._MIN_EXP.clear()
            ops_mma._MIN_EXP.update(model)
            if all(isinstance(v, int) for v in counts.values()):
                for mode, v in counts.items():
                    totals[mode] += v
            print(launch["id"], which, " ".join(f"{m} {v}" for m, v in counts.items()), flush=True)
    print("words differing from the GPU:", " ".join(f"{m} {v}" for m, v in totals.items()
                                                    if m == "now" or args.without_hmma_model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
