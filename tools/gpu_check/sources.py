"""The corpora as launches in one shape (prepare time only: uses the repository's corpus
modules, which need ptx2sass): what to compile, what to put in memory, which buffers are
outputs, how each is held to its reference, and that reference.

Each corpus lists its launch keys cheaply (`keys`) and builds one `Launch` from a key
(`launch`), so that worker processes can build their own. `Launch.expected()` gives the
expected bytes of each output, computed from the inputs; tinygrad's references come from
tinygrad itself in a batch (`tools.emu_testing.tinygrad_references`), so its launches have none here.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tools.corpora import REPO, all_corpus_dirs, corpus_dirs

from .compare import FLOATS

CORPORA = ("zluda", "cuda", "tinygrad", "triton", "llvm")
# also preparable: bigger tinygrad kernels (--corpus tinygrad_large), fresh fuzz programs
# (--corpus fuzz) and saved ones (--corpus fuzzfile), without references; sm_90a's warpgroup
# MMA mainloops (--corpus wgmma, NumPy references; only in an sm_90 bundle)
EXTRA_CORPORA = ("tinygrad_large", "fuzz", "fuzzfile", "wgmma", "realworld")

_NUMPY_NAMES = {np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
                np.dtype(np.uint64): "u64", np.dtype(np.int8): "s8", np.dtype(np.int16): "s16",
                np.dtype(np.int32): "s32", np.dtype(np.int64): "s64", np.dtype(np.float16): "f16",
                np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.bool_): "u8"}
# dtype names of the tinygrad and Triton manifests → the bundle's (compare.STORAGE)
_TINYGRAD_DTYPES = {"float32": "f32", "float16": "f16", "float64": "f64", "bfloat16": "bf16",
                    "float8_e4m3": "fp8e4m3", "float8_e5m2": "fp8e5m2", "bool": "u8",
                    "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
                    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
_TRITON_DTYPES = {"bfloat16": "bf16", "float8e4nv": "fp8e4m3", "float8e5": "fp8e5m2"}
_TRITON_SCALARS = {"fp32": "f32", "i32": "s32", "fp64": "f64", "i64": "s64"}


@dataclass
class Launch:
    corpus: str
    name: str
    ptx: str
    ptx_name: str
    ptx_path: Path                            # the corpus file (its content decides `held_back`)
    kernel: str
    grid: list
    block: list
    dynamic_shared_bytes: int
    buffers: dict[str, bytes]                 # initial contents; `sizes` may ask for more
    params: list[dict]                        # {"buffer": name} or {"type": t, "value": v}
    outputs: list[dict]                       # {"buffer", "check"}
    sizes: dict[str, int] = field(default_factory=dict)
    expected: Callable[[], dict[str, bytes]] | None = None
    fmad: bool = True                         # False: both compilers get --fmad=false (fuzz cases)
    arch: str | None = None                   # compile for this arch-specific target (e.g.
                                              # sm_90a) when the bundle is for its base (sm_90)
    held_back: bool | None = None             # the corpus's own split, where it keeps one

    @property
    def id(self) -> str:
        return f"{self.corpus}/{self.name}"

    @property
    def threads(self) -> int:
        return math.prod(self.grid) * math.prod(self.block)


def _module(path: Path, name: str):
    """A corpus helper module from tests/ (they import ptx2sass.emu, as prepare may)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _bytes_of(arrays: dict[str, np.ndarray]) -> dict[str, bytes]:
    return {k: np.ascontiguousarray(v).tobytes() for k, v in arrays.items()}


# --------------------------------------------------------------------------- ZLUDA

def _zluda_keys() -> list[str]:
    from tools.emu_testing import zluda_manifest
    if not (corpus_dirs()["zluda"] / "manifest.json").is_file():
        return []
    return [e["name"] for e in zluda_manifest()]


def _zluda_launch(key: str) -> Launch:
    from tools.emu_testing import zluda_manifest, zluda_ptx
    entry = next(e for e in zluda_manifest() if e["name"] == key)
    buffers = {}
    if entry["input"] is not None:
        buffers["input"] = bytes.fromhex(entry["input"]["hex"]).ljust(entry["input_bytes"], b"\0")
    dtype = entry["output"]["dtype"]
    want = bytes.fromhex(entry["output"]["hex"])
    # ZLUDA's outputs were checked on hardware: the same bits, whatever the type
    return Launch("zluda", key, zluda_ptx(entry), entry["ptx"], corpus_dirs()["zluda"] / entry["ptx"],
                  entry["kernel"], entry["grid"],
                  entry["block"], entry["dynamic_shared_bytes"], buffers,
                  [{"buffer": p} for p in entry["params"]],
                  # ZLUDA compares the first output_bytes: some tests' threads write past
                  # them from undefined inputs (ldmatrix's warp 1 reads past values_g)
                  [{"buffer": "output", "check": {"kind": "bits", "dtype": dtype,
                                                  "bytes": entry["output_bytes"]}}],
                  sizes={"output": entry["output_alloc_bytes"]},
                  expected=lambda: {"output": want})


# --------------------------------------------------------------------------- CUDA

def _cuda_ref():
    from tools.emu_testing import cuda_reference_module
    return cuda_reference_module()


def _cuda_keys() -> list[str]:
    if not (corpus_dirs()["cuda"] / "manifest.json").is_file():
        return []
    return [e["name"] for e in _cuda_ref().load_manifest()]


_CUDA_KINDS = {"exact": "bits", "ulp": "ulp", "close": "close"}


def _cuda_launch(key: str) -> Launch:
    ref = _cuda_ref()
    entry = next(e for e in ref.load_manifest() if e["name"] == key)
    inputs = ref.make_inputs(entry)
    outputs = []
    for o in entry["outputs"]:
        c = o["compare"]
        outputs.append({"buffer": o["buffer"], "check": {
            "kind": _CUDA_KINDS[c["kind"]], "dtype": o["dtype"], "ulp": c["ulp"],
            "rtol": c["rtol"], "atol": c["atol"], "nan_equal": True}})

    def expected():
        want = ref.run_reference(entry, {k: v.copy() for k, v in inputs.items()})
        return _bytes_of(want)

    params = [{"buffer": p["buffer"]} if "buffer" in p else {"type": p["type"], "value": p["value"]}
              for p in entry["params"]]
    path = corpus_dirs()["cuda"] / entry["ptx"]
    return Launch("cuda", key, path.read_text(), entry["ptx"], path, entry["kernel"], entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                  _bytes_of(inputs), params, outputs, expected=expected)


# --------------------------------------------------------------------------- tinygrad

def _tinygrad_entries(corpus: str) -> dict[str, dict]:
    """The kernels of a tinygrad corpus ("tinygrad", or the larger "tinygrad_large" kept for
    benchmarks) that the pinned ptxas accepts, by file."""
    path = all_corpus_dirs()[corpus] / "manifest.json"
    if not path.is_file():
        return {}
    kernels = json.loads(path.read_text())["kernels"]
    return {k["file"]: k for k in kernels if "ptxas_error" not in k}


_TINYGRAD_SCALARS = {"int32": "s32", "int64": "s64", "uint32": "u32"}


def _tinygrad_launch(key: str, corpus: str = "tinygrad") -> Launch:
    from tools.emu_testing import tinygrad_inputs
    entry = _tinygrad_entries(corpus)[key]
    inputs = tinygrad_inputs(entry)
    params, outputs = [], []
    for p in entry["params"]:
        if p["kind"] != "buffer":
            params.append({"type": _TINYGRAD_SCALARS[p["dtype"]], "value": p["value"]})
            continue
        params.append({"buffer": p["name"]})
        if p["access"] in ("out", "inout"):
            dtype = _TINYGRAD_DTYPES[p["dtype"]]
            if "storage_dtype" in p and dtype not in FLOATS:   # an integer kept in a narrower one
                dtype = _NUMPY_NAMES[inputs[p["name"]].dtype]
            outputs.append({"buffer": p["name"], "check": {"kind": "bits", "dtype": dtype}})
    path = all_corpus_dirs()[corpus] / key
    return Launch(corpus, key[:-4], path.read_text(), key, path, entry["entry"],
                  entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                  _bytes_of(inputs), params, outputs)


def tinygrad_checks(key: str, launch: Launch, refs: dict[str, np.ndarray]) -> dict[str, bytes]:
    """Fill the checks of a tinygrad launch from tinygrad's own outputs (`refs`), as
    `tools.emu_testing.compare_tinygrad` holds them; returns the expected bytes."""
    from tools.emu_testing import tinygrad_tolerance
    entry = _tinygrad_entries("tinygrad")[key]
    want = {}
    for out in launch.outputs:
        ref = refs.get(out["buffer"])
        if ref is None:
            continue
        tolerance = tinygrad_tolerance(entry, out["buffer"], ref, launch.ptx)
        if tolerance is not None and out["check"]["dtype"] in FLOATS:
            out["check"] = {"kind": "close", "dtype": out["check"]["dtype"], "rtol": tolerance[0],
                            "atol": tolerance[1], "nan_equal": True}
        want[out["buffer"]] = np.ascontiguousarray(ref).tobytes()
    return want


# --------------------------------------------------------------------------- Triton and LLVM

def _triton():
    return _module(REPO / "tests" / "triton_corpus.py", "ptx2sass_gpu_check_triton_corpus")


def _llvm():
    return _module(REPO / "tests" / "llvm_corpus.py", "ptx2sass_gpu_check_llvm_corpus")


def _pairs_to_expected(pairs: dict, buffers: dict[str, np.ndarray], outputs: list[dict]) -> dict[str, bytes]:
    """(want, tol) per buffer, as the Triton/LLVM references give them, into expected bytes
    and checks: tol 0 is exact in the buffer's own type (integers modulo their width), a
    tolerance compares float64 values as `|got - want| <= tol * (1 + |want|)`. Buffers
    without a reference keep their "bits" check (GPU against emulator only)."""
    want_bytes = {}
    for out in outputs:
        name = out["buffer"]
        if name not in pairs:
            continue
        want, tol = pairs[name]
        storage = buffers[name].dtype
        if tol == 0:
            if storage.kind in "iu":
                mask = (1 << 8 * storage.itemsize) - 1
                values = [int(v) & mask for v in (want if isinstance(want, list) else np.asarray(want).ravel())]
                arr = np.array(values, dtype=np.uint64).astype(f"u{storage.itemsize}").view(storage)
            else:
                arr = np.asarray(want).astype(storage)
            out["check"] = {"kind": "equal", "dtype": _NUMPY_NAMES[storage]}
        else:
            arr = np.asarray(want, dtype=np.float64)
            out["check"] = {"kind": "close", "dtype": out["check"]["dtype"], "want_dtype": "f64",
                            "rtol": tol, "atol": tol, "nan_equal": False}
        want_bytes[name] = arr.tobytes()
    return want_bytes


def _triton_keys() -> list[str]:
    return [k["file"] for k in _triton().manifest()] if (corpus_dirs()["triton"] / "manifest.json").is_file() else []


def _triton_launch(key: str) -> Launch:
    mod = _triton()
    entry = next(k for k in mod.manifest() if k["file"] == key)
    inputs = mod.inputs(entry)
    params, outputs = [], []
    for p in entry["params"]:
        if p["kind"] == "buffer":
            params.append({"buffer": p["name"]})
            dtype = _TRITON_DTYPES.get(p["dtype"]) or _NUMPY_NAMES[inputs[p["name"]].dtype]
            outputs.append({"buffer": p["name"], "check": {"kind": "bits", "dtype": dtype}})
        elif p["kind"] == "null_pointer":
            params.append({"type": "u64", "value": 0})
        else:
            params.append({"type": _TRITON_SCALARS[p["ttype"]], "value": p["value"]})

    def expected():
        # tests/triton_corpus.py hands its references the buffers after a run; they read only
        # the inputs (the same expected values from either, on every kernel of the corpus)
        data = {k: v.copy() for k, v in inputs.items()}
        return _pairs_to_expected(mod.reference(entry, data), data, outputs)

    path = corpus_dirs()["triton"] / key
    return Launch("triton", key[:-4], path.read_text(), key, path, entry["entry"], entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                  _bytes_of(inputs), params, outputs, expected=expected)


def _llvm_keys() -> list[str]:
    return [k["file"] for k in _llvm().runnable()] if (corpus_dirs()["llvm"] / "manifest.json").is_file() else []


def _llvm_launch(key: str) -> Launch:
    import struct
    mod = _llvm()
    entry = next(k for k in mod.manifest() if k["file"] == key)
    inputs = mod.inputs(entry)
    params, outputs = [], []
    for p in entry["params"]:
        if p["kind"] == "buffer":
            params.append({"buffer": p["name"]})
            outputs.append({"buffer": p["name"], "check": {
                "kind": "bits", "dtype": _NUMPY_NAMES[inputs[p["name"]].dtype]}})
        elif p["type"] == "f32x2":               # an 8-byte struct of two f32, by value
            lo, hi = struct.unpack("<II", struct.pack("<ff", *p["value"]))
            params.append({"type": "u64", "value": lo | hi << 32})
        else:
            params.append({"type": p["type"], "value": p["value"]})

    def expected():
        return _pairs_to_expected(mod.reference(entry, mod.inputs(entry)), inputs, outputs)

    path = corpus_dirs()["llvm"] / key
    return Launch("llvm", key[:-4], path.read_text(), key, path, entry["entry"], entry["grid"], entry["block"], entry.get("dynamic_shared_bytes") or 0,
                  _bytes_of(inputs), params, outputs, expected=expected)


# --------------------------------------------------------------------------- fuzz

# Fresh differential-fuzz programs (ptx2sass.fuzz), seeds no campaign has tuned on: on silicon
# they check the emulator's semantics (ptxas's cubin on the GPU against the emulator) and our
# code for the GPU's arch (ours against ptxas's on the GPU). No reference: the emulator is
# what the GPU judges.
FUZZ_SEEDS = range(9_300_000, 9_300_400)
if os.environ.get("PTX2SASS_GPU_FUZZ_SEEDS"):       # "A:B": a fresh range, e.g. held back from run 5's
    _a, _b = os.environ["PTX2SASS_GPU_FUZZ_SEEDS"].split(":")
    FUZZ_SEEDS = range(int(_a), int(_b))
FUZZ_ARCH = "sm_90"


def fuzz_case(key: str):
    """The Case of seed `key`, with the statements ptx2sass refuses peeled off as the
    campaigns do (ptxas's cubin and ours then run the same program); texture programs left
    out (the GPU check binds no texture objects). tools/gpu_truth.py maps the GPU's outputs
    back to its slots."""
    from ptx2sass.errors import CompileError
    from ptx2sass.fuzz.campaign import Options, make_program, peel
    from ptx2sass.fuzz.runner import compile_ours

    def refusal(case):
        try:
            compile_ours(case)
        except CompileError as e:
            return str(e)
        except Exception:  # noqa: BLE001 - a crash is prepare's to record, with the program as it is
            return None
        return None
    prog = make_program(int(key), Options(arch=FUZZ_ARCH, exclude=["texture"]))
    return peel(prog, FUZZ_ARCH, refusal, 11)


def _fuzz_launch(key: str) -> Launch:
    """The launch of fuzz seed `key` (see `fuzz_case`)."""
    return _case_launch("fuzz", key, fuzz_case(key), f"{int(key)}.ptx")


# Saved fuzz programs (a `// fuzz-case:` header, as the reducer writes them: tests/fuzz_regressions,
# tests/gpu_regressions), for experiments on one known program: PTX2SASS_GPU_FUZZ_FILES is a
# colon-separated list of files (paths relative to the repository or absolute); the key is the
# file's stem. The case runs for the GPU's arch whatever its header says.
FUZZ_FILES = [Path(p) for p in os.environ.get("PTX2SASS_GPU_FUZZ_FILES", "").split(":") if p]


def _fuzz_file_launch(key: str) -> Launch:
    from ptx2sass.fuzz.inputs import read_case
    path = next(p for p in FUZZ_FILES if p.stem == key)
    path = path if path.is_absolute() else REPO / path
    case = read_case(path.read_text())
    if case is None:
        raise ValueError(f"{path}: no fuzz-case header")
    case.arch = FUZZ_ARCH
    return _case_launch("fuzzfile", key, case, f"file_{key}.ptx")


def _case_launch(corpus: str, key: str, case, filename: str) -> Launch:
    from ptx2sass.fuzz.inputs import launch_data
    from ptx2sass.fuzz.runner import ptx_for
    data = launch_data(case)
    ptx = ptx_for(case)
    path = REPO / ".cache" / "gpu_check_fuzz" / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ptx)
    params = []
    for p in data.params:
        value = bytes(p.value).hex() if p.type == "bytes" else p.value
        params.append({"buffer": p.buffer} if p.buffer else {"type": p.type, "value": value})
    buffers = {name: bytes(init) for name, (size, init) in data.buffers.items()}
    check = {"kind": "bits", "dtype": "u64"}
    return Launch(corpus, key, ptx, path.name, path, case.kernel, list(case.grid), list(case.block), 0,
                  buffers, params, [{"buffer": "out", "check": check}, {"buffer": "atom", "check": check}],
                  fmad=case.fmad)


# --------------------------------------------------------------------------- wgmma (sm_90a)

def _wgmma_launch(key: str) -> Launch:
    """A GEMM mainloop of tools/wgmma_kloop.py (one warpgroup, D = A @ B through HGMMA):
    D's fragment against NumPy's, bit for bit (small integers: every sum is exact)."""
    from tools import wgmma_kloop
    case = next(c for c in wgmma_kloop.CASES if c.name == key)
    ptx = wgmma_kloop.ptx(case)
    path = REPO / ".cache" / "gpu_check_wgmma" / f"{key}.ptx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ptx)
    args = wgmma_kloop.launch_args(case)
    want = wgmma_kloop.expected(case)
    return Launch("wgmma", key, ptx, path.name, path, "kloop", [1, 1, 1], [wgmma_kloop.THREADS, 1, 1], 0,
                  _bytes_of({"img": args["img"], "d": args["d"]}),
                  [{"buffer": "img"}, {"buffer": "d"}, {"type": "u32", "value": args["ktiles"]},
                   {"type": "u64", "value": args["da"]}, {"type": "u64", "value": args["db"]},
                   {"type": "u32", "value": args["acc"]}],
                  [{"buffer": "d", "check": {"kind": "bits", "dtype": "f32"}}],
                  expected=lambda: {"d": want.tobytes()}, arch="sm_90a")


def _wgmma_keys() -> list[str]:
    from tools import wgmma_kloop
    return [c.name for c in wgmma_kloop.CASES]


# --------------------------------------------------------------------------- real-world CUDA

# tests/corpus/realworld (tools/harvest_realworld.py): ordinary CUDA and Numba sources built
# by nvcc for each arch, every kernel with a launch annotation run from the annotation's
# random inputs (tools/realworld.launch_params, seed 0). No reference: the emulator judges
# ptxas's cubin, and ptxas's outputs ours. The bundle's arch picks the modules built for it;
# cluster launches are left out (the GPU check launches without cluster dimensions).

REALWORLD_ARCH = os.environ.get("PTX2SASS_GPU_REALWORLD_ARCH", "sm_90")


@functools.cache
def _realworld_kernels() -> dict[str, tuple[dict, dict]]:
    """Launch key -> (module, kernel) of the manifest, read once per process."""
    from tools import realworld as rw
    out = {}
    for m in rw.manifest():
        if m["ptx"] is None or m["arch"] != REALWORLD_ARCH:
            continue
        for i, k in enumerate(m.get("kernels", [])):
            run = k.get("run")
            if run and "cluster" not in run:      # Numba's mangled names: the kernel's index
                name = k["entry"] if len(k["entry"]) <= 40 else f"k{i}"
                out[f"{Path(m['ptx']).stem}.{name}"] = (m, k)
    return out


def _realworld_launch(key: str) -> Launch:
    from tools import realworld as rw
    module, kernel = _realworld_kernels()[key]
    run = kernel["run"]
    values = rw.launch_params(run, seed=0)
    buffers, params, outputs = {}, [], []
    for i, v in enumerate(values):
        if isinstance(v, np.ndarray):
            name = f"a{i}"
            buffers[name] = v.tobytes()
            params.append({"buffer": name})
            outputs.append({"buffer": name, "check": {"kind": "bits", "dtype": _NUMPY_NAMES[v.dtype]}})
        elif isinstance(v, np.generic):
            params.append({"type": _NUMPY_NAMES[v.dtype], "value": v.item()})
        else:                                   # a by-value aggregate (emu Param "bytes")
            params.append({"type": "bytes", "value": bytes(v.value).hex()})
    path = rw.CORPUS / module["ptx"]
    dims = [list(rw._dim(run["grid"])), list(rw._dim(run["block"]))]
    return Launch("realworld", key, path.read_text(), path.name, path, kernel["entry"], dims[0], dims[1],
                  run.get("smem", 0), buffers, params, outputs, held_back=module["held_back"])


_SOURCES = {"zluda": (_zluda_keys, _zluda_launch), "cuda": (_cuda_keys, _cuda_launch),
            "tinygrad": (lambda: sorted(_tinygrad_entries("tinygrad")), _tinygrad_launch),
            "triton": (_triton_keys, _triton_launch), "llvm": (_llvm_keys, _llvm_launch),
            "tinygrad_large": (lambda: sorted(_tinygrad_entries("tinygrad_large")),
                               lambda key: _tinygrad_launch(key, "tinygrad_large")),
            "fuzz": (lambda: [str(s) for s in FUZZ_SEEDS], _fuzz_launch),
            "fuzzfile": (lambda: [p.stem for p in FUZZ_FILES], _fuzz_file_launch),
            "wgmma": (_wgmma_keys, _wgmma_launch),
            "realworld": (lambda: sorted(_realworld_kernels()), _realworld_launch)}


def keys(corpus: str) -> list[str]:
    return _SOURCES[corpus][0]()


def launch(corpus: str, key: str) -> Launch:
    return _SOURCES[corpus][1](key)
