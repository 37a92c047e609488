"""How many launches of a GPU check the emulator of today gets bit for bit as the GPU did, for
ptxas's cubins of any corpus (tools.gpu_truth does the fuzz launches with per-statement
blame; this counts every corpus).

    python -m tools.gpu_emu_agreement RUN_DIR [--corpus realworld] [--build ptxas] [--select RE]

RUN_DIR holds the check's `bundle.json` + `blobs.zip` (or a `bundle/` folder with them),
`gpu_report.json` and `gpu_report_mismatches.zip` (absent when every comparison passed).
The GPU's bytes: from the zip where the launch failed a comparison; the bundle's emulator outputs where the GPU wrote those bits
("same"); where it differed within the check's tolerance ("pass", nothing dumped) only the
report's SHA-256 prefix of each output is known, and today's outputs are held to that.
Each launch is run again in today's emulator (tools.gpu_check's emulator device) and its
outputs compared bit for bit.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path


def _bundle_dir(run_dir: Path) -> Path:
    return run_dir / "bundle" if (run_dir / "bundle" / "bundle.json").exists() else run_dir


def agreement(run_dir: Path, corpus: str | None, build: str, select: str | None) -> dict:
    from tools.gpu_check.bundle import Bundle
    from tools.gpu_check.device import Buffer, EmuDevice
    bundle = Bundle(_bundle_dir(run_dir))
    report = json.loads((run_dir / "gpu_report.json").read_text())
    verdicts = {r["id"]: r for r in report["launches"]}
    zipped = run_dir / "gpu_report_mismatches.zip"
    dumped = zipfile.ZipFile(zipped) if zipped.exists() else None  # absent when nothing failed
    names = set(dumped.namelist()) if dumped else set()
    device = EmuDevice(bundle.arch)
    rows = {}
    for spec in bundle.launches:
        lid = spec["id"]
        if (corpus and spec["corpus"] != corpus) or (select and not re.search(select, lid)):
            continue
        gpu = verdicts.get(lid, {}).get(build, {}).get("gpu", {})
        if gpu.get("status") != "ok" or build not in spec["cubins"]:
            continue
        stem = lid.replace("/", "__")
        within_tolerance = gpu.get("emulator", {}).get("verdict") == "pass"
        want = {}
        for o in spec["outputs"]:
            name = f"{stem}.{build}.{o['buffer']}.bin"
            if name in names:
                want[o["buffer"]] = dumped.read(name)
            elif within_tolerance:
                want[o["buffer"]] = gpu["sha"][o["buffer"]]
            else:
                want[o["buffer"]] = bundle.blob(spec["emu"][build]["outputs"][o["buffer"]])
        module = device.load(bundle.blob(spec["cubins"][build]["cubin"]))
        fn, _ = device.function(module, spec["kernel"])
        buffers = [Buffer(n, b["size"], bundle.blob(b["init"])) for n, b in sorted(spec["buffers"].items())]
        try:
            got = device.run(fn, spec["grid"], spec["block"], spec["dynamic_shared_bytes"], buffers,
                             spec["params"], list(want)).outputs
        except Exception as e:  # noqa: BLE001 - an emulator fault is a disagreement
            rows[lid] = f"emulator: {e}"
            print(f"{lid}: {rows[lid]}", flush=True)
            continue
        differing = [n for n in want if (hashlib.sha256(got[n]).hexdigest()[:len(want[n])] if isinstance(want[n], str)
                                         else got[n]) != want[n]]
        rows[lid] = "same" if not differing else "differs in " + ", ".join(differing)
        print(f"{lid}: {rows[lid]}", flush=True)
    same = sum(v == "same" for v in rows.values())
    return {"same": same, "launches": len(rows), "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.gpu_emu_agreement", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--corpus")
    ap.add_argument("--build", default="ptxas", choices=("ptxas", "ours"))
    ap.add_argument("--select")
    a = ap.parse_args(argv)
    result = agreement(a.run_dir, a.corpus, a.build, a.select)
    print(f"emulator = GPU on {result['same']}/{result['launches']} launches ({a.build}'s cubins"
          f"{', ' + a.corpus if a.corpus else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
