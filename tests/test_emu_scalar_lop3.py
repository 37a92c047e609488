"""LOP3 tables with no Python expression on the scalar paths (emu/single_lane.py `_lop3`).

Such a table is computed by ops_int.lut3 on NumPy, and its NumPy uint32 reached the scalar
thread's register list: a later `hi << 32` of it was 0, so a 64-bit store of the register
pair wrote 0 for the high word. The fuzz regressions s339 (copysign.f64) and s105 ran that
way on both compilers' cubins with the hazard checker off (equal, so the test passed) and
differed from the machine once the traced path compared them. Expected values: the table
applied bit by bit in Python (the manual's lop3 definition), on the scalar paths (hazards
off and on) and on the machine.
"""
from __future__ import annotations

import numpy as np
import pytest

import ptx2sass
from ptx2sass.emu import scalar
from ptx2sass.emu.launch import run

PTX = """.version 8.5
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 a, .param .u32 b, .param .u32 c)
{{
  .reg .u64 %rd<4>; .reg .u32 %r<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [a];
  ld.param.u32 %r2, [b];
  ld.param.u32 %r3, [c];
  lop3.b32 %r4, %r1, %r2, %r3, {lut};
  xor.b32 %r5, %r1, %r3;
  mov.b64 %rd2, {{%r5, %r4}};
  cvta.to.global.u64 %rd1, %rd1;
  st.global.u64 [%rd1], %rd2;
  ret;
}}
"""
# three-input tables with no two-input or known three-input form (0xb8: copysign's select)
LUTS = (0xB8, 0x1E, 0x6A, 0xCA & 0x7F)
INPUTS = ((0x3FE00000, 0x80000000, 0xC0080000), (0x12345678, 0x0F0F0F0F, 0xFFFF0000), (0xFFFFFFFF, 0, 0x80000001))


def _lut(lut: int, a: int, b: int, c: int) -> int:
    return sum(((lut >> ((a >> i & 1) * 4 + (b >> i & 1) * 2 + (c >> i & 1))) & 1) << i for i in range(32))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("path", ["scalar", "traced", "machine"])
def test_three_input_tables_in_a_register_pair(arch, path, monkeypatch):
    if path == "machine":
        monkeypatch.setattr(scalar, "suits", lambda launch: False)
        monkeypatch.setattr(scalar, "suits_traced", lambda launch: False)
    for lut in LUTS:
        cubin = ptx2sass.compile(PTX.format(arch=arch, lut=lut), arch)
        for a, b, c in INPUTS:
            out = np.zeros(1, np.uint64)
            res = run(cubin, "k", 1, 1, [out, np.uint32(a), np.uint32(b), np.uint32(c)],
                      hazard_check=path != "scalar")
            assert not res.hazards
            assert int(out[0]) == _lut(lut, a, b, c) << 32 | (a ^ c), (arch, path, hex(lut), a, b, c)
