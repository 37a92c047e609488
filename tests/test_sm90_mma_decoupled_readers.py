"""sm_90: a variable-latency (decoupled) reader takes an MMA result 2 cycles before the MMA's
fixed latency (`mma_to_decoupled_early` in sched/latency/hopper.json, as on sm_8x). ptxas
13.5 puts `F2I.TRUNC.NTZ` 22 cycles after a two-pass HMMA.16816.F32 (fixed 24) here, and 14
after a single-pass IMMA.SP.16832 (16) in fuzz campaign 13 seed 25000859
(tests/ptxas_sm90_schedules); the checker flagged both before the rule."""
import numpy as np

from codegen_harness import inputs, kernel

CVT_OF_AN_MMA_RESULT = (
    "mov.b32 %x4, 0; mov.b32 %x5, 0; mov.b32 %x6, 0; mov.b32 %x7, 0; "
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%x0, %x1, %x2, %x3}, {%a0, %a1, %a0, %a1}, "
    "{%a1, %a0}, {%x4, %x5, %x6, %x7}; cvt.rzi.s32.f32 %o, %x1;")


def test_ptxas_converts_an_hmma_result_two_cycles_early_without_a_checker_hazard():
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    src = kernel(CVT_OF_AN_MMA_RESULT, 32, 2, 32, version="8.5").replace(".target sm_89", ".target sm_90")
    res = oracle.ptxas(src, "sm_90")
    assert res.ok, res.stderr
    assert "F2I.TRUNC.NTZ" in oracle.nvdisasm(res.output)
    result = run(res.output, "k", 1, 64, [np.zeros(64, np.uint32), inputs(32, 2)])
    assert result.hazards == [], [str(h) for h in result.hazards]


def test_table_mma_to_a_decoupled_reader():
    from ptx2sass.sched.latency import model
    m = model("hopper")
    assert m.read_latency("HMMA", ("16816", "F32"), "R", "F2I") == 22
    assert m.read_latency("HMMA", ("16816", "F32"), "R", "IADD3") == 24
