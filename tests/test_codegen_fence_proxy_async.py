"""fence.proxy.async[.global|.shared::cta|.shared::cluster] (sm_90+, was 'not supported
yet'): the fences ptxas 13.5 writes (MEMBAR.ALL.GPU/CTA then FENCE.VIEW.ASYNC.S; .global
FENCE.VIEW.ASYNC.G), compared with ptxas's cubin fence by fence, and the kernel's stores
run in the emulator as ptxas's do."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rdo;
ld.param.u64 %rdo, [out];
st.global.u32 [%rdo], 1;
fence.proxy.async{space};
st.global.u32 [%rdo+4], 2;
ret;
}}
"""
FENCES = re.compile(r"\b(MEMBAR\.\w+\.\w+|FENCE\.VIEW\.ASYNC\.\w|CGAERRBAR|ERRBAR|CCTL\.IVALL)")


@pytest.mark.parametrize("arch,version", [("sm_90", "8.0"), ("sm_120", "8.8")])
@pytest.mark.parametrize("space", ["", ".global", ".shared::cta", ".shared::cluster"])
def test_fence_proxy_async(arch, version, space):
    ptx = KERNEL.format(arch=arch, version=version, space=space)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert FENCES.findall(oracle.nvdisasm(ours)) == FENCES.findall(oracle.nvdisasm(theirs.output))
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(2, np.uint32)
        res = run(cubin, "k", 1, 32, [out], hazard_check=name == "ours")
        assert not res.hazards
        assert out.tolist() == [1, 2]


@pytest.mark.parametrize("arch,version", [("sm_90", "8.0"), ("sm_120", "8.8")])
def test_fence_mbarrier_init(arch, version):
    """fence.mbarrier_init.release.cluster (was 'not supported yet'): no fence in ptxas's
    code (a NOP in its place), none in ours; the stores around it run as ptxas's."""
    ptx = KERNEL.format(arch=arch, version=version, space="").replace(
        "fence.proxy.async;", "fence.mbarrier_init.release.cluster;")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert FENCES.findall(oracle.nvdisasm(ours)) == FENCES.findall(oracle.nvdisasm(theirs.output)) == []
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(2, np.uint32)
        res = run(cubin, "k", 1, 32, [out], hazard_check=name == "ours")
        assert not res.hazards
        assert out.tolist() == [1, 2]


RESTRICTED = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b32 %r<2>; .reg .b64 %rdo;
ld.param.u64 %rdo, [out];
ld.global.u32 %r1, [%rdo];
{fence};
st.global.u32 [%rdo+4], %r1;
ret;
}}
"""


def _between_load_and_store(listing: str) -> list[str]:
    """The instructions between the kernel's LDG and STG (a fence's place), as written."""
    body = [re.sub(r"/\*[^*]*\*/", "", line).strip().rstrip(" ;") for line in listing.splitlines()
            if re.match(r"\s+/\*[0-9a-f]{4}\*/", line)]
    start = next(i for i, line in enumerate(body) if line.startswith("LDG"))
    end = next(i for i, line in enumerate(body) if line.startswith("STG"))
    return body[start + 1:end]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("fence", ["fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster",
                                   "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster",
                                   "fence.acquire.sync_restrict::shared::cluster.cluster",
                                   "fence.release.sync_restrict::shared::cta.cluster"])
def test_sync_restrict_fences_as_ptxas(fence, arch):
    """The `.sync_restrict` fences (lead's sm_90 sweep, 2026-11-29: the proxy forms were 'not
    supported yet', the plain ones a full GPU fence with ERRBAR and CCTL.IVALL): a release
    restricted to shared::cta is MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S, the acquire a NOP."""
    ptx = RESTRICTED.format(arch=arch, fence=fence)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx")
    assert _between_load_and_store(oracle.nvdisasm(ours, ())) == \
        _between_load_and_store(oracle.nvdisasm(theirs.output, ()))
