"""A `shl.b32` by a constant read by two or more adds of registers is one IMAD per add
(`IMAD R22, R41, 0x200, R38` in ptxas 13.5's flash_attn_causal, Triton's tuning part): the
FMA pipe takes them beside an integer ALU busy with the loop's addresses. Expected counts
come from ptxas's cubin (nvdisasm), outputs from ptxas's cubin run in the emulator."""
import re

import numpy as np
import pytest

from codegen_harness import run_both
from ptx2sass import codegen, oracle
from test_codegen_quality import _instructions
from tools.corpora import corpus_dirs

SHIFTED_MAD = re.compile(r"^IMAD R\d+, R\d+, 0x200, R\d+")


def test_flash_attention_shift_adds_are_imads_as_ptxas():
    """flash_attn_causal's `shl.b32 %r85, %r197, 9` (read by two adds) and its neighbour:
    ptxas writes 2 IMADs by 0x200; ours had 0 (SHF.L.U32 and IADD3s)."""
    ptx = (corpus_dirs()["triton"] / "flash_attn_causal.ptx").read_text()
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "flash_attn_causal.ptx"), "sm_89",
                                      filename="flash_attn_causal.ptx")
    want = sum(bool(SHIFTED_MAD.match(i)) for i in _instructions(oracle.nvdisasm(theirs)))
    assert want == 2
    assert sum(bool(SHIFTED_MAD.match(i)) for i in _instructions(oracle.nvdisasm(ours))) == want


VALUES = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0xDEADBEEF]


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("k", [0, 1, 9, 31])
@pytest.mark.parametrize("second", ["add.s32", "sub.s32", "add.u32"])
def test_shift_read_by_two_adds_equals_ptxas(arch, k, second):
    body = (f"shl.b32 %x0, %a0, {k};\nadd.s32 %x1, %a1, %x0;\n{second} %x2, %a1, %x0;\n"
            "xor.b32 %o, %x1, %x2;")
    ours, theirs, _ = run_both(body, 32, 2, 32, values=VALUES, arch=arch)
    np.testing.assert_array_equal(ours, theirs)
