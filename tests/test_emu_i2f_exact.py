"""I2F of every integer source (8 to 64 bits, signed and unsigned) to every float format (F16,
BF16, F32, F64) in every rounding mode, computed by the emulator's handler, against the exact
rounding of the integer as a fraction (`fp.round_rational_bits`, exact arithmetic). The handler
rounds through FP64 where every value is exact there (|v| <= 2^53), which must give the same
bits; the forms emulator/specialise.py has no closure for run this path on every execution."""
from __future__ import annotations

import random
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from ptx2sass.emu import fp, ops_float
from ptx2sass.encoder.sass_text import parse_instruction

U32, U64 = np.uint32, np.uint64
SOURCES = {"U8": (8, False), "S8": (8, True), "U16": (16, False), "S16": (16, True),
           "U32": (32, False), "S32": (32, True), "U64": (64, False), "S64": (64, True)}
FORMATS = {"F16": "f16", "BF16": "bf16", "F32": "f32", "F64": "f64"}


class _Warp:
    """The registers the handler reads (R4, R5) and what it writes (R2, R3)."""

    def __init__(self, words: list[int]):
        self.regs = {4: np.array([v & 0xFFFFFFFF for v in words], U32),
                     5: np.array([v >> 32 for v in words], U32)}

    def r(self, op):
        return self.regs[op.index]

    def r64(self, op):
        return self.regs[op.index].astype(U64) | (self.regs[op.index + 1].astype(U64) << U64(32))

    def w(self, d, v, mask):
        self.regs[d.index] = np.asarray(v, U32)

    def w64(self, d, v, mask):
        v = np.asarray(v, U64)
        self.regs[d.index], self.regs[d.index + 1] = (v & U64(0xFFFFFFFF)).astype(U32), (v >> U64(32)).astype(U32)


def _values(bits: int, rng: random.Random) -> list[int]:
    edges = [0, 1, 2, 3, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
    for k in (11, 12, 24, 25, 53, 54, 63):
        if k < bits:
            edges += [(1 << k) - 1, 1 << k, (1 << k) + 1, (1 << k) + 3]
    edges += [65504, 65519, 65520, 65535] if bits > 16 else []
    edges = [e & ((1 << bits) - 1) for e in edges]
    randoms = [rng.getrandbits(rng.randrange(1, bits + 1)) for _ in range(96)]
    out = edges + randoms
    return out + [0] * (-len(out) % 32)


@pytest.mark.parametrize("mode", ["RN", "RZ", "RM", "RP"])
@pytest.mark.parametrize("dst", list(FORMATS))
@pytest.mark.parametrize("src", list(SOURCES))
def test_i2f_rounds_the_integer_exactly(src, dst, mode):
    bits, signed = SOURCES[src]
    step = SimpleNamespace(ins=parse_instruction(f"I2F.{dst}.{src}.{mode} R2, R4"))
    values = _values(bits, random.Random(f"{src}{dst}{mode}"))
    for at in range(0, len(values), 32):
        words = values[at:at + 32]
        warp = _Warp(words)
        ops_float._i2f(warp, step, np.ones(32, bool))
        got = (warp.r64(step.ins.operands[0]) if dst == "F64" else warp.r(step.ins.operands[0])).tolist()
        ints = [v - (1 << bits) if signed and v >> (bits - 1) else v for v in words]
        want = [fp.round_rational_bits(Fraction(v), FORMATS[dst], mode) if v else 0 for v in ints]
        assert got == want, [(v, hex(g), hex(x)) for v, g, x in zip(ints, got, want) if g != x][:4]
