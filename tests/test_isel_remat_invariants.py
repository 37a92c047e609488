"""isel/remat_invariants.py: in a loop needing more registers than the pressure limit, cheap
loop invariants are recomputed next to their readers instead of held across the loop.

Expected form: ptxas's own loop in Triton's matmul_masked ORs the row index with 4..24
inside the loop (ptxas's cubin is checked for it first). Results: ptxas's cubin in the
emulator and NumPy, on a small kernel compiled with the limit lowered so the pass fires on
a loop of several blocks (a guarded path inside the loop, an invariant also read after it)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.isel import remat_invariants as remat

MATMUL_MASKED = Path(__file__).parent / "corpus" / "triton" / "matmul_masked.ptx"


def _loop_body(cubin: bytes) -> list[str]:
    """The instructions from the label a later branch jumps back to, to that branch."""
    seen: dict[str, int] = {}
    body: list[str] = []
    for line in oracle.nvdisasm(cubin).splitlines():
        label = re.match(r"^(\.L_x_\d+):", line)
        if label:
            seen[label.group(1)] = len(body)
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", line)
        if not m:
            continue
        body.append(re.sub(r"\s+", " ", m.group(1)).strip())
        back = re.search(r"BRA `\((\.L_x_\d+)\)", body[-1])
        if back and back.group(1) in seen:
            return body[seen[back.group(1)]:]
    return []


def test_matmul_masked_row_indices_are_recomputed_in_the_loop():
    src = MATMUL_MASKED.read_text()
    theirs = oracle.ptxas(src, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(src, "sm_89")
    want = {4, 8, 12, 16, 20, 24}
    for cubin in (theirs.output, ours):        # ptxas's first: the premise
        body = _loop_body(cubin)
        ors = {int(m.group(1), 16) for t in body
               for m in [re.match(r"LOP3\.LUT R\d+, R\d+, (0x[0-9a-f]+), RZ, 0xfc, !PT$", t)] if m}
        assert want <= ors, body


SMALL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u32 n)
{
 .reg .b32 %r<40>; .reg .b64 %rd<16>; .reg .pred %p<6>;
 ld.param.u64 %rd1, [p];
 ld.param.u64 %rd2, [q];
 ld.param.u32 %r9, [n];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 2;
 or.b32 %r3, %r2, 64;
 or.b32 %r4, %r2, 128;
 xor.b32 %r5, %r2, 7;
 shl.b32 %r6, %r9, 3;
 add.s32 %r7, %r2, 5;
 mov.b32 %r10, 0;
 mov.b32 %r11, 0;
LOOP:
 mul.wide.u32 %rd3, %r11, 4;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r12, [%rd4];
 mad.lo.s32 %r13, %r12, %r3, %r4;
 and.b32 %r14, %r12, 1;
 setp.eq.s32 %p1, %r14, 0;
 @%p1 bra SKIP;
 mad.lo.s32 %r13, %r13, %r5, %r6;
 xor.b32 %r13, %r13, %r4;
SKIP:
 add.s32 %r10, %r10, %r13;
 add.s32 %r11, %r11, 1;
 setp.lt.u32 %p2, %r11, %r9;
 @%p2 bra LOOP;
 add.s32 %r10, %r10, %r7;
 mul.wide.u32 %rd5, %r1, 4;
 add.s64 %rd6, %rd2, %rd5;
 st.global.u32 [%rd6], %r10;
 ret;
}
"""


def test_recomputed_invariants_compute_what_ptxas_computes(monkeypatch):
    copies = []
    original = remat._copy_into_readers
    monkeypatch.setattr(remat, "_copy_into_readers", lambda *a: (copies.append(a[1]), original(*a)))
    monkeypatch.setattr(remat, "LIMIT", 2)
    # the loop of several blocks this test needs: copied 4 times per exit test (as ptxas does,
    # opt/runtime_unroll.py), its guarded path is if-converted into one block, and the
    # remainders after the copies read r3..r6 too: read outside the loop, they are no candidates
    from ptx2sass.opt import runtime_unroll
    monkeypatch.setattr(runtime_unroll, "ENABLED", False)
    ours = codegen.compile_ptx(SMALL, "sm_89")
    assert len(copies) >= 3, copies        # r3, r4, r5 (and r6) are copied into the loop
    theirs = oracle.ptxas(SMALL, "sm_89")
    assert theirs.ok, theirs.stderr
    rng = np.random.default_rng(24)
    n = 37
    data = rng.integers(0, 1 << 20, 64).astype(np.uint32)
    tid = np.arange(96, dtype=np.uint64)
    row = tid >> 2
    acc = np.zeros(96, np.uint64)
    for i in range(n):
        x = np.uint64(data[i])
        t = (x * (row | 64) + (row | 128)) & 0xFFFFFFFF
        if x & 1:
            t = ((t * (row ^ 7) + np.uint64(n << 3)) & 0xFFFFFFFF) ^ (row | 128)
        acc = (acc + t) & 0xFFFFFFFF
    expect = ((acc + row + 5) & 0xFFFFFFFF).astype(np.uint32)
    results = []
    for cubin in (ours, theirs.output):
        out = np.zeros(96, np.uint32)
        run(cubin, "k", 1, 96, [data.copy(), out, np.uint32(n)])
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], expect)
