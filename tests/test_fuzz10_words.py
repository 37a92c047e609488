"""ptxas 13.5.37's sm_89 words the emulator could not decode in branch fuzz10's sample run
(seeds 102000-102199, tools/isa_seeds/fuzz10_ampere.words, probed into ampere.json with
`python -m tools.isa_probe --extend --arch sm_89 --seed-ptx` of the two programs): each decodes
to the opcode and modifiers nvdisasm prints, with as many operands."""
from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

WORDS = Path(__file__).parent.parent / "tools" / "isa_seeds" / "fuzz10_ampere.words"


def _words():
    for line in WORDS.read_text().splitlines():
        if line.startswith("0x"):
            word, _, text = line.partition("#")
            yield int(word, 16), text.split("(seed")[0].strip()


@pytest.mark.parametrize("word,text", list(_words()), ids=[t for _, t in _words()])
def test_ptxas_word_decodes_and_encodes_back(word, text):
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89").stdout
    assert text in listing
    ins = codec.decode(word, "sm_89")
    words = text.split()
    if words[0].startswith("@"):
        words = words[1:]
    assert ".".join((ins.opcode, *ins.modifiers)) == words[0]
    assert len(ins.operands) == len(" ".join(words[1:]).replace("][", "] [").split(", "))
