"""The pre-allocation scheduler where the source order's pressure is already above every
cap (sched/pre_schedule.py SOURCE_SLACK): a Viterbi step loop (tests/corpus/realworld,
dp_sequences viterbi_log8) keeps its 64 transition values and 8 scores live through the
loop (91 registers) and runs eight argmax chains per step. The source order runs the chains
one after another, each instruction waiting for the one before; the bottom-up order for
pressure a few registers above the source's interleaves them, as ptxas's code does.
Results and cycles against ptxas's cubin on the emulator."""
from pathlib import Path

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = Path(__file__).parent / "corpus" / "realworld" / "cuda" / "dp_sequences.sm_89.ptx"


def _launch(cubin):
    rng = np.random.default_rng(7)
    trans = rng.standard_normal(64).astype(np.float32)
    emit = rng.standard_normal(512).astype(np.float32)
    obs = rng.integers(0, 8, 64 * 24).astype(np.uint8)
    path = np.zeros(64 * 24, np.int32)
    best = np.zeros(64, np.float32)
    res = run(cubin, "viterbi_log8", (1, 1, 1), (64, 1, 1), [trans, emit, obs, path, best])
    return res, path, best


def test_interleaved_chains_within_ptxas_cycles():
    src = PTX.read_text()
    theirs = oracle.ptxas(src, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(src, "sm_89", str(PTX))
    r_ours, path_ours, best_ours = _launch(ours)
    r_theirs, path_theirs, best_theirs = _launch(theirs.output)
    assert not r_ours.hazards
    np.testing.assert_array_equal(path_ours, path_theirs)
    np.testing.assert_array_equal(best_ours, best_theirs)
    # issue 20's bar; before, the chains one after another: 1.8x ptxas's cycles
    assert r_ours.cycles <= 1.25 * r_theirs.cycles, (r_ours.cycles, r_theirs.cycles)
