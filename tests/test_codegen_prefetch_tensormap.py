"""prefetch[.const|.param].tensormap [a] on sm_90 and the blackwell archs: UTMACCTL.PF [UR]
of the descriptor's generic address, as ptxas 13.5 writes it (hopper table: tools/isa_seeds/
utmacctl_pf_sm90.words; blackwell table: tools/isa_seeds/blackwell_tex_ll_sust.words, the
same word on sm_100/sm_103/sm_110/sm_120; refused before). The emulator models the prefetch
as changing no value (emu/ops_bulk.py); the test records the address each UTMACCTL.PF
names, per lane and issue, and ours must name the same set of addresses as ptxas's cubin
(the .param window's base is c[0x0][0x348] on blackwell, ptxas's)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu import ops_bulk, registry
from ptx2sass.emu.launch import run

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.const .align 64 .b8 t0[128];
.const .align 64 .b8 tmap[256];
.visible .entry k(.param .u64 p, .param .u64 q)
{
.reg .u32 %r<2>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
and.b32 %r1, %r1, 1;
mul.wide.u32 %rd2, %r1, 128;
prefetch.const.tensormap [tmap];
prefetch.const.tensormap [tmap+128];
prefetch.tensormap [%rd1];
prefetch.param.tensormap [q];
mov.u64 %rd3, tmap;
add.u64 %rd3, %rd3, %rd2;
prefetch.const.tensormap [%rd3];
add.u64 %rd4, %rd1, %rd2;
prefetch.tensormap [%rd4+64];
ret;
}
"""


def _addresses(cubin: bytes, monkeypatch) -> list[int]:
    """The address each UTMACCTL.PF issue names (its first active lane's: the operand
    is uniform), sorted (the order of independent prefetches is free)."""
    seen = []
    handlers, _ = registry.load_all()

    def record(w, s, active, mask):
        lanes = np.nonzero(np.broadcast_to(active, (w.width,)))[0]
        r = ops_bulk._ureg(s.ins.operands[0])
        seen.append(ops_bulk._upair(w, r, int(lanes[0])) if len(lanes) else None)
        return None

    registry.VECTOR.add(record)
    monkeypatch.setitem(handlers, "UTMACCTL", record)
    run(cubin, "k", 1, 32, [np.uint64(0x7000_0000_1000), np.uint64(0)])
    return sorted(a for a in seen if a is not None)


def _kernel(arch: str) -> str:
    return KERNEL if arch == "sm_90" else KERNEL.replace(".version 8.0", ".version 9.0").replace("sm_90", arch)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_110", "sm_120"])
def test_prefetch_tensormap_names_ptxas_addresses(arch, monkeypatch):
    ptx = _kernel(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    text = oracle.nvdisasm(ours, ("-c",))
    assert len(re.findall(r"UTMACCTL\.PF \[UR\d+\]", text)) >= 6
    want = _addresses(theirs.output, monkeypatch)
    # tmap, tmap+128 (again per lane through %rd3), p, p+64, p+192, the window's q
    assert len(set(want)) == 6
    assert set(_addresses(ours, monkeypatch)) == set(want)
