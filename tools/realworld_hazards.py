"""The hazard checker on ptxas's own cubins of the real-world corpus, per arch.

    python -m tools.realworld_hazards sm_89 [sm_90 ...]

ptxas 13.5's code is right on silicon, so every finding is a latency rule of ours that is
too strict (and our scheduler, which reads the same rules, gives cycles away there). Every
annotated kernel of each module built for the arch (for an arch the corpus was not built for,
its sm_89 modules retargeted, as tools/realworld_report does) runs once with `hazard_check=True`;
findings are grouped by their kind with one example each."""
from __future__ import annotations

import collections
import re
import sys

from tools import realworld as rw


def modules(arch: str) -> list[dict]:
    """The corpus's modules built for `arch`, else its sm_89 modules retargeted to it."""
    built = [m for m in rw.manifest() if m["arch"] == arch]
    return built or rw.retargeted(arch)


def findings(cubin: bytes, kernel: dict) -> list:
    """The hazard checker's findings on one annotated kernel's launch of `cubin`."""
    from ptx2sass.emu.launch import run as emu_run
    run = kernel["run"]
    return emu_run(cubin, kernel["entry"], rw._dim(run["grid"]), rw._dim(run["block"]),
                   rw.launch_params(run, 0), dynamic_shared_bytes=run.get("smem", 0),
                   hazard_check=True).hazards


def sweep(arch: str, log=print) -> collections.Counter:
    from ptx2sass import oracle
    kinds: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    kernels = 0
    for m in modules(arch):
        if not m["ptx"]:
            continue
        theirs = oracle.ptxas(m.get("ptx_text") or (rw.CORPUS / m["ptx"]).read_text(), arch, name="m.ptx")
        if not theirs.ok:
            continue
        for k in m.get("kernels", []):
            run = k.get("run")
            if not run or "cluster" in run:
                continue
            kernels += 1
            try:
                found = findings(theirs.output, k)
            except Exception as e:  # noqa: BLE001 - an emulator fault is reported, not fatal
                kinds["fault"] += 1
                examples.setdefault("fault", f"{m['ptx']} {k['entry'][:40]}: {str(e)[:160]}")
                continue
            for h in found:
                text = str(h)
                kind = re.sub(r"\b(U?R|U?P)\d+\b|0x[0-9a-f]+|\d+ cycles", "#", text.split("hazard:")[-1])
                kinds[kind] += 1
                examples.setdefault(kind, f"{m['ptx']} {k['entry'][:40]}: {text[:200]}")
    log(f"{arch}: {kernels} kernels, {sum(kinds.values())} findings of {len(kinds)} kinds")
    for kind, count in kinds.most_common():
        log(f"  {count} x {examples[kind]}")
    return kinds


def main(argv: list[str] | None = None) -> int:
    archs = (argv if argv is not None else sys.argv[1:]) or ["sm_89"]
    return 1 if any(sweep(a) for a in archs) else 0


if __name__ == "__main__":
    sys.exit(main())
