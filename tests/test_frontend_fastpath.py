"""The fast lane for plain instructions and debug-section rows builds exactly the tree the
grammar builds (positions included) and changes no diagnostic."""
import json
import sys
from pathlib import Path

import pytest

from frontend_cases import CASES
from ptx2sass import CompileError
from ptx2sass.frontend import check, parse
from tools.corpora import corpus_dirs, ptx_files

FILES = [p for name in corpus_dirs() for p in ptx_files(name)]
INVALID = Path(__file__).resolve().parent / "corpus" / "invalid"


def outcome(text: str, fast: bool):
    try:
        module = parse(text, "x.ptx", fast=fast)
    except CompileError as e:
        return ("parse", str(e))
    try:
        check(module, "sm_89")
    except CompileError as e:
        return ("check", [str(d) for d in e.diagnostics])
    return module


@pytest.mark.parametrize("path", FILES[::3], ids=lambda p: p.name)
def test_same_tree_on_corpus(path):
    text = path.read_text()
    assert repr(outcome(text, True)) == repr(outcome(text, False))  # repr: NaN literals


def invalid_texts():
    if not INVALID.is_dir():
        return []
    manifest = json.loads((INVALID / "manifest.json").read_text())
    return [(INVALID / v["file"]).read_bytes().decode(manifest["encoding"])
            for v in manifest["variants"]]


def test_same_diagnostics_on_bad_input():
    texts = list(CASES.values()) + invalid_texts()
    assert len(texts) > 100
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)  # repr of the deep-nesting variants
    try:
        for text in texts:
            assert repr(outcome(text, True)) == repr(outcome(text, False))
    finally:
        sys.setrecursionlimit(limit)  # repr: NaN literals


def test_fast_lane_is_taken():
    """A plain kernel is parsed mostly by the fast lane (guards against silent fall-back)."""
    from ptx2sass.frontend import lexer, parser
    text = CASES["ok_negative_offset"]
    lx = parser._StatementLexer(lexer.make_lexer("x.ptx"))
    lx.input(text)
    kinds = []
    while (tok := lx.token()) is not None:
        kinds.append(tok.type)
        if tok.type == "INSTRUCTIONS":
            kinds += ["instruction"] * len(tok.value)
    assert kinds.count("instruction") == 3
