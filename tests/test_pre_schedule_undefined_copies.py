"""The pre-allocation scheduler on if-converted guarded loads (sched/pre_schedule.py
UNDEF_COPIES_AT_USE, RETRY_AT_LIMIT): a 2-D stencil (tests/corpus/realworld,
stencil_highorder diffusion_varcoef_2d) skips each of its 16 out-of-range neighbours with a
branch; if-conversion makes each a pair of guarded loads (`@!P LDG`) whose destinations start
as copies of an undefined value. Those 80 copies, ready at once and above every load by
height, went first in the latency order and counted 80 registers, and the order's seventh
predicate was refused: the source order was kept, each load read by the next instruction.
ptxas issues the loads together. Results, hazards and cycles against ptxas's cubin on the
emulator (sm_120 has no SM model: single-warp cycles)."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = Path(__file__).parent / "corpus" / "realworld" / "cuda" / "stencil_highorder.sm_89.ptx"


def _launch(cubin):
    rng = np.random.default_rng(3)
    u = rng.standard_normal(1024).astype(np.float32)
    k = rng.standard_normal(1024).astype(np.float32)
    out = np.zeros(1024, np.float32)
    res = run(cubin, "diffusion_varcoef_2d", (2, 1, 1), (8, 16, 1), [u, k, out, np.float32(0.2)],
              hazard_check=True)
    return res, out


@pytest.mark.parametrize("arch", ["sm_120", "sm_89"])
def test_guarded_neighbour_loads_issue_together(arch):
    src = PTX.read_text()
    theirs = oracle.ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(src, arch, str(PTX))
    r_ours, out_ours = _launch(ours)
    r_theirs, out_theirs = _launch(theirs.output)
    assert not r_ours.hazards
    np.testing.assert_array_equal(out_ours, out_theirs)
    # issue 20's bar; before, one load at a time: sm_120 1196 against 361, sm_89 970 against 366
    assert r_ours.cycles <= 1.25 * r_theirs.cycles, (r_ours.cycles, r_theirs.cycles)
