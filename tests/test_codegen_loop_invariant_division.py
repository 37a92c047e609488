"""A division by a loop-invariant divisor computes the divisor's reciprocal estimate (I2F.RP,
MUFU.RCP, F2I, a Newton step) once before the loop, as ptxas does, not on every iteration
(ptx2sass/isel/loop_invariants.py). Results against NumPy and ptxas's cubin; the MUFU.RCP's
place against the loop's back edge in both listings."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n, .param .u32 trips)
{{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
ld.param.u32 %r2, [trips];
mov.u32 %r3, %tid.x;
mov.u32 %r4, 0;
mov.u32 %r5, 0;
setp.eq.s32 %p1, %r2, 0;
@%p1 bra $DONE;
$LOOP:
add.s32 %r6, %r3, %r5;
{op}.{ty} %r7, %r6, {divisor};
add.s32 %r4, %r4, %r7;
add.s32 %r5, %r5, 1;
setp.lt.u32 %p2, %r5, %r2;
@%p2 bra $LOOP;
$DONE:
mul.wide.u32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r4;
ret;
}}
"""

CASES = [("rem", "u32", "%r1"), ("div", "s32", "%r1"), ("rem", "s32", "%r1")]
THREADS, TRIPS = 64, 9


def _reference(op, ty, n):
    tid = np.arange(THREADS, dtype=np.int64)
    acc = np.zeros(THREADS, dtype=np.int64)
    for i in range(TRIPS):
        x = tid + i
        if n == 0:
            q = np.full(THREADS, 0xFFFFFFFF, dtype=np.int64)
        elif ty == "u32":
            q = x % n if op == "rem" else x // n
        else:   # C's truncating division (x >= 0 here; n may be negative)
            q = np.sign(x) * np.sign(n) * (np.abs(x) // abs(n))
            if op == "rem":
                q = x - q * n
        acc += q
    return (acc & 0xFFFFFFFF).astype(np.uint32)


def _compile(op, ty, divisor):
    ptx = PTX.format(op=op, ty=ty, divisor=divisor)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]
    return ptx, ours, oracle.ptxas(ptx, "sm_89").output


def _launch(cubin, n):
    out = np.zeros(THREADS, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, np.uint32(n & 0xFFFFFFFF), np.uint32(TRIPS)],
              hazard_check=True)
    return out, res


@pytest.mark.parametrize("op,ty,divisor", CASES)
@pytest.mark.parametrize("n", [7, 1, 64, 0xFFFFFFF9, 0])
def test_results_are_numpy_s_and_ptxas_s(op, ty, divisor, n):
    _, ours, theirs = _compile(op, ty, divisor)
    got, res = _launch(ours, n)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    want, _ = _launch(theirs, n)
    assert got.tobytes() == want.tobytes()
    if n != 0:
        signed_n = n - (1 << 32) if ty == "s32" and n >> 31 else n
        np.testing.assert_array_equal(got, _reference(op, ty, signed_n))


def _rcp_before_back_edge(cubin) -> bool:
    lines = oracle.nvdisasm(cubin, options=()).splitlines()
    addr = {}
    rcp, back_target = None, None
    for line in lines:
        m = re.search(r"/\*([0-9a-f]{4})\*/\s+(.*?);", line)
        if not m:
            continue
        pc = int(m.group(1), 16)
        text = m.group(2)
        if "MUFU.RCP" in text and rcp is None:
            rcp = pc
        b = re.search(r"BRA `?\(?\.L_x_(\d+)", text)
        if b:
            addr.setdefault("bras", []).append((pc, b.group(1)))
    labels = {}
    for k, line in enumerate(lines):
        lab = re.match(r"\s*\.L_x_(\d+):", line)
        if lab:
            for nxt in lines[k + 1:]:
                m = re.search(r"/\*([0-9a-f]{4})\*/", nxt)
                if m:
                    labels[lab.group(1)] = int(m.group(1), 16)
                    break
    for pc, name in addr.get("bras", []):
        if name in labels and labels[name] < pc:        # a backward branch: the loop's
            back_target = labels[name]                  # (not the final self-branch)
    assert rcp is not None and back_target is not None
    return rcp < back_target


@pytest.mark.parametrize("op,ty,divisor", CASES)
def test_the_reciprocal_is_computed_before_the_loop_as_in_ptxas(op, ty, divisor):
    _, ours, theirs = _compile(op, ty, divisor)
    assert _rcp_before_back_edge(theirs)
    assert _rcp_before_back_edge(ours)
