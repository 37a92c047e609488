"""sm_90 tensor-core instructions read their A/B/C registers after issue (hopper.json
`late_fixed_reads`): ptxas's sm_90 cubins never let a fixed-latency instruction overwrite an
HMMA's source sooner than 7 cycles after it issued; ours did (a MOV 3-5 cycles after) in
Triton's matmul_bf16, and the H200 got 413 of 4096 outputs wrong there while our emulator
got them right (docs/gpu/2026-11-26-h200-sm90-run2.md); with the rule the GPU's outputs equal
ptxas's. Checked on the schedule's own control codes (the emulator's timing delays those
MOVs behind an LDSM scoreboard, so it cannot see the distance the GPU sees)."""
import copy

from ptx2sass import codegen
from ptx2sass.sched.latency import model_for

VARIABLE = ("LDSM", "LDS", "LDG", "LDL", "LD", "S2R", "MUFU", "SHFL")


def _slots(late: bool):
    """The control-coded slots of our sm_90 matmul_bf16 (`late=False`: a model without the
    rule, what main emitted before it)."""
    ptx = open("tests/corpus/triton/matmul_bf16.ptx").read()
    real, captured = codegen.assign_controls, []

    def capture(slots, lat=None, **options):
        lat = lat or model_for("sm_90")
        if not late:
            lat = copy.copy(lat)
            lat.LATE_FIXED_READS = {}
        out = real(slots, lat, **options)
        captured.append(out)
        return out
    codegen.assign_controls = capture
    try:
        codegen.compile_ptx(ptx, "sm_90", "matmul_bf16.ptx")
    finally:
        codegen.assign_controls = real
    return [s for slots in captured for s in slots]


def _too_soon(slots) -> list[str]:
    """Fixed-latency writes of an HMMA's source fewer than 7 issue cycles after it (stall
    counts only: a scoreboard wait may be over at once on the GPU)."""
    bad = []
    for i, s in enumerate(slots):
        if s.ins.opcode not in ("HMMA", "IMMA"):
            continue
        sources = {r for r in s.reads if r[0] == "R"}
        t = 0
        for j in range(i + 1, len(slots)):
            t += slots[j - 1].stall
            if t >= 7:
                break
            w = slots[j]
            if w.ins.opcode in VARIABLE or w.ins.opcode in ("HMMA", "IMMA"):
                continue
            hit = sources & set(w.writes)
            if hit:
                bad.append(f"{w.ins.opcode} writes {sorted(hit)} {t} cycles after HMMA #{i}")
    return bad


def test_hopper_table_holds_mma_sources():
    assert model_for("sm_90").LATE_FIXED_READS.get("HMMA") == 7
    # sm_8x holds them too since ampere.json took the H200's rules (ptxas's sm_89 cubins obey them)
    assert model_for("sm_89").LATE_FIXED_READS == model_for("sm_90").LATE_FIXED_READS


def test_our_schedule_waits_out_the_mma_source_reads():
    assert _too_soon(_slots(late=False)), "the check no longer sees the old schedule's overwrite"
    assert _too_soon(_slots(late=True)) == []
