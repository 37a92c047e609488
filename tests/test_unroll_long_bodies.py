"""64-trip loops of long trips stay loops, as ptxas keeps them (opt/unroll.py `long_full`).

quality29 let loops of more than MAX_TRIPS (64) trips unroll fully where LONG_FULL says, by
skipping the size limit whenever the trip count exceeded MAX_TRIPS. A tinygrad loop
(`ridx = -1; bra END; LOOP: body; END: ridx += 1; setp.lt ridx, 64; @p bra LOOP`) runs its
header 65 times for 64 trips, and the first count returns up to MAX_TRIPS + 1: every such loop
skipped the size limit too and was unrolled fully whatever its body. tinygrad matmul_f32_256
(64 trips of 8 `ld.global.v4.f32` and 80 float ops) went from a loop (160 instructions, SM
model 31415 cycles) to 6742 straight-line instructions (34043; ptxas 30887, a loop of 179).
Only LONG_FULL's loops skip the size limit now.

Expected values: ptxas 13.5.37's listings (a backward branch or not, loads per loop copy), its
cubin's outputs in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 128


def _probe(trips: int, loads: int, fmas: int) -> str:
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


def _loops(cubin: bytes) -> tuple[int, list[int]]:
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


def _ours(ptx: str, filename: str = "k.ptx") -> bytes:
    return codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", filename), "sm_89", filename=filename)[0]


# (trips, loads, FMAs a load): ptxas 13.5.37 keeps each a loop, with this many copies of the
# body per exit test (measured; the copies are only checked to be a loop's here)
KEPT = [(64, 8, 8, 1), (32, 8, 8, 1), (64, 8, 4, 4), (64, 4, 4, 9)]


@pytest.mark.parametrize("trips,loads,fmas,copies", KEPT)
def test_long_trips_stay_loops_where_ptxas_keeps_them(trips, loads, fmas, copies):
    """ptxas keeps these loops (a backward branch; `copies` bodies in it); ours keeps a loop
    too, with at most ptxas's copies in it. Main at 34a469fe unrolled the three 64-trip ones
    fully (64 x loads LDGs, no backward branch). Outputs = ptxas's in the emulator."""
    ptx = _probe(trips, loads, fmas)
    theirs = oracle.ptxas(ptx, "sm_89").output
    n_theirs, loops_theirs = _loops(theirs)
    assert loops_theirs == [copies * loads], (n_theirs, loops_theirs)     # what ptxas does
    ours = _ours(ptx)
    n_ours, loops_ours = _loops(ours)
    assert len(loops_ours) == 1 and loops_ours[0] <= copies * loads, (n_ours, loops_ours)
    rng = np.random.default_rng(trips * 100 + loads * 10 + fmas)
    src = rng.standard_normal(8192).astype(np.float32)
    outs = []
    for c in (ours, theirs):
        bufs = [np.zeros(4 * THREADS, np.float32), src.copy()]
        res = run(c, "k", (1, 1, 1), (THREADS, 1, 1), bufs, hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(bufs[0].tobytes())
    assert outs[0] == outs[1]


def test_short_trips_still_unrolled_fully_where_ptxas_does():
    """16 trips of 4 loads and 16 FMAs: ptxas unrolls fully (64 LDGs, no loop); so do we."""
    ptx = _probe(16, 4, 4)
    assert _loops(oracle.ptxas(ptx, "sm_89").output) == (64, [])
    assert _loops(_ours(ptx)) == (64, [])


def test_matmul_f32_256_keeps_its_loop():
    """tinygrad matmul_f32_256: 64 trips of 8 LDG.128. ptxas: one copy per exit test (8 LDGs
    in all, 179 instructions); ours: a loop too (main at 34a469fe: 512 LDGs, 6742
    instructions). Instructions within 1.5x ptxas's."""
    from tools.emu_testing import TINYGRAD_DIR, tinygrad_manifest
    (entry,) = [e for e in tinygrad_manifest() if e["program"] == "matmul_f32_256"]
    ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    theirs = oracle.ptxas(ptx, "sm_89").output
    assert _loops(theirs) == (8, [8])
    ours = _ours(ptx, entry["file"])
    n, loops = _loops(ours)
    assert loops == [8] and n == 8, (n, loops)

    def count(c):
        text = oracle.nvdisasm(c)
        return len(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?(?!NOP)[A-Z]", text))
    assert count(ours) <= 1.5 * count(theirs), (count(ours), count(theirs))
