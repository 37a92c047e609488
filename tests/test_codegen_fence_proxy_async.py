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
