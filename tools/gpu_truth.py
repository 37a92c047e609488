"""Hardware truth for the emulator: where the GPU's run of ptxas's own cubin of a fuzz program
differs from the emulator's run of the same cubin, which instruction is to blame.

    python -m tools.gpu_truth RUN_DIR [--rerun] [--seeds A,B] [--examples N]

RUN_DIR holds what a GPU check left (docs/gpu_check.md): `bundle.json` + `blobs.zip` (the
bundle), `gpu_report.json`, `gpu_report_mismatches.zip` (the GPU's output bytes of every
launch/variant that failed a comparison) and `fuzz_ptx/SEED.ptx`; a saved program of
`--corpus fuzzfile` is named by its file's stem and its case is its header's. For every fuzz launch whose
ptxas cubin's GPU outputs differ from the emulator's, each differing output element is mapped
to its slot and so to the instruction key of the statement that last wrote it (Case.slots),
and the differences are printed grouped by key, with examples. Each difference is classed:

    nan-payload    both NaN, other payload bits (a float slot)
    approx         within the slot's tolerance (an approximate instruction)
    exact          any other difference: the emulator's semantics are wrong
    counter        a contended global atomic counter (the order of the atomics differs)
    private        a per-thread atomic / vector-store word of the atom buffer
    undefined      (--rerun) depends on shared memory nothing wrote: the emulator's outputs
                   change with the bytes shared memory starts with

`--ours` does the same for our cubins' launches (the GPU's bytes of ours, `fuzz__SEED.ours.*.bin`,
against the emulator's run of our cubin).

`--rerun` runs today's emulator on every fuzz launch's ptxas cubin and counts the launches
whose outputs equal the GPU's (the GPU's bytes for the failing launches come from the zip;
for the others the GPU equalled the bundle's emulator outputs).
"""
from __future__ import annotations

import argparse
import json
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CACHE = REPO / ".cache" / "gpu_truth"
FUZZ_CORPORA = ("fuzz", "fuzzfile")     # a generated seed, or a saved program with its case header


class Run:
    """One GPU run's files."""

    def __init__(self, folder: Path, build: str = "ptxas"):
        from tools.gpu_check.bundle import Bundle
        self.folder = Path(folder)
        self.build = build              # whose cubin's launches: "ptxas" or "ours"
        self.bundle = Bundle(self.folder)
        self.report = json.loads((self.folder / "gpu_report.json").read_text())
        self.mismatches = zipfile.ZipFile(self.folder / "gpu_report_mismatches.zip")
        self.names = set(self.mismatches.namelist())
        self.launches = {l["id"]: l for l in self.bundle.launches if l.get("corpus") in FUZZ_CORPORA}
        self.verdicts = {l["id"]: l for l in self.report["launches"] if l.get("corpus") in FUZZ_CORPORA}

    def lid(self, seed: str) -> str:
        """The launch id of a key: a fuzz seed, or a saved program's stem (`--corpus fuzzfile`)."""
        return f"fuzz/{seed}" if f"fuzz/{seed}" in self.launches else f"fuzzfile/{seed}"

    def seeds(self) -> list[str]:
        return sorted(lid.split("/", 1)[1] for lid in self.launches)

    def failing(self) -> list[str]:
        return [s for s in self.seeds()
                if self.verdicts[self.lid(s)].get(self.build, {}).get("gpu", {}).get("emulator", {}).get("verdict") == "fail"]

    def ptx(self, seed: str) -> str:
        launch = self.launches[self.lid(seed)]
        if launch["corpus"] == "fuzzfile":      # the saved file's text, its case header included
            return self.bundle.blob(launch["ptx"]).decode()
        return (self.folder / "fuzz_ptx" / f"{seed}.ptx").read_text()

    def cubin(self, seed: str) -> bytes:
        return self.bundle.blob(self.launches[self.lid(seed)]["cubins"][self.build]["cubin"])

    def emulator_outputs(self, seed: str) -> dict[str, bytes]:
        outs = self.launches[self.lid(seed)]["emu"][self.build]["outputs"]
        return {name: self.bundle.blob(key) for name, key in outs.items()}

    def gpu_outputs(self, seed: str) -> dict[str, bytes]:
        """The GPU's bytes: from the zip where a comparison failed, else the emulator's (the
        GPU's outputs matched them)."""
        outs = self.emulator_outputs(seed)
        for name in outs:
            zname = f"{self.lid(seed).replace('/', '__')}.{self.build}.{name}.bin"
            if zname in self.names:
                outs[name] = self.mismatches.read(zname)
        return outs


def case_for(seed: str, ptx: str):
    """The fuzz Case of `seed` whose PTX is `ptx` (the generator re-run; cached as JSON), or
    for a saved program (`--corpus fuzzfile`) the case its `// fuzz-case:` header records."""
    from ptx2sass.fuzz.inputs import Case, read_case
    from tools.gpu_check.sources import FUZZ_ARCH
    saved = read_case(ptx)
    if saved is not None:
        saved.arch = FUZZ_ARCH
        return saved
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{seed}.json"
    if path.is_file():
        case = Case.from_json(json.loads(path.read_text()), ptx)
        return case
    from ptx2sass.fuzz.campaign import Options, make_program
    from ptx2sass.fuzz.inputs import case_from_program
    from tools.gpu_check.sources import fuzz_case
    case = case_from_program(make_program(int(seed), Options(arch=FUZZ_ARCH, exclude=["texture"])))
    case.arch = FUZZ_ARCH
    if case.text != ptx:         # statements were peeled off: the slow way, as prepare did
        case = fuzz_case(seed)
    if case.text != ptx:         # made before run-dependent specials went to sinks
        from ptx2sass.fuzz import generator
        saved, generator.RUN_DEPENDENT = generator.RUN_DEPENDENT, ()
        try:
            case = fuzz_case(seed)
        finally:
            generator.RUN_DEPENDENT = saved
    if case.text != ptx:
        raise ValueError(f"seed {seed}: the generator no longer gives the PTX the GPU ran")
    path.write_text(json.dumps(case.to_json()))
    return case


# ------------------------------------------------------------------------------ differences

def classify_out(case, gpu: bytes, emu: bytes) -> list[dict]:
    """Every differing output slot element: thread, slot, key, class, values."""
    from ptx2sass.fuzz.runner import SLOT_WIDTH, _lanes, _nan, _bf16_nan, equal_slot
    threads, nslots = case.threads, max(1, len(case.slots))
    g = np.frombuffer(gpu, dtype=np.uint64).reshape(threads, nslots)
    e = np.frombuffer(emu, dtype=np.uint64).reshape(threads, nslots)
    rows = []
    for th, sl in zip(*np.nonzero(g != e)):
        th, sl = int(th), int(sl)
        name, kind, floats, tol, key, where = case.slots[sl]
        width = SLOT_WIDTH[kind]
        mask = (1 << width) - 1
        x, y = int(g[th, sl]), int(e[th, sl])
        cls = "exact"
        if x >> width == y >> width:
            if equal_slot(x & mask, y & mask, width, tuple(floats), 0.0):
                cls = "nan-payload"
            elif tol and equal_slot(x & mask, y & mask, width, tuple(floats), tol):
                cls = "approx"
        rows.append({"thread": th, "slot": sl, "name": name, "key": key, "where": where, "class": cls,
                     "gpu": x & mask if x >> width == y >> width else x,
                     "emu": y & mask if x >> width == y >> width else y, "width": width})
    return rows


def classify_atom(case, gpu: bytes, emu: bytes) -> list[dict]:
    """The atom buffer: contended counters, each thread's private words, then the per-warp
    scratch that wmma/mma stores write."""
    from ptx2sass.fuzz.program import COUNTER_BYTES, GLOBAL_COUNTER_OPS, PRIVATE_BYTES
    g = np.frombuffer(gpu, dtype=np.uint64)
    e = np.frombuffer(emu, dtype=np.uint64)
    rows = []
    for i in np.nonzero(g != e)[0]:
        i = int(i)
        if i < COUNTER_BYTES // 8:
            op = GLOBAL_COUNTER_OPS[i] if i < len(GLOBAL_COUNTER_OPS) else "?"
            rows.append({"word": i, "key": f"contended atom.global.{op}", "class": "counter",
                         "gpu": int(g[i]), "emu": int(e[i])})
        elif i >= (COUNTER_BYTES + PRIVATE_BYTES * case.threads) // 8:
            rows.append({"word": i, "key": "warp scratch (wmma/mma store)", "class": "scratch",
                         "gpu": int(g[i]), "emu": int(e[i])})
        else:
            word = (i - COUNTER_BYTES // 8) % (PRIVATE_BYTES // 8)
            thread = (i - COUNTER_BYTES // 8) // (PRIVATE_BYTES // 8)
            rows.append({"word": i, "thread": thread, "key": f"private word {word}", "class": "private",
                         "gpu": int(g[i]), "emu": int(e[i])})
    return rows


RUN_DEPENDENT = {"%warpid": "%warpid (the warp's slot on its SM)", "%smid": "%smid (the SM that ran it)",
                 "%gridid": "%gridid (a launch counter)"}


def nondeterministic(run: Run, seed: str, case) -> str | None:
    """Why the launch's outputs cannot be reproduced, or None: a run-dependent special
    register that reaches the outputs (the generator now sends them to sinks), or a .param
    blob of which the GPU got only the first 8 bytes (the generator now passes all 32)."""
    ptx = run.ptx(seed)
    for reg, why in RUN_DEPENDENT.items():
        if reg in ptx:
            return f"nondeterministic: {why}"
    sizes = [len(bytes.fromhex(p["bytes"])) for p in run.launches[run.lid(seed)]["params"] if "bytes" in p]
    if any(p[1] == "blob" for p in case.params) and sizes and sizes[-1] < 32:
        return "undefined: .param blob bytes 8-31"
    return None


def differences(run: Run, seed: str, emu: dict | None = None, other_fill: dict | None = None) -> list[dict]:
    """The GPU-vs-emulator differences of one launch (emulator outputs: `emu` or the bundle's).
    `other_fill`: the emulator's outputs with shared memory filled otherwise before the run;
    a difference where the two runs differ too read shared memory nothing had written (the
    GPU's bytes there are whatever an earlier kernel left): class `undefined`."""
    case = case_for(seed, run.ptx(seed))
    gpu = run.gpu_outputs(seed)
    emu = emu or run.emulator_outputs(seed)
    rows = classify_out(case, gpu["out"], emu["out"]) + classify_atom(case, gpu["atom"], emu["atom"])
    why = nondeterministic(run, seed, case)
    stale = set()
    if other_fill is not None:
        for name in ("out", "atom"):
            a = np.frombuffer(emu[name], np.uint64)
            b = np.frombuffer(other_fill[name], np.uint64)
            stale |= {(name, int(i)) for i in np.flatnonzero(a != b)}
    nslots = max(1, len(case.slots))
    for r in rows:
        r["seed"] = seed
        where = ("out", r["thread"] * nslots + r["slot"]) if "slot" in r else ("atom", r["word"])
        if why:
            r["class"] = why.split(":")[0]
            r["key"] = why.split(": ", 1)[1] + " <- " + r["key"]
        elif where in stale:
            r["class"] = "undefined"
            r["key"] = "uninitialised shared memory <- " + r["key"]
    return rows


def launch_class(rows: list[dict]) -> str:
    """One word for a launch's differences: the most serious class among its rows."""
    order = ("exact", "private", "counter", "scratch", "approx", "nan-payload", "undefined", "nondeterministic")
    classes = {r["class"] for r in rows}
    return next((c for c in order if c in classes), "same")


def emulate(run: Run, seed: str, shared_fill: int = 0) -> dict[str, bytes]:
    """Today's emulator on the launch's ptxas cubin, with the buffers and parameter bytes the
    GPU got (a run-5 bundle passed 8 bytes of the 32-byte .param blob: the rest is 0 here)."""
    from ptx2sass.emu.launch import Param, run_buffers
    from ptx2sass.fuzz.inputs import launch_data
    from ptx2sass.fuzz.runner import BUDGET
    from tools.gpu_check.bundle import blob_key
    from tools.gpu_check.prepare import load_program     # nvdisasm's listing where our decoder has a gap
    case = case_for(seed, run.ptx(seed))
    data = launch_data(case)
    launch = run.launches[run.lid(seed)]
    for name, (size, init) in data.buffers.items():
        if blob_key(init) != launch["buffers"][name]["init"]:
            raise ValueError(f"seed {seed}: buffer {name} is not the one the GPU got")
    params = [Param(buffer=p["buffer"]) if "buffer" in p else Param(type="bytes", value=bytes.fromhex(p["bytes"]))
              for p in launch["params"]]
    prog = load_program(run.cubin(seed), case.kernel)
    res = run_buffers(prog, case.grid, case.block, params, data.buffers, budget=BUDGET, hazard_check=False,
                      shared_fill=shared_fill)
    return {name: bytes(res.buffers[name]) for name in ("out", "atom")}


def write_tests(run: Run, seeds: list[str], folder: Path, xfail: dict[str, str],
                label: str = "2026-11-27 H200 run 5") -> int:
    """Regression data for tests/test_gpu_truth.py: per seed `SEED.ptx` (the `// fuzz-case:`
    header, then the PTX the GPU's cubin was compiled from) and `SEED.gpu.gz` (the GPU's `out`
    then `atom` bytes), and `manifest.json` (the sha256 of ptxas's cubin the GPU ran, the
    buffer sizes, and for a known-unexplained launch its xfail reason). Returns bytes written."""
    import gzip
    import hashlib
    from ptx2sass.fuzz.inputs import case_header
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    total = 0
    for seed in seeds:
        case = case_for(seed, run.ptx(seed))
        if nondeterministic(run, seed, case):
            raise ValueError(f"seed {seed}: its outputs depend on the run ({nondeterministic(run, seed, case)})")
        gpu = run.gpu_outputs(seed)
        sha = run.verdicts[run.lid(seed)]["ptxas"].get("gpu", {}).get("sha", {})
        for name, digest in sha.items():      # the bytes are the GPU's (the report's digest)
            if hashlib.sha256(gpu[name]).hexdigest()[:len(digest)] != digest:
                raise ValueError(f"seed {seed}: {name} is not the GPU's (sha {digest})")
        (folder / f"{seed}.ptx").write_text(case_header(case) + case.text)
        blob = gzip.compress(gpu["out"] + gpu["atom"], 9, mtime=0)
        (folder / f"{seed}.gpu.gz").write_bytes(blob)
        entry = {"cubin_sha256": hashlib.sha256(run.cubin(seed)).hexdigest(), "out": len(gpu["out"]),
                 "atom": len(gpu["atom"]), "run": label}
        if not case.fmad:       # the GPU check compiles a fuzz case with its own --fmad (since run 10)
            entry["ptxas_options"] = ["--fmad=false"]
        if seed in xfail:
            entry["xfail"] = xfail[seed]
        manifest[seed] = entry
        total += len(blob) + (folder / f"{seed}.ptx").stat().st_size
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return total


def _fmt(v: int, width: int = 64) -> str:
    return f"{v:#0{width // 4 + 2}x}"


def table(rows: list[dict], examples: int = 3) -> str:
    by_key = defaultdict(list)
    for r in rows:
        by_key[(r["class"], r["key"])].append(r)
    lines = [f"{'class':<12} {'instruction key':<44} {'elements':>8} {'launches':>8}  examples (seed thread slot: GPU / emulator)"]
    for (cls, key), rs in sorted(by_key.items(), key=lambda kv: (kv[0][0] != "exact", -len({r['seed'] for r in kv[1]}))):
        seeds = sorted({r["seed"] for r in rs})
        ex = []
        for r in rs[:examples]:
            w = r.get("width", 64)
            ex.append(f"{r['seed']} t{r.get('thread', '-')} s{r.get('slot', r.get('word'))}: "
                      f"{_fmt(r['gpu'], w)} / {_fmt(r['emu'], w)}")
        lines.append(f"{cls:<12} {key:<44} {len(rs):>8} {len(seeds):>8}  " + "; ".join(ex))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--seeds", help="comma-separated seeds (default: every failing fuzz launch)")
    ap.add_argument("--rerun", action="store_true", help="run today's emulator on every fuzz launch")
    ap.add_argument("--failing", action="store_true", help="with --rerun: only the launches that failed on the GPU")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--ours", action="store_true",
                    help="our cubins' launches instead of ptxas's (GPU vs the emulator's run of ours)")
    ap.add_argument("--json", type=Path, help="write every difference row here")
    ap.add_argument("--write-tests", type=Path, metavar="DIR",
                    help="write the --seeds launches as regression data (tests/gpu_truth)")
    ap.add_argument("--xfail", action="append", default=[], metavar="SEED=REASON",
                    help="with --write-tests: a launch the emulator does not reproduce yet, and why")
    ap.add_argument("--label", default="2026-11-27 H200 run 5",
                    help="with --write-tests: the GPU run the bytes come from (the manifest's `run`)")
    args = ap.parse_args(argv)
    run = Run(args.run, "ours" if args.ours else "ptxas")
    if args.write_tests:
        xfail = dict(x.split("=", 1) for x in args.xfail)
        seeds = args.seeds.split(",") if args.seeds else []
        size = write_tests(run, seeds + [s for s in xfail if s not in seeds], args.write_tests, xfail, args.label)
        print(f"wrote {len(seeds) + len(set(xfail) - set(seeds))} launches to {args.write_tests}: {size} bytes")
        return 0
    if args.rerun:
        seeds = args.seeds.split(",") if args.seeds else run.failing() if args.failing else run.seeds()
        rows, same = [], 0
        for seed in seeds:
            try:
                d = differences(run, seed, emulate(run, seed), emulate(run, seed, shared_fill=0x5A))
            except Exception as e:  # noqa: BLE001 - a fault is a result to report
                print(f"{seed}: emulator fails: {type(e).__name__}: {e}")
                continue
            rows += d
            same += not d
            print(f"{seed}: {'same' if not d else f'{len(d)} differ ({launch_class(d)})'}", flush=True)
        print(f"\nemulator = GPU on {same}/{len(seeds)} fuzz launches (ptxas cubins)")
        by = defaultdict(list)
        for r in rows:
            by[r["seed"]].append(r)
        counts = defaultdict(int)
        for seed, rs in by.items():
            counts[launch_class(rs)] += 1
        print("launches by their most serious difference: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    else:
        seeds = args.seeds.split(",") if args.seeds else run.failing()
        rows = []
        for seed in seeds:
            rows += differences(run, seed)
        print(f"{len(seeds)} launches, {len(rows)} differing elements")
    print(table(rows, args.examples))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
