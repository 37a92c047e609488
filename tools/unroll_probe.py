"""ptxas's unrolling of counted loops, probed: tinygrad-shaped loops of varied trip counts
and body sizes, and for each the loads ptxas's listing (and ours) has in all and inside each
backward branch's range (copies of the body per exit test = loads inside / loads a trip).

    .venv/bin/python -m tools.unroll_probe [--ours] TRIPS,LOADS,FMAS ...

TRIPS trips of LOADS `ld.global.v4.f32` and LOADS*FMAS FMAs into 4 accumulators (PTX
instructions a trip: about 4 + 4*LOADS + LOADS*FMAS). `--ours` also compiles with ptx2sass.
Used by tests/test_unroll_long_bodies.py; the figures in docs/STATUS.md ("Branch unroll31")."""
from __future__ import annotations

import re
import sys

from ptx2sass import oracle

THREADS = 128


def probe(trips: int, loads: int, fmas: int) -> str:
    """tinygrad's loop shape: `trips` trips of `loads` ld.global.v4.f32 (1024 words apart)
    and loads * fmas FMAs into 4 accumulators; 128 threads, one block."""
    body = []
    for j in range(loads):
        body += [f"add.s32 %r4, %r3, {j * 1024};", f"cvt.s64.s32 %a{j}, %r4;",
                 f"mad.lo.s64 %a{j}, %a{j}, 4, %rd1;",
                 f"ld.global.v4.f32 {{%v{4 * j}, %v{4 * j + 1}, %v{4 * j + 2}, %v{4 * j + 3}}}, [%a{j}+0];"]
    k = 0
    for j in range(loads):
        for f in range(fmas):
            body.append(f"fma.rn.f32 %acc{k % 4}, %v{4 * j + f % 4}, %v{4 * ((j + 1) % loads) + (f + 1) % 4}, %acc{k % 4};")
            k += 1
    stores = "\n".join(f"st.global.f32 [%rd2+{4 * a}], %acc{a};" for a in range(4))
    zeros = "\n".join(f"mov.f32 %acc{a}, 0f00000000;" for a in range(4))
    return f""".version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 data0, .param .u64 data1)
.maxntid {THREADS}
{{
.reg .s32 %r<8>;
.reg .u64 %rd<4>;
.reg .f32 %acc<4>;
.reg .f32 %v<{4 * loads}>;
.reg .u64 %a<{loads}>;
.reg .pred %p<2>;
ld.param.u64 %rd0, [data0];
ld.param.u64 %rd1, [data1];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
{zeros}
mov.u32 %r0, -1;
bra END;
LOOP:
mad.lo.s32 %r3, %r0, 4, %r2;
{chr(10).join(body)}
END:
add.s32 %r0, %r0, 1;
setp.lt.s32 %p0, %r0, {trips};
@%p0 bra LOOP;
cvt.u64.u32 %rd2, %r2;
mad.lo.u64 %rd2, %rd2, 4, %rd0;
{stores}
ret;
}}
"""


def loops(cubin: bytes) -> tuple[int, list[int]]:
    """(LDG count, LDGs inside each backward branch's range) of a cubin's listing."""
    labels, cur, rows = {}, None, []
    for line in oracle.nvdisasm(cubin).splitlines():
        m = re.match(r"\s*\.L_x_(\d+):", line)
        if m:
            cur = m.group(1)
            labels[cur] = None
            continue
        m = re.search(r"/\*([0-9a-f]{4})\*/\s+((?:@!?U?P\w+\s+)?[A-Z].*)", line)
        if m:
            if cur is not None and labels[cur] is None:
                labels[cur] = int(m.group(1), 16)
            rows.append((int(m.group(1), 16), m.group(2)))
    loops = []
    for at, text in rows:
        m = re.search(r"\bBRA\b.*\.L_x_(\d+)", text)
        if m and labels.get(m.group(1)) is not None and labels[m.group(1)] < at:
            lo = labels[m.group(1)]
            loops.append(sum(1 for a, t in rows if lo <= a <= at and "LDG" in t))
    return sum(1 for _, t in rows if "LDG" in t), loops


def main(argv: list[str]) -> int:
    from ptx2sass import codegen
    ours = "--ours" in argv
    for spec in [a for a in argv if not a.startswith("--")]:
        trips, loads, fmas = map(int, spec.split(","))
        ptx = probe(trips, loads, fmas)
        row = [("ptxas", oracle.ptxas(ptx, "sm_89").output)]
        if ours:
            row.append(("ours", codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89",
                                                        filename="k.ptx")[0]))
        cells = []
        for who, cubin in row:
            n, inside = loops(cubin)
            cells.append(f"{who}: {n // loads} copies in all, " +
                         (f"loop of {[i // loads for i in inside]}" if inside else "no loop"))
        print(f"trips {trips}, {loads} loads x {fmas} FMAs: " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
