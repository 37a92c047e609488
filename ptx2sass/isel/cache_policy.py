"""`createpolicy.fractional`: a 64-bit L2 cache-policy descriptor that ptxas computes at compile
time and materialises as a constant (seen with ptxas 13.5 for sm_8x: the low word is zero; the
high word holds a marker bit 28, the primary policy's code plus one for a secondary
`evict_first` in bits 24..27, and ceil(16 * fraction) - 1 in bits 20..23).

A mixin of `Selector` (isel/select.py).
"""
from __future__ import annotations

import math
import struct

from ptx2sass import ir
from ptx2sass.encoder.model import Imm

PRIMARY_CODE = {"L2::evict_unchanged": 0, "L2::evict_first": 2, "L2::evict_last": 4,
                "L2::evict_normal": 6}
SECONDARY_FIRST = 1         # added when the secondary policy is evict_first
MARKER = 1 << 28


def fractional_policy(primary: str, secondary: str | None, fraction: float) -> int:
    steps = max(0, math.ceil(16 * fraction) - 1)
    code = PRIMARY_CODE[primary] + (SECONDARY_FIRST if secondary == "L2::evict_first" else 0)
    return (MARKER | code << 24 | min(steps, 15) << 20) << 32


class CachePolicy:
    def sel_createpolicy(self, ins):
        policies = [m for m in ins.modifiers if m.startswith("L2::")]
        if "fractional" not in ins.modifiers or not policies or policies[0] not in PRIMARY_CODE \
                or len(ins.srcs) > 1 or (ins.srcs and not isinstance(ins.srcs[0], ir.Const)):
            raise self.unsupported(f"`createpolicy.{'.'.join(ins.modifiers)}`")
        fraction = 1.0
        if ins.srcs:
            bits = ins.srcs[0].value
            fraction = struct.unpack("<d", struct.pack("<Q", bits))[0] if bits >> 32 else \
                struct.unpack("<f", struct.pack("<I", bits))[0]
        if not 0.0 < fraction <= 1.0:
            raise self.unsupported(f"`createpolicy` fraction {fraction}")
        value = fractional_policy(policies[0], policies[1] if len(policies) > 1 else None, fraction)
        d = ins.dests[0]
        self.begin_wide(d)
        self.move(self.dst(d, 0), Imm(value & 0xFFFFFFFF))
        self.move(self.dst(d, 1), Imm(value >> 32))
