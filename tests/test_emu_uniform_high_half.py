"""Words ptxas 13.5.37 writes for sm_89 with a `.H1` selector on a uniform-register source.

Fuzz seed 880293 (`ld.global.v2.u16 {a, b}` then `cvt.rz.f64.s16 d, b`): ptxas loads both
halves with one 32-bit load, moves the word to a uniform register and converts its high
half with `I2F.F64.S16.RZ R4, UR10.H1`. The table's I2F.F64 form with a UR source had no
selector bit, so the emulator converted the low half (29.0 where the high half is 0).
The expected texts are nvdisasm's for the same words."""
import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

WORDS = [
    # (ptxas's 128-bit word, register index, what nvdisasm prints)
    (0x001f22000810dc001000000a00047d12, 10, "I2F.F64.S16.RZ R4, UR10.H1"),
]


@pytest.mark.parametrize("word,index,text", WORDS, ids=[w[2] for w in WORDS])
def test_uniform_source_keeps_its_high_half_selector(word, index, text):
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_89").stdout
    assert text in listing                     # the oracle's reading of the word
    inst = codec.decode(word, "sm_89")
    src = inst.operands[-1]
    assert (src.file, src.index, src.suffix) == ("UR", index, ("H1",))
