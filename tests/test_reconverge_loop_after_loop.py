"""A warp collective after a divergent loop that runs straight into another loop (a plain
loop or the CAS loop of a 64-bit shared atomic): the first loop's BSYNC must come before
the second loop's BSSY, or the lanes that left the first loop early record a barrier mask
of their own group only, and the second loop's BSYNC lets the groups go on apart
(ptx2sass/reconverge.py; fuzz 28000375, tests/fuzz_regressions/*_s28000375.ptx, an IMMA).

Each kernel is that fuzz program with its WMMA replaced by one full-mask collective whose
result goes into the stored output. Both cubins run in the emulator
(ptx2sass.fuzz.runner.run_case): ours must give ptxas's outputs, with no hazard, and run
its collectives with the whole warp under explicit reconvergence (what the hardware
guarantees)."""
import dataclasses
from pathlib import Path

import pytest

from ptx2sass.fuzz.inputs import read_case
from ptx2sass.fuzz.runner import run_case

BASE = (Path(__file__).parent / "fuzz_regressions"
        / "hazard_convergence_hazard_imma_run_by_lanes_0x_without_the_w_s28000375.ptx")

REGS = "    .reg .b32 %x<8>;\n    .reg .b16 %xh;\n    .reg .pred %xp;\n"
# the second loop counts on from the first loop's counter: its exit block holds no code
PLAIN_LOOP = """$L3_loop:
        setp.lt.u32 %xp, %tr0, 5;
        @!%xp bra $L4_endloop;
        add.u16 %h1, %h1, 3;
        add.u32 %tr0, %tr0, 1;
        bra $L3_loop;
$L4_endloop:
"""
CAS_LOOP = "    atom.shared.min.u64 %d0, [%g_sq], %d0;\n"
COLLECTIVES = {
    "shfl": "    cvt.u32.u16 %x0, %h1;\n    shfl.sync.bfly.b32 %x1, %x0, 1, 31, -1;\n",
    "vote": "    setp.ne.u16 %xp, %h1, 0;\n    vote.sync.ballot.b32 %x1, %xp, -1;\n",
    "match": "    cvt.u32.u16 %x0, %h1;\n    and.b32 %x0, %x0, 3;\n"
             "    match.any.sync.b32 %x1, %x0, -1;\n",
    "redux": "    cvt.u32.u16 %x0, %h1;\n    redux.sync.add.u32 %x1, %x0, -1;\n",
    "mma": "    cvt.u32.u16 %x0, %h1;\n    mov.b32 %x2, 0x3c003c00;\n    mov.u32 %x3, 0;\n"
           "    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%x4,%x5,%x6,%x7}, "
           "{%x2,%x0,%x2,%x0}, {%x2,%x0}, {%x3,%x3,%x3,%x3};\n    cvt.rzi.u32.f32 %x1, %x4;\n",
}


def program(collective: str, second: str) -> str:
    """The fuzz program with `second` after its divergent loop, then the collective (its
    result xor-ed into the stored %h1) in place of the atomic and the WMMA."""
    text = BASE.read_text()
    head, rest = text.split("$L2_endloop:\n", 1)
    tail = rest[rest.index("    st.global.b16"):]
    head = head.replace("    .reg .b64 %td3;\n", "    .reg .b64 %td3;\n" + REGS)
    fold = "    cvt.u16.u32 %xh, %x1;\n    xor.b16 %h1, %h1, %xh;\n"
    return head + "$L2_endloop:\n" + second + COLLECTIVES[collective] + fold + tail


CASES = [(c, "loop") for c in COLLECTIVES] + [("match", "cas"), ("vote", "cas")]


@pytest.mark.parametrize("collective,second", CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_collective_after_loop_after_divergent_loop(collective, second):
    text = program(collective, PLAIN_LOOP if second == "loop" else CAS_LOOP)
    case = dataclasses.replace(read_case(text), arch="sm_89")
    out = run_case(case)
    assert out.cls == "pass" and not out.findings, f"{out.sig}: {out.detail}"
