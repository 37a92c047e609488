"""sm_90: a uniform ALU result read by a memory instruction (as its address) 9 cycles after
its producer at the earliest (`uniform_to_memory` in sched/latency/hopper.json), as ptxas 13.5
always has it (ULEA -> LDS/STS/LDSM 9, ATOMS 10 over the GPU check's sm_90 cubins; ptxas
builds shared-window bases with ULEA alone, so the table only had ULEA's pairs).

Ours computed cuda/histogram_smem's window base with USHF + UIADD3 and zeroed the bins with
`STS [R4+UR3], RZ` 6 cycles after the UIADD3 (uniform_to_vector's figure); that launch is the
one ours fails on the H200 (GPU runs 25-27: CUDA_ERROR_ILLEGAL_INSTRUCTION; run 26: the bins
warps 0-3 zero came out exactly twice their count). The cubin of run 27 is kept in
tests/gpu_regressions: the hazard checker must flag it, and today's compile of the same PTX
must be clean and compute the corpus reference."""
from pathlib import Path

from ptx2sass.sched.latency import model_for

HERE = Path(__file__).resolve().parent


def test_table_uniform_alu_to_memory_address():
    m = model_for("sm_90")
    for producer in ("UIADD3", "USHF", "ULOP3", "ULEA"):
        for reader in ("STS", "LDS", "ATOMS", "LDG"):
            assert m.read_latency(producer, (), "UR", reader) >= 9, (producer, reader)
    # vector ALU readers keep uniform_to_vector; uniform moves and constant loads their own
    assert m.read_latency("UIADD3", (), "UR", "IADD3") == m.UNIFORM_TO_VECTOR
    assert m.read_latency("ULDC", (), "UR", "LDG") < 9


def _emulate(cubin: bytes, launch):
    from ptx2sass.emu import Param
    from ptx2sass.emu.launch import run_buffers
    from tools.gpu_check.prepare import load_program
    params = [Param(buffer=p["buffer"]) if "buffer" in p else Param(type=p["type"], value=p["value"])
              for p in launch.params]
    buffers = {n: (len(b), b) for n, b in launch.buffers.items()}
    return run_buffers(load_program(cubin, launch.kernel), launch.grid, launch.block, params, buffers,
                       dynamic_shared_bytes=launch.dynamic_shared_bytes, hazard_check=True)


def test_rejected_histogram_cubin_is_flagged_and_ours_is_clean():
    from ptx2sass.codegen import compile_ptx
    from tools.gpu_check import sources
    launch = sources.launch("cuda", "histogram_smem")
    rejected = (HERE / "gpu_regressions" / "cuda_histogram_smem_run27.h200-rejected.cubin").read_bytes()
    bad = _emulate(rejected, launch)
    assert [h for h in bad.hazards if "UR3" in str(h) and "STS" in str(h)], [str(h) for h in bad.hazards]
    ours = _emulate(compile_ptx(launch.ptx, "sm_90", launch.ptx_name), launch)
    assert ours.hazards == [], [str(h) for h in ours.hazards]
    assert ours.buffers["hist"] == launch.expected()["hist"]
