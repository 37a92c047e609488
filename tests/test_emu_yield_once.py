"""A lane that passes one YIELD on its way to a convergence barrier does not release the lanes
waiting there; only a lane that spins (yields again at a YIELD it passed since it joined the
barrier) does. Found with nvcc -G on tests/corpus/realworld/src/bulk_pipeline.cu (sm_75):
libcu++'s warp-aggregated barrier arrive runs the leader's 64-bit fetch_add in an out-of-line
function whose -g entry is a YIELD; the emulator let the other 31 lanes leave the leader
branch's BSYNC at that YIELD, they shuffled the leader's register before it held the old value
and `arrive_and_wait` spun for ever (ptxas -g's cubin, sm_75 and, from the same PTX, sm_90).
On an H200 that sm_90 cubin ran in 0.011 s and gave the arithmetic's sums; a spinning lane
still lets the others go (GPU run 12's case, tests/test_sm90_silicon_rules.py)."""
from dataclasses import replace

import numpy as np

from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.program import KernelProgram
from ptx2sass.encoder.model import Label
from ptx2sass.encoder.sass_text import parse_instruction


def _run(lines: list[str], shared: int = 0) -> np.ndarray:
    labels, ins = {}, []
    for text in lines:
        if text.endswith(":"):
            labels[text[:-1]] = 16 * len(ins)
        else:
            ins.append(text)
    parsed = []
    for i, text in enumerate(ins):
        one = parse_instruction(text)
        ops = tuple(replace(op, offset=labels[op.name]) if isinstance(op, Label) else op for op in one.operands)
        parsed.append((16 * i, replace(one, operands=ops)))
    program = KernelProgram("k", "sm_89", parsed, param_base=0x160, param_bytes=8, local_bytes=16,
                            shared_bytes=shared)
    program.params = [(0, 0, 8)]
    launch = Launch(program, (1,), (32,), hazard_check=False)
    out = launch.gmem.allocate("out", 4 * 32)
    launch.set_params([Param(buffer="out")], {"out": out})
    launch.run()
    return out.data.view(np.uint32).copy()


LEADER_THEN_SHUFFLE = [
    "MOV R1, c[0x0][0x28]",
    "IADD3 R1, R1, -0x10, RZ",
    "S2R R0, SR_LANEID",
    "STL [R1], RZ",
    "ISETP.NE.AND P0, PT, R0, RZ, PT",
    "BSSY B0, `(JOIN)",
    "@!P0 BRA `(LEADER)",           # the leader's code lies above (an out-of-line callee)
    "JOIN:",
    "BSYNC B0",
    "LDL R2, [R1]",                 # -g code: the leader's result through its own stack
    "WARPSYNC 0xffffffff",
    "SHFL.IDX PT, R4, R2, RZ, 0x1f",
    "IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][0x160]",
    "STG.E [R6.64], R4",
    "EXIT",
    "LEADER:",                      # an out-of-line -g callee: saves and clears the
    "BMOV.32.CLEAR R8, B0",         # caller's B0, yields once at its entry, ...
    "YIELD",
    "IADD3 R3, RZ, 0x7, RZ",
    "STL [R1], R3",
    "BMOV.32 B0, R8",               # ... and restores B0 on return
    "BRA `(JOIN)",
]


def test_one_yield_does_not_release_the_barrier():
    """Every lane gets the leader's 7: lanes 1-31 wait at BSYNC B0 until the leader arrives
    (before: released at its YIELD, they loaded their own 0 and shuffled the leader's R2
    before its load: 0)."""
    assert list(_run(LEADER_THEN_SHUFFLE)) == [7] * 32


SPIN_ON_THE_OTHERS = [
    "S2R R0, SR_LANEID",
    "ISETP.NE.AND P0, PT, R0, RZ, PT",
    "STS [RZ], RZ",
    "BSSY B0, `(JOIN)",
    "@!P0 BRA `(LEADER)",
    "JOIN:",
    "BSYNC B0",
    "IADD3 R3, RZ, 0x1, RZ",
    "@P0 STS [RZ], R3",             # what the leader waits for
    "IADD3 R5, R0, 0x1, RZ",
    "IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][0x160]",
    "STG.E [R6.64], R5",
    "EXIT",
    "LEADER:",
    "YIELD",                        # a spin loop: the same YIELD again and again
    "LDS R4, [RZ]",
    "ISETP.EQ.AND P1, PT, R4, RZ, PT",
    "@P1 BRA `(LEADER)",
    "BRA `(JOIN)",
]


def test_a_spinning_lane_still_releases_the_barrier():
    """The leader spins on a flag the others set after the BSYNC: its second pass of the
    YIELD lets them go (as the H200 did in GPU run 12), and every lane finishes."""
    assert list(_run(SPIN_ON_THE_OTHERS, shared=4)) == list(range(1, 33))
