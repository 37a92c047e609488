"""barrier.red.{and,or}.pred / .popc.u32 with a register barrier and a register thread count
(ptxas: `BAR.RED.<op> Rx, Rx, P`, one register holding both): the form was missing from
the turing, hopper and blackwell tables (an internal 'cannot encode' error; found by
tools.arch_specific_coverage on sm_90a). ptxas's cubin and ours against NumPy in the
emulator."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n, .param .u32 m)
{{
    .reg .pred %p<8>; .reg .u32 %r<8>; .reg .u64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r2, [n];
    ld.param.u32 %r5, [m];
    setp.lt.u32 %p1, %r1, 100;
    barrier.red.and.aligned.pred %p2, %r2, %r5, %p1;
    barrier.red.or.aligned.pred %p3, %r2, %r5, !%p1;
    barrier.red.popc.aligned.u32 %r3, %r2, %r5, %p1;
    selp.u32 %r6, 1, 0, %p2;
    selp.u32 %r7, 2, 0, %p3;
    mad.lo.u32 %r3, %r3, 4, %r6;
    add.u32 %r3, %r3, %r7;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}}
"""


def _run(cubin):
    out = np.zeros(256, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (256, 1, 1), [out, np.uint32(3), np.uint32(256)])
    assert not res.hazards, res.hazards[:3]
    return out


@pytest.mark.parametrize("arch", ["sm_75", "sm_90", "sm_90a", "sm_100", "sm_120"])
def test_bar_red_register_operands(arch):
    # 100 of 256 threads hold the predicate: and false, or (of its negation) true, popc 100
    want = np.full(256, 100 * 4 + 0 + 2, np.uint32)
    ptx = PTX.format(arch=arch)
    np.testing.assert_array_equal(_run(oracle.ptxas(ptx, arch).output), want)
    np.testing.assert_array_equal(_run(codegen.compile_ptx(ptx, arch)), want)
