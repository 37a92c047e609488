"""Long one-load reductions: unrolled fully as ptxas does, their loads kept far ahead.

tinygrad's `r_16_256` (16 threads, each summing 256 strided elements: sum_uint64,
sum_float64) ran as 16 copies per exit test, each exit test waiting for its copies' loads:
SM model 1.88x / 1.40x ptxas's. ptxas 13.5 unrolls that loop fully, and with its bound
changed up to 368 trips (not at 376, where it runs 64 copies per exit test); with two more
loads a trip only up to 96 trips (opt/unroll.py LONG_FULL); matmul_f32_odd's 65 trips of
two loads fully too (1.57x ptxas's as 13 copies per exit test).
Fully unrolled, the u64 sum was still 1.64x: after allocation the list scheduler counted a
global load's latency as an L1 hit (35 cycles), so the add chain outranked the loads and
they drifted to ~13 ahead of their adds, each DRAM miss stalling the chain (ptxas: 24-30
ahead); at the pre-scheduler's FAR_LOAD they stay ahead (sched/list_schedule.py).

Expected values: ptxas's listings (load counts, a loop or not) and its cubin's outputs and
SM-model time."""
from __future__ import annotations

import re

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee

BOUND = "setp.lt.s32\t%pred_pred_0, %ridx_s32_0, %cast_s32_4;"


def _entry(name: str):
    from tools.emu_testing import TINYGRAD_DIR, tinygrad_manifest
    (entry,) = [e for e in tinygrad_manifest() if e["file"] == name + ".ptx"]
    return entry, (TINYGRAD_DIR / entry["file"]).read_text()


def _ops(cubin: bytes) -> list[str]:
    return re.findall(r"/\*[0-9a-f]{4}\*/\s+(@?!?P?\d?\s*[A-Z][A-Z0-9.]*)", oracle.nvdisasm(cubin, options=()))


def _ours(ptx: str) -> bytes:
    return codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]


@pytest.mark.parametrize("trips", [256, 368, 376])
def test_one_load_loop_unrolled_where_ptxas_unrolls(trips):
    """sum_uint64's loop with its bound set to `trips` (the stride stays 256): fully
    unrolled (one LDG per trip, no backward branch) exactly where ptxas's listing is."""
    _, ptx = _entry("sum_uint64__r_16_256")
    assert BOUND in ptx
    ptx = ptx.replace(BOUND, BOUND.replace("%cast_s32_4;", f"{trips};"))
    theirs, ours = _ops(oracle.ptxas(ptx, "sm_89").output), _ops(_ours(ptx))
    full = sum("LDG" in op for op in theirs) == trips
    assert (sum("LDG" in op for op in ours) == trips) == full, (trips, full)
    assert full == (trips <= 368)          # what ptxas 13.5.37 does (measured)


ADD = "add.u64\t\t%alu_u64_0, %reg_u64_0, %val_u64_0;"


@pytest.mark.parametrize("trips", [96, 112])
def test_three_load_loop_unrolled_where_ptxas_unrolls(trips):
    """The same loop with two more loads and adds a trip (12 instructions here): ptxas
    unrolls it fully at 96 trips, not at 112; ours does the same."""
    _, ptx = _entry("sum_uint64__r_16_256")
    assert ADD in ptx and BOUND in ptx
    more = "".join(f"\n\tld.global.u64\t%val_u64_0, [%bidx_u64_0+{8192 * k}];"
                   f"\n\tadd.u64\t\t%alu_u64_0, %alu_u64_0, %val_u64_0;" for k in (1, 2))
    ptx = ptx.replace(ADD, ADD + more).replace(BOUND, BOUND.replace("%cast_s32_4;", f"{trips};"))
    theirs, ours = _ops(oracle.ptxas(ptx, "sm_89").output), _ops(_ours(ptx))
    full = sum("LDG" in op for op in theirs) == 3 * trips
    assert (sum("LDG" in op for op in ours) == 3 * trips) == full, (trips, full)
    assert full == (trips <= 96)           # what ptxas 13.5.37 does (measured)


@pytest.mark.parametrize("name", ["sum_uint64__r_16_256", "sum_float64__r_16_256",
                                  "matmul_f32_odd__r_11_17_3_65"])
def test_long_reduction_within_ptxas_time(name):
    """Outputs = ptxas's, no hazards, SM cycles at most ptxas's (main at 6d7fb8fb: 12063 vs
    6420, 26303 vs 18730, and matmul_f32_odd's 65 trips of two loads as 13 copies per exit
    test 4377 vs 2794)."""
    from tools.emu_testing import run_tinygrad, tinygrad_cubin
    entry, ptx = _entry(name)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                   filename=entry["file"])[0]
    runs = [run_tinygrad(entry, cubin=c, timing=Tee.checked) for c in (ours, tinygrad_cubin(entry, "sm_89"))]
    assert all(r.ok for r in runs), [r.reason for r in runs]
    assert not runs[0].result.hazards
    assert all(runs[0].result.buffers[n] == b for n, b in runs[1].result.buffers.items())
    mine, theirs = (from_result(r.result, "sm_89").cycles for r in runs)
    assert mine <= theirs, (mine, theirs)
