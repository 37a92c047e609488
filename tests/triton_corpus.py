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
            "int32": np.int32, "uint8": np.uint8, "float64": np.float64, "int64": np.int64,
            "int8": np.int8, "uint32": np.uint32, "float8e4nv": np.uint8, "float8e5": np.uint8}
_SCALARS = {"fp32": np.float32, "i32": np.int32, "fp64": np.float64, "i64": np.int64}


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
        elif init == "rand_nan":              # every 5th a NaN, one +inf and one -inf
            values = rng.uniform(-4, 4, n)
            values[::5] = np.nan
            values[1], values[3] = np.inf, -np.inf
        elif init == "randn":
            values = rng.standard_normal(n)
        elif init.startswith("ints:"):
            lo, hi = (int(v) for v in init.split(":")[1:])
            values = rng.integers(lo, hi, n)
        else:
            raise ValueError(f"unknown init {init!r}")
        if dtype == "bfloat16":
            out[p["name"]] = _bf16(values)
        elif dtype in _FP8:
            out[p["name"]] = _fp8(values, dtype)
        else:
            out[p["name"]] = values.astype(_STORAGE[dtype])
    return out


def launch(entry: dict, cubin: bytes, *, hazard_check: bool = True, decoder=None, trace: bool = False,
           timing=None):
    """Run one kernel of the corpus on its inputs: (LaunchResult, {buffer: array});
    `trace`: record the SM timing model's trace too (emu.timing); `timing`: the hazard
    checker's timing model class (the latency audit's)."""
    data = inputs(entry)
    params = []
    for p in entry["params"]:
        if p["kind"] == "buffer":
            params.append(data[p["name"]])
        elif p["kind"] == "null_pointer":
            params.append(np.uint64(0))
        else:
            params.append(_SCALARS[p["ttype"]](p["value"]))
    result = run(cubin, entry["entry"], tuple(entry["grid"]), tuple(entry["block"]), params,
                 dynamic_shared_bytes=entry["dynamic_shared_bytes"], hazard_check=hazard_check,
                 decoder=decoder, trace=trace, timing=timing)
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


def _fp8_magnitudes(dtype: str) -> np.ndarray:
    """The value of each fp8 code 0..127 (non-finite codes as +inf, never a nearest value):
    e4m3 (bias 7, 0x7f NaN, no infinities) or e5m2 (bias 15, IEEE-like)."""
    codes = np.arange(128)
    if dtype == "float8e4nv":
        exp, man, mbits, bias = codes >> 3, codes & 7, 3, 7
    else:
        exp, man, mbits, bias = codes >> 2, codes & 3, 2, 15
    scale = 2.0 ** mbits
    mags = np.where(exp == 0, man / scale * 2.0 ** (1 - bias),
                    (1 + man / scale) * 2.0 ** (exp - float(bias)))
    if dtype == "float8e4nv":
        mags[127] = np.inf
    else:
        mags[124:] = np.inf
    return mags


_FP8 = ("float8e4nv", "float8e5")


def _fp8(values: np.ndarray, dtype: str = "float8e4nv") -> np.ndarray:
    """float → fp8 code, nearest even, saturating to the largest finite value."""
    codes = np.arange(128)
    mags = _fp8_magnitudes(dtype)
    a = np.minimum(np.abs(values), mags[np.isfinite(mags)].max())
    dist = np.abs(mags[None, :] - a[:, None])
    best = dist.min(axis=1, keepdims=True)
    ties = dist == best
    even = ties & (codes[None, :] % 2 == 0)
    pick = np.where(even.any(axis=1), even.argmax(axis=1), ties.argmax(axis=1))
    return (pick | np.where(values < 0, 0x80, 0)).astype(np.uint8)


def _e4m3(values: np.ndarray) -> np.ndarray:
    return _fp8(values, "float8e4nv")


def fp8_to_f64(codes: np.ndarray, dtype: str) -> np.ndarray:
    mags = _fp8_magnitudes(dtype)[codes & 0x7F]
    return np.where(codes & 0x80, -mags, mags)


def _round_bf16(v: np.ndarray) -> np.ndarray:
    """float64 → bfloat16 bits with one rounding (nearest even; normal, finite values)."""
    m, e = np.frexp(v)
    r = np.ldexp(np.rint(np.ldexp(m, 8)), e - 8)   # 8 significant bits
    return _bf16(r)                                # exact in float32 and in bfloat16


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
    if name.startswith("flash_attn"):
        seq, scale = s["seq_len"], s["sm_scale"]
        head = entry["constexprs"]["HEAD"]
        q, k, v = (_f(d[b]).reshape(-1, seq, head) for b in ("q", "k", "v"))
        scores = q @ k.transpose(0, 2, 1) * scale
        if entry["constexprs"]["CAUSAL"]:
            scores = np.where(np.tril(np.ones((seq, seq), bool)), scores, -np.inf)
        e = np.exp(scores - scores.max(axis=2, keepdims=True))
        return {"o": ((e / e.sum(axis=2, keepdims=True) @ v).ravel(), 1e-2)}
    if name in ("matmul_masked", "matmul_int8", "matmul_fp8", "matmul_w8s4",
                "matmul_persistent"):
        m, n, k = s["M"], s["N"], s["K"]
        if name == "matmul_fp8":
            a, b = fp8_to_f64(d["a"], "float8e4nv"), fp8_to_f64(d["b"], "float8e4nv")
        else:
            a, b = _f(d["a"]), _f(d["b"])
        c = a.reshape(m, k) @ b.reshape(k, n)
        tol = {"matmul_int8": 0, "matmul_w8s4": 2e-3}.get(name, 1e-4)
        return {"c": (c.ravel(), tol)}
    if name == "welford_rows":
        x = _f(d["x"]).reshape(-1, s["n_cols"])
        return {"mean": (x.mean(axis=1), 1e-5), "var": (x.var(axis=1), 1e-5)}
    if name == "atomics_mix":
        d = {**d, **{k: v for k, v in inputs(entry).items() if k != "x"}}   # inout: as before
        x, offs = d["x"], np.arange(len(d["x"]))
        fmax = np.array([max(d["fmax"][j], x[offs % 8 == j].max()) for j in range(8)])
        fmin = np.array([min(d["fmin"][j], x[offs % 8 == j].min()) for j in range(8)])
        want = np.arange(len(d["cas"])) % 3
        return {"fmax": (fmax, 0), "fmin": (fmin, 0), "xchg": (_f(x) * 2, 0),
                "old": (d["xchg"], 0), "cas_old": (d["cas"], 0),
                "cas": (np.where(d["cas"] == want, want + 100, d["cas"]), 0)}
    if name == "libdevice_math":
        from math import erf
        x = _f(d["x"])
        r = np.vectorize(erf)(x) + (np.abs(x) + 0.5) ** 1.7 + np.tanh(x) + np.log1p(np.abs(x))
        r += np.exp(x * 0.5) + np.arctan2(x, 1.5) + np.expm1(x * 0.25)
        r += np.rint(d["x"] * np.float32(3))
        return {"out": (r, 1e-5)}
    if name == "float64_ops":
        x, y = d["x"], d["y"]
        r = x * y + x / (np.abs(y) + 1) + np.sqrt(np.abs(x)) - np.minimum(x, y)
        r += np.floor(x) + np.exp(x * 0.1) + (x > y)
        return {"out": (r, 1e-13)}
    if name == "int64_rows":
        stride, cols = s["stride_row"], s["n_cols"]
        x = d["x"].reshape(-1, stride)[:, :cols]
        with np.errstate(over="ignore"):
            r = (x * np.int64(0x100000001)) >> 7
            r = r + _c_div(x, 13) + _c_mod(x, 13) + np.abs(x) + (x.view(np.uint64) >> 3).view(np.int64)
        out = np.zeros_like(d["x"]).reshape(-1, stride)
        out[:, :cols] = r
        return {"out": (out.ravel(), 0)}
    if name == "nan_where":
        x, y = d["x"], d["y"]
        with np.errstate(invalid="ignore"):
            sel = np.where(np.isnan(x), np.float32(0), np.where(y > 0, x, np.float32(np.nan)))
        return {"max": (np.maximum(x, y), 0), "min": (np.fmin(x, y), 0), "sel": (sel, 0)}
    if name == "bf16_elementwise":
        x, y = _f(bf16_to_f32(d["x"])), _f(bf16_to_f32(d["y"]))
        t = _f(bf16_to_f32(_round_bf16(x * y + x)))        # fma.rn.bf16, then t - y
        return {"out": (_round_bf16(t - y), 0), "max": (_bf16(np.maximum(x, y)), 0)}
    if name == "sort_flip":
        x = d["x"].reshape(-1, entry["constexprs"]["BLOCK"])
        return {"sorted": (-np.sort(-x, axis=1).ravel(), 0), "flipped": (x[:, ::-1].ravel(), 0)}
    if name == "block_histogram":
        bins = entry["constexprs"]["BINS"]
        x = d["x"].reshape(-1, entry["constexprs"]["BLOCK"])
        return {"hist": (np.concatenate([np.bincount(r, minlength=bins) for r in x]), 0)}
    if name == "gather_rows":
        c = entry["constexprs"]["C"]
        x, idx = d["x"].reshape(-1, c), d["idx"].reshape(-1, c)
        return {"out": (np.take_along_axis(x, idx, axis=1).ravel(), 0)}
    if name == "permute_join":
        a, b, c = (entry["constexprs"][k] for k in "ABC")
        x = d["x"].reshape(a, b, c)
        pairs = x.reshape(a * b, c // 2, 2)
        joined = np.stack([pairs[..., 1], pairs[..., 0] * np.float32(2)], axis=-1)
        return {"perm": (x.transpose(2, 0, 1).ravel(), 0), "join": (joined.ravel(), 0)}
    if name == "scan_max":
        x = d["x"].reshape(-1, entry["constexprs"]["BLOCK"])
        return {"out": (np.maximum.accumulate(x, axis=1).ravel(), 0)}
    if name == "asm_barrier":
        x = d["x"].astype(np.uint64)
        rot = ((x << 7) | (x >> 25)) & 0xFFFFFFFF                  # shf.l.wrap x, x, 7
        return {"out": (rot.astype(np.uint32).byteswap(), 0)}      # prmt 0x0123
    if name == "fp8_casts":
        x = _f(d["x"])
        e5 = _fp8(x, "float8e5")
        return {"e4": (_fp8(x, "float8e4nv"), 0), "e5": (e5, 0),
                "back": (fp8_to_f64(e5, "float8e5"), 0)}
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
                if got.dtype.kind in "iu" else \
                np.nonzero((got != want.astype(got.dtype)) & ~(np.isnan(got) & np.isnan(want)))[0]
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
