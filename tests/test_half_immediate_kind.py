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


# MUFU.EX2.F16 with an immediate, probed from a `-QNAN` seed likewise (7 of 16 bits)
_MUFU = 0xa000000fffe000a7908


@pytest.mark.parametrize("imm", [0x3c00, 0x0001, 0xfe00, 0x3555], ids=lambda i: f"{i:#06x}")
def test_mufu_f16_immediate_decodes_and_encodes_back(imm):
    word = (_MUFU & ~(0xffff << 32)) | imm << 32
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89").stdout
    line = next(line for line in listing.splitlines() if "MUFU" in line)
    assert " ".join(codec.decode_text(word, "sm_89").split()) == " ".join(
        line.split("*/", 1)[1].split(";")[0].split())
    control = word >> 105 << 105
    assert codec.encode(codec.decode(word, "sm_89"), "sm_89") & ~control == word & ~control


def test_no_float_field_is_narrower_than_its_format():
    """A probe seeded with a NaN immediate sees only the bits that change nvdisasm's text
    (exponent, sign, quiet bit): every float field holds its format's full width."""
    import json
    from pathlib import Path
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64h": 32}
    short = []
    for path in sorted((Path(codec.__file__).parent / "tables").glob("*.json")):
        for line in path.read_text().splitlines()[1:]:
            line = line.rstrip(",")
            if not line.startswith("{"):
                continue
            form = json.loads(line)
            short += [(path.name, form["text"]) for slot in form["slots"] for f in slot["fields"]
                      if "float" in f and len(f["bits"]) < width[f["float"]]]
    assert short == []
