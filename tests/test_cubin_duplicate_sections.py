"""nvlink's output may hold several sections of one name: two objects that each have a local
kernel (an `.entry` without `.visible`) or local function of the same name keep both, so the
linked cubin has two `.text.kl`, two `.nv.info.kl` (measured with nvlink 13.5.37). Sections
are identified by index; the cubin reader refused such a file ("duplicate section names")
and so did the emulator. Both objects built in the test (ptxas -c and ours), linked by
nvlink, read and run."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from test_link_stack_arguments import _nvlink, _ours_c, _ptxas_c


def _module(tag: str, local_value: int, value: int) -> str:
    return f""".version 7.8
.target sm_89
.address_size 64
.entry kl(.param .u64 p)
{{
  .reg .u64 %p; .reg .b32 %r;
  ld.param.u64 %p, [p];
  mov.u32 %r, {local_value};
  st.global.u32 [%p], %r;
  ret;
}}
.visible .entry k{tag}(.param .u64 p)
{{
  .reg .u64 %p; .reg .b32 %r, %t;
  ld.param.u64 %p, [p];
  mov.u32 %t, %tid.x;
  add.u32 %r, %t, {value};
  st.global.u32 [%p], %r;
  ret;
}}
"""


@pytest.mark.parametrize("by", ["ptxas", "ours"])
def test_linked_cubin_with_repeated_section_names_is_read_and_runs(by, tmp_path):
    build = {"ptxas": _ptxas_c, "ours": _ours_c}[by]
    arch = "sm_89"
    linked = _nvlink(build(_module("a", 11, 33), arch), build(_module("b", 22, 44), arch),
                     tmp_path=tmp_path, arch=arch)
    c = read_cubin(linked)
    order = c.section_order
    assert order.count(".text.kl") == 2 and order.count(".nv.info.kl") == 2     # (what nvlink wrote)
    assert [k.name for k in c.kernels].count("kl") == 2
    kls = [k for k in c.kernels if k.name == "kl"]
    assert kls[0].text != kls[1].text and all(k.params == [(0, 0, 8)] for k in kls)
    assert all(k.attributes for k in c.kernels)
    for name, want in (("ka", 33), ("kb", 44)):
        out = np.zeros(1, np.uint32)
        res = run(linked, name, 1, 1, [out], hazard_check=True)
        assert not res.hazards
        assert int(out[0]) == want
