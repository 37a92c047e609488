"""Development-time helpers for tests and benchmarks (never used by `run` itself):
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

from .errors import EmuFault
from .launch import Launch, LaunchResult, Param, _result
from .loader import load_program

ZLUDA_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "zluda"


# nvdisasm spellings that `encoder.sass_text` does not parse (yet): BRX's branch-target note
# (the targets come from the register at run time; the note is informational) and the
# relocated immediates `32@lo(sym)` / `32@hi((kernel + .L_x_4@srel))`, whose value the
# loader fills from the cubin's relocations, as the driver does with the zero field.
_LISTING_NOTE = re.compile(r'\s*\(\*"BRANCH_TARGETS[^"]*"\*\)')
_LISTING_RELOC = re.compile(r"32@(?:lo|hi)\((?:[^()]|\([^()]*\))*\)")


def _parseable(listing: str) -> str:
    return _LISTING_RELOC.sub("0x0", _LISTING_NOTE.sub("", listing))


def nvdisasm_decoder(text: bytes, arch: str, kernel: str) -> list[tuple[int, Instruction]]:
    """Instructions of one kernel section from nvdisasm's listing of a raw text section."""
    from ptx2sass import oracle
    from ptx2sass.encoder.sass_text import parse_listing
    run = oracle.nvdisasm_raw(text, arch, ("-hex",))
    if not run.ok:
        raise EmuFault(f"nvdisasm could not disassemble the text: {run.stderr.strip()}", kernel=kernel)
    # A raw listing has no sections or symbols: give it one function to hang entries on.
    listing = parse_listing(".section .text.raw\nraw:\n" + _parseable(run.stdout))
    out = []
    for f in listing.functions:
        out.extend((e.offset, e.instruction) for e in f.entries)
    out.sort(key=lambda t: t[0])
    return out


def cubin_listing_decoder(cubin: bytes):
    """A decoder reading the kernel's instructions from nvdisasm's listing of the whole
    cubin (labels and call targets resolved by name)."""
    from ptx2sass import oracle
    from ptx2sass.encoder.sass_text import parse_listing
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))

    def decode(text: bytes, arch: str, kernel: str):
        out = []
        for f in listing.functions:
            if f.section == f".text.{kernel}":
                out.extend((e.offset, e.instruction) for e in f.entries)
        out.sort(key=lambda t: t[0])
        return out
    return decode


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


def zluda_cubin(entry: dict) -> bytes | None:
    from ptx2sass import oracle
    run = oracle.ptxas(zluda_ptx(entry), "sm_89", name=entry["ptx"])
    return run.output if run.ok else None


@dataclass
class ZludaOutcome:
    name: str
    passed: bool
    reason: str = ""
    result: LaunchResult | None = None


def run_zluda(entry: dict, *, hazard_check: bool = False, decoder=None, cubin: bytes | None = None) -> ZludaOutcome:
    """Compile with the pinned ptxas, run as ZLUDA's harness does, compare output bytes."""
    name = entry["name"]
    cubin = cubin or zluda_cubin(entry)
    if cubin is None:
        return ZludaOutcome(name, False, "ptxas rejects the PTX for sm_89")
    try:
        program = load_program(cubin, entry["kernel"], decoder or cubin_listing_decoder(cubin))
        launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                        hazard_check=hazard_check)
        if hazard_check:
            from .hazards import TimingModel
            launch.timing_model = TimingModel(launch)
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

CUDA_DIR = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "cuda"


def cuda_reference_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ptx2sass_cuda_reference", CUDA_DIR / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_cuda_launch(entry: dict, ref, *, hazard_check: bool = True, decoder=None) -> ZludaOutcome:
    """Compile the launch's PTX with the pinned ptxas, run it, compare with the NumPy reference."""
    from ptx2sass import oracle
    name = entry["name"]
    build = oracle.ptxas((CUDA_DIR / entry["ptx"]).read_text(), "sm_89", name=entry["ptx"])
    if not build.ok:
        return ZludaOutcome(name, False, f"ptxas: {build.stderr.strip()[:100]}")
    cubin = build.output
    buffers = ref.make_inputs(entry)
    try:
        program = load_program(cubin, entry["kernel"], decoder or cubin_listing_decoder(cubin))
        launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                        hazard_check=hazard_check)
        if hazard_check:
            from .hazards import TimingModel
            launch.timing_model = TimingModel(launch)
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
