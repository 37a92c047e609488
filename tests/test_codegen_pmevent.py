"""`pmevent a` / `pmevent.mask m` (refused before: "PTX instruction `pmevent` not supported
yet"): PMTRIG (1 << a) / PMTRIG m, as ptxas 13.5 writes them; the trigger changes no value,
so the kernel's store after it must land as ptxas's does."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.5
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b32 %r<3>; .reg .b64 %rd<4>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
pmevent 1;
pmevent 15;
pmevent.mask 0x5;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r1;
ret;
}}
"""


def _triggers(cubin):
    return re.findall(r"PMTRIG (0x[0-9a-f]+)", oracle.cuobjdump_sass(cubin))


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_pmevent_is_ptxas_pmtrig(arch):
    ptx = PTX.format(arch=arch)
    if arch in ("sm_100", "sm_120"):
        ptx = ptx.replace(".version 8.5", ".version 8.7")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    assert _triggers(ours) == _triggers(theirs.output) == ["0x2", "0x8000", "0x5"]
    out = np.zeros(32, np.uint32)
    res = run(ours, "k", 1, 32, [out], hazard_check=True)
    assert not res.hazards
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.uint32))

