"""`selp.f32` as FSEL, as ptxas 13.5 writes it (`FSEL R15, R14, -INF, !P0` for Triton's
causal mask): a bitwise select that issues on the FMA pipe, leaving the integer ALU to the
address and compare arithmetic beside it. Expected counts come from ptxas's cubin (nvdisasm),
outputs from ptxas's cubin run in the emulator."""
import numpy as np
import pytest

from codegen_harness import run_both
from ptx2sass import codegen, oracle
from test_codegen_quality import _instructions
from tools.corpora import corpus_dirs


def _opcodes(cubin: bytes) -> list[str]:
    return [i.split()[0] for i in _instructions(oracle.nvdisasm(cubin)) if not i.startswith("@")] + \
        [i.split()[1] for i in _instructions(oracle.nvdisasm(cubin)) if i.startswith("@")]


def test_flash_attention_mask_selects_are_fsel_as_ptxas():
    """Triton's flash_attn_causal (tuning part): its 8 `selp.f32 x, -inf, s, p` are FSELs in
    ptxas's cubin; ours had 0 (SELs)."""
    ptx = (corpus_dirs()["triton"] / "flash_attn_causal.ptx").read_text()
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "flash_attn_causal.ptx"), "sm_89",
                                      filename="flash_attn_causal.ptx")
    theirs = oracle.ptxas(ptx, "sm_89").output
    want = _opcodes(theirs).count("FSEL")
    assert want == 8
    assert _opcodes(ours).count("FSEL") == want


# special values in both operands (NaNs with payloads, -0, infinities, denormals) and random bits
VALUES = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00001, 0xFFBFFFFF,
          0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000]


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("body", [
    "setp.lt.f32 %p0, %a0, %a1;\nselp.f32 %o, %a0, %a1, %p0;",
    "setp.eq.b32 %p0, %a0, 0;\nselp.f32 %o, 0fFF800000, %a1, %p0;",
    "setp.ne.b32 %p0, %a1, 1;\nselp.f32 %o, %a0, 0f7FC00001, %p0;",
    "setp.gt.u32 %p0, %a0, %a1;\nselp.f32 %o, 0f80000000, %a0, %p0;",
    "setp.gt.u32 %p0, %a0, %a1;\nselp.f32 %o, %a1, 0f00000000, %p0;",
])
def test_selp_f32_bits_equal_ptxas(arch, body):
    ours, theirs, _ = run_both(body, 32, 2, 32, values=VALUES, arch=arch)
    np.testing.assert_array_equal(ours, theirs)
