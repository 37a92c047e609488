"""Half-precision immediates are spelt by the word's own `.BF16_V2` choice, not the form's.

Blackwell's `HADD2.BF16_V2 R10, R0.H0_H0, 2, 2` (ptxas's bf16 atomicAdd loop, the real-world
corpus's intrinsics_misc.cu), probed into the table, also reads the plain F16 `HADD2 R, R,
imm, imm` words next to it (its BF16_V2 bit is a modifier group); the decoder then spelt
their f16 immediates as bf16 (`-524288, -0.0078125` for nvdisasm's `-10, -1`), 89 wrong
readings on sm_100. Expected texts: nvdisasm's."""
from __future__ import annotations

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec
from ptx2sass.encoder.sass_text import format_instruction

WORDS = [0x0000000000000000c900bc000c0c6430,    # @P6 HADD2 R12, R12, -10, -1
         0x0000000000000000c900bc000c0c5430,
         0x020fe2000020080040004000000a7430]    # HADD2.BF16_V2 R10, R0.H0_H0, 2, 2


def _nvdisasm(word: int, arch: str) -> str:
    out = oracle.nvdisasm_raw(word.to_bytes(16, "little"), arch).stdout
    line = next(l for l in out.splitlines() if "/*0000*/" in l)
    return " ".join(line.split("*/", 1)[1].split(";")[0].split())


@pytest.mark.parametrize("arch", ["sm_100", "sm_120", "sm_90"])
@pytest.mark.parametrize("word", WORDS, ids=hex)
def test_half_immediates_read_as_nvdisasm_reads_them(word, arch):
    ours = format_instruction(codec.decode(word, arch, 0))
    assert " ".join(ours.replace(".reuse", "").split()) == _nvdisasm(word, arch)
