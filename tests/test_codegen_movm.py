"""movmatrix.m8n8.trans.b16 and MOVM.16.MT88 (ptxas's transpose of 16-bit wmma fragments): our
cubin and ptxas's, run in the emulator, against NumPy's transpose of the warp's 8x8 matrix
(lane l holds row l/4, elements 2(l%4) and 2(l%4)+1, low half first)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

PTX = """
.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<8>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
    ld.global.b32 %r2, [%rd4];
    movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;
    add.u32 %r4, %r3, %r2;
    st.global.b32 [%rd5], %r3;
    st.global.b32 [%rd5+256], %r4;
    ret;
}}
"""


def _expected(words: np.ndarray) -> np.ndarray:
    """Each warp's 32 words as an 8x8 b16 matrix, transposed, in the same layout."""
    out = []
    for warp in words.reshape(-1, 32):
        m = warp.view(np.uint16).reshape(8, 8)      # row l/4, little-endian halves in order
        out.append(np.ascontiguousarray(m.T).reshape(-1).view(np.uint32))
    return np.concatenate(out)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"])
def test_movmatrix_transposes_like_numpy_and_ptxas(arch):
    ptx = PTX.format(arch=arch)
    data = np.random.default_rng(7).integers(0, 2**32, size=64, dtype=np.uint64).astype(np.uint32)
    want = _expected(data)
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    theirs = oracle.ptxas(ptx, arch=arch).output
    for cubin in (ours, theirs):
        out = np.zeros(128, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards, res.hazards
        assert (out[:64] == want).all()
        assert (out[64:] == want + data).all()     # the result is read after the MOVM's wait
