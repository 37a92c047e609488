"""sm_90's cluster special registers, ours vs ptxas's cubin in the emulator over a 5x3x2 grid
of a launch without clusters (each CTA its own 1x1x1 cluster, the driver words the emulator
writes: PTX ISA's %cluster_nctaid 1, %nclusterid = %nctaid, %cluster_nctarank 1). ptxas reads
the shapes from constant bank 0, the rank from SR_CgaCtaId, and divides %ctaid by the shape
(.x: a full unsigned division; .y/.z: the shape's float reciprocal). sm_100/120 keep those
words once per cluster size (read at SR_CgaSize * -0xa0 + offset)."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

REGS = ["%clusterid.x", "%clusterid.y", "%clusterid.z", "%nclusterid.x", "%nclusterid.y",
        "%nclusterid.z", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
        "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_ctarank",
        "%cluster_nctarank"]


def _ptx(arch: str = "sm_90") -> str:
    body = "\n".join(f"mov.u32 %r1, {r};\nst.global.u32 [%rd2+{4 * i}], %r1;" for i, r in enumerate(REGS))
    return f""".version {"8.7" if arch != "sm_90" else "8.6"}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<16>;
ld.param.u64 %rd1, [out];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %ctaid.y;
mov.u32 %r4, %ctaid.z;
mad.lo.u32 %r5, %r4, 3, %r3;
mad.lo.u32 %r5, %r5, 5, %r2;
mul.wide.u32 %rd3, %r5, {4 * len(REGS)};
add.s64 %rd2, %rd1, %rd3;
{body}
ret;
}}"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_cluster_registers_as_ptxas(arch):
    ptx = _ptx(arch)
    outs = []
    for cubin, check in ((oracle.ptxas(ptx, arch).output, False), (ptx2sass.compile(ptx, arch, "k.ptx"), True)):
        out = np.zeros(30 * len(REGS), np.uint32)
        result = run(cubin, "k", (5, 3, 2), (32, 1, 1), [out], hazard_check=check)
        assert not (check and result.hazards), [str(h) for h in result.hazards[:3]]
        outs.append(out.reshape(30, len(REGS)))
    theirs, ours = outs
    ctaid = np.array([(x, y, z) for z in range(2) for y in range(3) for x in range(5)])
    assert (theirs[:, 0:3] == ctaid).all() and (theirs[:, 3:6] == (5, 3, 2)).all()
    assert (theirs[:, 6:9] == 0).all() and (theirs[:, 9:12] == 1).all()
    assert (ours == theirs).all()
