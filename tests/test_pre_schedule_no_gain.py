"""A pre-scheduled order that needs more registers than the source order is kept only where
the in-order estimate finds it faster (sched/pre_schedule.py `NO_GAIN_NO_PRESSURE`, branch
regs31).

A Horner polynomial in f64 with immediate coefficients (libdevice's erfinv, normcdfinv,
Bessel functions): each coefficient is a pair of moves with no sources, ready at the
block's start, so the latency order put all of them first, filling the DFMA chain's
stalls: rounding_math's rare_f64_functions went from 19 live registers in that block to 61
(64 registers; ptxas 34), and this kernel's 24 coefficients took 58 registers against
ptxas's 10, while the in-order estimate of that order was no better than the source
order's. Expected values are ptxas's: its register count and its cubin's outputs in the
emulator."""
from __future__ import annotations

import random
import struct

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run
from ptx2sass.encoder.cubin import read_cubin


def _horner_ptx(terms: int = 24) -> str:
    rng = random.Random(5)
    body = []
    for k in range(2, terms + 2):
        bits = struct.unpack("<Q", struct.pack("<d", rng.uniform(-1, 1) / (k * k)))[0]
        body.append(f"    fma.rn.f64 %fd{k}, %fd{k - 1}, %fd0, 0d{bits:016X};")
    return "\n".join([
        ".version 8.5", ".target sm_89", ".address_size 64", "",
        ".visible .entry horner(.param .u64 in, .param .u64 out)", "{",
        "    .reg .b32 %r<4>;", "    .reg .b64 %rd<8>;", "    .reg .f64 %fd<64>;",
        "    ld.param.u64 %rd1, [in];", "    ld.param.u64 %rd2, [out];",
        "    cvta.to.global.u64 %rd1, %rd1;", "    cvta.to.global.u64 %rd2, %rd2;",
        "    mov.u32 %r1, %tid.x;", "    mul.wide.u32 %rd3, %r1, 8;",
        "    add.s64 %rd4, %rd1, %rd3;", "    add.s64 %rd5, %rd2, %rd3;",
        "    ld.global.f64 %fd0, [%rd4];", "    mov.f64 %fd1, 0d3FF0000000000000;",
        *body,
        f"    st.global.f64 [%rd5], %fd{terms + 1};", "    ret;", "}", ""])


def test_horner_coefficients_wait_for_their_fma():
    ptx = _horner_ptx()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None, got.stderr
    theirs = got.output
    assert read_cubin(ours).kernels[0].regcount <= read_cubin(theirs).kernels[0].regcount + 4
    x = np.random.default_rng(7).uniform(-2, 2, 64)
    outs = []
    for cubin, check in ((theirs, False), (ours, True)):
        out = np.zeros(64)
        result = emu_run(cubin, "horner", (1, 1, 1), (64, 1, 1), [x.copy(), out], hazard_check=check)
        if check:
            assert result.hazards == []
        outs.append(out.tobytes())
    assert outs[0] == outs[1]
