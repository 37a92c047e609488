"""A strong store passes an earlier plain store whose bytes it cannot overlap
(sched/memory_order.py `strong_store`): a weak store orders nothing for other threads, and
ptxas issues `.wb`/`.cg`/`.wt` stores (STG.E.STRONG.SM/GPU/SYS), `.relaxed` and `.volatile`
ones before the plain store of a sum of loads (real-world intrinsics_misc k_ldcv: ours kept
the program order, SM 1.33x ptxas). Strong stores keep their order among themselves, and one
that overlaps the plain store stays after it. Outputs = ptxas's, no hazards, the stores in
ptxas's order."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run


def _ptx(arch: str, kinds: tuple[str, str, str], first: int = 4) -> str:
    a, b, c = kinds
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1)
{{
.reg .b32 %r<9>; .reg .b64 %rd<9>;
ld.param.u64 %rd7, [p0];
ld.param.u64 %rd1, [p1];
cvta.to.global.u64 %rd8, %rd7;
ld.global.cv.s32 %r1, [%rd1];
ld.global.lu.s32 %r2, [%rd1+4];
add.s32 %r7, %r2, %r1;
st.global.u32 [%rd8], %r7;
st.global{a}.s32 [%rd8+{first}], 3;
st.global{b}.s32 [%rd8+8], 4;
st.global{c}.s32 [%rd8+12], 5;
ret;
}}
"""


KINDS = {"cache_operators": (".wb", ".cg", ".wt"), "relaxed": (".relaxed.cta", ".relaxed.gpu", ".relaxed.sys"),
         "volatile": (".volatile",) * 3}


def _stores(cubin: bytes) -> list[str]:
    """Each STG's offset from its base, in program order."""
    lines = [ln for ln in oracle.nvdisasm(cubin).splitlines() if re.search(r"\bSTG\b", ln)]
    return [(re.search(r"\+(0x[0-9a-f]+)\]", ln) or re.search(r"()\]", ln)).group(1) or "0x0" for ln in lines]


def _launch(cubin: bytes):
    src = np.array([7, 11, 13, 17], np.int32)
    out = np.zeros(8, np.int32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, src], hazard_check=True)
    return out.tobytes(), res


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("kind", KINDS)
def test_strong_stores_pass_a_plain_store(kind, arch):
    ptx = _ptx(arch, KINDS[kind])
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    assert _stores(theirs.output) == ["0x4", "0x8", "0xc", "0x0"]     # the premise: ptxas's order
    assert _stores(ours) == _stores(theirs.output)
    mine, my_run = _launch(ours)
    ref, _ = _launch(theirs.output)
    assert my_run.hazards == []
    assert mine == ref


def test_an_overlapping_strong_store_stays_after():
    """The first strong store writes the plain store's word: it keeps its place, the two
    others pass the plain store, and the strong stores stay in their order."""
    ptx = _ptx("sm_89", KINDS["cache_operators"], first=0)
    ours = codegen.compile_ptx(ptx, "sm_89")
    order = _stores(ours)
    assert order.index("0x0") < order.index("0x8") < order.index("0xc")
    assert order.count("0x0") == 2
    theirs = oracle.ptxas(ptx, "sm_89")
    assert _launch(ours)[0] == _launch(theirs.output)[0]
