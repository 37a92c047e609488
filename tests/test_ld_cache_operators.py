"""Cache operators on ld/st as ptxas 13.5 takes them: `ld.global.nc` with `.ca/.cg/.cs`
(LDG.E.CONSTANT, `.cs`: LDG.E.EF.CONSTANT; refused "Illegal modifier" before, found by fuzz
campaign 9), and ptxas's refusals: `.nc` outside `.global`, `.nc` with `.lu/.cv`, and any
cache operator with an `.L1::` eviction hint (internal encode errors or silently dropped
hints before). Each case: ptxas's verdict and message, and where it compiles, the same LDG
and the same value in the emulator."""
import re

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

CASES = [
    "ld.global.nc.ca.b32 %r3, [%rd1];",
    "ld.global.nc.cg.b32 %r3, [%rd1+4];",
    "ld.global.nc.cs.b32 %r3, [%rd1];",
    "ld.global.ca.nc.b32 %r3, [%rd1];",
    "ld.global.nc.cg.L2::128B.b32 %r3, [%rd1];",
    "ld.global.nc.L1::evict_last.b32 %r3, [%rd1];",
    "ld.global.nc.cg.v2.b32 {%r3, %r4}, [%rd1];",
    "ld.global.nc.lu.b32 %r3, [%rd1];",
    "ld.global.nc.cv.b32 %r3, [%rd1];",
    "ld.nc.b32 %r3, [%rd1];",
    "ld.shared.nc.b32 %r3, [%r1];",
    "ld.global.cs.L1::evict_last.b32 %r3, [%rd1];",
    "ld.global.ca.L1::evict_first.b32 %r3, [%rd1];",
    "ld.global.lu.L1::evict_unchanged.b32 %r3, [%rd1];",
    "ld.global.nc.ca.L1::no_allocate.b32 %r3, [%rd1];",
    "st.global.cs.L1::evict_last.b32 [%rd1+8], %r1; mov.u32 %r3, 0;",
    "st.global.wb.L1::no_allocate.b32 [%rd1+8], %r1; mov.u32 %r3, 0;",
]


def _ptx(body: str) -> str:
    return (".version 8.3\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            "  .reg .b32 %r<8>; .reg .b64 %rd<4>;\n"
            "  ld.param.u64 %rd0, [out]; ld.param.u64 %rd1, [in];\n"
            "  cvta.to.global.u64 %rd0, %rd0; cvta.to.global.u64 %rd1, %rd1;\n"
            "  ld.global.u32 %r1, [%rd1+12]; mov.u32 %r4, 0;\n"
            f"  {body}\n"
            "  add.u32 %r3, %r3, %r4;\n  add.u32 %r3, %r3, %r1;\n  st.global.u32 [%rd0], %r3;\n  ret;\n}\n")


def _loads(cubin: bytes) -> list[str]:
    return re.findall(r"\b((?:LDG|STG|LD|LDS)\.[A-Z0-9_.]+|LDG|LDS)\b", oracle.nvdisasm(cubin))


@pytest.mark.parametrize("body", CASES)
def test_cache_operators_as_ptxas(body):
    ptx = _ptx(body)
    theirs = oracle.ptxas(ptx, "sm_89")
    try:
        ours = ptx2sass.compile(ptx, "sm_89", "k.ptx")
    except CompileError as e:
        assert not theirs.ok, f"ptxas accepts it; ours: {e}"
        want = re.search(r"error\s*: (.*)", theirs.stderr).group(1).strip()
        assert want in str(e)
        return
    assert theirs.ok, f"ptxas refuses it: {theirs.stderr}"
    assert _loads(ours) == _loads(theirs.output)
    data = np.array([11, 22, 33, 44, 55], np.uint32)
    outs = []
    for cubin in (theirs.output, ours):
        out = np.zeros(1, np.uint32)
        run(cubin, "k", 1, 1, [out, data.copy()])
        outs.append(int(out[0]))
    assert outs[0] == outs[1]
