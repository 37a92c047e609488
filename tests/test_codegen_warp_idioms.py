"""The small forms of warp-reduction kernels, as ptxas writes them (issue 20 item 3):

* `and.b32 t, x, 31; setp.ne.s32 p, t, 0` is one `LOP3.LUT P0, RZ, R, 0x1f, RZ, 0xc0, !PT`
  (isel/lop3_predicates.py);
* `selp.u32 d, 1, 0, p` is `SEL d, RZ, 0x1, !P` (the immediate in its slot, no MOV of 1);
* a shuffle whose in-range predicate nothing reads writes PT (no predicate register, no
  write the next writer of that register must wait for);
* the add of the last shuffle's value, read only past `@P0 EXIT`, goes past it
  (isel/sink_to_successor.py): the exit does not wait for the shuffle.

Expected forms come from ptxas's cubins, results from ptxas's cubin in the emulator."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{
 .reg .b32 %r<24>; .reg .b64 %rd<8>; .reg .pred %p<6>;
 ld.param.u64 %rd1, [p];
 ld.param.u64 %rd2, [q];
 cvta.to.global.u64 %rd3, %rd1;
 cvta.to.global.u64 %rd4, %rd2;
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd5, %r1, 4;
 add.s64 %rd6, %rd3, %rd5;
 ld.global.u32 %r2, [%rd6];
 shfl.sync.bfly.b32 %r3|%p1, %r2, 16, 31, -1;
 add.s32 %r4, %r3, %r2;
 shfl.sync.bfly.b32 %r5|%p2, %r4, 1, 31, -1;
 add.s32 %r6, %r5, %r4;
 setp.gt.s32 %p3, %r2, 0;
 selp.u32 %r7, 1, 0, %p3;
 and.b32 %r9, %r1, 7;
 setp.ne.s32 %p4, %r9, 0;
 @%p4 bra DONE;
 shr.u32 %r10, %r1, 3;
 mul.wide.u32 %rd7, %r10, 8;
 add.s64 %rd7, %rd4, %rd7;
 st.global.u32 [%rd7], %r6;
 st.global.u32 [%rd7+4], %r7;
DONE:
 ret;
}
"""


def _texts(cubin: bytes) -> list[str]:
    return [re.sub(r"\s+", " ", m.group(1)).strip()
            for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", oracle.nvdisasm(cubin))]


def _shape(text: str) -> str:
    return re.sub(r"\bR\d+", "R", re.sub(r"\bP[0-6]\b", "P", text))


def _compiled():
    theirs = oracle.ptxas(KERNEL, "sm_89")
    assert theirs.ok, theirs.stderr
    return codegen.compile_ptx(KERNEL), theirs.output


def test_lane_test_selp_and_shuffles_take_ptxas_s_forms():
    ours, theirs = _compiled()
    for cubin in (theirs, ours):        # ptxas's first: the premise
        shapes = [_shape(t) for t in _texts(cubin)]
        assert "LOP3.LUT P, RZ, R, 0x7, RZ, 0xc0, !PT" in shapes, shapes
        assert "SEL R, RZ, 0x1, !P" in shapes, shapes
        shuffles = [s for s in shapes if s.startswith("SHFL")]
        assert len(shuffles) == 2 and all(s.startswith("SHFL.BFLY PT,") for s in shuffles), shuffles
        assert not any(s.startswith("ISETP.NE.AND") for s in shapes), shapes
        adds = [i for i, s in enumerate(shapes) if s.startswith(("IADD3", "IMAD.IADD"))]
        assert adds and adds[-1] > shapes.index("@P EXIT"), shapes


def test_lane_test_selp_and_shuffles_compute_what_ptxas_computes():
    ours, theirs = _compiled()
    rng = np.random.default_rng(22)
    src = rng.integers(-1000, 1000, 64).astype(np.int32)
    results = []
    for cubin in (ours, theirs):
        out = np.full(16, -1, np.int32)
        run(cubin, "k", 1, 64, [src.copy(), out])
        results.append(out)
    np.testing.assert_array_equal(*results)
    assert (results[0] != -1).all()
