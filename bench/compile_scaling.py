"""How compile time grows with kernel size (issue 14): synthetic kernels of about 1k, 4k and
16k PTX instructions, ptx2sass.compile in this process against nvJitLink in this process and
the pinned ptxas as a process, same run; the growth exponent fitted to each (time ~ size^k).
ptxas is about linear; the target for ptx2sass is k <= 1.15.

    .venv/bin/python bench/compile_scaling.py [--sizes 1000,4000,16000] [--repeat 2]
                                              [--kind straight,loop] [--stages]

Kernels:
- `straight`: one block of independent load / FMA / store groups with eight accumulators,
  register pressure bounded (a long basic block: list scheduling, interference, encoding).
- `loop`: a counted loop of 128 trips whose body is eight copies of one group sequence (a
  body unrolled 8 times in the PTX, as tinygrad writes them; too big for our unroller's
  400-instruction cap): liveness around a loop, loop-carried values, the loop passes.

CPU time, best of `--repeat`. `--stages` adds cProfile's cumulative time of the main
compile stages at each size, to show which one grows faster than the kernel.
"""
from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HEADER = """.version 8.0
.target sm_89
.address_size 64
"""


def straight_kernel(n: int) -> str:
    """About `n` PTX instructions in one block."""
    body, groups = [], max(1, (n - 12) // 6)
    for g in range(groups):
        acc = g % 8
        off = 4 * g
        body += [f"ld.global.f32 %f1, [%rd1+{off}];",
                 f"ld.global.f32 %f2, [%rd2+{off}];",
                 f"fma.rn.f32 %acc{acc}, %f1, %f2, %acc{acc};",
                 f"mul.f32 %f3, %f1, %acc{(acc + 3) % 8};",
                 f"add.f32 %f4, %f3, %f2;",
                 f"st.global.f32 [%rd3+{off}], %f4;"]
    return _kernel("straight", body, "")


def loop_kernel(n: int, trips: int = 128) -> str:
    """A counted loop whose body, eight copies of one group sequence (a body unrolled 8
    times, as tinygrad writes them), is about `n` instructions."""
    copies = []
    per_copy = max(1, (n // 8 - 6) // 5)
    for u in range(8):
        for g in range(per_copy):
            acc = (g + u) % 8
            off = 4 * (u * per_copy + g)
            copies += [f"ld.global.f32 %f1, [%rd4+{off}];",
                       f"ld.global.f32 %f2, [%rd5+{off}];",
                       f"fma.rn.f32 %acc{acc}, %f1, %f2, %acc{acc};",
                       f"mul.f32 %f3, %f1, %acc{(acc + 3) % 8};",
                       f"add.f32 %acc{(acc + 5) % 8}, %acc{(acc + 5) % 8}, %f3;"]
    stride = 4 * 8 * per_copy
    loop = ["mov.u32 %r2, 0;", "mov.u64 %rd4, %rd1;", "mov.u64 %rd5, %rd2;", "LOOP:", *copies,
            f"add.s64 %rd4, %rd4, {stride};", f"add.s64 %rd5, %rd5, {stride};",
            "add.s32 %r2, %r2, 1;", f"setp.lt.u32 %p1, %r2, {trips};", "@%p1 bra LOOP;"]
    tail = "".join(f"st.global.f32 [%rd3+{4 * i}], %acc{i};\n\t" for i in range(8))
    return _kernel("loop", loop, tail)


def _kernel(name: str, body: list[str], tail: str) -> str:
    lines = "\n\t".join(body)
    init = "".join(f"mov.f32 %acc{i}, 0f00000000;\n\t" for i in range(8))
    return f"""{HEADER}
.visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc)
{{
\t.reg .pred %p<2>;
\t.reg .b32 %r<4>;
\t.reg .f32 %f<5>;
\t.reg .f32 %acc<8>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [pa];
\tld.param.u64 %rd2, [pb];
\tld.param.u64 %rd3, [pc];
\t{init}{lines}
\t{tail}ret;
}}
"""


KINDS = {"straight": straight_kernel, "loop": loop_kernel}
STAGES = ("frontend/parser.py:.*\\(parse\\)", "to_ssa.py:.*\\(lower_module\\)",
          "opt/__init__.py:.*\\(optimise\\)", "isel/select.py:.*\\(select_function\\)",
          "pre_schedule.py:.*\\(pre_schedule\\)", "allocate.py:.*\\(allocate_with_spilling\\)",
          "list_schedule.py:.*\\(schedule\\)", "control.py:.*\\(set_control\\)",
          "codegen.py:.*\\(_encode\\)", "cubin_builder.py:.*\\(build_cubin\\)")


def cpu_best(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def ptxas_time(text: str, repeat: int) -> float:
    from ptx2sass import oracle
    ptxas = str(oracle.tool_path("ptxas"))
    with tempfile.TemporaryDirectory(prefix="ptx2sass-scaling-") as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(text)
        best = math.inf
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([ptxas, "-arch=sm_89", str(src), "-o", str(Path(tmp) / "k.cubin")],
                           check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            best = min(best, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return best


def exponent(sizes: list[int], times: list[float]) -> float:
    """Least-squares slope of log(time) against log(size)."""
    xs, ys = [math.log(s) for s in sizes], [math.log(max(t, 1e-9)) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def stage_times(text: str) -> dict[str, float]:
    import cProfile
    import pstats
    import re

    import gc

    import ptx2sass
    prof = cProfile.Profile()
    gc.collect()
    prof.enable()
    ptx2sass.compile(text, "sm_89")
    prof.disable()
    stats = pstats.Stats(prof).stats
    out = {}
    for pattern in STAGES:
        rx = re.compile(pattern)
        total = sum(v[3] for (f, line, fn), v in stats.items() if rx.search(f"{f}:{line}({fn})"))
        out[pattern.split(":")[0].split("/")[-1] + ":" + pattern.split("(")[-1].rstrip(")\\")] = total
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,4000,16000")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--kind", default="straight,loop")
    ap.add_argument("--stages", action="store_true")
    args = ap.parse_args(argv)
    import gc

    import ptx2sass
    from ptx2sass.encoder.cubin import read_cubin
    from tools import nvjitlink
    sizes = [int(s) for s in args.sizes.split(",")]
    ok = True
    for kind in args.kind.split(","):
        rows = []
        for n in sizes:
            text = KINDS[kind](n)
            ptx_instr = sum(1 for ln in text.splitlines() if ln.strip().endswith(";")
                            and not ln.strip().startswith("."))
            cubin = ptx2sass.compile(text, "sm_89")          # warm: tables, first-use caches
            sass = sum(len(k.text) // 16 for k in read_cubin(cubin).kernels)
            gc.collect()
            ours = cpu_best(lambda: ptx2sass.compile(text, "sm_89"), args.repeat)
            nv = cpu_best(lambda: nvjitlink.compile_ptx(text.encode()), args.repeat)
            px = ptxas_time(text, args.repeat)
            rows.append((n, ptx_instr, sass, ours, nv, px))
            stages = stage_times(text) if args.stages else None
            print(f"{kind:8} {ptx_instr:6d} PTX instr {sass:6d} SASS: ptx2sass {ours * 1e3:8.1f} ms, "
                  f"nvJitLink {nv * 1e3:7.1f} ms ({ours / nv:5.2f}x), ptxas {px * 1e3:7.1f} ms "
                  f"({ours / px:5.2f}x)", flush=True)
            if stages:
                print("         " + ", ".join(f"{k} {v * 1e3:.0f}" for k, v in stages.items()
                                           if v > 0.001), flush=True)
        xs = [r[1] for r in rows]
        k_ours, k_nv, k_px = (exponent(xs, [r[i] for r in rows]) for i in (3, 4, 5))
        print(f"{kind:8} growth exponent: ptx2sass {k_ours:.2f}, nvJitLink {k_nv:.2f}, "
              f"ptxas {k_px:.2f} (target ptx2sass <= 1.15)")
        ok &= k_ours <= 1.15
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
