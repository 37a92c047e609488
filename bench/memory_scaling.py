"""Peak memory and time of the `ptx2sass` process against `ptxas` on inputs built to be
large in one dimension (issue 21's bar: peak memory <= 2x ptxas's and time <= 5x ptxas's on
the 5k/10k-live-value and 1 MB-line inputs), both run in the same session.

    .venv/bin/python bench/memory_scaling.py [--inputs live:5000,live:10000,line:40000]
                                             [--repeat 1] [--keep DIR]

Inputs (generated; `--keep` writes them out):
- `live:N`: N loads, then a chain of adds summing them (N values live where a scheduler
  keeps the source order; ptxas interleaves).
- `livebar:N`: the same with `bar.sync 0` between the loads and the adds. Our scheduler
  does not move arithmetic across a barrier (ptxas does), so we hold N values.
- `held:N`: N loads, `bar.sync 0`, then N stores of the loaded values: no compiler can
  shorten the live ranges (a load may not sink below the barrier nor a store rise above
  it), so both hold or spill N values.
- `line:S`: S statements `add.u32 %r1, %r1, k;` on one line (~21 bytes each: 40,000 are
  0.84 MB) after `mov.u32 %r1, 0`: folds to one constant.
- `lineops:S`: S statements on one line that do not fold: `xor`/`mad.lo` of a loaded value.
- `diamonds:N`: N divergent branches in a row, each around one add (`@p bra L; add; L:`),
  the result stored: N blocks and N reconvergence regions for us (ptxas if-converts them).
- `loops:N`: N loops in a row, each left at a loaded bound, adding into one accumulator
  that lives through all of them (N phi webs to coalesce into it).
- `nestifs:N`: N lane-varying ifs nested in one another (tests/test_reconverge_deep.py's
  kernel); `nestloops:N`: N do-while loops nested in one another, each running 1 + (tid & 1)
  times (lane-varying: neither compiler can drop a level): more than 16 convergence
  barriers' worth of nesting, where regions borrow an enclosing region's barrier.

Each compiler runs as its own process; its peak RSS, CPU time (user + sys) and wall time
come from `os.wait4`. The ratios use CPU time (the shared machine's load stretches wall
time for both, unevenly); wall time is printed too. Best of `--repeat`.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"
MEMORY_BAR, TIME_BAR = 2.0, 5.0
BAR_INPUTS = ("live:5000", "live:10000", "line:40000")


def _kernel(regs: int, body: list[str]) -> str:
    return (HEADER + ".visible .entry k(.param .u64 p)\n{\n"
            f".reg .u32 %r<{regs}>;\n.reg .u64 %rd1;\nld.param.u64 %rd1, [p];\n"
            + "".join(line + "\n" for line in body) + "ret;\n}\n")


def live(n: int, barrier: bool = False) -> str:
    body = [f"ld.global.u32 %r{i}, [%rd1+{4 * i}];" for i in range(n)]
    body += ["bar.sync 0;"] if barrier else []
    body += [f"add.u32 %r0, %r0, %r{i};" for i in range(1, n)]
    return _kernel(n + 2, body + ["st.global.u32 [%rd1], %r0;"])


def held(n: int) -> str:
    body = [f"ld.global.u32 %r{i}, [%rd1+{4 * i}];" for i in range(n)]
    body += ["bar.sync 0;"]
    body += [f"st.global.u32 [%rd1+{4 * (n + i)}], %r{i};" for i in range(n)]
    return _kernel(n + 2, body)


def line(statements: int) -> str:
    one = " ".join(f"add.u32 %r1, %r1, {i % 7 + 1};" for i in range(statements))
    return _kernel(2, ["mov.u32 %r1, 0;", one, "st.global.u32 [%rd1], %r1;"])


def line_ops(statements: int) -> str:
    ops = []
    for i in range(statements):
        ops.append(f"xor.b32 %r1, %r1, %r2;" if i % 2 else f"mad.lo.u32 %r1, %r1, {2 * i + 3}, %r2;")
    return _kernel(3, ["ld.global.u32 %r1, [%rd1];", "ld.global.u32 %r2, [%rd1+4];", " ".join(ops),
                       "st.global.u32 [%rd1], %r1;"])


def diamonds(n: int) -> str:
    body = [f"setp.lt.u32 %p1, %r1, {k};\n@%p1 bra L{k};\nadd.u32 %r1, %r1, 1;\nL{k}:" for k in range(n)]
    return _kernel(2, [".reg .pred %p1;", "ld.global.u32 %r1, [%rd1];", *body, "st.global.u32 [%rd1], %r1;"])


def loops(n: int) -> str:
    """N loops in a row, each left when a loaded (lane-varying) bound is reached, adding
    into an accumulator that lives through them all."""
    body = [f"mov.u32 %r2, 0;\nT{k}:\nadd.u32 %r2, %r2, 1;\nadd.u32 %r1, %r1, %r2;\n"
            f"setp.lt.u32 %p1, %r2, %r1;\n@%p1 bra T{k};" for k in range(n)]
    return _kernel(3, [".reg .pred %p1;", "ld.global.u32 %r1, [%rd1];", *body, "st.global.u32 [%rd1], %r1;"])


def nested_ifs(n: int) -> str:
    from tests.test_reconverge_deep import nested_ifs as make
    return make(n)


def nested_loops(n: int) -> str:
    body = [".reg .pred %p<{0}>;\n.reg .u32 %c<{0}>;".format(n + 1),
            "ld.global.u32 %r1, [%rd1];", "mov.u32 %r0, %tid.x;", "and.b32 %r0, %r0, 1;",
            "add.u32 %r0, %r0, 1;"]
    body += [f"mov.u32 %c{k}, 0;\nH{k}:" for k in range(n)]
    body.append("mad.lo.u32 %r1, %r1, 5, 1;")
    body += [f"add.u32 %c{k}, %c{k}, 1;\nsetp.lt.u32 %p{k}, %c{k}, %r0;\n@%p{k} bra H{k};"
             for k in reversed(range(n))]
    return _kernel(2, body + ["st.global.u32 [%rd1], %r1;"])


KINDS = {"live": live, "livebar": lambda n: live(n, barrier=True), "held": held, "line": line,
         "lineops": line_ops, "diamonds": diamonds, "loops": loops,
         "nestifs": nested_ifs, "nestloops": nested_loops}


def measure(argv: list[str]) -> tuple[float, float, int, int]:
    """(CPU seconds, wall seconds, peak RSS in bytes, exit status) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.read()
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss * 1024, proc.returncode


def best(argv: list[str], repeat: int) -> tuple[float, float, int, int]:
    runs = [measure(argv) for _ in range(repeat)]
    return (min(r[0] for r in runs), min(r[1] for r in runs), min(r[2] for r in runs),
            max(r[3] for r in runs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", default="live:5000,live:10000,line:40000,livebar:2000,"
                                        "livebar:5000,held:5000,lineops:40000")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--keep", help="write the generated inputs into this folder")
    args = ap.parse_args(argv)
    from ptx2sass import oracle
    ptxas = str(oracle.tool_path("ptxas"))
    ours = str(Path(sys.executable).with_name("ptx2sass"))
    ok = True
    with tempfile.TemporaryDirectory(prefix="ptx2sass-memory-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{'input':16} {'MB':>5} | {'ptxas CPU s':>11} {'wall':>6} {'MB':>6} | "
              f"{'ptx2sass CPU s':>14} {'wall':>6} {'MB':>6} | {'time x':>6} {'mem x':>5}")
        for spec in args.inputs.split(","):
            kind, size = spec.split(":")
            text = KINDS[kind](int(size))
            src = folder / f"{kind}{size}.ptx"
            src.write_text(text)
            theirs = best([ptxas, "-arch=sm_89", str(src), "-o", str(Path(tmp) / "p.cubin")],
                          args.repeat)
            mine = best([ours, "-arch=sm_89", str(src), "-o", str(Path(tmp) / "o.cubin")],
                        args.repeat)
            t_ratio, m_ratio = mine[0] / max(theirs[0], 1e-3), mine[2] / theirs[2]
            failed = "" if mine[3] == 0 and theirs[3] == 0 else f" exit {theirs[3]}/{mine[3]}"
            in_bar = spec in BAR_INPUTS
            verdict = ""
            if in_bar:
                met = t_ratio <= TIME_BAR and m_ratio <= MEMORY_BAR and not failed
                ok &= met
                verdict = " bar met" if met else " bar NOT met"
            print(f"{spec:16} {len(text) / 1e6:5.2f} | {theirs[0]:11.2f} {theirs[1]:6.1f} "
                  f"{theirs[2] / 1e6:6.0f} | {mine[0]:14.2f} {mine[1]:6.1f} {mine[2] / 1e6:6.0f} | "
                  f"{t_ratio:6.2f} {m_ratio:5.2f}{failed}{verdict}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
