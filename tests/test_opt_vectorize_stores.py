"""Adjacent 32-bit stores to a kernel's own shared variable merged into STS.64/STS.128
(opt/vectorize_stores.py), as ptxas writes an unrolled prefix table (real-world bits_hash
rank_select: `prefix[w] = s; s += __popc(bits[w])` for 128 words, 129 STS in ours, 33 in
ptxas's with STS.128: 637 instructions against 522). The variable is declared `.align 4`
(NVVM's), so the alignment comes from where the layout puts it. The values of a vector
store are copied into a group of four registers after an IMPLICIT_DEF; the capped
pre-scheduler counted the whole group at the IMPLICIT_DEF, so it issued every load before
the copies (sched/pre_schedule.py PARTS_IN_CAP: rank_select 2605 -> 4305 single-warp cycles
without it). Stores that may not be merged (a shared load of a stored word in between, a
word stored twice, an address off the vector's alignment) keep their order: each kernel
must compute what ptxas's cubin computes, hazard-checked."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _prefix_ptx(words: int) -> str:
    """Thread 0 writes `words + 1` running popcount sums to t[], unrolled as NVVM does; then
    every thread reads t[tid] (and t[tid + 1]) and writes their xor out."""
    body = []
    for w in range(words):
        body.append(f"st.shared.u32 [t+{4 * w}], %s{w};")
        body.append(f"ld.global.u32 %v{w}, [%rd1+{4 * w}];")
        body.append(f"popc.b32 %c{w}, %v{w};")
        body.append(f"add.s32 %s{w + 1}, %c{w}, %s{w};")
    body.append(f"st.shared.u32 [t+{4 * words}], %s{words};")
    return HEADER + f""".visible .entry k(.param .u64 a, .param .u64 o)
{{
.shared .align 4 .b8 t[{4 * words + 4}];
.reg .pred %p<2>; .reg .u32 %r<9>; .reg .u32 %s<{words + 2}>; .reg .u32 %v<{words + 1}>;
.reg .u32 %c<{words + 1}>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra DONE;
mov.u32 %s0, 0;
{chr(10).join(body)}
DONE:
bar.sync 0;
mov.u32 %r2, t;
shl.b32 %r3, %r1, 2;
add.u32 %r4, %r2, %r3;
ld.shared.u32 %r5, [%r4];
ld.shared.u32 %r6, [%r4+4];
xor.b32 %r7, %r5, %r6;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r7;
ret;
}}
"""


def _stores(cubin: bytes) -> list[str]:
    return re.findall(r"\bSTS(?:\.\d+)?\b", oracle.nvdisasm(cubin))


def _launch(cubin: bytes, words: int, threads: int, check: bool):
    rng = np.random.default_rng(words)
    data = rng.integers(0, 1 << 32, words, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(threads, dtype=np.uint32)
    result = run(cubin, "k", 1, threads, [data, out], hazard_check=True)
    if check:
        assert result.hazards == []
    return out, result.cycles


@pytest.mark.parametrize("words", [16, 128])
def test_prefix_table_stores_are_vectors_as_in_ptxas(words):
    ptx = _prefix_ptx(words)
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx)
    assert "STS.128" in _stores(theirs.output)                 # the premise
    assert len(_stores(ours)) <= len(_stores(theirs.output)), (_stores(ours), _stores(theirs.output))
    mine, my_cycles = _launch(ours, words, words, True)
    ref, their_cycles = _launch(theirs.output, words, words, False)
    np.testing.assert_array_equal(mine, ref)
    # the loads stay in flight ahead of the copies into the store's registers
    assert my_cycles <= 1.10 * their_cycles, (my_cycles, their_cycles)


# Thread 0 stores four words; a shared load of the first (or a second store to it, or a
# misaligned start) sits between them. Every thread reads t[tid & 7] back.
CASES = {
    "load_between": ("st.shared.u32 [t], %r10;\nld.shared.u32 %r20, [t];\nadd.u32 %r11, %r11, %r20;\n"
                     "st.shared.u32 [t+4], %r11;\nst.shared.u32 [t+8], %r12;\nst.shared.u32 [t+12], %r13;"),
    "stored_twice": ("st.shared.u32 [t], %r10;\nst.shared.u32 [t+4], %r11;\nst.shared.u32 [t], %r12;\n"
                     "st.shared.u32 [t+8], %r12;\nst.shared.u32 [t+12], %r13;"),
    "misaligned": ("st.shared.u32 [t+4], %r10;\nst.shared.u32 [t+8], %r11;\nst.shared.u32 [t+12], %r12;\n"
                   "st.shared.u32 [t+16], %r13;"),
    "second_variable": ("st.shared.u32 [u], %r10;\nst.shared.u32 [u+4], %r11;\nst.shared.u32 [u+8], %r12;\n"
                        "st.shared.u32 [u+12], %r13;\nst.shared.u32 [u+16], %r10;"),
}


def _case_ptx(stores: str) -> str:
    return HEADER + f""".visible .entry k(.param .u64 a, .param .u64 o)
{{
.shared .align 4 .b8 pad[4];
.shared .align 4 .b8 t[32];
.shared .align 4 .b8 u[20];
.reg .pred %p<2>; .reg .u32 %r<30>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
mov.u32 %r1, %tid.x;
st.shared.u32 [pad], %r1;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra DONE;
st.shared.u32 [t+16], %r1;
st.shared.u32 [t+20], %r1;
st.shared.u32 [t+24], %r1;
st.shared.u32 [t+28], %r1;
ld.global.u32 %r10, [%rd1];
ld.global.u32 %r11, [%rd1+4];
ld.global.u32 %r12, [%rd1+8];
ld.global.u32 %r13, [%rd1+12];
{stores}
DONE:
bar.sync 0;
and.b32 %r2, %r1, 7;
shl.b32 %r3, %r2, 2;
mov.u32 %r4, t;
add.u32 %r5, %r4, %r3;
ld.shared.u32 %r6, [%r5];
and.b32 %r7, %r1, 3;
shl.b32 %r8, %r7, 2;
mov.u32 %r9, u;
add.u32 %r14, %r9, %r8;
ld.shared.u32 %r15, [%r14];
xor.b32 %r16, %r6, %r15;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd2, %rd3;
st.global.u32 [%rd4], %r16;
ret;
}}
"""


@pytest.mark.parametrize("case", sorted(CASES))
def test_stores_that_may_not_merge_compute_what_ptxas_computes(case):
    ptx = _case_ptx(CASES[case])
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx)
    mine, _ = _launch(ours, 4, 32, True)
    ref, _ = _launch(theirs.output, 4, 32, False)
    np.testing.assert_array_equal(mine, ref)
