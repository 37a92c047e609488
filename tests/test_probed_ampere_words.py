"""ptxas 13.5.37's sm_89 words the emulator could not decode (or decoded without a field) in
fuzz runs, each file probed into ampere.json with `python -m tools.isa_probe --extend --arch
sm_89 --seed-words FILE` (or `--seed-ptx` of the programs): fuzz campaign 8900000 and C7F's
leftovers (fuzz8_ampere.words), campaign 9 (campaign9_ampere.words), branch fuzz10's sample
run, seeds 102000-102199 (fuzz10_ampere.words), campaign 12 (campaign12_ampere.words). Each
word decodes to the opcode and modifiers nvdisasm prints, with as many operands. (Encoding back is not asserted: LDGSTS with a cache
policy keeps a bit, 101, that its text does not show.)"""
from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

SEEDS = Path(__file__).parent.parent / "tools" / "isa_seeds"
FILES = ("fuzz8_ampere.words", "campaign9_ampere.words", "fuzz10_ampere.words",
         "campaign12_ampere.words")


def _words():
    for name in FILES:
        for line in (SEEDS / name).read_text().splitlines():
            if line.startswith("0x"):
                word, _, text = line.partition("#")
                yield pytest.param(int(word, 16), text.split("(seed")[0].strip(),
                                   id=f"{name.split('_')[0]}:{text.split('(seed')[0].strip()}")


@pytest.mark.parametrize("word,text", list(_words()))
def test_ptxas_word_decodes_as_nvdisasm_prints(word, text):
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89").stdout
    assert text in listing
    ins = codec.decode(word, "sm_89")
    words = text.split()
    if words[0].startswith("@"):
        words = words[1:]
    assert ".".join((ins.opcode, *ins.modifiers)) == words[0]
    assert len(ins.operands) == len(" ".join(words[1:]).replace("][", "] [").split(", "))
