"""Labels repeated in different `{ }` scopes of one function (PTX ISA: a label is local to its
block), as inline asm expanded more than once writes them (`{ .reg .pred p; WAIT: mbarrier.
test_wait...; @!p bra WAIT; }` in a device function inlined three times). Found by the lead's
warp_specialized.cu (2026-11-29): the CFG resolved each branch in its scope, but the blocks
kept the label as their name, and the names became the function's labels: every `bra L` went
to the last block named L (the kernel's three counting loops below ran the last one's
body; the producer/consumer kernel waited on the wrong mbarrier and faulted). Blocks now get
unique names (frontend/to_ssa.py)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

COUNTING = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x; mov.u32 %r2, 0; mov.u32 %r3, 0; mov.u32 %r4, 0;
 {{ .reg .pred p; L: add.u32 %r2, %r2, 1; setp.lt.u32 p, %r2, %r1; @p bra L; }}
 shl.b32 %r5, %r2, 1;
 {{ .reg .pred p; L: add.u32 %r3, %r3, 3; setp.lt.u32 p, %r3, %r5; @p bra L; }}
 add.u32 %r6, %r3, 5;
 {{ .reg .pred p; L: add.u32 %r4, %r4, 7; setp.lt.u32 p, %r4, %r6; @p bra L; }}
 mul.wide.u32 %rd2, %r1, 12; add.u64 %rd2, %rd1, %rd2;
 st.global.u32 [%rd2], %r2; st.global.u32 [%rd2+4], %r3; st.global.u32 [%rd2+8], %r4;
 ret;
}}
"""


def expected() -> list[int]:
    out = []
    for t in range(32):
        r2 = max(t, 1)
        r3 = 3 * max(1, -(-2 * r2 // 3))
        r4 = 7 * max(1, -(-(r3 + 5) // 7))
        out += [r2, r3, r4]
    return out


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90", "sm_120"])
def test_same_label_in_three_scopes(arch):
    src = COUNTING.format(arch=arch)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    for cubin in (codegen.compile_ptx(src, arch), ref.output):
        out = np.zeros(96, np.uint32)
        res = run(cubin, "k", 1, 32, [out], hazard_check=cubin is not ref.output)
        assert not res.hazards
        assert out.tolist() == expected()


WAITS = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<12>; .reg .b64 %rd<3>;
 .shared .align 8 .b64 bars[3];
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, bars; add.u32 %r2, %r1, 8; add.u32 %r3, %r1, 16; mov.u32 %r9, 1; mov.u32 %r10, 0;
 mbarrier.init.shared::cta.b64 [%r1], %r9;
 mbarrier.init.shared::cta.b64 [%r2], %r9;
 mbarrier.init.shared::cta.b64 [%r3], %r9;
 { .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%r1]; }
 { .reg .pred p; WAIT: mbarrier.test_wait.parity.shared::cta.b64 p, [%r1], %r10; @!p bra WAIT; }
 { .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%r2]; }
 { .reg .pred p; WAIT: mbarrier.test_wait.parity.shared::cta.b64 p, [%r2], %r10; @!p bra WAIT; }
 { .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%r3]; }
 { .reg .pred p; WAIT: mbarrier.test_wait.parity.shared::cta.b64 p, [%r3], %r10; @!p bra WAIT; }
 st.global.u32 [%rd1], %r9;
 ret;
}
"""


def test_each_wait_loop_branches_to_itself():
    """Three inline-asm wait loops: each BRA's target is its own loop head (the three
    targets distinct), as in ptxas's cubin."""
    import re
    listing = oracle.nvdisasm(codegen.compile_ptx(WAITS, "sm_89"), ())
    targets = re.findall(r"@!P\d BRA `\((\.L_x_\d+)\)", listing)
    assert len(targets) == 3 and len(set(targets)) == 3, targets
