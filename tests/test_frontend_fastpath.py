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


REG_DECLS = """.version 8.0
.target sm_89
.address_size 64
.reg .b32 %outside;
.visible .entry k(.param .u64 p)
{
\t.reg\t\t.b32 %r<4>;
.reg .pred %p;  // trailing comment
.reg .bf16 %h;
.reg .b32 %v<01>;
.reg .b32 plain;
{ .reg .u64 %rd<2>; mov.u32 %r1, 1; }
mov.u32 %r2, %r1;
ret;
}
"""


def test_reg_declarations_take_the_fast_lane_inside_bodies_only():
    """`.reg .type %name[<N>];` inside a body arrives pre-built; module-level ones, names
    without %, types the grammar refuses and odd counts go through the grammar, and the
    result is the same either way."""
    from ptx2sass.frontend import ast, lexer, parser
    lx = parser._StatementLexer(lexer.make_lexer("x.ptx"))
    lx.input(REG_DECLS)
    fast = []
    while (tok := lx.token()) is not None:
        if tok.type == "INSTRUCTIONS":
            fast += [s.declarators[0].name for s in tok.value if type(s) is ast.VariableDecl]
    assert fast == ["%r", "%p", "%rd"]
    assert repr(outcome(REG_DECLS, True)) == repr(outcome(REG_DECLS, False))  # syntax error
    accepted = REG_DECLS.replace(".reg .bf16 %h;\n", "").replace(".reg .b32 %outside;\n", "")
    tree = outcome(accepted, True)
    assert not isinstance(tree, tuple), tree
    assert repr(tree) == repr(outcome(accepted, False))


REPEATED = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .u32 %r<4>; .reg .u64 %rd<2>; .reg .pred %p; .reg .f32 %f;
ld.param.u64 %rd1, [p];
add.u32 %r1, %r1, 3; add.u32 %r1, %r1, 3;\tadd.u32 %r1, %r1, 3;   // after
    @!%p add.u32 %r1, %r1, 3; @!%p add.u32 %r1, %r1, 3;
ld.global.v2.u32 {%r2, %r3}, [%rd1+-8]; ld.global.v2.u32 {%r2, %r3}, [%rd1+-8];
  ld.global.v2.u32 {%r2, %r3}, [%rd1+-8];  add.u32 %r1, %r1, 3;
setp.ne.u32 %p, %r1, 0x0f; mov.f32 %f, 0f3F800000; mov.f32 %f, 0f3F800000;
add.u32 %r1, %r1, 3 ; add.u32 %r1, %r1, 3 // not a statement before the `;`
;
st.global.u32 [%rd1], %r1; st.global.u32 [%rd1], %r1;/* block comment */ret;
}
"""


def test_repeated_statements_are_looked_up_not_matched(monkeypatch):
    """A statement text seen before (anywhere: the cache is by text up to its `;`) is not
    matched again, and its tree (columns, lines, guards, vectors, addresses, hex floats)
    is still the grammar's."""
    from ptx2sass.frontend import fastpath

    class Counting:
        def __init__(self, pattern):
            self.pattern, self.calls = pattern, 0

        def match(self, *args):
            self.calls += 1
            return self.pattern.match(*args)

    counting = Counting(fastpath.STATEMENT)
    monkeypatch.setattr(fastpath, "STATEMENT", counting)
    monkeypatch.setattr(fastpath, "_STATEMENTS", {})
    tree = outcome(REPEATED, True)
    assert not isinstance(tree, tuple), tree
    assert repr(tree) == repr(outcome(REPEATED, False))
    first = counting.calls
    assert repr(outcome(REPEATED, True)) == repr(tree)
    failing = counting.calls - first    # the second parse matches only where none is cached
    # 8 distinct statement texts (ld.param, add, the guarded add, the vector load, setp,
    # mov.f32, `add ... 3 ;`, st) of the 16 the fast lane takes: each matched once
    assert first - failing == 8
