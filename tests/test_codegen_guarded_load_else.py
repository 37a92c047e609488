"""A guarded load's else-value held in a register that a constant was moved into (Triton's
`mov.b32 %z, 0; ... mov.u32 %r43, %z; @%p ld.global.b32 {%r43}, [..]`) is that constant:
`MOV R, RZ` next to the load, as ptxas writes it, not a copy of the shared zero register
(which the pre-allocation scheduler hoists with the other copies, so every load's
destination was live from the top of the loop: Triton column_sum 54 -> 50 registers,
ptxas 35). Results = ptxas's, bit for bit, on lanes inside and outside the bounds."""
import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 32
LOADS = 8


def masked_loads() -> str:
    """A loop of LOADS bounds-checked loads summed per iteration (column_sum's shape)."""
    body = ""
    for k in range(LOADS):
        body += (f"add.s32 %i{k}, %r2, {k * THREADS};\nsetp.lt.s32 %p{k}, %i{k}, %r1;\n"
                 f"mul.wide.s32 %rd{10 + k}, %i{k}, 4;\nadd.s64 %rd{20 + k}, %rd2, %rd{10 + k};\n"
                 f"mov.b32 %v{k}, %z;\n@%p{k} ld.global.b32 {{%v{k}}}, [%rd{20 + k}];\n")
    adds = "".join(f"add.f32 %s, %s, %v{k};\n" for k in range(LOADS))
    names = lambda p: ", ".join(f"%{p}{k}" for k in range(LOADS))   # noqa: E731
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)\n{\n"
            f".reg .u32 %r<4>, {names('i')};\n.reg .b32 %z, %s, {names('v')};\n"
            f".reg .pred %q, {names('p')};\n.reg .u64 %rd<40>;\n"
            "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\nld.param.u32 %r1, [n];\n"
            "mov.u32 %r2, %tid.x;\nmov.b32 %z, 0;\nmov.b32 %s, 0;\nmov.u32 %r3, 0;\n"
            "LOOP:\n" + body + adds +
            f"add.s32 %r2, %r2, {LOADS * THREADS};\nadd.s32 %r3, %r3, 1;\n"
            "setp.lt.u32 %q, %r3, 3;\n@%q bra LOOP;\n"
            "mov.u32 %r2, %tid.x;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd1, %rd3;\n"
            "st.global.f32 [%rd4], %s;\nret;\n}\n")


def _register_copies(cubin: bytes) -> list[str]:
    """MOVs (and IMAD.MOVs) of one general register into another."""
    listing = oracle.nvdisasm(cubin, ())
    return re.findall(r"\b(?:MOV R\d+, R\d+|IMAD\.MOV\.U32 R\d+, RZ, RZ, R\d+) ;", listing)


def test_else_values_are_zero_moves_as_in_ptxas():
    ptx = masked_loads()
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours = codegen.compile_ptx(ptx, "sm_89")
    assert not _register_copies(theirs)                         # the premise
    assert not _register_copies(ours), _register_copies(ours)
    data = np.random.default_rng(7).uniform(-2, 2, 3 * LOADS * THREADS).astype(np.float32)
    for n in (3 * LOADS * THREADS, 100, 0):
        outs = []
        for cubin in (ours, theirs):
            out = np.zeros(THREADS, np.float32)
            run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy(), np.uint32(n)],
                hazard_check=True)
            outs.append(out)
        assert outs[0].tobytes() == outs[1].tobytes(), n
