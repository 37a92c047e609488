"""sm_90: HADD2.F32 and HMNMX2 read a fixed-latency result 5 cycles after its producer at the
earliest (`reader_keys`, `reader_fixed` in sched/latency/hopper.json). GPU run 27 (H200):
two real-world kernels of ours read a 16-bit HADD2's result 4 cycles after it and got the
register's old value, where the emulator (then modelling 4) computed the intended one:

- half_bf16.half_math: `HADD2 R6, R6.H0_H0, R11.H0_H0` then `HADD2.F32 R6, -RZ, R6.H0_H0`
  4 cycles later: all 64 outputs lacked the `hrcp` term the HADD2 added;
- nn_layers.bias_relu_half2: `HADD2 R4, R4, R6` then `HMNMX2 R0, R4, R0, !PT` 4 cycles later:
  70 of 128 halves came out as the unbiased input where max(x + bias, 0) is 0.

ptxas 13.5 never reads anything with either sooner than 5 on sm_90 (the run-27 bundle's 357
ptxas cubins), while a 16-bit HADD2 reading a HADD2 4 cycles after stays ptxas's own schedule.
The cubins the H200 got wrong are kept in tests/gpu_regressions: the hazard checker must flag
them, and today's compile of the same PTX must be clean and compute what ptxas's does."""
from pathlib import Path

import pytest

from ptx2sass.sched.latency import model_for

HERE = Path(__file__).resolve().parent
CASES = {"half_math": ("half_bf16", "half_bf16_half_math_run27"),
         "bias_relu_half2": ("nn_layers", "nn_layers_bias_relu_half2_run27")}


def test_table_fp16_result_readers():
    m = model_for("sm_90")
    f32 = m.reader_key("HADD2", ("F32",))
    assert f32 == "HADD2.F32"
    for producer in ("HADD2", "HFMA2", "HMUL2"):
        assert m.read_latency(producer, (), "R", f32) >= 5
        assert m.read_latency(producer, (), "R", "HMNMX2") >= 5
    # a 16-bit HADD2 reads another's result 4 after, as ptxas schedules it (llvm/half.ptx)
    assert m.read_latency("HADD2", (), "R", m.reader_key("HADD2", ())) == 4
    assert m.read_latency("HFMA2", (), "R", "HADD2") == 4


def _run(entry: str):
    from tools import realworld as rw
    module = next(m for m in rw.manifest() if m["arch"] == "sm_90" and m["ptx"]
                  and Path(m["ptx"]).name == f"{CASES[entry][0]}.sm_90.ptx")
    kernel = next(k for k in module["kernels"] if k["entry"] == entry)
    return (rw.CORPUS / module["ptx"]).read_text(), kernel["run"]


def _emulate(cubin: bytes, entry: str, run: dict):
    from ptx2sass.emu.launch import run as emu_run
    from tools import realworld as rw
    params = rw.launch_params(run, 0)
    result = emu_run(cubin, entry, rw._dim(run["grid"]), rw._dim(run["block"]), params, hazard_check=True)
    return result, [p.tobytes() for p in params if hasattr(p, "tobytes") and p.ndim]


@pytest.mark.parametrize("entry", sorted(CASES))
def test_rejected_cubin_is_flagged_and_ours_is_clean(entry):
    from ptx2sass import oracle
    from ptx2sass.codegen import compile_ptx
    ptx, run = _run(entry)
    rejected = (HERE / "gpu_regressions" / f"{CASES[entry][1]}.h200-rejected.cubin").read_bytes()
    bad, _ = _emulate(rejected, entry, run)
    assert [h for h in bad.hazards if "HADD2" in str(h)], [str(h) for h in bad.hazards]
    ours, got = _emulate(compile_ptx(ptx, "sm_90", "m.ptx"), entry, run)
    assert ours.hazards == [], [str(h) for h in ours.hazards]
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    clean, want = _emulate(theirs.output, entry, run)
    assert clean.hazards == [], [str(h) for h in clean.hazards]
    assert got == want
