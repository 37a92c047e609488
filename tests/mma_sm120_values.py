"""Element values, a two-cubin runner and the listing reader shared by the sm_120
block-scaled/fp4 mma tests (test_codegen_mma_sm120_fp4.py and test_codegen_mma_sparse_sm120.py)."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run


def element_value(code: int, kind: str) -> float:
    """One element byte's value (OCP FP8 / MX definitions; padding bits of fp4/fp6 zero)."""
    if kind == "e2m1":
        code >>= 2
    fields = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15), "e2m1": (2, 1, 1), "e2m3": (2, 3, 1),
              "e3m2": (3, 2, 3)}[kind]
    e_bits, m_bits, bias = fields
    sign = -1.0 if code >> (e_bits + m_bits) & 1 else 1.0
    e, m = code >> m_bits & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)


def element_codes(rng, kind: str, n: int) -> np.ndarray:
    """Random element bytes: no NaN codes; e5m2 exponents 10..20 (so every sum is exact in
    FP64 and one rounding to the accumulator type is the reference)."""
    if kind == "e2m1":
        return rng.integers(0, 16, n) << 2
    if kind in ("e2m3", "e3m2"):
        return rng.integers(0, 64, n)
    if kind == "e5m2":
        return rng.integers(10, 21, n) << 2 | rng.integers(0, 4, n) | rng.integers(0, 2, n) << 7
    codes = rng.integers(0, 256, n)
    return np.where(codes & 0x7F == 0x7F, 0x7E, codes)


def run_both(ptx, target, data, width):
    """The first `width` output words of each of 32 lanes: our cubin's (hazard-checked),
    then ptxas's, one warp over `data`."""
    outs = []
    for cubin, check in ((codegen.compile_ptx(ptx, target, "k.ptx"), True),
                         (oracle.ptxas(ptx, arch=target).output, False)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=check)
        assert not (check and res.hazards), res.hazards
        outs.append(out.reshape(32, 4)[:, :width])
    return outs


def mma_lines(cubin: bytes) -> list[str]:
    """The MMA line and any selector UMOV, register numbers and reuse flags left out."""
    text = oracle.nvdisasm(cubin, ("-c",))
    lines = [" ".join(line.split("*/", 1)[1].split(";")[0].split()) for line in text.splitlines()
             if "MMA" in line or re.search(r"UMOV UR\d+, 0x", line)]
    return [re.sub(r"\bU?R\d+", "R", line.replace(".reuse", "")) for line in lines]
