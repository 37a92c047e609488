"""MUFU results as measured on an NVIDIA H200 (sm_90), for the functions whose every result
was captured (`tools/gpu_mufu_capture.py`, tables built by `tools/mufu_tables.py` into
`emu/data/mufu_sm90.npz`).

RCP, RSQ and SQRT of a normal FP32 input give the correctly rounded result moved by -2..+1
units in the last place, and how far depends only on the input's 23 fraction bits (RSQ and
SQRT: and the exponent's parity): every fraction was measured at one exponent (two for
RSQ/SQRT) and every 8th at four more, all alike. EX2 takes its input as sign and
magnitude, cuts the magnitude to 23 fraction bits, and gives 2^f of the fraction f from one
table per sign (the correctly rounded value moved by -2..+1 units), the whole part added to
the exponent: x in [1, 2) and (-2, -1] measured whole predict every other EX2 sweep. The
half-precision EX2 and TANH (F16 and BF16) are tables of all 65536 inputs. The other
functions (FP32 SIN, COS, TANH) stay the correctly rounded value: their measured errors
are not yet a model. LG2 is e + L(fraction) rounded toward zero, with L known to about
2^-26 from the measured [1, 2) and [0.5, 1) sweeps (it lies between what they round toward
zero from above and from below 1; the middle of that interval predicts every other exponent).

Used for every arch: only sm_90 was measured; earlier and later MUFUs may differ.
"""
from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np

TABLE_FILE = Path(__file__).resolve().parent / "data" / "mufu_sm90.npz"
CORRECTED = ("RCP", "RSQ", "SQRT")
PACKED = ("rcp", "rsq", "sqrt", "ex2_pos", "ex2_neg")
HALF_TABLES = {("EX2", "f16"): "ex2_f16", ("TANH", "f16"): "tanh_f16",
               ("EX2", "bf16"): "ex2_bf16", ("TANH", "bf16"): "tanh_bf16"}


_loaded: dict[str, np.ndarray] = {}


def _table(key: str) -> np.ndarray:
    """One table of the file, read on first use (a process that runs no MUFU reads none)."""
    table = _loaded.get(key)
    if table is None:
        with np.load(TABLE_FILE) as data:
            raw = data[key]
        table = _loaded[key] = unpack2(raw) if key in PACKED else raw
    return table


def unpack2(packed: np.ndarray) -> np.ndarray:
    """A packed difference table's values: two bits each, four to a byte, stored +2."""
    return np.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], axis=1).reshape(-1).astype(np.int8) - 2


def use_tables(tables: dict[str, np.ndarray]) -> None:
    """Model with these (unpacked) tables instead of the file's (tools/mufu_tables.py checks
    a capture with them before writing the file)."""
    _loaded.clear()
    _lg2_measured.clear()
    _loaded.update(tables)


def _index(fn: str, x_bits):
    fraction = x_bits & 0x7FFFFF
    if fn == "RCP":
        return fraction
    return ((x_bits >> 23) & 1) << 23 | fraction


def correct_f32(fn: str, x_bits: np.ndarray, r_bits: np.ndarray) -> np.ndarray:
    """The H200's MUFU.`fn` bits, given its (flushed) FP32 input bits and the correctly
    rounded result's bits: moved by the measured difference where input and result are
    normal numbers; NaNs, infinities, zeros and flushed results as they are."""
    if fn not in CORRECTED:
        return r_bits
    x_bits = np.asarray(x_bits, dtype=np.uint32)
    r_bits = np.asarray(r_bits, dtype=np.uint32)
    xe, re = (x_bits >> 23) & 0xFF, (r_bits >> 23) & 0xFF
    normal = (xe != 0) & (xe != 0xFF) & (re != 0) & (re != 0xFF)
    delta = _table(fn.lower())[_index(fn, x_bits)].astype(np.int64)
    moved = (r_bits.astype(np.int64) + delta).astype(np.uint32)
    return np.where(normal, moved, r_bits).astype(np.uint32)


def correct_f32_one(fn: str, x_bits: int, r_bits: int) -> int:
    """`correct_f32` of one value (the scalar interpreters' form)."""
    if fn not in CORRECTED:
        return r_bits
    xe, re = (x_bits >> 23) & 0xFF, (r_bits >> 23) & 0xFF
    if xe in (0, 0xFF) or re in (0, 0xFF):
        return r_bits
    return (r_bits + int(_table(fn.lower())[_index(fn, x_bits)])) & 0xFFFFFFFF


_EX2_FRACTION = 1 << 23


def ex2_f32(x_bits: np.ndarray) -> np.ndarray:
    """MUFU.EX2's result bits for (flushed) FP32 input bits, as the H200 computes them: the
    magnitude cut to 23 fraction bits (whole part i, fraction f), 2^f from the sign's table
    (its value at 1 + f/2^23 for +, -(1 + f/2^23) for -), the exponent moved by i - 1 (+)
    or 1 - i (-); a result past the range an infinity or a (flushed) zero, +-inf give inf
    and 0, a NaN the canonical one."""
    x_bits = np.asarray(x_bits, dtype=np.uint32)
    negative = (x_bits >> 31).astype(bool)
    magnitude = (x_bits & 0x7FFFFFFF).view(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        fixed = np.floor(np.minimum(magnitude, 512.0) * _EX2_FRACTION).astype(np.int64)
    whole, fraction = fixed >> 23, fixed & (_EX2_FRACTION - 1)
    unit = (1.0 + fraction / _EX2_FRACTION)
    with np.errstate(all="ignore"):
        base = np.where(negative, np.exp2(-unit), np.exp2(unit)).astype(np.float32).view(np.uint32).astype(np.int64)
    base = base + np.where(negative, _table("ex2_neg")[fraction], _table("ex2_pos")[fraction])
    exponent = ((base >> 23) & 0xFF) + np.where(negative, 1 - whole, whole - 1)
    out = np.where(exponent >= 0xFF, 0x7F800000, np.where(exponent <= 0, 0, (exponent << 23) | (base & 0x7FFFFF)))
    out = np.where(np.isnan(magnitude), 0x7FFFFFFF, out)
    return out.astype(np.uint32)


def ex2_f32_one(x_bits: int) -> int:
    """`ex2_f32` of one input (the scalar interpreters' form)."""
    magnitude = x_bits & 0x7FFFFFFF
    if magnitude > 0x7F800000:
        return 0x7FFFFFFF
    negative = x_bits >> 31
    value = struct.unpack("<f", struct.pack("<I", magnitude))[0]
    fixed = math.floor(min(value, 512.0) * _EX2_FRACTION)
    whole, fraction = fixed >> 23, fixed & (_EX2_FRACTION - 1)
    unit = 1.0 + fraction / _EX2_FRACTION
    table = _table("ex2_neg" if negative else "ex2_pos")
    base = struct.unpack("<I", struct.pack("<f", 2.0 ** (-unit if negative else unit)))[0] + int(table[fraction])
    exponent = ((base >> 23) & 0xFF) + (1 - whole if negative else whole - 1)
    if exponent >= 0xFF:
        return 0x7F800000
    return 0 if exponent <= 0 else (exponent << 23) | (base & 0x7FFFFF)


_lg2_measured: list[np.ndarray] = []


def _lg2_sweeps() -> tuple[np.ndarray, np.ndarray]:
    """The measured LG2 bits of 1 + f/2^23 and of (1 + f/2^23)/2 for every fraction f."""
    if not _lg2_measured:
        _lg2_measured.extend(np.cumsum(_table(key), dtype=np.uint64).astype(np.uint32)
                             for key in ("lg2_e127", "lg2_e126"))
    return _lg2_measured[0], _lg2_measured[1]


def _lg2_l(above_bits: np.ndarray, below_bits: np.ndarray) -> np.ndarray:
    """L(f) from f's two measured results: the middle of the values that the [1, 2) result
    (L rounded toward zero) and the [0.5, 1) one (L - 1 rounded toward zero) allow. They
    disagree only at f = 0 (log2 1 is 0, log2 0.5 two units above -1): there the [0.5, 1)
    result's bound, which fits every other exponent's result."""
    above, below = above_bits.view(np.float32), below_bits.view(np.float32)
    a, b = above.astype(np.float64), below.astype(np.float64) + 1.0
    below_ulp = np.abs(np.spacing(below).astype(np.float64))
    lo = np.maximum(a, b - below_ulp)
    hi = np.minimum(a + np.spacing(above).astype(np.float64), b)
    return np.where(lo <= hi, (lo + hi) / 2, b - below_ulp / 2)


def _toward_zero_f32(values: np.ndarray) -> np.ndarray:
    """FP64 values as FP32 bits rounded toward zero."""
    with np.errstate(over="ignore"):
        nearest = values.astype(np.float32)
    bits = nearest.view(np.uint32)
    past = np.abs(nearest.astype(np.float64)) > np.abs(values)
    return np.where(past, bits - np.uint32(1), bits).astype(np.uint32)


def lg2_f32(x_bits: np.ndarray) -> np.ndarray:
    """MUFU.LG2's result bits for (flushed) FP32 input bits, as the H200 computes them:
    (exponent - 127) + L(fraction) rounded toward zero (for x in [1, 2) and [0.5, 1) the
    measured results); log2 of 0 is -inf, of +inf +inf, of a negative number or a NaN the
    canonical NaN."""
    x_bits = np.asarray(x_bits, dtype=np.uint32)
    exponent = ((x_bits >> 23) & 0xFF).astype(np.int64)
    fraction = x_bits & 0x7FFFFF
    above, below = (sweep[fraction] for sweep in _lg2_sweeps())
    value = _toward_zero_f32((exponent - 127) + _lg2_l(above, below))
    # x in [1, 2) and [0.5, 1): the measured results themselves
    value = np.where(exponent == 127, above, np.where(exponent == 126, below, value))
    out = np.where(exponent == 0, 0xFF800000, value)
    out = np.where(exponent == 0xFF, np.where(fraction == 0, 0x7F800000, 0x7FFFFFFF), out)
    negative = (x_bits >> 31).astype(bool) & (exponent != 0)
    return np.where(negative, 0x7FFFFFFF, out).astype(np.uint32)


def lg2_f32_one(x_bits: int) -> int:
    return int(lg2_f32(np.array([x_bits], dtype=np.uint32))[0])


def half_table(fn: str, kind: str) -> np.ndarray | None:
    """The measured output bits of MUFU.`fn`.F16/.BF16 for every input's bits, or None."""
    key = HALF_TABLES.get((fn, kind))
    return None if key is None else _table(key)


# the functions modelled whole (result bits of input bits), and their one-value forms
MODELS = {"EX2": ex2_f32, "LG2": lg2_f32}
MODELS_ONE = {"EX2": ex2_f32_one, "LG2": lg2_f32_one}
