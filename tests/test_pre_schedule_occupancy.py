"""Pre-allocation scheduling kept within the occupancy of the source order (sched/pre_schedule.py
`_occupancy_ceiling`, launch_bounds.occupancy_ceiling).

The latency order raised a loop's pressure past what the kernel's CTAs could afford:
register_pressure.cu's wide_state_tight_bound (256-thread CTAs, a 4x-unrolled f64/u64 loop)
went from 35 live registers in the source order to 54 (60 registers; ptxas 36), so four CTAs
fit an sm_89 SM instead of six; on sm_90, where its launch bounds cap it at 32, the new order
needed 52 and spilled 380/440 bytes (ptxas 256/256). tinygrad's 16-thread sum_uint64 (a
256-trip u64 reduction, fully unrolled) kept loads in flight up to the 88-register window:
92 registers against ptxas's 80, the most that keep 24 such CTAs resident on sm_89.

Expected values are ptxas's: its register count and spill bytes for the same PTX (through
ptx2sass.oracle) and its cubin's outputs in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.encoder.arch import target
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.launch_bounds import occupancy_ceiling, resident_ctas
from tools import realworld as rw
from tools.emu_testing import TINYGRAD_DIR, run_tinygrad, tinygrad_manifest

KERNEL = "wide_state_tight_bound"
RUN = {"grid": 1, "block": 128, "args": ["f64*512", "u64*512", "f64*256"]}


def _registers(cubin: bytes, kernel: str) -> int:
    (k,) = [k for k in read_cubin(cubin).kernels if k.name == kernel]
    return k.regcount


def _ours(ptx: str, arch: str) -> tuple[bytes, tuple[int, int]]:
    spills: dict = {}
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {"spill_report": spills})
    return cubin, spills.get(KERNEL, (0, 0))


def _theirs(ptx: str, arch: str) -> tuple[bytes, tuple[int, int]]:
    got = oracle.ptxas(ptx, arch, ("-v",))
    assert got.output is not None, got.stderr
    text = got.stderr + got.stdout
    block = text[text.index(f"'{KERNEL}'"):]
    m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
    return got.output, (int(m.group(1)), int(m.group(2)))


def _module_ptx(arch: str) -> str:
    # only the kernel under test: the module's other kernels cost compile time here
    text = (rw.CORPUS / f"cuda/register_pressure.{arch}.ptx").read_text()
    head = text[:text.index("\t// .globl")]
    start = text.index(f"\t// .globl\t{KERNEL}")
    end = text.index("\n}\n", start) + 3
    return head + text[start:end]


def test_resident_ctas_follow_the_register_file():
    """Hand counts: 65536 registers in four quarters, whole warps, sm_89's 1536 threads and
    24 CTAs; 256-thread CTAs at 40 registers: 2 warps a quarter each, 16384 / (40*32) = 12
    warps a quarter, six CTAs (also the thread limit); at 48, 10 warps a quarter: five."""
    t = target("sm_89")
    assert resident_ctas(256, 40, t) == 6
    assert resident_ctas(256, 48, t) == 5
    assert resident_ctas(16, 80, t) == 24 and resident_ctas(16, 88, t) == 20
    assert occupancy_ceiling(256, 35, t) == 40
    assert occupancy_ceiling(16, 14, t) == 80
    assert occupancy_ceiling(256, 35, t, file=32) == 35       # a limit below: nothing more


WITHHELD = pytest.mark.xfail(strict=True, reason="sched/pre_schedule.OCCUPANCY_CEILING is off: the "
                             "SM model measured the latency lost (mlp_forward_backward 1.34x ptxas)")


@WITHHELD
def test_wide_state_keeps_ptxas_s_occupancy_on_sm89():
    ptx = _module_ptx("sm_89")
    ours, _ = _ours(ptx, "sm_89")
    theirs, _ = _theirs(ptx, "sm_89")
    assert _registers(ours, KERNEL) <= 1.05 * _registers(theirs, KERNEL)
    outcome = rw.compare_in_emulator(theirs, ours, KERNEL, RUN)
    assert outcome.emu == "match", outcome.detail


def test_wide_state_runs_as_ptxas_s_under_its_sm90_cap():
    """Under the 32 registers its launch bounds leave on sm_90 the source order is kept
    (the latency order spilled 380/440 bytes); the test below holds the spill counts to
    ptxas's (none)."""
    ptx = _module_ptx("sm_90")
    ours, (stores, loads) = _ours(ptx, "sm_90")
    theirs, _ = _theirs(ptx, "sm_90")
    assert _registers(ours, KERNEL) <= _registers(theirs, KERNEL)
    outcome = rw.compare_in_emulator(theirs, ours, KERNEL, RUN)
    assert outcome.emu == "match", outcome.detail


def test_wide_state_spills_no_more_than_ptxas_under_its_sm90_cap():
    """Since the loop's FP64 constants are read from uniform register pairs (DMUL R, R, UR),
    the 32 registers hold the loop without spilling, as ptxas's code does."""
    ptx = _module_ptx("sm_90")
    _, (stores, loads) = _ours(ptx, "sm_90")
    _, (their_stores, their_loads) = _theirs(ptx, "sm_90")
    assert stores <= their_stores and loads <= their_loads, ((stores, loads), (their_stores, their_loads))


@pytest.mark.parametrize("name, kernel, bar", [
    pytest.param("sum_uint64__r_16_256", "r_16_256", 1.05, marks=WITHHELD),
    # the capped order overshoots caps under its ceiling here (a greedy order), so it steps
    # up to the first cap that holds: 89 registers against ptxas's 79 (97 before); 86 since
    # the guarded loads' undefined defaults are copied at their use
    # (pre_schedule.UNDEF_COPIES_AT_USE)
    ("conv2d_f32_pad_stride__r_2_2_3_3_3_3_3_3_3_3", "r_2_2_3_3_3_3_3_3_3_3", 1.15),
])
def test_tinygrad_reductions_stay_near_ptxas_s_registers(name, kernel, bar):
    ptx = (TINYGRAD_DIR / f"{name}.ptx").read_text()
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", {})
    got = oracle.ptxas(ptx, "sm_89")
    assert got.output is not None
    assert _registers(ours, kernel) <= bar * _registers(got.output, kernel)
    entry = next(e for e in tinygrad_manifest() if e["file"] == f"{name}.ptx")
    want, have = run_tinygrad(entry, cubin=got.output), run_tinygrad(entry, cubin=ours)
    assert want.ok and have.ok, (want.reason, have.reason)
    assert have.result.hazards == []
    for buffer, data in want.result.buffers.items():
        assert np.array_equal(np.frombuffer(have.result.buffers[buffer], np.uint8),
                              np.frombuffer(data, np.uint8)), buffer
