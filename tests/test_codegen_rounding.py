"""Directed-rounding division, reciprocal and square root (isel/rounding.py): `div/rcp/sqrt
.rz/.rm/.rp` on f32 (with and without .ftz) and f64. Our cubin and ptxas's run in the
emulator on the same inputs and must agree bit for bit, and both must give the correctly
rounded result computed exactly with fractions.Fraction (tests/exact_rounding.py; any NaN
for a NaN), which catches a mistake shared by both.

Inputs: every pair of edge values of tests/test_codegen_ieee.py (zeros, subnormals,
infinities, NaNs, exponents at both ends of the range), random bits and values aimed at
the slow paths, and values whose result lies just below or above a power of two in the
subnormal and overflow ranges (where the hand rounding of a subnormal result changes
binade)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from codegen_harness import run_both
from exact_rounding import round_exact, round_sqrt
from test_codegen_ieee import LANES, body_of, edge_inputs, random_inputs

FMT = {32: (np.uint32, np.float32, 126), 64: (np.uint64, np.float64, 1022)}
FORMS = ([(f"{op}.{m}{z}.f32", n) for op, n in (("div", 2), ("rcp", 1), ("sqrt", 1))
          for m in ("rz", "rm", "rp") for z in ("", ".ftz")]
         + [(f"{op}.{m}.f64", n) for op, n in (("div", 2), ("rcp", 1), ("sqrt", 1)) for m in ("rz", "rm", "rp")])


def near_binades(bits: int, n_in: int, op: str, seed: int) -> np.ndarray:
    """LANES // 2 inputs whose exact result is 2^j * (1 + d) with |d| within a few ulps, j
    at the subnormal end (division, reciprocal), the overflow end (division) or anywhere
    (square root); the operands are rounded, so the results straddle 2^j."""
    rng = np.random.default_rng(seed)
    dtype, ftype, emin = FMT[bits]
    n = LANES // 2
    p = 24 if bits == 32 else 53
    d = rng.integers(-8, 9, size=n) * 2.0 ** -p * rng.choice([1.0, 0.5, 0.25], size=n)
    if op == "sqrt":
        j = rng.integers(-emin - p, emin, size=n)
        x = (np.exp2(j.astype(np.float64) / 2) * (1 + d / 2)) ** 2 if bits == 32 else None
        if bits == 64:
            j = rng.integers(-emin // 2 - 20, emin // 2, size=n)
            x = np.exp2(2.0 * j) * (1 + d)
        return x.astype(ftype).view(dtype)
    low = np.concatenate([np.arange(-emin - p - 1, -emin + 1), [-emin - 1, -emin, -emin + 1] * 8])
    high = np.arange(emin - 2, emin + 2)
    edge = np.arange(-emin - 2, -emin + 2)         # 1/x is at least 1/max ~ 2^(-emin - 2)
    j = rng.choice(edge if op == "rcp" else np.concatenate([low, high]), size=n).astype(np.float64)
    target = np.exp2(j) * (1 + d)
    if op == "rcp":
        return (1 / target).astype(ftype).view(dtype)
    b = (1 + rng.random(n)) * np.exp2(rng.integers(-3, 4, size=n)) * rng.choice([1.0, -1.0], size=n)
    b = b.astype(ftype).astype(np.float64)
    with np.errstate(over="ignore"):
        a = target * b       # rounded: the quotient is near, not at, target
    return np.stack([a.astype(ftype), b.astype(ftype)], axis=1).reshape(-1).view(dtype)


def flushed(v: float, bits: int, ftz: bool) -> float:
    return math.copysign(0.0, v) if ftz and v != 0 and abs(v) < 2.0 ** -FMT[bits][2] else v


def reference(op: str, mode: str, bits: int, ftz: bool, vals: list[float]) -> float:
    """The correctly rounded result (NaN for any NaN)."""
    vals = [flushed(v, bits, ftz) for v in vals]
    if op == "rcp":
        vals = [1.0] + vals
    if op == "sqrt":
        (x,) = vals
        if math.isnan(x) or x < 0:
            return math.nan
        if x == 0 or math.isinf(x):
            return x
        return round_sqrt(Fraction(x), bits, mode, ftz)
    a, b = vals
    sign = -1.0 if (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0) else 1.0
    if math.isnan(a) or math.isnan(b) or (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    if math.isinf(a) or b == 0:
        return sign * math.inf
    if math.isinf(b) or a == 0:
        return sign * 0.0
    return round_exact(Fraction(a) / Fraction(b), bits, mode, ftz)


def check(op_text: str, n_in: int, data: np.ndarray) -> None:
    bits = 64 if op_text.endswith("f64") else 32
    dtype, ftype, _ = FMT[bits]
    op, mode = op_text.split(".")[:2]
    ftz = ".ftz." in op_text
    ours, theirs, _ = run_both(body_of(op_text, n_in), bits, n_in, bits, data=data)
    lanes = [data[i * n_in:(i + 1) * n_in] for i in range(len(ours))]
    differ = [(tuple(hex(int(v)) for v in lanes[i]), hex(int(ours[i])), hex(int(theirs[i])))
              for i in np.nonzero(ours != theirs)[0][:5]]
    assert not differ, f"{int(np.sum(ours != theirs))} lanes differ from ptxas (inputs, ours, ptxas): {differ}"
    wrong = []
    for i, lane in enumerate(lanes):
        want = reference(op, mode.upper(), bits, ftz, lane.view(ftype).tolist())
        got = theirs[i:i + 1].view(ftype)[0]
        if math.isnan(want) and np.isnan(got):
            continue
        if int(np.array([want], dtype=ftype).view(dtype)[0]) != int(theirs[i]):
            wrong.append((tuple(hex(int(v)) for v in lane), hex(int(theirs[i])),
                          hex(int(np.array([want], dtype=ftype).view(dtype)[0]))))
    assert not wrong, f"{len(wrong)} lanes not correctly rounded (inputs, result, exact): {wrong[:5]}"


@pytest.mark.parametrize("op,n_in", FORMS)
def test_edge_values(op, n_in):
    bits = 64 if op.endswith("f64") else 32
    check(op, n_in, edge_inputs(bits, n_in))


@pytest.mark.parametrize("op,n_in", FORMS)
def test_random_values_and_binade_edges(op, n_in):
    bits = 64 if op.endswith("f64") else 32
    name = op.split(".")[0]
    data = np.concatenate([random_inputs(bits, n_in, seed=len(op))[:LANES // 2 * n_in],
                           near_binades(bits, n_in, name, seed=len(op))])
    check(op, n_in, data)


@pytest.mark.parametrize("op", ["div.rm.f32", "rcp.rz.f64"])
def test_guarded_and_immediate_operands(op):
    """Under a guard (lanes 0..7 keep the first operand) and with an immediate operand."""
    bits = 64 if op.endswith("f64") else 32
    n_in = 2 if op.startswith("div") else 1
    one = "0f3F800000" if bits == 32 else "0d3FF0000000000000"
    args = "%a0, %a1" if n_in == 2 else "%a0"
    imm_args = f"{one}, %a1" if n_in == 2 else one
    body = (f"setp.gt.u32 %p0, %t, 7;\nmov.b{bits} %o, %a0;\n@%p0 {op} %o, {args};\n"
            f"@!%p0 {op} %o, {imm_args};")
    data = edge_inputs(bits, n_in)[:256 * n_in]
    ours, theirs, _ = run_both(body, bits, n_in, bits, data=data)
    assert (ours == theirs).all(), np.nonzero(ours != theirs)[0][:5]


def test_nvdisasm_reads_back_every_form():
    """One kernel with all 27 forms: nvdisasm reads our cubin back as exactly our
    instructions and control codes (the directed DFMA/DMUL, 64-bit shifts, F2F...)."""
    from ptx2sass import codegen, oracle
    from tools.emu_testing import _parseable
    from ptx2sass.encoder.sass_text import parse_listing
    from codegen_harness import kernel
    from test_codegen_zluda import _normalised
    lines = []
    for op, n_in in FORMS:
        wide = op.endswith("f64")
        args = ", ".join(("%d0", "%d1")[:n_in]) if wide else ", ".join(("%x0", "%x1")[:n_in])
        dest = "%d2" if wide else "%x2"
        lines.append(f"{op} {dest}, {args};")
        lines.append(f"add.{'f64' if wide else 'f32'} {'%d0' if wide else '%x0'}, {'%d0' if wide else '%x0'}, {dest};")
    body = ("mov.b64 %d0, %a0;\nmov.b64 %d1, %a1;\nmov.b64 {%x0, %x1}, %a0;\n" + "\n".join(lines)
            + "\nmov.b64 %d2, {%x0, %x1};\nadd.f64 %o, %d0, %d2;")
    ptx = kernel(body, 64, 2, 64).replace(".reg .b64 %o;", ".reg .b64 %o;\n.reg .f64 %d<3>;")
    cubin, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    (code,) = codes
    (fn,) = [f for f in listing.functions if f.section == f".text.{code.name}"]
    assert [_normalised(e.instruction) for e in fn.entries] == [_normalised(i) for i in code.instructions]
    assert [e.instruction.control for e in fn.entries] == [i.control for i in code.instructions]
