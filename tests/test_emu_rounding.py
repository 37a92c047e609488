"""The emulator's FFMA/FADD/FMUL and DFMA/DADD/DMUL in each rounding mode (RN, RZ, RM, RP)
against exact rational arithmetic (fractions.Fraction, rounded by hand in tests/exact_rounding.py), on ptxas's
own `fma/add/mul.r{n,z,m,p}.f32/.f64` kernels. The directed-rounding division, reciprocal
and square root sequences (isel/ieee.py, tests/test_codegen_rounding.py) rest on these.

Inputs: special values, random bits, values of nearby magnitude (cancellation), and exact
cancellations x*y + (-(x*y)) and x + (-x), whose zero is -0 when rounding toward -inf."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from codegen_harness import SPECIAL, kernel
from exact_rounding import round_exact
from ptx2sass import oracle
from ptx2sass.emu.launch import run

LANES = 256
FMT = {32: (np.uint32, np.float32), 64: (np.uint64, np.float64)}


def reference(op: str, mode: str, bits: int, vals) -> float | None:
    """The correctly rounded result; None for NaN/infinite operands (not checked here)."""
    if not all(math.isfinite(v) for v in vals):
        return None
    x = [Fraction(v) for v in vals]
    exact = {"fma": lambda: x[0] * x[1] + x[2], "add": lambda: x[0] + x[1], "mul": lambda: x[0] * x[1]}[op]()
    if exact != 0:
        return round_exact(exact, bits, mode)
    if op == "mul":
        return math.copysign(0.0, vals[0]) * math.copysign(1.0, vals[1])
    terms = (math.copysign(0.0, vals[0] * vals[1]) if x[0] * x[1] == 0 else 1.0, vals[2]) if op == "fma" else vals
    zeros = [t for t in terms if t == 0]
    if len(zeros) == 2 and math.copysign(1, zeros[0]) == math.copysign(1, zeros[1]):
        return zeros[0]                        # +0 + +0, -0 + -0 keep their sign
    return -0.0 if mode == "RM" else 0.0       # exact cancellation


def inputs(bits: int, n_in: int) -> np.ndarray:
    rng = np.random.default_rng(bits + n_in)
    dtype, ftype = FMT[bits]
    data = rng.integers(0, np.iinfo(dtype).max, size=(LANES, n_in), dtype=dtype, endpoint=True)
    data[:64] = rng.choice(np.array(SPECIAL[bits], dtype=dtype), size=(64, n_in))
    near = rng.standard_normal((96, n_in)) * np.exp2(rng.integers(-4, 5, size=(96, n_in)))
    data[64:160] = near.astype(ftype).view(dtype)
    short = (rng.integers(-2 ** 10, 2 ** 10, size=(96, 2)) * np.exp2(rng.integers(-20, 20, size=(96, 2))))
    data[160:, :2] = short.astype(ftype).view(dtype)       # few significant bits: exact products
    if n_in == 3:
        data[160:208, 2] = (-(short[:48, 0] * short[:48, 1])).astype(ftype).view(dtype)
    else:
        data[160:208, 1] = (-short[:48, 0]).astype(ftype).view(dtype)
    data[208:216] = np.array([[0] * n_in, [1 << (bits - 1)] * n_in, [0, 1 << (bits - 1), 0][:n_in],
                              [1 << (bits - 1), 0, 1 << (bits - 1)][:n_in]] * 2, dtype=dtype)
    return data.reshape(-1)


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("op", ["fma", "add", "mul"])
def test_rounding_modes_match_exact_arithmetic(op, bits):
    n_in = 3 if op == "fma" else 2
    dtype, ftype = FMT[bits]
    data = inputs(bits, n_in)
    bad = []
    for mode in ("RN", "RZ", "RM", "RP"):
        body = f"{op}.{mode.lower()}.f{bits} %o, {', '.join(f'%a{k}' for k in range(n_in))};"
        cubin = oracle.ptxas(kernel(body, bits, n_in, bits)).output
        out = np.zeros(LANES, dtype=dtype)
        run(cubin, "k", (1, 1, 1), (LANES, 1, 1), [out, data.copy()], hazard_check=False)
        for i in range(LANES):
            vals = data[i * n_in:(i + 1) * n_in].view(ftype).tolist()
            want = reference(op, mode, bits, vals)
            if want is None:
                continue
            want_bits = int(np.array([want], dtype=ftype).view(dtype)[0])
            if want_bits != int(out[i]):
                bad.append((mode, [hex(int(v)) for v in data[i * n_in:(i + 1) * n_in]], hex(int(out[i])),
                            hex(want_bits)))
    assert not bad, f"{len(bad)} lanes differ (mode, inputs, emulator, exact): {bad[:5]}"


def _division_inputs(n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Normal dividends and divisors whose quotient is normal, the dividend's exponent small
    (1..40: the fast path's residual a - b*q is subnormal), mixed with random bits."""
    rng = np.random.default_rng(seed)
    ea = rng.integers(1, 41, n).astype(np.uint32)
    eb = np.clip(ea.astype(np.int64) - rng.integers(-60, 60, n), 1, 254).astype(np.uint32)
    a = (ea << 23) | rng.integers(0, 1 << 23, n).astype(np.uint32)
    b = (eb << 23) | rng.integers(0, 1 << 23, n).astype(np.uint32)
    a[::4] = rng.integers(0, 1 << 32, n // 4, dtype=np.uint64).astype(np.uint32)
    b[::4] = rng.integers(0, 1 << 32, n // 4, dtype=np.uint64).astype(np.uint32)
    return a, b


def test_ieee_division_of_small_dividends_is_correctly_rounded():
    """ptxas's div.rn.f32 (MUFU.RCP, FFMA refinement, FCHK choosing the slow path) in the
    emulator gives IEEE's quotient (NumPy's float32 division), also where the dividend is so
    small that the fast path's residual underflows: FCHK must send those to the slow path
    (it let 1 in ~1000 random quotients through 1 ulp off)."""
    body = "div.rn.f32 %o, %a0, %a1;"
    cubin = oracle.ptxas(kernel(body, 32, 2, 32)).output
    a, b = _division_inputs(1024)
    data = np.stack([a, b], axis=1).reshape(-1).copy()
    out = np.zeros(1024, dtype=np.uint32)
    run(cubin, "k", 1, 1024, [out, data])
    with np.errstate(all="ignore"):
        want = (a.view(np.float32) / b.view(np.float32)).view(np.uint32)
    nan = np.isnan(out.view(np.float32)) & np.isnan(want.view(np.float32))
    bad = np.nonzero((out != want) & ~nan)[0]
    assert not len(bad), [(hex(a[i]), hex(b[i]), hex(out[i]), hex(want[i])) for i in bad[:5]]
