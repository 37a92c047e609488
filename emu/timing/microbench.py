"""Calibration microbenchmarks of the kinds the cited studies run, as PTX, and their
measurement in the timing model: each is timed at two sizes and the difference per unit of
work is reported (as the studies read `clock()` around the measured loop), so launch and
setup costs cancel.

    .venv/bin/python -m ptx2sass.emu.timing.microbench [--arch sm_89 ...]
"""
from __future__ import annotations

import argparse

import numpy as np

from ptx2sass import codegen

from ..memory import GLOBAL_BASE
from .model import estimate

_HEAD = ".version 8.0\n.target {arch}\n.address_size 64\n"


def _compile(ptx: str, arch: str, compiler: str = "ours") -> bytes:
    """Our compiler's cubin, or ("ptxas") the pinned ptxas's, for kernels whose measured
    loop our code generator still pads (see mma_fma_per_clock)."""
    if compiler == "ptxas":
        from ptx2sass import oracle
        run = oracle.ptxas(ptx, arch, name="microbench.ptx")
        if not run.ok:
            raise RuntimeError(run.stderr)
        return run.output
    return codegen.generate_module(codegen.lower_ptx(ptx, arch), arch)[0]


def ffma_chain(arch: str, n: int) -> str:
    """One thread, `n` dependent FFMAs."""
    body = "\n".join("    fma.rn.f32 %f1, %f1, %f2, %f3;" for _ in range(n))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 out, .param .f32 b)
{{
    .reg .f32 %f<4>; .reg .u64 %rd<2>;
    ld.param.u64 %rd1, [out]; ld.param.f32 %f2, [b];
    mov.f32 %f1, 0f3F800000; mov.f32 %f3, 0f3F000000;
{body}
    st.global.f32 [%rd1], %f1;
    ret;
}}
"""


def fma_throughput(arch: str, n: int, ctype: str = "f32", chains: int = 4) -> str:
    """Every thread runs `chains` independent FMA chains of `n` each (the operands are
    registers: an immediate may be rematerialised per use, which is not what is timed)."""
    r = "%f" if ctype == "f32" else "%d"
    lines = []
    for _ in range(n):
        for c in range(chains):
            lines.append(f"    fma.rn.{ctype} {r}{c + 2}, {r}{c + 2}, {r}0, {r}1;")
    # distinct starting values, so that no two chains are the same computation
    init = "\n".join(f"    cvt.rn.{ctype}.u32 {r}{c + 2}, {c + 1};" for c in range(chains))
    total = " ".join(f"add.{ctype} {r}2, {r}2, {r}{c + 2};" for c in range(1, chains))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 out, .param .{ctype} b)
{{
    .reg .{ctype} {r}<{chains + 2}>; .reg .u64 %rd<4>; .reg .u32 %r<2>;
    ld.param.u64 %rd1, [out]; ld.param.{ctype} {r}0, [b]; add.{ctype} {r}1, {r}0, {r}0;
{init}
{chr(10).join(lines)}
    {total}
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, {4 if ctype == 'f32' else 8}; add.u64 %rd3, %rd1, %rd2;
    st.global.{ctype} [%rd3], {r}2;
    ret;
}}
"""


def pointer_chase(arch: str, n: int, cache: str = "") -> str:
    """One thread follows `n` pointers (`ld.global{cache}.u64 p, [p]`)."""
    body = "\n".join(f"    ld.global{cache}.u64 %rd2, [%rd2];" for _ in range(n))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 ring, .param .u64 out)
{{
    .reg .u64 %rd<4>;
    ld.param.u64 %rd2, [ring]; ld.param.u64 %rd3, [out];
{body}
    st.global.u64 [%rd3], %rd2;
    ret;
}}
"""


def shared_stride(arch: str, n: int, stride_words: int) -> str:
    """Every thread reads shared word tid * stride `n` times into `n` registers, then sums
    them."""
    loads = "\n".join(f"    ld.volatile.shared.u32 %v{i}, [%r3];" for i in range(n))
    # every result is used, so each load has a register of its own (no write-after-write
    # waits between them)
    acc = " ".join(f"add.u32 %r4, %r4, %v{i};" for i in range(n))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 out)
{{
    .shared .align 4 .b8 sm[4096];
    .reg .u32 %r<6>; .reg .u32 %v<{n}>; .reg .u64 %rd<4>;
    mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 31; mul.lo.u32 %r2, %r2, {4 * stride_words};
    mov.u32 %r3, sm; add.u32 %r3, %r3, %r2;
    st.shared.u32 [%r3], %r1;
    bar.sync 0;
    mov.u32 %r4, 0;
{loads}
    {acc}
    ld.param.u64 %rd1, [out]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}}
"""


def shared_chase(arch: str, n: int, stride_words: int) -> str:
    """One warp: lane i keeps reading shared word i * stride, whose content is its own
    address (`ld.shared.u32 a, [a]`, `n` dependent loads)."""
    body = "\n".join("    ld.volatile.shared.u32 %r3, [%r3];" for _ in range(n))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 out)
{{
    .shared .align 4 .b8 sm[4096];
    .reg .u32 %r<6>; .reg .u64 %rd<4>;
    mov.u32 %r1, %tid.x; mul.lo.u32 %r2, %r1, {4 * stride_words};
    mov.u32 %r3, sm; add.u32 %r3, %r3, %r2;
    st.shared.u32 [%r3], %r3;
    bar.sync 0;
{body}
    ld.param.u64 %rd1, [out]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}}
"""


def shared_latency(arch: str, stride_words: int) -> float:
    """Cycles per dependent shared load of one warp at a lane stride (bank conflicts)."""
    return _diff(arch, lambda a, n: shared_chase(a, n, stride_words), (16, 48),
                 lambda c: estimate(c, "k", 1, 32, [np.zeros(32, np.uint32)]))


def _ring(elements: int, stride: int) -> np.ndarray:
    """A ring of pointers `stride` bytes apart at the first buffer's device address."""
    words = stride // 8
    ring = np.zeros(elements * words, np.uint64)
    for i in range(elements):
        ring[i * words] = GLOBAL_BASE + ((i + 1) % elements) * stride
    return ring


def _diff(arch, make, sizes, run) -> float:
    cycles = [run(_compile(make(arch, n), arch)).cycles for n in sizes]
    return (cycles[1] - cycles[0]) / (sizes[1] - sizes[0])


def _per_clock(arch, make, sizes, run, pipe) -> float:
    """Results of `pipe` per clock per SM between the two sizes (counted in the trace)."""
    ests = [run(_compile(make(arch, n), arch)) for n in sizes]
    results = ests[1].pipe_results.get(pipe, 0) - ests[0].pipe_results.get(pipe, 0)
    return results / (ests[1].cycles - ests[0].cycles)


def ffma_latency(arch: str) -> float:
    """Cycles per dependent FFMA."""
    return _diff(arch, ffma_chain, (32, 96),
                 lambda c: estimate(c, "k", 1, 32, [np.zeros(1, np.float32), np.float32(0.5)]))


def fma_per_clock(arch: str, ctype: str = "f32", threads: int = 256) -> float:
    """FMA results per clock per SM (one CTA of `threads` on one SM)."""
    dt = np.float32 if ctype == "f32" else np.float64
    sizes = (8, 24) if ctype == "f32" else (4, 12)      # the f64 emulation is the slow part
    return _per_clock(arch, lambda a, n: fma_throughput(a, n, ctype), sizes,
                      lambda c: estimate(c, "k", 1, threads, [np.zeros(threads, dt), dt(0.5)]),
                      "fma" if ctype == "f32" else "fp64")


def mufu_per_clock(arch: str, threads: int = 256) -> float:
    """MUFU results per clock per SM: 8 independent `sin.approx.ftz.f32` chains a thread (bounded values)."""
    def kernel(a, n):
        src = fma_throughput(a, n, "f32", chains=8)
        for c in range(8):
            src = src.replace(f"fma.rn.f32 %f{c + 2}, %f{c + 2}, %f0, %f1;", f"sin.approx.ftz.f32 %f{c + 2}, %f{c + 2};")
        return src
    return _per_clock(arch, kernel, (8, 24),
                      lambda c: estimate(c, "k", 1, threads, [np.zeros(threads, np.float32), np.float32(0.5)]),
                      "xu")


def mma_throughput(arch: str, n: int, chains: int = 4) -> str:
    """Every warp runs `chains` independent accumulations of `n` mma.sync m16n8k16 (f16 in,
    f32 accumulate). The fragments are computed values: a copy of a parameter may be
    reloaded per use, which is not what is timed."""
    lines = []
    for _ in range(n):
        for c in range(chains):
            d = ", ".join(f"%d{c}_{i}" for i in range(4))
            lines.append(f"    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{{d}}}, "
                         f"{{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{{d}}};")
    regs = "\n".join(f"    .reg .f32 %d{c}_<4>;" for c in range(chains))
    init = "\n".join(f"    cvt.rn.f32.u32 %d{c}_{i}, {c * 4 + i};" for c in range(chains) for i in range(4))
    total = " ".join(f"add.f32 %s, %s, %d{c}_{i};" for c in range(chains) for i in range(4))
    return _HEAD.format(arch=arch) + f""".visible .entry k(.param .u64 out, .param .u32 h)
{{
    .reg .b32 %a<4>; .reg .b32 %b<2>; .reg .f32 %s; .reg .u64 %rd<4>; .reg .u32 %r<2>;
{regs}
    ld.param.u64 %rd1, [out]; ld.param.u32 %r0, [h]; mov.u32 %r1, %tid.x; and.b32 %r1, %r1, 1;
    xor.b32 %a0, %r0, %r1; xor.b32 %a1, %a0, 2; xor.b32 %a2, %a0, 4; xor.b32 %a3, %a0, 8;
    xor.b32 %b0, %a0, 16; xor.b32 %b1, %a0, 32;
{init}
{chr(10).join(lines)}
    mov.f32 %s, 0f00000000;
    {total}
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %s;
    ret;
}}
"""


def mma_fma_per_clock(arch: str, threads: int = 256, compiler: str = "ptxas") -> float:
    """Dense f16 tensor FMAs per clock per SM (m16n8k16: 2048 FMAs a warp instruction).
    ptxas's cubin by default: ours copies the fragments into fresh registers before every
    HMMA (8 moves each), which on sm_90 limits the loop below the tensor rate."""
    sizes = (4, 12)
    ests = [estimate(_compile(mma_throughput(arch, n), arch, compiler), "k", 1, threads,
                     [np.zeros(threads, np.float32), np.uint32(0x3C003C00)]) for n in sizes]
    mmas = (ests[1].pipe_results.get("tensor", 0) - ests[0].pipe_results.get("tensor", 0)) / 32
    return mmas * 2048 / (ests[1].cycles - ests[0].cycles)


def chain_per_clock(arch: str, warps: int) -> float:
    """FMA results per clock per SM when each of `warps` warps runs one dependent FFMA chain
    (the occupancy sweep: latency hidden only by other warps)."""
    threads = 32 * warps
    return _per_clock(arch, ffma_chain_per_thread, (32, 96),
                      lambda c: estimate(c, "k", 1, threads, [np.zeros(threads, np.float32), np.float32(0.5)]),
                      "fma")


def ffma_chain_per_thread(arch: str, n: int) -> str:
    """Every thread one chain of `n` dependent FFMAs, stored at out[tid]."""
    return ffma_chain(arch, n).replace(
        "    st.global.f32 [%rd1], %f1;",
        "    .reg .u32 %t; .reg .u64 %o<3>; mov.u32 %t, %tid.x; mul.wide.u32 %o1, %t, 4;\n"
        "    add.u64 %o2, %rd1, %o1; st.global.f32 [%o2], %f1;")


def chase_latency(arch: str, level: str) -> float:
    """Cycles per load of a pointer chase served by `level` ("l1", "l2", "dram")."""
    if level == "dram":      # every load a first touch of its own line: the cold chase
        ring, cache, sizes = _ring(200, 4096), "", (64, 192)
    else:                    # 32 lines, revisited: first lap cold, the rest hit
        ring, cache, sizes = _ring(32, 128), (".cg" if level == "l2" else ""), (64, 192)
    return _diff(arch, lambda a, n: pointer_chase(a, n, cache), sizes,
                 lambda c: estimate(c, "k", 1, 1, [ring.copy(), np.zeros(1, np.uint64)]))


def bank_conflict_slowdown(arch: str, stride_words: int) -> float:
    """Time per shared load at `stride_words` over the conflict-free stride 1."""
    def per(stride):
        return _diff(arch, lambda a, n: shared_stride(a, n, stride), (8, 24),
                     lambda c: estimate(c, "k", 1, 1024, [np.zeros(1024, np.uint32)]))
    return per(stride_words) / per(1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", action="append", default=None)
    args = ap.parse_args(argv)
    for arch in args.arch or ["sm_80", "sm_86", "sm_89", "sm_90"]:
        print(f"{arch}: FFMA latency {ffma_latency(arch):.2f}  FP32 FMA/clk/SM {fma_per_clock(arch):.1f}  "
              f"FP64 FMA/clk/SM {fma_per_clock(arch, 'f64'):.2f}  chase L1 {chase_latency(arch, 'l1'):.1f} "
              f"L2 {chase_latency(arch, 'l2'):.1f} DRAM {chase_latency(arch, 'dram'):.1f}  "
              f"bank stride 2/4/32: " + " ".join(f"{bank_conflict_slowdown(arch, s):.2f}" for s in (2, 4, 32)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
