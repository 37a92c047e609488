"""Unrolling: the largest number of copies dividing the trip count that fits; up to 32 trips, fully.

A tinygrad-style reduction (`ridx = -1; bra END; LOOP: ld.v4; max x4; END: ridx += 1;
setp.lt ridx, N; @p bra LOOP`) over N rows of 128-bit loads by one warp is bound by its loads'
latency: each exit test waits for the loads of the copies before it. With the copies chosen
from (32, 16, 8, 4, 5, 3, 7) a 50-trip loop ran 5 copies (ten waits for memory; tinygrad
logsumexp_float32__r_32_50_4, SM model 2.59x ptxas's, which unrolls the loop fully), and loops
of 17-32 trips unrolled fully only up to 16 (max_axis1_int32__r_2_32_25_4: 25 trips, 5 copies,
1.83x). Expected values: NumPy's row maxima, ptxas's cubin's outputs, and ptxas's time on the SM model."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee
from test_pre_schedule_load_window import _reduce   # the same reduction, any element type


@pytest.mark.parametrize("trips", [50, 36, 25])
def test_reduction_loop_waits_for_memory_few_times(trips):
    """50 trips ran 5 copies per exit test, 36 ran 4, 25 ran 5 (ptxas: fully unrolled): now 10,
    12 and full. SM model ours/ptxas, before -> after: 7373/2849 -> 4787/2849,
    5799/2369 -> 3116/2369, 3744/2011 -> 2511/2011; every "before" fails the bound. (Branch
    quality27: all three fully unrolled, MAX_TRIPS 64; see test_pre_schedule_load_window.py.)"""
    ptx = _reduce(trips, "f32")
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(trips).standard_normal(32 * 4 * trips).astype(np.float32)
    expected = data.reshape(32, 4 * trips).max(axis=1)
    sm, outs = [], []
    for cubin in (ours, theirs):
        out = np.zeros(32, dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=True,
                  timing=Tee.checked)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
        sm.append(from_result(res, "sm_89").cycles)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert np.array_equal(outs[0], expected)
    assert sm[0] <= 1.75 * sm[1], sm
