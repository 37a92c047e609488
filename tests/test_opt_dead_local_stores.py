"""Dead stores into `.local` variables (ptx2sass/opt/dead_local_stores.py): a variable only
written goes with its stores and its stack frame, as ptxas's does; one that is read, whose
address escapes, or that an access of unknown origin might reach keeps every store, and
the kernel computes what ptxas's cubin computes."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

WRITE_ONLY = HEADER + """.visible .entry k(.param .u64 p)
{
.local .align 4 .b8 arr[16];
.reg .u32 %r<4>; .reg .u64 %rd<4>;
ld.param.u64 %rd1, [p];
ld.global.u32 %r1, [%rd1];
st.local.u32 [arr], %r1;
st.local.u32 [arr+4], %r1;
mov.u64 %rd2, arr;
add.u64 %rd3, %rd2, 8;
st.local.u32 [%rd3], %r1;
add.u32 %r2, %r1, 1;
st.global.u32 [%rd1], %r2;
ret;
}
"""


def _frame(cubin: bytes) -> int:
    return next(k.frame_size for k in read_cubin(cubin).kernels if k.name == "k")


def _ptxas(ptx: str) -> bytes:
    result = oracle.ptxas(ptx, "sm_89")
    assert result.ok, result.stderr
    return result.output


def test_write_only_local_array_goes_with_its_frame_as_in_ptxas():
    ours, theirs = codegen.compile_ptx(WRITE_ONLY), _ptxas(WRITE_ONLY)
    assert _frame(ours) == _frame(theirs) == 0
    data = np.array([41], np.uint32)
    run(ours, "k", 1, 1, [data])
    assert data[0] == 42


# A local array read at a thread-dependent index (so it cannot live in registers): stores
# are live. Variants: read back directly, through a generic address (cvta), after a loop
# whose address is a phi, and where a store's value is the array's own address.
READ_BACK = HEADER + """.visible .entry k(.param .u64 p)
{{
.local .align 4 .b8 arr[64];
.reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .pred %q;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
ld.global.u32 %r2, [%rd3];
mov.u64 %rd4, arr;
mov.u32 %r3, 0;
LOOP:
st.local.u32 [%rd4], %r2;
add.u32 %r2, %r2, 3;
add.u64 %rd4, %rd4, 4;
add.u32 %r3, %r3, 1;
setp.lt.u32 %q, %r3, 16;
@%q bra LOOP;
and.b32 %r4, %r1, 15;
mul.wide.u32 %rd5, %r4, 4;
mov.u64 %rd6, arr;
add.u64 %rd6, %rd6, %rd5;
{read}
st.global.u32 [%rd3], %r5;
ret;
}}
"""
READS = {
    "direct": "ld.local.u32 %r5, [%rd6];",
    "generic": "cvta.local.u64 %rd7, %rd6;\nld.u32 %r5, [%rd7];",
}


@pytest.mark.parametrize("how", sorted(READS))
def test_read_local_array_keeps_its_stores(how):
    ptx = READ_BACK.format(read=READS[how])
    ours, theirs = codegen.compile_ptx(ptx), _ptxas(ptx)
    data = (np.arange(32, dtype=np.uint32) * 7 + 1)
    outs = []
    for cubin in (ours, theirs):
        out = data.copy()
        run(cubin, "k", 1, 32, [out])
        outs.append(out)
    t = np.arange(32)
    np.testing.assert_array_equal(outs[1], data + 3 * (t & 15))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_address_round_trip_through_memory_keeps_the_stores():
    """The array's generic address goes to global memory and comes back as a pointer the
    thread then reads through: the stores are live (the load's address is of unknown
    origin), and the kernel reads what ptxas's cubin reads."""
    ptx = WRITE_ONLY.replace("st.global.u32 [%rd1], %r2;",
                             "cvta.local.u64 %rd3, %rd2;\nst.volatile.global.u64 [%rd1+8], %rd3;\n"
                             "ld.volatile.global.u64 %rd3, [%rd1+8];\nld.u32 %r3, [%rd3+4];\n"
                             "add.u32 %r2, %r2, %r3;\nst.global.u32 [%rd1], %r2;")
    outs = []
    for cubin in (codegen.compile_ptx(ptx), _ptxas(ptx)):
        data = np.array([41, 0, 0, 0], np.uint32)
        run(cubin, "k", 1, 1, [data])
        outs.append(int(data[0]))
    assert outs == [83, 83]
