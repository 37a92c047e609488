"""The Triton corpus (tests/corpus/triton, harvested by tools/harvest_triton.py): inputs built
from the manifest, launches in the emulator, and NumPy references written from what each
Triton kernel means (tools/harvest_triton.py holds the kernels), independent of any
compiler's output."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

from ptx2sass.emu.launch import run

TRITON_DIR = Path(__file__).resolve().parent / "corpus" / "triton"
_STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16,
            "int32": np.int32, "uint8": np.uint8}


def manifest() -> list[dict]:
    return json.loads((TRITON_DIR / "manifest.json").read_text())["kernels"]


def _bf16(values: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 bits, round to nearest even (NaN-free inputs)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def inputs(entry: dict) -> dict[str, np.ndarray]:
    """Each buffer's initial contents (storage dtype), seeded by the kernel's name."""
    rng = np.random.default_rng(zlib.crc32(entry["file"].encode()))
    out = {}
    for p in entry["params"]:
        if p["kind"] != "buffer":
            continue
        n, init, dtype = p["count"], p["init"], p["dtype"]
        if init == "zeros":
            values = np.zeros(n)
        elif init == "rand":
            values = rng.uniform(-4, 4, n)
        elif init == "randn":
            values = rng.standard_normal(n)
        elif init.startswith("ints:"):
            lo, hi = (int(v) for v in init.split(":")[1:])
            values = rng.integers(lo, hi, n)
        else:
            raise ValueError(f"unknown init {init!r}")
        out[p["name"]] = _bf16(values) if dtype == "bfloat16" else values.astype(_STORAGE[dtype])
    return out


def launch(entry: dict, cubin: bytes, *, hazard_check: bool = True, decoder=None):
    """Run one kernel of the corpus on its inputs: (LaunchResult, {buffer: array})."""
    data = inputs(entry)
    params = []
    for p in entry["params"]:
        if p["kind"] == "buffer":
            params.append(data[p["name"]])
        elif p["kind"] == "null_pointer":
            params.append(np.uint64(0))
        elif p["ttype"] == "fp32":
            params.append(np.float32(p["value"]))
        else:
            params.append(np.int32(p["value"]))
    result = run(cubin, entry["entry"], tuple(entry["grid"]), tuple(entry["block"]), params,
                 dynamic_shared_bytes=entry["dynamic_shared_bytes"], hazard_check=hazard_check,
                 decoder=decoder)
    return result, data


# References --------------------------------------------------------------------------------

def _f(a):
    return a.astype(np.float64)


def _c_div(a, b):
    """C (and Triton) integer division: rounds toward zero."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_mod(a, b):
    return a - _c_div(a, b) * b


def _e4m3(values: np.ndarray) -> np.ndarray:
    """float → fp8 e4m3 (bias 7, no infinities, saturating at ±448), nearest even."""
    codes = np.arange(128)
    exp, man = codes >> 3, codes & 7
    mags = np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * 2.0 ** (exp - 7.0))
    mags[127] = np.inf                            # 0x7f is NaN: never the nearest value
    a = np.minimum(np.abs(values), 448.0)
    dist = np.abs(mags[None, :] - a[:, None])
    best = dist.min(axis=1, keepdims=True)
    ties = dist == best
    even = ties & (codes[None, :] % 2 == 0)
    pick = np.where(even.any(axis=1), even.argmax(axis=1), ties.argmax(axis=1))
    return (pick | np.where(values < 0, 0x80, 0)).astype(np.uint8)


def _scalars(entry):
    return {p["name"]: p["value"] for p in entry["params"] if p["kind"] == "scalar"}


def reference(entry: dict, data: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, float]]:
    """The expected contents of each output buffer, with the tolerance it is held to
    (absolute + relative, in float64; 0 means exact)."""
    s, d, name = _scalars(entry), data, entry["file"][:-4]
    if name == "vec_add":
        return {"out": (_f(d["x"]) + _f(d["y"]), 0)}
    if name == "saxpy_f16":
        return {"out": (s["a"] * _f(d["x"]) + _f(d["y"]), 2e-3)}
    if name.startswith("softmax_rows"):
        x = _f(d["x"]).reshape(-1, s["stride"])[:, :s["n_cols"]]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return {"out": ((e / e.sum(axis=1, keepdims=True)).ravel(), 1e-5)}
    if name == "layer_norm":
        x = _f(d["x"]).reshape(-1, s["stride"])[:, :s["n_cols"]]
        mean = x.mean(axis=1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
        y = (x - mean) / np.sqrt(var + s["eps"]) * _f(d["w"]) + _f(d["b"])
        return {"out": (y.ravel(), 1e-4)}
    if name == "row_argmax":
        x = d["x"].reshape(-1, s["stride"])[:, :s["n_cols"]]
        return {"out": (x.argmax(axis=1), 0)}
    if name == "column_sum":
        return {"out": (_f(d["x"]).reshape(s["n_rows"], s["n_cols"]).sum(axis=0), 1e-4)}
    if name == "cumsum_rows":
        return {"out": (np.cumsum(d["x"].reshape(2, -1), axis=1).ravel(), 0)}
    if name.startswith("matmul"):
        m, n, k = s["M"], s["N"], s["K"]
        if name == "matmul_bf16":
            a, b = _f(bf16_to_f32(d["a"])), _f(bf16_to_f32(d["b"]))
        elif name == "matmul_tf32":           # tl.dot of fp32 uses tf32 on sm_80+
            a, b = (_f((v.view(np.uint32) & 0xFFFFE000).view(np.float32)) for v in (d["a"], d["b"]))
        else:
            a, b = _f(d["a"]), _f(d["b"])
        c = a.reshape(m, k) @ b.reshape(k, n)
        return {"c": (c.ravel(), {"matmul_f16": 1e-4, "matmul_bf16": 2e-2,
                                  "matmul_tf32": 2e-2}[name])}
    if name == "histogram":
        return {"hist": (np.bincount(d["x"] % 16, minlength=16), 0)}
    if name == "int_mix":
        x, y = d["x"].astype(np.int64), d["y"].astype(np.int64)
        r = _c_div(x * 3 + y, 7) + _c_mod(x, 5) - (y >> 2) + (x & y) - (x ^ 0x55)
        return {"out": (np.where(x > y, np.maximum(r, y), np.minimum(r, x)), 0)}
    if name == "unary_math":
        x = _f(d["x"])
        r = np.sin(x) + np.cos(x) * np.exp2(x * 0.25) + np.log(np.abs(x) + 1) + np.sqrt(np.abs(x))
        r += 1 / (1 + np.exp(-x)) + 1 / np.sqrt(np.abs(x) + 0.5) + np.floor(x) * (x / 3)
        return {"out": (r, 1e-4)}
    if name == "transpose":
        return {"out": (d["x"].reshape(s["n_rows"], s["n_cols"]).T.ravel(), 0)}
    if name == "casts":
        x = d["x"]
        return {"h": (x.astype(np.float16), 0), "bf": (_bf16(x), 0), "f8": (_e4m3(x), 0),
                "i": (np.trunc(x).astype(np.int32), 0)}
    return {}


def check_reference(entry: dict, data: dict[str, np.ndarray]) -> list[str]:
    """The buffers whose contents miss the reference: a list of messages."""
    problems = []
    for buf, (want, tol) in reference(entry, data).items():
        got = data[buf]
        dtype = next(p["dtype"] for p in entry["params"] if p.get("name") == buf)
        if dtype == "bfloat16" and tol:
            got = bf16_to_f32(got)
        if tol == 0:
            bad = np.nonzero(got.astype(np.int64) != np.asarray(want).astype(np.int64))[0] \
                if got.dtype.kind in "iu" else np.nonzero(got != want.astype(got.dtype))[0]
        else:
            g = got.astype(np.float64)
            bad = np.nonzero(~(np.abs(g - want) <= tol * (1 + np.abs(want))))[0]
        if len(bad):
            i = bad[0]
            problems.append(f"{buf}[{i}] = {got[i]!r}, expected {want[i]!r} "
                            f"({len(bad)} of {len(got)} differ)")
    if entry["file"] == "dropout.ptx":
        x, out, p = data["x"], data["out"], _scalars(entry)["p"]
        kept = out != 0
        if not np.allclose(out[kept], x[kept] / (1 - p), rtol=1e-6):
            problems.append("dropout: a kept value is not x / (1 - p)")
        if not 0.65 < kept.mean() < 0.85:
            problems.append(f"dropout: kept {kept.mean():.2f} of the values, expected ~{1 - p}")
    return problems
