"""Stores of zeros take RZ as their data at every width (`STS.128 [R], RZ`, as ptxas writes
them): ours used to build four zero registers for each `st.v4` of zeros (cuda corpus
`local_histogram` zeroes its local array that way)."""
from __future__ import annotations

import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{
.local .align 16 .b8 arr[64];
.shared .align 16 .b8 sh[512];
.reg .u32 %r<10>; .reg .u64 %rd<6>; .reg .u16 %h<3>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, 0;
mov.u32 %r2, %tid.x;
shl.b32 %r3, %r2, 4;
mov.u32 %r4, sh;
add.u32 %r5, %r4, %r3;
st.shared.v4.u32 [%r5], {%r1, %r1, %r1, %r1};
st.shared.v2.u32 [%r5+128], {%r1, %r1};
st.shared.u64 [%r5+136], 0;
mov.u16 %h1, 0;
st.shared.v2.u16 [%r5+144], {%h1, %h1};
st.shared.v4.u16 [%r5+152], {%h1, %h1, %h1, %h1};
bar.sync 0;
ld.shared.u32 %r6, [%r5];
ld.shared.u32 %r7, [%r5+132];
add.u32 %r6, %r6, %r7;
ld.shared.u32 %r7, [%r5+152];
add.u32 %r6, %r6, %r7;
mul.wide.u32 %rd2, %r2, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r6;
mov.u64 %rd4, 0;
st.global.v2.u64 [%rd1+1024], {%rd4, %rd4};
ret;
}
"""


def _stores(cubin: bytes) -> list[str]:
    return re.findall(r"\b(ST[SGL](?:\.E)?(?:\.\w+)?) \[[^]]*\], (\w+) ;", oracle.nvdisasm(cubin))


def test_zero_stores_use_rz_as_in_ptxas():
    theirs = oracle.ptxas(KERNEL, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(KERNEL)
    zeros = lambda cubin: [(op, data) for op, data in _stores(cubin) if data == "RZ"]   # noqa: E731
    assert zeros(ours) == zeros(theirs.output)
    assert sum(data == "RZ" for _, data in _stores(ours)) == 6
    results = []
    for cubin in (ours, theirs.output):
        data = np.full(512, 0xDEADBEEF, dtype=np.uint32)
        run(cubin, "k", 1, 8, [data])
        results.append(data)
    np.testing.assert_array_equal(*results)
