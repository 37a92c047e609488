"""PTX grammar (PLY yacc) building the tree in `ast.py`.

The grammar is deliberately generic about instructions: any opcode with any operand list
parses, and `checks.py` validates it against the instruction table. That keeps the grammar
small (fast tables, few conflicts) and lets errors name the instruction as ptxas does,
instead of a bare syntax error. Syntax errors stop at the first one, like ptxas (`fatal`).

Plain instruction statements and debug-section rows arrive pre-built from `fastpath.py`
as INSTRUCTIONS / SECTION_ROW tokens (runs of whole statements) (the `_StatementLexer` below decides where a
statement starts); everything else goes token by token through the grammar.

The LALR tables are written once next to this file (`_parsetab_<hash>.py`, git-ignored; the
user cache folder for a read-only install) and reused; the hash of this file and the lexer's
names them, so an edited grammar gets new tables.
"""
from __future__ import annotations

import re
import sys

from ply import lex, yacc

from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast, fastpath, tables
from ptx2sass.frontend import lexer as ptx_lexer
from ptx2sass.frontend.header import header_problem
from ptx2sass.frontend.lexer import tokens  # noqa: F401  (PLY reads it from this module)

precedence = (
    ("left", "OROR"),
    ("left", "ANDAND"),
    ("left", "PIPE"),
    ("left", "CARET"),
    ("left", "AMP"),
    ("left", "EQEQ", "NOTEQ"),
    ("left", "SHL", "SHR"),
    ("left", "PLUS", "MINUS"),
    ("left", "STAR", "SLASH", "PERCENT"),
    ("right", "UNARY"),
)

start = "module"


def _pos(p, n):
    """(line, column) of terminal n of the production. The lexer knows where its current
    line starts; a token on an earlier line (read ahead past a newline) looks for its own.
    (Searching back for every token costs the square of a long line's length.)"""
    pos, line = p.lexpos(n), p.lineno(n)
    lexer = p.lexer
    if line == lexer.lineno and pos >= lexer.line_start:
        return line, pos - lexer.line_start + 1
    return line, pos - lexer.lexdata.rfind("\n", 0, pos)


# ----------------------------------------------------------------------------- module

def p_module(p):
    "module : items"
    p[0] = p[1]


def p_items(p):
    """items : items item
             | empty"""
    if len(p) == 2:
        p[0] = []
    else:
        if type(p[2]) is list:
            p[1].extend(p[2])
        elif p[2] is not None:
            p[1].append(p[2])
        p[0] = p[1]


def p_empty(p):
    "empty :"
    p[0] = None


def p_item_version(p):
    """item : VERSION FLOAT"""
    line, col = _pos(p, 1)
    major, _, minor = p[2].partition(".")
    if not minor.isdigit() or not major.isdigit():
        _raise_at(p, 2)
    p[0] = ast.Version(major=int(major), minor=int(minor), line=line, column=col)


def p_item_target(p):
    "item : TARGET ident_list"
    line, col = _pos(p, 1)
    p[0] = ast.Target(names=p[2], line=line, column=col)


def p_item_address_size(p):
    "item : ADDRESS_SIZE INTEGER"
    line, col = _pos(p, 1)
    p[0] = ast.AddressSize(bits=_int_value(p[2]), line=line, column=col)


def p_item_file(p):
    """item : FILE INTEGER STRING
            | FILE INTEGER STRING COMMA INTEGER COMMA INTEGER"""
    line, col = _pos(p, 1)
    extra = [_int_value(p[5]), _int_value(p[7])] if len(p) == 8 else []
    p[0] = ast.FileDirective(index=_int_value(p[2]), path=_unquote(p[3]), extra=extra,
                             line=line, column=col)


def p_item_section(p):
    "item : SECTION DOTNAME LBRACE section_entries RBRACE"
    line, col = _pos(p, 1)
    p[0] = ast.Section(name=p[2], entries=p[4], line=line, column=col)


def p_item_pragma(p):
    "item : pragma"
    p[0] = p[1]


def p_item_alias(p):
    "item : ALIAS IDENT COMMA IDENT SEMI"
    line, col = _pos(p, 1)
    p[0] = ast.Alias(alias=p[2], target=p[4], line=line, column=col)


def p_item_function(p):
    "item : function"
    p[0] = p[1]


def p_item_global(p):
    "item : linkages decl SEMI"
    decl = p[2]
    decl.linkage = tuple(p[1])
    p[0] = decl


def p_pragma(p):
    "pragma : PRAGMA string_list SEMI"
    line, col = _pos(p, 1)
    p[0] = ast.Pragma(strings=p[2], line=line, column=col)


def p_string_list(p):
    """string_list : STRING
                   | string_list COMMA STRING"""
    if len(p) == 2:
        p[0] = [_unquote(p[1])]
    else:
        p[1].append(_unquote(p[3]))
        p[0] = p[1]


def p_ident_list(p):
    """ident_list : IDENT
                  | ident_list COMMA IDENT"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_section_entries(p):
    """section_entries : section_entries section_entry
                       | empty"""
    if len(p) == 2:
        p[0] = []
    else:
        if type(p[2]) is list:   # a run of rows from the fast lane
            p[1].extend(p[2])
        else:
            p[1].append(p[2])
        p[0] = p[1]


def p_section_entry_data(p):
    "section_entry : TYPE section_values"
    line, col = _pos(p, 1)
    p[0] = ast.SectionEntry(type=p[1], values=p[2], line=line, column=col)


def p_section_entry_fast(p):
    "section_entry : SECTION_ROW"
    p[0] = p[1]   # a list of SectionEntry (a run of plain rows)


def p_section_entry_label(p):
    "section_entry : IDENT COLON"
    line, col = _pos(p, 1)
    p[0] = ast.SectionEntry(type=None, values=[], label=p[1], line=line, column=col)


def p_section_values(p):
    """section_values : section_value
                      | section_values COMMA section_value"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_section_value(p):
    """section_value : expr
                     | DOTNAME
                     | DOTNAME PLUS INTEGER
                     | STRING"""
    if len(p) == 4:
        line, col = _pos(p, 1)
        p[0] = ast.Binary(op="+", left=ast.Name(name=p[1], line=line, column=col),
                          right=_int_literal(p, 3), line=line, column=col)
    elif isinstance(p[1], str):
        line, col = _pos(p, 1)
        p[0] = ast.Name(name=p[1], line=line, column=col)
    else:
        p[0] = p[1]


# ----------------------------------------------------------------------------- functions

def p_linkages(p):
    """linkages : linkages LINKAGE
                | empty"""
    if len(p) == 2:
        p[0] = []
    elif p[1]:
        _raise_at(p, 2)         # ptxas takes one linkage directive: a second is a syntax error
    else:
        p[1].append(p[2])
        p[0] = p[1]


def p_function(p):
    "function : linkages function_head perf_list function_tail"
    fn = p[2]
    if fn.kind == ".entry":
        for d in p[3]:
            if d.name == ".noreturn":
                raise CompileError("Parsing error near '.noreturn': syntax error",
                                   p.lexer.filename, d.line, d.column, severity="fatal")
    for d in p[3]:
        if d.name in _THREE_D_DIRECTIVES and len(d.args) > 3:
            raise CompileError("Parsing error near ',': syntax error", p.lexer.filename,
                               d.line, None, severity="fatal")
    tail = p[4]
    if type(tail) is tuple and any(d.name != ".noreturn" for d in p[3]):
        # performance directives belong to a definition, not to a declaration
        raise CompileError("Parsing error near ';': syntax error", p.lexer.filename, tail[0],
                           tail[1], severity="fatal")
    fn.linkage = tuple(p[1])
    fn.directives = p[3]
    fn.body = tail if type(tail) is ast.Block else None
    if not fn.head_end_line:
        # where ptxas has read the whole head: an entry's parameter list ends it (set by
        # the head's rule), otherwise the token after the head and its directives
        after = tail.line if fn.body is not None else tail[0]
        fn.head_end_line = p[3][0].line if p[3] and fn.kind == ".entry" else after
    p[0] = fn


_THREE_D_DIRECTIVES = frozenset((".maxntid", ".reqntid", ".reqnctapercluster"))


def p_function_head_entry(p):
    "function_head : ENTRY IDENT param_list_opt"
    line, col = _pos(p, 1)
    params = p[3]
    p[0] = ast.Function(kind=".entry", name=p[2], linkage=(), return_params=[],
                        params=params or [], directives=[], has_param_list=params is not None,
                        head_end_line=p.lexer.param_list_end if params is not None else 0,
                        line=line, column=col)


def p_function_head_func(p):
    """function_head : FUNC param_list IDENT param_list_opt
                     | FUNC IDENT param_list_opt"""
    line, col = _pos(p, 1)
    if len(p) == 5:
        rets, name, params = p[2], p[3], p[4]
    else:
        rets, name, params = [], p[2], p[3]
    p[0] = ast.Function(kind=".func", name=name, linkage=(), return_params=rets,
                        params=params or [], directives=[], has_param_list=params is not None,
                        line=line, column=col)


def p_param_list_opt(p):
    """param_list_opt : param_list
                      | empty"""
    p[0] = p[1]


def p_param_list(p):
    """param_list : LPAREN params RPAREN
                  | LPAREN RPAREN"""
    p[0] = p[2] if len(p) == 4 else []
    p.lexer.param_list_end = p.lineno(len(p) - 1)     # read by the function head


def p_params(p):
    """params : param
              | params COMMA param"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_param(p):
    "param : decl_specs declarator"
    p[0] = _make_decl(p[1], [p[2]])


def p_perf_list(p):
    """perf_list : perf_list perf
                 | empty"""
    if len(p) == 2:
        p[0] = []
    else:
        p[1].append(p[2])
        p[0] = p[1]


def p_perf(p):
    """perf : PERF
            | PERF int_list"""
    line, col = _pos(p, 1)
    p[0] = ast.PerformanceDirective(name=p[1], args=p[2] if len(p) == 3 else [],
                                    line=line, column=col)


def p_perf_pragma(p):
    "perf : pragma"
    prag = p[1]
    p[0] = ast.PerformanceDirective(name=".pragma", args=prag.strings, line=prag.line,
                                    column=prag.column)


def p_int_list(p):
    """int_list : INTEGER
                | int_list COMMA INTEGER"""
    if len(p) == 2:
        p[0] = [_int_value(p[1])]
    else:
        p[1].append(_int_value(p[3]))
        p[0] = p[1]


def p_function_tail(p):
    """function_tail : block
                     | SEMI"""
    p[0] = p[1] if isinstance(p[1], ast.Block) else _pos(p, 1)


# ----------------------------------------------------------------------------- declarations

def p_decl(p):
    "decl : decl_specs declarators"
    p[0] = _make_decl(p[1], p[2])


def p_decl_specs(p):
    """decl_specs : SPACE
                  | decl_specs decl_spec"""
    if len(p) == 2:
        line, col = _pos(p, 1)
        p[0] = [("space", p[1], line, col)]
    else:
        p[1].append(p[2])
        p[0] = p[1]


def p_decl_spec(p):
    """decl_spec : SPACE
                 | TYPE
                 | VECTOR
                 | PTR"""
    p[0] = (p.slice[1].type.lower(), p[1]) + _pos(p, 1)


def p_decl_spec_align(p):
    "decl_spec : ALIGN INTEGER"
    p[0] = ("align", _int_value(p[2])) + _pos(p, 1)


def p_decl_spec_attribute(p):
    "decl_spec : ATTRIBUTE LPAREN attribute_list RPAREN"
    p[0] = ("attribute", tuple(p[3])) + _pos(p, 1)


def p_attribute_list(p):
    """attribute_list : attribute
                      | attribute_list COMMA attribute"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_attribute(p):
    """attribute : DOTNAME
                 | DOTNAME LPAREN int_list RPAREN"""
    p[0] = p[1] if len(p) == 2 else (p[1], tuple(p[3]))


def p_declarators(p):
    """declarators : declarator
                   | declarators COMMA declarator"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_declarator(p):
    "declarator : decl_name decl_range decl_dims decl_init"
    name, line, col = p[1]
    p[0] = ast.Declarator(name=name, range_count=p[2], dims=p[3], init=p[4],
                          line=line, column=col)


def p_decl_name(p):
    """decl_name : IDENT
                 | REGISTER"""
    line, col = _pos(p, 1)
    p[0] = (p[1], line, col)


def p_decl_range(p):
    """decl_range : LT INTEGER GT
                  | empty"""
    p[0] = _int_value(p[2]) if len(p) == 4 else None


def p_decl_dims(p):
    """decl_dims : decl_dims LBRACKET INTEGER RBRACKET
                 | decl_dims LBRACKET RBRACKET
                 | empty"""
    if len(p) == 2:
        p[0] = []
    else:
        p[1].append(_int_value(p[3]) if len(p) == 5 else None)
        p[0] = p[1]


def p_decl_init(p):
    """decl_init : EQUALS initializer
                 | empty"""
    p[0] = p[2] if len(p) == 3 else None


def p_initializer(p):
    """initializer : expr
                   | LBRACE initializers RBRACE"""
    p[0] = p[1] if len(p) == 2 else p[2]


def p_initializer_empty(p):
    "initializer : LBRACE RBRACE"
    p[0] = []          # `= {}`: all zeros (LLVM writes it for empty aggregates; ptxas takes it)


def p_initializer_fields(p):
    "initializer : LBRACE field_inits RBRACE"
    p[0] = p[2]


def p_field_inits(p):
    """field_inits : field_init
                   | field_inits COMMA field_init"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_field_init(p):
    """field_init : IDENT EQUALS IDENT
                  | IDENT EQUALS INTEGER
                  | IDENT EQUALS FLOAT"""
    line, col = _pos(p, 1)
    kind = p.slice[3].type
    value = p[3] if kind == "IDENT" else (
        _int_literal(p, 3) if kind == "INTEGER" else
        ast.FloatLit(value=float(p[3]), text=p[3], line=line, column=col))
    p[0] = ast.FieldInit(field=p[1], value=value, line=line, column=col)


def p_initializers(p):
    """initializers : initializer
                    | initializers COMMA initializer"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


# ----------------------------------------------------------------------------- statements

def p_block(p):
    "block : LBRACE statements RBRACE"
    line, col = _pos(p, 1)
    p[0] = ast.Block(statements=p[2], line=line, column=col, end_line=p.lineno(3))


def p_statements(p):
    """statements : statements statement
                  | empty"""
    if len(p) == 2:
        p[0] = []
    else:
        if type(p[2]) is list:
            p[1].extend(p[2])
        elif p[2] is not None:
            p[1].append(p[2])
        p[0] = p[1]


def p_statement_simple(p):
    """statement : decl SEMI
                 | instruction SEMI
                 | block
                 | pragma"""
    p[0] = p[1]


def p_statement_fast(p):
    "statement : INSTRUCTIONS"
    p[0] = p[1]   # a list of Instruction / VariableDecl (a run of plain statements)


def p_statement_label(p):
    "statement : IDENT COLON"
    line, col = _pos(p, 1)
    p[0] = ast.Label(name=p[1], line=line, column=col)


def p_statement_branchtargets(p):
    """statement : IDENT COLON BRANCHTARGETS ident_list SEMI
                 | IDENT COLON CALLTARGETS ident_list SEMI"""
    line, col = _pos(p, 1)
    cls = ast.BranchTargets if p.slice[3].type == "BRANCHTARGETS" else ast.CallTargets
    p[0] = cls(label=p[1], targets=p[4], line=line, column=col)


def p_statement_callprototype(p):
    """statement : IDENT COLON CALLPROTOTYPE param_list IDENT param_list_opt proto_tail
                 | IDENT COLON CALLPROTOTYPE IDENT param_list_opt proto_tail"""
    line, col = _pos(p, 1)
    if len(p) == 8:
        rets, params, tail = p[4], p[6], p[7]
    else:
        rets, params, tail = [], p[5], p[6]
    p[0] = ast.CallPrototype(label=p[1], return_params=rets, params=params or [],
                             noreturn=tail, line=line, column=col)


def p_proto_tail(p):
    """proto_tail : SEMI
                  | PERF SEMI"""
    p[0] = len(p) == 3 and p[1] == ".noreturn"


def p_statement_loc(p):
    """statement : LOC INTEGER INTEGER INTEGER
                 | LOC INTEGER INTEGER INTEGER COMMA IDENT IDENT COMMA IDENT INTEGER INTEGER INTEGER"""
    line, col = _pos(p, 1)
    loc = ast.Loc(file_index=_int_value(p[2]), source_line=_int_value(p[3]),
                  source_column=_int_value(p[4]), line=line, column=col)
    if len(p) == 13:
        if p[6] != "function_name" or p[9] != "inlined_at":
            _raise_at(p, 6 if p[6] != "function_name" else 9)
        loc.function_name = p[7]
        loc.inlined_at = (_int_value(p[10]), _int_value(p[11]), _int_value(p[12]))
    p[0] = loc


def p_statement_empty(p):
    "statement : SEMI"
    p[0] = None


def p_instruction(p):
    """instruction : OPCODE operands_opt
                   | IDENT operands_opt"""
    line, col = _pos(p, 1)
    opcode, *mods = p[1].split(".")
    _sinks_in_place(p[2], p.lexer.filename)
    p[0] = ast.Instruction(opcode=opcode, modifiers=tuple("." + m for m in mods),
                           operands=p[2], line=line, column=col)


def p_instruction_guarded(p):
    """instruction : guard OPCODE operands_opt
                   | guard IDENT operands_opt"""
    line, col = _pos(p, 2)
    opcode, *mods = p[2].split(".")
    _sinks_in_place(p[3], p.lexer.filename)
    p[0] = ast.Instruction(opcode=opcode, modifiers=tuple("." + m for m in mods),
                           operands=p[3], guard=p[1], line=line, column=col)


def _sinks_in_place(operands: list, filename):
    """ptxas's grammar takes the sink `_` only as a whole first operand (or a side of its
    `d|p` pair, not both), an element of a `{...}` vector, or inside a call's parentheses (a sink
    result is fine; ptxas refuses a sink argument by meaning, not syntax): anywhere else
    (`add.s32 %r2, %r1, _`, `st.global.b32 [%rd1], _`, `[_]`) it is a syntax error.
    A vector holding a sink as a source is the checker's ('Sink '_' not allowed ...')."""
    for index, operand in enumerate(operands):
        t = type(operand)
        if t is ast.PairOperand and index == 0 and type(operand.second) is ast.Name \
                and operand.second.name == "_" and type(operand.first) is ast.Name \
                and operand.first.name == "_":          # `_|_`: one side at most
            raise CompileError("Parsing error near '_': syntax error", filename,
                               operand.second.line, operand.second.column, severity="fatal")
        if t is ast.Name and index == 0 or t is ast.PairOperand and index == 0 \
                or t is ast.ParenList:
            continue
        stack = [operand]
        while stack:
            n = stack.pop()
            t = type(n)
            if t is ast.Name:
                if n.name == "_":
                    raise CompileError("Parsing error near '_': syntax error", filename,
                                       n.line, n.column, severity="fatal")
            elif t is ast.VectorOperand:
                stack += [e for e in n.elements if type(e) is not ast.Name]
            elif t is ast.Address:
                stack += n.elements
            elif t is ast.Binary:
                stack += (n.right, n.left)
            elif t is ast.Unary:
                stack.append(n.operand)
            elif t is ast.PairOperand:
                stack += (n.second, n.first)


def p_guard(p):
    """guard : AT name
             | AT BANG name"""
    line, col = _pos(p, 1)
    if p[len(p) - 1].name == "_":
        n = p[len(p) - 1]
        raise CompileError("Parsing error near '_': syntax error", p.lexer.filename, n.line,
                           n.column, severity="fatal")
    p[0] = ast.Guard(predicate=p[len(p) - 1], negated=len(p) == 4, line=line, column=col)


def p_operands_opt(p):
    """operands_opt : operands
                    | empty"""
    p[0] = p[1] or []


def p_operands(p):
    """operands : operand
                | operands COMMA operand"""
    if len(p) == 2:
        p[0] = [p[1]]
    else:
        p[1].append(p[3])
        p[0] = p[1]


def p_operand_expr(p):
    "operand : expr"
    e = p[1]
    if type(e) is ast.Binary and e.op == "|" and type(e.left) is ast.Name \
            and type(e.right) is ast.Name:
        e = ast.PairOperand(first=e.left, second=e.right, line=e.line, column=e.column)
    p[0] = e


def p_operand_vector(p):
    "operand : LBRACE operands RBRACE"
    line, col = _pos(p, 1)
    p[0] = ast.VectorOperand(elements=p[2], line=line, column=col)


def p_operand_address(p):
    "operand : LBRACKET operands RBRACKET"
    line, col = _pos(p, 1)
    addr = ast.Address(elements=p[2], line=line, column=col)
    if len(p[2]) == 1:
        addr.base, addr.offset = _split_address(p[2][0])
        _only_one_name(p[2][0], p.lexer.filename)
    p[0] = addr


# ----------------------------------------------------------------------------- expressions

def p_expr_binary(p):
    """expr : expr PLUS expr
            | expr MINUS expr
            | expr STAR expr
            | expr SLASH expr
            | expr PERCENT expr
            | expr SHL expr
            | expr SHR expr
            | expr AMP expr
            | expr PIPE expr
            | expr CARET expr
            | expr ANDAND expr
            | expr OROR expr
            | expr EQEQ expr
            | expr NOTEQ expr"""
    left, right = _ungroup(p[1]), _ungroup(p[3])
    p[0] = _folded(p[2], left, right) or ast.Binary(op=p[2], left=left, right=right,
                                                    line=left.line, column=left.column)


_FOLDABLE = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}


def _folded(op: str, left, right) -> ast.Node | None:
    """`1 + 2` read as `3`, and `sym + 1 + 2` as `sym + 3`, as the parser reduces them: a
    chain of any length (ptxas takes 100,000 terms) stays one shallow node. Only where every
    later reading of the tree agrees on the value (plain 64-bit literals, results within
    64 bits)."""
    if op not in _FOLDABLE or type(right) is not ast.IntLit or right.overflow:
        return None
    base = None
    if type(left) is ast.Binary and left.op in "+-" and op in "+-" \
            and type(left.left) is ast.Name and type(left.right) is ast.IntLit:
        base, left = left, left.right      # sym ± c1 ± c2 -> sym ± (c1 ± c2)
        if base.op == "-":
            return None
    if type(left) is not ast.IntLit or left.overflow:
        return None
    value = _FOLDABLE[op](left.value, right.value)
    if not -(1 << 63) <= value < (1 << 64) or (base is not None and value < 0):
        return None
    lit = ast.IntLit(value=value, text=str(value), unsigned=left.unsigned or right.unsigned,
                     line=left.line, column=left.column)
    if base is None:
        return lit
    return ast.Binary(op="+", left=base.left, right=lit, line=base.line, column=base.column)


def p_expr_unary(p):
    """expr : MINUS expr %prec UNARY
            | BANG expr %prec UNARY
            | TILDE expr %prec UNARY
            | PLUS expr %prec UNARY"""
    line, col = _pos(p, 1)
    if p[1] == "+":
        p[0] = _ungroup(p[2])
    else:
        p[0] = ast.Unary(op=p[1], operand=_ungroup(p[2]), line=line, column=col)


def p_expr_paren(p):
    "expr : LPAREN operands RPAREN"
    line, col = _pos(p, 1)
    p[0] = ast.ParenList(elements=p[2], line=line, column=col)


def p_expr_empty_paren(p):
    "expr : LPAREN RPAREN"
    line, col = _pos(p, 1)
    p[0] = ast.ParenList(elements=[], line=line, column=col)


def p_expr_call(p):
    "expr : IDENT LPAREN operands RPAREN"
    line, col = _pos(p, 1)
    p[0] = ast.Call(function=p[1], args=p[3], line=line, column=col)


def p_expr_name(p):
    "expr : name"
    p[0] = p[1]


def p_expr_index(p):
    "expr : name LBRACKET expr RBRACKET"
    p[0] = ast.Index(base=p[1], index=_ungroup(p[3]), line=p[1].line, column=p[1].column)


def p_name(p):
    """name : IDENT
            | REGISTER
            | OPCODE"""
    line, col = _pos(p, 1)
    text = p[1]
    base, dot, comp = text.partition(".")
    if dot:
        if "." in comp or "::" in comp:
            _raise_at(p, 1)
        p[0] = ast.Name(name=base, component="." + comp, line=line, column=col)
    else:
        p[0] = ast.Name(name=text, line=line, column=col)


def p_expr_integer(p):
    "expr : INTEGER"
    p[0] = _int_literal(p, 1)


def p_expr_float(p):
    "expr : FLOAT"
    line, col = _pos(p, 1)
    p[0] = ast.FloatLit(value=float(p[1]), text=p[1], line=line, column=col)


def p_expr_hexfloat(p):
    "expr : HEXFLOAT"
    import struct
    line, col = _pos(p, 1)
    text = p[1]
    bits = int(text[2:], 16)
    if text[1] in "fF":
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        width = 32
    else:
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        width = 64
    p[0] = ast.FloatLit(value=value, text=text, bits=bits, width=width, line=line, column=col)


def p_error(tok):
    if tok is None:
        lexer = _current_lexer
        raise CompileError("Parsing error near '': syntax error", lexer.filename,
                           lexer.lineno, None, severity="fatal")
    lexer = tok.lexer
    data = lexer.lexdata
    column = tok.lexpos - data.rfind("\n", 0, tok.lexpos)
    if tok.type == "INSTRUCTIONS":
        first = tok.value[0]   # a run may open with an Instruction or a fast-lane .reg VariableDecl
        near = first.opcode if isinstance(first, ast.Instruction) else first.space
    elif tok.type == "SECTION_ROW":
        near = tok.value[0].type
    else:
        near = tok.value.split(".", 1)[0] if tok.type == "OPCODE" else tok.value
    raise CompileError(f"Parsing error near '{near}': syntax error", lexer.filename,
                       tok.lineno, column, severity="fatal")


# ----------------------------------------------------------------------------- helpers

def _raise_at(p, n):
    line, col = _pos(p, n)
    raise CompileError(f"Parsing error near '{p[n]}': syntax error", p.lexer.filename,
                       line, col, severity="fatal")


def _unquote(text: str) -> str:
    return text[1:-1]


_int_value = fastpath.int_value


def _int_literal(p, n) -> ast.IntLit:
    line, col = _pos(p, n)
    return fastpath.int_literal(p[n], line, col)


def _ungroup(e):
    """`(x)` inside an arithmetic expression is grouping, not a call-argument list."""
    if type(e) is ast.ParenList and len(e.elements) == 1:
        return e.elements[0]
    return e


def _constant(e) -> int | None:
    t = type(e)
    if t is ast.IntLit:
        return e.value
    if t is ast.Unary and e.op == "-":
        v = _constant(e.operand)
        return None if v is None else -v
    if t is ast.Binary and e.op in ("+", "-", "*"):
        a, b = _constant(e.left), _constant(e.right)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _only_one_name(e, filename):
    """ptxas's address grammar is `[name]`, `[name+const]` or `[const]`: a second name
    (`[smem+%r1]`) is a syntax error at that name."""
    names = []
    stack = [e]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            names.append(n)
        elif t is ast.Binary:
            stack += (n.right, n.left)
        elif t is ast.Unary:
            stack.append(n.operand)
    if len(names) > 1:
        n = sorted(names, key=lambda x: (x.line, x.column))[1]
        raise CompileError(f"Parsing error near '{n.name}': syntax error", filename, n.line,
                           n.column, severity="fatal")


def _split_address(e) -> tuple[ast.Name | None, int]:
    """[name], [name+imm], [name+-imm], [name-imm], [imm] -> (base, offset)."""
    t = type(e)
    if t is ast.Name:
        return e, 0
    if t is ast.Binary and e.op in ("+", "-") and type(e.left) is ast.Name:
        off = _constant(e.right)
        if off is not None:
            return e.left, off if e.op == "+" else -off
    off = _constant(e)
    if off is not None:
        return None, off
    return None, 0


def _make_decl(specs: list, declarators: list) -> ast.VariableDecl:
    """Fold the specifier list. ptxas's order: state space, then `.align`/`.attribute`/
    `.vN` in any order, then the type last; only a parameter's `.ptr .space .align N`
    may follow the type. Anything else is a syntax error at that specifier."""
    _, space, line, col = specs[0]
    decl = ast.VariableDecl(space=space, type=None, declarators=declarators,
                            line=line, column=col)
    after_ptr = False
    attributes = []
    for kind, value, sline, scol in specs[1:]:
        if after_ptr and kind not in ("space", "align") or \
                decl.type is not None and kind not in ("ptr", "space", "align") or \
                kind in ("space", "align") and decl.type is not None and not after_ptr or \
                kind == "ptr" and after_ptr or kind == "vector" and decl.vector is not None:
            _raise_near(value if kind != "align" else ".align", sline, scol)
        if kind == "type":
            if value in _NOT_DECLARABLE:
                _raise_near(value, sline, scol)
            decl.type = value
        elif kind == "vector":
            decl.vector = value
        elif kind == "ptr":
            after_ptr = True
            attributes.append(".ptr")
        elif kind == "space":
            if not after_ptr:
                _raise_near(value, sline, scol)
            decl.ptr_space = value
        elif kind == "align":
            if after_ptr:
                decl.ptr_align = value
            elif decl.align is None:
                decl.align = value
            else:
                attributes.append(("align", value))
        elif kind == "attribute":
            attributes.append((".attribute", value))
    decl.attributes = tuple(attributes)
    if decl.type is None:
        first = declarators[0]
        _raise_near(first.name, first.line, first.column)
    return decl


_NOT_DECLARABLE = ptx_lexer.NOT_DECLARABLE


def _raise_near(text, line, column):
    raise CompileError(f"Parsing error near '{text}': syntax error", None, line, column,
                       severity="fatal")


# ----------------------------------------------------------------------------- driver

_STATEMENT_ENDS = frozenset(("SEMI", "LBRACE", "RBRACE", "COLON", "INSTRUCTIONS",
                             "SECTION_ROW"))
_BLANK = re.compile(r"(?:[ \t\r\f\v]|//[^\n]*)*")


MAX_EXPRESSION_UNITS = 9980
_OPERAND_TOKENS = frozenset({"INTEGER", "FLOAT", "HEXFLOAT", "IDENT", "REGISTER", "OPCODE"})
_OPERAND_ENDS = _OPERAND_TOKENS | {"RPAREN", "RBRACKET"}


class _StatementLexer:
    """The PLY lexer, plus fastpath's one-token instructions at statement starts."""

    def __init__(self, lexer, fast: bool = True):
        self.lexer = lexer
        self.fast = fast
        self.at_start = fast
        self.after_loc = False     # a `.loc` line or a debug-section row ends at the newline
        self.in_section = False
        self.depth = 0             # braces open: `.reg` declarations take the fast lane inside
        self.expression_stack: list[int] = []   # parser-stack units of open `(` and `-`
        self.previous = None                    # the last token's type

    def __getattr__(self, name):
        return getattr(self.lexer, name)

    def input(self, text):
        self.lexer.input(text)

    def section_rows(self, pos):
        """All consecutive plain data rows of a debug section as one SECTION_ROW token
        (a -G build has thousands); stops before anything else (labels, `}`, odd rows)."""
        lx = self.lexer
        data = lx.lexdata
        rows = []
        start_line, start_pos = lx.lineno, pos
        while True:
            m = fastpath.SECTION_ROW.match(data, pos)
            if m is None:
                break
            rows.append(fastpath.build_row(m, lx.lineno, lx.line_start))
            pos = self.skip_blank_lines(m.end())   # the rest of the line, blank lines, comments
        if not rows:   # not a plain row: the grammar takes it, token by token
            lx.lexpos = start_pos
            self.at_start = False
            return self.token()
        lx.lexpos = pos
        tok = lex.LexToken()
        tok.type = "SECTION_ROW"
        tok.value = rows
        tok.lineno = start_line
        tok.lexpos = start_pos
        tok.lexer = lx
        self.at_start = True
        return tok

    def skip_blank_lines(self, pos: int) -> int:
        """Past blanks, line comments and newlines from `pos`, counting the lines."""
        lx = self.lexer
        data = lx.lexdata
        while True:
            pos = _BLANK.match(data, pos).end()
            if pos < len(data) and data[pos] == "\n":
                lx.lineno += 1
                pos += 1
                lx.line_start = pos
            else:
                return pos

    def instructions(self, m, pos):
        """A run of consecutive plain statements (instructions, and `.reg` declarations inside
        a body) as one INSTRUCTIONS token: the grammar then reduces once per run instead of
        once per statement. `m` is the first: `fastpath.match_statement`'s answer or a
        REG_DECL match."""
        lx = self.lexer
        data = lx.lexdata
        statement, build = fastpath.match_statement, fastpath.build
        tok = lex.LexToken()
        tok.type = "INSTRUCTIONS"
        tok.lineno = lx.lineno
        tok.lexpos = pos
        tok.lexer = lx
        run = []
        reg_decl, build_decl = fastpath.REG_DECL, fastpath.build_reg_decl
        blank = _BLANK.match
        while m is not None:
            if type(m) is tuple:            # (a statement's end is past the blanks after it)
                run.append(build(m[0], data, pos, lx.lineno, lx.line_start))
                pos = m[1]
            else:
                run.append(build_decl(m, lx.lineno, lx.line_start))
                pos = blank(data, m.end()).end()
            if data.startswith("\n", pos):      # the line ends: blank lines and comments too
                pos = self.skip_blank_lines(pos)
            m = statement(data, pos)
            if m is None and self.depth:
                m = reg_decl.match(data, pos)
        lx.lexpos = pos
        tok.value = run
        return tok

    def bound_expression_depth(self, tok) -> None:
        """ptxas's parser stack holds 10000 states: an expression nested deeper than that
        fails with "memory exhausted" at the token that would not fit (measured in an
        instruction operand: 9980 units, a `(` taking one and a unary `-` two; then the
        operand one more, a `)` two with the expression it closes). Stopping there also bounds every recursive walk of
        the tree; long flat chains (`1+1+...`, which ptxas takes) fold as they are read
        (`p_expr_binary`)."""
        t = tok.type
        held = self.expression_stack
        if t in ("LPAREN", "MINUS"):
            if t == "MINUS" and self.previous in _OPERAND_ENDS:
                self.previous = t          # a binary minus: its operands are reduced
                return
            cost = 1 if t == "LPAREN" else 2
        elif t == "RPAREN":
            cost = 2                       # the expression inside, and the `)`
        elif t in _OPERAND_TOKENS:
            cost = 1
        else:
            if t in (_STATEMENT_ENDS | {"COMMA"}):
                held.clear()
            self.previous = t
            return
        if sum(held) + cost > MAX_EXPRESSION_UNITS:
            raise ptx_lexer._syntax_error(self.lexer, str(tok.value), tok.lexpos,
                                          "memory exhausted")
        if t in ("LPAREN", "MINUS"):
            held.append(cost)
        else:                              # an operand or `)` completes what is open
            while held and held[-1] == 2:
                held.pop()
            if t == "RPAREN" and held:
                held.pop()
                while held and held[-1] == 2:
                    held.pop()
        self.previous = t

    def token(self):
        lx = self.lexer
        if self.at_start or self.after_loc:
            data = lx.lexdata
            line = lx.lineno
            pos = lx.lexpos = self.skip_blank_lines(lx.lexpos)
            newline_seen = lx.lineno != line
            if self.after_loc and newline_seen:   # a .loc line has ended
                self.after_loc = False
                self.at_start = True
            if self.at_start:
                m = fastpath.match_statement(data, pos)
                if m is None and self.in_section and data.startswith(".b", pos):
                    return self.section_rows(pos)
                if m is None and self.depth:
                    m = fastpath.REG_DECL.match(data, pos)
                if m is not None:
                    return self.instructions(m, pos)
        tok = lx.token()
        if tok is not None:
            self.bound_expression_depth(tok)
        if tok is not None and self.fast:
            t = tok.type
            self.at_start = t in _STATEMENT_ENDS
            if t == "SECTION":
                self.in_section = True
            elif t == "RBRACE":
                self.in_section = False
                self.depth -= 1
            elif t == "LBRACE":
                self.depth += 1
            self.after_loc = t == "LOC" or (self.in_section and not self.at_start) or (
                self.after_loc and not self.at_start)
        return tok


_COMMENT_OR_NON_ASCII = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[^\x00-\x7f]")


def _first_non_ascii_line(text: str) -> int | None:
    """ptxas screens each line (comments aside) for non-ASCII bytes before parsing it."""
    for m in _COMMENT_OR_NON_ASCII.finditer(text):
        if len(m.group()) == 1 and not m.group().isascii():
            return text.count("\n", 0, m.start()) + 1
    return None


def _non_ascii(line: int) -> CompileError:
    err = CompileError(f"Unexpected non-ASCII character encountered on line {line}", None,
                       None, None, severity="fatal")
    err.diagnostics = [err]
    return err

_PARSER = None
_current_lexer = None


def table_spec():
    """(table name, PLY constructor, table fields) for `tables.load` and `tables.generate`."""
    name = tables.table_name("_parsetab", __file__, ptx_lexer.__file__)

    def build(table, outputdir=None):
        return yacc.yacc(module=sys.modules[__name__], start="module", debug=False,
                         write_tables=outputdir is not None,
                         tabmodule=table or tables.derived_name(name),
                         outputdir="" if outputdir is None else outputdir,   # "": no lookup
                         errorlog=yacc.NullLogger())
    return name, build, tables.YACC_FIELDS


def _parser():
    global _PARSER
    if _PARSER is None:
        _PARSER = tables.load(*table_spec())
    return _PARSER


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HEADER_ITEM = re.compile(r"\s*(?:\.version\s+(\d+)\.(\d+)|\.target\s+(\w+(?:\s*,\s*\w+)*))")


def _header_before_error(text: str, filename: str) -> CompileError | None:
    """ptxas's header fatal for a file with a syntax error: the header items read before it
    (found by pattern) go through the header rules, the text after them counting as one more
    item (an unfinished `.target` as a Target without names, whose syntax error stands)."""
    text = _COMMENTS.sub(lambda m: "\n" * m.group().count("\n"), text)
    items, at = [], 0
    while m := _HEADER_ITEM.match(text, at):
        start = re.compile(r"\s*").match(text, at).end()
        line = text.count("\n", 0, start) + 1
        if m.group(3) is None:
            items.append(ast.Version(major=int(m.group(1)), minor=int(m.group(2)), line=line))
        else:
            items.append(ast.Target(names=re.split(r"\s*,\s*", m.group(3)), line=line))
        at = m.end()
    rest = re.compile(r"\s*").match(text, at).end()
    line = text.count("\n", 0, rest) + 1
    if text.startswith(".target", rest):
        items.append(ast.Target(names=[], line=line))
    else:
        items.append(ast.Node(line=line))
    return header_problem(items, ast.Node(line=text.count("\n") + 1), filename)


def parse(text: str, filename: str = "<input>", fast: bool = True) -> ast.Module:
    """Parse PTX source into a Module; a syntax error raises CompileError (fatal).
    `fast=False` sends every statement through the grammar (tests compare both)."""
    global _current_lexer
    if "\0" in text:
        # ptxas reads up to a NUL byte as its end of input, then stops there (a non-ASCII
        # character on an earlier line is reported first)
        nul = text.index("\0")
        before = text[:nul]
        non_ascii_line = None if before.isascii() else _first_non_ascii_line(before)
        if non_ascii_line is not None:
            raise _non_ascii(non_ascii_line)
        err = CompileError(f"Unexpected EOF encountered on line {before.count(chr(10)) + 1}",
                           None, None, None, severity="fatal")
        err.diagnostics = [err]
        raise err
    non_ascii_line = None if text.isascii() else _first_non_ascii_line(text)
    lexer = ptx_lexer.make_lexer(filename)
    _current_lexer = lexer
    try:
        items = _parser().parse(text, lexer=_StatementLexer(lexer, fast))
    except CompileError as e:
        if non_ascii_line is not None and (e.line is None or e.line >= non_ascii_line):
            raise _non_ascii(non_ascii_line) from None
        header = _header_before_error(text, filename) if e.message.startswith("Parsing error near") else None
        if header is not None:
            header.diagnostics = [header]
            raise header from None
        if e.file is None and e.line is not None:
            e.file = filename
        e.diagnostics = [e]
        raise
    finally:
        _current_lexer = None
    if non_ascii_line is not None:
        raise _non_ascii(non_ascii_line)
    module = ast.Module(file=filename, items=[], line=1, column=1, end_line=lexer.lineno)
    for item in items or []:
        t = type(item)
        if t is ast.AddressSize and module.address_size is not None or \
                t is ast.Version and module.version is not None:
            # a repeated directive is ptxas's syntax error, unless the header failed first
            near = ".address_size" if t is ast.AddressSize else \
                f".version {item.major}.{item.minor}"
            err = header_problem(items, ast.Node(line=lexer.lineno), filename) or \
                CompileError(f"Parsing error near '{near}': syntax error", filename,
                             item.line, item.column, severity="fatal")
            err.diagnostics = [err]
            raise err
        if type(item) is ast.Version and module.version is None:
            module.version = item
        elif type(item) is ast.Target and module.target is None:
            module.target = item
        elif type(item) is ast.AddressSize and module.address_size is None:
            module.address_size = item
        module.items.append(item)
    return module
