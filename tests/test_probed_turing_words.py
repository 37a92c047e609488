"""ptxas 13.5.37's sm_75 words from fuzz campaign 15 (tools/isa_seeds/campaign15_turing.words,
probed into turing.json with `python -m tools.isa_probe --extend --arch sm_75 --seed-words
FILE`): each decodes as nvdisasm prints it. And the turing table's `ATOMG ... [URx]` forms:
two of them (probed from an EXCH and an INC word) held the atomic operation as fixed text
with its bits (84-90) in no field, so every such word decoded as EXCH or INC: ptxas's
warp-aggregated `atom.global.xor` (`@!P0 ATOMG.E.XOR ... [UR4]`) ran as an increment in the
emulator (seed 27000137's mismatch)."""
import functools
from pathlib import Path

import pytest

from ptx2sass.encoder import codec
from tools.isa_probe import disassemble

SEEDS = Path(__file__).parent.parent / "tools" / "isa_seeds" / "campaign15_turing.words"
# the words the emulator could not decode in ptxas's cubins of campaign 15's tuning seeds
# 27000000..399 (tools/fuzz_emu_fail), probed into turing.json
EMU_FAIL_SEEDS = SEEDS.with_name("c15_emufail75.words")


def _norm(text):
    return " ".join(text.replace(" ;", "").split())


def _words(path=SEEDS):
    for line in path.read_text().splitlines():
        if line.startswith("0x"):
            word, _, text = line.partition("#")
            yield pytest.param(int(word, 16), id=text.split("(")[0].strip())


@pytest.mark.parametrize("word", list(_words()))
def test_campaign15_word_decodes_as_nvdisasm_prints(word):
    [text] = disassemble([word], "sm_75")
    assert _norm(codec.decode_text(word, "sm_75")) == _norm(text)


def test_uniform_address_atomics_never_decode_as_another_operation():
    """Every single-bit change of ptxas's `@!P0 ATOMG.E.XOR.STRONG.GPU PT, RZ, [UR4], R0` that
    nvdisasm reads: ours is nvdisasm's text or an honest "cannot decode", never other text."""
    base = 0x000162000b9f414400000000ffff89a8
    words = [base ^ (1 << b) for b in range(105)]
    wrong = []
    for w, text in zip(words, disassemble(words, "sm_75")):
        if text is None:
            continue
        try:
            ours = codec.decode_text(w, "sm_75")
        except Exception:  # noqa: BLE001 - a refusal is allowed, a wrong reading is not
            continue
        if _norm(ours) != _norm(text):
            wrong.append((hex(w), text, ours))
    assert not wrong, wrong[:5]


def test_campaign15_emu_fail_words_decode_as_nvdisasm_prints():
    """One nvdisasm batch for all 61 words, and the `c[][].H1` of F2I.F16 that
    tools/isa_soundness found next to the F2I form they added (read without `.H1`)."""
    from tools.isa_soundness import _canonical, normalised
    words = [p.values[0] for path in (EMU_FAIL_SEEDS, SEEDS.with_name("c15_soundness75.words"))
             for p in _words(path)]
    wrong = [(hex(w), text) for w, text in zip(words, disassemble(words, "sm_75"))
             if normalised(codec.decode_text(w, "sm_75")) != normalised(_canonical(text))]
    assert len(words) == 62 and not wrong, wrong[:5]


# the words the emulator could not decode in ptxas's cubins of campaign 15's seeds
# 27000600..999 (tools/fuzz_emu_fail, at most two per shape), probed into turing.json:
# LEA.HI.X.SX32 with an immediate b (15 programs) or ~UR, LEA.HI.SX32 with c[], F2F/FRND
# from c[], I2F of immediates, UR operands of FRND/DMUL/DFMA/PRMT/IMAD.WIDE/VABSDIFF/HADD2
EMU_FAIL_600_SEEDS = SEEDS.with_name("c15_emufail75_600.words")


@functools.lru_cache(maxsize=None)
def _nvdisasm_texts(path):
    words = [p.values[0] for p in _words(path)]
    return dict(zip(words, disassemble(words, "sm_75")))


@pytest.mark.parametrize("word", list(_words(EMU_FAIL_600_SEEDS)))
def test_campaign15_600_emu_fail_word_decodes_as_nvdisasm_prints(word):
    from tools.isa_soundness import _canonical, normalised
    text = _nvdisasm_texts(EMU_FAIL_600_SEEDS)[word]
    assert normalised(codec.decode_text(word, "sm_75")) == normalised(_canonical(text))
