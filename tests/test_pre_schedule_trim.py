"""The trimmed latency order (sched/pre_schedule.py `TRIM_COST`, branch hoist32): where the
latency order needs more registers than the source order, the same order capped lower is
kept if its in-order estimate is at most TRIM_COST above.

A D2Q9 lattice-Boltzmann collision written for this test, in the shape of the real-world
physics_sim lbm_d2q9 (71 registers, ptxas 48): nine populations loaded, density and
velocity summed, a `div.rn.f32` (its slow path splits the block), then nine outputs, each an
equilibrium and a wrapped neighbour address, stored in order. After the division every
output's address and equilibrium are ready at once, and the latency order computed them
far ahead of their stores. Expected values are ptxas's: its register count and its cubin's
outputs in the emulator."""
from __future__ import annotations

import struct

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run
from ptx2sass.encoder.cubin import read_cubin

CX = (0, 1, 0, -1, 0, 1, -1, -1, 1)
CY = (0, 0, 1, 0, -1, 1, 1, -1, -1)
W = (4 / 9,) + (1 / 9,) * 4 + (1 / 36,) * 4


def _f32(x: float) -> str:
    return "0f%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def _collide_ptx() -> str:
    lines = [".version 8.5", ".target sm_89", ".address_size 64", "",
             ".visible .entry collide(.param .u64 src, .param .u64 dst, .param .f32 omega)", "{",
             "    .reg .f32 %f<400>;", "    .reg .b32 %r<400>;", "    .reg .b64 %rd<80>;",
             "    ld.param.u64 %rd1, [src];", "    ld.param.u64 %rd2, [dst];", "    ld.param.f32 %f0, [omega];",
             "    cvta.to.global.u64 %rd1, %rd1;", "    cvta.to.global.u64 %rd2, %rd2;",
             "    mov.u32 %r1, %tid.x;", "    and.b32 %r2, %r1, 15;", "    shr.u32 %r3, %r1, 4;",
             "    mul.wide.u32 %rd3, %r1, 4;", "    add.s64 %rd4, %rd1, %rd3;"]
    count = {"f": 1, "r": 10, "rd": 10}

    def new(kind: str) -> str:
        count[kind] += 1
        return f"%{kind}{count[kind]}"
    fs = []
    for i in range(9):
        v = new("f")
        lines.append(f"    ld.global.f32 {v}, [%rd4+{1024 * i}];")
        fs.append(v)
    rho, ux, uy = fs[0], new("f"), new("f")
    lines += [f"    mov.f32 {ux}, 0f00000000;", f"    mov.f32 {uy}, 0f00000000;"]
    for i in range(1, 9):
        a = new("f")
        lines.append(f"    add.f32 {a}, {rho}, {fs[i]};")
        rho = a
        if CX[i]:
            a = new("f")
            lines.append(f"    fma.rn.f32 {a}, {fs[i]}, {_f32(CX[i])}, {ux};")
            ux = a
        if CY[i]:
            a = new("f")
            lines.append(f"    fma.rn.f32 {a}, {fs[i]}, {_f32(CY[i])}, {uy};")
            uy = a
    a, b = new("f"), new("f")
    lines += [f"    div.rn.f32 {a}, {ux}, {rho};", f"    div.rn.f32 {b}, {uy}, {rho};"]
    ux, uy = a, b
    u2, t = new("f"), new("f")
    lines += [f"    mul.f32 {t}, {uy}, {uy};", f"    fma.rn.f32 {u2}, {ux}, {ux}, {t};"]
    for i in range(9):
        cu, t1, t2, t3, t4, feq, df, o = (new("f") for _ in range(8))
        lines += [f"    mul.f32 {t1}, {uy}, {_f32(CY[i])};", f"    fma.rn.f32 {cu}, {ux}, {_f32(CX[i])}, {t1};",
                  f"    mul.f32 {cu}, {cu}, 0f40400000;",
                  f"    mul.f32 {t2}, {cu}, 0f3F000000;", f"    add.f32 {t3}, {cu}, 0f3F800000;",
                  f"    fma.rn.f32 {t4}, {cu}, {t2}, {t3};", f"    fma.rn.f32 {t4}, {u2}, 0fBFC00000, {t4};",
                  f"    mul.f32 {feq}, {rho}, {_f32(W[i])};", f"    mul.f32 {feq}, {feq}, {t4};",
                  f"    sub.f32 {df}, {fs[i]}, {feq};", f"    mul.f32 {df}, {df}, %f0;", f"    sub.f32 {o}, {fs[i]}, {df};"]
        x, y, idx = new("r"), new("r"), new("r")
        lines += [f"    add.s32 {x}, %r2, {CX[i]};", f"    and.b32 {x}, {x}, 15;",
                  f"    add.s32 {y}, %r3, {CY[i]};", f"    and.b32 {y}, {y}, 15;",
                  f"    shl.b32 {y}, {y}, 4;", f"    add.s32 {idx}, {x}, {y};", f"    add.s32 {idx}, {idx}, {256 * i};"]
        w, p = new("rd"), new("rd")
        lines += [f"    mul.wide.s32 {w}, {idx}, 4;", f"    add.s64 {p}, %rd2, {w};", f"    st.global.f32 [{p}], {o};"]
    lines += ["    ret;", "}", ""]
    return "\n".join(lines)


def test_outputs_wait_for_their_stores():
    ptx = _collide_ptx()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})[0]
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None, got.stderr
    theirs = got.output
    mine, ptxas_regs = read_cubin(ours).kernels[0].regcount, read_cubin(theirs).kernels[0].regcount
    assert mine <= 1.05 * ptxas_regs, (mine, ptxas_regs)
    src = (np.random.default_rng(3).random(9 * 256, dtype=np.float32) + 0.1).astype(np.float32)
    outs, cycles = [], []
    for cubin in (theirs, ours):
        out = np.zeros(9 * 256, dtype=np.float32)
        result = emu_run(cubin, "collide", (1, 1, 1), (256, 1, 1), [src.copy(), out, np.float32(0.7)],
                         hazard_check=True)
        outs.append(out.tobytes())
        cycles.append(result.cycles)
    assert result.hazards == []
    assert outs[0] == outs[1]
    assert cycles[1] <= 1.10 * cycles[0], cycles
