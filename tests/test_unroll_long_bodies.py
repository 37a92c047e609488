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

from tools.unroll_probe import THREADS, loops as _loops, probe as _probe


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
