"""Instructions that differ only in an integer immediate are encoded from one plan.

Every `mad.lo` of a long kernel with its own constant (bench/memory_scaling.py's lineops)
was a new text for the codec: printed, cut into operands again and its form searched
anew, ~33 us each (a third of lineops' compile). Now the first such text's search leaves
a plan (the word, the immediates' fields) that the next ones fill, and the search decides
only where a value does not fit its field. Expected texts: nvdisasm's reading of our words.
"""
from __future__ import annotations

import random

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec, sass_text
from ptx2sass.encoder.fields import operand_shape
from ptx2sass.encoder.model import Imm, Instruction, Reg

R1, R2, R3, RZ, PT = Reg("R", 1), Reg("R", 2), Reg("R", 3), Reg("R", 255), Reg("P", 7)


def _nvdisasm(words: list[int], arch: str) -> list[str]:
    """nvdisasm's text of each word (spaces normalised, no `;`)."""
    out = oracle.nvdisasm_raw(b"".join(w.to_bytes(16, "little") for w in words), arch).stdout
    texts = [" ".join(line.split("*/", 1)[1].split(";")[0].split())
             for line in out.splitlines() if line.strip().startswith("/*") and "*/" in line
             and line.split("*/", 1)[1].strip().split(";")[0].strip()]
    assert len(texts) == len(words), out
    return texts


def _fresh(monkeypatch) -> None:
    """Empty the codec's caches so that the search runs as in a new process."""
    for name in ("_WORDS", "_PLANS", "_OPERAND_TEXTS", "_CANDIDATES", "_GROUP_VALUES",
                 "_GROUP_WORDS", "_SHAPES"):
        monkeypatch.setattr(codec, name, {}, raising=False)
    monkeypatch.setattr(codec, "_READS_BACK", {})


def _imad(value: int) -> Instruction:
    return Instruction("IMAD", (), (R1, R1, Imm(value), R2))


def _lop3(lut: int, value: int) -> Instruction:
    return Instruction("LOP3", ("LUT",), (R1, R2, Imm(value), R3, Imm(lut), PT))


def test_a_new_immediate_does_not_search_again(monkeypatch):
    _fresh(monkeypatch)
    searches, printed = [], []
    search, fmt = codec._encode_view, sass_text.format_instruction
    monkeypatch.setattr(codec, "_encode_view", lambda *a, **k: searches.append(1) or search(*a, **k))
    monkeypatch.setattr(sass_text, "format_instruction", lambda i: printed.append(1) or fmt(i))
    codec.encode(_imad(3), "sm_89", 0, [])
    first = len(searches)
    assert first >= 1
    for v in range(5, 405, 2):
        codec.encode(_imad(v), "sm_89", 0, [])
    assert len(searches) == first, "each new immediate searched the forms again"
    assert not printed, "the instruction's text was printed to encode it"


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_120"])
def test_planned_words_read_back_as_their_text(monkeypatch, arch):
    _fresh(monkeypatch)
    rng = random.Random(34)
    values = [3, 2, 0x7fffffff, -1, -0x80000000, 0x1234] + [rng.randrange(-(1 << 31), 1 << 31)
                                                             for _ in range(12)]
    lops = [(0xc0, 0x5), (0x3c, 0xffffffff), (0x96, 0x0), (0xfe, 0x80000000), (0x1, 0x7), (0xc0, 0x1), (0xc0, 0x0)]
    ins = [_imad(v) for v in values] + [_lop3(lut, v) for lut, v in lops]
    words = [codec.encode(i, arch, 0, []) for i in ins]
    assert codec._PLANS, "no plan was made"
    assert _nvdisasm(words, arch) == [sass_text.format_instruction(i) for i in ins]


def test_a_value_its_field_cannot_hold_is_refused(monkeypatch):
    """LOP3's truth table is 8 bits: after a plan exists, 0x1c0 must not be cut to 0xc0."""
    _fresh(monkeypatch)
    codec.encode(_lop3(0xc0, 5), "sm_89", 0, [])
    assert codec._PLANS
    with pytest.raises(codec.EncodeError):
        codec.encode(_lop3(0x1c0, 5), "sm_89", 0, [])


@pytest.mark.parametrize("value", [0, 0x10, 0x7fffffff, 0xffffffff, 0x1000000000, -0x10])
def test_the_shape_of_an_immediate_is_the_one_operand_shape_gives(value):
    text = sass_text._format_hex(value)
    numbers = codec.table_for("sm_89").numbers
    shape, nums = operand_shape(text, numbers)
    assert codec._shape_of(text, numbers) == (shape, tuple(nums))
