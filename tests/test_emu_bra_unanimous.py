"""`@P BRA.U target` in the emulator: unanimous, taken only where the guard holds in every
lane that runs it, else by none (the warp stays together).

The evidence is ptxas's own code: for a predicated subroutine call (`@!%p0 rem.s16` on
sm_89) it writes `@P1 BRA.U join; BSSY B0, join; ...; @P1 BRA inner; ...; CALL; inner:
BSYNC B0; join:`, whose inner per-lane test is dead if BRA.U is per lane; and a public
description of the older SASS's BRA (".U: branch only taken if all active threads in the
warp agree"). Per lane, the P1 lanes reached the join apart from the BSSY and ran the
BMMA after it without the calling lanes, which read their A registers later: fuzz seed
34007738 (campaign 23) was pinned as a ptxas departure for that."""
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def test_b1_mma_after_a_unanimous_branch_around_a_call_is_the_manual_s():
    """Fuzz seed 34007738 (campaign 23, sm_89): `mma.sync.aligned.m16n8k256.row.col.s32.b1.b1
    .s32.xor.popc {%r7, %r3, %r8, %r5}, {%r0, %r2, %r6, %r5}, {%r1, %r6}, {%r6, %r4, %r5, %r2}`
    after a predicated `rem.s16` (ptxas calls its subroutine for it, skipped by `@P1 BRA.U`
    where no lane needs it). D[2] (%r8) of every lane must be C + popc(A ^ B) from the PTX
    ISA's fragment layouts (NumPy, the reference of tests/test_codegen_mma_b1_uniform.py) on
    the launch's values, for ptxas's cubin and ours."""
    import struct
    from test_codegen_mma_b1_uniform import _want
    from ptx2sass.fuzz import runner
    from ptx2sass.fuzz.inputs import launch_data, read_case
    case = read_case((ROOT / "tests/fuzz_regressions/mismatch_bra_u_unanimous_b1_mma_s34007738.ptx").read_text())
    data = launch_data(case)
    inb = bytes(data.buffers["in"][1])
    p_u0, p_u1 = (data.params[i].value & 0xFFFFFFFF for i in (3, 4))
    words = np.zeros((32, 12), np.uint32)
    for lane in range(32):
        at = lane * case.record
        r1, r5 = (struct.unpack_from("<I", inb, at + o)[0] for o in (0, 12))
        r4 = struct.unpack_from("<H", inb, at + 8)[0]
        r6 = struct.unpack_from("<b", inb, at + 16)[0] & 0xFFFFFFFF
        words[lane, :4], words[lane, 4:6], words[lane, 8:] = (p_u0, p_u1, r6, r5), (r1, r6), (r6, r4, r5, p_u1)
    want = (_want("m16n8k256", "xor", words)[:, 2] & 0xFFFFFFFF).tolist()
    got = {}
    for by in ("ours", "ptxas"):
        cubin = runner.compile_ptxas(case)[0] if by == "ptxas" else runner._ours(case, {})[0]
        out = runner.execute(runner.load(cubin, case.kernel), case, by == "ours").buffers["out"]
        got[by] = np.frombuffer(bytes(out), np.uint32).reshape(32, -1)[:, 2].tolist()
    assert got["ours"] == want
    assert got["ptxas"] == want         # per-lane BRA.U: lanes 5, 7, 12 and 14 differed




def test_branch_unanimous_only_where_every_lane_agrees():
    """The rule alone on ptxas's listing: the P1 lanes (guard true) stay with the others
    unless every lane here has P1."""
    from ptx2sass.emu.ops_control import op_bra
    from types import SimpleNamespace
    from ptx2sass.encoder.model import Label

    class W:
        def __init__(self):
            self.pc = None

        def set_pc(self, taken, target):
            self.pc = (taken.copy(), target)

    ins = SimpleNamespace(modifiers=("U",), operands=[Label("L", 0x40)], opcode="BRA")
    s = SimpleNamespace(ins=ins, offset=0)
    active = np.ones(32, bool)
    for guard, want in ((np.arange(32) != 7, np.zeros(32, bool)), (active, active),
                        (np.zeros(32, bool), np.zeros(32, bool))):
        w = W()
        op_bra(w, s, active, guard & active)
        assert (w.pc[0] == want).all()
