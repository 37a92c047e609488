"""HFMA2's immediate-pair form probed from a `-QNAN` seed (`HFMA2.FTZ.RELU R29, R16, -QNAN ,
-QNAN , R11`, ampere.json) holds `.BF16_V2` as a modifier group: its half immediates are
16-bit fields read as f16, or as bf16 when the word selects `.BF16_V2`. Fuzz seed 22000468:
ptxas folded a bf16 NaN into `HFMA2.BF16_V2.RELU R0, R0.H0_H0, -QNAN , -QNAN , R5.H0_H0`
and the emulator read it as 7.57e-06 (7 of the 16 bits, as an f16). Expected texts are
nvdisasm's for each word."""
import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

# the word of seed 22000468 (ptxas 13.5.37, sm_89) and the same with other immediates
_WORD = (0x004fc80003a48805 << 64) | 0xffffffff00007831
_IMMS = [0xffffffff, 0x3fc03fc0, 0x3f80bf80, 0x00017f7f]


def _nvdisasm(word: int) -> str:
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89").stdout
    line = next(line for line in listing.splitlines() if "HFMA2" in line)
    return " ".join(line.split("*/", 1)[1].split(";")[0].split())


@pytest.mark.parametrize("imm", _IMMS, ids=[f"{i:#010x}" for i in _IMMS])
@pytest.mark.parametrize("bf16", [True, False], ids=["bf16", "f16"])
def test_half_immediates_decode_and_encode_back(imm, bf16):
    word = (_WORD & ~(0xffffffff << 32)) | imm << 32
    if not bf16:
        word &= ~(1 << 85)          # the .BF16_V2 bit of the form's modifier group
    text = _nvdisasm(word)
    assert " ".join(codec.decode_text(word, "sm_89").split()) == text
    ins = codec.decode(word, "sm_89")
    assert ins.opcode == "HFMA2" and ("BF16_V2" in ins.modifiers) == bf16
    control = word >> 105 << 105
    assert codec.encode(ins, "sm_89") & ~control == word & ~control
