"""How the GPU check compares one output buffer with another (NumPy only, so it runs on the
GPU machine without ptx2sass).

An output's `check` says how it is held to its reference, in one vocabulary for every corpus:
- "bits": the same bytes, element by element (ZLUDA's hardware-checked outputs; integers);
- "equal": the same values, NaN equal to NaN, -0 equal to +0 (Triton's/LLVM's exact checks);
- "ulp": floats within `ulp` units in the last place of the expected value (the CUDA corpus);
- "close": |got - want| <= atol + rtol * |want|, NaN equal to NaN when `nan_equal`
  (tinygrad's rtol per dtype with atol scaled by the largest reference; Triton's and LLVM's
  `tol * (1 + |want|)`).
Integer dtypes are always compared as "bits". `dtype` names how the bytes are stored and
read: u8..u64, s8..s64, f16, bf16, f32, f64, fp8e4m3, fp8e5m2 (fp8 and bf16 are decoded to
float64 for "equal"/"ulp"/"close"); `want_dtype` (default `dtype`) is how the expected bytes
are stored, e.g. "f64" for a float reference computed in double precision."""
from __future__ import annotations

import numpy as np

STORAGE = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
           "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
           "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "fp8e4m3": np.uint8, "fp8e5m2": np.uint8, "bool": np.uint8}
FLOATS = ("f16", "bf16", "f32", "f64", "fp8e4m3", "fp8e5m2")
KINDS = ("bits", "equal", "ulp", "close")


def _fp8_table(exp_bits: int, bias: int, nan_codes: tuple[int, ...], inf_codes: tuple[int, ...]) -> np.ndarray:
    codes = np.arange(256)
    man_bits = 7 - exp_bits
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    mag = np.where(e == 0, m / (1 << man_bits) * 2.0 ** (1 - bias),
                   (1 + m / (1 << man_bits)) * 2.0 ** (e - bias))
    values = np.where(codes & 0x80, -mag, mag)
    values[list(inf_codes)] = [np.inf if c < 0x80 else -np.inf for c in inf_codes]
    values[list(nan_codes)] = np.nan
    return values


# e4m3 ("fn": no infinities, S.1111.111 is NaN) and e5m2 (IEEE-like), as PTX's cvt reads them
_FP8 = {"fp8e4m3": _fp8_table(4, 7, (0x7F, 0xFF), ()),
        "fp8e5m2": _fp8_table(5, 15, (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF), (0x7C, 0xFC))}


def as_array(data: bytes, dtype: str) -> np.ndarray:
    """The stored elements (whole elements only)."""
    storage = np.dtype(STORAGE[dtype])
    usable = len(data) // storage.itemsize * storage.itemsize
    return np.frombuffer(data[:usable], dtype=storage)


def as_float(arr: np.ndarray, dtype: str) -> np.ndarray:
    """Float values of stored elements, as float64."""
    if dtype == "bf16":
        return (arr.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype in _FP8:
        return _FP8[dtype][arr]
    return arr.astype(np.float64)


def _spacing(expected: np.ndarray, dtype: str) -> np.ndarray:
    """One unit in the last place at each expected value, in float64."""
    mags = np.abs(expected)
    if dtype == "bf16":                       # 8 significant bits: an f32 ulp times 2^16
        return np.spacing(mags.astype(np.float32)).astype(np.float64) * 65536
    if dtype in _FP8:
        man_bits = 3 if dtype == "fp8e4m3" else 2
        _, exp = np.frexp(np.where(mags > 0, mags, 1.0))
        return np.ldexp(1.0, exp - 1 - man_bits)
    return np.spacing(mags.astype(STORAGE[dtype])).astype(np.float64)


def mismatch(check: dict, got: bytes, want: bytes) -> str | None:
    """None when `got` meets `want` under `check`, else a short description naming the count
    of differing elements and the first one."""
    dtype = check.get("dtype", "u8")
    want_dtype = check.get("want_dtype", dtype)
    w = as_array(want, want_dtype)
    g = as_array(got, dtype)[:len(w)]
    if len(g) < len(w):
        return f"{len(g)} elements, expected {len(w)}"
    kind = check.get("kind", "bits")
    if kind not in KINDS:
        raise ValueError(f"unknown comparison kind {kind!r}")
    if want_dtype != dtype and (kind == "bits" or dtype not in FLOATS):
        raise ValueError(f"expected values of type {want_dtype} need a float comparison of {dtype}")
    if kind == "bits" or dtype not in FLOATS:
        bad = g.view(np.uint8).reshape(len(g), -1) != w.view(np.uint8).reshape(len(w), -1)
        bad = bad.any(axis=1)
    else:
        a, e = as_float(g, dtype), as_float(w, want_dtype)
        both_nan = np.isnan(a) & np.isnan(e)
        with np.errstate(invalid="ignore", over="ignore"):
            if kind == "equal":
                ok = (a == e) | both_nan
            elif kind == "ulp":
                ok = (a == e) | (np.abs(a - e) <= check.get("ulp", 0) * _spacing(e, dtype)) | both_nan
            else:
                ok = np.isclose(a, e, rtol=check.get("rtol", 0.0), atol=check.get("atol", 0.0))
                if check.get("nan_equal", True):
                    ok |= both_nan
        bad = ~ok
    if not bad.any():
        return None
    k = int(np.flatnonzero(bad)[0])
    return f"{int(bad.sum())} of {len(bad)} differ; first at [{k}]: {g[k]!r} != {w[k]!r}"


def compare_outputs(outputs: list[dict], got: dict[str, bytes], want: dict[str, bytes | None],
                    how: str = "check") -> dict:
    """Compare each output buffer of a launch: {"verdict": "same" | "pass" | "fail" | "none",
    "detail": {buffer: message}}. `how="check"` holds `got` to `want` under each output's
    check ("pass"/"fail"); `how="bits"` asks for identical bytes first and, where they differ,
    says whether the check still holds ("same", "pass" = within the check's tolerance,
    "fail"). Outputs without a `want` are left out ("none" when none has one)."""
    verdict, detail, compared = "same" if how == "bits" else "pass", {}, 0
    for out in outputs:
        name = out["buffer"]
        expected = want.get(name)
        if expected is None or name not in got:
            continue
        compared += 1
        check = out["check"]
        if how == "bits":
            if got[name][:len(expected)] == expected:
                continue
            # two runs' outputs: both in the buffer's own type, whatever the reference's
            check = {k: v for k, v in check.items() if k != "want_dtype"}
        why = mismatch(check, got[name], expected)
        if why is None:
            if how == "bits":
                verdict = "pass" if verdict == "same" else verdict
                detail[name] = "differs within the check's tolerance"
            continue
        verdict = "fail"
        detail[name] = why
    if not compared:
        return {"verdict": "none", "detail": {}}
    return {"verdict": verdict, "detail": detail}
