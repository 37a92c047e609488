"""The PTX syntax tree: plain dataclasses, each carrying where it came from (line, column).

The tree records what was written, not what it means: names are unresolved strings and
types are PTX spellings (`.u32`). `checks.py` resolves and validates; later stages lower it.
The file name lives once, on `Module` (and on each `Function` where one run joins several
input files).
"""
from __future__ import annotations

import dataclasses
from dataclasses import field
from ptx2sass.records import dataclass


@dataclass(slots=True, kw_only=True)
class Node:
    line: int = 0
    column: int = 0


# ----------------------------------------------------------------------------- operands

# Name, IntLit and Instruction take their fields by position too (in the order of their
# `__init__`): a class called with keywords gets them as a dict, which cost more than the
# rest of making the node, and the parser's fast lane (fastpath.py) makes one of these per
# operand and statement.

@dataclass(slots=True, kw_only=True)
class Name(Node):
    """A register, variable, label or function reference; `component` is `.x` for `v.x`."""
    name: str
    component: str | None = None

    def __init__(self, name: str, line: int = 0, column: int = 0, component: str | None = None):
        self.line = line
        self.column = column
        self.name = name
        self.component = component


@dataclass(slots=True, kw_only=True)
class IntLit(Node):
    """`value` is already wrapped to 64 bits as ptxas does; `overflow` marks a decimal
    literal ptxas rejects ("Constant overflow")."""
    value: int
    text: str
    unsigned: bool = False
    overflow: bool = False

    def __init__(self, value: int, text: str, line: int = 0, column: int = 0,
                 unsigned: bool = False, overflow: bool = False):
        self.line = line
        self.column = column
        self.value = value
        self.text = text
        self.unsigned = unsigned
        self.overflow = overflow


@dataclass(slots=True, kw_only=True)
class FloatLit(Node):
    """`1.5` (decimal, taken as f64) or `0f3F800000` / `0d...` (exact bits, `bits` set)."""
    value: float
    text: str
    bits: int | None = None
    width: int = 64


@dataclass(slots=True, kw_only=True)
class Unary(Node):
    op: str  # '-', '!', '~'
    operand: "Expr"


@dataclass(slots=True, kw_only=True)
class Binary(Node):
    op: str
    left: "Expr"
    right: "Expr"


@dataclass(slots=True, kw_only=True)
class Call(Node):
    """`generic(sym)` or `mask(...)` in an initializer."""
    function: str
    args: list


@dataclass(slots=True, kw_only=True)
class Index(Node):
    """`arr[3]`: the address of an array element (tinygrad writes `mov.u64 %rd, local0[0]`)."""
    base: Name
    index: "Expr"


@dataclass(slots=True, kw_only=True)
class VectorOperand(Node):
    """`{a, b, _, d}`: a brace list; `_` appears as Name('_')."""
    elements: list


@dataclass(slots=True, kw_only=True)
class ParenList(Node):
    """`(a, b)`: call arguments/results; a one-element list in an expression is grouping."""
    elements: list


@dataclass(slots=True, kw_only=True)
class Address(Node):
    """`[base+offset]`; `elements` holds the raw bracket contents (one for memory operands,
    several for texture/surface coordinates). `base` is None for an absolute address."""
    elements: list
    base: Name | None = None
    offset: int = 0


@dataclass(slots=True, kw_only=True)
class PairOperand(Node):
    """`p|q`: the two predicate results of setp/vote-like instructions."""
    first: Name
    second: Name


Expr = Name | IntLit | FloatLit | Unary | Binary | Call | ParenList | Index
Operand = Expr | VectorOperand | Address | PairOperand


# ----------------------------------------------------------------------------- statements

@dataclass(slots=True, kw_only=True)
class Guard(Node):
    predicate: Name
    negated: bool = False


@dataclass(slots=True, kw_only=True)
class Instruction(Node):
    opcode: str                      # 'ld'
    modifiers: tuple[str, ...]       # ('.global', '.v4', '.f32')
    operands: list
    guard: Guard | None = None

    def __init__(self, opcode: str, modifiers: tuple[str, ...], operands: list, line: int = 0,
                 column: int = 0, guard: "Guard | None" = None):
        self.line = line
        self.column = column
        self.opcode = opcode
        self.modifiers = modifiers
        self.operands = operands
        self.guard = guard

    @property
    def text(self) -> str:
        return self.opcode + "".join(self.modifiers)


@dataclass(slots=True, kw_only=True)
class Label(Node):
    name: str


@dataclass(slots=True, kw_only=True)
class Declarator(Node):
    """One name in a declaration: `r<4>` (range_count=4), `a[2][3]`, `b[]`, `x = init`."""
    name: str
    range_count: int | None = None
    dims: list = field(default_factory=list)   # ints, None for `[]`
    init: object = None                          # Expr, or list for `{...}`


@dataclass(slots=True, kw_only=True)
class FieldInit(Node):
    """`addr_mode_0 = clamp_to_edge` inside a `.samplerref` initializer."""
    field: str
    value: object      # a keyword (str) or a number (IntLit / FloatLit)


@dataclass(slots=True, kw_only=True)
class VariableDecl(Node):
    """A `.reg/.shared/.global/.const/.local/.param/...` declaration (also a parameter).
    `attributes` keeps order-free extras: ('.ptr',), ('.attribute', '.managed'), ..."""
    space: str
    type: str | None
    declarators: list
    linkage: tuple[str, ...] = ()
    align: int | None = None
    vector: str | None = None
    ptr_space: str | None = None
    ptr_align: int | None = None
    attributes: tuple = ()


@dataclass(slots=True, kw_only=True)
class Block(Node):
    statements: list
    end_line: int = 0   # the closing brace (ptxas reports some function-level errors there)


@dataclass(slots=True, kw_only=True)
class Loc(Node):
    file_index: int
    source_line: int
    source_column: int
    function_name: str | None = None
    inlined_at: tuple[int, int, int] | None = None


@dataclass(slots=True, kw_only=True)
class Pragma(Node):
    strings: list


@dataclass(slots=True, kw_only=True)
class BranchTargets(Node):
    label: str
    targets: list


@dataclass(slots=True, kw_only=True)
class CallTargets(Node):
    label: str
    targets: list


@dataclass(slots=True, kw_only=True)
class CallPrototype(Node):
    label: str
    return_params: list
    params: list
    noreturn: bool = False


# ----------------------------------------------------------------------------- module level

@dataclass(slots=True, kw_only=True)
class PerformanceDirective(Node):
    name: str              # '.maxntid'
    args: list             # ints (or strings for .pragma)


@dataclass(slots=True, kw_only=True)
class Function(Node):
    kind: str                         # '.entry' or '.func'
    name: str
    linkage: tuple[str, ...]
    return_params: list
    params: list
    directives: list
    body: Block | None = None         # None for a declaration (prototype)
    has_param_list: bool = True
    file: str | None = None           # its input file, where a run has several (else None)
    head_end_line: int = 0            # where ptxas reports a duplicate (see parser.p_function)


@dataclass(slots=True, kw_only=True)
class Version(Node):
    major: int
    minor: int

    @property
    def number(self) -> int:
        """10*major + minor: 8.5 -> 85, comparable with the feature table."""
        return self.major * 10 + self.minor


@dataclass(slots=True, kw_only=True)
class Target(Node):
    names: list


@dataclass(slots=True, kw_only=True)
class AddressSize(Node):
    bits: int


@dataclass(slots=True, kw_only=True)
class FileDirective(Node):
    index: int
    path: str
    extra: list = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class SectionEntry(Node):
    """One `.b8 1, 2` row (values are Exprs or section names) or a label in a debug section."""
    type: str | None
    values: list
    label: str | None = None


@dataclass(slots=True, kw_only=True)
class Section(Node):
    name: str
    entries: list


@dataclass(slots=True, kw_only=True)
class Alias(Node):
    alias: str
    target: str


@dataclass(slots=True, kw_only=True)
class Module(Node):
    file: str
    items: list
    version: Version | None = None
    target: Target | None = None
    address_size: AddressSize | None = None
    end_line: int = 1   # the line the input ends on (where ptxas reports end-of-file errors)

    def functions(self) -> list[Function]:
        return [item for item in self.items if isinstance(item, Function)]

    def entries(self) -> list[Function]:
        return [f for f in self.functions() if f.kind == ".entry" and f.body is not None]

    def has_calls(self) -> bool:
        """Whether any `.func` is declared (only then is the inliner, ptx2sass/inline.py,
        imported)."""
        return any(f.kind == ".func" for f in self.functions())


_FIELDS: dict[type, tuple[str, ...]] = {}


def names(node) -> list[str]:
    """The name of every `Name` under `node` (a node or a list of them), walked without
    recursion (expressions nest as deep as the input's parentheses)."""
    out: list[str] = []
    work = [node]
    while work:
        n = work.pop()
        if type(n) is Name:
            out.append(n.name)
        elif isinstance(n, (list, tuple)):
            work.extend(n)
        elif isinstance(n, Node):
            fields = _FIELDS.get(type(n))
            if fields is None:
                fields = _FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n))
            work.extend(getattr(n, f) for f in fields)
    return out


def join_modules(modules: list[Module]) -> Module:
    """Several input files of one run as one program (ptxas compiles them as if they were
    one file, each keeping its own header and its own name in diagnostics). The header of
    the first file stands for the program's; each function records its file."""
    if len(modules) == 1:
        return modules[0]
    for m in modules:
        for f in m.functions():
            f.file = m.file
    first = modules[0]
    return Module(file=first.file, items=[item for m in modules for item in m.items],
                  version=first.version, target=first.target,
                  address_size=first.address_size, end_line=modules[-1].end_line,
                  line=first.line, column=first.column)
