"""Integer code generation: our cubin and ptxas's run in the emulator on the same random and
boundary inputs must write bit-identical outputs (ptxas's cubin is the reference)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

N = 64
BOUNDARY = [0, 1, 2, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 3, 0xFFFFFFFE]

KERNEL = """
.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a_in, .param .u64 c_in)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [a_in];
    ld.param.u64 %rd3, [c_in];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd2, %rd4;
    add.s64 %rd6, %rd3, %rd4;
    ld.global.u32 %r2, [%rd5];
    ld.global.u32 %r3, [%rd6];
    {body}
    add.s64 %rd7, %rd1, %rd4;
    st.global.u32 [%rd7], %r4;
    ret;
}}
"""

# Immediate factors nvdisasm prints under an alias (IMAD.IADD / IMAD.MOV / IMAD.SHL) and
# ordinary ones, as multiply and as multiply-add.
BODIES = {
    "mad_by_1": "mad.lo.s32 %r4, %r2, 1, %r3;",
    "mad_by_16": "mad.lo.u32 %r4, %r2, 16, %r3;",
    "mad_by_neg": "mad.lo.s32 %r4, %r2, -1048576, %r3;",
    "mad_by_7": "mad.lo.s32 %r4, %r2, 7, %r3;",
    "mul_by_1": "mul.lo.s32 %r4, %r2, 1;",
    "mul_by_8": "mul.lo.u32 %r4, %r2, 8;",
    "mul_by_0": "mul.lo.u32 %r4, %r2, 0;",
    "mul_by_9": "mul.lo.s32 %r4, %r2, 9;",
}


def _outputs(cubin, a, c):
    out = np.zeros(N, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (N, 1, 1), [out, a.copy(), c.copy()])
    assert not res.hazards, res.hazards
    return out


@pytest.mark.parametrize("name", sorted(BODIES))
def test_integer_op_matches_ptxas(name):
    ptx = KERNEL.format(body=BODIES[name])
    rng = np.random.default_rng(sum(map(ord, name)))
    a = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    a[:len(BOUNDARY)] = BOUNDARY
    c[:len(BOUNDARY)] = BOUNDARY[::-1]
    ours = _outputs(codegen.compile_ptx(ptx, "sm_89"), a, c)
    theirs = _outputs(oracle.ptxas(ptx, "sm_89").output, a, c)
    np.testing.assert_array_equal(ours, theirs)
