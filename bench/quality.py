"""Code quality (issue 6): per corpus kernel our compiler supports, our registers, static
instructions and emulated cycles against ptxas -O3's, with geometric means per corpus.

    .venv/bin/python bench/quality.py [--arch sm_90] [--corpus zluda|tinygrad|triton|cuda|realworld ...]
                                      [--limit N] [--worst N] [--all]

Corpora: ZLUDA (`../shared/corpus/zluda`, the manifest's launch and expected output),
CUDA (`tests/corpus/cuda`, the manifest's launch and NumPy reference),
tinygrad (`tests/corpus/tinygrad`, the manifest's launch on `tinygrad_inputs`) and Triton
(`tests/corpus/triton`, `tests/triton_corpus.py`'s inputs and launch) and the real-world corpus
(`tests/corpus/realworld`, each annotated kernel of the arch's modules on its annotation's
random inputs, checked against ptxas's cubin). Each corpus's held-back quarter (never tuned
on) is summarised apart; `--held-back` measures only it. The default run is
every ZLUDA, CUDA and Triton kernel and an even, deterministic sample of --tinygrad-limit (60)
tinygrad kernels of at most 4096 threads; `--limit N` caps every corpus to N kernels spread
evenly over its manifest.

Registers: the cubin's register count (ours / ptxas's). Instructions: the kernel's text as
nvdisasm reads it, without NOP padding and the final self-branch. Cycles: the emulator's
single-warp estimate (emu.hazards.TimingModel); SM cycles: the SM-level model on the
arch's GPU (emu.timing: occupancy, pipes, caches, bank conflicts; `--no-sm-model` skips it). A kernel is measured only when both cubins run and
our output buffers equal ptxas's bit for bit (and, for ZLUDA, the manifest's expected
output). Ratios are ours / ptxas (lower is better). `--arch` (default sm_89): both
compilers target it; the hazards the checker finds in ptxas's cubins are counted too.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ptx2sass import CompileError, codegen, oracle  # noqa: E402
from ptx2sass.emu.errors import EmuFault  # noqa: E402
from tools.emu_testing import (TINYGRAD_DIR, _parseable, cubin_listing_decoder,  # noqa: E402
                                  run_tinygrad, run_zluda,
                                  tinygrad_manifest, zluda_manifest, zluda_ptx)
from ptx2sass.encoder.cubin import read_cubin  # noqa: E402
from tools import corpora  # noqa: E402
from tools.corpus_words import compile_for  # noqa: E402
from ptx2sass.encoder.sass_text import parse_listing  # noqa: E402
from ptx2sass.emu.timing.facts import NoTimingFacts  # noqa: E402
from ptx2sass.emu.timing.model import from_result  # noqa: E402
from ptx2sass.emu.timing.occupancy import LaunchTooLarge  # noqa: E402
from ptx2sass.emu.timing.trace import Tee  # noqa: E402

MAX_THREADS = 4096
SM_MODEL = True          # also time both cubins on the SM-level model (emu.timing)
OPTIONS: dict = {}       # our compiler's options (--ours-option NAME=VALUE: A/B runs)


def static_instructions(cubin: bytes, kernel: str) -> int:
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    ops = [e.instruction.opcode for f in listing.functions if f.section == f".text.{kernel}"
           for e in f.entries]
    while ops and ops[-1] in ("NOP", "BRA"):
        ops.pop()
    return sum(1 for op in ops if op != "NOP")


def registers(cubin: bytes, kernel: str) -> int:
    (k,) = [k for k in read_cubin(cubin).kernels if k.name == kernel]
    return k.regcount


# Each corpus: its entries, and for one entry the name, PTX, kernel, file name, and a
# launch(cubin) -> (LaunchResult | None, {buffer: bytes} | reason).

class Zluda:
    name = "zluda"

    def entries(self):
        return [e for e in zluda_manifest() if "ptxas_error" not in e]

    def describe(self, e):
        return e["name"], zluda_ptx(e), e["kernel"], e["ptx"]

    def held_back(self, e):
        from tools.emu_testing import ZLUDA_DIR
        return corpora.held_back(ZLUDA_DIR / e["ptx"])

    def launch(self, e, cubin):
        run = run_zluda(e, hazard_check=True, cubin=cubin, timing=Tee.checked if SM_MODEL else None)
        if not run.passed:
            return None, run.reason
        return run.result, run.result.buffers


class Tinygrad:
    name = "tinygrad"

    def entries(self):
        return [k for k in tinygrad_manifest()
                if math.prod(k["grid"]) * math.prod(k["block"]) <= MAX_THREADS]

    def describe(self, e):
        return e["file"][:-4], (TINYGRAD_DIR / e["file"]).read_text(), e["entry"], e["file"]

    def held_back(self, e):
        return corpora.held_back(TINYGRAD_DIR / e["file"])

    def launch(self, e, cubin):
        run = run_tinygrad(e, hazard_check=True, cubin=cubin, timing=Tee.checked if SM_MODEL else None)
        if not run.ok:
            return None, run.reason
        return run.result, run.result.buffers


class Triton:
    name = "triton"

    def __init__(self):
        import triton_corpus
        self.tc = triton_corpus

    def entries(self):
        return self.tc.manifest()

    def describe(self, e):
        return e["file"][:-4], (self.tc.TRITON_DIR / e["file"]).read_text(), e["entry"], e["file"]

    def held_back(self, e):
        return corpora.held_back(self.tc.TRITON_DIR / e["file"])

    def launch(self, e, cubin):
        try:
            # decoded from nvdisasm's listing (as the ZLUDA and tinygrad launches are): our
            # codec's tables lack a few forms ptxas uses in this corpus
            result, data = self.tc.launch(e, cubin, decoder=cubin_listing_decoder(cubin), trace=SM_MODEL)
        except EmuFault as err:
            return None, f"fault: {err}"
        return result, {n: a.tobytes() for n, a in data.items()}


class Cuda:
    """tests/corpus/cuda: nvcc-written PTX of ordinary CUDA kernels (atomics, shared-memory
    transposes and histograms, shuffles ...), checked against the corpus's NumPy reference."""
    name = "cuda"

    def __init__(self):
        from tools import emu_testing
        self.testing = emu_testing
        self.ref = emu_testing.cuda_reference_module()

    def entries(self):
        return [e for e in self.ref.load_manifest()
                if math.prod(e["grid"]) * math.prod(e["block"]) <= MAX_THREADS]

    def describe(self, e):
        return e["name"], (self.testing.CUDA_DIR / e["ptx"]).read_text(), e["kernel"], e["ptx"]

    def held_back(self, e):
        """The file's quarter (tools.corpora.held_back); in patterns.cu, which was written for
        issue 20 and tuned on kernel by kernel, the kernels whose sha256(name)[0] % 4 == 0."""
        if e["ptx"] == "patterns.ptx":
            return hashlib.sha256(e["name"].encode()).digest()[0] % 4 == 0
        return corpora.held_back(self.testing.CUDA_DIR / e["ptx"])

    def launch(self, e, cubin):
        run = self.testing.run_cuda_launch(e, self.ref, hazard_check=True, compiler=lambda *_: cubin,
                                           timing=Tee.checked if SM_MODEL else None)
        if not run.passed:
            return None, run.reason
        return run.result, run.result.buffers


class Realworld:
    """tests/corpus/realworld: nvcc- and Numba-written PTX of CUB, Thrust, cooperative groups,
    atomics, image filters ... (issue 16), every annotated kernel of the modules built for
    the measured arch (sm_89 modules when that arch has none), on the annotation's random
    inputs (fixed seed); checked against ptxas's cubin only (the corpus has no reference)."""
    name = "realworld"

    def __init__(self):
        from tools import realworld
        self.rw = realworld
        self.arch = "sm_89"

    def entries(self):
        modules = self.rw.manifest()
        archs = {m["arch"] for m in modules}
        arch = self.arch if self.arch in archs else "sm_89"
        out = []
        for m in modules:
            if m["arch"] != arch:
                continue
            for k in m["kernels"]:
                run = k.get("run")
                if run and math.prod(self.rw._dim(run["grid"])) * math.prod(self.rw._dim(run["block"])) <= MAX_THREADS:
                    out.append({"module": m, "entry": k["entry"], "run": run})
        return out

    def describe(self, e):
        m = e["module"]
        stem = m["source"].removeprefix("src/").rsplit(".", 1)[0]
        return (f"{stem}/{e['entry'][:40]}", (self.rw.CORPUS / m["ptx"]).read_text(), e["entry"],
                Path(m["ptx"]).name)

    def held_back(self, e):
        return bool(e["module"]["held_back"])

    def launch(self, e, cubin):
        from ptx2sass.emu.launch import run as emu_run
        run = e["run"]
        params = self.rw.launch_params(run, 0)
        try:
            # the annotation's cluster launch (tools.realworld._cluster: sm_90+ only); without
            # it cluster kernels ran as clusters of one CTA or faulted
            result = emu_run(cubin, e["entry"], self.rw._dim(run["grid"]), self.rw._dim(run["block"]),
                             params, dynamic_shared_bytes=run.get("smem", 0), hazard_check=True,
                             trace=SM_MODEL, cluster=self.rw._cluster(cubin, run))
        except Exception as err:  # noqa: BLE001 - an emulator gap or fault: the kernel is skipped
            return None, f"fault: {type(err).__name__}: {str(err)[:80]}"
        return result, {i: p.tobytes() for i, p in enumerate(params) if isinstance(p, np.ndarray)}


CORPORA = {"zluda": Zluda, "tinygrad": Tinygrad, "triton": Triton, "cuda": Cuda, "realworld": Realworld}
DEFAULT_LIMITS = {"zluda": None, "tinygrad": 60, "triton": None, "cuda": None, "realworld": None}


def spread(entries: list, limit: int | None) -> list:
    """At most `limit` entries, evenly spaced over the list (deterministic)."""
    if not limit or limit >= len(entries):
        return entries
    return [entries[i * len(entries) // limit] for i in range(limit)]


def measure(corpus, entry, arch: str = "sm_89") -> dict | str:
    name, ptx, kernel, filename = corpus.describe(entry)
    # PTX written for sm_89 is refused for an older arch (sm_75) as it stands: both compilers
    # get it with its `.target` rewritten, as a front end would write it for that GPU
    theirs_cubin, retargeted = compile_for(ptx.encode(), arch, filename)
    if retargeted:
        ptx = re.sub(r"(\.target\s+)sm_\w+", lambda m: m.group(1) + arch, ptx, count=1)
    try:
        module = codegen.lower_ptx(ptx, arch, filename)
        ours_cubin, _ = codegen.generate_module(module, arch, dict(OPTIONS), filename=filename)
    except CompileError as e:
        return f"refused: {e.message}"
    if theirs_cubin is None:
        return "ptxas rejects"
    theirs, theirs_bufs = corpus.launch(entry, theirs_cubin)
    if theirs is None:
        return f"ptxas's cubin fails: {theirs_bufs}"
    ours, ours_bufs = corpus.launch(entry, ours_cubin)
    if ours is None:
        return f"ours fails: {ours_bufs}"
    if any(ours_bufs[n] != b for n, b in theirs_bufs.items()):
        return "outputs differ from ptxas's"
    sm = (0, 0)
    if SM_MODEL and ours.trace is not None and theirs.trace is not None:
        try:
            sm = (from_result(ours, arch).cycles, from_result(theirs, arch).cycles)
        except (NoTimingFacts, LaunchTooLarge):     # no GPU model for the arch, or no room
            pass
    return {
        "sm_cycles": sm,
        "regs": (registers(ours_cubin, kernel), registers(theirs_cubin, kernel)),
        "insts": (static_instructions(ours_cubin, kernel), static_instructions(theirs_cubin, kernel)),
        "cycles": (ours.cycles, theirs.cycles),
        "hazards": len(ours.hazards),
        "ptxas_hazards": len(theirs.hazards),
    }


def geomean(ratios: list[float]) -> float:
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")


def ratio(m: dict, key: str) -> float:
    a, b = m[key]
    return a / b if b else float("nan")


def _figures(rows: list) -> dict:
    return {key: geomean([ratio(m, key) for _, m in rows if m[key][1]])
            for key in ("regs", "insts", "cycles", "sm_cycles")}


_FIGURES = "regs {regs:.3f}  insts {insts:.3f}  cycles {cycles:.3f}  SM cycles {sm_cycles:.3f}"


def report(corpus_name: str, rows: list, skipped: list, args, held: set | None = None,
           groups: dict | None = None) -> dict:
    """`held`: names of the held-back kernels (the corpus's fixed quarter kept out of tuning),
    summarised apart; `groups`: name -> kernel class (its source file), for --by-file."""
    print(f"\n## {corpus_name}")
    held = held or set()
    if args.all:
        print(f"{'kernel':<40} {'regs':>9} {'insts':>9} {'cycles':>15} {'SM cycles':>15} hazards")
        for name, m in rows:
            r, i, c, s = m["regs"], m["insts"], m["cycles"], m["sm_cycles"]
            print(f"{name[:40]:<40} {r[0]:>4}/{r[1]:<4} {i[0]:>4}/{i[1]:<4} "
                  f"{c[0]:>7}/{c[1]:<7} {s[0]:>7}/{s[1]:<7} {m['hazards']}{'  (held back)' if name in held else ''}")
        for name, why in skipped:
            print(f"{name[:40]:<40} skipped: {why[:80]}")
    figures = _figures(rows)
    print(f"{len(rows)} kernels measured, {len(skipped)} skipped (refused, rejected or not matching); "
          f"zero hazards: {sum(1 for _, m in rows if m['hazards'] == 0)}/{len(rows)} "
          f"(ptxas's: {sum(1 for _, m in rows if m['ptxas_hazards'] == 0)}/{len(rows)})")
    print("geomean ours/ptxas: " + _FIGURES.format(**figures))
    parts = {"tuning": [r for r in rows if r[0] not in held], "held back": [r for r in rows if r[0] in held]}
    for part, part_rows in parts.items():
        if part_rows:
            print(f"  {part} ({len(part_rows)}): " + _FIGURES.format(**_figures(part_rows)))
    if groups and args.by_file:
        for group in sorted(set(groups.values())):
            g_rows = [r for r in rows if groups.get(r[0]) == group]
            if g_rows:
                print(f"  {group} ({len(g_rows)}): " + _FIGURES.format(**_figures(g_rows)))
    sm = [ratio(m, "sm_cycles") for _, m in rows if m["sm_cycles"][1]]
    print(f"SM cycles above 1.25x ptxas: {sum(1 for r in sm if r > 1.25)}/{len(sm)}; "
          f"registers above 1.05x: {sum(1 for _, m in rows if ratio(m, 'regs') > 1.05)}/{len(rows)}")
    for key in ("cycles", "sm_cycles", "insts"):
        worst = sorted(rows, key=lambda r: -ratio(r[1], key))[:args.worst]
        if worst:
            print(f"worst by {key}: " + ", ".join(
                f"{n} {ratio(m, key):.2f} ({m[key][0]}/{m[key][1]})" for n, m in worst))
    return figures | {"n": len(rows), "skipped": len(skipped),
                      "held": _figures(parts["held back"]), "n_held": len(parts["held back"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_89", help="target of both compilers (default sm_89)")
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA),
                    help="corpus to measure (repeatable; default: all)")
    ap.add_argument("--limit", type=int, default=None,
                    help="at most N kernels per corpus (even spread); 0 = no limit")
    ap.add_argument("--tinygrad-limit", type=int, default=DEFAULT_LIMITS["tinygrad"],
                    help="tinygrad sample size when --limit is not given (0 = all)")
    ap.add_argument("--worst", type=int, default=5, help="list the N worst kernels per ratio")
    ap.add_argument("--match", action="append", default=None,
                    help="only kernels whose name (stem/entry) contains this (repeatable: any of them)")
    ap.add_argument("--all", action="store_true", help="print every kernel, not only the summary")
    ap.add_argument("--no-sm-model", action="store_true", help="skip the SM-level model's column")
    ap.add_argument("--by-file", action="store_true", help="also a geomean per source file (kernel class)")
    ap.add_argument("--exclude-limit", type=int, default=None, metavar="M",
                    help="leave out the kernels a --limit M run measures (a held-out set: "
                         "--limit 120 --exclude-limit 40 --worst 0 is tinygrad's 80 beyond the tuned 40)")
    ap.add_argument("--hash-split", default=None, metavar="SALT:N:K",
                    help="only kernels whose sha256(SALT:name)[0] %% N == K (a fixed split, e.g. a fresh "
                         "held-out set: --limit 0 --exclude-limit 120 --hash-split q28:6:0)")
    ap.add_argument("--exclude-names", default=None, metavar="REGEX",
                    help="leave out kernels whose name matches (kernels already looked at)")
    ap.add_argument("--held-back", action="store_true",
                    help="only the held-back quarter of each corpus (never tuned on)")
    ap.add_argument("--ours-option", action="append", default=[], metavar="NAME=VALUE",
                    help="an option for our compiler (e.g. uniform_datapath=false), for A/B runs")
    args = ap.parse_args(argv)
    global SM_MODEL
    SM_MODEL = not args.no_sm_model
    OPTIONS.update(o.split("=", 1) for o in args.ours_option)
    table = {}
    for name in args.corpus or list(CORPORA):
        corpus = CORPORA[name]()
        limit = args.limit if args.limit is not None else (
            args.tinygrad_limit if name == "tinygrad" else DEFAULT_LIMITS[name])
        if hasattr(corpus, "arch"):
            corpus.arch = args.arch
        rows, skipped, held, groups = [], [], set(), {}
        entries = corpus.entries()
        if args.match:
            entries = [e for e in entries if any(m in corpus.describe(e)[0] for m in args.match)]
        if args.held_back:
            entries = [e for e in entries if corpus.held_back(e)]
        chosen = spread(entries, limit or None)
        if args.exclude_limit:
            excluded = {id(e) for e in spread(entries, args.exclude_limit)}
            chosen = [e for e in chosen if id(e) not in excluded]
        if args.hash_split:
            salt, n, k = args.hash_split.rsplit(":", 2)
            chosen = [e for e in chosen if hashlib.sha256(f"{salt}:{corpus.describe(e)[0]}".encode())
                      .digest()[0] % int(n) == int(k)]
        if args.exclude_names:
            chosen = [e for e in chosen if not re.search(args.exclude_names, corpus.describe(e)[0])]
        for entry in chosen:
            m = measure(corpus, entry, args.arch)
            label, _, _, filename = corpus.describe(entry)
            if corpus.held_back(entry):
                held.add(label)
            groups[label] = filename
            (skipped.append((label, m)) if isinstance(m, str) else rows.append((label, m)))
        table[name] = report(name, rows, skipped, args, held, groups)
    print("\n| corpus | kernels | registers | instructions | cycles | SM cycles |\n|---|---|---|---|---|---|")
    for name, f in table.items():
        print(f"| {name} | {f['n']} | {f['regs']:.3f} | {f['insts']:.3f} | {f['cycles']:.3f} | {f['sm_cycles']:.3f} |")
        if f["n_held"]:
            h = f["held"]
            print(f"| {name}, held back | {f['n_held']} | {h['regs']:.3f} | {h['insts']:.3f} | "
                  f"{h['cycles']:.3f} | {h['sm_cycles']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
