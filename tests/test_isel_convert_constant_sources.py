"""Integer-to-float conversions read a kernel parameter or a `__constant__` word in place,
as ptxas writes `I2FP.F32.S32 R24, c[0x3][0x5c]` (physics_sim.cu's lattice-Boltzmann kernel
converts its `__constant__ int` velocity table; we moved each word into a register first).
Expected values are ptxas's: its cubin's outputs in the emulator (ours hazard-checked) and
its instruction count for the same PTX."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run

CONVERTS = ["cvt.rn.f32.s32", "cvt.rn.f32.u32", "cvt.rz.f32.s32", "cvt.rn.f64.s32",
            "cvt.rm.f64.u32", "cvt.rn.f16.s32"]


def _kernel(cvt: str, arch: str) -> str:
    dty = cvt.split(".")[2]
    reg, width, store = {"f32": ("%f", 4, "st.global.f32"), "f64": ("%fd", 8, "st.global.f64"),
                         "f16": ("%h", 2, "st.global.b16")}[dty]
    decl = {"f32": ".reg .f32 %f<4>;", "f64": ".reg .f64 %fd<4>;", "f16": ".reg .b16 %h<4>;"}[dty]
    return f""".version 8.7
.target {arch}
.address_size 64
.const .align 4 .b32 table[4] = {{-7, 1000000007, -2147483648, 16777217}};
.visible .entry k(.param .u64 p, .param .u32 n)
{{
    {decl}
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    cvta.to.global.u64 %rd1, %rd1;
    ld.const.u32 %r2, [table+8];
    ld.const.u32 %r3, [table+4];
    {cvt} {reg}1, %r1;
    {cvt} {reg}2, %r2;
    {cvt} {reg}3, %r3;
    {store} [%rd1], {reg}1;
    {store} [%rd1+{width}], {reg}2;
    {store} [%rd1+{2 * width}], {reg}3;
    ret;
}}
"""


def _outputs(cubin: bytes, check: bool, n: int) -> bytes:
    buf = np.zeros(8, np.uint32)
    result = emu_run(cubin, "k", (1, 1, 1), (1, 1, 1), [buf, np.uint32(n)], hazard_check=check)
    if check:
        assert result.hazards == []
    return buf.tobytes()


def _instructions(cubin: bytes) -> int:
    return sum("/*" in line and " NOP" not in line and "BRA" not in line
               for line in oracle.nvdisasm(cubin).splitlines() if line.strip().startswith("/*"))


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("cvt", CONVERTS)
def test_converted_constants_match_ptxas(cvt, arch):
    ptx = _kernel(cvt, arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.output is not None, theirs.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {})[0]
    for n in (0, 0x80000001, 123456789):
        assert _outputs(ours, True, n) == _outputs(theirs.output, False, n)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_no_moves_of_constant_words_before_conversions(arch):
    """Before: a MOV per converted word (two instructions more than ptxas's on sm_89)."""
    ptx = _kernel("cvt.rn.f32.s32", arch)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {})[0]
    assert _instructions(ours) <= _instructions(oracle.ptxas(ptx, arch).output)
