"""The real-world corpus as a debug build: each CUDA source of tests/corpus/realworld/src
through nvcc `-G` (or `-lineinfo`) instead of `-O3`, then ptxas and ptx2sass with the same
option (`-g` for -G), and every annotated kernel run in the emulator on both cubins.

nvcc -G's PTX is a different language in practice: every `.func` stays a call, values
round-trip through the local stack (`%SP`), structs return through `.param` arrays. The
committed corpus is -O3 PTX only, so this is where -g's code generation meets what users
compile with `nvcc -G` (cuda-gdb, compute-sanitizer builds).

Usage: .venv/bin/python -m tools.realworld_debug [--mode G|lineinfo] [--arch sm_89]
           [--only STEM ...] [--held-back | --tuning] [--per-source] [--stack-bytes N]
`--stack-bytes`: the per-thread stack limit every launch runs under (the program's
cudaDeviceSetLimit(cudaLimitStackSize, N); default the driver's 1 KiB).
Needs the NVIDIA toolchain from PyPI (nvcc, ptxas) and CCCL for the CUB/Thrust sources."""
from __future__ import annotations

import argparse
import sys

from ptx2sass import codegen, oracle
from tools import harvest_realworld as harvest
from tools import realworld as rw
from tools.build_cuda_corpus import _fixed_scratch_root
from tools.corpora import held_back

NVCC_MODE = {"G": "-G", "lineinfo": "-lineinfo"}
PTXAS_MODE = {"G": ("-g",), "lineinfo": ("-lineinfo",)}
OUR_MODE = {"G": {"debug": True, "opt_level": 0}, "lineinfo": {"lineinfo": True}}


def debug_ptx(source, arch: str, mode: str) -> tuple[str | None, str]:
    """(PTX or None, nvcc's message): the source's own options without -O3, plus -G/-lineinfo."""
    options = [o for o in harvest.nvcc_options(source) if not o.startswith("-O")]
    options += [NVCC_MODE[mode], f"-I{harvest.cccl_include()}"]
    with _fixed_scratch_root():
        run = oracle.nvcc_ptx(source.read_text(), arch, tuple(options), name=source.name)
    if not run.ok or run.output is None:
        return None, run.stderr.strip().splitlines()[-1:][0] if run.stderr.strip() else "nvcc failed"
    return run.output.decode(), ""


def measure(source, arch: str, mode: str, stack_bytes: int | None = None) -> list[tuple[str, str, str]]:
    """(kernel, outcome, detail) per annotated kernel: match / differ / ours-fault /
    ptxas-fault / not-compiled."""
    ptx, message = debug_ptx(source, arch, mode)
    if ptx is None:
        return [("-", "nvcc-refused", message)]
    theirs = oracle.ptxas(ptx, arch, PTXAS_MODE[mode], name=source.stem + ".ptx")
    if not theirs.ok:
        return [("-", "ptxas-refused", theirs.stderr.strip()[:200])]
    try:
        ours = codegen.compile_ptx(ptx, arch, source.stem + ".ptx", **OUR_MODE[mode])
    except Exception as e:  # noqa: BLE001 - any failure of ours is the finding
        return [("-", "ours-refused", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")]
    out = []
    for entry, run in sorted(harvest.cuda_runs(source).items()):
        results = []
        for cubin in (ours, theirs.output):
            try:
                results.append(rw.emulate(cubin, entry, run, stack_bytes=stack_bytes)[1])
            except Exception as e:  # noqa: BLE001
                results.append(e)
        a, b = results
        if isinstance(b, Exception):
            out.append((entry, "ptxas-fault", f"{type(b).__name__}: {str(b)[:160]}"))
        elif isinstance(a, Exception):
            out.append((entry, "ours-fault", f"{type(a).__name__}: {str(a)[:160]}"))
        else:
            bad = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
            out.append((entry, "match" if not bad else "differ", f"buffers {bad}" if bad else ""))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=sorted(NVCC_MODE), default="G")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--only", action="append", help="source stems (repeatable)")
    part = ap.add_mutually_exclusive_group()
    part.add_argument("--held-back", action="store_true", help="only the held-back sources")
    part.add_argument("--tuning", action="store_true", help="only the tuning sources")
    ap.add_argument("--per-source", action="store_true", help="also one line of outcomes per source")
    ap.add_argument("--stack-bytes", type=int, default=None,
                    help="per-thread stack limit of every launch (cudaLimitStackSize; default 1024)")
    args = ap.parse_args(argv)
    totals: dict[tuple[bool, str], int] = {}
    for source in harvest.cuda_sources():
        if args.only and source.stem not in args.only:
            continue
        held = held_back(source)
        if (args.held_back and not held) or (args.tuning and held):
            continue
        tally: dict[str, int] = {}
        for entry, outcome, detail in measure(source, args.arch, args.mode, args.stack_bytes):
            totals[held, outcome] = totals.get((held, outcome), 0) + 1
            tally[outcome] = tally.get(outcome, 0) + 1
            if outcome != "match":
                print(f"{source.name:28s} {'held' if held else 'tune'} {entry:32s} {outcome} {detail}", flush=True)
        if args.per_source:
            print(f"{source.name:28s} {'held' if held else 'tune'} {dict(sorted(tally.items()))}", flush=True)
    for held in (False, True):
        row = {o: n for (h, o), n in sorted(totals.items()) if h == held}
        print(f"{'held back' if held else 'tuning'}: {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
