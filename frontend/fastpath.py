"""A fast lane for the commonest statements: plain instructions and debug-section rows.

Most PTX lines are `[@p] opcode reg, reg, [reg+imm];` and going through PLY token by token
costs several microseconds per token. Where a whole statement matches the strict pattern
below, the lexer hands the parser the finished
`ast.Instruction` (exactly the tree the grammar would have built, positions included;
tests compare both). Anything unusual (expressions, parentheses, decimal floats, pairs,
octal literals, comments inside the statement, errors) does not match and takes the normal
grammar path, so diagnostics are unchanged.
"""
from __future__ import annotations

import re
import struct
from sys import intern as _intern

from ptx2sass.frontend import ast
from ptx2sass.frontend.lexer import FUNDAMENTAL_TYPES, NOT_DECLARABLE

_NAME = r"[%$A-Za-z_][\w$]*(?:\.[\w$]+)?"
_INT = r"(?:0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)U?"
_HEXF = r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}"
# (a bare sink `_` takes the grammar, which decides where ptxas allows one)
_VALUE_NAME = rf"(?!_(?![\w$]))" + _NAME
_OPERAND = (rf"(?:{_HEXF}|-?{_INT}|{_VALUE_NAME}"
            rf"|\[[ \t]*(?:{_VALUE_NAME}(?:[ \t]*[+-][ \t]*-?{_INT})?|{_INT})[ \t]*\]"
            rf"|\{{[ \t]*{_NAME}(?:[ \t]*,[ \t]*{_NAME})*[ \t]*\}})")
_OPCODE = r"[A-Za-z_][\w$]*(?:\.[\w$]+(?:::[\w$]+)*)*"

# (the blanks and a `//` comment after the `;` are taken too: the lexer would skip them next)
STATEMENT = re.compile(
    rf"(?:@(?P<neg>!?)(?P<pred>{_VALUE_NAME})[ \t]+)?(?P<op>{_OPCODE})"
    rf"(?:[ \t]+(?P<ops>{_OPERAND}(?:[ \t]*,[ \t]*{_OPERAND})*))?[ \t]*;"
    r"(?:[ \t\r\f\v]|//[^\n]*)*")
assert tuple(STATEMENT.groupindex) == ("neg", "pred", "op", "ops")     # `build` unpacks them
_PRED, _OP, _OPS = (STATEMENT.groupindex[g] for g in ("pred", "op", "ops"))

# One data row of a debug section: `.b8 95, 90` / `.b32 .debug_abbrev` / `.b64 $L__tmp1`.
SECTION_ROW = re.compile(
    rf"(?P<type>\.b(?:8|16|32|64))[ \t]+(?P<values>(?:{_INT}|\.?{_NAME})"
    rf"(?:[ \t]*,[ \t]*(?:{_INT}|\.?{_NAME}))*)(?=[ \t]*(?:\n|//|$))")
_ROW_VALUE = re.compile(rf"(?P<int>{_INT})|(?P<name>\.?{_NAME})")

# `.reg .type %name;` / `.reg .type %name<N>;` inside a body (other declarations, names
# that are not %registers and types the grammar refuses in a declaration take the grammar).
REG_DECL = re.compile(
    r"\.reg[ \t]+(?P<type>\.(?:%s))(?![\w$])[ \t]+(?P<name>%%[A-Za-z0-9_$]+)"
    r"(?:[ \t]*<[ \t]*(?P<count>[1-9][0-9]*|0)[ \t]*>)?[ \t]*;"
    % "|".join(sorted((t for t in FUNDAMENTAL_TYPES if "." + t not in NOT_DECLARABLE),
                      key=len, reverse=True)))

_PIECE = re.compile(
    rf"(?P<hexf>{_HEXF})|(?P<neg>-)?(?P<int>{_INT})(?![\w$])|(?P<name>{_NAME})"
    rf"|(?P<addr>\[)|(?P<vec>\{{)")
_ADDRESS = re.compile(
    rf"\[[ \t]*(?:(?P<base>{_NAME})(?:[ \t]*(?P<sign>[+-])[ \t]*(?P<neg>-?)[ \t]*"
    rf"(?P<off>{_INT}))?|(?P<abs>{_INT}))[ \t]*\]")
_VECTOR_NAME = re.compile(_NAME)
_SEPARATOR = re.compile(r"[ \t,]*")
_U64 = (1 << 64) - 1


_OPCODES: dict[str, tuple[str, tuple[str, ...]]] = {}     # "ld.global.u32" -> its parts

# What follows a statement's `;` that STATEMENT takes too (its last part, alone).
_TRAIL = re.compile(r"(?:[ \t\r\f\v]|//[^\n]*)*")
_TRAIL_STARTS = " \t\r\f\v/"     # (and "": `in` finds it too)
_LONGEST_CACHED = 256       # statement texts looked up in `_STATEMENTS` (chars up to the `;`)
_STATEMENTS: dict[str, tuple] = {}      # statement text up to its `;` -> `build`'s shape


def match_statement(data: str, pos: int) -> tuple | None:
    """(shape, end) for the plain statement at `pos` (STATEMENT's match: `end` past the
    blanks and comment after it), or None. A statement's text up to its `;` decides the
    match up to there (nothing in it but the final `;` can be a `;`), so the texts STATEMENT
    has matched are kept with what `build` reads off the match, and a repeated statement
    (unrolled code, generated code) is looked up instead of matched again."""
    semi = data.find(";", pos, pos + _LONGEST_CACHED)
    if semi >= 0:
        shape = _STATEMENTS.get(data[pos:semi + 1])
        if shape is not None:
            end = semi + 1
            after = data[end:end + 1]
            if after == "\n":              # (what follows is mostly a newline or one blank)
                return shape, end
            if after == " " and data[end + 1:end + 2] not in _TRAIL_STARTS:
                return shape, end + 1
            return shape, _TRAIL.match(data, end).end()
    m = STATEMENT.match(data, pos)
    if m is None:
        return None
    ops = m.start(_OPS)
    shape = (*m.groups(), m.start(_OP) - pos, m.start(_PRED) - pos,
             ops - pos if ops >= 0 else -1, m.end(_OPS) - pos)
    if semi >= 0 and len(_STATEMENTS) < 16384:
        _STATEMENTS[data[pos:semi + 1]] = shape
    return shape, m.end()


def build(shape: tuple, text: str, start: int, line: int, line_start: int) -> ast.Instruction:
    """The Instruction for a statement `match_statement` found at `start` in `text`, on one
    line starting at line_start."""
    neg, pred, op_text, ops, op_at, pred_at, ops_at, ops_end = shape
    parts = _OPCODES.get(op_text)
    if parts is None:
        opcode, *mods = op_text.split(".")
        parts = _OPCODES[op_text] = (opcode, tuple("." + m for m in mods))
    column = start - line_start + 1
    ins = ast.Instruction(parts[0], parts[1], [], line, column + op_at)
    if pred is not None:
        ins.guard = ast.Guard(predicate=_name(pred, line, column + pred_at),
                              negated=bool(neg), line=line, column=column)
    if ops is None:
        return ins
    pos = start + ops_at
    operands = ins.operands
    if "{" not in ops:
        _plain_operands(ops, pos, text, line, line_start, operands)
        return ins
    end = start + ops_end
    piece, separator = _PIECE.match, _SEPARATOR.match
    while pos < end:
        m = piece(text, pos)
        kind = m.lastgroup
        if kind == "name":
            operands.append(_name(m.group("name"), line, pos - line_start + 1))
            pos = m.end()
        elif kind == "int":
            lit = int_literal(m.group("int"), line, m.start("int") - line_start + 1)
            if m.group("neg"):
                lit = ast.Unary(op="-", operand=lit, line=line, column=pos - line_start + 1)
            operands.append(lit)
            pos = m.end()
        elif kind == "addr":
            a = _ADDRESS.match(text, pos)
            operands.append(_address(a, line, lambda p: p - line_start + 1))
            pos = a.end()
        elif kind == "hexf":
            operands.append(_hexfloat(m.group("hexf"), line, pos - line_start + 1))
            pos = m.end()
        else:
            close = text.index("}", pos)
            elements = [_name(v.group(), line, v.start() - line_start + 1)
                        for v in _VECTOR_NAME.finditer(text, pos + 1, close)]
            operands.append(ast.VectorOperand(elements=elements, line=line,
                                              column=pos - line_start + 1))
            pos = close + 1
        pos = separator(text, pos).end()
    return ins


def _plain_operands(ops: str, pos: int, text: str, line: int, line_start: int,
                    operands: list) -> None:
    """`build`'s operands where no vector braces hold commas: STATEMENT has checked the
    syntax, so splitting at the commas gives the operands, each told by its first
    character (the same nodes and columns as the general loop). Operand lists of plain
    registers and integer literals only (most of them) are split once per spelling: the
    split is cached as `_simple_plan`'s tuple."""
    column = pos - line_start + 1
    plan = _SIMPLE_PLANS.get(ops)
    if plan is None:
        plan = _simple_plan(ops)
        if len(_SIMPLE_PLANS) < 8192:
            _SIMPLE_PLANS[ops] = plan
    if plan:
        for offset, name, literal in plan:
            if literal is None:
                operands.append(Name(name, line, column + offset))
            else:
                operands.append(IntLit(literal[0], name, line, column + offset, literal[1],
                                       literal[2]))
        return
    for piece in ops.split(","):
        stripped = piece.lstrip(" \t")
        at = column + len(piece) - len(stripped)
        column += len(piece) + 1
        stripped = stripped.rstrip(" \t")
        c = stripped[0]
        if c in _NAME_STARTS:
            if "." in stripped:
                operands.append(_name(stripped, line, at))
            else:
                operands.append(Name(stripped, line, at))
        elif c == "[":
            a = _ADDRESS.match(text, at + line_start - 1)
            operands.append(_address(a, line, lambda p: p - line_start + 1))
        elif c == "-":
            operands.append(ast.Unary(op="-", operand=int_literal(stripped[1:], line, at + 1),
                                      line=line, column=at))
        elif c == "0" and len(stripped) > 1 and stripped[1] in "fFdD":
            operands.append(_hexfloat(stripped, line, at))
        else:
            operands.append(int_literal(stripped, line, at))


def _simple_plan(ops: str) -> tuple | bool:
    """For an operand list of plain names (no `.component`) and integer literals only:
    (offset from the list's start, text, the literal's (value, unsigned, overflow) or None
    for a name) per operand; False for any other list."""
    plan = []
    at = 0
    for piece in ops.split(","):
        stripped = piece.lstrip(" \t")
        offset = at + len(piece) - len(stripped)
        at += len(piece) + 1
        stripped = stripped.rstrip(" \t")
        c = stripped[0]
        if c in _NAME_STARTS:
            if "." in stripped:
                return False
            # one string per register name for all the Names that spell it (the plans of
            # operand lists seen once are not all kept, nor their strings shared)
            plan.append((offset, _intern(stripped), None))
        elif c in "[-" or (c == "0" and len(stripped) > 1 and stripped[1] in "fFdD"):
            return False
        else:
            plan.append((offset, stripped, _literal(stripped)))
    return tuple(plan)


_SIMPLE_PLANS: dict[str, tuple | bool] = {}     # operand list text -> `_simple_plan`'s answer


_NAME_STARTS = frozenset("%$_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
Name, IntLit = ast.Name, ast.IntLit


def build_reg_decl(match: re.Match, line: int, line_start: int):
    """The VariableDecl for a REG_DECL match (exactly what the grammar builds)."""
    ty = match.group("type")
    count = match.group("count")
    decl = ast.Declarator(name=match.group("name"),
                          range_count=int(count) if count is not None else None,
                          line=line, column=match.start("name") - line_start + 1)
    return ast.VariableDecl(space=".reg", type=ty, declarators=[decl], line=line,
                            column=match.start() - line_start + 1)


def build_row(match: re.Match, line: int, line_start: int) -> ast.SectionEntry:
    """The SectionEntry for a SECTION_ROW match (exactly what the grammar builds)."""
    values = []
    text = match.string
    for v in _ROW_VALUE.finditer(text, match.start("values"), match.end("values")):
        column = v.start() - line_start + 1
        if v.group("int"):
            values.append(int_literal(v.group("int"), line, column))
        elif v.group().startswith("."):
            values.append(ast.Name(name=v.group(), line=line, column=column))
        else:
            values.append(_name(v.group(), line, column))
    return ast.SectionEntry(type=match.group("type"), values=values, line=line,
                            column=match.start() - line_start + 1)


def _name(text: str, line: int, column: int) -> ast.Name:
    base, dot, comp = text.partition(".")
    if dot:
        return ast.Name(name=base, component="." + comp, line=line, column=column)
    return ast.Name(text, line, column)


def _address(m: re.Match, line: int, col) -> ast.Address:
    start = col(m.start())
    if m.group("abs") is not None:
        lit = int_literal(m.group("abs"), line, col(m.start("abs")))
        return ast.Address(elements=[lit], base=None, offset=lit.value, line=line,
                           column=start)
    base = _name(m.group("base"), line, col(m.start("base")))
    if m.group("off") is None:
        return ast.Address(elements=[base], base=base, offset=0, line=line, column=start)
    lit = int_literal(m.group("off"), line, col(m.start("off")))
    right = lit
    value = lit.value
    if m.group("neg"):
        right = ast.Unary(op="-", operand=lit, line=line, column=col(m.start("neg")))
        value = -value
    expr = ast.Binary(op=m.group("sign"), left=base, right=right, line=base.line,
                      column=base.column)
    return ast.Address(elements=[expr], base=base,
                       offset=value if m.group("sign") == "+" else -value, line=line,
                       column=start)


def _hexfloat(text: str, line: int, column: int) -> ast.FloatLit:
    bits = int(text[2:], 16)
    if text[1] in "fF":
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        width = 32
    else:
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        width = 64
    return ast.FloatLit(value=value, text=text, bits=bits, width=width, line=line,
                        column=column)


def int_value(text: str) -> int:
    body = text[:-1] if text.endswith("U") else text
    if body[:2] in ("0x", "0X"):
        return int(body[2:], 16)
    if body[:2] in ("0b", "0B"):
        return int(body[2:], 2)
    if len(body) > 1 and body[0] == "0":
        try:
            return int(body[1:], 8)
        except ValueError:
            return int(body)
    return int(body)


_INT_LITERALS: dict[str, tuple[int, bool, bool]] = {}    # text -> value, unsigned, overflow


def int_literal(text: str, line: int, column: int) -> ast.IntLit:
    """An integer literal as ptxas reads it: wrapped to 64 bits, with `overflow` set for a
    decimal one ptxas rejects."""
    value, unsigned, overflow = _literal(text)
    return ast.IntLit(value, text, line, column, unsigned, overflow)


def _literal(text: str) -> tuple[int, bool, bool]:
    """An integer literal's (value, unsigned, overflow) (`int_literal`'s fields)."""
    known = _INT_LITERALS.get(text)
    if known is None:
        value = int_value(text)
        overflow = False
        if value > _U64:
            overflow = text[0] != "0" and _decimal_overflows(text.rstrip("U"))
            value &= _U64
        known = (value, text.endswith("U"), overflow)
        if len(_INT_LITERALS) < 4096:
            _INT_LITERALS[text] = known
    return known


def _decimal_overflows(digits: str) -> bool:
    """ptxas accumulates digits in 64 bits and checks only the multiply by ten, so 2**64
    itself wraps to 0 silently while 2**64 * 10 is an overflow."""
    value = 0
    for d in digits:
        if value > _U64 // 10:
            return True
        value = (value * 10 + ord(d) - 48) & _U64
    return False
