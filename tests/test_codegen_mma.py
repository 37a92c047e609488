"""mma.sync on the tensor cores (HMMA f16/bf16/tf32 shapes): the tinygrad corpus kernels that
use it, compiled by ptx2sass, give bit for bit the outputs of ptxas's cubin in the emulator,
with zero hazards."""
import math

import pytest

from ptx2sass import codegen
from tools.emu_testing import TINYGRAD_DIR, run_tinygrad, tinygrad_manifest

KERNELS = [k for k in (tinygrad_manifest() if (TINYGRAD_DIR / "manifest.json").is_file() else [])
           if "mma.sync" in (TINYGRAD_DIR / k["file"]).read_text()
           and math.prod(k["grid"]) * math.prod(k["block"]) <= 128]


def test_the_corpus_has_mma_kernels_of_each_accumulator():
    texts = [(TINYGRAD_DIR / k["file"]).read_text() for k in KERNELS]
    assert any(".f32.f16.f16.f32" in t for t in texts)
    assert any(".f16.f16.f16.f16" in t for t in texts)
    assert any(".tf32.tf32" in t for t in texts)


@pytest.mark.parametrize("entry", KERNELS, ids=lambda k: k["file"])
def test_mma_kernel_matches_ptxas(entry):
    ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    cubin, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                           filename=entry["file"])
    assert any(i.opcode == "HMMA" for c in codes for i in c.instructions)
    theirs = run_tinygrad(entry, hazard_check=False)
    ours = run_tinygrad(entry, cubin=cubin)
    assert ours.ok, ours.reason
    assert not ours.result.hazards
    for name, want in theirs.result.buffers.items():
        assert ours.result.buffers[name] == want, name


def _imma_kernel(shape: str, a: str, b: str, sat: bool) -> str:
    n_a, n_b = {"m16n8k32": (4, 2), "m16n8k16": (2, 1)}[shape]
    regs = [f"%r{k}" for k in range(n_a + n_b + 4)]
    frag_a, frag_b, frag_c = regs[:n_a], regs[n_a:n_a + n_b], regs[n_a + n_b:]
    loads = "\n".join(f"ld.global.b32 {r}, [%rd3+{4 * k}];" for k, r in enumerate(regs))
    return f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<5>;
.reg .b32 %t, %r<10>, %d<4>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %rd3, %t, 40;
add.s64 %rd3, %rd2, %rd3;
{loads}
mma.sync.aligned.{shape}.row.col{'.satfinite' if sat else ''}.s32.{a}.{b}.s32 {{%d0, %d1, %d2, %d3}}, {{{', '.join(frag_a)}}}, {{{', '.join(frag_b)}}}, {{{', '.join(frag_c)}}};
mul.wide.u32 %rd4, %t, 16;
add.s64 %rd4, %rd1, %rd4;
st.global.v4.b32 [%rd4], {{%d0, %d1, %d2, %d3}};
ret;
}}
"""


@pytest.mark.parametrize("shape,a,b,sat", [
    ("m16n8k32", "s8", "s8", False), ("m16n8k32", "u8", "u8", True), ("m16n8k16", "s8", "s8", False),
    ("m16n8k16", "u8", "s8", False),
    ("m16n8k32", "s8", "u8", True)])
def test_integer_mma_matches_ptxas(shape, a, b, sat):
    """IMMA on random bytes with accumulators near the int32 limits (so .satfinite matters)."""
    import numpy as np
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    ptx = _imma_kernel(shape, a, b, sat)
    rng = np.random.default_rng(7)
    data = rng.integers(0, 2**32, size=32 * 10, dtype=np.uint64).astype(np.uint32)
    data[9::10] = 0x7FFFFF00       # an accumulator close to the top
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    outs = []
    for cubin, check in ((ours, True), (oracle.ptxas(ptx).output, False)):
        out = np.zeros(32 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=check)
        assert not (check and res.hazards)
        outs.append(out)
    assert (outs[0] == outs[1]).all()
