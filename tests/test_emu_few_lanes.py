"""The emulator's cheaper paths for few lanes and for first executions (issue 19) against
exact arithmetic and the ISA's definitions: FFMA to nearest on up to 8 lanes (Python floats),
DFMA to nearest over arrays (Boldo-Melquiond) and on one lane, FADD to nearest without
round-to-odd, FSETP on one lane and its comparisons as single ufuncs, PRMT with a constant
selector. Kernels are launched several times: a step runs its handler on its first two
executions and its specialised (single-lane) form from the third on, so both are checked."""
from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from exact_rounding import round_exact
from ptx2sass.emu import fp
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.ops_float import fcompare
from ptx2sass.emu.program import KernelProgram
from ptx2sass.encoder.sass_text import parse_instruction

F64_SPECIAL = [0x7FF8000000000001, 0xFFF4000000000123, 0x7FF0000000000000, 0xFFF0000000000000,
               0, 1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 1, 0x7FEFFFFFFFFFFFFF,
               0x0010000000000000, 0x4330000000000001]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _fma_reference(a: float, b: float, c: float, mode: str, bits: int) -> float:
    """a*b + c rounded once (exact rationals); IEEE's zero signs; non-finite operands as
    IEEE arithmetic gives them."""
    if not all(math.isfinite(v) for v in (a, b, c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact != 0:
        return round_exact(exact, bits, mode)
    prod = math.copysign(0.0, a) * math.copysign(1.0, b) if a * b == 0 else 1.0
    if prod == 0 and c == 0 and math.copysign(1, prod) == math.copysign(1, c):
        return c
    return -0.0 if mode == "RM" else 0.0


def _random_f64(rng, n: int, lo: int, hi: int) -> np.ndarray:
    m = rng.integers(0, 2 ** 52, n, dtype=np.uint64)
    e = rng.integers(lo, hi, n).astype(np.uint64)
    s = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    return (s | (e << np.uint64(52)) | m).view(np.float64)


def test_dfma_over_arrays_is_rounded_once():
    """fp.fma64_rn (the vector DFMA to nearest) equals exact rounding on random operands of
    every magnitude (outside its fast path's range too), cancellations, ties and zeros."""
    rng = np.random.default_rng(19)
    cases = []
    a, b, c = (_random_f64(rng, 600, 1, 2047) for _ in range(3))         # anything, NaN/inf included
    cases.append((a, b, c))
    a, b = _random_f64(rng, 600, 1000, 1050), _random_f64(rng, 600, 1000, 1050)
    cases.append((a, b, -(a * b) * (1 + rng.integers(-3, 4, 600) * 2.0 ** -52)))   # cancellation
    a = 1.0 + rng.integers(0, 2 ** 26, 600) * 2.0 ** -26
    b = 1.0 + rng.integers(0, 2 ** 27, 600) * 2.0 ** -27
    cases.append((a, b, rng.choice([0.0, -0.0, 1.0, -1.0, 2.0 ** -53, -2.0 ** -54, 3.0], 600)))  # ties
    cases.append(tuple(_random_f64(rng, 600, 1023 - 490, 1023 + 490) for _ in range(3)))  # fast-path edges
    zeros = np.array([0.0, -0.0, 1.0, -1.0])
    cases.append((np.repeat(zeros, 16), np.tile(np.repeat(zeros, 4), 4), np.tile(zeros, 16)))
    # a*b = 2^-53 + 2^-131: 1 + a*b lies just above the midpoint of 1 and 1 + 2^-52; a sum
    # rounded to nearest, not to odd, on the way lands on the midpoint and rounds down
    a, b = 2.0 ** -53 * (1 + 2.0 ** -26), 1 - (2 ** 26 - 1) * 2.0 ** -52
    cases.append((np.array([a, -a, a, 2 * a]), np.array([b, b, -b, b]), np.array([1.0, -1.0, -1.0, 2.0])))
    checked = 0
    for a, b, c in cases:
        with np.errstate(all="ignore"):
            got = fp.fma64_rn(a, b, c)
        for x, y, z, r in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist()):
            want = _fma_reference(x, y, z, "RN", 64)
            if math.isnan(want):
                assert math.isnan(r)
            else:
                assert _bits64(r) == _bits64(want), (x.hex(), y.hex(), z.hex(), r.hex(), want.hex())
            checked += 1
    assert checked == 4 * 600 + 64 + 4


def test_ffma_on_few_lanes_is_rounded_once():
    """fp.ffma32_few (FFMA on up to 8 lanes) equals exact rounding to FP32, with broadcast
    one-element operands, subnormals, infinities and NaN (canonicalised)."""
    rng = np.random.default_rng(20)
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x7F7FFFFF, 1, 0x807FFFFF,
                        0x00800000, 0x3F800000, 0x33800000, 0x3F800001], np.uint32)
    for trial in range(300):
        n = int(rng.integers(1, 9))
        pick = [special[rng.integers(0, len(special), n)] if rng.random() < 0.3 else
                rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
        if trial % 3 == 0:                    # a*b + c near -(a*b): cancellation
            prod = pick[0].view(np.float32).astype(np.float64) * pick[1].view(np.float32)
            with np.errstate(all="ignore"):
                pick[2] = (-prod).astype(np.float32).view(np.uint32) + rng.integers(-2, 3, n).astype(np.uint32)
        if trial % 5 == 0:
            pick[0] = pick[0][:1]             # an immediate: one element for every lane
        if trial == 1:
            # a*b = 2^-24 + 4688 * 2^-70: 1 + a*b lies just above the midpoint of 1 and
            # 1 + 2^-23; rounded to nearest in FP64 first, it lands on it and rounds down
            x = np.array([2.0 ** -24 * (1 + 2896 * 2.0 ** -23), -2.0 ** -24 * (1 + 2896 * 2.0 ** -23)], np.float32)
            pick = [x.view(np.uint32), np.array([1 - 2895 * 2.0 ** -23] * 2, np.float32).view(np.uint32),
                    np.array([1.0, -1.0], np.float32).view(np.uint32)]
            n = 2
        a, b, c = (p.view(np.float32) for p in pick)
        got = fp.canonicalise_f32(fp.ffma32_few(a, b, c))
        assert got.shape == (n,)
        for i in range(n):
            x, y, z = float(a[i if len(a) > 1 else 0]), float(b[i]), float(c[i])
            want = _fma_reference(x, y, z, "RN", 32)
            want_bits = 0x7FFFFFFF if math.isnan(want) else int(np.array([want], np.float32).view(np.uint32)[0])
            assert int(got[i]) == want_bits, (x, y, z)


def test_fadd_to_nearest_is_rounded_once():
    rng = np.random.default_rng(21)
    a = rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32)
    b = (a.astype(np.int64) + (rng.integers(-30, 30, 4000) << 23) + rng.integers(-3, 4, 4000)).astype(np.uint32) \
        ^ (rng.integers(0, 2, 4000, dtype=np.uint32) << np.uint32(31))
    x, y = a.view(np.float32), b.view(np.float32)
    with np.errstate(all="ignore"):
        got = fp.canonicalise_f32(fp.fadd32(x, y, "RN", False))
    for i in range(4000):
        xi, yi = float(x[i]), float(y[i])
        if not (math.isfinite(xi) and math.isfinite(yi)):
            continue
        exact = Fraction(xi) + Fraction(yi)
        want = round_exact(exact, 32, "RN") if exact else (xi if xi == yi == 0 and
                                                           math.copysign(1, xi) == math.copysign(1, yi) else 0.0)
        with np.errstate(over="ignore"):
            want_bits = int(np.array([want], np.float32).view(np.uint32)[0])
        assert int(got[i]) == want_bits, (xi, yi)


IEEE = {  # each comparison by IEEE 754's definition, from "less", "equal", "unordered"
    "LT": lambda lt, eq, un: lt, "EQ": lambda lt, eq, un: eq, "LE": lambda lt, eq, un: lt or eq,
    "GT": lambda lt, eq, un: not (lt or eq or un), "NE": lambda lt, eq, un: not (eq or un),
    "GE": lambda lt, eq, un: not (lt or un), "NUM": lambda lt, eq, un: not un,
    "NAN": lambda lt, eq, un: un, "LTU": lambda lt, eq, un: lt or un, "EQU": lambda lt, eq, un: eq or un,
    "LEU": lambda lt, eq, un: lt or eq or un, "GTU": lambda lt, eq, un: not (lt or eq),
    "NEU": lambda lt, eq, un: not eq, "GEU": lambda lt, eq, un: not lt,
}
F32_VALUES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 3.4e38]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_fcompare_follows_ieee(dtype):
    a = np.repeat(np.array(F32_VALUES, dtype), len(F32_VALUES))
    b = np.tile(np.array(F32_VALUES, dtype), len(F32_VALUES))
    for cmp, rule in IEEE.items():
        got = fcompare((cmp, "AND"), a, b)
        want = [rule(x < y, x == y, x != x or y != y) for x, y in zip(a.tolist(), b.tolist())]
        assert got.tolist() == want, cmp


def _prmt_reference(a: int, b: int, sel: int) -> int:
    """PTX prmt's default mode: byte i of the result is byte (sel's nibble i & 7) of {b, a}
    (a the low word), or that byte's sign replicated when the nibble's bit 3 is set."""
    pool = (a | b << 32).to_bytes(8, "little")
    out = 0
    for i in range(4):
        nib = sel >> (4 * i) & 0xF
        byte = pool[nib & 7]
        if nib & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def _program(lines: list[str], params: int) -> KernelProgram:
    ins = [(16 * i, parse_instruction(text)) for i, text in enumerate(lines)]
    program = KernelProgram("k", "sm_89", ins, param_base=0x160, param_bytes=8 * params)
    program.params = [(k, 8 * k, 8) for k in range(params)]
    return program


def _launch(program, threads: int, out_bytes: int, values: list[int], data: bytes | None = None):
    launch = Launch(program, (1,), (threads,), hazard_check=False)
    out = launch.gmem.allocate("out", out_bytes)
    buffers = {"out": out}
    params = [Param(buffer="out")]
    if data is not None:
        buffers["in"] = launch.gmem.allocate("in", len(data), data)
        params.append(Param(buffer="in"))
    params += [Param(type="u64", value=v) for v in values]
    launch.set_params(params, buffers)
    launch.run()
    return out.data


def _pair_loads(first_param: int, regs: list[int]) -> list[str]:
    lines = []
    for k, r in enumerate(regs):
        at = 0x160 + 8 * (first_param + k)
        lines += [f"MOV R{r}, c[0x0][{hex(at)}]", f"MOV R{r + 1}, c[0x0][{hex(at + 4)}]"]
    return lines


STORE64 = ["MOV R10, c[0x0][0x160]", "MOV R11, c[0x0][0x164]", "STG.E.64 [R10.64], R8", "EXIT"]


@pytest.mark.parametrize("form", ["DFMA R8, R2, R4, R6", "DFMA R8, -R2, R4, -R6", "DFMA.RZ R8, R2, R4, R6",
                                  "DFMA.RM R8, |R2|, R4, R6"])
def test_dfma_on_one_lane(form):
    """A one-thread DFMA launched for each operand triple (handler for the first two, the
    single-lane form after): exact rounding, and a NaN result takes c's, else b's, else a's
    NaN (the register's bits, quieted) or is 0xfff8000000000000 (fp.propagate_nan_f64)."""
    program = _program(_pair_loads(1, [2, 4, 6]) + [form] + STORE64, 4)
    mode = next((m for m in ("RZ", "RM", "RP") if m in form), "RN")
    rng = np.random.default_rng(22)
    triples = [[F64_SPECIAL[i % 12], F64_SPECIAL[i // 12 % 12], F64_SPECIAL[(i * 7) % 12]] for i in range(40)]
    triples += [[int(v) for v in _random_f64(rng, 3, 900, 1150).view(np.uint64)] for _ in range(20)]
    ins = parse_instruction(form)
    for bits in triples:
        got = int(_launch(program, 1, 8, bits).view(np.uint64)[0])
        vals = []
        for v, op in zip(bits, ins.operands[1:]):
            x = _f64(v)
            x = abs(x) if op.abs else x
            vals.append(-x if op.neg else x)
        want = _fma_reference(*vals, mode, 64)
        if math.isnan(want):
            nans = [v for v in bits if (v >> 52) & 0x7FF == 0x7FF and v & ((1 << 52) - 1)]
            want_bits = (nans[-1] | 1 << 51) if nans else 0xFFF8000000000000
        else:
            want_bits = _bits64(want)
        assert got == want_bits, ([hex(v) for v in bits], hex(got), hex(want_bits))


@pytest.mark.parametrize("cmp", ["LT", "GEU", "NEU", "NE", "EQU", "NAN", "GT"])
def test_fsetp_on_one_lane(cmp):
    """FSETP.<cmp>.AND on one thread for every pair of special values (handler, then the
    single-lane form): IEEE 754's comparison."""
    lines = ["MOV R4, c[0x0][0x168]", "MOV R5, c[0x0][0x16c]", f"FSETP.{cmp}.AND P0, PT, R4, R5, PT",
             "SEL R8, 0x1, RZ, P0", "MOV R9, RZ"] + STORE64
    program = _program(lines, 2)
    for x in F32_VALUES:
        for y in F32_VALUES:
            packed = struct.unpack("<Q", struct.pack("<ff", x, y))[0]
            got = int(_launch(program, 1, 8, [packed]).view(np.uint32)[0])
            assert got == int(IEEE[cmp](x < y, x == y, x != x or y != y)), (cmp, x, y)


def test_ffma_and_prmt_on_three_lanes():
    """Three threads (a group of 3 lanes: FFMA on Python floats) load a, b, c and a PRMT
    selector operand pair; FFMA's result rounds once, PRMT's constant selectors give
    PTX's byte permutation. Launched four times on fresh data (handlers, then the
    specialised forms)."""
    sels = [0x3210, 0x7654, 0x0123, 0x5140, 0x2301]
    lines = ["S2R R0, SR_TID.X", "MOV R2, c[0x0][0x168]", "MOV R3, c[0x0][0x16c]",
             "IMAD.WIDE.U32 R2, R0, 0xc, R2", "LDG.E R4, [R2.64]", "LDG.E R5, [R2.64+0x4]",
             "LDG.E R6, [R2.64+0x8]", "FFMA R7, R4, R5, R6",
             "MOV R8, c[0x0][0x160]", "MOV R9, c[0x0][0x164]", "IMAD.WIDE.U32 R8, R0, 0x18, R8",
             "STG.E [R8.64], R7"]
    lines += [f"PRMT R{12 + k}, R4, {hex(s)}, R5" for k, s in enumerate(sels)]
    lines += [f"STG.E [R8.64+{hex(4 + 4 * k)}], R{12 + k}" for k in range(len(sels))] + ["EXIT"]
    program = _program(lines, 2)
    rng = np.random.default_rng(23)
    for _ in range(4):
        data = rng.integers(0, 2 ** 32, 9, dtype=np.uint64).astype(np.uint32)
        out = _launch(program, 3, 3 * 24, [], data.tobytes()).view(np.uint32).reshape(3, 6)
        for t in range(3):
            a, b, c = data[3 * t:3 * t + 3].view(np.float32).tolist()
            want = _fma_reference(a, b, c, "RN", 32)
            want_bits = 0x7FFFFFFF if math.isnan(want) else int(np.array([want], np.float32).view(np.uint32)[0])
            assert int(out[t, 0]) == want_bits
            for k, s in enumerate(sels):
                assert int(out[t, 1 + k]) == _prmt_reference(int(data[3 * t]), int(data[3 * t + 1]), s)
