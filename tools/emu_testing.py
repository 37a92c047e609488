"""Development-time helpers for tests and benchmarks (not part of the installed package):
a decoder that takes instructions from nvdisasm's listing, and the ZLUDA corpus runner.

The nvdisasm path exists so the emulator can be validated while our own decoder does not
yet cover every word; `load_program(..., decoder=nvdisasm_decoder)` is test-only."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
from pathlib import Path

from ptx2sass.encoder.model import Instruction
from tools.corpora import REPO, shared_dir

from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, LaunchResult, Param, _result
from ptx2sass.emu.loader import load_program

ZLUDA_DIR = shared_dir() / "corpus" / "zluda"


from ptx2sass.emu.listing_decoder import (parseable as _parseable, cubin_listing_decoder,  # noqa: E402,F401
                                           nvdisasm_decoder)


# --------------------------------------------------------------------------- ZLUDA corpus

def zluda_manifest() -> list[dict]:
    return json.loads((ZLUDA_DIR / "manifest.json").read_text())


def zluda_ptx(entry: dict) -> str:
    """The test's PTX, with the header change the manifest records for files that need it."""
    src = (ZLUDA_DIR / entry["ptx"]).read_text()
    patch = entry.get("ptxas_sm89_with_patch")
    if patch:
        parts = [p.strip() for p in patch.split(",")]
        version = next((p for p in parts if p.startswith(".version")), None)
        target = next((p for p in parts if p.startswith(".target")), None)
        if version:
            src = re.sub(r"^\s*\.version[^\n]*", version, src, count=1, flags=re.M)
        if target:
            src = re.sub(r"^\s*\.target[^\n]*", target, src, count=1, flags=re.M)
    return src


def zluda_cubin(entry: dict, arch: str = "sm_89") -> bytes | None:
    from ptx2sass import oracle
    run = oracle.ptxas(zluda_ptx(entry), arch, name=entry["ptx"])
    return run.output if run.ok else None


def zluda_one_thread_programs() -> list[tuple[dict, object]]:
    """(entry, freshly loaded program) of every ZLUDA kernel ptxas builds that launches one
    thread (the scalar interpreter's corpus); [] without the corpus."""
    if not ZLUDA_DIR.joinpath("manifest.json").is_file():
        return []
    out = []
    for entry in zluda_manifest():
        cubin = zluda_cubin(entry)
        if cubin is not None and np.prod(entry["grid"]) * np.prod(entry["block"]) == 1:
            out.append((entry, load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))))
    return out


def _timing_model(timing):
    """The hazard/cycle model class for a launch: `timing` if given, else the plain one."""
    if timing is not None:
        return timing
    from ptx2sass.emu.hazards import TimingModel
    return TimingModel


@dataclass
class ZludaOutcome:
    name: str
    passed: bool
    reason: str = ""
    result: LaunchResult | None = None


def run_zluda(entry: dict, *, hazard_check: bool = False, decoder=None, cubin: bytes | None = None,
              program=None, timing=None, reconverge: str = "optimistic", arch: str = "sm_89") -> ZludaOutcome:
    """Compile with the pinned ptxas for `arch`, run as ZLUDA's harness does, compare output
    bytes (`program`: an already loaded KernelProgram, to time launches alone; `timing`: a
    TimingModel subclass to use instead of the plain one, e.g. the latency audit's)."""
    name = entry["name"]
    cubin = cubin or (None if program is not None else zluda_cubin(entry, arch))
    if cubin is None and program is None:
        return ZludaOutcome(name, False, f"ptxas rejects the PTX for {arch}")
    try:
        if program is None:
            program = load_program(cubin, entry["kernel"], decoder or cubin_listing_decoder(cubin))
        launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                        hazard_check=hazard_check, reconverge=reconverge)
        if hazard_check:
            launch.timing_model = _timing_model(timing)(launch)
        buffers = {}
        if entry["input"] is not None:
            data = bytes.fromhex(entry["input"]["hex"])
            buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], data)
        buffers["output"] = launch.gmem.allocate("output", entry["output_alloc_bytes"])
        params = [Param(buffer=p) for p in entry["params"]]
        launch.set_params(params, buffers)
        launch.run()
    except EmuFault as e:
        return ZludaOutcome(name, False, f"fault: {e}")
    result = _result(launch, buffers)
    got = result.buffers["output"][:entry["output_bytes"]]
    want = bytes.fromhex(entry["output"]["hex"])
    if got != want:
        return ZludaOutcome(name, False, f"output differs: got {got.hex()[:64]} want {want.hex()[:64]}", result)
    return ZludaOutcome(name, True, "", result)


# --------------------------------------------------------------------------- CUDA corpus

CUDA_DIR = REPO / "tests" / "corpus" / "cuda"


def cuda_reference_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ptx2sass_cuda_reference", CUDA_DIR / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_cuda_launch(entry: dict, ref, *, hazard_check: bool = True, decoder=None,
                    compiler=None, timing=None, reconverge: str = "optimistic",
                    arch: str = "sm_89") -> ZludaOutcome:
    """Compile the launch's PTX with the pinned ptxas for `arch` (or `compiler(ptx text, file
    name) -> cubin`), run it, compare with the NumPy reference."""
    from ptx2sass import oracle
    name = entry["name"]
    if compiler is not None:
        cubin = compiler((CUDA_DIR / entry["ptx"]).read_text(), entry["ptx"])
    else:
        build = oracle.ptxas((CUDA_DIR / entry["ptx"]).read_text(), arch, name=entry["ptx"])
        if not build.ok:
            return ZludaOutcome(name, False, f"ptxas: {build.stderr.strip()[:100]}")
        cubin = build.output
    buffers = ref.make_inputs(entry)
    try:
        program = load_program(cubin, entry["kernel"], decoder or cubin_listing_decoder(cubin))
        launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                        hazard_check=hazard_check, reconverge=reconverge)
        if hazard_check:
            launch.timing_model = _timing_model(timing)(launch)
        placed = {n: launch.gmem.allocate(n, a.nbytes, a.tobytes()) for n, a in buffers.items()}
        params = [Param(buffer=p["buffer"]) if "buffer" in p else Param(type=p["type"], value=p["value"])
                  for p in entry["params"]]
        launch.set_params(params, placed)
        launch.run()
    except EmuFault as e:
        return ZludaOutcome(name, False, f"fault: {e}")
    result = _result(launch, placed)
    expected = ref.run_reference(entry, {k: v.copy() for k, v in buffers.items()})
    tolerances = ref.REFERENCES[entry["reference"]].outputs
    for out_name, want in expected.items():
        dtype = entry["buffers"][out_name]["dtype"]
        got = np.frombuffer(result.buffers[out_name], dtype=ref.STORAGE[dtype])[:want.size]
        why = ref.mismatch(dtype, got, want, tolerances[out_name])
        if why:
            return ZludaOutcome(name, False, f"{out_name}: {why}", result)
    return ZludaOutcome(name, True, "", result)


# --------------------------------------------------------------------------- tinygrad corpus

TINYGRAD_DIR = REPO / "tests" / "corpus" / "tinygrad"

_NUMPY_DTYPE = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
                "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
                "uint64": np.uint64, "float16": np.float16, "float32": np.float32,
                "float64": np.float64}
_VAR_TYPES = {"int32": "s32", "int64": "s64", "uint32": "u32"}


def tinygrad_manifest() -> list[dict]:
    """The corpus kernels that the pinned ptxas accepts (the others have no cubin to run)."""
    kernels = json.loads((TINYGRAD_DIR / "manifest.json").read_text())["kernels"]
    return [k for k in kernels if "ptxas_error" not in k]


def tinygrad_cubin(entry: dict, arch: str = "sm_89") -> bytes | None:
    """ptxas's cubin for `arch`; the PTX's `.target sm_89` is rewritten to an older `arch`
    (sm_75), as tinygrad's renderer writes it for that GPU."""
    from tools.corpus_words import compile_for
    return compile_for((TINYGRAD_DIR / entry["file"]).read_bytes(), arch, entry["file"])[0]


def tinygrad_inputs(entry: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic inputs for every buffer parameter, in the dtype the kernel really loads
    (`storage_dtype` for the ones tinygrad emulates). Floats are drawn from [-2, 2); integers
    from [1, 4] (small enough that a buffer read as gather indices stays in bounds, and no
    divisor is zero: integer division by zero is undefined in PTX and in tinygrad); output
    buffers start as a fixed non-zero pattern so that an unwritten element is noticed."""
    rng = np.random.default_rng([seed, int(entry["sha256"][:8], 16)])
    # A float-to-integer conversion out of the target's range is undefined in tinygrad (its
    # PYTHON device wraps, PTX's cvt saturates): kernels with float inputs and integer
    # outputs get non-negative floats, so that the reference can judge them.
    kinds: dict[str, list[str]] = {}
    for p in entry["params"]:
        if p["kind"] == "buffer":
            kinds.setdefault(p["access"], []).append(
                np.dtype(_NUMPY_DTYPE[p.get("storage_dtype", p["dtype"])]).kind)
    low = 0.0 if "f" in kinds.get("in", []) and set(kinds.get("out", [])) & set("iu") else -2.0
    out = {}
    for p in entry["params"]:
        if p["kind"] != "buffer":
            continue
        name = p.get("storage_dtype", p["dtype"])
        dtype = np.dtype(_NUMPY_DTYPE[name])
        count = p["bytes"] // dtype.itemsize
        if p["access"] == "out":
            arr = np.full(p["bytes"], 0xA5, np.uint8).view(dtype)
        elif dtype.kind == "f":
            arr = rng.uniform(low, 2, count).astype(dtype)
        elif dtype.kind == "b":
            arr = rng.integers(0, 2, count).astype(dtype)
        elif "storage_dtype" in p:
            # Raw bits of an emulated float type (bfloat16 / fp8): values near 1.
            arr = _emulated_float_bits(p["dtype"], rng, count).astype(dtype)
        else:
            arr = rng.integers(1, 5, count).astype(dtype)
        out[p["name"]] = arr
    return out


def _emulated_float_bits(dtype: str, rng, count: int) -> np.ndarray:
    values = rng.uniform(-2, 2, count).astype(np.float32)
    if dtype == "bfloat16":
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    # fp8: keep sign, a small exponent range and random mantissa bits (no NaN/Inf patterns).
    sign = (values < 0).astype(np.uint8) << 7
    return sign | rng.integers(0x30, 0x48, count).astype(np.uint8)


@dataclass
class TinygradOutcome:
    name: str
    ok: bool
    reason: str = ""
    result: LaunchResult | None = None
    inputs: dict | None = None


def run_tinygrad(entry: dict, *, hazard_check: bool = True, decoder=None, seed: int = 0,
                 cubin: bytes | None = None, program=None, timing=None,
                 reconverge: str = "optimistic", arch: str = "sm_89") -> TinygradOutcome:
    """Launch ptxas's cubin (for `arch`) of one corpus kernel with `tinygrad_inputs`, as the
    manifest says (`program`: an already loaded KernelProgram, to time launches alone)."""
    name = entry["file"]
    cubin = cubin or (None if program is not None else tinygrad_cubin(entry, arch))
    if cubin is None and program is None:
        return TinygradOutcome(name, False, "ptxas rejects the kernel")
    inputs = tinygrad_inputs(entry, seed)
    try:
        if program is None:
            program = load_program(cubin, entry["entry"], decoder or cubin_listing_decoder(cubin))
        launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                        hazard_check=hazard_check, reconverge=reconverge)
        if hazard_check:
            launch.timing_model = _timing_model(timing)(launch)
        placed = {n: launch.gmem.allocate(n, a.nbytes, a.tobytes()) for n, a in inputs.items()}
        params = [Param(buffer=p["name"]) if p["kind"] == "buffer"
                  else Param(type=_VAR_TYPES[p["dtype"]], value=p["value"]) for p in entry["params"]]
        launch.set_params(params, placed)
        launch.run()
    except EmuFault as e:
        return TinygradOutcome(name, False, f"fault: {e}", inputs=inputs)
    return TinygradOutcome(name, True, "", _result(launch, placed), inputs)


# tinygrad's own execution of the same kernel is the reference. It runs on tinygrad's PYTHON
# device (a UOp interpreter, independent of PTX and of this emulator) in a subprocess with a
# clean environment, because tinygrad reads its settings from environment variables at import.

def tinygrad_references(files: list[str], out_dir: Path, seed: int = 0, timeout: int = 900) -> dict[str, dict]:
    """Reference outputs for corpus kernels: {file: {"buffers": {name: ndarray}} or
    {"missing": reason}}. Each kernel is re-derived from its program in
    `tools.harvest_tinygrad` (found by the sha256 of its PTX), lowered for the PYTHON device
    and run there on `tinygrad_inputs`."""
    import os
    import subprocess
    import sys
    repo = REPO
    request = out_dir / "request.json"
    request.write_text(json.dumps({"files": files, "seed": seed}))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
           "DEV": "NULL", "CACHELEVEL": "0", "PYTHONPATH": str(repo)}
    run = subprocess.run([sys.executable, "-c", "from tools.emu_testing import _reference_worker; "
                          f"_reference_worker({str(out_dir)!r})"],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"tinygrad reference run failed: {run.stderr.strip()[-2000:]}")
    result = json.loads((out_dir / "result.json").read_text())
    out = {}
    for f, r in result.items():
        if "missing" in r:
            out[f] = r
        else:
            with np.load(out_dir / r["npz"]) as z:
                out[f] = {"buffers": {k: z[k] for k in z.files}}
    return out


def _reference_worker(out_dir: str) -> None:
    import hashlib

    from tinygrad import Tensor
    from tinygrad.codegen import to_program
    from tinygrad.helpers import Context, Target
    from tinygrad.runtime.ops_python import PythonProgram, PythonRenderer
    from tinygrad.uop.ops import Ops

    from tools.harvest_tinygrad import make_renderer, tinygrad_programs

    out = Path(out_dir)
    req = json.loads((out / "request.json").read_text())
    entries = {k["file"]: k for k in tinygrad_manifest()}
    programs = {p.name: p for p in tinygrad_programs()}
    ptx_renderer = make_renderer()
    py_renderer = PythonRenderer(Target(device="PYTHON", renderer="PYTHON", arch=""))
    result = {}
    for i, f in enumerate(req["files"]):
        entry = entries[f]
        try:
            result[f] = _reference_one(entry, programs[entry["program"]], ptx_renderer, py_renderer,
                                       req["seed"], out / f"ref{i}.npz", hashlib, Tensor, to_program,
                                       Context, PythonProgram, Ops)
        except Exception as e:       # tinygrad cannot run this kernel on PYTHON: no reference
            result[f] = {"missing": f"{type(e).__name__}: {str(e)[:200]}"}
    (out / "result.json").write_text(json.dumps(result))


def _reference_one(entry, prog, ptx_renderer, py_renderer, seed, npz, hashlib, Tensor, to_program,
                   Context, PythonProgram, Ops) -> dict:
    with Context(**dict(prog.context)):
        linear, var_vals = Tensor.linear_with_vars(*prog.build())
        for call in linear.src:
            ast = call.src[0]
            if ast.op is not Ops.SINK:
                continue
            if prog.opts is not None:
                from dataclasses import replace as dc_replace

                from tinygrad.codegen.opt import Opt, OptOps
                opts = tuple(Opt(OptOps[op], axis, arg) for op, axis, arg in prog.opts)
                ast = ast.replace(arg=dc_replace(ast.arg, opts_to_apply=opts))
            ptx = to_program(ast, ptx_renderer).src[-1].arg.decode()
            if hashlib.sha256(ptx.encode()).hexdigest() != entry["sha256"]:
                continue
            program = to_program(ast, py_renderer)
            info = program.arg
            grid, block = info.launch_dims(var_vals)
            inputs = tinygrad_inputs(entry, seed)
            names = [p["name"] for p in entry["params"] if p["kind"] == "buffer"]
            bufs = [memoryview(bytearray(inputs[n].tobytes())) for n in names]
            PythonProgram(None, program.to_elf())(*bufs, global_size=tuple(grid),
                                                    local_size=tuple(block or (1, 1, 1)),
                                                    vals=info.vals(var_vals))
            written = {p["name"]: np.frombuffer(bytes(b), inputs[p["name"]].dtype)
                       for p, b in zip([p for p in entry["params"] if p["kind"] == "buffer"], bufs)
                       if p["access"] in ("out", "inout")}
            np.savez(npz, **written)
            return {"npz": npz.name}
    return {"missing": "kernel not found among its program's kernels"}


def _as_float(arr: np.ndarray, dtype: str) -> np.ndarray:
    """Values of an output for comparison: emulated float types decoded from their bits."""
    if dtype == "bfloat16":
        return (arr.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype.startswith("float8"):
        exp_bits, bias = (4, 7) if "e4m3" in dtype else (5, 15)
        man_bits = 7 - exp_bits
        a = arr.astype(np.int64)
        sign = np.where(a >> 7, -1.0, 1.0)
        e = (a >> man_bits) & ((1 << exp_bits) - 1)
        m = a & ((1 << man_bits) - 1)
        normal = (1 + m / (1 << man_bits)) * np.exp2(e - bias)
        sub = (m / (1 << man_bits)) * np.exp2(1 - bias)
        return sign * np.where(e == 0, sub, normal)
    return arr.astype(np.float64)


# Relative tolerances per output dtype (float kinds): one rounding step of the format, and
# looser where the PTX computes differently from tinygrad's reference by design.
_RTOL = {"float64": 1e-9, "float32": 1e-5, "float16": 1e-3, "bfloat16": 8e-3,
         "float8_e4m3": 0.13, "float8_e5m2": 0.26}
_RTOL_APPROX = 2e-4       # ex2/lg2/sin/rcp/sqrt.approx (about 2^-21 relative, then compounded)
# 16-bit float outputs of transcendental kernels: tinygrad's PYTHON device rounds every
# intermediate to the kernel's dtype while the PTX computes bf16 in f32 (and some f16 steps
# in f32); through exp/pow amplification they end a few 16-bit steps apart.
_RTOL_APPROX_16 = 3e-2
_RTOL_TF32 = 1e-2         # tensor cores read TF32 (10 mantissa bits); tinygrad's PYTHON WMMA full FP32


def tinygrad_tolerance(entry: dict, name: str, ref: np.ndarray, ptx: str | None = None) -> tuple[float, float] | None:
    """(rtol, atol) an output of a tinygrad corpus kernel is held to against tinygrad's own
    result `ref`, or None when it must be exact (integers and booleans): floats within `_RTOL`
    of the output dtype (loosened for approximate transcendentals and TF32 tensor cores),
    measured against the largest reference magnitude as well so that cancellation in sums
    does not count."""
    p = next(q for q in entry["params"] if q["name"] == name)
    if ref.dtype.kind in "iub" and "storage_dtype" not in p:
        return None
    if ptx is None:
        ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    kind = p["dtype"]
    rtol = _RTOL.get(kind, 1e-5)
    if ".approx" in ptx:
        rtol = max(rtol, _RTOL_APPROX_16 if kind in ("float16", "bfloat16") else _RTOL_APPROX)
    if ".tf32" in ptx:
        rtol = max(rtol, _RTOL_TF32)
    b = _as_float(ref, kind)
    finite = np.abs(b[np.isfinite(b)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return rtol, rtol * scale


def compare_tinygrad(entry: dict, got: dict[str, bytes], want: dict[str, np.ndarray]) -> str:
    """Empty when the emulator's outputs agree with tinygrad's (`tinygrad_tolerance`)."""
    params = {p["name"]: p for p in entry["params"]}
    ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    for name, ref in want.items():
        got_arr = np.frombuffer(got[name], ref.dtype)[:ref.size]
        tolerance = tinygrad_tolerance(entry, name, ref, ptx)
        if tolerance is None:
            bad = got_arr != ref
        else:
            kind = params[name]["dtype"]
            a, b = _as_float(got_arr, kind), _as_float(ref, kind)
            rtol, atol = tolerance
            with np.errstate(invalid="ignore"):
                bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            i = int(np.argmax(bad))
            return f"{name}: {int(bad.sum())} of {bad.size} differ; first at [{i}]: {got_arr[i]!r} != {ref[i]!r}"
    return ""
