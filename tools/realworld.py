"""Measure ptx2sass on the real-world corpus (tests/corpus/realworld, tools/harvest_realworld.py).

For every module (one source built for one arch): does ptxas accept it, do we (else our
message, classed as a gap when it says 'not supported', a bug when it is a traceback), is our
cubin bit-identical to ptxas's; and for every kernel with a launch annotation, on EMU_ARCHS,
do ptxas's cubin and ours write the same bytes in the emulator from the same random inputs.
"""
from __future__ import annotations

import json
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tools.corpora import REPO

CORPUS = REPO / "tests" / "corpus" / "realworld"
EMU_ARCHS = ("sm_89",)

_DTYPES = {"f16": np.uint16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "s32": np.int32,
           "u32": np.uint32, "s64": np.int64, "u64": np.uint64}
_BUFFER = re.compile(r"^(\w+)\*(\d+)(?:%(\d+))?$")       # f32*128, u32*64%8 (values mod 8)
_SCALAR = re.compile(r"^(\w+)=(.+)$")                      # s32=100, f32=2.5


def manifest() -> list[dict]:
    return json.loads((CORPUS / "manifest.json").read_text())["modules"]


def module_id(m: dict) -> str:
    return f"{m['source'].removeprefix('src/')}@{m['arch']}"


def _random_buffer(kind: str, count: int, mod: int | None, rng) -> np.ndarray:
    if kind in ("f32", "f64"):
        return rng.uniform(-4.0, 4.0, count).astype(_DTYPES[kind])
    if kind == "f16":
        return rng.uniform(-4.0, 4.0, count).astype(np.float16).view(np.uint16)
    if kind == "bf16":       # round-to-nearest-even of f32 to its top half
        bits = rng.uniform(-4.0, 4.0, count).astype(np.float32).view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    info = np.iinfo(_DTYPES[kind])
    if mod:
        return rng.integers(0, mod, count).astype(_DTYPES[kind])
    return rng.integers(info.min, info.max, count, dtype=_DTYPES[kind], endpoint=True)


def launch_params(run: dict, seed: int = 0) -> list:
    """The kernel's arguments from its annotation: random buffers (fixed seed), scalars,
    `bytes*N` aggregates passed by value."""
    rng = np.random.default_rng(seed)
    out = []
    for arg in run["args"]:
        m = _BUFFER.match(arg)
        if m and m.group(1) == "bytes":
            # a by-value aggregate (`.param .b8 p[N]`): random bytes, passed in the parameter bank
            from ptx2sass.emu.launch import Param
            out.append(Param(type="bytes", value=rng.integers(0, 256, int(m.group(2)), dtype=np.uint8).tobytes()))
            continue
        if m:
            array = _random_buffer(m.group(1), int(m.group(2)), int(m.group(3) or 0), rng)
            if run.get("numba"):
                # Numba's 1-D array argument: meminfo, parent, nitems, itemsize, data, shape, stride
                n, size = np.int64(array.size), np.int64(array.itemsize)
                out += [np.uint64(0), np.uint64(0), n, size, array, n, size]
            else:
                out.append(array)
            continue
        m = _SCALAR.match(arg)
        if not m:
            raise ValueError(f"bad argument spec {arg!r}")
        kind, value = m.group(1), m.group(2)
        out.append(_DTYPES[kind](float(value) if kind[0] == "f" else int(value)))
    return out


def _dim(v) -> tuple[int, int, int]:
    return tuple(v) if isinstance(v, list) else (v, 1, 1)


def _cluster(cubin: bytes, run: dict):
    """The annotation's `"cluster": [x, y, z]` (a cluster launch, cudaLaunchKernelEx's
    cluster dimension) where the cubin's arch has clusters (sm_90+); None elsewhere, or
    without the key (a kernel's own `__cluster_dims__` applies anyway: emu.launch.run)."""
    if "cluster" not in run:
        return None
    from ptx2sass.emu.launch import has_clusters
    from ptx2sass.encoder.cubin import read_cubin
    return _dim(run["cluster"]) if has_clusters(read_cubin(cubin).arch) else None


def emulate(cubin: bytes, entry: str, run: dict, seed: int = 0, stack_bytes: int | None = None):
    """(LaunchResult, output buffers as bytes) for one launch. `stack_bytes`: the per-thread
    stack limit (cudaLimitStackSize) to launch with, else the annotation's "stack", else the
    driver's default."""
    from ptx2sass.emu.launch import DEFAULT_STACK_BYTES, run as emu_run
    params = launch_params(run, seed)
    stack = stack_bytes if stack_bytes is not None else run.get("stack", DEFAULT_STACK_BYTES)
    result = emu_run(cubin, entry, _dim(run["grid"]), _dim(run["block"]), params,
                     dynamic_shared_bytes=run.get("smem", 0), hazard_check=False,
                     cluster=_cluster(cubin, run), stack_bytes=stack)
    return result, [p.tobytes() for p in params if isinstance(p, np.ndarray)]


@dataclass
class KernelOutcome:
    entry: str
    emu: str            # match / differ / ptxas-fault / ours-fault / not-run / no-cubin
    detail: str = ""


@dataclass
class ModuleOutcome:
    id: str
    arch: str
    held_back: bool
    ptxas: str          # accepted / refused / nvcc-refused
    ours: str = ""      # accepted / gap / refused / bug / -
    message: str = ""
    identical: bool = False
    kernels: list[KernelOutcome] = field(default_factory=list)


def classify_error(exc: BaseException) -> tuple[str, str]:
    """('gap' | 'refused' | 'bug', one-line message) for an exception from our compiler."""
    from ptx2sass.errors import CompileError
    if isinstance(exc, CompileError):
        text = str(exc).splitlines()[0]
        if "internal error" in text:
            return "bug", text
        return ("gap" if "not supported" in text else "refused"), text
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
    return "bug", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''} ({where})"


RETARGET_FROM = "sm_89"
_TARGET = re.compile(r"(\.target\s+)sm_\d+[a-z]?")


def retargeted(arch: str) -> list[dict]:
    """The modules for an arch the corpus was not built for (sm_75, sm_120): each sm_89
    module with its `.target` rewritten to `arch` (as tools/isa_generalise does for ptxas);
    the held-back split stays the sm_89 file's."""
    out = []
    for m in manifest():
        if m["arch"] != RETARGET_FROM:
            continue
        r = dict(m, arch=arch)
        if m["ptx"] is not None:
            text = (CORPUS / m["ptx"]).read_text()
            r["ptx_text"] = _TARGET.sub(lambda t: t.group(1) + arch, text, count=1)
        out.append(r)
    return out


def measure(module: dict, emu_archs=EMU_ARCHS, seed: int = 0) -> ModuleOutcome:
    from ptx2sass import codegen, oracle
    out = ModuleOutcome(module_id(module), module["arch"], module["held_back"], "nvcc-refused")
    if module["ptx"] is None:
        out.ours, out.message = "-", module.get("refused_by_nvcc", "")
        return out
    name = Path(module["ptx"]).name
    ptx = module.get("ptx_text") or (CORPUS / module["ptx"]).read_text()
    theirs = oracle.ptxas(ptx, module["arch"], name=name)
    out.ptxas = "accepted" if theirs.ok else "refused"
    try:
        ours = codegen.compile_ptx(ptx, module["arch"], name)
        out.ours = "accepted"
    except Exception as e:      # noqa: BLE001 - every failure is measured and classed
        ours = None
        out.ours, out.message = classify_error(e)
    if not theirs.ok:
        if out.ours == "accepted":
            out.message = "ptxas refuses, we accept: " + theirs.stderr.strip().splitlines()[0][:160]
        return out
    out.identical = ours == theirs.output
    for k in module.get("kernels", []):
        run = k.get("run")
        if run is None or module["arch"] not in emu_archs:
            out.kernels.append(KernelOutcome(k["entry"], "not-run"))
            continue
        if ours is None:
            out.kernels.append(KernelOutcome(k["entry"], "no-cubin"))
            continue
        out.kernels.append(compare_in_emulator(theirs.output, ours, k["entry"], run, seed))
    return out


def _short(exc: BaseException, entry: str) -> str:
    return f"{type(exc).__name__}: {str(exc).replace(entry, '<kernel>')[:200]}"


def compare_in_emulator(theirs: bytes, ours: bytes, entry: str, run: dict, seed: int = 0) -> KernelOutcome:
    from ptx2sass.emu.errors import EmuFault
    try:
        _, want = emulate(theirs, entry, run, seed)
    except (EmuFault, Exception) as e:  # noqa: BLE001 - an emulator gap on ptxas's cubin
        return KernelOutcome(entry, "ptxas-fault", _short(e, entry))
    try:
        _, got = emulate(ours, entry, run, seed)
    except (EmuFault, Exception) as e:  # noqa: BLE001
        return KernelOutcome(entry, "ours-fault", _short(e, entry))
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            diff = np.nonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8))[0]
            return KernelOutcome(entry, "differ", f"buffer {i}: {len(diff)} bytes differ, first at {diff[0]}")
    return KernelOutcome(entry, "match")
