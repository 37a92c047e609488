"""Code quality (issue 6): per ZLUDA corpus kernel our compiler supports, our registers,
static instructions and emulated cycles against ptxas -O3's, with geometric means.

    .venv/bin/python bench/quality.py [--limit N] [--all]

Registers: ptxas's `-v` count against our KernelCode.regcount. Instructions: the kernel's
text as nvdisasm reads it, without NOP padding and the final self-branch. Cycles: the
emulator's timing model (emu.hazards.TimingModel) on the manifest's launch; only kernels
whose output matches with both cubins are timed. Ratios are ours / ptxas (lower is better).
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass import CompileError, codegen, oracle  # noqa: E402
from ptx2sass.emu.testing import (_parseable, run_zluda, zluda_cubin, zluda_manifest,  # noqa: E402
                                  zluda_ptx)
from ptx2sass.encoder.sass_text import parse_listing  # noqa: E402

USED_REGISTERS = re.compile(r"Used (\d+) registers")


def static_instructions(cubin: bytes, kernel: str) -> int:
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    ops = [e.instruction.opcode for f in listing.functions if f.section == f".text.{kernel}"
           for e in f.entries]
    while ops and ops[-1] in ("NOP", "BRA"):
        ops.pop()
    return sum(1 for op in ops if op != "NOP")


def ptxas_registers(entry: dict) -> int | None:
    run = oracle.ptxas(zluda_ptx(entry), "sm_89", options=("-v",), name=entry["ptx"])
    found = USED_REGISTERS.findall(run.stderr or "")
    return int(found[0]) if found else None


def measure(entry: dict) -> dict | str:
    try:
        module = codegen.lower_ptx(zluda_ptx(entry), "sm_89", entry["ptx"])
        ours_cubin, codes = codegen.generate_module(module, "sm_89", filename=entry["ptx"])
    except CompileError as e:
        return f"refused: {e.message}"
    theirs_cubin = zluda_cubin(entry)
    if theirs_cubin is None:
        return "ptxas rejects"
    (code,) = [c for c in codes if c.name == entry["kernel"]]
    ours_run = run_zluda(entry, hazard_check=True, cubin=ours_cubin)
    theirs_run = run_zluda(entry, hazard_check=True, cubin=theirs_cubin)
    if not (ours_run.passed and theirs_run.passed):
        return f"not timed: ours {ours_run.reason or 'ok'} / ptxas {theirs_run.reason or 'ok'}"
    return {
        "regs": (code.regcount, ptxas_registers(entry)),
        "insts": (static_instructions(ours_cubin, entry["kernel"]),
                  static_instructions(theirs_cubin, entry["kernel"])),
        "cycles": (ours_run.result.cycles, theirs_run.result.cycles),
        "hazards": len(ours_run.result.hazards),
    }


def geomean(ratios: list[float]) -> float:
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="at most N kernels (even spread)")
    ap.add_argument("--all", action="store_true", help="print every kernel, not only the table")
    args = ap.parse_args(argv)
    entries = [e for e in zluda_manifest() if "ptxas_error" not in e]
    if args.limit:
        step = max(1, len(entries) // args.limit)
        entries = entries[::step][:args.limit]
    rows, skipped = [], 0
    for entry in entries:
        m = measure(entry)
        if isinstance(m, str):
            skipped += 1
            if args.all:
                print(f"{entry['name']:<36} {m[:80]}")
            continue
        rows.append((entry["name"], m))
    print(f"{'kernel':<36} {'regs':>9} {'insts':>9} {'cycles':>13} hazards")
    for name, m in rows:
        r, i, c = m["regs"], m["insts"], m["cycles"]
        print(f"{name:<36} {r[0]:>4}/{r[1] if r[1] is not None else '?':<4} {i[0]:>4}/{i[1]:<4} "
              f"{c[0]:>6}/{c[1]:<6} {m['hazards']}")
    print(f"{len(rows)} kernels measured, {skipped} skipped (refused, rejected or not matching)")
    for key in ("regs", "insts", "cycles"):
        ratios = [m[key][0] / m[key][1] for _, m in rows if m[key][1]]
        print(f"geomean {key:<7} ours/ptxas = {geomean(ratios):.3f}  (n={len(ratios)})")
    spills = sum(1 for _, m in rows if m["regs"][1] is not None and m["regs"][0] > 255)
    print(f"kernels with zero hazards: {sum(1 for _, m in rows if m['hazards'] == 0)}/{len(rows)}"
          f"; over-255-register kernels: {spills}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
