"""sm_90 loads read their vector address registers after issue (hopper.json `late_source_reads`):
the H200 (docs/gpu/2026-11-26-h200-sm90.md) returned wrong sums and illegal addresses for our
cubins that overwrote an LDG's, LDL's or LDSM's address a cycle or two after issue, and ptxas
never does that before a wait shows the load has read it. The emulator's hazard check must flag
such code, ptxas's cubins must stay clean, and ours must protect the address."""
import copy

import pytest

from ptx2sass import codegen
from ptx2sass.sched.latency import model_for
from tools.emu_testing import run_tinygrad, tinygrad_manifest

# Kernels the H200 got wrong with main's cubins (a reduction with LDG address reuse, the
# tensor-core matmul that faulted) and one whose ptxas cubin overwrites an LDS's UR address
# the next cycle (uniform registers are read at issue).
KERNELS = ["sum_float32__r_16_256", "matmul_f16_tc__r_32_2_2_2_4_4_4_2", "var_std_float32__r_128_16_2_2"]


def _entry(name):
    return next(e for e in tinygrad_manifest() if e["file"] == name + ".ptx")


def _compile(entry, late: bool) -> bytes:
    """Our sm_90 cubin; `late=False`: control codes from a model that believes loads read
    their address at issue (what main emitted before the fix)."""
    ptx = open(f"tests/corpus/tinygrad/{entry['file']}").read()
    if late:
        return _plain(ptx)
    real = codegen.assign_controls

    def early(slots, lat=None, **options):
        lat = copy.copy(lat or model_for("sm_90"))
        lat.LATE_SOURCE_READS = frozenset()
        return real(slots, lat, **options)
    codegen.assign_controls = early
    try:
        return _plain(ptx)
    finally:
        codegen.assign_controls = real


def _plain(ptx: str) -> bytes:
    import ptx2sass
    return ptx2sass.compile(ptx, "sm_90", "k.ptx")


def test_hopper_table_lists_late_loads():
    lat = model_for("sm_90")
    assert {"LDG", "LDL", "LDS", "LDSM"} <= lat.LATE_SOURCE_READS
    # ptxas's sm_8x cubins obey the same rule (sched/latency/ampere.json's evidence)
    assert {"LDG", "LDL", "LDS", "LDSM"} <= model_for("sm_89").LATE_SOURCE_READS


@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_cubin_has_no_late_read_hazard(name):
    res = run_tinygrad(_entry(name), arch="sm_90")
    assert res.ok, res.reason
    assert not [h for h in res.result.hazards if "no read scoreboard" in str(h)], res.result.hazards[:3]


@pytest.mark.parametrize("name", KERNELS[:2])
def test_emulator_flags_address_overwritten_before_the_load_read_it(name):
    entry = _entry(name)
    res = run_tinygrad(entry, cubin=_compile(entry, late=False))
    assert res.ok, res.reason
    assert [h for h in res.result.hazards if "no read scoreboard" in str(h)]


@pytest.mark.parametrize("name", KERNELS[:2])
def test_our_cubin_protects_load_addresses(name):
    entry = _entry(name)
    theirs = run_tinygrad(entry, hazard_check=False, arch="sm_90")
    ours = run_tinygrad(entry, cubin=_compile(entry, late=True))
    assert ours.ok, ours.reason
    assert not ours.result.hazards, [str(h) for h in ours.result.hazards[:3]]
    for buf, want in theirs.result.buffers.items():
        assert ours.result.buffers[buf] == want, buf


def test_fp64_issue_interval():
    """sm_90 takes an FP64 instruction every 2 cycles (hopper.json issue_interval): main issued
    rcp.rz.f64's Newton steps 1 cycle apart and the H200 returned 0.49999999999999983 for 1/2."""
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.sched.control import Slot, assign_controls
    lat = model_for("sm_90")
    assert lat.ISSUE_INTERVAL["DFMA"] == lat.ISSUE_INTERVAL["DMUL"] and lat.ISSUE_INTERVAL["DFMA"][1] == 2
    slots = [Slot(Instruction("DFMA"), reads=[("R", 2), ("R", 3)], writes=[("R", 10), ("R", 11)]),
             Slot(Instruction("DMUL"), reads=[("R", 4), ("R", 5)], writes=[("R", 12), ("R", 13)])]
    out = assign_controls(slots, lat)
    assert out[0].stall >= 2
    assert model_for("sm_89").ISSUE_INTERVAL["DFMA"][1] >= 2      # ptxas's sm_8x code keeps it too (4)


def test_memory_waits_6_cycles_after_bar():
    """sm_90: a memory instruction issues 6 cycles after BAR.SYNC, as ptxas always leaves
    (hopper.json after_barrier); main issued LDS 1 cycle after it and the H200 got the shared
    tiles and reductions of llvm/matmul_tiled and triton column_sum/softmax_rows wrong."""
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.sched.control import Slot, assign_controls
    lat = model_for("sm_90")
    assert "LDS" in lat.AFTER_BARRIER[0] and lat.AFTER_BARRIER[1] == 6
    out = assign_controls([Slot(Instruction("BAR")), Slot(Instruction("LDS"), reads=[("R", 2)],
                                                           writes=[("R", 4)])], lat)
    assert out[0].stall >= 6
    assert model_for("sm_89").AFTER_BARRIER == lat.AFTER_BARRIER     # ptxas's sm_8x code too
