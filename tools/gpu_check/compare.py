"""How the GPU check compares one output buffer with another (standard library only, so it
runs with the GPU machine's bare `python3`, without NumPy or ptx2sass).

An output's `check` says how it is held to its reference, in one vocabulary for every corpus:
- "bits": the same bytes, element by element (ZLUDA's hardware-checked outputs; integers);
- "equal": the same values, NaN equal to NaN, -0 equal to +0 (Triton's/LLVM's exact checks);
- "ulp": floats within `ulp` units in the last place of the expected value (the CUDA corpus);
- "close": |got - want| <= atol + rtol * |want|, NaN equal to NaN when `nan_equal`
  (tinygrad's rtol per dtype with atol scaled by the largest reference; Triton's and LLVM's
  `tol * (1 + |want|)`).
Integer dtypes are always compared as "bits". `dtype` names how the bytes are stored and
read: u8..u64, s8..s64, f16, bf16, f32, f64, fp8e4m3, fp8e5m2 (fp8 and bf16 are decoded to
float for "equal"/"ulp"/"close"); `want_dtype` (default `dtype`) is how the expected bytes
are stored, e.g. "f64" for a float reference computed in double precision."""
from __future__ import annotations

import math
import struct

# dtype -> struct format of one little-endian element
STORAGE = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "s8": "b", "s16": "h", "s32": "i", "s64": "q",
           "f16": "e", "bf16": "H", "f32": "f", "f64": "d", "fp8e4m3": "B", "fp8e5m2": "B", "bool": "B"}
FLOATS = ("f16", "bf16", "f32", "f64", "fp8e4m3", "fp8e5m2")
KINDS = ("bits", "equal", "ulp", "close")
# explicit significand bits and the smallest normal exponent (for one ulp at or below it)
PRECISION = {"f16": (10, -14), "bf16": (7, -126), "f32": (23, -126), "f64": (52, -1022),
             "fp8e4m3": (3, None), "fp8e5m2": (2, None)}


def _fp8_table(exp_bits: int, bias: int, nan_codes: tuple, inf_codes: tuple) -> list:
    man_bits = 7 - exp_bits
    values = []
    for code in range(256):
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        mag = (m / (1 << man_bits) * 2.0 ** (1 - bias) if e == 0
               else (1 + m / (1 << man_bits)) * 2.0 ** (e - bias))
        values.append(-mag if code & 0x80 else mag)
    for c in inf_codes:
        values[c] = math.inf if c < 0x80 else -math.inf
    for c in nan_codes:
        values[c] = math.nan
    return values


# e4m3 ("fn": no infinities, S.1111.111 is NaN) and e5m2 (IEEE-like), as PTX's cvt reads them
_FP8 = {"fp8e4m3": _fp8_table(4, 7, (0x7F, 0xFF), ()),
        "fp8e5m2": _fp8_table(5, 15, (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF), (0x7C, 0xFC))}


def itemsize(dtype: str) -> int:
    return struct.calcsize("<" + STORAGE[dtype])


def as_array(data: bytes, dtype: str) -> list:
    """The stored elements (whole elements only), as Python ints or floats."""
    size = itemsize(dtype)
    n = len(data) // size
    return list(struct.unpack("<%d%s" % (n, STORAGE[dtype]), data[:n * size]))


def as_float(values: list, dtype: str) -> list:
    """Float values of stored elements."""
    if dtype == "bf16":
        return list(struct.unpack("<%df" % len(values), struct.pack("<%dI" % len(values), *[v << 16 for v in values])))
    if dtype in _FP8:
        return [_FP8[dtype][v] for v in values]
    return [float(v) for v in values]


def spacing(value: float, dtype: str) -> float:
    """One unit in the last place at `value` in `dtype` (NaN for NaN and infinities)."""
    if math.isnan(value) or math.isinf(value):
        return math.nan
    man_bits, min_exp = PRECISION[dtype]
    mag = abs(value)
    _, exp = math.frexp(mag if mag > 0 else 1.0)
    if min_exp is not None:
        if mag == 0:
            exp = min_exp + 1
        exp = max(exp, min_exp + 1)       # subnormals share the smallest normal's ulp
    return math.ldexp(1.0, exp - 1 - man_bits)


def _close(a: float, e: float, rtol: float, atol: float) -> bool:
    """NumPy's isclose: equal infinities are close, NaN is not."""
    if a == e:
        return True
    if math.isinf(a) or math.isinf(e):
        return False
    return abs(a - e) <= atol + rtol * abs(e)


def mismatch(check: dict, got: bytes, want: bytes) -> str | None:
    """None when `got` meets `want` under `check`, else a short description naming the count
    of differing elements and the first one."""
    dtype = check.get("dtype", "u8")
    want_dtype = check.get("want_dtype", dtype)
    kind = check.get("kind", "bits")
    if kind not in KINDS:
        raise ValueError(f"unknown comparison kind {kind!r}")
    if want_dtype != dtype and (kind == "bits" or dtype not in FLOATS):
        raise ValueError(f"expected values of type {want_dtype} need a float comparison of {dtype}")
    gsize, wsize = itemsize(dtype), itemsize(want_dtype)
    n = len(want) // wsize
    if len(got) // gsize < n:
        return f"{len(got) // gsize} elements, expected {n}"
    exact = want_dtype == dtype and (kind != "close" or check.get("nan_equal", True))
    if exact and got[:n * gsize] == want[:n * wsize]:
        return None                       # identical bytes meet every check (the common case)
    g, w = as_array(got[:n * gsize], dtype), as_array(want[:n * wsize], want_dtype)
    if kind == "bits" or dtype not in FLOATS:
        bad = [got[i * gsize:(i + 1) * gsize] != want[i * wsize:(i + 1) * wsize] for i in range(n)]
    else:
        a, e = as_float(g, dtype), as_float(w, want_dtype)
        rtol, atol, ulp = check.get("rtol", 0.0), check.get("atol", 0.0), check.get("ulp", 0)
        nan_equal = kind != "close" or check.get("nan_equal", True)
        bad = []
        for x, y in zip(a, e):
            if math.isnan(x) and math.isnan(y):
                ok = nan_equal
            elif kind == "equal":
                ok = x == y
            elif kind == "ulp":
                ok = x == y or abs(x - y) <= ulp * spacing(y, dtype)
            else:
                ok = _close(x, y, rtol, atol)
            bad.append(not ok)
    count = sum(bad)
    if not count:
        return None
    k = bad.index(True)
    return f"{count} of {len(bad)} differ; first at [{k}]: {g[k]!r} != {w[k]!r}"


def compare_outputs(outputs: list, got: dict, want: dict, how: str = "check") -> dict:
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
        check, got_bytes = out["check"], got[name]
        if check.get("bytes") is not None:      # only a prefix is defined (ZLUDA's compared part)
            limit = check["bytes"]
            check = {k: v for k, v in check.items() if k != "bytes"}
            got_bytes, expected = got_bytes[:limit], expected[:limit]
        if how == "bits":
            if got_bytes[:len(expected)] == expected:
                continue
            # two runs' outputs: both in the buffer's own type, whatever the reference's
            check = {k: v for k, v in check.items() if k != "want_dtype"}
        why = mismatch(check, got_bytes, expected)
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
