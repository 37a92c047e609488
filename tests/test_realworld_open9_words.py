"""Words ptxas wrote for the realworld corpus's new sources (branch open9) that the ISA tables
had no form for, so the emulator could not run ptxas's cubin (realworld_heldback_sm75.words:
the one found on the held-back part, sgemm_double_buffer retargeted to sm_75): each now decodes to the text
nvdisasm prints and encodes back to the same word, on each arch its file names (the files are
the probe's seeds: `python -m tools.isa_probe --extend --arch A --seed-words FILE`)."""
from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

SEEDS = Path(__file__).parent.parent / "tools" / "isa_seeds"
FILES = {"lea_x_immediate.words": ("sm_80", "sm_86", "sm_89"), "realworld_open9_sm90.words": ("sm_90",),
         "realworld_open9_sm120.words": ("sm_120",), "realworld_open9_sm75.words": ("sm_75",),
         "realworld_heldback_sm75.words": ("sm_75",)}


def _words():
    for name, archs in FILES.items():
        for line in (SEEDS / name).read_text().splitlines():
            if line.startswith("0x"):
                word, _, text = line.partition("#")
                for arch in archs:
                    yield pytest.param(int(word, 16), text.strip(), arch, id=f"{arch}:{text.strip()}")


@pytest.mark.parametrize("word,text,arch", list(_words()))
def test_word_decodes_as_nvdisasm_prints_and_encodes_back(word, text, arch):
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), arch).stdout
    opcode = text.split()[0]
    assert opcode in listing                     # nvdisasm reads the word on this arch
    ours = codec.decode_text(word, arch)
    assert ours.split()[0] == opcode, ours
    assert codec.encode(codec.decode(word, arch), arch) == word
