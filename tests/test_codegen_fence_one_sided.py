"""`fence.acquire` / `fence.release` at a scope (PTX ISA 8.6, sm_90+; added to the inventory by
branch inv32's audit): ours wrote fence.acq_rel's whole code for both; ptxas 13.5 writes only
the acquire half (the L1 invalidation CCTL.IVALL beyond the CTA, a NOP at it) or the release
half (MEMBAR, and ERRBAR/CGAERRBAR beyond the CTA). The fence instructions of ours and of
ptxas's cubin are compared, between a load and a store."""
import re

import pytest

from ptx2sass import codegen, oracle

FENCES = re.compile(r"^(MEMBAR|ERRBAR|CGAERRBAR|CCTL|FENCE)")


def _fences(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin).split(".text.k")[-1]
    ops = [re.sub(r"\s*;.*", "", line.split("*/", 1)[1]).strip() for line in text.splitlines()
           if re.search(r"/\*[0-9a-f]{4}\*/", line)]
    return [op for op in ops if FENCES.match(op)]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("sem", ["acquire", "release"])
def test_one_sided_fences_as_ptxas(arch, sem):
    for scope in ("cta", "cluster", "gpu", "sys"):
        src = (f".version 8.7\n.target {arch}\n.address_size 64\n"
               ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>; .reg .b32 %r<3>;\n"
               "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\n"
               f"fence.{sem}.{scope};\nst.global.u32 [%rd1+4], %r1;\nret;\n}}\n")
        theirs = oracle.ptxas(src, arch)
        assert theirs.ok, theirs.stderr
        assert _fences(codegen.compile_ptx(src, arch)) == _fences(theirs.output), scope
