"""ptx2sass/fences.py, the one definition of the fences around ordered accesses, against
ptxas 13.5: the MEMBAR/ERRBAR/CGAERRBAR/CCTL.IVALL of a kernel holding one ordered access or
fence, in ptxas's cubin and in ours, are the module's release fences then its acquire fences."""
import re

import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.encoder.arch import target
from ptx2sass.fences import (ACQUIRE_INVALIDATION, ERROR_BARRIER, acquire_fences, is_acquire_invalidation,
                             release_fences)

KERNEL = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.u32 %r1, [%rd2];
  {body}
  st.global.u32 [%rd2+8], %r2;
  ret;
}}
"""
# (arch, PTX, release scope or None, acquire scope or None, the MEMBAR's kind): each scope and
# kind once; sm_90 writes CGAERRBAR after ERRBAR
CASES = [("sm_90", "ld.acquire.cta.global.u32 %r2, [%rd2+4];", None, "SM", "ALL"),
         ("sm_90", "ld.acquire.gpu.global.u32 %r2, [%rd2+4];", None, "GPU", "ALL"),
         ("sm_90", "st.release.sys.global.u32 [%rd2+4], %r1; mov.u32 %r2, 0;", "SYS", None, "ALL"),
         ("sm_90", "fence.acq_rel.cta; add.u32 %r2, %r1, 1;", "CTA", "CTA", "ALL"),
         ("sm_90", "fence.sc.gpu; add.u32 %r2, %r1, 1;", "GPU", "GPU", "SC"),
         ("sm_89", "fence.acq_rel.sys; add.u32 %r2, %r1, 1;", "SYS", "SYS", "ALL")]
FENCE_TEXT = re.compile(r"\b(MEMBAR\.\w+\.\w+|CGAERRBAR|ERRBAR|CCTL\.IVALL)\b")


def _spelled(arch: str, sequence) -> list[str]:
    out = []
    for opcode, mods in sequence:
        out.append(".".join((opcode,) + mods))
        if (opcode, mods) == ERROR_BARRIER and target(arch).cga_errbar:
            out.append("CGAERRBAR")
    return out


@pytest.mark.parametrize("arch,body,release,acquire,kind", CASES, ids=[f"{c[0]}-{c[1].split(' ')[0]}" for c in CASES])
def test_fences_as_ptxas_writes_them(arch, body, release, acquire, kind):
    ptx = KERNEL.format(arch=arch, body=body)
    expected = _spelled(arch, (release_fences(release, kind) if release else ())
                        + (acquire_fences(acquire) if acquire else ()))
    theirs = oracle.ptxas(ptx.encode(), arch)
    assert theirs.ok, theirs
    assert FENCE_TEXT.findall(oracle.nvdisasm(theirs.output)) == expected
    assert FENCE_TEXT.findall(oracle.nvdisasm(ptx2sass.compile(ptx, arch=arch))) == expected


def test_acquire_invalidation():
    assert is_acquire_invalidation("CCTL", ["IVALL"])
    assert not is_acquire_invalidation("CCTL", ("E", "PF1"))
    assert acquire_fences("GPU") == acquire_fences("SYS") == (ACQUIRE_INVALIDATION,)
    assert acquire_fences("SM") == acquire_fences("CTA") == ()
