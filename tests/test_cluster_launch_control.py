"""clusterlaunchcontrol (sm_100+), found refused ("not supported yet") by the lead's sm_100
sweep (2026-11-29): try_cancel as ptxas 13.5 writes it (UGETNEXTWORKID.SELFCAST [URa],
[URa+1] in the bulk copies' ELECT loop), query_cancel as reads of the response's words
(is_canceled: bit 0 of word 2; first ctaid x: word 0, y/z: word 1's halves). The emulator
answers every request as failed (its launches start every CTA: nothing to cancel), which the
PTX ISA allows; query_cancel is checked on arbitrary responses against NumPy."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

ARCHS = ["sm_100", "sm_120"]

TRY_CANCEL = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<3>; .reg .b128 %q;
 .shared .align 16 .b8 resp[16];
 .shared .align 8 .b64 mb;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, resp; mov.u32 %r2, mb; mov.u32 %r9, %tid.x;
 setp.eq.u32 %p2, %r9, 0;
 st.shared.v4.u32 [%r1], {{%r9, %r9, %r9, %r9}};
 @%p2 mbarrier.init.shared::cta.b64 [%r2], 1;
 bar.sync 0;
 @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 16;
 @%p2 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
 @!%p1 bra WAIT;
 ld.shared.b128 %q, [%r1];
 clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q;
 clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {{%r3, %r4, %r5, _}}, %q;
 selp.u32 %r6, 1000, 7, %p1;
 add.u32 %r6, %r6, %r3; add.u32 %r6, %r6, %r4; add.u32 %r6, %r6, %r5;
 mul.wide.u32 %rd2, %r9, 4; add.u64 %rd2, %rd1, %rd2;
 st.global.u32 [%rd2], %r6;
 ret;
}}
"""


def _compiled(src: str, arch: str) -> tuple[bytes, bytes]:
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    return codegen.compile_ptx(src, arch), ref.output


@pytest.mark.parametrize("arch", ARCHS)
def test_try_cancel_as_ptxas(arch):
    """One UGETNEXTWORKID.SELFCAST as ptxas writes, and a failed request read back: 7 in
    every lane (not canceled, ctaid 0), ours and ptxas's cubin alike, 0 hazards in ours."""
    ours, theirs = _compiled(TRY_CANCEL.format(arch=arch), arch)
    shape = lambda c: re.findall(r"UGETNEXTWORKID\.\w+", oracle.nvdisasm(c, ()))   # noqa: E731
    assert shape(ours) == shape(theirs) == ["UGETNEXTWORKID.SELFCAST"]
    for cubin in (ours, theirs):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=cubin is ours)
        assert not res.hazards
        assert out.tolist() == [7] * 64


QUERY = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<6>; .reg .pred %p1; .reg .b128 %q;
 ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst];
 mov.u32 %r9, %tid.x;
 mul.wide.u32 %rd3, %r9, 16; add.u64 %rd4, %rd1, %rd3; add.u64 %rd5, %rd2, %rd3;
 ld.global.b128 %q, [%rd4];
 clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q;
 selp.u32 %r1, 1, 0, %p1;
 clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r2, %q;
 clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r3, %q;
 clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128 %r4, %q;
 st.global.v4.u32 [%rd5], {{%r1, %r2, %r3, %r4}};
 ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_query_cancel_reads_the_response_as_ptxas(arch):
    ours, theirs = _compiled(QUERY.format(arch=arch), arch)
    words = np.random.default_rng(5).integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    want = np.stack([words[:, 2] & 1, words[:, 0], words[:, 1] & 0xFFFF, words[:, 1] >> 16], axis=1)
    for cubin in (ours, theirs):
        out = np.zeros((32, 4), np.uint32)
        run(cubin, "k", 1, 32, [words.ravel().copy(), out.ravel()])
        got = out
        assert got.tolist() == want.tolist()
