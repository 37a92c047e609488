"""`prepare`: everything the GPU machine cannot do itself, done here and written into a bundle.

For each selected corpus launch: ptxas's cubin (the pinned 13.5.37, the oracle) and ours for
the target arch, the launch's inputs, the expected outputs (the corpus's reference), and the
emulator's outputs and cycle estimate for both cubins. For each calibration benchmark: ptxas's
cubin, its PTX (the driver can JIT it where the cubin does not load), the opcodes of its
measured loop, and the emulator's cycles where the model has something to say. Also
tinygrad's own results for tests/tinygrad_programs.py (CPU device) and the wheels the GPU
machine lacks.
"""
from __future__ import annotations

import collections
import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tools.corpora import REPO, held_back

from . import calibration, sources
from .bundle import WHEELS, BundleWriter, scalar_bytes
from .compare import compare_outputs

EMU_BUDGET = 5_000_000          # warp-instructions per emulated launch (the emulator's default)
TINYGRAD_REF_CHUNK = 40
# tinygrad's PYTHON device interprets every thread: references for launches above this many
# threads cost minutes each (tests/test_emu_tinygrad.py's CHEAP_THREADS); those launches are
# still compared with the emulator's outputs and ours with ptxas's
TINYGRAD_REF_MAX_THREADS = 4096
def select(corpora: list[str], limit: int | None, pattern: str | None = None) -> list[tuple[str, str]]:
    """(corpus, key) pairs: every launch, or per corpus the first `limit` by the sha256 of
    the key (a spread across the corpus that does not change as it grows); `pattern` (a
    regular expression) keeps the keys `corpus/key` it matches, before the limit."""
    import re
    out = []
    for corpus in corpora:
        keys = sources.keys(corpus)
        if pattern:
            keys = [k for k in keys if re.search(pattern, f"{corpus}/{k}")]
        if limit is not None:
            keys = sorted(keys, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[:limit]
        out += [(corpus, k) for k in sorted(keys)]
    return out


# --------------------------------------------------------------------------- one launch

def _decoder_for(cubin: bytes):
    """Our codec first; nvdisasm's listing where a word is not in our tables yet."""
    from tools.emu_testing import cubin_listing_decoder
    return cubin_listing_decoder(cubin)


def emu_param(p: dict):
    """A bundle's launch parameter as the emulator's Param (by-value aggregates come as hex)."""
    from ptx2sass.emu import Param
    if "buffer" in p:
        return Param(buffer=p["buffer"])
    return Param(type="bytes", value=scalar_bytes("bytes", p["value"])) if p["type"] == "bytes" \
        else Param(type=p["type"], value=p["value"])


def load_program(cubin: bytes, kernel: str):
    from ptx2sass.emu import EmuFault
    from ptx2sass.emu.loader import load_program as load
    try:
        return load(cubin, kernel)
    except EmuFault as e:
        if "cannot decode" not in str(e):
            raise
        return load(cubin, kernel, _decoder_for(cubin))


def emulate(cubin: bytes, kernel: str, grid, block, dynamic_shared_bytes: int,
            buffers: dict[str, bytes], sizes: dict[str, int], params: list[dict],
            chains: dict[str, dict] | None = None, budget: int = EMU_BUDGET) -> dict:
    """Run one launch in the emulator with the hazard check and cycle model: {"status": "ok",
    "cycles", "instructions", "hazards", "buffers": {name: bytes}} or {"status": "fault",
    "error"}. `chains` names buffers to fill with pointer chains (calibration)."""
    from ptx2sass.emu import EmuFault
    from ptx2sass.emu.hazards import TimingModel
    from ptx2sass.emu.launch import Launch
    from .worker import chain_bytes
    try:
        program = load_program(cubin, kernel)
        launch = Launch(program, grid, block, dynamic_shared_bytes, budget=budget, hazard_check=True)
        launch.timing_model = TimingModel(launch)
        placed = {}
        for name in sorted(set(buffers) | set(sizes)):
            data = buffers.get(name, b"")
            placed[name] = launch.gmem.allocate(name, max(len(data), sizes.get(name, 0)), data)
        for name, spec in (chains or {}).items():
            placed[name].data[:] = np.frombuffer(chain_bytes(spec, len(placed[name].data),
                                                             placed[name].base), np.uint8)
        launch.set_params([emu_param(p) for p in params], placed)
        launch.run()
    except EmuFault as e:
        return {"status": "fault", "error": str(e)[:500]}
    return {"status": "ok", "cycles": int(launch.timing_model.cycles), "instructions": int(launch.budget.used),
            "hazards": len(launch.timing_model.hazards),
            "buffers": {n: b.data.tobytes() for n, b in placed.items()}}


def _compile_ours(ptx: str, arch: str, name: str, fmad: bool = True) -> dict:
    import ptx2sass
    t0 = time.perf_counter()
    try:
        cubin = ptx2sass.compile(ptx, arch, name, fmad=fmad)
    except ptx2sass.CompileError as e:
        return {"status": "refused", "error": str(e).strip()[:500]}
    except Exception as e:  # noqa: BLE001 - a crash of ours is a finding, not the end of prepare
        return {"status": "crash", "error": f"{type(e).__name__}: {e}"[:500]}
    return {"status": "ok", "cubin": cubin, "seconds": round(time.perf_counter() - t0, 3)}


def _compile_ptxas(ptx: str, arch: str, name: str, fmad: bool = True) -> dict:
    from ptx2sass import oracle
    run = oracle.ptxas(ptx, arch, () if fmad else ("--fmad=false",), name=name)
    if not run.ok:
        return {"status": "refused", "error": run.stderr.strip()[:500]}
    return {"status": "ok", "cubin": run.output}


def prepare_launch(task: tuple[str, str, str, int]) -> dict:
    """Everything the bundle holds for one corpus launch (blobs as bytes)."""
    corpus, key, arch, max_threads = task
    t0 = time.perf_counter()
    try:
        launch = sources.launch(corpus, key)
    except Exception as e:  # noqa: BLE001 - a corpus entry that cannot be built is reported
        return {"id": f"{corpus}/{key}", "corpus": corpus, "skip": f"cannot build the launch: {e}"[:300]}
    record = {"id": launch.id, "corpus": corpus, "name": launch.name, "kernel": launch.kernel,
              "ptx_name": launch.ptx_name, "grid": list(launch.grid), "block": list(launch.block),
              "dynamic_shared_bytes": int(launch.dynamic_shared_bytes), "threads": launch.threads,
              "held_back": held_back(launch.ptx_path) if launch.held_back is None else launch.held_back}
    if launch.threads > max_threads:
        record["skip"] = f"{launch.threads} threads (more than --max-threads {max_threads})"
        return record
    if launch.arch is not None:          # an arch-specific target: only on its base arch's device
        if launch.arch.rstrip("af") != arch:
            record["skip"] = f"needs {launch.arch} (a bundle for {launch.arch.rstrip('af')})"
            return record
        arch = launch.arch
    names = sorted(set(launch.buffers) | set(launch.sizes))
    record["buffers"] = {n: {"size": max(len(launch.buffers.get(n, b"")), launch.sizes.get(n, 0)),
                             "init": launch.buffers.get(n)} for n in names}
    record["params"] = [dict(p, bytes=scalar_bytes(p["type"], p["value"]).hex()) if "type" in p else dict(p)
                        for p in launch.params]
    record["ptx"] = launch.ptx.encode()
    cubins = {"ptxas": _compile_ptxas(launch.ptx, arch, launch.ptx_name, launch.fmad),
              "ours": _compile_ours(launch.ptx, arch, launch.ptx_name, launch.fmad)}
    emu = {}
    for variant, build in cubins.items():
        if build["status"] != "ok":
            continue
        emu[variant] = emulate(build["cubin"], launch.kernel, launch.grid, launch.block,
                               launch.dynamic_shared_bytes, launch.buffers, launch.sizes, launch.params)
    expected = None
    if launch.expected is not None:
        try:
            expected = launch.expected()
        except Exception as e:  # noqa: BLE001 - a reference that cannot be computed is reported
            record["reference_error"] = f"{type(e).__name__}: {e}"[:300]
    outputs = launch.outputs
    for variant, result in emu.items():
        if result["status"] != "ok":
            continue
        got = result.pop("buffers")
        result["outputs"] = {o["buffer"]: got[o["buffer"]] for o in outputs}
        if expected is not None:
            result["reference"] = compare_outputs(outputs, got, expected)
    if emu.get("ours", {}).get("status") == "ok" and emu.get("ptxas", {}).get("status") == "ok":
        emu["ours"]["vs_ptxas"] = compare_outputs(outputs, emu["ours"]["outputs"], emu["ptxas"]["outputs"], how="bits")
    record["outputs"] = [dict(o, expected=(expected or {}).get(o["buffer"])) for o in outputs]
    record["cubins"] = cubins
    record["emu"] = emu
    record["prepare_s"] = round(time.perf_counter() - t0, 2)
    return record


# --------------------------------------------------------------------------- calibration

def _loop_opcodes(cubin: bytes, kernel: str, arch: str) -> dict[str, int]:
    """Opcodes of the kernel's largest loop (the measured one) in ptxas's cubin."""
    from tools.emu_testing import cubin_listing_decoder
    from ptx2sass.encoder.cubin import read_cubin
    k = next(k for k in read_cubin(cubin).kernels if k.name == kernel)
    ins = cubin_listing_decoder(cubin)(k.text, arch, kernel)
    best: collections.Counter = collections.Counter()
    for pc, i in ins:
        target = getattr(i.operands[-1], "offset", None) if i.operands else None
        if i.opcode == "BRA" and target is not None and target < pc:
            body = collections.Counter(j.opcode for q, j in ins if target <= q <= pc)
            if sum(body.values()) > sum(best.values()):
                best = body
    return dict(best)


def prepare_benchmark(task: tuple[calibration.Benchmark, str]) -> dict:
    bench, arch = task
    record = {"id": bench.id, "kind": bench.kind, "kernel": bench.kernel, "grid": bench.grid,
              "block": bench.block, "dynamic_shared_bytes": bench.dynamic_shared_bytes,
              "buffers": bench.buffers, "meta": dict(bench.meta),
              "params": [dict(p, bytes=scalar_bytes(p["type"], p["value"]).hex()) if "type" in p else p
                         for p in bench.params],
              "ptx": bench.ptx.encode()}
    build = _compile_ptxas(bench.ptx, arch, bench.kernel + ".ptx")
    record["cubin"] = build
    if build["status"] == "ok":
        record["meta"]["loop_opcodes"] = _loop_opcodes(build["cubin"], bench.kernel, arch)
        if bench.emu is not None:
            sizes = {n: (b["size"] if isinstance(b["size"], int) else b["size"]["per_cta"])
                     for n, b in bench.buffers.items()}
            chains = {n: b["chase"] for n, b in bench.buffers.items() if "chase" in b}
            result = emulate(build["cubin"], bench.kernel, bench.grid, bench.block,
                             bench.dynamic_shared_bytes, {}, sizes, bench.emu["params"], chains)
            result.pop("buffers", None)
            result["params"] = bench.emu["params"]
            record["emu"] = result
    return record


# --------------------------------------------------------------------------- tinygrad

def tinygrad_corpus_references(files: list[str], jobs: int, log) -> dict[str, dict]:
    """tinygrad's own outputs for corpus kernels (its PYTHON device), chunks in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    from tools.emu_testing import tinygrad_references

    def chunk_refs(chunk: list[str]) -> dict:
        with tempfile.TemporaryDirectory(prefix="gpu-check-tg-") as tmp:
            try:
                return tinygrad_references(chunk, Path(tmp), timeout=1800)
            except Exception as e:  # noqa: BLE001
                log(f"  tinygrad references for {len(chunk)} kernels failed: {str(e)[:200]}")
                return {f: {"missing": f"reference run failed: {str(e)[:200]}"} for f in chunk}
    chunks = [files[i:i + TINYGRAD_REF_CHUNK] for i in range(0, len(files), TINYGRAD_REF_CHUNK)]
    out = {}
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for refs in pool.map(chunk_refs, chunks):
            out.update(refs)
    return out


def tinygrad_program_references(log) -> dict:
    """tests/tinygrad_programs.py on tinygrad's CPU device: {"npz": bytes, "failures": {}}."""
    with tempfile.TemporaryDirectory(prefix="gpu-check-tgp-") as tmp:
        out = Path(tmp) / "ref.npz"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]))
        run = subprocess.run([sys.executable, "-m", "tools.gpu_check.tinygrad_stage", "reference", str(out)],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
        if run.returncode != 0 or not out.is_file():
            log(f"  tinygrad program references failed: {run.stderr.strip()[-500:]}")
            return {"error": run.stderr.strip()[-500:]}
        failures = json.loads((Path(tmp) / "ref.json").read_text()) if (Path(tmp) / "ref.json").is_file() else {}
        return {"npz": out.read_bytes(), "failures": failures}


WHEEL_REQUIREMENTS = ("ply", "pyelftools", "tinygrad")


def download_wheels(folder: Path, log) -> list[str]:
    """The pure-Python wheels of ptx2sass's dependencies and tinygrad, at the versions
    installed here, for Python 3.12 (the GPU machine's); kept if already there."""
    folder.mkdir(parents=True, exist_ok=True)
    pins = []
    for name in WHEEL_REQUIREMENTS:
        try:
            pins.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            log(f"  {name} is not installed here: its wheel is left out")
    have = {p.name.split("-")[0].lower() for p in folder.glob("*.whl")}
    missing = [p for p in pins if p.split("==")[0].lower() not in have]
    if missing:
        run = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                              "--python-version", "3.12", "--platform", "any", "-d", str(folder), *missing],
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            log(f"  pip download failed (no network?): {run.stderr.strip()[-300:]}")
    return sorted(p.name for p in folder.glob("*.whl"))


# --------------------------------------------------------------------------- the bundle

def _store_launch(writer: BundleWriter, r: dict) -> dict:
    """Blobs of a prepared launch into the writer; bytes become keys."""
    if "skip" in r:
        return r
    for b in r["buffers"].values():
        b["init"] = writer.add(b["init"])
    r["ptx"] = writer.add(r["ptx"])
    for o in r["outputs"]:
        o["expected"] = writer.add(o["expected"])
    for build in r["cubins"].values():
        if "cubin" in build:
            build["cubin"] = writer.add(build["cubin"])
    for result in r["emu"].values():
        if "outputs" in result:
            result["outputs"] = {k: writer.add(v) for k, v in result["outputs"].items()}
    return r


def _git_state() -> dict:
    def git(*args):
        run = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return run.stdout.strip() if run.returncode == 0 else None
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def prepare(arch: str, out: Path, corpora: list[str], limit: int | None, max_threads: int,
            jobs: int, calibration_kinds: list[str] | None, tinygrad: bool, wheels: bool,
            log=print, pattern: str | None = None) -> dict:
    from ptx2sass import oracle
    t0 = time.time()
    tasks = select(corpora, limit, pattern)
    log(f"prepare for {arch}: {len(tasks)} launches from {', '.join(corpora) or 'no corpus'}; "
        f"calibration: {', '.join(calibration_kinds) if calibration_kinds is not None else 'all'}")
    writer = BundleWriter(out)
    launches, skipped = [], []
    benches = calibration.suite(arch, tuple(calibration_kinds) if calibration_kinds is not None else None) \
        if calibration_kinds != [] else []
    with multiprocessing.get_context("spawn").Pool(max(1, jobs)) as pool:
        done = 0
        for r in pool.imap_unordered(prepare_launch, [(c, k, arch, max_threads) for c, k in tasks]):
            done += 1
            (skipped if "skip" in r else launches).append(r)
            if done % 50 == 0:
                log(f"  {done}/{len(tasks)} launches ({time.time() - t0:.0f} s)")
        bench_records = list(pool.imap(prepare_benchmark, [(b, arch) for b in benches]))
    log(f"  launches done ({time.time() - t0:.0f} s); calibration: {len(bench_records)} benchmarks")
    phases = {"launches and calibration": round(time.time() - t0)}

    tg = [r for r in launches if r["corpus"] == "tinygrad"]
    if tg and tinygrad:
        cheap = [r["ptx_name"] for r in tg if r["threads"] <= TINYGRAD_REF_MAX_THREADS]
        refs = tinygrad_corpus_references(cheap, jobs, log)
        for r in tg:
            ref = refs.get(r["ptx_name"], {"missing": f"no reference for more than {TINYGRAD_REF_MAX_THREADS} threads"})
            if "missing" in ref:
                r["reference_error"] = ref["missing"]
                continue
            launch = sources.launch("tinygrad", r["ptx_name"])
            expected = sources.tinygrad_checks(r["ptx_name"], launch, ref["buffers"])
            r["outputs"] = [dict(o, expected=expected.get(o["buffer"])) for o in launch.outputs]
            for result in r["emu"].values():
                if result.get("status") == "ok":
                    result["reference"] = compare_outputs(r["outputs"], result["outputs"], expected)
        log(f"  tinygrad corpus references ({time.time() - t0:.0f} s)")
        phases["tinygrad corpus references"] = round(time.time() - t0 - sum(phases.values()))

    launches.sort(key=lambda r: r["id"])
    for r in launches:
        _store_launch(writer, r)
    for b in bench_records:
        b["ptx"] = writer.add(b["ptx"])
        if "cubin" in b["cubin"]:
            b["cubin"]["cubin"] = writer.add(b["cubin"]["cubin"])
    manifest = {"arch": arch, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": _git_state(),
                "ptxas": oracle.tool_version("ptxas"),
                "selection": {"corpora": corpora, "limit": limit, "max_threads": max_threads},
                "launches": launches, "skipped": skipped, "calibration": bench_records}
    if tinygrad:
        programs = tinygrad_program_references(log)
        manifest["tinygrad_programs"] = {"reference": writer.add(programs.get("npz")),
                                         "failures": programs.get("failures", {}),
                                         "error": programs.get("error")}
        log(f"  tinygrad program references ({time.time() - t0:.0f} s)")
        phases["tinygrad program references"] = round(time.time() - t0 - sum(phases.values()))
    if wheels:
        manifest["wheels"] = download_wheels(out / WHEELS, log)
    manifest["prepare_seconds"] = {**phases, "total": round(time.time() - t0)}
    size = writer.close(manifest)
    wheel_bytes = sum(p.stat().st_size for p in (out / WHEELS).glob("*.whl")) if (out / WHEELS).is_dir() else 0
    summary = {"arch": arch, "launches": len(launches), "skipped": len(skipped),
               "calibration": len(bench_records), "blobs": size["blobs"],
               "bundle_bytes": size["bytes"] + wheel_bytes, "seconds": round(time.time() - t0, 1),
               "ours_compiled": sum(r["cubins"]["ours"]["status"] == "ok" for r in launches),
               "ptxas_compiled": sum(r["cubins"]["ptxas"]["status"] == "ok" for r in launches)}
    log(f"bundle {out}: {summary['launches']} launches ({summary['ptxas_compiled']} with ptxas's cubin, "
        f"{summary['ours_compiled']} with ours), {summary['skipped']} skipped, "
        f"{summary['calibration']} calibration launches; {summary['bundle_bytes'] / 2**20:.1f} MiB; "
        f"{summary['seconds']:.0f} s")
    return summary
