"""A grid-stride loop of shared-memory atomics, scheduled as ptxas schedules it (issue 20
item 3; `histogram_smem` 1.05x ptxas's SM cycles before):

* pure arithmetic passes the atomic (sched.list_schedule's ATOMICS): the next index and its
  compare issue before ATOMS, in the load's shadow, not after it;
* the induction variable is updated in place: its next value is written after the old
  one's last read (sched.pre_schedule's tied copies), so no MOV copies it each iteration;
* the loop's YIELD goes after the load, not next to the back branch (both use the branch
  unit).

Expected order read off ptxas's cubin; results checked against ptxas's in the emulator."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

# `for (i = ctaid*ntid + tid; i < n; i += nctaid*ntid) atomicAdd(&local[v[i]], 1);` then
# each thread adds its word to the global histogram (nvcc's PTX, trimmed).
HISTOGRAM = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 v, .param .u64 hist, .param .u32 n)
{
 .reg .pred %p<3>; .reg .b16 %rs<2>; .reg .b32 %r<21>; .reg .b64 %rd<9>;
 .shared .align 4 .b8 local[1024];
 ld.param.u64 %rd2, [v];
 ld.param.u64 %rd3, [hist];
 ld.param.u32 %r8, [n];
 mov.u32 %r1, %tid.x;
 shl.b32 %r9, %r1, 2;
 mov.u32 %r10, local;
 add.s32 %r2, %r10, %r9;
 mov.u32 %r11, 0;
 st.shared.u32 [%r2], %r11;
 bar.sync 0;
 mov.u32 %r3, %ntid.x;
 mov.u32 %r12, %ctaid.x;
 mad.lo.s32 %r20, %r12, %r3, %r1;
 setp.ge.s32 %p1, %r20, %r8;
 @%p1 bra DONE;
 mov.u32 %r13, %nctaid.x;
 mul.lo.s32 %r5, %r13, %r3;
 cvta.to.global.u64 %rd1, %rd2;
LOOP:
 cvt.s64.s32 %rd4, %r20;
 add.s64 %rd5, %rd1, %rd4;
 ld.global.u8 %rs1, [%rd5];
 mul.wide.u16 %r14, %rs1, 4;
 add.s32 %r16, %r10, %r14;
 atom.shared.add.u32 %r17, [%r16], 1;
 add.s32 %r20, %r20, %r5;
 setp.lt.s32 %p2, %r20, %r8;
 @%p2 bra LOOP;
DONE:
 bar.sync 0;
 cvta.to.global.u64 %rd6, %rd3;
 mul.wide.u32 %rd7, %r1, 4;
 add.s64 %rd8, %rd6, %rd7;
 ld.shared.u32 %r18, [%r2];
 atom.global.add.u32 %r19, [%rd8], %r18;
 ret;
}
"""


def _loop(cubin: bytes) -> list[str]:
    """The instructions (opcode with modifiers) from a backward branch's target to it."""
    text = oracle.nvdisasm(cubin)
    label_at, rows, pending = {}, [], []
    for line in text.splitlines():
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4})\*/\s+(@!?P\d\s+)?([A-Z][A-Z0-9.]*)([^;]*);", line)
        if m:
            at = int(m.group(1), 16)
            for name in pending:
                label_at[name] = at
            pending = []
            rows.append((at, m.group(3), m.group(4)))
    for at, op, rest in rows:
        target = re.search(r"`\((\.L_x_\d+)\)", rest)
        if op == "BRA" and target and label_at.get(target.group(1), at) < at:
            return [o for a, o, _ in rows if label_at[target.group(1)] <= a <= at]
    raise AssertionError("no backward branch")


def _compiled():
    theirs = oracle.ptxas(HISTOGRAM, "sm_89")
    assert theirs.ok, theirs.stderr
    return codegen.compile_ptx(HISTOGRAM), theirs.output


def test_loop_order_is_ptxas_s():
    ours, theirs = _compiled()
    for cubin in (theirs, ours):            # ptxas's first: the premise
        body = _loop(cubin)
        ops = [op.split(".")[0] for op in body]
        assert ops.index("ISETP") < ops.index("ATOMS"), body     # the compare passes the atomic
        assert ops.index("LDG") < ops.index("YIELD"), body        # YIELD in the load's shadow
        assert ops[-2] != "YIELD", body
    # the induction variable updated in place: no register copy in the loop (ptxas's one
    # move reloads the stride from the constant bank)
    ours_body, theirs_body = _loop(ours), _loop(theirs)
    assert not any(op == "MOV" or op.startswith("IMAD.MOV") for op in ours_body), ours_body
    assert len(ours_body) <= len(theirs_body), (ours_body, theirs_body)


def test_loop_counts_what_ptxas_counts():
    ours, theirs = _compiled()
    rng = np.random.default_rng(23)
    v = rng.integers(0, 256, 5000).astype(np.uint8)
    results = []
    for cubin in (ours, theirs):
        hist = np.zeros(256, np.uint32)
        run(cubin, "k", 3, 256, [v.copy(), hist, np.uint32(5000)])
        results.append(hist)
    np.testing.assert_array_equal(*results)
    np.testing.assert_array_equal(results[0], np.bincount(v, minlength=256))
