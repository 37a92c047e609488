"""NumPy references for the CUDA C corpus, and the inputs they are computed from.

Each kernel in `*.cu` has a function here, registered with `@reference(out=Tolerance, ...)`,
which names its output buffers and how to compare them. A function receives the launch's
buffers as NumPy arrays (inputs as generated, outputs with their initial contents), the scalar
parameters by name, and the manifest entry; it returns the expected contents of every output
buffer. The functions restate each kernel's semantics independently of the CUDA code:
integer arithmetic wraps as in C, float-to-integer conversions clamp, a NaN converts as an
H200 converts it (`f2i`), and every correctly rounded float operation is computed exactly with `Fraction` and
rounded in the requested mode (so `exact` means bit-exact).

Storage: f16 buffers are `np.float16`; bf16 buffers are `np.uint16` bit patterns.
Input generators (`init` in a buffer spec) are deterministic: see `make_buffer`.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np

# --------------------------------------------------------------------------------------------
# Buffers

STORAGE = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
FLOATS = ("f16", "bf16", "f32", "f64")
INT_RANGE = {name: (int(np.iinfo(t).min), int(np.iinfo(t).max))
             for name, t in STORAGE.items() if name not in FLOATS}
INIT_KINDS = ("zeros", "const", "values", "arange", "random", "random_int", "random_bits",
              "values_then_random", "values_then_random_bits")


class SpecError(ValueError):
    """A buffer or launch description that cannot be materialised."""


def itemsize(dtype: str) -> int:
    if dtype not in STORAGE:
        raise SpecError(f"unknown dtype {dtype!r}; known: {', '.join(STORAGE)}")
    return np.dtype(STORAGE[dtype]).itemsize


def _to_float(v) -> float:
    return float(v)  # also parses "nan", "inf", "-inf"


def _cast(values, dtype: str) -> np.ndarray:
    """Python numbers -> storage array; floats round to nearest (bf16: to nearest even)."""
    if dtype == "bf16":
        return np.array([f32_to_bf16_bits(_to_float(v)) for v in values], dtype=np.uint16)
    if dtype in FLOATS:
        return np.array([_to_float(v) for v in values], dtype=np.float64).astype(STORAGE[dtype])
    lo, hi = INT_RANGE[dtype]
    ints = [int(v) for v in values]
    if any(not lo <= v <= hi for v in ints):
        raise SpecError(f"value out of range for {dtype}")
    return np.array(ints, dtype=STORAGE[dtype])


def _random_part(spec: dict, dtype: str, count: int, rng: np.random.Generator) -> np.ndarray:
    kind = spec["init"].removeprefix("values_then_")
    if kind == "random_bits":
        if dtype in FLOATS:
            raise SpecError("random_bits is for integer buffers")
        lo, hi = INT_RANGE[dtype]
        return rng.integers(lo, hi, size=count, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64
                            ).astype(STORAGE[dtype])
    low, high = spec["low"], spec["high"]
    if kind == "random" and dtype in FLOATS:
        vals = rng.uniform(low, high, size=count)
    else:  # integers in [low, high), times an optional scale for float buffers
        vals = rng.integers(low, high, size=count, dtype=np.int64)
        if spec.get("nonzero"):
            vals[vals == 0] = 1
        if dtype in FLOATS:
            vals = vals * float(spec.get("scale", 1))
        else:
            return _cast(vals.tolist(), dtype)
    return _cast(vals.tolist(), dtype)


def make_buffer(spec: dict) -> np.ndarray:
    """A buffer's initial contents from its spec.

    init: "zeros" (default) | "const" (value) | "values" (list, repeated to fill) |
    "arange" (start=0, step=1) | "random" (uniform floats in [low, high), or integers in
    [low, high) for integer buffers) | "random_int" (integers in [low, high) times `scale`) |
    "random_bits" (uniform bit patterns) | "values_then_random[_bits]" (the list, then random).
    Random kinds use numpy's PCG64 seeded with `seed`; `nonzero` turns generated zeros into 1.
    """
    dtype, count = spec["dtype"], int(spec["count"])
    itemsize(dtype)
    init = spec.get("init", "zeros")
    if init not in INIT_KINDS:
        raise SpecError(f"unknown init {init!r}; known: {', '.join(INIT_KINDS)}")
    if init == "zeros":
        return np.zeros(count, dtype=STORAGE[dtype])
    if init == "const":
        return _cast([spec["value"]] * count, dtype)
    if init == "values":
        vals = spec["values"]
        return _cast([vals[k % len(vals)] for k in range(count)], dtype)
    if init == "arange":
        start, step = spec.get("start", 0), spec.get("step", 1)
        return _cast([start + step * k for k in range(count)], dtype)
    rng = np.random.Generator(np.random.PCG64(spec["seed"]))
    if init.startswith("values_then_"):
        head = _cast(spec["values"][:count], dtype)
        tail = _random_part(spec, dtype, count - len(head), rng)
        return np.concatenate([head, tail]).astype(STORAGE[dtype])
    return _random_part(spec, dtype, count, rng)


def make_inputs(entry: dict) -> dict[str, np.ndarray]:
    """Every buffer of a manifest entry, materialised (outputs included, with initial contents)."""
    return {name: make_buffer(spec) for name, spec in entry["buffers"].items()}


def scalar_params(entry: dict) -> dict[str, int | float]:
    return {p["name"]: p["value"] for p in entry["params"] if "buffer" not in p}


# --------------------------------------------------------------------------------------------
# Comparison

@dataclass(frozen=True)
class Tolerance:
    """How an output is compared: bit-exact, within `ulp` units in the last place of the
    expected value, or numpy.isclose with rtol/atol."""
    kind: str = "exact"
    ulp: float = 0
    rtol: float = 0.0
    atol: float = 0.0


EXACT = Tolerance()


def ulps(n: float) -> Tolerance:
    return Tolerance("ulp", ulp=n)


def close(rtol: float, atol: float) -> Tolerance:
    return Tolerance("close", rtol=rtol, atol=atol)


def mismatch(dtype: str, actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> str | None:
    """None when `actual` matches `expected` under `tol`, else a short description."""
    actual = np.asarray(actual).reshape(-1)
    expected = np.asarray(expected).reshape(-1)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if tol.kind == "exact" or dtype not in FLOATS:
        bytes_a = actual.view(np.uint8).reshape(len(actual), -1)
        bad = (bytes_a != expected.view(np.uint8).reshape(len(expected), -1)).any(axis=1)
    else:
        a = bf16_bits_to_f32(actual) if dtype == "bf16" else actual.astype(np.float64)
        e = bf16_bits_to_f32(expected) if dtype == "bf16" else expected.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(e)
        if tol.kind == "ulp":
            if dtype == "bf16":   # 8 significand bits: an f32 ulp scaled by 2^16
                spacing = np.spacing(np.abs(e.astype(np.float32))).astype(np.float64) * 65536
            else:
                spacing = np.spacing(np.abs(expected)).astype(np.float64)
            ok = (a == e) | (np.abs(a - e) <= tol.ulp * spacing)
        elif tol.kind == "close":
            ok = np.isclose(a, e, rtol=tol.rtol, atol=tol.atol)
        else:
            raise SpecError(f"unknown tolerance kind {tol.kind!r}")
        bad = ~(ok | both_nan)
    if not bad.any():
        return None
    k = int(np.flatnonzero(bad)[0])
    return f"{int(bad.sum())} of {len(bad)} differ; first at [{k}]: {actual[k]!r} != {expected[k]!r}"


# --------------------------------------------------------------------------------------------
# Registry and manifest entries

@dataclass(frozen=True)
class Reference:
    func: Callable[[dict, dict, dict], dict]
    outputs: dict[str, Tolerance]


REFERENCES: dict[str, Reference] = {}


def reference(**outputs: Tolerance):
    def register(func):
        REFERENCES[func.__name__] = Reference(func, outputs)
        return func
    return register


def manifest_entry(*, name: str, source: str, ptx: str, nvcc_options: list[str], kernel: str,
                   spec: dict) -> dict:
    """One launch in the emulator's LAUNCH.json shape, plus what to compare and against what."""
    ref_name = spec.get("reference")
    if ref_name not in REFERENCES:
        raise SpecError(f"{name}: no reference function {ref_name!r}")
    ref = REFERENCES[ref_name]
    buffers = {}
    for bname, b in spec["buffers"].items():
        out = {"size": int(b["count"]) * itemsize(b["dtype"])}
        out.update(b)
        out.setdefault("init", "zeros")
        if out["init"] == "zeros":
            out["fill"] = 0
        make_buffer(out)  # fail now on a spec that cannot be generated
        buffers[bname] = out
    for p in spec["params"]:
        if "buffer" in p and p["buffer"] not in buffers:
            raise SpecError(f"{name}: parameter names unknown buffer {p['buffer']!r}")
        if "buffer" not in p and not {"type", "value", "name"} <= set(p):
            raise SpecError(f"{name}: scalar parameter needs type, value and name: {p}")
    for o in ref.outputs:
        if o not in buffers:
            raise SpecError(f"{name}: reference output {o!r} is not a buffer")
    return {
        "name": name, "source": source, "ptx": ptx, "nvcc_options": nvcc_options,
        "kernel": kernel, "grid": spec["grid"], "block": spec["block"],
        "dynamic_shared_bytes": spec.get("dynamic_shared_bytes", 0),
        "buffers": buffers, "params": spec["params"],
        "outputs": [{"buffer": o, "dtype": buffers[o]["dtype"], "count": buffers[o]["count"],
                     "compare": asdict(t)} for o, t in ref.outputs.items()],
        "reference": ref_name,
    }


def run_reference(entry: dict, buffers: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Expected output buffers for a manifest entry (inputs generated unless given)."""
    if buffers is None:
        buffers = make_inputs(entry)
    ref = REFERENCES[entry["reference"]]
    result = ref.func({k: v.copy() for k, v in buffers.items()}, scalar_params(entry), entry)
    out = {}
    for o in ref.outputs:
        want = entry["buffers"][o]
        arr = np.asarray(result[o]).reshape(-1)
        if arr.dtype != STORAGE[want["dtype"]] or arr.size != want["count"]:
            raise SpecError(f"{entry['name']}: reference gave {o} as {arr.dtype}[{arr.size}], "
                            f"declared {want['dtype']}[{want['count']}]")
        out[o] = arr
    return out


def launch_json(entry: dict, folder: Path) -> dict:
    """Write the entry's input buffers as `<name>.bin` under `folder` and return the
    LAUNCH.json document (DESIGN.md) that runs it; write it with json.dump if wanted."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    buffers = {}
    for name, spec in entry["buffers"].items():
        if spec.get("init", "zeros") == "zeros":
            buffers[name] = {"size": spec["size"], "fill": 0}
        else:
            (folder / f"{name}.bin").write_bytes(make_buffer(spec).tobytes())
            buffers[name] = {"size": spec["size"], "file": f"{name}.bin"}
    params = [{"buffer": p["buffer"]} if "buffer" in p else {"type": p["type"], "value": p["value"]}
              for p in entry["params"]]
    return {"kernel": entry["kernel"], "grid": entry["grid"], "block": entry["block"],
            "dynamic_shared_bytes": entry["dynamic_shared_bytes"], "buffers": buffers,
            "params": params}


def load_manifest(path: Path | None = None) -> list[dict]:
    path = path or Path(__file__).with_name("manifest.json")
    return json.loads(Path(path).read_text())["launches"]


# --------------------------------------------------------------------------------------------
# Exact rounding of real numbers into binary floating-point formats

@dataclass(frozen=True)
class FloatFormat:
    precision: int        # significand bits, the implicit one included
    emin: int
    emax: int
    has_inf: bool
    max_finite: Fraction


def _ieee(p: int, emin: int, emax: int) -> FloatFormat:
    return FloatFormat(p, emin, emax, True, (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax)


FORMATS = {
    "f64": _ieee(53, -1022, 1023), "f32": _ieee(24, -126, 127), "f16": _ieee(11, -14, 15),
    "bf16": _ieee(8, -126, 127), "e5m2": _ieee(3, -14, 15),
    "e4m3": FloatFormat(4, -6, 8, False, Fraction(448)),   # OCP FP8: no infinities
}
MODES = ("rn", "rna", "rz", "ru", "rd")


def floor_log2(q: Fraction) -> int:
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    return e


def _away(frac: Fraction, n: int, mode: str, negative: bool) -> bool:
    """Whether rounding n + frac (0 <= frac < 1) moves away from zero."""
    if frac == 0:
        return False
    if mode == "rn":
        return frac > Fraction(1, 2) or (frac == Fraction(1, 2) and n % 2 == 1)
    if mode == "rna":
        return frac >= Fraction(1, 2)
    if mode == "rz":
        return False
    if mode == "ru":
        return not negative
    if mode == "rd":
        return negative
    raise ValueError(f"unknown rounding mode {mode!r}")


def _overflow(fmt: FloatFormat, mode: str, negative: bool, satfinite: bool) -> float:
    towards_inf = mode in ("rn", "rna") or (mode == "ru" and not negative) or (mode == "rd" and negative)
    mag = math.inf if towards_inf and fmt.has_inf and not satfinite else float(fmt.max_finite)
    return -mag if negative else mag


def round_fraction(q: Fraction, fmt: str, mode: str = "rn", satfinite: bool = False,
                   zero_sign_negative: bool = False) -> float:
    """The value of the format nearest to q in `mode`, as a Python float (exact)."""
    f = FORMATS[fmt]
    if q == 0:
        return -0.0 if zero_sign_negative else 0.0
    negative = q < 0
    a = -q if negative else q
    e = max(floor_log2(a), f.emin)
    quantum = Fraction(2) ** (e - f.precision + 1)
    scaled = a / quantum
    n = scaled.numerator // scaled.denominator
    n += _away(scaled - n, n, mode, negative)
    mag = n * quantum
    if mag > f.max_finite:
        return _overflow(f, mode, negative, satfinite)
    value = float(mag)
    return -value if negative else value


def round_float(x: float, fmt: str, mode: str = "rn", satfinite: bool = False) -> float:
    """Convert a Python float (any value) into a format: NaN stays NaN, infinities stay
    infinite (or become the largest finite value when saturating), zeros keep their sign."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        if satfinite or not FORMATS[fmt].has_inf:
            return math.copysign(float(FORMATS[fmt].max_finite), x)
        return x
    if x == 0:
        return x
    return round_fraction(Fraction(x), fmt, mode, satfinite)


def exact_result(q: Fraction, fmt: str, mode: str) -> float:
    """Round an exact sum/product: an exact zero is +0, or -0 when rounding down (IEEE 754)."""
    return round_fraction(q, fmt, mode, zero_sign_negative=(mode == "rd"))


def sqrt_round(x: float, fmt: str, mode: str = "rn") -> float:
    """Correctly rounded square root of a non-negative float."""
    if x == 0 or math.isinf(x) or math.isnan(x):
        return math.sqrt(x) if not math.isinf(x) else x
    f = FORMATS[fmt]
    a = Fraction(x)
    e = max(floor_log2(a) // 2, f.emin)
    quantum = Fraction(2) ** (e - f.precision + 1)
    s = a / (quantum * quantum)                # sqrt(a) / quantum = sqrt(s)
    n = math.isqrt(s.numerator // s.denominator)
    exact = Fraction(n * n) == s
    if not exact:
        if mode == "ru":
            n += 1
        elif mode in ("rn", "rna"):
            mid = Fraction(2 * n + 1, 2)
            n += (s > mid * mid) or (s == mid * mid and (mode == "rna" or n % 2 == 1))
    return float(n * quantum)


def f32_to_bf16_bits(x: float, mode: str = "rn") -> int:
    v = round_float(x, "bf16", mode)
    if math.isnan(v):
        return 0x7FFF
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0]) >> 16


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)


def f16_bits(v: float) -> int:
    return int(np.array([v], dtype=np.float16).view(np.uint16)[0])


def fp8_bits(v: float, fmt: str) -> int:
    """Encode a value already representable in e4m3 / e5m2."""
    f = FORMATS[fmt]
    mant_bits = f.precision - 1
    bias = 1 - f.emin
    sign = 0x80 if math.copysign(1.0, v) < 0 else 0
    a = abs(v)
    if math.isinf(a):
        return sign | (((1 << (7 - mant_bits)) - 1) << mant_bits)
    if a == 0:
        return sign
    q = Fraction(a)
    e = floor_log2(q)
    if e < f.emin:
        return sign | int(q / Fraction(2) ** (f.emin - mant_bits))
    m = int(q / Fraction(2) ** (e - mant_bits)) - (1 << mant_bits)
    return sign | ((e + bias) << mant_bits) | m


def fmap(fn, *arrays, dtype) -> np.ndarray:
    """Apply a Python function elementwise (over exact Python floats / ints)."""
    cols = [np.asarray(a).tolist() for a in arrays]
    return np.array([fn(*vals) for vals in zip(*cols)], dtype=dtype)


def f2i(x: float, mode: str, dtype: str, src: str = "f32") -> int:
    """PTX cvt from float to integer: round in `mode`, clamp to the type. A NaN gives what an
    H200 gives (GPU run 5): 0 from f32 into 32 bits or fewer; the type's sign bit alone into
    64 bits, and from f64 into every width (s32/u32 0x80000000, s16/u16 0x8000, s8/u8 0x80;
    signed types: their minimum)."""
    lo, hi = INT_RANGE[dtype]
    if math.isnan(x):
        if src == "f64" or dtype in ("s64", "u64"):
            return lo if lo < 0 else (hi + 1) // 2
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    r = {"rn": round, "rz": math.trunc, "ru": math.ceil, "rd": math.floor}[mode](x)
    return max(lo, min(hi, int(r)))


def i2f(n: int, fmt: str, mode: str = "rn") -> float:
    return round_fraction(Fraction(int(n)), fmt, mode) if n else 0.0


def wrap(values, dtype: str) -> np.ndarray:
    """Python / numpy integers reduced modulo 2^bits into a signed or unsigned type."""
    lo, hi = INT_RANGE[dtype]
    span = hi - lo + 1
    items = values if isinstance(values, (list, tuple)) else np.asarray(values).reshape(-1).tolist()
    return np.array([((int(v) - lo) % span) + lo for v in items], dtype=STORAGE[dtype])


def py(a) -> list:
    """Elements as Python ints/floats (no numpy overflow surprises)."""
    return np.asarray(a).reshape(-1).tolist()


def warps(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).reshape(-1, 32)


# --------------------------------------------------------------------------------------------
# calls.cu

def _mix3(a: int, b: int, c: int) -> int:
    return int(wrap([(a * 31 + b) ^ (c << 3)], "s32")[0])


@reference(out=EXACT)
def ref_call_noinline(b, p, launch):
    a = py(b["a"])
    return {"out": np.array([_mix3(x, i, _mix3(i, x >> 4, 7)) for i, x in enumerate(a)],
                            dtype=np.int32)}


@reference(out=EXACT)
def ref_call_many_args(b, p, launch):
    out = []
    for i, (a, d) in enumerate(zip(py(b["a"]), py(b["d"]))):
        s = int(wrap([i - 64], "s16")[0])
        u = (i * 3) & 0xFF
        out.append(a * 3 + math.trunc(d) - math.trunc(i * 0.5) + s * u)
    return {"out": wrap(out, "s64")}


@reference(out=EXACT)
def ref_call_recursive(b, p, launch):
    fib = [0, 1]
    while len(fib) < 64:
        fib.append(fib[-1] + fib[-2])
    out = []
    for n, x, y in zip(py(b["n"]), py(b["a"]), py(b["b"])):
        out += [fib[n], math.gcd(x, y)]
    return {"out": np.array(out, dtype=np.uint32)}


@reference(out=EXACT)
def ref_call_indirect(b, p, launch):
    ops = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y,
           lambda x, y: x ^ y, max]
    return {"out": wrap([ops[s % 5](x, y) for s, x, y in zip(py(b["sel"]), py(b["x"]), py(b["y"]))],
                        "s32")}


@reference(out=EXACT)
def ref_call_struct(b, p, launch):
    # Integer-valued inputs: every product and difference is exact in f32.
    u = b["a"].astype(np.float64).reshape(-1, 3)
    v = b["b"].astype(np.float64).reshape(-1, 3)
    return {"out": np.cross(u, v).astype(np.float32).reshape(-1)}


# --------------------------------------------------------------------------------------------
# control.cu

@reference(out=EXACT)
def ref_switch_c(b, p, launch):
    cases = [lambda x: x * 5, lambda x: x + 17, lambda x: x ^ 0x55, lambda x: x - 3,
             lambda x: x << 2, lambda x: x >> 1, lambda x: ~x, lambda x: x & 0xFF0,
             lambda x: x | 0x10001, lambda x: -x]
    out = []
    for x in py(b["v"]):
        k = (x & 0xFFFFFFFF) % 11
        out.append(cases[k](x) if k < len(cases) else 42)
    return {"out": wrap(out, "s32")}


@reference(out=EXACT)
def ref_switch_brx(b, p, launch):
    cases = [lambda x: x + 1000, lambda x: x * 3, lambda x: x >> 3,
             lambda x: x ^ 0x5A5A5A5A, lambda x: ~x & 0xFFFFFFFF]
    return {"out": wrap([cases[s](x) if s <= 4 else 7 for s, x in zip(py(b["sel"]), py(b["v"]))],
                        "u32")}


@reference(steps=EXACT)
def ref_loop_collatz(b, p, launch):
    out = []
    for x in py(b["start"]):
        n = 0
        while x != 1:
            x = 3 * x + 1 if x & 1 else x >> 1
            n += 1
        out.append(n)
    return {"steps": np.array(out, dtype=np.uint32)}


@reference(out=EXACT)
def ref_loop_break_continue(b, p, launch):
    data, n = py(b["data"]), p["n"]
    out = []
    for i, length in enumerate(py(b["len"])):
        acc = 0
        for j in range(max(length, 0)):
            d = data[(i + j) % n]
            if d < -900:
                break
            if d & 3 == 0:
                continue
            acc += d * (j + 1)
        out.append(acc)
    return {"out": wrap(out, "s32")}


@reference(out=EXACT)
def ref_local_sort(b, p, launch):
    return {"out": np.sort(b["v"].reshape(-1, 8), axis=1).reshape(-1)}


@reference(out=EXACT)
def ref_local_histogram(b, p, launch):
    v = b["v"].reshape(-1, 16)
    out = np.zeros_like(v, dtype=np.uint32)
    for i, row in enumerate(v):
        h = np.bincount(row >> 4, minlength=16)
        out[i] = [h[(k + i) & 15] for k in range(16)]
    return {"out": out.reshape(-1)}


@reference(out=EXACT)
def ref_grid3d(b, p, launch):
    gx, gy, gz = launch["grid"]
    bx, by, bz = launch["block"]
    out = np.zeros(4 * gx * gy * gz * bx * by * bz, dtype=np.uint32)
    for cz in range(gz):
        for cy in range(gy):
            for cx in range(gx):
                for tz in range(bz):
                    for ty in range(by):
                        for tx in range(bx):
                            g = ((cz * gy + cy) * gx + cx) * (bx * by * bz) + (tz * by + ty) * bx + tx
                            out[4 * g:4 * g + 4] = [tx | ty << 8 | tz << 16, cx | cy << 8 | cz << 16,
                                                    bx | by << 8 | bz << 16, gx | gy << 8 | gz << 16]
    return {"out": out}


@reference(out=EXACT)
def ref_guarded_exit(b, p, launch):
    out = b["out"].astype(np.int64)
    n = p["n"]
    x = b["x"][:n].astype(np.int64)
    out[:n] = np.where(x < 0, -x * 2, x + 1)
    return {"out": out.astype(np.int32)}


# --------------------------------------------------------------------------------------------
# atomics.cu

@reference(hist=EXACT)
def ref_atomic_add_int(b, p, launch):
    hist = [0] * 64
    for x in py(b["v"]):
        hist[x & 15] += 1
        hist[16 + ((x >> 4) & 15)] += 2
        hist[32 + ((x >> 8) & 15)] += x >> 28
        hist[48 + ((x >> 12) & 15)] += x & 7
    return {"hist": wrap(hist, "u32")}


@reference(fsum=EXACT, dsum=EXACT)
def ref_atomic_add_float(b, p, launch):
    # Inputs are multiples of 1/4 (1/8) with few bits: every partial sum is exact.
    i = np.arange(b["f"].size)
    fsum = np.zeros(4)
    dsum = np.zeros(4)
    np.add.at(fsum, i & 3, b["f"].astype(np.float64))
    np.add.at(dsum, (i >> 2) & 3, b["d"])
    return {"fsum": fsum.astype(np.float32), "dsum": dsum}


@reference(prod=EXACT, fmax=EXACT, dmin=EXACT)
def ref_atomic_cas(b, p, launch):
    prod = [1, 1]
    for i, m in enumerate(py(b["m"])):
        prod[i & 1] = (prod[i & 1] * (m | 1)) & 0xFFFFFFFF
    return {"prod": np.array(prod, dtype=np.uint32),
            "fmax": np.array([b["f"].max()], dtype=np.float32),
            "dmin": np.array([b["d"].min()], dtype=np.float64)}


@reference(res=EXACT, res64=EXACT)
def ref_atomic_minmax(b, p, launch):
    v, w = py(b["v"]), py(b["w"])
    r, r64 = py(b["res"]), py(b["res64"])
    u = [x & 0xFFFFFFFF for x in v]
    u64 = [x & 0xFFFFFFFFFFFFFFFF for x in w]
    res = [max([r[0]] + v), min([r[1]] + v), max([r[2] & 0xFFFFFFFF] + u), min([r[3] & 0xFFFFFFFF] + u)]
    res64 = [max([r64[0]] + w), min([r64[1]] + w),
             max([r64[2] & 0xFFFFFFFFFFFFFFFF] + u64), min([r64[3] & 0xFFFFFFFFFFFFFFFF] + u64)]
    return {"res": wrap(res, "s32"), "res64": wrap(res64, "s64")}


@reference(state=EXACT, fslot=EXACT, slot64=EXACT)
def ref_atomic_exch(b, p, launch):
    n = math.prod(launch["grid"]) * math.prod(launch["block"])
    return {"state": np.array([1, 1, n - 1], dtype=np.uint32),
            "fslot": np.array([2.5], dtype=np.float32),
            "slot64": np.array([0x0123456789ABCDEF], dtype=np.uint64)}


@reference(res=EXACT, res64=EXACT)
def ref_atomic_bitwise(b, p, launch):
    res, res64 = py(b["res"]), py(b["res64"])
    for i, v in enumerate(py(b["v"])):
        res[0] &= v | (1 << (i & 31))
        res[1] |= v & 0x0F0F0F0F
        res[2] ^= v
        y = (v << (i & 31)) & 0xFFFFFFFFFFFFFFFF
        res64[0] &= ~y & 0xFFFFFFFFFFFFFFFF
        res64[1] |= y
        res64[2] ^= y
    return {"res": np.array(res, dtype=np.uint32), "res64": np.array(res64, dtype=np.uint64)}


@reference(ctr=EXACT, ctr64=EXACT)
def ref_atomic_inc_dec(b, p, launch):
    n = math.prod(launch["grid"]) * math.prod(launch["block"])
    c = py(b["ctr"])
    for _ in range(n):
        c[0] = 0 if c[0] >= 16 else c[0] + 1          # atom.inc: wrap to 0 past the limit
        c[1] = 0 if c[1] >= 1000 else c[1] + 1
        c[2] = 7 if c[2] == 0 or c[2] > 7 else c[2] - 1  # atom.dec: wrap to the limit
        c[3] = (c[3] - 3) & 0xFFFFFFFF
    return {"ctr": np.array(c, dtype=np.uint32),
            "ctr64": np.array([py(b["ctr64"])[0] + 3 * n], dtype=np.uint64)}


@reference(hist=EXACT, bmax=EXACT)
def ref_atomic_shared(b, p, launch):
    v = b["v"].astype(np.int64)
    hist = np.bincount(v >> 3, minlength=32)
    blocks = v.reshape(launch["grid"][0], -1)
    bmax = [int(blk.max()) + int(int(blk.sum()) & 0xFFFFFFFF != 0) - 1 for blk in blocks]
    return {"hist": hist.astype(np.uint32), "bmax": np.array(bmax, dtype=np.int32)}


# --------------------------------------------------------------------------------------------
# warp.cu (all lanes active; lanes of a warp are consecutive threads)

@reference(out=EXACT)
def ref_shfl_down_reduce(b, p, launch):
    out = []
    for w in warps(b["v"]):
        x = [int(v) for v in w]
        for off in (16, 8, 4, 2, 1):
            x = [x[l] + (x[l + off] if l + off < 32 else x[l]) for l in range(32)]
        out += x
    return {"out": wrap(out, "s32")}


def _scan_up(x: list[int], width: int) -> list[int]:
    off = 1
    while off < width:
        x = [x[l] + (x[l - off] if (l % width) >= off else 0) for l in range(32)]
        off <<= 1
    return x


@reference(out=EXACT, seg=EXACT)
def ref_shfl_up_scan(b, p, launch):
    out, seg = [], []
    for w in warps(b["v"]):
        out += _scan_up([int(v) for v in w], 32)
        seg += _scan_up([int(v) for v in w], 8)
    return {"out": wrap(out, "u32"), "seg": wrap(seg, "u32")}


@reference(vmax=EXACT, dswap=EXACT)
def ref_shfl_xor(b, p, launch):
    vmax = np.repeat(warps(b["v"]).max(axis=1), 32)
    d = warps(b["d"])
    dswap = d[:, np.arange(32) ^ 5].reshape(-1)
    return {"vmax": vmax.astype(np.float32), "dswap": dswap}


@reference(out=EXACT)
def ref_shfl_idx(b, p, launch):
    out = []
    for w, s in zip(warps(b["v"]), warps(b["src"])):
        for l in range(32):
            out += [w[(l + 3) & 31], w[s[l] & 31], w[(l & ~15) + (s[l] & 15)]]
    return {"out": np.array(out, dtype=np.uint32)}


def _ballot(pred) -> int:
    return sum(1 << l for l, bit in enumerate(pred) if bit)


@reference(out=EXACT)
def ref_vote(b, p, launch):
    # The activemask is taken inside `if (x & 1)`: under convergent execution (as ptxas's
    # code runs it) the lanes that take the branch together are exactly those with x odd.
    out = []
    for w in warps(b["v"]):
        x = [int(v) for v in w]
        ballot = _ballot(v > 0 for v in x)
        anyv = int(any(v < -15 for v in x))
        all1 = int(all(v > -20 for v in x))
        all2 = int(all(v > 0 for v in x))
        odd = _ballot(v & 1 for v in x)
        for v in x:
            out += [ballot, anyv, all1, all2, odd if v & 1 else 0]
    return {"out": np.array(out, dtype=np.uint32)}


def _match_any(keys: list) -> list[int]:
    return [_ballot(k == key for k in keys) for key in keys]


def _match_all(keys: list) -> tuple[int, int]:
    same = all(k == keys[0] for k in keys)
    return (0xFFFFFFFF if same else 0), int(same)


@reference(out=EXACT)
def ref_match(b, p, launch):
    out = []
    for k, k64 in zip(warps(b["k"]), warps(b["k64"])):
        k = [int(v) for v in k]
        any32 = _match_any(k)
        any64 = _match_any([(int(v) << 40) & 0xFFFFFFFFFFFFFFFF for v in k64])
        m8, p8 = _match_all([v // 8 for v in k])
        m3, p3 = _match_all([v // 3 for v in k])
        for l in range(32):
            out += [any32[l], any64[l], m8, p8, m3 | p3 << 4]
    return {"out": np.array(out, dtype=np.uint32)}


@reference(out=EXACT)
def ref_redux(b, p, launch):
    out = []
    for w in warps(b["v"]):
        u = [int(v) for v in w]
        s = [v - (1 << 32) if v >> 31 else v for v in u]
        and_ = 0xFFFFFFFF
        or_ = xor = 0
        for v in u:
            and_ &= v | 0x80000001
            or_ |= v & 0x7FFFFFFE
            xor ^= v
        row = [sum(u) & 0xFFFFFFFF, min(u), max(u), min(s) & 0xFFFFFFFF, max(s) & 0xFFFFFFFF,
               and_ ^ or_, xor]
        out += row * 32
    return {"out": np.array(out, dtype=np.uint32)}


# --------------------------------------------------------------------------------------------
# float_math.cu and fastmath.cu

def _f(fmt, mode, fn):
    """Elementwise exact operation: fn maps Python floats to an exact Fraction."""
    return lambda *xs: exact_result(fn(*[Fraction(x) for x in xs]), fmt, mode)


@reference(out=EXACT)
def ref_ieee_f32(b, p, launch):
    x, y, z = b["a"], b["b"], b["c"]
    out = np.stack([x / y, np.sqrt(y), np.float32(1) / y,
                    fmap(_f("f32", "rn", lambda a, c, d: a * c + d), x, y, z, dtype=np.float32),
                    (x * y) + z], axis=1)
    return {"out": out.astype(np.float32).reshape(-1)}


@reference(out=EXACT)
def ref_directed_f32(b, p, launch):
    x, y = b["a"], b["b"]
    cols = []
    for mode in ("rd", "ru", "rz"):
        cols.append(fmap(_f("f32", mode, lambda a, c: a + c), x, y, dtype=np.float32))
    for mode in ("rd", "ru", "rz"):
        cols.append(fmap(_f("f32", mode, lambda a, c: a * c), x, y, dtype=np.float32))
    for mode in ("rd", "ru", "rz"):
        cols.append(fmap(_f("f32", mode, lambda a, c: a / c), x, y, dtype=np.float32))
    cols.append(fmap(lambda c: sqrt_round(c, "f32", "rd"), y, dtype=np.float32))
    cols.append(fmap(_f("f32", "ru", lambda c: 1 / c), y, dtype=np.float32))
    cols.append(fmap(_f("f32", "rz", lambda a, c: a * c - a), x, y, dtype=np.float32))
    return {"out": np.stack(cols, axis=1).reshape(-1)}


@reference(out=EXACT)
def ref_ieee_f64(b, p, launch):
    x, y, z = b["a"], b["b"], b["c"]
    fma = fmap(_f("f64", "rn", lambda a, c, d: a * c + d), x, y, z, dtype=np.float64)
    cols = [x / y, np.sqrt(y), 1.0 / y, fma, x * y, (x + z) - (y * y), (x + y) * (x - y)]
    return {"out": np.stack(cols, axis=1).reshape(-1)}


@reference(out=EXACT)
def ref_directed_f64(b, p, launch):
    x, y = b["a"], b["b"]
    cols = [fmap(_f("f64", "rd", lambda a, c: a + c), x, y, dtype=np.float64),
            fmap(_f("f64", "ru", lambda a, c: a * c), x, y, dtype=np.float64),
            fmap(_f("f64", "rz", lambda a, c: a / c), x, y, dtype=np.float64),
            fmap(_f("f64", "ru", lambda a, c: a / c), x, y, dtype=np.float64),
            fmap(lambda c: sqrt_round(c, "f64", "rd"), y, dtype=np.float64),
            fmap(lambda c: sqrt_round(c, "f64", "ru"), y, dtype=np.float64),
            fmap(_f("f64", "rn", lambda c: 1 / c), y, dtype=np.float64),
            fmap(_f("f64", "rd", lambda a, c: a * c + 1), x, y, dtype=np.float64)]
    return {"out": np.stack(cols, axis=1).reshape(-1)}


@reference(out=EXACT, dout=EXACT)
def ref_minmax_round(b, p, launch):
    x, y, z = b["a"], b["b"], b["d"]
    cols = [np.minimum(x, y), np.maximum(x, y), np.abs(x), np.copysign(y, x), np.floor(x),
            np.ceil(x), np.trunc(x), np.rint(x), -x, np.where(x > y, x - y, np.float32(0))]
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    dcols = [np.minimum(z, xd), np.maximum(z, yd), np.abs(z), np.floor(z), np.ceil(z), np.rint(z)]
    return {"out": np.stack(cols, axis=1).astype(np.float32).reshape(-1),
            "dout": np.stack(dcols, axis=1).reshape(-1)}


# libdevice's expf/sinf/cosf are within 2 ulp and logf within 1 ulp of the true value; the
# reference is the f64 result rounded to f32 (within 0.5 ulp of it).
@reference(out=ulps(3))
def ref_libm_f32(b, p, launch):
    x = b["a"].astype(np.float64)
    lg = (np.abs(b["a"]) + np.float32(0.5)).astype(np.float64)
    cols = [np.exp(x), np.log(lg), np.sin(x), np.cos(b["big"].astype(np.float64))]
    return {"out": np.stack(cols, axis=1).astype(np.float32).reshape(-1)}


# div.approx/div.full (2 ulp), sqrt.approx, rcp.approx, rsqrt.approx (about 1-2 ulp).
@reference(out=ulps(4))
def ref_fast_arith(b, p, launch):
    x, y = b["a"].astype(np.float64), b["b"].astype(np.float64)
    cols = [x / y, np.sqrt(y), 1 / y, 1 / np.sqrt(y)]
    return {"out": np.stack(cols, axis=1).astype(np.float32).reshape(-1)}


# ex2.approx / lg2.approx are within about 2^-22 (relative / absolute), sin.approx and
# cos.approx within 2^-20.9 absolute on [-pi, pi]; exp goes through x * log2(e) in f32.
@reference(out=close(rtol=2e-6, atol=2e-6))
def ref_fast_transcendental(b, p, launch):
    x, y = b["a"].astype(np.float64), b["b"].astype(np.float64)
    cols = [np.exp(x), np.exp2(x), np.log(y), np.log2(y), np.sin(x), np.cos(x)]
    return {"out": np.stack(cols, axis=1).astype(np.float32).reshape(-1)}


# --------------------------------------------------------------------------------------------
# convert.cu

@reference(i32=EXACT, u32=EXACT, i64=EXACT, u64=EXACT, narrow=EXACT)
def ref_cvt_f32_to_int(b, p, launch):
    f = py(b["f"])
    modes = ("rn", "rz", "ru", "rd")
    narrow = [v for x in f for v in (f2i(x, "rn", "s16"), f2i(x, "rz", "u16"), f2i(x, "rd", "s8"),
                                      f2i(x, "ru", "u8"))]
    return {"narrow": np.array(narrow, dtype=np.int32),
            "i32": np.array([f2i(x, m, "s32") for x in f for m in modes], dtype=np.int32),
            "u32": np.array([f2i(x, m, "u32") for x in f for m in modes], dtype=np.uint32),
            "i64": np.array([f2i(x, m, "s64") for x in f for m in modes], dtype=np.int64),
            "u64": np.array([f2i(x, m, "u64") for x in f for m in ("rn", "rd")], dtype=np.uint64)}


@reference(out=EXACT, o64=EXACT)
def ref_cvt_f64_to_int(b, p, launch):
    out, o64 = [], []
    for x in py(b["d"]):
        out += [f2i(x, "rn", "s32", "f64"), f2i(x, "rz", "s32", "f64"), f2i(x, "ru", "s32", "f64"),
                f2i(x, "rd", "u32", "f64"), f2i(x, "rn", "s16", "f64"), f2i(x, "rz", "u16", "f64"),
                f2i(x, "rn", "s8", "f64"), f2i(x, "rd", "u8", "f64")]
        o64 += [f2i(x, "rz", "s64", "f64"), f2i(x, "rn", "u64", "f64")]
    return {"out": wrap(out, "s32"), "o64": wrap(o64, "s64")}


@reference(f=EXACT, d=EXACT)
def ref_cvt_int_to_float(b, p, launch):
    f, d = [], []
    for x, y in zip(py(b["i"]), py(b["l"])):
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFFFFFFFFFF
        short = int(wrap([x], "s16")[0])
        byte = (x >> 8) & 0xFF
        f += [i2f(x, "f32"), i2f(ux, "f32"), i2f(x, "f32", "rz"), i2f(ux, "f32", "ru"),
              i2f(y, "f32"), i2f(uy, "f32"), i2f(y, "f32", "rd"), i2f(uy, "f32", "rz"),
              float(short), float(byte)]
        d += [float(x), i2f(y, "f64"), i2f(y, "f64", "ru"), i2f(uy, "f64", "rz")]
    return {"f": np.array(f, dtype=np.float32), "d": np.array(d, dtype=np.float64)}


@reference(f=EXACT, back=EXACT)
def ref_cvt_f64_f32(b, p, launch):
    f, back = [], []
    for x in py(b["d"]):
        rn = round_float(x, "f32", "rn")
        sat = 0.0 if math.isnan(rn) else min(max(rn, 0.0), 1.0)
        f += [rn, round_float(x, "f32", "rz"), round_float(x, "f32", "ru"),
              round_float(x, "f32", "rd"), sat]
        back.append(rn)
    return {"f": np.array(f, dtype=np.float32), "back": np.array(back, dtype=np.float64)}


@reference(h=EXACT, hf=EXACT, hi=EXACT)
def ref_cvt_half(b, p, launch):
    h, hf, hi = [], [], []
    f32 = b["f"]
    x01 = py(f32 * np.float32(0.01))
    x05 = py(f32 * np.float32(0.5))
    x1m = py(f32 * np.float32(1e-3))
    x10 = py(f32 * np.float32(0.1))
    for k, x in enumerate(py(f32)):
        a = round_float(x, "f16", "rn")
        bz = round_float(x, "f16", "rz")
        c = f32_to_bf16_bits(x)
        e = round_float(x * 0.5, "f16", "rn")
        g = fp8_bits(round_float(x01[k], "e4m3", "rn", True), "e4m3") << 8 | \
            fp8_bits(round_float(x, "e4m3", "rn", True), "e4m3")
        kk = fp8_bits(round_float(x05[k], "e5m2", "rn", True), "e5m2") << 8 | \
            fp8_bits(round_float(x1m[k], "e5m2", "rn", True), "e5m2")
        h += [f16_bits(a), f16_bits(bz), c, f16_bits(e), g, kk]
        hf += [a, float(bf16_bits_to_f32(np.array([c]))[0])]
        as_int = f2i(x10[k], "rz", "s32")
        hi.append(f2i(round_float(float(as_int), "f16", "rn"), "rz", "s32"))
    return {"h": np.array(h, dtype=np.uint16), "hf": np.array(hf, dtype=np.float32),
            "hi": np.array(hi, dtype=np.int32)}


@reference(packed=EXACT, unpacked=EXACT)
def ref_cvt_packed(b, p, launch):
    packed, unpacked = [], []
    pairs = b["a"].reshape(-1, 2)
    for x, y in zip(py(pairs[:, 0]), py(pairs[:, 1])):
        hx, hy = round_float(x, "f16"), round_float(y, "f16")
        relu = [max(v, 0.0) if not math.isnan(v) else v for v in (hx, hy)]
        packed += [f16_bits(hx) << 16 | f16_bits(hy),
                   f32_to_bf16_bits(x) << 16 | f32_to_bf16_bits(y),
                   f16_bits(relu[0] + 0.0) << 16 | f16_bits(relu[1] + 0.0)]
        fl, fh = np.float32(hy), np.float32(hx)
        unpacked += [fl * np.float32(2), fh + fl]
    return {"packed": np.array(packed, dtype=np.uint32),
            "unpacked": np.array(unpacked, dtype=np.float32)}


def _clamp(v: int, dtype: str) -> int:
    lo, hi = INT_RANGE[dtype]
    return max(lo, min(hi, v))


@reference(out=EXACT)
def ref_cvt_int_int(b, p, launch):
    out = []
    for x, y in zip(py(b["v"]), py(b["w"])):
        ux = x & 0xFFFFFFFF
        uy = y & 0xFFFFFFFFFFFFFFFF
        out += [int(wrap([x], "s8")[0]), x & 0xFF, int(wrap([x], "s16")[0]), x & 0xFFFF,
                y >> 7, uy >> 40, (x * 3) >> 33, (ux * 5) >> 32,
                _clamp(x >> 20, "s8"), _clamp(x >> 20, "u8"), _clamp(y >> 44, "s16"),
                _clamp(y >> 20, "u32")]
    return {"out": wrap(out, "s32")}


# --------------------------------------------------------------------------------------------
# bits.cu

def _brev(x: int, bits: int) -> int:
    return int(format(x, f"0{bits}b")[::-1], 2)


def _clz(x: int, bits: int) -> int:
    return bits - x.bit_length()


def _ffs(x: int) -> int:
    return (x & -x).bit_length()


@reference(out=EXACT, out64=EXACT)
def ref_bit_count(b, p, launch):
    out, out64 = [], []
    for x, y in zip(py(b["v"]), py(b["w"])):
        out += [bin(x).count("1"), _clz(x, 32), _brev(x, 32), _ffs(x), bin(y).count("1"),
                _clz(y, 64), _ffs(y), 31 - _clz(x | 1, 32)]
        out64.append(_brev(y, 64))
    return {"out": np.array(out, dtype=np.uint32), "out64": np.array(out64, dtype=np.uint64)}


def prmt(a: int, b: int, c: int) -> int:
    """PTX prmt.b32 default mode: each selector nibble picks a byte of {b, a}; bit 3 of the
    nibble replicates that byte's sign bit instead."""
    src = (b << 32 | a).to_bytes(8, "little")
    out = 0
    for n in range(4):
        sel = (c >> (4 * n)) & 0xF
        byte = src[sel & 7]
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * n)
    return out


PRMT_ECR = ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3))   # d.b0..d.b3 per c[1:0]


def prmt_ecr(a: int, b: int, c: int) -> int:
    src = (b << 32 | a).to_bytes(8, "little")
    return sum(src[k] << (8 * n) for n, k in enumerate(PRMT_ECR[c & 3]))


@reference(out=EXACT)
def ref_byte_perm(b, p, launch):
    out = []
    for a, bb, s in zip(py(b["x"]), py(b["y"]), py(b["s"])):
        out += [prmt(a, bb, s & 0x7777), prmt(a, bb, 0x0123), prmt(a, bb, 0x7351),
                prmt(a, bb, (s >> 16) & 0xFFFF), prmt_ecr(a, bb, s)]
    return {"out": np.array(out, dtype=np.uint32)}


def bfe(a: int, pos: int, length: int, bits: int, signed: bool) -> int:
    """PTX bfe: extract `length` bits at `pos` (both taken mod 256), sign- or zero-filled."""
    pos &= 0xFF
    length &= 0xFF
    msb = bits - 1
    sbit = 0 if (not signed or length == 0) else (a >> min(pos + length - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if (i < length and pos + i <= msb) else sbit
        d |= bit << i
    return d


def bfi(a: int, b: int, pos: int, length: int, bits: int) -> int:
    """PTX bfi: insert the low `length` bits of a into b at `pos`."""
    pos &= 0xFF
    length &= 0xFF
    f = b
    for i in range(length):
        if pos + i > bits - 1:
            break
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
    return f


@reference(out=EXACT, out64=EXACT)
def ref_bitfield(b, p, launch):
    out, out64 = [], []
    for x, y, ps, ln in zip(py(b["v"]), py(b["w"]), py(b["pos"]), py(b["len"])):
        out += [bfe(x, ps, ln, 32, False), bfe(x, ps, ln, 32, True),
                bfi(x ^ 0xDEADBEEF, x, ps, ln, 32), bfe(x, 8, 12, 32, False),
                (x >> 5) & 0x3FF, (x & ~0xFF00 & 0xFFFFFFFF) | ((ps & 0xFF) << 8)]
        out64 += [bfe(y, ps, ln, 64, True), bfi(~y & 0xFFFFFFFFFFFFFFFF, y, ps, ln, 64)]
    return {"out": np.array(out, dtype=np.uint32), "out64": np.array(out64, dtype=np.uint64)}


@reference(out=EXACT)
def ref_funnel_shift(b, p, launch):
    out = []
    M = 0xFFFFFFFF
    for lo, hi, s in zip(py(b["a"]), py(b["b"]), py(b["n"])):
        cat = hi << 32 | lo
        w, c = s & 31, min(s, 32)
        sh = hi - (1 << 32) if hi >> 31 else hi
        out += [((cat << w) >> 32) & M, (cat >> w) & M, ((cat << c) >> 32) & M, (cat >> c) & M,
                ((lo << w) | (lo >> ((32 - s) & 31))) & M, lo >> w, (sh >> w) & M,
                (lo << s) & M if s < 32 else 0]
    return {"out": np.array(out, dtype=np.uint32)}


def _s(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


@reference(out=EXACT, out64=EXACT)
def ref_int_mul_misc(b, p, launch):
    out, out64 = [], []
    c = py(b["c"])
    for i, (x, y) in enumerate(zip(py(b["a"]), py(b["b"]))):
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
        bx, by = [_s(x >> (8 * k), 8) for k in range(4)], [_s(y >> (8 * k), 8) for k in range(4)]
        ubytes = [(uy >> (8 * k)) & 0xFF for k in range(4)]
        dp2lo = 5 + (ux & 0xFFFF) * ubytes[0] + (ux >> 16) * ubytes[1]
        dp2hi = -5 + _s(x, 16) * by[2] + _s(x >> 16, 16) * by[3]
        out += [_s(x, 24) * _s(y, 24), (ux & 0xFFFFFF) * (uy & 0xFFFFFF),
                (x * y) >> 32, (ux * uy) >> 32,
                abs(x - y) + 7, abs(ux - uy) + 9,
                (x + y) >> 1, (x + y + 1) >> 1, (ux + uy) >> 1, (ux + uy + 1) >> 1,
                1000 + sum(p_ * q for p_, q in zip(bx, by)),
                (dp2lo ^ dp2hi)]
        P, Q = c[2 * i], c[2 * i + 1]
        out64 += [(P * Q) >> 64, ((P & (2**64 - 1)) * (Q & (2**64 - 1))) >> 64]
    return {"out": wrap(out, "u32"), "out64": wrap(out64, "u64")}


# --------------------------------------------------------------------------------------------
# intdiv.cu (C semantics: truncating quotient, remainder with the dividend's sign)

def cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def cmod(a: int, b: int) -> int:
    return a - b * cdiv(a, b)


@reference(out=EXACT)
def ref_div32(b, p, launch):
    out = []
    for x, y in zip(py(b["a"]), py(b["b"])):
        ux, uy = x & 0xFFFFFFFF, y & 0xFFFFFFFF
        out += [cdiv(x, y), cmod(x, y), ux // uy, ux % uy, cdiv(x, 7), cmod(x, -3),
                ux // 10, ux % 1000]
    return {"out": wrap(out, "s32")}


@reference(out=EXACT)
def ref_div64(b, p, launch):
    out = []
    M = 2**64 - 1
    for x, y in zip(py(b["a"]), py(b["b"])):
        ux, uy = x & M, y & M
        out += [cdiv(x, y), cmod(x, y), ux // uy, ux % uy, cdiv(x, 1000000007),
                cmod(x, -12345), ux // 3, ux % ((uy >> 40) | 1)]
    return {"out": wrap(out, "s64")}


@reference(out=EXACT)
def ref_div_small(b, p, launch):
    out = []
    for x, y in zip(py(b["a"]), py(b["b"])):
        ux, uy = x & 0xFFFF, y & 0xFF
        out += [_s(cdiv(x, y), 16), _s(cmod(x, y), 16), (ux // uy) & 0xFFFF,
                (uy % ((ux | 1) & 0xFF)) & 0xFF]
    return {"out": wrap(out, "s32")}


# --------------------------------------------------------------------------------------------
# memory.cu

@reference(out=EXACT)
def ref_smem_reduce(b, p, launch):
    return {"out": wrap(b["v"].astype(np.int64).reshape(launch["grid"][0], -1).sum(axis=1), "s32")}


@reference(out=EXACT)
def ref_smem_dynamic(b, p, launch):
    n = launch["block"][0]
    v = b["v"].reshape(-1, n)
    t = np.arange(n)
    out = v[:, n - 1 - t] + v[:, (t + 1) % n] * np.float32(2)
    return {"out": out.astype(np.float32).reshape(-1)}


@reference(out=EXACT)
def ref_smem_transpose(b, p, launch):
    w, h = p["width"], p["height"]
    return {"out": b["m"].reshape(h, w).T.copy().reshape(-1)}


POLY_COEFF = (0.5, -1.25, 0.75, 2.0, -0.125)
LUT = (3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3)


@reference(out=EXACT, iout=EXACT)
def ref_constant_mem(b, p, launch):
    # x is a multiple of 1/8 in [-2, 2]: the Horner steps are exact (fused or not).
    out = []
    for x in py(b["x"]):
        r = Fraction(POLY_COEFF[4])
        for c in reversed(POLY_COEFF[:4]):
            r = r * Fraction(x) + Fraction(c)
        out.append(float(r))
    iout = [LUT[k & 15] * 100 + LUT[(k >> 4) & 15] for k in py(b["k"])]
    return {"out": np.array(out, dtype=np.float32), "iout": np.array(iout, dtype=np.int32)}


DEV_TABLE = (10, 20, 30, 40, 50, 60, 70, 80)


@reference(out=EXACT, partial=EXACT, total=EXACT)
def ref_device_globals(b, p, launch):
    vals = np.array([DEV_TABLE[k & 7] for k in py(b["k"])], dtype=np.int64)
    partial = vals.reshape(launch["grid"][0], -1).sum(axis=1)
    return {"out": (vals * 2.5).astype(np.float32), "partial": partial.astype(np.int32),
            "total": np.array([partial.sum()], dtype=np.int32)}


@reference(out=EXACT)
def ref_cp_async(b, p, launch):
    v = py(b["v"])
    out = []
    for blk in range(launch["grid"][0]):
        base = blk * 704
        s4 = v[base:base + 64]
        s8 = v[base + 64:base + 192]
        s16 = v[base + 192:base + 448]
        s16g = v[base + 448:base + 704]
        o = [0] * 576
        for t in range(64):
            o[t] = s4[63 - t] + s8[127 - 2 * t]
            for j in range(4):
                o[64 + 4 * t + j] = s16[255 - (4 * t + j)]
                o[320 + 4 * t + j] = s16g[(4 * t + j + 5) & 255] ^ s8[(t + j) & 127]
        out += o
    return {"out": wrap(out, "u32")}


@reference(out=EXACT, iout=EXACT)
def ref_vector_ldst(b, p, launch):
    v = b["v"].reshape(-1, 4)
    out = np.stack([v[:, 3], v[:, 2] + np.float32(1), v[:, 1] * np.float32(2), v[:, 0]], axis=1)
    w = py(b["w"])
    iout = []
    for i in range(len(w) // 2):
        bx, by = w[2 * i], w[2 * i + 1]
        c = w[2 * ((i + 1) & 127)]
        iout += [bx + by, bx ^ c, by - c]
    return {"out": out.astype(np.float32).reshape(-1), "iout": wrap(iout, "s32")}


@reference(out=EXACT)
def ref_grid_stride(b, p, launch):
    n, k = p["n"], p["k"]
    out = b["out"].astype(np.int64)
    out[:n] = b["v"][:n].astype(np.int64) * k + np.arange(n)
    return {"out": wrap(out, "s32")}


@reference(out=EXACT)
def ref_scalar_params(b, p, launch):
    out = []
    for v in py(b["v"]):
        out += [(v ^ p["salt"]) >> p["shift"], math.trunc((v >> 12) * p["half"])]
    return {"out": np.array(out, dtype=np.uint64)}


# --------------------------------------------------------------------------------------------
# tensor.cu (operands are small multiples of 1/2 or small integers: all sums exact)

@reference(d=EXACT, d16=EXACT)
def ref_mma_f16(b, p, launch):
    d, d16 = [], []
    a, bt, c = b["a"].astype(np.float64), b["bt"].astype(np.float64), b["c"].astype(np.float64)
    for w in range(launch["block"][0] // 32):
        A = a[w * 256:(w + 1) * 256].reshape(16, 16)
        B = bt[w * 128:(w + 1) * 128].reshape(8, 16).T
        C = c[w * 128:(w + 1) * 128].reshape(16, 8)
        d.append((A @ B + C).reshape(-1))
        d16.append((A @ B).reshape(-1))
    return {"d": np.concatenate(d).astype(np.float32), "d16": np.concatenate(d16).astype(np.float16)}


@reference(d=EXACT)
def ref_ldmatrix_mma_bf16(b, p, launch):
    a, bb = bf16_bits_to_f32(b["a"]), bf16_bits_to_f32(b["b"])
    d = [(a[k * 256:(k + 1) * 256].reshape(16, 16) @ bb[k * 128:(k + 1) * 128].reshape(16, 8)).reshape(-1)
         for k in range(launch["grid"][0])]
    return {"d": np.concatenate(d).astype(np.float32)}


@reference(out=EXACT)
def ref_ldmatrix_raw(b, p, launch):
    s = py(b["m"])

    def elem(j: int, row: int, col: int) -> int:      # row as ldmatrix sees it
        return s[j * 64 + ((3 * row) & 7) * 8 + col]

    out = []
    for lane in range(32):
        r, c = lane >> 2, 2 * (lane & 3)
        plain = [elem(j, r, c) | elem(j, r, c + 1) << 16 for j in range(4)]
        trans = [elem(j, c, r) | elem(j, c + 1, r) << 16 for j in range(4)]
        out += plain + trans
    return {"out": np.array(out, dtype=np.uint32)}


@reference(d=EXACT)
def ref_mma_s8(b, p, launch):
    A = b["a"].astype(np.int64).reshape(16, 32)
    B = b["bt"].astype(np.int64).reshape(8, 32).T
    return {"d": (A @ B + b["c"].astype(np.int64).reshape(16, 8)).astype(np.int32).reshape(-1)}


@reference(d=EXACT)
def ref_mma_tf32(b, p, launch):
    A = b["a"].astype(np.float64).reshape(16, 8)
    B = b["bt"].astype(np.float64).reshape(8, 8).T
    return {"d": (A @ B + 1.0).astype(np.float32).reshape(-1)}


# --------------------------------------------------------------------------------------------
# patterns.cu (issue 20's kernel shapes; float inputs are small multiples of 1/8 or 1/4, so
# every sum is exact in any order)

@reference(out=EXACT)
def ref_transpose_smem(b, p, launch):
    n = p["n"]
    return {"out": b["in"].reshape(n, n).T.reshape(-1).copy()}


@reference(c=EXACT)
def ref_matmul_tiled(b, p, launch):
    n, k = p["n"], p["k"]
    a = b["a"].astype(np.float64).reshape(n, k)
    bm = b["b"].astype(np.float64).reshape(k, n)
    return {"c": (a @ bm).astype(np.float32).reshape(-1)}


@reference(hist=EXACT)
def ref_histogram_smem(b, p, launch):
    return {"hist": np.bincount(b["v"][:p["n"]], minlength=256).astype(np.uint32)}


@reference(hist=EXACT)
def ref_histogram_global(b, p, launch):
    return {"hist": np.bincount(b["v"][:p["n"]] % 64, minlength=64).astype(np.uint32)}


@reference(sum=EXACT)
def ref_block_reduce(b, p, launch):
    return {"sum": wrap([sum(py(b["v"][:p["n"]]))], "s32")}


@reference(out=EXACT)
def ref_warp_sum_f32(b, p, launch):
    return {"out": b["v"].astype(np.float64).reshape(-1, 32).sum(axis=1).astype(np.float32)}


@reference(out=EXACT, count=EXACT)
def ref_compact_ballot(b, p, launch):
    out, count = b["out"].copy(), []
    for w in range(len(b["v"]) // 32):
        kept = [x for x in py(b["v"][32 * w:32 * (w + 1)]) if x > 0]
        out[32 * w:32 * w + len(kept)] = kept
        count.append(len(kept))
    return {"out": out, "count": np.array(count, dtype=np.uint32)}


@reference(out=EXACT)
def ref_vote_counts(b, p, launch):
    out = []
    for w in range(len(b["v"]) // 32):
        xs = py(b["v"][32 * w:32 * (w + 1)])
        out += [sum(x > 0 for x in xs), int(any(x == 0 for x in xs)), int(all(x > -3 for x in xs))]
    return {"out": np.array(out, dtype=np.uint32)}


@reference(y=EXACT)
def ref_saxpy_grid_stride(b, p, launch):
    y = b["x"].astype(np.float64) * p["a"] + b["y"].astype(np.float64)
    return {"y": y.astype(np.float32)}


@reference(sum=EXACT)
def ref_sum_f64_grid_stride(b, p, launch):
    threads = launch["grid"][0] * launch["block"][0]
    v = b["v"][:p["n"]]
    return {"sum": np.array([v[t::threads].sum() for t in range(threads)], dtype=np.float64)}


@reference(out=EXACT)
def ref_stencil_5pt(b, p, launch):
    n = p["n"]
    a = b["in"].astype(np.float64).reshape(n, n)
    out = a.copy()
    out[1:-1, 1:-1] = 0.5 * a[1:-1, 1:-1] + 0.125 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
    return {"out": out.astype(np.float32).reshape(-1)}


@reference(out=EXACT)
def ref_smem_reverse_block(b, p, launch):
    v = b["v"].reshape(-1, launch["block"][0])
    return {"out": (v[:, ::-1] ^ (v >> 3)).reshape(-1).astype(np.uint32)}
