"""`BRA.U.ANY` with a predicate operand (sm_90 and every blackwell arch; nvdisasm reads bit 84
of a `BRA.U` as `.ANY` there, sm_75..sm_89 print nothing for it).

The tables read `@P0 BRA.U.ANY P5` as `@P0 BRA.U P5` (the U.ANY forms were learnt with PT or
P6 as the predicate; `tools/isa_seeds/bra_any_pred.words`), and the emulator took a branch
with a predicate operand per lane whatever its modifiers. Now the word decodes as nvdisasm
prints it and runs as `.ANY` does without an operand (ptxas's ELECT loops): every lane here
goes where the guard and the operand hold together in any lane, else none."""
from types import SimpleNamespace

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

# @P0 BRA.U.ANY P5, 0x10 (control bits with no scoreboard, as in the seed file)
WORD = 0x000fc000029000000000000100000947


class _Warp:
    """What op_bra reads and writes: predicate registers per lane, the pc it sets."""

    def __init__(self, preds):
        self.preds, self.pc = preds, None

    def pred(self, op):
        v = self.preds[op.index] if op.index != 7 else np.ones(32, bool)
        return ~v if op.inv else v

    def set_pc(self, taken, target):
        self.pc = (taken.copy(), target)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_110", "sm_120"])
def test_word_reads_as_nvdisasm_prints_it(arch):
    listing = oracle.nvdisasm_raw(WORD.to_bytes(16, "little"), arch).stdout
    assert "BRA.U.ANY P5" in listing
    assert codec.decode_text(WORD, arch).startswith("@P0 BRA.U.ANY P5")


@pytest.mark.parametrize("p5_lanes,want_all", [((3,), True), ((), False), ((9,), False)])
def test_any_lane_with_guard_and_operand_takes_the_warp(p5_lanes, want_all):
    """Guard P0 in lanes 0..7, operand P5 in `p5_lanes`: the whole active warp branches when
    some lane has both (lane 3), none when no lane has both (lane 9 has P5 but not P0)."""
    from ptx2sass.emu.ops_control import op_bra
    ins = codec.decode(WORD, "sm_90")
    s = SimpleNamespace(ins=ins, offset=0)
    preds = np.zeros((8, 32), bool)
    preds[0, :8] = True
    for lane in p5_lanes:
        preds[5, lane] = True
    active = np.ones(32, bool)
    w = _Warp(preds)
    op_bra(w, s, active, preds[0] & active)
    assert w.pc[0].tolist() == ([True] * 32 if want_all else [False] * 32)
