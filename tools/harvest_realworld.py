"""Rebuild the real-world corpus: PTX that the pinned NVIDIA toolchain from PyPI writes for
CUDA C++ kernels of the kinds users write (CUB, Thrust, cooperative groups, async copies,
wmma, the math library, printf/assert, atomics, textures, half/bf16, warp intrinsics) and
for Numba kernels.

Usage: .venv/bin/python -m tools.harvest_realworld [--check] [--no-numba]
       .venv/bin/python -m tools.harvest_realworld --only STEM [--only STEM ...]
`--only` builds just those C++ sources and splices their modules into the committed manifest
(the other modules and their PTX stay as committed: a whole rebuild renames CCCL's anonymous
namespaces in modules whose sources did not change).

Sources: `tests/corpus/realworld/src/*.cu` (nvcc `-O3`, CCCL headers from PyPI's
`nvidia-cuda-cccl`; a `//@nvcc OPTIONS` line adds options) and
`tests/corpus/realworld/src/numba_kernels.py` (`numba.cuda.compile_ptx`, PyPI's
`numba-cuda` + `nvidia-cuda-nvrtc`; no GPU needed; `pip install -e .[harvest]`). Each is built for every arch in ARCHS;
a build the NVIDIA tool refuses is recorded in the manifest with its message. Launches are
described by `//@run {json}` (C++: "grid", "block", "args", optional "smem" and "cluster",
the thread-block cluster shape of an sm_90+ launch, tools.realworld) or `RUNS` (Numba) next
to the kernels; the manifest joins
them with the `.entry` names, and records the held-back split (tools.corpora.held_back of the
source file) so reports never tune on the held-back quarter.

Neither nvcc nor Numba is needed at test time: the PTX and the manifest are committed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ptx2sass import oracle
from tools.build_cuda_corpus import _fixed_scratch_root, normalise_ptx
from tools.corpora import REPO, held_back

CORPUS = REPO / "tests" / "corpus" / "realworld"
SRC = CORPUS / "src"
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90")
BASE_OPTIONS = ("-O3",)
CCCL_PIN = "nvidia-cuda-cccl==13.3.5.0.6"   # the newest CCCL on PyPI for CUDA 13 (no 13.5 wheel)
RUN_TAG = "//@run"
NVCC_TAG = "//@nvcc"
# `__launch_bounds__(...)` or an attribute macro (an upper-case name: `CLUSTER_OF_2` for a
# `__cluster_dims__` only some archs get) may stand before the kernel's name
KERNEL_RE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?'
                       r'(?:[A-Z_][A-Z0-9_]*\s+)*(\w+)\s*\(')
ENTRY_RE = re.compile(r"\.entry\s+([\w$]+)")


class HarvestError(RuntimeError):
    """The sources are inconsistent (bad annotation, missing kernel)."""


def cccl_include() -> Path:
    inc = oracle.tool_path("nvcc").parent.parent / "include" / "cccl"
    if not (inc / "cub").is_dir():
        raise HarvestError(f"CCCL headers not found in {inc}: pip install '{CCCL_PIN}'")
    return inc


def cuda_sources() -> list[Path]:
    return sorted(SRC.glob("*.cu"))


def nvcc_options(source: Path) -> tuple[str, ...]:
    extra: list[str] = []
    for line in source.read_text().splitlines():
        if line.startswith(NVCC_TAG):
            extra += line[len(NVCC_TAG):].split()
    return (*BASE_OPTIONS, *extra)


def cuda_runs(source: Path) -> dict[str, dict]:
    """Kernel name -> launch annotation for every `//@run` line of a .cu file."""
    lines = source.read_text().splitlines()
    out = {}
    for n, line in enumerate(lines):
        if not line.startswith(RUN_TAG):
            continue
        try:
            spec = json.loads(line[len(RUN_TAG):])
        except json.JSONDecodeError as e:
            raise HarvestError(f"{source.name}:{n + 1}: bad run annotation: {e}") from e
        for follow in lines[n + 1:]:
            m = KERNEL_RE.search(follow)
            if m:
                if m.group(1) in out:
                    raise HarvestError(f"{source.name}:{n + 1}: a second annotation for {m.group(1)} "
                                       "(the kernel after the first was not recognised)")
                out[m.group(1)] = spec
                break
        else:
            raise HarvestError(f"{source.name}:{n + 1}: no extern \"C\" kernel after the annotation")
    return out


def build_cuda(source: Path, arch: str) -> tuple[str | None, str]:
    """(normalised PTX or None, nvcc's messages) for one source and arch."""
    options = (*nvcc_options(source), f"-I{cccl_include()}")
    with _fixed_scratch_root():
        run = oracle.nvcc_ptx(source.read_text(), arch, options, name=source.name)
    if not run.ok or run.output is None:
        return None, run.stderr.strip()
    return normalise_ptx(run.output.decode()), run.stderr.strip()


def build_numba(arch: str) -> dict[str, tuple[str | None, str]]:
    """Kernel name -> (PTX or None, message) for the Numba kernels."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("realworld_numba", SRC / "numba_kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cc = (int(arch[3]), int(arch[4:]))
    out = {}
    for name, (fn, signature, _run) in mod.KERNELS.items():
        try:
            ptx, _ = mod.compile_ptx(fn, signature, cc)
            out[name] = (ptx, "")
        except Exception as e:   # noqa: BLE001 - Numba's refusal is recorded as data
            out[name] = (None, f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")
    return out


def numba_runs() -> dict[str, dict | None]:
    import importlib.util
    spec = importlib.util.spec_from_file_location("realworld_numba", SRC / "numba_kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {name: run for name, (_fn, _sig, run) in mod.KERNELS.items()}


def generate(only: str | None = None, with_numba: bool = True) -> dict[str, str]:
    """File name (relative to the corpus folder) -> the text it should hold."""
    files: dict[str, str] = {}
    modules: list[dict] = []
    jobs = [(s, a) for s in cuda_sources() if only in (None, s.stem) for a in ARCHS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        built = list(pool.map(lambda sa: build_cuda(*sa), jobs))
    for (source, arch), (ptx, message) in zip(jobs, built):
        runs = cuda_runs(source)
        rel = f"cuda/{source.stem}.{arch}.ptx"
        module = {"source": f"src/{source.name}", "arch": arch, "frontend": "nvcc",
                  "options": list(nvcc_options(source)), "held_back": held_back(source)}
        if ptx is None:
            errors = [line for line in message.splitlines() if "error" in line]
            module.update(ptx=None, refused_by_nvcc=(errors or [""])[0][:300])
        else:
            files[rel] = ptx
            entries = ENTRY_RE.findall(ptx)
            missing = set(runs) - set(entries)
            if missing:
                raise HarvestError(f"{source.name} {arch}: annotated kernels without .entry: {sorted(missing)}")
            module.update(ptx=rel, kernels=[{"entry": e, "run": runs.get(e)} for e in entries])
        modules.append(module)
    if with_numba and only in (None, "numba") and (SRC / "numba_kernels.py").is_file():
        source = SRC / "numba_kernels.py"
        runs = numba_runs()
        for arch in ARCHS:
            for name, (ptx, message) in build_numba(arch).items():
                rel = f"numba/{name}.{arch}.ptx"
                module = {"source": f"src/{source.name}:{name}", "arch": arch, "frontend": "numba",
                          "options": [], "held_back": held_back_name(source, name)}
                if ptx is None:
                    module.update(ptx=None, refused_by_nvcc=message)
                else:
                    files[rel] = ptx
                    module.update(ptx=rel, kernels=[{"entry": e, "run": runs[name]}
                                                    for e in ENTRY_RE.findall(ptx)])
                modules.append(module)
    files["manifest.json"] = json.dumps(
        {"nvcc_release": oracle.PINNED_RELEASE, "cccl": CCCL_PIN,
         "generator": "python -m tools.harvest_realworld", "modules": modules}, indent=1) + "\n"
    return files


def held_back_name(source: Path, name: str) -> bool:
    """Numba kernels share one source file: split them by the hash of the file's text for
    that kernel's function (its name and body), the same rule as whole files."""
    import hashlib
    text = source.read_text()
    m = re.search(rf"^def {re.escape(name)}\(.*?(?=^\S)", text, re.S | re.M)
    body = (m.group(0) if m else name).encode()
    return hashlib.sha256(body).digest()[0] % 4 == 0


def splice(manifest: dict, modules: list[dict], stems: list[str]) -> dict:
    """`manifest` with every module of the C++ sources `stems` replaced by `modules` (their
    fresh build), the C++ modules sorted by source and arch ahead of the Numba ones."""
    sources = {f"src/{stem}.cu" for stem in stems}
    kept = [m for m in manifest["modules"] if m["source"] not in sources]
    cpp = sorted([m for m in kept if m["frontend"] == "nvcc"] + modules, key=lambda m: (m["source"], m["arch"]))
    return {**manifest, "modules": cpp + [m for m in kept if m["frontend"] != "nvcc"]}


def harvest_only(stems: list[str]) -> int:
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    modules = []
    for stem in stems:
        if not (SRC / f"{stem}.cu").is_file():
            raise HarvestError(f"no source {SRC / stem}.cu")
        files = generate(only=stem, with_numba=False)
        modules += json.loads(files.pop("manifest.json"))["modules"]
        for rel, text in files.items():
            (CORPUS / rel).parent.mkdir(parents=True, exist_ok=True)
            (CORPUS / rel).write_text(text)
    for stale in (CORPUS / "cuda").glob("*.ptx"):
        if stale.name.split(".")[0] in stems and not any(m["ptx"] == f"cuda/{stale.name}" for m in modules):
            stale.unlink()
    (CORPUS / "manifest.json").write_text(json.dumps(splice(manifest, modules, stems), indent=1) + "\n")
    print(f"{len(modules)} modules of {', '.join(stems)} ({sum(m['held_back'] for m in modules)} held back), "
          f"{sum(len(m.get('kernels', [])) for m in modules)} kernels")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report differences, write nothing")
    ap.add_argument("--no-numba", action="store_true", help="keep the committed Numba PTX")
    ap.add_argument("--only", action="append", metavar="STEM",
                    help="build only this C++ source (repeatable) and splice it into the manifest")
    args = ap.parse_args(argv)
    if args.only:
        try:
            return harvest_only(args.only)
        except (HarvestError, oracle.OracleMissing, oracle.OracleFailed) as e:
            print(f"harvest_realworld: {e}", file=sys.stderr)
            return 1
    try:
        files = generate(with_numba=not args.no_numba)
    except (HarvestError, oracle.OracleMissing, oracle.OracleFailed) as e:
        print(f"harvest_realworld: {e}", file=sys.stderr)
        return 1
    if args.no_numba:
        old = json.loads((CORPUS / "manifest.json").read_text())
        new = json.loads(files["manifest.json"])
        new["modules"] += [m for m in old["modules"] if m["frontend"] == "numba"]
        files["manifest.json"] = json.dumps(new, indent=1) + "\n"
        files.update({str(p.relative_to(CORPUS)): p.read_text() for p in (CORPUS / "numba").glob("*.ptx")})
    stale = sorted(n for n, t in files.items() if not (CORPUS / n).is_file() or (CORPUS / n).read_text() != t)
    extra = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.ptx")
                   if str(p.relative_to(CORPUS)) not in files)
    if args.check:
        for n in stale:
            print(f"stale: {n}")
        for n in extra:
            print(f"not generated: {n}")
        return 1 if stale or extra else 0
    for n in stale:
        (CORPUS / n).parent.mkdir(parents=True, exist_ok=True)
        (CORPUS / n).write_text(files[n])
    for n in extra:
        (CORPUS / n).unlink()
    modules = json.loads(files["manifest.json"])["modules"]
    print(f"{len(modules)} modules ({sum(m['ptx'] is None for m in modules)} refused by nvcc/Numba), "
          f"{sum(len(m.get('kernels', [])) for m in modules)} kernels; wrote {len(stale)}, removed {len(extra)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
