"""The capped latency order counts a group of four by the parts written only where a store
of the region reads the group (sched/pre_schedule.py PARTS_STORED_ONLY; the parts rule is
tests/test_opt_vectorize_stores.py's). Counted by parts, an mma's fragment groups (tinygrad
matmul_f32_tf32_tc, a held-out kernel of the corpus) let the capped order fill the cap
differently: 9418 SM-model cycles against ptxas's 9276 (9007 with its groups whole).
Outputs = ptxas's cubin's in the emulator; ours hazard-free."""
from __future__ import annotations

from ptx2sass import codegen


def test_tinygrad_tf32_mma_within_ptxas_time():
    from ptx2sass.emu.timing.model import from_result
    from ptx2sass.emu.timing.trace import Tee
    from tools.emu_testing import TINYGRAD_DIR, run_tinygrad, tinygrad_cubin, tinygrad_manifest
    name = "matmul_f32_tf32_tc__r_32_2_2_2_4_4_8.ptx"
    (entry,) = [e for e in tinygrad_manifest() if e["file"] == name]
    ptx = (TINYGRAD_DIR / name).read_text()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", name), "sm_89", filename=name)[0]
    theirs = tinygrad_cubin(entry, "sm_89")
    runs = [run_tinygrad(entry, cubin=c, timing=Tee.checked) for c in (ours, theirs)]
    assert all(r.ok for r in runs), [r.reason for r in runs]
    assert not runs[0].result.hazards
    assert all(runs[0].result.buffers[n] == b for n, b in runs[1].result.buffers.items())
    mine, theirs_cycles = (from_result(r.result, "sm_89").cycles for r in runs)
    assert mine <= theirs_cycles, (mine, theirs_cycles)
