"""NVIDIA's tools as the test oracle: ptxas, nvdisasm, cuobjdump and nvcc, pinned to one release.

Only the copies inside this Python environment's `nvidia-cuda-*` wheels are used, never a
system-wide CUDA installation: expectations are bit-exact, so the release must be the pinned
one. Every run is cached on disk, keyed by the tool's version and a hash of its inputs, so a
test suite that asks for the same reference cubin twice pays for ptxas once.

Development-time only: the compiler itself never imports this module.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

PINNED_RELEASE = "13.5.37"
TOOLS = ("ptxas", "nvdisasm", "cuobjdump", "nvcc")
_WHEEL_OF = {"ptxas": "nvidia-cuda-nvcc", "nvcc": "nvidia-cuda-nvcc",
             "nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump"}


class OracleMissing(RuntimeError):
    """A pinned NVIDIA tool is not installed in this environment."""


class OracleFailed(RuntimeError):
    """A tool ran but did not do what was asked (crash, unexpected exit)."""


@dataclass(frozen=True)
class ToolRun:
    returncode: int
    stdout: str
    stderr: str
    output: bytes | None  # the file the tool wrote (cubin, PTX), when it wrote one

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _nvidia_roots() -> list[Path]:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


@functools.cache
def tool_path(name: str) -> Path:
    """The binary inside the installed `nvidia-cuda-*` wheel; never one from PATH."""
    if name not in TOOLS:
        raise ValueError(f"unknown oracle tool {name!r}; known: {', '.join(TOOLS)}")
    for root in _nvidia_roots():
        for sub in ("cu13/bin", "cuda_nvcc/bin", "cuda_nvdisasm/bin", "cuda_cuobjdump/bin"):
            candidate = root / sub / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    raise OracleMissing(
        f"{name} not found in this Python environment: install the pinned wheel "
        f"({_WHEEL_OF[name]}=={PINNED_RELEASE}), e.g. `pip install -e '.[test]'`")


@functools.cache
def tool_version(name: str) -> str:
    """The `Vxx.y.z` release a tool reports, checked against the pinned one."""
    out = subprocess.run([str(tool_path(name)), "--version"], capture_output=True, text=True)
    for word in out.stdout.split():
        if word.startswith("V") and word[1:2].isdigit():
            version = word[1:].rstrip(",")
            break
    else:
        raise OracleFailed(f"{name} --version printed no release: {out.stdout!r}")
    if version != PINNED_RELEASE:
        raise OracleMissing(f"{name} is release {version}, but the oracle is pinned to "
                            f"{PINNED_RELEASE}: reinstall the test extra")
    return version


def cache_dir() -> Path:
    from ptx2sass import cache
    return Path(cache.cache_dir("oracle"))


def _run_cached(name: str, args: list[str], inputs: dict[str, bytes],
                output_name: str | None, cwd_env: dict[str, str] | None = None) -> ToolRun:
    """Run `name args` in a scratch folder holding `inputs`; `{}`-free args name files there."""
    key_src = json.dumps([name, tool_version(name), args, output_name,
                          {k: hashlib.sha256(v).hexdigest() for k, v in sorted(inputs.items())}])
    key = hashlib.sha256(key_src.encode()).hexdigest()
    entry = cache_dir() / key[:2] / f"{key}.json"
    try:
        d = json.loads(entry.read_text())
        return ToolRun(d["rc"], d["stdout"], d["stderr"],
                       base64.b64decode(d["output"]) if d["output"] is not None else None)
    except (OSError, ValueError, KeyError, TypeError):
        pass  # absent, unreadable or damaged: run the tool
    with tempfile.TemporaryDirectory(prefix="ptx2sass-oracle-") as tmp:
        for fname, data in inputs.items():
            (Path(tmp) / fname).write_bytes(data)
        env = dict(os.environ)
        env["PATH"] = f"{tool_path(name).parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(cwd_env or {})
        try:
            proc = subprocess.run([str(tool_path(name)), *args], cwd=tmp, capture_output=True,
                                  env=env, timeout=600)
        except subprocess.TimeoutExpired as e:
            raise OracleFailed(f"{name} {' '.join(args)} timed out") from e
        if proc.returncode < 0:
            raise OracleFailed(f"{name} {' '.join(args)} crashed with signal {-proc.returncode}")
        out_path = Path(tmp) / output_name if output_name else None
        output = out_path.read_bytes() if out_path and out_path.is_file() else None
    run = ToolRun(proc.returncode, proc.stdout.decode(errors="replace"),
                  proc.stderr.decode(errors="replace"), output)
    from ptx2sass import cache
    cache.write_text(str(entry), json.dumps(
        {"rc": run.returncode, "stdout": run.stdout, "stderr": run.stderr,
         "output": base64.b64encode(output).decode() if output is not None else None}))
    return run


def ptxas(ptx: str | bytes, arch: str = "sm_89", options: tuple[str, ...] = (),
          name: str = "input.ptx") -> ToolRun:
    """Compile PTX; `output` is the cubin when ptxas accepted it. `name` is the file name
    ptxas sees, so its diagnostics read as they would for the user's file."""
    data = ptx.encode() if isinstance(ptx, str) else ptx
    return _run_cached("ptxas", [f"-arch={arch}", *options, name, "-o", "out.cubin"],
                       {name: data}, "out.cubin")


def nvdisasm(cubin: bytes, options: tuple[str, ...] = ("-hex",)) -> str:
    """nvdisasm's listing of a cubin (by default with the hex of every word)."""
    run = _run_cached("nvdisasm", [*options, "in.cubin"], {"in.cubin": cubin}, None)
    if not run.ok:
        raise OracleFailed(f"nvdisasm failed: {run.stderr.strip()}")
    return run.stdout


def nvdisasm_raw(words: bytes, arch: str = "sm_89", options: tuple[str, ...] = ("-hex",)) -> ToolRun:
    """Disassemble raw 16-byte instruction words (the probe for encoding fields)."""
    sm = "SM" + arch.split("_", 1)[1].upper()
    return _run_cached("nvdisasm", ["-b", sm, *options, "raw.bin"], {"raw.bin": words}, None)


def cuobjdump_elf(cubin: bytes) -> str:
    """`cuobjdump -elf`: every section and `.nv.info` attribute by name."""
    run = _run_cached("cuobjdump", ["-elf", "in.cubin"], {"in.cubin": cubin}, None)
    if not run.ok:
        raise OracleFailed(f"cuobjdump failed: {run.stderr.strip()}")
    return run.stdout


def cuobjdump_sass(cubin: bytes) -> str:
    run = _run_cached("cuobjdump", ["-sass", "in.cubin"], {"in.cubin": cubin}, None)
    if not run.ok:
        raise OracleFailed(f"cuobjdump failed: {run.stderr.strip()}")
    return run.stdout


def nvcc_ptx(source: str, arch: str = "sm_89", options: tuple[str, ...] = (),
             name: str = "kernel.cu") -> ToolRun:
    """CUDA C to PTX with the pinned nvcc (`output` is the PTX text as bytes)."""
    return _run_cached("nvcc", [f"-arch={arch}", "--ptx", *options, name, "-o", "out.ptx"],
                       {name: source.encode()}, "out.ptx")
