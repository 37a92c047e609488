"""PTX tokens (PLY lex).

The lexer does more than split characters so that the grammar stays small and fast:
an instruction name with its modifiers (`ld.global.nc.v4.f32`) is one OPCODE token, a
directive is classified by a table (`.reg` is a SPACE, `.u32` a TYPE), and registers keep
their `%` sigil. Column numbers are computed lazily from the offset of the last newline.
"""
from __future__ import annotations

import sys

from ply import lex

from ptx2sass.errors import CompileError
from ptx2sass.frontend import tables

# Directive spellings grouped by the token type the grammar sees.
STATE_SPACES = ("reg", "sreg", "local", "shared", "global", "const", "param", "tex")
FUNDAMENTAL_TYPES = (
    "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
    "f16", "f16x2", "f32", "f64", "bf16", "bf16x2", "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2",
    "e2m1", "e2m1x2", "e2m3", "e3m2", "e2m3x2", "e3m2x2", "ue8m0", "ue8m0x2", "pred",
    "texref", "samplerref", "surfref",
)
# Types ptxas's grammar does not take in a declaration (only as instruction types).
NOT_DECLARABLE = frozenset((".bf16", ".bf16x2", ".tf32", ".e2m1", ".e2m3", ".e3m2", ".ue8m0"))
LINKAGES = ("visible", "extern", "weak", "common")
PERFORMANCE_DIRECTIVES = (
    "maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg", "noreturn",
    "explicitcluster", "reqnctapercluster", "maxclusterrank", "abi_preserve",
    "abi_preserve_control", "blocksareclusters",
)
_DIRECTIVE_TOKENS: dict[str, str] = {
    ".version": "VERSION", ".target": "TARGET", ".address_size": "ADDRESS_SIZE",
    ".entry": "ENTRY", ".func": "FUNC", ".align": "ALIGN", ".ptr": "PTR",
    ".file": "FILE", ".loc": "LOC", ".section": "SECTION", ".pragma": "PRAGMA",
    ".branchtargets": "BRANCHTARGETS", ".calltargets": "CALLTARGETS",
    ".callprototype": "CALLPROTOTYPE", ".attribute": "ATTRIBUTE", ".alias": "ALIAS",
    ".v2": "VECTOR", ".v4": "VECTOR", ".v8": "VECTOR",
}
_DIRECTIVE_TOKENS.update({"." + s: "SPACE" for s in STATE_SPACES})
_DIRECTIVE_TOKENS.update({"." + t: "TYPE" for t in FUNDAMENTAL_TYPES})
_DIRECTIVE_TOKENS.update({"." + s: "LINKAGE" for s in LINKAGES})
_DIRECTIVE_TOKENS.update({"." + s: "PERF" for s in PERFORMANCE_DIRECTIVES})

tokens = (
    "VERSION", "TARGET", "ADDRESS_SIZE", "ENTRY", "FUNC", "ALIGN", "PTR", "FILE", "LOC",
    "SECTION", "PRAGMA", "BRANCHTARGETS", "CALLTARGETS", "CALLPROTOTYPE", "ATTRIBUTE",
    "ALIAS", "VECTOR", "SPACE", "TYPE", "LINKAGE", "PERF", "DOTNAME",
    "OPCODE", "IDENT", "REGISTER", "INTEGER", "FLOAT", "HEXFLOAT", "STRING",
    "COMMA", "SEMI", "COLON", "LBRACE", "RBRACE", "LPAREN", "RPAREN", "LBRACKET", "RBRACKET",
    "LT", "GT", "PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "BANG", "TILDE", "AMP", "PIPE",
    "CARET", "SHL", "SHR", "AT", "EQUALS", "ANDAND", "OROR", "EQEQ", "NOTEQ",
    "INSTRUCTIONS", "SECTION_ROW",  # whole statements pre-built by fastpath.py
)

t_ignore = " \t\r\f\v"

t_COMMA = r","
t_SEMI = r";"
t_COLON = r":"
t_LPAREN = r"\("
t_RPAREN = r"\)"
t_LBRACKET = r"\["
t_RBRACKET = r"\]"
t_SHL = r"<<"
t_SHR = r">>"
t_LT = r"<"
t_GT = r">"
t_PLUS = r"\+"
t_MINUS = r"-"
t_STAR = r"\*"
t_SLASH = r"/"
t_PERCENT = r"%"
t_NOTEQ = r"!="
t_BANG = r"!"
t_TILDE = r"~"
t_ANDAND = r"&&"
t_AMP = r"&"
t_OROR = r"\|\|"
t_PIPE = r"\|"
t_CARET = r"\^"
t_AT = r"@"
t_EQEQ = r"=="
t_EQUALS = r"="


def t_newline(t):
    r"\n+"
    t.lexer.lineno += len(t.value)
    t.lexer.line_start = t.lexpos + len(t.value)


# ptxas's parser stack overflows ("memory exhausted") past this many nested braces.
MAX_BRACE_DEPTH = 1665


def t_LBRACE(t):
    r"\{"
    t.lexer.brace_depth += 1
    if t.lexer.brace_depth > MAX_BRACE_DEPTH:
        raise _syntax_error(t.lexer, "{", t.lexpos, "memory exhausted")
    return t


def t_RBRACE(t):
    r"\}"
    t.lexer.brace_depth -= 1
    return t


def t_block_comment(t):
    r"/\*[\s\S]*?\*/"
    newlines = t.value.count("\n")
    if newlines:
        t.lexer.lineno += newlines
        t.lexer.line_start = t.lexpos + t.value.rindex("\n") + 1


def t_line_comment(t):
    r"//[^\n]*"


def t_STRING(t):
    r'"[^"\n]*"'
    # no escapes: ptxas ends a string at the next quote
    return t


def t_HEXFLOAT(t):
    r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}"
    return t


def t_FLOAT(t):
    r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+"
    return t


def t_INTEGER(t):
    r"0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|[0-9]+U?"
    return t


def t_DIRECTIVE(t):
    r"\.[A-Za-z_][A-Za-z0-9_$]*(::[A-Za-z0-9_$]+)*"
    t.type = _DIRECTIVE_TOKENS.get(t.value.split("::", 1)[0], "DOTNAME")
    return t


def t_REGISTER(t):
    r"%[A-Za-z0-9_$]+(\.[A-Za-z0-9_$]+)?"
    return t


def t_OPCODE(t):
    r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z0-9_$]+(::[A-Za-z0-9_$]+)*)*"
    # A dotted word is an instruction with its modifiers (or `vec.x` in operand position);
    # a bare word is an identifier (labels are told apart by the grammar: IDENT COLON).
    if "." not in t.value:
        t.type = "IDENT"
    return t


def t_error(t):
    char = t.value[0]
    if ord(char) > 127:
        # ptxas names only the line, inside the message, and no file
        raise CompileError(f"Unexpected non-ASCII character encountered on line "
                           f"{t.lexer.lineno}", None, None, None, severity="fatal")
    raise _syntax_error(t.lexer, char if char != "\0" else "", t.lexpos)


def _syntax_error(lexer, near: str, pos: int, reason: str = "syntax error") -> CompileError:
    column = pos - getattr(lexer, "line_start", 0) + 1
    return CompileError(f"Parsing error near '{near}': {reason}",
                        getattr(lexer, "filename", None), lexer.lineno, column, severity="fatal")


def table_spec():
    """(table name, PLY constructor, table fields) for `tables.load` and `tables.generate`."""
    name = tables.table_name("_lextab", __file__)

    def build(table, outputdir=None):
        module = sys.modules[__name__]
        if table is None and outputdir is None:      # derive in memory, write nothing
            return lex.lex(module=module, optimize=0, errorlog=lex.NullLogger())
        return lex.lex(module=module, optimize=1, lextab=table or tables.derived_name(name),
                       outputdir=outputdir, errorlog=lex.NullLogger())
    return name, build, tables.LEX_FIELDS


_TEMPLATE = None


def _template():
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = tables.load(*table_spec())
    return _TEMPLATE


def make_lexer(filename: str | None = None):
    """A fresh lexer (cloned from the cached master) that knows the file name for errors."""
    lexer = _template().clone()
    lexer.lineno = 1
    lexer.line_start = 0
    lexer.brace_depth = 0
    lexer.filename = filename
    return lexer

