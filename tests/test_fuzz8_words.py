"""ptxas 13.5.37's sm_89 words the emulator could not decode (or decoded without a field)
in fuzz campaign 8900000 and the leftovers of C7F (tools/isa_seeds/fuzz8_ampere.words):
each decodes and encodes back to the same 128 bits, and its decoded text names what
nvdisasm prints (the selector `.H1`, a negated UR, a constant-bank source)."""
from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

WORDS = Path(__file__).parent.parent / "tools" / "isa_seeds" / "fuzz8_ampere.words"


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
    assert codec.encode(ins, "sm_89") == word
