"""YIELD at the top of the PTX's loops that hold an atomic (ptx2sass/loop_yield.py), where
ptxas puts one: a CAS spin lock and a loop of `red` get one; a loop of volatile loads, a
loop of plain loads and the CAS loop made for a 16-bit `atom.cas` get none. The count per
kernel is compared with ptxas's."""
from __future__ import annotations

import re

import pytest

from ptx2sass import codegen, oracle

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

# A loop of 32-lane strides over a histogram of 16 words; {op} is its one memory operation.
_COUNTED_LOOP = """.visible .entry k(.param .u64 h, .param .u32 n)
{{
.reg .pred %p<2>; .reg .u32 %r<6>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [h];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
LOOP:
and.b32 %r3, %r2, 15;
mul.wide.u32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
{op}
add.u32 %r2, %r2, 32;
setp.lt.u32 %p1, %r2, %r1;
@%p1 bra LOOP;
ret;
}}"""

KERNELS = {
    "spin_lock": """.visible .entry k(.param .u64 lock, .param .u64 data)
{
.reg .pred %p<2>; .reg .u32 %r<6>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [lock];
ld.param.u64 %rd2, [data];
SPIN:
atom.global.cas.b32 %r1, [%rd1], 0, 1;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra SPIN;
ld.volatile.global.u32 %r2, [%rd2];
add.u32 %r3, %r2, 1;
st.volatile.global.u32 [%rd2], %r3;
atom.global.exch.b32 %r4, [%rd1], 0;
ret;
}""",
    "red_loop": _COUNTED_LOOP.format(op="red.global.add.u32 [%rd3], 1;"),
    "atom_loop": _COUNTED_LOOP.format(op="atom.global.add.u32 %r4, [%rd3], 1;"),   # result unused
    "volatile_spin": """.visible .entry k(.param .u64 flag)
{
.reg .pred %p<2>; .reg .u32 %r<4>; .reg .u64 %rd<3>;
ld.param.u64 %rd1, [flag];
WAIT:
ld.volatile.global.u32 %r1, [%rd1];
setp.eq.u32 %p1, %r1, 0;
@%p1 bra WAIT;
st.global.u32 [%rd1+4], %r1;
ret;
}""",
    "cas16": """.visible .entry k(.param .u64 p)
{
.reg .u64 %rd<3>; .reg .b16 %h<4>;
ld.param.u64 %rd1, [p];
mov.b16 %h1, 5;
atom.global.cas.b16 %h2, [%rd1], %h1, 7;
st.global.b16 [%rd1+8], %h2;
ret;
}""",
}


@pytest.mark.parametrize("name", KERNELS)
def test_yields_where_ptxas_puts_them(name):
    ptx = HEADER + KERNELS[name]
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    count = lambda cubin: len(re.findall(r"\bYIELD\b", oracle.nvdisasm(cubin)))   # noqa: E731
    assert count(codegen.compile_ptx(ptx)) == count(theirs.output)
