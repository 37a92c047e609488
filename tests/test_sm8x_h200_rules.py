"""The H200's four timing rules (hopper.json: loads read their address registers after issue,
HMMA/IMMA sources are read up to 7 cycles after issue, FP64 instructions issue 2 cycles apart,
memory instructions wait 6 cycles after BAR.SYNC) hold for ptxas 13.5's sm_80/86/89 code too
(tools/timing_rule_sites.py: 0 exceptions), so our sm_8x code must keep them. The checks here
take the rules from the sm_90 table (the hardware's evidence), not from ampere.json, so they
fail for a schedule that breaks them whatever ampere.json says: main before 6700e06 overwrote
load addresses, MMA sources and issued LDS one cycle after BAR.SYNC in these kernels."""
import copy

import pytest

from ptx2sass import codegen
from ptx2sass.emu.hazards import TimingModel
from ptx2sass.sched.latency import model_for
from tools.emu_testing import run_tinygrad, tinygrad_manifest

RULE_FIELDS = ("LATE_SOURCE_READS", "LATE_READ_CYCLES", "UNORDERED_LATE_READS", "LATE_FIXED_READS",
               "ISSUE_INTERVAL", "AFTER_BARRIER")
# a reduction (LDG address reuse, LDS after BAR.SYNC) and the tensor-core matmul (HMMA sources)
KERNELS = ["sum_float32__r_16_256", "matmul_f16_tc__r_32_2_2_2_4_4_4_2"]
ARCHS = ["sm_89", "sm_86", "sm_80"]


def _h200_rules(lat):
    """`lat` with the four rules exactly as the sm_90 table states them."""
    h90, lat = model_for("sm_90"), copy.copy(lat)
    for f in RULE_FIELDS:
        setattr(lat, f, getattr(h90, f))
    return lat


class H200Rules(TimingModel):
    """The arch's own timing model, judged with the H200's rules."""

    def __init__(self, launch, max_hazards: int = 100000):
        super().__init__(launch, max_hazards)
        self.lat = _h200_rules(self.lat)


def _rules_broken(hazards) -> list[str]:
    keys = ("no read scoreboard", "may still read", "late_fixed_reads", "takes one every",
            "memory instructions need")
    return [str(h) for h in hazards if any(k in str(h) for k in keys)]


def _entry(name):
    return next(e for e in tinygrad_manifest() if e["file"] == name + ".ptx")


def _ours(entry, arch: str, rules: bool = True) -> bytes:
    """Our cubin; `rules=False`: control codes from a model without the four rules (what
    main emitted for sm_8x before them)."""
    import ptx2sass
    ptx = open(f"tests/corpus/tinygrad/{entry['file']}").read().replace(".target sm_89", f".target {arch}")
    if rules:
        return ptx2sass.compile(ptx, arch, "k.ptx")
    real = codegen.assign_controls

    def without(slots, lat=None, **options):
        lat = copy.copy(lat or model_for(arch))
        lat.LATE_SOURCE_READS, lat.UNORDERED_LATE_READS = frozenset(), frozenset()
        lat.LATE_FIXED_READS, lat.ISSUE_INTERVAL = {}, {}
        lat.AFTER_BARRIER = (frozenset(), 0)
        return real(slots, lat, **options)
    codegen.assign_controls = without
    try:
        return ptx2sass.compile(ptx, arch, "k.ptx")
    finally:
        codegen.assign_controls = real


def test_sm8x_tables_state_the_rules():
    h90 = model_for("sm_90")
    for arch in ARCHS:
        lat = model_for(arch)
        for f in RULE_FIELDS:
            if f != "ISSUE_INTERVAL":
                theirs = getattr(h90, f)
                if f == "LATE_SOURCE_READS":    # LDGMC (multimem.ld_reduce) exists from sm_90 on
                    theirs = theirs - {"LDGMC"}
                assert getattr(lat, f) == theirs, (arch, f)
        # FP64: ptxas's sm_8x code keeps 4 cycles (never less at 5,000+ sites), sm_90's 2
        assert {op: c for op, (_, c) in lat.ISSUE_INTERVAL.items()} == \
            {op: 4 for op in h90.ISSUE_INTERVAL}, arch


@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_sm89_cubin_keeps_the_rules(name):
    res = run_tinygrad(_entry(name), timing=H200Rules)
    assert res.ok, res.reason
    assert not _rules_broken(res.result.hazards), _rules_broken(res.result.hazards)[:3]


@pytest.mark.parametrize("name", KERNELS)
def test_checker_flags_a_schedule_without_the_rules(name):
    entry = _entry(name)
    res = run_tinygrad(entry, cubin=_ours(entry, "sm_89", rules=False), timing=H200Rules)
    assert res.ok, res.reason
    broken = _rules_broken(res.result.hazards)
    assert any("no read scoreboard" in h or "may still read" in h for h in broken), broken[:3]
    # sum: LDS one cycle after BAR.SYNC; tc: a fixed-latency write to an HMMA source
    rule = "late_fixed_reads" if "tc" in name else "memory instructions need"
    assert any(rule in h for h in broken), broken[:3]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", KERNELS)
def test_our_sm8x_cubin_keeps_the_rules(name, arch):
    entry = _entry(name)
    theirs = run_tinygrad(entry, hazard_check=False, arch=arch)
    ours = run_tinygrad(entry, cubin=_ours(entry, arch), timing=H200Rules)
    assert ours.ok, ours.reason
    assert not ours.result.hazards, [str(h) for h in ours.result.hazards[:3]]
    for buf, want in theirs.result.buffers.items():
        assert ours.result.buffers[buf] == want, buf


def _controls(slots, arch):
    from ptx2sass.sched.control import assign_controls
    return assign_controls(slots, model_for(arch))


@pytest.mark.parametrize("arch", ARCHS)
def test_control_codes_protect_a_load_address(arch):
    """LDG R4, [R2.64] then IADD3 R2, ...: the load sets a read scoreboard and the IADD3
    waits on it (without the rule the IADD3 issued the next cycle)."""
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.sched.control import Slot
    out = _controls([Slot(Instruction("LDG"), reads=[("R", 2), ("R", 3)], writes=[("R", 4)]),
                     Slot(Instruction("IADD3"), reads=[("R", 6)], writes=[("R", 2)])], arch)
    ldg, iadd = [s for s in out if s.ins.opcode in ("LDG", "IADD3")]
    assert ldg.ins.control.rd_sb != 7
    assert iadd.ins.control.wait >> ldg.ins.control.rd_sb & 1


@pytest.mark.parametrize("arch", ARCHS)
def test_control_codes_space_fp64_and_barrier(arch):
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.sched.control import Slot
    out = _controls([Slot(Instruction("DFMA"), reads=[("R", 2), ("R", 3)], writes=[("R", 10), ("R", 11)]),
                     Slot(Instruction("DMUL"), reads=[("R", 4), ("R", 5)], writes=[("R", 12), ("R", 13)])], arch)
    assert out[0].stall >= 4      # ptxas's least distance between FP64 instructions on sm_8x
    out = _controls([Slot(Instruction("BAR")), Slot(Instruction("LDS"), reads=[("R", 2)], writes=[("R", 4)])], arch)
    assert out[0].stall >= 6


def test_ptxas_sm89_sites_have_no_exceptions():
    """tools/timing_rule_sites.py on a few CUDA corpus launches: ptxas's sm_89 code meets
    the rules (late address reads, barriers) and the emulator finds no exception."""
    from tools import timing_rule_sites
    sites = timing_rule_sites.run("sm_89", ["cuda"], limit=6, quiet=True)
    assert sites.launches == 6
    assert sites.sites["late_source_reads"] > 0 and sites.sites["after_barrier"] > 0
    assert not sum(sites.exceptions.values()), sites.exceptions
