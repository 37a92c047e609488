"""Forms ptxas 13.5 writes for sm_90 that the emulator's codec could not decode: the words of
ptxas's cubins of fuzz seeds 9,600,000-9,600,149 (tools/isa_seeds/fuzz_sm90_emufail.words,
gathered by `python -m tools.fuzz_emu_fail --words`, probed into encoder/tables/hopper.json by
tools/isa_probe). Each word must decode to exactly nvdisasm's text (kept beside it in the
file) and encode back to the same 128 bits."""
from pathlib import Path

import pytest

WORDS = Path(__file__).resolve().parents[1] / "tools" / "isa_seeds" / "fuzz_sm90_emufail.words"
CASES = [(int(line.split("#")[0], 16), line.split("#", 1)[1].strip())
         for line in WORDS.read_text().splitlines() if line.split("#")[0].strip()]


@pytest.mark.parametrize("word,text", CASES, ids=[t for _, t in CASES])
def test_sm90_fuzz_word_round_trips(word, text):
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.sass_text import format_instruction
    ins = codec.decode(word, "sm_90", 0)
    assert format_instruction(ins) == text
    assert codec.encode(ins, "sm_90", pc=0) == word


@pytest.mark.parametrize("text", ["HFMA2.BF16_V2 R28, -RZ.H0_H0, RZ.H0_H0, |UR4.H0_H0|",
                                  "HMNMX2.NAN.XORSIGN R0, |R26|.H1_H1, |UR4.H0_H0|, PT"])
def test_uniform_swizzle_prints_inside_the_bars(text):
    """nvdisasm prints a uniform register's half swizzle inside |…| (a vector register's
    after it): the text must parse and print back the same."""
    from ptx2sass.encoder.sass_text import format_instruction, parse_instruction
    assert format_instruction(parse_instruction(text)) == text
