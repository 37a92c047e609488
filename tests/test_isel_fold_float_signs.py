"""`abs.f32`/`neg.f32` folded into the float instruction that reads them
(`isel/fold_float_signs.py`): ptxas writes `fabsf(x) * s + b` as `FFMA R0, |R0|, R15, 0.05`;
we wrote `FADD t, |x|, -RZ` first (physics_sim.cu's lattice-Boltzmann kernel). Expected
values are ptxas's cubin's outputs for the same PTX in the emulator (ours hazard-checked),
over signed zeros, denormals, infinities and NaNs; and ptxas's count of FADDs."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run as emu_run

# PTX computing %f9 from %f1, %f2, %f3
EXPRESSIONS = {
    "abs_into_fma": "abs.f32 %f5, %f1; fma.rn.f32 %f9, %f5, %f2, %f3;",
    "neg_into_fma_addend": "neg.f32 %f5, %f3; fma.rn.f32 %f9, %f1, %f2, %f5;",
    "abs_into_mul": "abs.f32 %f5, %f2; mul.rn.f32 %f9, %f1, %f5;",
    "neg_abs_into_add": "abs.f32 %f5, %f1; neg.f32 %f6, %f5; add.f32 %f9, %f6, %f2;",
    "abs_of_neg_into_add": "neg.f32 %f5, %f1; abs.f32 %f6, %f5; add.rz.f32 %f9, %f6, %f2;",
    "ftz_abs_into_plain_fma": "abs.ftz.f32 %f5, %f1; fma.rn.f32 %f9, %f5, %f2, %f3;",
    "ftz_abs_into_ftz_mul": "abs.ftz.f32 %f5, %f1; mul.ftz.f32 %f9, %f5, %f2;",
    "abs_into_ftz_sat_add": "abs.f32 %f5, %f1; add.ftz.sat.f32 %f9, %f5, %f2;",
    "abs_read_twice": "abs.f32 %f5, %f1; mul.f32 %f6, %f5, %f2; fma.rn.f32 %f9, %f5, %f3, %f6;",
    "neg_into_sub": "neg.f32 %f5, %f2; sub.f32 %f9, %f1, %f5;",
}


def _kernel(body: str, arch: str) -> str:
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .f32 %f<10>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %f1, [%rd3];
    ld.global.f32 %f2, [%rd3+4];
    ld.global.f32 %f3, [%rd3+8];
    {body}
    st.global.f32 [%rd3+12], %f9;
    ret;
}}
"""


def _inputs() -> np.ndarray:
    edges = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000,
                      0x7F800000, 0xFF800000, 0x7FC00001, 0xFFA00000, 0x7F7FFFFF, 0x00800000],
                     np.uint32)
    rng = np.random.default_rng(11)
    words = rng.integers(0, 2**32, (160, 4), dtype=np.uint64).astype(np.uint32)
    grid = np.array(np.meshgrid(edges, edges, edges[::-1][:1])).reshape(3, -1).T
    words[:len(grid), :3] = grid
    words[:, 3] = 0
    return words.reshape(-1)


def _run(cubin: bytes, check: bool) -> bytes:
    buf = _inputs()
    result = emu_run(cubin, "k", (1, 1, 1), (160, 1, 1), [buf], hazard_check=check)
    if check:
        assert result.hazards == []
    return buf.tobytes()


def _count(cubin: bytes, opcode: str) -> int:
    return sum(f" {opcode} " in line or f" {opcode}." in line for line in oracle.nvdisasm(cubin).splitlines())


def _compile(name: str, arch: str):
    ptx = _kernel(EXPRESSIONS[name], arch)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {})[0]
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.output is not None, theirs.stderr
    return ours, theirs.output


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_75"])
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_folded_signs_compute_what_ptxas_s_code_computes(name, arch):
    ours, theirs = _compile(name, arch)
    assert _run(ours, True) == _run(theirs, False)


@pytest.mark.parametrize("name", ["abs_into_fma", "neg_into_fma_addend", "abs_into_mul",
                                  "neg_abs_into_add", "ftz_abs_into_ftz_mul", "abs_into_ftz_sat_add"])
def test_no_separate_sign_instruction_where_ptxas_has_none(name):
    """Each of these is one FFMA/FMUL/FADD in ptxas's code; we wrote an FADD more."""
    ours, theirs = _compile(name, "sm_89")
    assert _count(ours, "FADD") + _count(ours, "FMUL") + _count(ours, "FFMA") <= \
        _count(theirs, "FADD") + _count(theirs, "FMUL") + _count(theirs, "FFMA")
