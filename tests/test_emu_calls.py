"""Calls inside divergent code, as ptxas compiles them, in the emulator's explicit
reconvergence mode: a recursive callee has convergence regions of its own on the barrier
its caller is waiting on (ptxas saves the caller's mask with `BMOV.32.CLEAR Rs, Bk` on
entry and restores it with `BMOV.32 Bk, Rs` before RET), so barrier masks must be per lane
and a BSYNC must wait for its own barrier's members only (emu/machine.py). Each kernel's
reference is NumPy's; both ptxas's cubin and ours must give it with no hazards."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

# fib by double recursion; called by lanes < 20, a shuffle after the region.
FIB_IN_REGION = HEADER + """
.func (.reg .u32 r) f(.reg .u32 n)
{
  .reg .pred %p; .reg .u32 %t<4>;
  setp.lt.u32 %p, n, 2;
  @%p bra done;
  sub.u32 %t1, n, 1;
  call (%t2), f, (%t1);
  sub.u32 %t1, n, 2;
  call (%t3), f, (%t1);
  add.u32 r, %t2, %t3;
  ret;
done:
  mov.u32 r, n;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<8>; .reg .pred %q;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  mov.u32 %r2, 0;
  setp.lt.u32 %q, %r1, 20;
  @!%q bra skip;
  and.b32 %r3, %r1, 7;
  call (%r2), f, (%r3);
skip:
  shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
  add.u32 %r5, %r4, %r2;
  st.global.u32 [%a2], %r5;
  ret;
}
"""


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _fib_in_region():
    v = np.array([_fib(t & 7) if t < 20 else 0 for t in range(32)], np.uint32)
    return v + v[np.arange(32) ^ 1]


# A recursive callee with a loop that lanes leave early (BREAK) and a divergent `if`,
# called from both sides of an if/else in the kernel; a ballot after.
LOOP_IN_CALLEE = HEADER + """
.func (.reg .u32 r) g(.reg .u32 n, .reg .u32 s)
{
  .reg .pred %p<3>; .reg .u32 %t<6>;
  mov.u32 %t0, 0;
  mov.u32 %t1, 0;
LOOP:
  add.u32 %t0, %t0, %t1;
  xor.b32 %t0, %t0, s;
  add.u32 %t1, %t1, 1;
  and.b32 %t2, %t0, 3;
  setp.eq.u32 %p0, %t2, 0;
  @%p0 bra OUT;
  setp.lt.u32 %p1, %t1, n;
  @%p1 bra LOOP;
OUT:
  setp.eq.u32 %p2, n, 0;
  @%p2 bra BASE;
  sub.u32 %t3, n, 1;
  mul.lo.u32 %t4, s, 3;
  call (%t5), g, (%t3, %t4);
  add.u32 r, %t5, %t0;
  ret;
BASE:
  mov.u32 r, %t0;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<10>; .reg .pred %q<3>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  and.b32 %r3, %r1, 3;
  setp.lt.u32 %q0, %r1, 12;
  @%q0 bra LOW;
  add.u32 %r6, %r1, 5;
  call (%r2), g, (%r3, %r6);
  bra JOIN;
LOW:
  shr.u32 %r5, %r1, 1;
  call (%r2), g, (%r5, %r1);
  add.u32 %r2, %r2, 1000;
JOIN:
  and.b32 %r7, %r2, 1;
  setp.ne.u32 %q1, %r7, 0;
  vote.sync.ballot.b32 %r8, %q1, -1;
  add.u32 %r9, %r2, %r8;
  st.global.u32 [%a2], %r9;
  ret;
}
"""


def _g(n, s):
    m = 0xFFFFFFFF
    t0 = t1 = 0
    while True:
        t0 = ((t0 + t1) & m) ^ s
        t1 += 1
        if t0 & 3 == 0 or not t1 < n:
            break
    if n == 0:
        return t0
    return (_g(n - 1, (s * 3) & m) + t0) & m


def _loop_in_callee():
    v = [(_g(t >> 1, t) + 1000) if t < 12 else _g(t & 3, t + 5) for t in range(32)]
    v = np.array(v, np.uint32)
    ballot = int(sum(1 << t for t in range(32) if v[t] & 1))
    return v + np.uint32(ballot)


# Mutual recursion reached through a function pointer from a divergent loop (each lane
# runs its own trip count); a shuffle inside the loop's convergent tail after the loop.
POINTER_IN_LOOP = HEADER + """
.func (.reg .u32 r) odd(.reg .u32 n);
.func (.reg .u32 r) even(.reg .u32 n)
{
  .reg .pred %p; .reg .u32 %t<3>;
  setp.eq.u32 %p, n, 0;
  @%p bra YES;
  sub.u32 %t0, n, 1;
  call (%t1), odd, (%t0);
  mov.u32 r, %t1;
  ret;
YES:
  mov.u32 r, 1;
  ret;
}
.func (.reg .u32 r) odd(.reg .u32 n)
{
  .reg .pred %p; .reg .u32 %t<3>;
  setp.eq.u32 %p, n, 0;
  @%p bra NO;
  sub.u32 %t0, n, 1;
  call (%t1), even, (%t0);
  mov.u32 r, %t1;
  ret;
NO:
  mov.u32 r, 0;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<10>; .reg .pred %q<2>; .reg .u64 %fp;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  mov.u64 %fp, even;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
  and.b32 %r4, %r1, 3;
LOOP:
  add.u32 %r5, %r1, %r3;
  proto: .callprototype (.reg .u32 _) _ (.reg .u32 _);
  call (%r6), %fp, (%r5), proto;
  shl.b32 %r6, %r6, %r3;
  add.u32 %r2, %r2, %r6;
  add.u32 %r3, %r3, 1;
  setp.le.u32 %q0, %r3, %r4;
  @%q0 bra LOOP;
  shfl.sync.down.b32 %r7, %r2, 2, 31, -1;
  mul.lo.u32 %r8, %r7, 100;
  add.u32 %r9, %r8, %r2;
  st.global.u32 [%a2], %r9;
  ret;
}
"""


def _pointer_in_loop():
    v = np.array([sum(((t + i + 1) % 2) << i for i in range((t & 3) + 1)) for t in range(32)], np.uint32)
    down = np.where(np.arange(32) + 2 < 32, v[np.minimum(np.arange(32) + 2, 31)], v)
    return down * 100 + v


# A collective inside a recursive callee after a divergent `if` (called by the whole warp):
# the function's own regions make its lanes meet before the shuffle and before they return.
SHUFFLE_IN_CALLEE = HEADER + """
.func (.reg .u32 r) h(.reg .u32 n, .reg .u32 x)
{
  .reg .pred %p<3>; .reg .u32 %t<6>;
  and.b32 %t0, x, 1;
  setp.ne.u32 %p0, %t0, 0;
  @%p0 bra ODD;
  add.u32 %t1, x, 7;
  bra J;
ODD:
  mul.lo.u32 %t1, x, 3;
J:
  shfl.sync.bfly.b32 %t2, %t1, 1, 31, -1;
  add.u32 %t3, %t2, %t1;
  setp.eq.u32 %p1, n, 0;
  @%p1 bra BASE;
  sub.u32 %t4, n, 1;
  call (%t5), h, (%t4, %t3);
  mov.u32 r, %t5;
  ret;
BASE:
  mov.u32 r, %t3;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<10>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  call (%r2), h, (3, %r1);
  shfl.sync.idx.b32 %r3, %r2, 5, 31, -1;
  xor.b32 %r4, %r3, %r2;
  st.global.u32 [%a2], %r4;
  ret;
}
"""


def _shuffle_in_callee():
    x = np.arange(32, dtype=np.uint32)
    for _ in range(4):
        t1 = np.where(x & 1, x * 3, x + 7).astype(np.uint32)
        x = (t1 + t1[np.arange(32) ^ 1]).astype(np.uint32)
    return x ^ x[5]


CASES = {
    "fib_in_region": (FIB_IN_REGION, _fib_in_region),
    "loop_in_callee": (LOOP_IN_CALLEE, _loop_in_callee),
    "pointer_in_loop": (POINTER_IN_LOOP, _pointer_in_loop),
    "shuffle_in_callee": (SHUFFLE_IN_CALLEE, _shuffle_in_callee),
}


def _ptxas_cubin(ptx: str) -> bytes:
    r = oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _launch(cubin: bytes, mode: str):
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", 1, 32, [out], hazard_check=True, reconverge=mode)
    return out, res


@pytest.mark.parametrize("mode", ["explicit", "optimistic"])
@pytest.mark.parametrize("name", CASES)
def test_ptxas_calls_in_divergent_code_run_right(name, mode):
    ptx, reference = CASES[name]
    out, res = _launch(_ptxas_cubin(ptx), mode)
    np.testing.assert_array_equal(out, reference())
    assert res.convergence_hazards == [], [str(h) for h in res.convergence_hazards]


@pytest.mark.parametrize("name", CASES)
def test_our_calls_in_divergent_code_run_right(name):
    ptx, reference = CASES[name]
    out, res = _launch(codegen.compile_ptx(ptx), "explicit")
    np.testing.assert_array_equal(out, reference())
    assert res.hazards == [] and res.convergence_hazards == [], \
        [str(h) for h in res.hazards + res.convergence_hazards][:3]


def _barriers(cubin: bytes) -> dict[str, list[str]]:
    """Per function of the listing, its convergence-barrier instructions in order."""
    out: dict[str, list[str]] = {}
    current = None
    for line in oracle.nvdisasm(cubin, ()).splitlines():
        if re.match(r"^[$\w]+:$", line) and not line.startswith(".") and line != ".text.k:":
            current = out.setdefault(line[:-1], [])
        m = re.search(r"\*/\s+(BSSY|BSYNC|BMOV\S*|BREAK)\s+(?:R\d+, )?(B\d+)", line)
        if m and current is not None:
            current.append(f"{m.group(1)} {m.group(2)}")
    return out


# (ptxas turns SHUFFLE_IN_CALLEE's small if/else into predicated code; we branch, B0)
@pytest.mark.parametrize("name", [n for n in CASES if n != "shuffle_in_callee"])
def test_barriers_around_calls_as_ptxas(name):
    """Regions with a call inside on B6 up (innermost lowest), the others from B0; a function
    with regions on B6.. keeps its caller's with BMOV.32.CLEAR / BMOV.32 (ptxas's own
    subroutines, such as its shuffle slow path, left out)."""
    ptx, _ = CASES[name]
    ours = _barriers(codegen.compile_ptx(ptx))
    theirs = {f: seq for f, seq in _barriers(_ptxas_cubin(ptx)).items() if f in ours}
    assert ours == theirs
