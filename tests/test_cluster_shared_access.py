"""`.shared::cluster` accesses on sm_90+ (found by a cluster kernel written for the real-world
corpus: cooperative_groups' `cluster.map_shared_rank`). A shared::cluster address may name
another CTA's shared memory (its rank in the high byte, from `mapa`), which LDS/STS/ATOMS
cannot reach; ptxas 13.5 makes every `ld/st/atom/red.shared::cluster` a generic LD/ST/ATOM
through the pair {address, SR_SWINHI}. Ours compiled them as `.shared` accesses. Also: a
kernel declared `.explicitcluster` is always launched as a cluster, so ptxas does not test
the driver's cluster-launch word around `barrier.cluster` (ours did).

Checked against ptxas: the memory opcodes of each access kind, and (own-CTA addresses, the
emulator's launches having no clusters) the results of both cubins in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

HEADER = """.version 8.8
.target {arch}
.address_size 64
"""

ACCESSES = {
    "ld_u32": "ld.shared::cluster.u32 %r2, [%r1+8];",
    "ld_v4": "ld.shared::cluster.v4.u32 {%r2, %r3, %r4, %r5}, [%r1+16];",
    "ld_u8": "ld.shared::cluster.u8 %r2, [%r1+3];",
    "ld_volatile": "ld.volatile.shared::cluster.u32 %r2, [%r1+4];",
    "ld_acquire": "ld.acquire.cluster.shared::cluster.u32 %r2, [%r1+4];",
    "st_u32": "st.shared::cluster.u32 [%r1+8], %r9; ld.shared.u32 %r2, [%r1+8];",
    "st_u16": "st.shared::cluster.u16 [%r1+6], %r9; ld.shared.u32 %r2, [%r1+4];",
    "st_v2": "st.shared::cluster.v2.u32 [%r1+8], {%r9, %r9}; ld.shared.u32 %r2, [%r1+12];",
    "atom_add": "atom.shared::cluster.add.u32 %r2, [%r1+12], %r9;",
    "atom_cas": "atom.shared::cluster.cas.b32 %r2, [%r1+12], 12, %r9;",
    "atom_exch": "atom.shared::cluster.exch.b32 %r2, [%r1+12], %r9;",
    "atom_min_s32": "atom.shared::cluster.min.s32 %r2, [%r1+12], %r9;",
    "atom_add_f32": "mov.b32 %f1, %r9; atom.shared::cluster.add.f32 %f2, [%r1+12], %f1; mov.b32 %r2, %f2;",
    "atom_add_u64": "cvt.u64.u32 %rd3, %r9; atom.shared::cluster.add.u64 %rd4, [%r1+16], %rd3; "
                    "cvt.u32.u64 %r2, %rd4;",
    "red_add": "red.shared::cluster.add.u32 [%r1+12], %r9; ld.shared.u32 %r2, [%r1+12];",
}


def kernel(arch: str, body: str, mapped: bool) -> str:
    """Every lane's word of a shared array, filled with known values, then one access through
    a shared::cluster address of the CTA's own array (`mapa` to its own rank, or the
    `.shared` address itself, which the shared::cluster window contains)."""
    address = ("mov.u32 %r10, %cluster_ctarank; mapa.shared::cluster.u32 %r1, %r8, %r10;"
               if mapped else "mov.u32 %r1, %r8;")
    return HEADER.format(arch=arch) + f""".visible .entry k(.param .u64 out)
{{
 .reg .b32 %r<16>; .reg .b64 %rd<6>; .reg .f32 %f<4>;
 .shared .align 16 .b32 buf[512];
 ld.param.u64 %rd1, [out];
 mov.u32 %r9, %tid.x;
 mov.u32 %r8, buf; shl.b32 %r11, %r9, 5; add.u32 %r8, %r8, %r11;
 mul.lo.u32 %r12, %r9, 2654435761;
 st.shared.v4.u32 [%r8], {{%r12, %r9, %r11, %r12}};
 st.shared.v4.u32 [%r8+16], {{%r9, %r12, %r9, %r11}};
 mov.u32 %r3, 0; mov.u32 %r4, 0; mov.u32 %r5, 0;
 {address}
 {body}
 add.u32 %r2, %r2, %r3; add.u32 %r2, %r2, %r4; add.u32 %r2, %r2, %r5;
 mul.wide.u32 %rd2, %r9, 4; add.u64 %rd2, %rd1, %rd2;
 st.global.u32 [%rd2], %r2;
 ret;
}}
"""


MEMORY = re.compile(r"^\s*(?:@!?U?P\w+\s+)?(LDS|STS|ATOMS|LD|ST|ATOM|RED)\b")


def memory_opcodes(cubin: bytes) -> set[str]:
    text = oracle.nvdisasm(cubin)
    ops = set()
    for line in text.splitlines():
        m = MEMORY.match(re.sub(r"/\*[0-9a-f]+\*/", "", line))
        if m:
            ops.add(m.group(1))
    return ops


def both(src: str, arch: str) -> tuple[bytes, bytes]:
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    return compile_ptx(src, arch=arch), ref.output


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", sorted(ACCESSES))
def test_cluster_access_is_generic_as_in_ptxas(name, arch):
    """The memory opcodes match ptxas's: shared::cluster accesses are LD/ST/ATOM, and LDS/
    STS/ATOMS appear only where ptxas has them too (the `.shared` fill, the fallbacks)."""
    ours, theirs = both(kernel(arch, ACCESSES[name], mapped=True), arch)
    assert memory_opcodes(ours) == memory_opcodes(theirs)


@pytest.mark.parametrize("mapped", [True, False], ids=["mapa", "cta_address"])
@pytest.mark.parametrize("name", sorted(ACCESSES))
def test_cluster_access_results_equal_ptxas(name, mapped):
    ours, theirs = both(kernel("sm_90", ACCESSES[name], mapped), "sm_90")
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=cubin is ours)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tolist() == outs[1].tolist()


BARRIER = HEADER + """.visible .entry k(.param .u64 p) {directive}
{{
 .reg .b32 %r<4>; .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [p];
 barrier.cluster.arrive{arrive};
 barrier.cluster.wait;
 mov.u32 %r1, %cluster_ctarank;
 st.global.u32 [%rd1], %r1;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("directive", ["", ".explicitcluster", ".reqnctapercluster 2, 1, 1", ".maxclusterrank 4"])
@pytest.mark.parametrize("arrive", ["", ".relaxed"])
def test_cluster_barrier_tests_the_launch_as_ptxas(directive, arrive, arch):
    """ptxas leaves out the cluster-launch test (LDC of the driver's word, BAR.SYNC for a
    CTA that is its own cluster) only for `.explicitcluster` kernels."""
    src = BARRIER.format(arch=arch, directive=directive, arrive=arrive)
    ours, theirs = both(src, arch)

    def shape(cubin):
        text = oracle.nvdisasm(cubin)
        return (text.count("UCGABAR_ARV"), text.count("UCGABAR_WAIT"), "BAR.SYNC" in text,
                "ISETP" in text, "MEMBAR" in text)
    assert shape(ours) == shape(theirs)
