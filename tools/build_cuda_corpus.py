"""Regenerate the CUDA C reference corpus: PTX from the pinned nvcc, and its launch manifest.

Usage: .venv/bin/python -m tools.build_cuda_corpus [--check]

Every `tests/corpus/cuda/*.cu` file is compiled for sm_89 with the variants listed in
VARIANTS (always `-O3`; `-G` and `-lineinfo` for a few files). Launches are described next to
their kernels by `//@launch {json}` comments; the NumPy reference named there
(`tests/corpus/cuda/reference.py`) declares which buffers are outputs and how to compare them.
The manifest joins the two. `--check` regenerates in memory and reports files that differ.

nvcc writes its scratch folder into debug builds (`.file` paths and the DWARF comp_dir), the
installation's include paths into `.file` lines and a per-run random hash into the names of
internal functions, so those are normalised (see `normalise_ptx`).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptx2sass import oracle

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus" / "cuda"
ARCH = "sm_89"
BASE_OPTIONS = ("-O3",)

# File stem -> extra builds beyond the plain one: (suffix of the .ptx name, nvcc options).
# With -G, header intrinsics become internal .func calls (named with a per-run hash that
# normalise_ptx replaces); nvcc 13.5 -G fails on bits.cu (dp2a in sm_61_intrinsics.hpp).
VARIANTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "calls": (("G", ("-G",)),),
    "control": (("G", ("-G",)),),
    "warp": (("lineinfo", ("-O3", "-lineinfo")),),
    "intdiv": (("lineinfo", ("-O3", "-lineinfo")),),
    "float_math": (("lineinfo", ("-O3", "-lineinfo")),),
}
# Files whose plain build uses other options than BASE_OPTIONS.
PLAIN_OPTIONS: dict[str, tuple[str, ...]] = {
    "fastmath": ("-O3", "-use_fast_math"),
}

LAUNCH_TAG = "//@launch"
SCRATCH_ROOT = "/tmp"                 # fixed, so the DWARF comp_dir always has the same length
# Machine- or run-specific text and its same-length stand-in. nvcc names internal-linkage
# functions (inlined header intrinsics, seen in DWARF strings) with a per-run random hash.
MACHINE_SPECIFIC = (
    (re.compile(rb"/tmp/ptx2sass-oracle-[A-Za-z0-9_]{8}"), b"/tmp/ptx2sass-oracle-XXXXXXXX"),
    (re.compile(rb"_INTERNAL_[0-9a-f]{8}_"), b"_INTERNAL_00000000_"),
)
B8_RUN_RE = re.compile(r"(?:^\.b8 \d+(?:,\d+)*\n)+", re.M)
FILE_LINE_RE = re.compile(r'^(\s*\.file\s+\d+\s+)"([^"]*)"', re.M)


class CorpusError(RuntimeError):
    """The corpus sources are inconsistent (bad annotation, nvcc failure, missing kernel)."""


@dataclass(frozen=True)
class Build:
    source: str                  # "calls.cu"
    ptx: str                     # "calls.G.ptx"
    options: tuple[str, ...]


def builds_for(source: Path) -> list[Build]:
    stem = source.stem
    out = [Build(source.name, f"{stem}.ptx", PLAIN_OPTIONS.get(stem, BASE_OPTIONS))]
    for suffix, options in VARIANTS.get(stem, ()):
        out.append(Build(source.name, f"{stem}.{suffix}.ptx", options))
    return out


def sources() -> list[Path]:
    return sorted(CORPUS.glob("*.cu"))


def _scrub(data: bytes) -> bytes:
    for pattern, stand_in in MACHINE_SPECIFIC:
        data = pattern.sub(stand_in, data)
    return data


def _scrub_b8_run(m: re.Match) -> str:
    """Rewrite consecutive `.b8` lines (DWARF strings split over lines) as one byte string,
    keeping every line's byte count."""
    rows = [[int(v) for v in line[4:].split(",")] for line in m.group(0).splitlines()]
    data = _scrub(bytes(b for row in rows for b in row))
    out, pos = [], 0
    for row in rows:
        out.append(".b8 " + ",".join(str(b) for b in data[pos:pos + len(row)]) + "\n")
        pos += len(row)
    return "".join(out)


def normalise_ptx(ptx: str) -> str:
    """Remove what depends on the machine or the run rather than the source.

    `.file` directives keep only the file's base name (they hold nvcc's scratch folder and the
    installation's include path). The scratch folder (DWARF comp_dir of -G builds) and the
    random hash in internal function names are replaced by same-length stand-ins, also inside
    DWARF `.b8` byte strings, so no section offset or length changes.
    """
    ptx = FILE_LINE_RE.sub(lambda m: f'{m.group(1)}"{Path(m.group(2)).name}"', ptx)
    ptx = B8_RUN_RE.sub(_scrub_b8_run, ptx)
    return _scrub(ptx.encode()).decode()


@contextlib.contextmanager
def _fixed_scratch_root():
    saved = tempfile.tempdir
    tempfile.tempdir = SCRATCH_ROOT
    try:
        yield
    finally:
        tempfile.tempdir = saved


def compile_build(build: Build) -> str:
    """The normalised PTX that the pinned nvcc makes for one build (cached by the oracle)."""
    src = (CORPUS / build.source).read_text()
    with _fixed_scratch_root():
        run = oracle.nvcc_ptx(src, ARCH, build.options, name=build.source)
    if not run.ok or run.output is None:
        raise CorpusError(f"nvcc {' '.join(build.options)} {build.source} failed:\n{run.stderr}")
    return normalise_ptx(run.output.decode())


def parse_launches(source: Path) -> list[tuple[str, dict]]:
    """(C++ kernel name, launch annotation) for every `//@launch` comment in a .cu file."""
    lines = source.read_text().splitlines()
    out = []
    for n, line in enumerate(lines):
        if not line.startswith(LAUNCH_TAG):
            continue
        try:
            spec = json.loads(line[len(LAUNCH_TAG):])
        except json.JSONDecodeError as e:
            raise CorpusError(f"{source.name}:{n + 1}: bad launch annotation: {e}") from e
        for follow in lines[n + 1:]:
            m = re.match(r"__global__\s+void\s+(\w+)\s*\(", follow)
            if m:
                out.append((m.group(1), spec))
                break
        else:
            raise CorpusError(f"{source.name}:{n + 1}: no __global__ kernel after the annotation")
    return out


ENTRY_RE = re.compile(r"\.entry\s+(\w+)\s*\(([^)]*)\)", re.S)


def entries(ptx: str) -> dict[str, int]:
    """Mangled `.entry` name -> number of parameters."""
    return {m.group(1): len(re.findall(r"\.param\b", m.group(2))) for m in ENTRY_RE.finditer(ptx)}


def mangled_name(cpp_name: str, ptx_entries: dict[str, int]) -> str:
    prefix = f"_Z{len(cpp_name)}{cpp_name}"
    found = [e for e in ptx_entries if e == cpp_name or e.startswith(prefix)]
    if len(found) != 1:
        raise CorpusError(f"kernel {cpp_name}: expected one .entry, found {found}")
    return found[0]


def load_reference_module():
    spec = importlib.util.spec_from_file_location("cuda_corpus_reference", CORPUS / "reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cuda_corpus_reference", module)
    spec.loader.exec_module(module)
    return module


def manifest_entries(ptx_texts: dict[str, str]) -> list[dict]:
    ref = load_reference_module()
    out = []
    for source in sources():
        launches = parse_launches(source)
        for build in builds_for(source):
            ptx_entries = entries(ptx_texts[build.ptx])
            variant = build.ptx[len(source.stem) + 1:-len(".ptx")]
            for cpp_name, spec in launches:
                out.append(ref.manifest_entry(
                    name=spec.get("name", cpp_name) + ("" if variant == "" else f".{variant}"),
                    source=build.source, ptx=build.ptx, nvcc_options=list(build.options),
                    kernel=mangled_name(cpp_name, ptx_entries), spec=spec))
    return out


def generate() -> dict[str, str]:
    """File name (relative to the corpus folder) -> the text it should hold."""
    files: dict[str, str] = {}
    for source in sources():
        for build in builds_for(source):
            files[build.ptx] = compile_build(build)
    manifest = {"arch": ARCH, "nvcc_release": oracle.PINNED_RELEASE,
                "generator": "python -m tools.build_cuda_corpus",
                "launches": manifest_entries(files)}
    files["manifest.json"] = json.dumps(manifest, indent=1) + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report differences, write nothing")
    args = ap.parse_args(argv)
    try:
        files = generate()
    except (CorpusError, ValueError, KeyError, oracle.OracleMissing, oracle.OracleFailed) as e:
        print(f"build_cuda_corpus: {e}", file=sys.stderr)
        return 1
    stale = sorted(name for name, text in files.items()
                   if not (CORPUS / name).is_file() or (CORPUS / name).read_text() != text)
    expected = set(files) | {"reference.py", "README.md"} | {s.name for s in sources()}
    extra = sorted(p.name for p in CORPUS.iterdir() if p.is_file() and p.name not in expected
                   and p.suffix in (".ptx", ".json"))
    if args.check:
        for name in stale:
            print(f"stale: {name}")
        for name in extra:
            print(f"not generated: {name}")
        return 1 if stale or extra else 0
    for name in stale:
        (CORPUS / name).write_text(files[name])
        print(f"wrote {name}")
    for name in extra:
        (CORPUS / name).unlink()
        print(f"removed {name}")
    n_launch = len(json.loads(files["manifest.json"])["launches"])
    print(f"{len(sources())} sources, {len(files) - 1} PTX files, {n_launch} launches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
