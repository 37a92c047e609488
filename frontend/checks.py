"""Semantic checks that mirror ptxas: the same errors, on the same lines, in similar words.

ptxas reports in passes: header problems are fatal at once; then per instruction the
modifier/type/operand errors; then names that resolve to nothing ("Unknown symbol"). We keep
those passes so that a file with several errors lists them in ptxas's order.
Instruction facts come from `instructions.py`; this module only applies them.
"""
from __future__ import annotations

import dataclasses

import functools
import itertools
import re

from ptx2sass.records import dataclass
from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast
from ptx2sass.frontend.depth import deep_walks
from ptx2sass.frontend.header import header_problem
from ptx2sass.frontend import instructions as isa
from ptx2sass.frontend import async_store, bulk_copy_checks, cp_async_arrive, cp_reduce_bulk, cvt_packed, mma_narrow, multimem, sm80_features, tcgen05

_RANGE_SUFFIX = re.compile(r"^(.*?)(\d+)$")
_RANGE_SPLITS: dict[str, tuple[str, int] | None] = {}


# ptxas names the kind of a `wgmma.mma_async` it refuses by its operand types
_WGMMA_KINDS = {".s8": " with integer types", ".u8": " with integer types", ".b1": " with boolean type",
                ".e4m3": " with FP8 types", ".e5m2": " with FP8 types"}


def wgmma_kind(types) -> str:
    """`wgmma.mma_async` as ptxas names it in its messages, from the instruction's (dotted)
    modifiers or types: "wgmma.mma_async with FP8 types"."""
    return "wgmma.mma_async" + next((_WGMMA_KINDS[t] for t in types if t in _WGMMA_KINDS),
                                    " with floating point types")


def sparse_wgmma_types(types) -> str:
    """The A/B types of a `wgmma.mma_async.sp` as ptxas names them ("floating point types",
    "FP8 types", "integer types", "mixed integer types": s8 with u8)."""
    types = ["." + t.lstrip(".") for t in types]
    ints = {t[1:] for t in types} & {"s8", "u8"}
    if len(ints) == 2:
        return "mixed integer types"
    return wgmma_kind(types).split(" with ", 1)[1]


def _variant(op: str, modifiers) -> str:
    """An arch-specific instruction as ptxas names it when it refuses it for a target."""
    variant = op + (modifiers[0] if modifiers else "")
    if variant == "wgmma.mma_async" and ".sp" in modifiers:
        return f"Sparse wgmma.mma_async with {sparse_wgmma_types(modifiers)}"
    return wgmma_kind(modifiers) if variant == "wgmma.mma_async" else variant

def _range_split(name: str) -> tuple[str, int] | None:
    """`%r12` -> ("%r", 12): the register range a name may belong to (None: no digits at
    the end). Every register read asks, so the answers are kept."""
    split = _RANGE_SPLITS.get(name, False)
    if split is False:
        m = _RANGE_SUFFIX.match(name)
        split = (m.group(1), int(m.group(2))) if m else None
        if len(_RANGE_SPLITS) < 1 << 16:
            _RANGE_SPLITS[name] = split
    return split
_DOUBLES_NATIVE_SM = 13        # from sm_13 on `.target map_f64_to_f32` is an error
_TARGET_NUMBER = re.compile(r"^(?:sm|compute)_(\d+)([af]?)$")
_RELAXED_OPCODES = frozenset(("ld", "ldu", "st", "cvt"))
_ADDRESS_OF_OPCODES = frozenset(("mov", "cvta"))
_SPACE_ALIASES = {".shared::cta": ".shared", ".param::entry": ".param", ".param::func": ".param",
                  ".shared::cluster": ".shared"}
_SYNC_REQUIRED = {"vote": "vote", "shfl": "shfl"}
# the state spaces an atom/red may name (none: a generic address)
_STATE_SPACES = frozenset((".global", ".shared", ".shared::cta", ".shared::cluster"))


def _extern_redeclaration(earlier, decl: ast.VariableDecl) -> bool:
    """Whether a module-scope declaration of a name already declared is an `.extern`
    declaration and a definition of one variable (ptxas 13.5 takes both orders, in one
    file or across input files)."""
    first = getattr(earlier, "node", None)
    if not isinstance(first, ast.VariableDecl) or first.space != decl.space:
        return False
    return ".extern" in first.linkage or ".extern" in decl.linkage


@dataclass(slots=True)
class Symbol:
    kind: str                 # 'reg', 'var', 'func', 'label', 'sreg'
    type: str | None = None   # '.u32' (element type for vectors)
    space: str | None = None  # '.reg', '.global', ...
    vector: str | None = None
    node: object = None


class _Scope:
    """One `{ }` block (or the module): its variables, register ranges and labels.
    Labels are block-scoped in PTX like variables, and visible before their definition.
    `lookup`'s answers are kept per scope until any scope declares something (`declared`):
    every register read asks, and a range member's answer takes several steps."""
    __slots__ = ("names", "ranges", "labels", "parent", "memo", "memo_generation")
    generation = 0          # bumped by every declaration anywhere (`declared`)

    def __init__(self, parent: "_Scope | None"):
        self.names: dict[str, Symbol] = {}
        self.ranges: dict[str, tuple[int, Symbol]] = {}
        self.labels: dict[str, ast.Node] = {}
        self.parent = parent
        self.memo: dict[str, Symbol] = {}
        self.memo_generation = -1

    @staticmethod
    def declared() -> None:
        """A scope's names or ranges changed: every kept `lookup` answer may be stale."""
        _Scope.generation += 1

    def __contains__(self, label: str) -> bool:
        """`name in scope`: is `name` a label visible here."""
        scope = self
        while scope is not None:
            if label in scope.labels:
                return True
            scope = scope.parent
        return False

    def lookup(self, name: str) -> Symbol | None:
        if self.memo_generation == _Scope.generation:
            hit = self.memo.get(name)
            if hit is not None:
                return hit
        else:
            self.memo.clear()
            self.memo_generation = _Scope.generation
        hit = self._walk(name)
        if hit is not None:
            self.memo[name] = hit
        return hit

    def _walk(self, name: str) -> Symbol | None:
        scope = self
        while scope is not None:
            sym = scope.names.get(name)
            if sym is not None:
                return sym
            if scope.ranges:
                split = _range_split(name)
                if split is not None:
                    hit = scope.ranges.get(split[0])
                    if hit is not None and split[1] < hit[0]:
                        return hit[1]
            scope = scope.parent
        return None

    def declared_here(self, name: str) -> bool:
        if name in self.names:
            return True
        m = _RANGE_SUFFIX.match(name)
        if m:
            hit = self.ranges.get(m.group(1))
            return hit is not None and int(m.group(2)) < hit[0]
        return False


def _arch_problem(target: str, arch: str) -> str | None:
    """Can code for `.target target` be compiled for `-arch arch` (ptxas's words if not)."""
    t, a = _TARGET_NUMBER.match(target), _TARGET_NUMBER.match(arch)
    if not t or not a:
        return None
    tn, an = int(t.group(1)), int(a.group(1))
    if tn > an:
        return "SM version specified by .target is higher than default SM version assumed"
    if t.group(2) == "a" and isa.real_target(target) != arch:
        if tn == an:
            return f"PTX with .target '{target}' cannot be compiled for architecture '{arch}'"
        return f"Program with .target '{target}' cannot be compiled to future architecture"
    if t.group(2) == "f" and tn // 10 != an // 10:
        return (f"Program with .target '{target}' cannot be compiled to different SM-family "
                "architecture")
    return None


def target_number(name: str) -> int | None:
    m = _TARGET_NUMBER.match(name)
    return int(m.group(1)) if m else None


@functools.lru_cache(maxsize=4096)
def _operand_shape(opcode: str, modifiers: tuple, codes: tuple):
    """What check_operands reads off an instruction's spelling: the immediate-value choices
    its modifiers impose, the relaxed type rules, the state space each memory operand
    takes in turn (cp.async: dst, src), how many memory operands the form has, and the
    vector modifier."""
    choices = [c for c in (isa.IMMEDIATE_CHOICES.get((opcode, m)) for m in modifiers) if c]
    spaces = [m for m in modifiers if m in _STATE_SPACE_MODIFIERS]
    return (choices, opcode in _RELAXED_OPCODES, spaces, sum(1 for c in codes if c == "m"),
            next((m for m in modifiers if m in (".v2", ".v4", ".v8")), None))


@functools.lru_cache(maxsize=1024)
def type_compatible(instr_type: str, reg_type: str, relaxed: bool) -> bool:
    """PTX operand type rules: exact size and compatible class for most instructions,
    the relaxed (wider register allowed) rules for ld/st/cvt."""
    if instr_type == reg_type:
        return True
    ib, rb = isa.TYPE_BITS.get(instr_type), isa.TYPE_BITS.get(reg_type)
    if ib is None or rb is None:
        return True
    ic, rc = isa.type_class(instr_type), isa.type_class(reg_type)
    if ic == "pred" or rc == "pred":
        return False
    if not relaxed:
        if rb != ib or rb == 8:
            return False
        if ic == "b":
            return True
        if ic in "us":
            return rc in "bus"
        return rc == "b"
    if ic in "bus":
        return (rc in "bus" and rb >= ib) or (ic == "b" and rc == "f" and rb == ib)
    return rc == "b" and rb >= ib


class Checker:
    def __init__(self, module: ast.Module, arch: str | None, whole_program: bool = True,
                 after: "Checker | None" = None):
        """`after`: the checker of the input file before this one on the command line;
        the files of one run share their module scope, as one program (ptxas's several
        inputs)."""
        self.whole_program = whole_program
        self.called: set[str] = after.called if after else set()
        self.module = module
        self.file = module.file
        self.arch = arch
        self.errors: list[CompileError] = []        # instruction-level pass
        self.symbol_errors: list[CompileError] = []  # unknown names, reported after
        self.warnings: list[CompileError] = []
        self.double_use: bool | None = None  # see `note_double_use`
        self.error_reported = False          # ... an error before in this file
        self.errors_scanned = 0
        self.version_too_old = False     # .version below what .target needs
        self.debug_missing = False       # .target debug without DWARF sections
        self.header = None               # (.version, the sm_ target name, .target)
        self.call_sequence_problem: str | None = None   # first ld.param before its call
        self.returned_params: set[int] = set()            # ids of call-result .param decls
        self.globals = after.globals if after else _Scope(None)
        self.defined_functions: set[str] = after.defined_functions if after else set()
        self.own_functions: set[str] = set()          # declared or defined in this file
        # defined with external linkage (their own, or a `.visible`/`.weak` declaration's)
        self.exported: set[str] = after.exported if after else set()
        self.version = (0, 0)
        self.feature_problems: dict[tuple, list[str]] = {}
        # (opcode, modifiers, operand count) -> `lane_plan`'s answer (once the header is read)
        self.lanes: dict[tuple, tuple | bool] = {}
        self.target_sm = 0
        self.target_name = ""

    # ------------------------------------------------------------------ reporting

    def error(self, message: str, node, severity: str = "error"):
        self.errors.append(CompileError(message, self.file, node.line, node.column, severity))

    def fatal(self, message: str, node):
        line = node.line if node is not None else None
        raise CompileError(message, self.file, line, None, severity="fatal")

    def unknown(self, name: ast.Name):
        self.symbol_errors.append(CompileError(f"Unknown symbol '{name.name}'", self.file,
                                               name.line, name.column))

    # ------------------------------------------------------------------ driver

    def check_items(self) -> None:
        """Everything decided file by file: header, declarations, function bodies."""
        self.check_header()
        self.check_debug_files()
        self.declare_globals()
        for item in self.module.items:
            if type(item) is ast.Function and item.body is not None:
                self.check_function(item)
                # ptxas names the unknown symbols of a function after its other errors
                self.errors += self.symbol_errors
                self.symbol_errors.clear()
            elif type(item) is ast.Function and item.return_params \
                    and any(d.name == ".noreturn" for d in item.directives):
                # a prototype too (at its own line; ptxas says so before any link check)
                self.error(f"Invalid directive '.noreturn' for function '{item.name}'", item)

    def check_arch(self):
        """`.target` against -arch: ptxas decides this once the module is error-free."""
        tgt = self.target_name
        if self.arch is not None and tgt:
            problem = _arch_problem(tgt, self.arch)
            if problem:
                raise CompileError(problem, None, None, None, severity="fatal")


    def check_header(self):
        items = self.module.items
        problem = header_problem(items, ast.Node(line=self.module.end_line), self.file)
        if problem is not None:
            raise problem
        v, second = items[0], items[1]
        self.version = (v.major, v.minor)
        arch_names = [n for n in second.names if n.startswith(isa.ARCH_PREFIXES)]
        if arch_names:     # (named as written; compute_NN is sm_NN otherwise)
            self.target_name = arch_names[-1]
            self.target_sm = target_number(self.target_name)
        tgt = arch_names[0] if arch_names else None
        if "map_f64_to_f32" in second.names and self.target_sm >= _DOUBLES_NATIVE_SM:
            self.error("Directive map_f64_to_f32 is not supported with SM 1.3 or higher", second)
        self.header = (v, tgt, second)
        self.version_too_old = tgt is not None and bool(self.module.functions()) and \
            self.version < isa.TARGET_MIN_VERSION.get(isa.real_target(tgt), (0, 0))
        asz = self.module.address_size
        if asz is not None and self.version < isa.ADDRESS_SIZE_MIN_VERSION:
            self.error("Feature '.address_size directive' requires PTX ISA .version "
                       "%d.%d or later" % isa.ADDRESS_SIZE_MIN_VERSION, asz)
        if asz is not None and asz.bits not in (32, 64):
            self.error("Illegal value for .address_size directive (must be 32 or 64)", asz)

    def check_debug_files(self):
        """`.file` indices are unique; `.target debug` needs DWARF sections."""
        items = self.module.items
        self.file_indices: set[int] = set()
        for i, item in enumerate(items):
            if type(item) is ast.FileDirective:
                if item.index in self.file_indices:
                    # ptxas has read the next token (a `.file` may continue with `, ts, size`)
                    at = items[i + 1] if i + 1 < len(items) else ast.Node(
                        line=self.module.end_line)
                    self.error(f"Duplicate file index #{item.index}", at)
                self.file_indices.add(item.index)
        if any(type(item) is ast.Target and "debug" in item.names for item in items) and \
                not any(type(item) is ast.Section for item in items):
            self.debug_missing = True
        self.loc_seen: set[tuple[int, int, int]] = set()

    def check_loc(self, loc: ast.Loc):
        if not self.file_indices and not getattr(self, "warned_loc", False):
            self.warned_loc = True
            self.warnings.append(CompileError(
                ".loc directive without .file directive is found, line information in "
                "generated binary may not be complete", severity="warning"))
        if loc.inlined_at is not None and loc.inlined_at not in self.loc_seen:
            f, line, col = loc.inlined_at
            self.error(f"Source location {f} {line} {col} used in inlined_at directive must be "
                       "used in a preceding .loc directive", loc)
        self.loc_seen.add((loc.file_index, loc.source_line, loc.source_column))

    # ------------------------------------------------------------------ declarations

    def declare_globals(self):
        for item in self.module.items:
            t = type(item)
            if t is ast.VariableDecl:
                if item.space in (".reg", ".local"):
                    self.error(f"Module-scoped variables in {item.space} state space are not "
                               "allowed with ABI", item)
                self.declare(self.globals, item, module_scope=True)
            elif t is ast.Function:
                head = ast.Node(line=item.head_end_line or item.line)
                if len(item.return_params) > 1 and any(d.space == ".param" for d in item.return_params):
                    # several results travel in registers only (ptxas 13.5, with or without -g)
                    self.error("Multiple return parameters require .register state space", head)
                existing = self.globals.names.get(item.name)
                if existing is not None and existing.kind == "func" and \
                        item.name not in self.own_functions and _linkage(existing.node) is None:
                    existing = None       # another input file's own function: not seen here
                    self.defined_functions.discard(item.name)
                self.own_functions.add(item.name)
                if item.name in self.defined_functions or (
                        existing is not None and existing.kind != "func"):
                    # a second definition, or any declaration after the definition
                    self.error(f"Duplicate definition of function '{item.name}'", head)
                if item.body is not None and _linkage(item) == ".extern" and existing is None:
                    self.error("Function definition conflicts with '.extern' declaration for "
                               f"function '{item.name}'", ast.Node(line=item.body.end_line))
                if item.body is not None:
                    self.defined_functions.add(item.name)
                    seen = existing.node if existing is not None and existing.kind == "func" \
                        else item
                    if _linkage(item) is not None or _linkage(seen) in (".visible", ".weak"):
                        self.exported.add(item.name)
                if existing is not None and existing.kind == "func":
                    self.compare_prototypes(existing.node, item)
                if existing is None or item.body is not None:
                    self.globals.names[item.name] = Symbol("func", node=item)
                    _Scope.declared()
            elif t is ast.Alias:
                self.globals.names[item.alias] = Symbol("func", node=item)
                _Scope.declared()

    def compare_prototypes(self, first: ast.Function, second: ast.Function):
        """A function declared twice must be declared the same way: the same linkage (a
        later one may leave out a `.visible`/`.weak` the first gave) and parameters; an
        `.extern` function is never defined."""
        at = second.body if second.body is not None else second
        first_linkage, second_linkage = _linkage(first), _linkage(second)
        if (first_linkage != second_linkage and not (
                second_linkage is None and first_linkage in (".visible", ".weak"))) \
                or _no_return(first) != _no_return(second):
            self.error(f"Inconsistent redefinition of variable '{second.name}'", at)
        if first_linkage == ".extern" and second.body is not None:
            self.error("Function definition conflicts with '.extern' declaration for "
                       f"function '{second.name}'", ast.Node(line=second.body.end_line))
        if not (first.has_param_list and second.has_param_list):
            return
        a = first.return_params + first.params
        b = second.return_params + second.params
        if len(first.params) != len(second.params) or \
                len(first.return_params) != len(second.return_params):
            self.error(f"Inconsistent prototypes of '{second.name}', number of parameters "
                       "differ", at)
            return
        for x, y in zip(a, b):
            if (x.type, x.vector, x.declarators[0].dims) != (y.type, y.vector,
                                                             y.declarators[0].dims):
                self.error(f"Inconsistent prototypes of '{second.name}', parameter types "
                           "differ", at)
            if _alignment(x) != _alignment(y):
                self.error(f"Inconsistent prototypes of '{second.name}', parameter alignment "
                           "differ", at)

    def declare(self, scope: _Scope, decl: ast.VariableDecl, params: bool = False,
                module_scope: bool = False):
        if decl.align is not None and (decl.align <= 0 or decl.align & (decl.align - 1)):
            self.error("Alignment must be a power of two", decl)
        if decl.type in _INSTRUCTION_ONLY_TYPES:
            self.error(f"Type {decl.type} may only be used as an instruction type", decl)
        if decl.type == ".b128" and self.version < (8, 3):
            self.error("Feature 'Type .b128' requires PTX ISA .version 8.3 or later", decl)
        kind = "reg" if decl.space == ".reg" else "var"
        for d in decl.declarators:
            if d.name == "_" and params:
                continue
            if d.range_count is not None:
                if d.range_count >= 1 << 64:
                    self.error("Constant overflow", d)
                for existing in list(scope.names):
                    m = _RANGE_SUFFIX.match(existing)
                    if m and m.group(1) == d.name and int(m.group(2)) < d.range_count:
                        self.error(f"Duplicate definition of variable '{existing}'", d)
                        del scope.names[existing]
                        _Scope.declared()
                if d.name in scope.ranges:
                    self.error(f"Duplicate definition of variable '{d.name}0'", d)
                scope.ranges[d.name] = (d.range_count, Symbol(kind, decl.type, decl.space,
                                                              decl.vector, decl))
                _Scope.declared()
                continue
            if scope.declared_here(d.name):
                if module_scope and _extern_redeclaration(scope.names.get(d.name), decl):
                    continue        # `.extern` then the definition (or the reverse): one variable
                self.error(f"Duplicate definition of variable '{d.name}'", d)
                continue
            scope.names[d.name] = Symbol(kind, decl.type, decl.space, decl.vector, decl)
            _Scope.declared()
            if None in d.dims and ".extern" not in decl.linkage and not params and \
                    (d.init is None or d.dims[0] is not None):      # `a[] = {...}` is sized by it
                self.error(f"Non-external variable '{d.name}' has incomplete type", decl)
            if d.init is not None:
                if decl.space in (".reg", ".shared", ".local", ".param"):
                    self.error(f"No initial value is allowed for '{d.name}' in this state "
                               "space", decl)
                    continue
                if _too_many_elements(d.init, d.dims):
                    self.fatal("Greater number of elements in array initializer", decl)
                self.check_initializer(d.init, decl)

    def check_initializer(self, init, decl):
        """Initialisers may name only module-scope symbols (as addresses)."""
        if type(init) is list:
            for x in init:
                self.check_initializer(x, decl)
            return
        if _has_overflow(init):
            lit = next(n for n in _literals(init) if n.overflow)
            self.errors.append(CompileError("Constant overflow", self.file, lit.line,
                                            lit.column))
        for name, wrapped in _initializer_names(init):
            if self.globals.lookup(name.name) is None:
                if wrapped:
                    self.fatal("Invalid initial value expression", decl)
                self.fatal(f"Invalid initial value symbol '{name.name}'", decl)

    # ------------------------------------------------------------------ functions

    def check_function(self, fn: ast.Function):
        scope = _Scope(self.globals)
        self.function_params = {id(d) for d in fn.return_params + fn.params}
        for decl in fn.return_params + fn.params:
            if fn.kind == ".entry" and decl.space != ".param":
                self.error(f"Entry parameter '{decl.declarators[0].name}' must have .param "
                           "state space", decl)
            self.declare(scope, decl, params=True)
        self.check_directives(fn)
        self.function = fn
        self.check_block(fn.body, scope)

    def check_directives(self, fn: ast.Function):
        """Performance directives; ptxas reports a bad value at the next token's line and a
        conflict at the function's closing brace."""
        names = {d.name for d in fn.directives}
        for i, d in enumerate(fn.directives):
            if d.name in _POSITIVE_DIRECTIVES and any(a <= 0 for a in d.args):
                self.error(f"Positive non-zero value expected for {d.name[1:]}",
                           _reported_at(fn, i))
        end = ast.Node(line=fn.body.end_line)
        if ".noreturn" in names and fn.return_params:
            self.error(f"Invalid directive '.noreturn' for function '{fn.name}'", fn.body)
        if ".reqnctapercluster" in names and ".maxclusterrank" in names:
            last = max(i for i, d in enumerate(fn.directives)
                       if d.name in (".reqnctapercluster", ".maxclusterrank"))
            self.error("Conflicting directives: .reqnctapercluster and .maxclusterrank cannot "
                       "both be specified", _reported_at(fn, last))
        if ".maxntid" in names and ".reqntid" in names:
            self.error("Conflicting directives: .maxntid and .reqntid cannot both be "
                       "specified", end)
        if ".minnctapersm" in names and not names & {".maxntid", ".reqntid"}:
            self.warnings.append(CompileError(
                ".minnctapersm is ignored when neither .maxntid nor .reqntid is specified.",
                self.file, end.line, None, severity="warning"))

    def collect_labels(self, block: ast.Block, scope: _Scope):
        for st in block.statements:
            t = type(st)
            if t is ast.Label or t is ast.BranchTargets or t is ast.CallTargets \
                    or t is ast.CallPrototype:
                name = st.name if t is ast.Label else st.label
                if name in scope.labels:
                    self.error(f"Duplicate definition of label '{name}'", st)
                scope.labels[name] = st

    def check_block(self, block: ast.Block, scope: _Scope):
        self.collect_labels(block, scope)
        outer_labels = getattr(self, "labels", None)
        self.labels = scope
        lanes = self.lanes
        for st in block.statements:
            t = type(st)
            if t is ast.Instruction:
                if st.guard is None:
                    key = (st.opcode, st.modifiers, len(st.operands))
                    lane = lanes.get(key)
                    if lane is None:
                        lane = lanes[key] = self.lane_plan(st)
                    if lane and self.in_lane(st, lane, scope):
                        continue
                self.check_instruction(st, scope)
            elif t is ast.VariableDecl:
                self.declare(scope, st)
            elif t is ast.Block:
                self.check_block(st, _Scope(scope))
                self.labels = scope
            elif t is ast.Loc:
                self.check_loc(st)
            elif t is ast.BranchTargets or t is ast.CallTargets:
                for name in st.targets:
                    if name not in scope and scope.lookup(name) is None:
                        self.unknown(ast.Name(name=name, line=st.line, column=st.column))
        self.labels = outer_labels

    # ------------------------------------------------------------------ instructions

    def lane_plan(self, ins: ast.Instruction):
        """For an unguarded instruction's spelling (opcode, modifiers, operand count) on
        which `check_instruction` reports nothing once its operands pass
        `check_plain_operands` cleanly (no feature problem, no opcode-specific rule, no
        comparison rule, no double-precision note, a `_plain_plan`): that plan, else False.
        `check_block` then checks such instructions' operands only (`in_lane`)."""
        op, mods, count = ins.opcode, ins.modifiers, len(ins.operands)
        if op in _OUTSIDE_LANE or op in _OPCODE_FEATURE_CHECKS \
                or op in _SYNC_REQUIRED and ".sync" not in mods \
                or self.double_use is not None and ".f64" in mods \
                or op in ("setp", "set") and _integer_comparison_mismatch(mods) \
                or op in ("min", "max") and count == 4 and mods[-1:] == (".f32",) \
                or self.spelling_problems(ins):
            return False
        return _plain_plan(op, mods, count) or False

    def in_lane(self, ins: ast.Instruction, plan, scope: _Scope) -> bool:
        """Whether every operand is what `check_plain_operands` passes without a report
        (a scalar register of a fitting type, or a source integer literal that fits) and
        no name `check_features` looks at: then `check_instruction` would report nothing.
        Reports nothing itself; False sends the instruction the general way."""
        wants, relaxed, _ = plan
        lookup = scope.lookup
        Name, IntLit = ast.Name, ast.IntLit
        for (role, want, immediate_ok), operand in zip(wants, ins.operands):
            t = type(operand)
            if t is Name:
                if operand.component is not None or operand.name in _OUTSIDE_LANE_NAMES:
                    return False
                sym = lookup(operand.name)
                if sym is None or sym.kind != "reg" or sym.vector is not None \
                        or sym.type != want and not type_compatible(want, sym.type, relaxed):
                    return False
            elif t is IntLit and role == "a":
                if not immediate_ok or operand.overflow:
                    return False
            else:
                return False
        return True

    def check_instruction(self, ins: ast.Instruction, scope: _Scope):
        if ins.opcode in ("ld", "st") and getattr(self.function, "kind", None) == ".entry" \
                and next((m for m in ins.modifiers if m in _STATE_SPACE_MODIFIERS), None) == ".param::func":
            return self.check_func_param_in_kernel(ins, scope)
        if ins.opcode in _SYNC_REQUIRED and ".sync" not in ins.modifiers:
            # ptxas 13.5.37 says a non-.sync vote/shfl is gone only of an otherwise valid one
            before = len(self.errors)
            self._check_with_sinks(ins, scope)
            if len(self.errors) == before and self.target_sm >= 70 and self.version >= (6, 4):
                self.error(f"Instruction '{ins.opcode}' without '.sync' is not supported on "
                           ".target sm_70 and higher from PTX ISA version 6.4", ins)
            return
        self._check_with_sinks(ins, scope)

    def check_func_param_in_kernel(self, ins: ast.Instruction, scope: _Scope):
        """ld/st.param::func in a kernel, which has no function parameters: ptxas 13.5.37
        says so once the operands and types fit, after "Unexpected number of state spaces"
        and before the memory order's lines (reject28)."""
        before = len(self.errors)
        self._check_with_sinks(ins, scope)
        new = self.errors[before:]
        if any(e.message.startswith(("Arguments mismatch", _UNEXPECTED_TYPES)) for e in new):
            return
        at = before + next((i + 1 for i, e in enumerate(new)
                            if e.message.startswith("Unexpected number of state spaces")),
                           sum(1 for _ in itertools.takewhile(
                               lambda e: e.message.startswith("Feature "), new)))
        self.errors.insert(at, CompileError(
            f"Illegal state space for address operand '::func' with instruction '{ins.opcode}'",
            self.file, ins.line, ins.column, "error"))

    def _check_with_sinks(self, ins: ast.Instruction, scope: _Scope):
        first = ins.operands[0] if ins.operands else None
        t = type(first)
        if not (t is ast.Name and first.name == "_" or t is ast.PairOperand
                and (_is_sink(first.first) or _is_sink(first.second))):
            return self._check_instruction(ins, scope)
        before = len(self.errors), len(self.symbol_errors)
        self._check_instruction(ins, scope)
        new = self.errors[before[0]:] + self.symbol_errors[before[1]:]
        if all(e.severity == "warning" for e in new):
            self.check_result_discard(ins, first)

    def check_result_discard(self, ins: ast.Instruction, first):
        """A sink `_` as the whole first result, or a side of its `d|p` pair, of an
        instruction that checked clean: ptxas's verdict once the instruction's own checks
        pass (isa.RESULT_DISCARD_*)."""
        op, mods = ins.opcode, ins.modifiers
        paired = set(mods) & isa.RESULT_DISCARD_PAIRED.get(op, set())
        if type(first) is ast.PairOperand:
            if _is_sink(first.second):
                if paired:
                    self.error(f"Predicate output expected for instruction '{op}'", ins)
                return
            if op in isa.RESULT_DISCARD_PAIR_FIRST:
                return
        elif paired:
            self.error(f"Predicate output expected for instruction '{op}'", ins)
            return
        else:
            allowed = isa.RESULT_DISCARD_ALLOWED.get(op, ())
            if allowed is None or set(mods) & (allowed or set()):
                return
        joined = isa.RESULT_DISCARD_NAMES.get(op, ())
        name = op + "".join(m for m in mods if m in joined)
        self.fatal(f"Result discard mode is not allowed for instruction '{name}'", ins)

    def _check_instruction(self, ins: ast.Instruction, scope: _Scope):
        if self.double_use is not None and ".f64" in ins.modifiers:
            self.note_double_use(ins)
        if ins.guard is not None:
            sym = self.lookup(ins.guard.predicate, scope)
            if sym is None:
                self.error("Predicate expression expected", ins)
                self.unknown(ins.guard.predicate)
            elif sym.type != ".pred":
                self.error("Predicate expression expected", ins)
        op = ins.opcode
        forms = isa.FORMS.get(op)
        sink_source = False
        for operand in ins.operands:
            if type(operand) in _BRACKETED:
                sink_source = self.sink_vectors(ins, scope)
                if sink_source is None:
                    return
                break
        if op in ("ldmatrix", "stmatrix"):
            from ptx2sass.frontend import matrix_checks
            vectors = [len(o.elements) for o in ins.operands if type(o) is ast.VectorOperand]
            if self.reported(matrix_checks.problems(op, ins.modifiers, self.target_name,
                                                    self.target_sm, (vectors or [None])[0]),
                             ins, scope):
                return
        self.check_features(ins)
        if op == "st" and ".bulk" in ins.modifiers:
            self.check_st_bulk(ins, scope)
        if op == "setmaxnreg":
            self.check_setmaxnreg(ins)
        for operand in ins.operands:
            t = type(operand)
            if t is not ast.Name and (operand.overflow if t is ast.IntLit
                                      else _has_overflow(operand)):
                self.error("Constant overflow", ins)
                return
        plan = _plain_plan(op, ins.modifiers, len(ins.operands))
        reported = len(self.errors)
        if plan is not None and self.check_plain_operands(ins, plan, scope):
            self.check_comparison(ins, reported)
            return
        lenient = _is_lenient(op, ins.modifiers)
        if op == "call":
            self.check_call(ins, scope)
            return
        if forms is None or lenient:
            if sink_source:
                self.error(SINK_SOURCE, ins)
            if lenient:
                from ptx2sass.frontend.video_checks import video_problems   # rare: lazily
                problems = video_problems(op, ins.modifiers, ins.operands)
                for problem in problems:
                    self.error(problem, ins)
                if problems and problems[0].startswith("Arguments mismatch"):
                    for operand in ins.operands:
                        self.resolve_names(operand, scope, self.labels)
                    return
                if not problems and op in _SCALAR_VIDEO and not self.video_operands_fit(ins, scope):
                    self.mismatch(op, ins)
                if op == "tcgen05":
                    for problem in tcgen05.problems(ins, lambda n: self.register_type(n, scope), self.version,
                                                    self.target_name):
                        self.error(problem, ins)
                if async_store.is_st_async(op, ins.modifiers):
                    for problem in async_store.all_problems(
                            ins.modifiers, ins.operands, lambda n: self.register_type(n, scope),
                            self.version, self.target_sm, lambda t, r: type_compatible(t, r, False)):
                        self.error(problem, ins)
                    for operand in ins.operands:
                        self.resolve_names(operand, scope, self.labels)
                    return
                if op == "cvt" and ins.modifiers[:1] == (".pack",):
                    if self.reported(cvt_packed.pack_problems(ins.modifiers, len(ins.operands)), ins, scope):
                        return
                if op == "red" and ins.modifiers[:1] == (".async",):
                    if self.reported(async_store.red_async_problems(ins.modifiers), ins, scope):
                        return
                if cp_reduce_bulk.applies(op, ins.modifiers):
                    if self.reported(cp_reduce_bulk.problems(ins.modifiers, self.version), ins, scope):
                        return
                if cp_async_arrive.applies(op, ins.modifiers):
                    if self.reported(cp_async_arrive.problems(ins.modifiers, ins.operands), ins, scope):
                        return
                if bulk_copy_checks.applies(op, ins.modifiers):
                    if self.reported(bulk_copy_checks.problems(
                            ins.modifiers, ins.operands, self.version, self.target_sm, self.target_name,
                            lambda n: self.register_type(n, scope), _constant_value), ins, scope):
                        return
                if op == "cp" and ".tensor" in ins.modifiers:
                    from ptx2sass.frontend import tensor_copy_checks

                    def space_of(name):
                        sym = self.lookup(name, scope)
                        return sym.space if sym is not None and sym.kind == "var" else None
                    if self.reported(tensor_copy_checks.problems(ins.modifiers, ins.operands, space_of),
                                     ins, scope):
                        return
                if op == "tensormap" and ins.modifiers[:1] == (".replace",):
                    from ptx2sass.frontend import tensormap_checks

                    def var_space(node):
                        if type(node) is ast.Address and node.base is not None:
                            node = node.base
                        if type(node) is not ast.Name:
                            return None
                        sym = self.lookup(node, scope)
                        return sym.space if sym is not None and sym.kind == "var" else None

                    def reg_type(node):
                        return self.register_type(node.name, scope) if type(node) is ast.Name else None
                    if self.reported(tensormap_checks.problems(
                            ins.modifiers, ins.operands, self.target_sm, self.target_name,
                            _constant_value, reg_type, var_space), ins, scope):
                        return
                if op == "tensormap" and ins.modifiers[:1] == (".cp_fenceproxy",):
                    from ptx2sass.frontend import tensormap_checks

                    def var_space(node):
                        if type(node) is ast.Address and node.base is not None:
                            node = node.base
                        sym = self.lookup(node, scope) if type(node) is ast.Name else None
                        return sym.space if sym is not None and sym.kind == "var" else None
                    if self.reported(tensormap_checks.cp_fenceproxy_problems(
                            ins.modifiers, ins.operands, self.target_sm, self.target_name,
                            _constant_value, var_space), ins, scope):
                        return
                if op in ("prefetch", "prefetchu"):
                    from ptx2sass.frontend import prefetch_checks
                    for severity, message in prefetch_checks.vector_diagnostics(op, ins.modifiers):
                        self.error(message, ins, severity)
                        self.errors[-1].among_errors = severity == "warning"
                    for problem in prefetch_checks.problems(op, ins.modifiers, ins.operands):
                        self.error(problem, ins)
                    for operand in ins.operands:
                        self.resolve_names(operand, scope, self.labels)
                    return
                if op == "mbarrier":
                    from ptx2sass.frontend import mbarrier_shapes
                    found = mbarrier_shapes.problems(ins.modifiers, ins.operands,
                                                     lambda n: self.register_type(n, scope))
                    for problem in found:
                        self.error(problem, ins)
                    if found:
                        for operand in ins.operands:
                            self.resolve_names(operand, scope, self.labels)
                        return
                if op == "multimem":
                    # fp8 values: the register size is checked first (ptxas: a mismatch alone)
                    fp8_fit = multimem.value_bits(ins.modifiers) is None \
                        or self.multimem_values_fit(ins, scope)
                    problems = multimem.problems(ins.modifiers, self.target_name, self.target_sm) \
                        if fp8_fit else []
                    for problem in problems:
                        self.error(problem, ins)
                    if not problems and not self.multimem_values_fit(ins, scope):
                        self.mismatch(f"multimem{ins.modifiers[0]}", ins)
                if op == "istypep" and len(ins.operands) != 2:
                    self.mismatch("istypep", ins)
                    for operand in ins.operands:
                        self.resolve_names(operand, scope, self.labels)
                    return
                if op in ("mapa", "getctarank"):
                    spaces = [m for m in ins.modifiers if m in _STATE_SPACE_MODIFIERS]
                    if spaces and spaces != [".shared::cluster"]:
                        self.error(f"State space incorrect for instruction '{op}'" + (
                            ", expected '::cluster'" if spaces[0].startswith(".shared") else ""), ins)
                        return
                problem = _surface_reduction_problem(op, ins.modifiers) or \
                    _lenient_shape_problem(op, ins.modifiers, len(ins.operands))
                if problem:
                    self.error(problem, ins)
                    if problem.startswith("Arguments mismatch"):
                        for operand in ins.operands:
                            self.resolve_names(operand, scope, self.labels)
                    return
                for operand in ins.operands:
                    self.resolve_names(operand, scope, self.labels)
                return
            self.error(f"Not a name of any known instruction: '{op}'", ins)
            return
        if op == "ld" and ".param" in ins.modifiers and len(ins.operands) > 1:
            self.check_call_sequence(ins.operands[1], scope)
        form, types, name, problem = select_form(op, ins.modifiers)
        if op == "cvt" and len(types) == 2 and self.cvt_operands_mismatch(ins, types, problem, scope):
            return
        policy = None
        if op in _CACHE_POLICY_OPCODES and not (problem and problem.startswith(
                ("Unknown modifier", _UNEXPECTED_TYPES))) and not (op == "red" and ".cas" in ins.modifiers):
            policy = self.cache_policy_problem(ins, scope)
            if policy == "mismatch":    # the operands fit no form: that alone is reported
                self.mismatch(name, ins)
                for operand in ins.operands:
                    self.resolve_names(operand, scope, self.labels)
                return
        if op == "add" and ".sat" in ins.modifiers and ins.modifiers[-1:] == (".u32",):
            # PTX 9.2's unsigned saturating add: no target of ptxas 13.5.37 has it (reported
            # once the operands fit, before the modifiers' problems)
            if len(ins.operands) != 3:
                self.mismatch(name, ins)
                for operand in ins.operands:
                    self.resolve_names(operand, scope, self.labels)
                return
            problem = "\n".join(([] if self.version >= (9, 2) else [
                "Feature 'add.sat' requires PTX ISA .version 9.2 or later"])
                + [f"Feature 'add.sat' not supported on .target '{self.target_name}'"]
                + ([problem] if problem else []))
        mark = len(self.errors)
        if problem and not problem.startswith(_UNEXPECTED_TYPES) and _NO_INSTRUCTION not in \
                problem and self.operands_mismatch_first(ins, types, scope, name):
            # ptxas checks the operands against the types before the modifiers (but it has
            # told of two comparisons already)
            repeats = [l for l in problem.split("\n") if l.startswith(_REPEAT_MESSAGES)]
            if repeats:
                tail = self.errors[mark:]
                del self.errors[mark:]
                for line in repeats:
                    self.error(line, ins)
                self.errors += tail
            return
        if policy is not None:          # a cache policy without its `.L2::cache_hint`
            for line in (problem or "").split("\n"):
                if line:
                    self.error(line, ins)
            self.error(f".L2::cache_hint modifier required for instruction '{name}' with "
                       f"{len(ins.operands)} arguments", ins)
            self.mismatch(name, ins)
            for operand in ins.operands:
                self.resolve_names(operand, scope, self.labels)
            return
        if problem:
            for line in problem.split("\n"):       # several illegal modifiers
                self.error(line, ins)
            if op in ("ld", "ldu", "st") and "Multiple vector modifiers specified" in problem.split("\n"):
                # the vector operand against the later size (ld/ldu say it twice: ptxas
                # 13.5.37, reject28)
                width = int(next(m for m in reversed(ins.modifiers) if m in (".v2", ".v4", ".v8"))[2:])
                value = ins.operands[1 if op == "st" else 0] if len(ins.operands) > 1 else None
                if type(value) is ast.VectorOperand and len(value.elements) != width:
                    for _ in range(1 if op == "st" else 2):
                        self.error(f"Argument vector size mismatch for instruction '{op}'", ins)
        if sink_source:
            self.error(SINK_SOURCE, ins)      # (after a modifier problem, as ptxas)
        if problem and form is not None and ins.opcode in ("set", "setp") and all(
                line.startswith(_REPEAT_MESSAGES) for line in problem.split("\n")):
            problem = None      # a repeated modifier only: the operands are checked still
        if problem:
            if problem.startswith(_UNEXPECTED_TYPES):
                for operand in ins.operands:      # its operands' names are still looked up
                    self.resolve_names(operand, scope, self.labels)
            elif ins.opcode in ("set", "setp") and len(ins.operands) == 4 \
                    and not {".and", ".or", ".xor"} & set(ins.modifiers) and all(
                        line.startswith(_REPEAT_MESSAGES + (_COMPARISON_MISMATCH, "Illegal modifier"))
                        for line in problem.split("\n")):
                # (then the predicate operand without its boolean operation: reject28)
                self.error(f"Boolean operation is required for instruction '{ins.opcode}'", ins)
            return
        n = len(ins.operands)
        if not form.optional_from <= n <= len(form.operands):
            # a sibling form with the same modifiers and types may take this many operands
            # (`bar.red.popc.u32 d, a, p` and `d, a, b, p`)
            form = next((f for f in isa.FORMS[op] if f.groups == form.groups
                         and f.type_slots == form.type_slots
                         and f.optional_from <= n <= len(f.operands)), form)
        if op == "cp" and n == 4 and ".L2::cache_hint" in ins.modifiers:
            # `cp.async... .L2::cache_hint [d], [s], size, policy`: the source size is
            # optional before the cache policy, which a cache hint requires
            form = dataclasses.replace(form, operands=form.operands[:3] + form.operands[4:],
                                       optional_from=4)
        reported = len(self.errors)
        self.check_operands(ins, form, types, scope, name)
        self.check_comparison(ins, reported)
        if op == "alloca" and len(ins.operands) == 3:
            self.check_alloca_alignment(ins, scope)

    def register_type(self, name: str, scope: _Scope) -> str | None:
        """The declared type of scalar register `name` (None: not a scalar register)."""
        sym = scope.lookup(name)
        if sym is None or sym.kind != "reg" or sym.vector is not None:
            return None
        return sym.type

    def video_operands_fit(self, ins: ast.Instruction, scope: _Scope) -> bool:
        """A scalar video instruction's registers are 32-bit integers (ptxas: 'Arguments
        mismatch' for an .f32 one)."""
        for operand in ins.operands:
            if type(operand) is ast.Unary:
                operand = operand.operand
            if type(operand) is not ast.Name:
                continue
            sym = self.lookup(operand, scope)
            if sym is not None and sym.kind == "reg" and sym.type is not None \
                    and sym.type not in (".u32", ".s32", ".b32"):
                return False
        return True

    def cache_policy_problem(self, ins: ast.Instruction, scope: _Scope) -> str | None:
        """ld/st/atom/red's optional last operand, an L2 cache policy, which goes with
        `.L2::cache_hint`: 'mismatch' where the operands fit no form (a policy that is no
        64-bit integer register or literal, or `.L2::cache_hint` without one), 'hint' for a
        policy without `.L2::cache_hint` (ptxas 13.5.37: ".L2::cache_hint modifier required
        for instruction 'ld' with 3 arguments", then "Arguments mismatch"), None else."""
        op, mods, ops = ins.opcode, ins.modifiers, ins.operands
        base = 2 if op in ("ld", "st", "red") else 4 if ".cas" in mods else 3
        hint = ".L2::cache_hint" in mods
        if len(ops) == base + 1:
            policy = ops[-1]
            if type(policy) is ast.IntLit:
                fits = True
            else:
                sym = self.lookup(policy, scope) if type(policy) is ast.Name else None
                fits = sym is not None and sym.kind == "reg" and sym.vector is None \
                    and sym.type in (".b64", ".u64", ".s64")
            if not fits or not hint and ".cas" in mods:    # (cas: no such message)
                return "mismatch"
            return None if hint else "hint"
        if len(ops) == base and hint:
            return "mismatch"
        return None

    def operands_mismatch_first(self, ins: ast.Instruction, types, scope, name) -> bool:
        """For an instruction whose modifiers fit no form: whether its operands fit no form
        of its types either, reported as ptxas does ("Arguments mismatch", unknown symbols)
        in place of the modifier messages (probed with ptxas 13.5.37, branch reject26)."""
        n = len(ins.operands)
        forms = [f for f in isa.FORMS.get(ins.opcode, ()) if len(f.type_slots) == len(types)
                 and all(t in slot for t, slot in zip(types, f.type_slots))
                 and f.optional_from <= n <= len(f.operands)
                 and all(c[0] in "dabcempq*" and c != "dp" for c in f.operands)]
        if types and not forms and any(
                len(f.type_slots) == len(types) and all(t in slot for t, slot in zip(types, f.type_slots))
                and all(c[0] in "dabcempq*" and c != "dp" for c in f.operands)
                for f in isa.FORMS.get(ins.opcode, ())):
            # forms of these types but none of this operand count (ptxas 13.5.37, reject28:
            # `cvt.rz.rzi.f32.f64 d, a, b` is "Arguments mismatch", not the rounding)
            self.mismatch(name, ins)
            for operand in ins.operands:
                self.resolve_names(operand, scope, self.labels)
            return True
        if not forms or not types:
            return False
        before = len(self.errors), len(self.symbol_errors)
        for f in forms:
            self.check_operands(ins, f, tuple(types), scope, name)
            if len(self.symbol_errors) == before[1] and not any(
                    e.message.startswith("Arguments mismatch") for e in self.errors[before[0]:]):
                # they fit (set/setp's "Boolean operation is required" comes later)
                del self.errors[before[0]:]
                return False
            if f is not forms[-1]:
                del self.errors[before[0]:]
                del self.symbol_errors[before[1]:]
        return True

    def cvt_operands_mismatch(self, ins: ast.Instruction, types, problem, scope) -> bool:
        """cvt conversions whose operands ptxas checks before the modifiers: a packed pair's
        operand count (`cvt.rn.bf16x2.f32 d, a, b`), and bf16 to or from an 8-bit integer,
        which ptxas 13.5.37 takes (sm_90+) only with the integer in an 8-bit register (or a source
        immediate) and the bf16 in a .b16 one ("Arguments mismatch" for a 16- or 32-bit
        integer register, a .u16 or .f16 bf16 one; a repeated modifier class is reported
        first). True if reported."""
        dst, src = types
        count = cvt_packed.operand_count(dst, src, ins.modifiers)
        registers = [self.register_type(o.name, scope) if type(o) is ast.Name else None
                     for o in ins.operands]
        byte_bf16 = bool(".bf16" in types and {dst, src} & {".u8", ".s8"})
        if byte_bf16 and len(registers) == 2 and self.target_sm >= 90:
            # (below sm_90 ptxas refuses the conversion itself; ours keeps the mismatch)
            byte, half = (registers[0], registers[1]) if dst in (".u8", ".s8") else (registers[1], registers[0])
            byte_bf16 = (byte is not None and isa.TYPE_BITS.get(byte) != 8) \
                or (half is not None and half not in (".b16", ".bf16"))
        if not byte_bf16 and (count is None or count == len(ins.operands)) \
                and cvt_packed.registers_fit(dst, src, registers, ins.modifiers):
            return False
        if problem and problem.startswith(_UNEXPECTED_TYPES):
            return False
        for line in (problem or "").split("\n"):
            if line.startswith(_REPEAT_MESSAGES):
                self.error(line, ins)
        self.mismatch("cvt", ins)
        for operand in ins.operands:
            self.resolve_names(operand, scope, self.labels)
        return True

    def check_comparison(self, ins: ast.Instruction, reported: int):
        """setp/set: an integer comparison the source type does not allow, once the operands
        passed (`reported`: the error count before they were checked), as ptxas orders them."""
        if ins.opcode in ("setp", "set") and len(self.errors) == reported \
                and _integer_comparison_mismatch(ins.modifiers):
            self.error("Mismatch between instruction type and comparison qualifier", ins)
        if ins.opcode in ("min", "max") and len(ins.operands) == 4 and len(self.errors) == reported \
                and ins.modifiers[-1:] == (".f32",):
            # three inputs (sm_100, PTX 8.8; not with .xorsign), once the operands passed
            feature = f"Feature '{ins.opcode}.f32 with 3 input operands'"
            if self.target_sm < 100:
                self.error(f"{feature} requires .target sm_100 or higher", ins)
            if self.version < (8, 8):
                self.error(f"{feature} requires PTX ISA .version 8.8 or later", ins)
            if ".xorsign" in ins.modifiers:
                self.error(f"Illegal modifier '.xorsign' for instruction '{ins.opcode}'", ins)

    def multimem_values_fit(self, ins: ast.Instruction, scope: _Scope) -> bool:
        """The value registers of multimem.st/red (the source) or ld_reduce (the result) are
        of the instruction's element type, by the exact-size rules (ptxas: 'Arguments
        mismatch' for a .b64 register of a .u32 store, an .f32 one of a .u32 reduction)."""
        ty = multimem.element_type(ins.modifiers)
        bits = multimem.value_bits(ins.modifiers)
        index = 0 if ins.modifiers[:1] == (".ld_reduce",) else 1
        if ty is None and bits is None or len(ins.operands) != 2:
            return True
        value = ins.operands[index]
        names = value.elements if type(value) is ast.VectorOperand else [value]
        for name in names:
            if type(name) is not ast.Name:
                continue
            sym = self.lookup(name, scope)
            if bits is not None:       # fp8 lanes: any register of exactly their bits
                if sym is not None and sym.kind == "reg" and sym.type \
                        and isa.TYPE_BITS.get(sym.type) != bits:
                    return False
                continue
            if sym is not None and sym.kind == "reg" and sym.type \
                    and not type_compatible(ty, sym.type, False):
                return False
        return True

    def sink_vectors(self, ins: ast.Instruction, scope: _Scope) -> bool | None:
        """Sinks `_` in `{...}` vectors, as ptxas types them: a vector of sinks only has no
        element type ('Unable to infer ...', and the instruction matches no form: None, all
        reported). True where a sink stands among sources (a vector past the first operand
        or in an address), which ptxas refuses, except in a 256-bit `st` (sm_100's
        word-masked store) and in `mov`'s packing (`check_packing` decides that)."""
        vectors = []
        for index, operand in enumerate(ins.operands):
            if type(operand) is ast.VectorOperand:
                vectors.append((operand, index > 0))
            elif type(operand) is ast.Address:
                vectors += [(e, True) for e in operand.elements if type(e) is ast.VectorOperand]
        sink_source = False
        for vector, source in vectors:
            sinks = [type(e) is ast.Name and e.name == "_" for e in vector.elements]
            if all(sinks):
                self.error("Unable to infer type of vector elements (assuming .b8)", ins)
                self.mismatch(_display_name(ins.opcode, ins.modifiers), ins)
                for operand in ins.operands:
                    self.resolve_names(operand, scope, self.labels)
                return None
            sink_source |= source and any(sinks)
        return sink_source and ins.opcode != "mov" \
            and not (ins.opcode == "st" and _is_256_bit_access("st", ins.modifiers))

    def note_double_use(self, ins: ast.Instruction):
        """--warn-on-double-precision-use's warning, among the errors in instruction order
        as ptxas reports it (shown only where the checks fail: `usage_warnings` else)."""
        from ptx2sass.frontend.usage_warnings import DOUBLE_USE, TWICE
        # ptxas warns a second time from the macro expansion of cvt/testp (not with
        # -Werror), which it leaves out once the file has had an error
        while self.errors_scanned < len(self.errors):
            if self.errors[self.errors_scanned].severity != "warning":
                self.error_reported = True
            self.errors_scanned += 1
        times = 2 if ins.opcode in TWICE and not self.double_use and not self.error_reported \
            else 1
        for _ in range(times):
            d = CompileError(DOUBLE_USE, self.file, ins.line, ins.column, "warning")
            d.among_errors = True
            self.errors.append(d)

    def check_plain_operands(self, ins: ast.Instruction, plan, scope: _Scope) -> bool:
        """The common case, decided without the general walk: every operand a scalar
        register declared in scope, or (as a source) an integer literal, of an instruction
        whose form takes only plain values (`_plain_plan`). Reports what the general walk
        would report for such operands (only 'Arguments mismatch'); False, having reported
        nothing, where an operand is anything else."""
        wants, relaxed, name = plan
        ok = True
        lookup = scope.lookup
        for (role, want, immediate_ok), operand in zip(wants, ins.operands):
            t = type(operand)
            if t is ast.Name:
                if operand.component is not None:
                    return False
                sym = lookup(operand.name)
                if sym is None or sym.kind != "reg" or sym.vector is not None \
                        or operand.name in _UNPLAIN_NAMES:
                    return False
                if sym.type != want and not type_compatible(want, sym.type, relaxed):
                    ok = False
            elif t is ast.IntLit and role == "a":
                if not immediate_ok:
                    ok = False
            else:
                return False
        if not ok:
            self.mismatch(name, ins)
        return True

    def check_alloca_alignment(self, ins: ast.Instruction, scope: _Scope):
        """alloca's third operand: a constant power of two."""
        value = _constant_value(ins.operands[2])
        if value is None:
            self.mismatch("alloca", ins)
        elif value <= 0 or value & (value - 1):
            self.error("Alignment must be a power of two", ins)

    def check_call_sequence(self, address, scope: _Scope):
        """`ld.param` of a `.param` declared in the body reads a call's result, so it must
        follow a call returning into it (ptxas: a fatal 'call sequence' error)."""
        base = address.base if type(address) is ast.Address else None
        sym = self.lookup(base, scope) if base is not None else None
        if sym is None or sym.kind != "var" or sym.space != ".param":
            return
        if id(sym.node) in self.function_params or id(sym.node) in self.returned_params:
            return
        if self.call_sequence_problem is None:
            self.call_sequence_problem = (f"Function call sequence invalid: 'ld.param' of "
                                          f"'{base.name}' without corresponding call")

    def check_call(self, ins: ast.Instruction, scope: _Scope):
        """call [(results),] target [, (arguments)] [, prototype | call-targets]."""
        ops = list(ins.operands)
        results = ops.pop(0).elements if ops and type(ops[0]) is ast.ParenList else None
        for r in results or []:
            sym = self.lookup(r, scope) if type(r) is ast.Name else None
            if sym is not None and sym.kind == "var":
                self.returned_params.add(id(sym.node))
        target = ops.pop(0) if ops else None
        args = ops.pop(0).elements if ops and type(ops[0]) is ast.ParenList else []
        proto = ops.pop(0) if ops else None
        for group in (results or [], args):
            for operand in group:
                self.resolve_names(operand, scope, self.labels)
        if proto is not None:
            self.resolve_names(proto, scope, self.labels)
        if type(target) is not ast.Name or ops:
            self.error("Label expected for argument 0 of instruction 'call'", ins)
            return
        if target.name in self.labels:
            self.error("Illegal call target, device function expected", ins)
            return
        sym = self.lookup(target, scope)
        if sym is None:
            self.error(f"Call to '{target.name}' requires call prototype", ins)
            self.unknown(target)
            return
        if sym.kind == "reg":
            if proto is None:
                self.error("Label expected for argument 0 of instruction 'call'", ins)
            return
        fn = sym.node
        if type(fn) is ast.Alias:   # `.alias a, b;` calls b
            target_sym = self.globals.lookup(fn.target)
            fn = target_sym.node if target_sym is not None else None
        if sym.kind != "func" or type(fn) is not ast.Function or fn.kind == ".entry":
            self.error("Illegal call target, device function expected", ins)
            return
        self.called.add(fn.name)
        if len(args) != len(fn.params) or len(results or []) != len(fn.return_params):
            self.error("Call has wrong number of parameters", ins)
            return
        for arg, param in zip(args, fn.params):
            if type(arg) is ast.Name and arg.name == "_":    # a sink result is fine
                self.error(f"Illegal argument for formal parameter '{param.declarators[0].name}'", ins)

    def spelling_problems(self, ins: ast.Instruction) -> list[str]:
        """The feature messages of the instruction's opcode and modifiers on this target and
        version (kept per spelling)."""
        key = (ins.opcode, ins.modifiers, self.version, self.target_name, self.target_sm)
        problems = self.feature_problems.get(key)
        if problems is None:
            kept = _repeated_modifiers(ins.opcode, ins.modifiers)[1]
            # (of a repeated modifier ptxas checks the one it keeps: `st.v8.v2` is no .v8)
            problems = self.feature_problems[key] = self._feature_problems(
                ins if kept == ins.modifiers else dataclasses.replace(ins, modifiers=kept))
        return problems

    def check_features(self, ins: ast.Instruction):
        for message in self.spelling_problems(ins):
            self.error(message, ins)
        if self.target_sm < 90:                   # no special register is newer otherwise
            for operand in ins.operands:
                # (only the names of `_NEWER_REGISTERS` can draw a message: the rest skip it)
                if isinstance(operand, ast.Name) and operand.name in _NEWER_REGISTERS:
                    message = sm80_features.register_problem(operand.name, self.target_sm)
                    if operand.name in isa.SM90_SPECIAL_REGISTERS:
                        message = f"Feature '{operand.name}' requires .target sm_90 or higher"
                    if message:
                        self.error(message, ins)
        if ins.opcode in _OPCODE_FEATURE_CHECKS:
            self.check_opcode_features(ins)

    def check_opcode_features(self, ins: ast.Instruction):
        """check_features' rules for a few opcodes (`_OPCODE_FEATURE_CHECKS`): checked per
        instruction, outside the per-spelling cache."""
        if ins.opcode == "cvt" and ".sat" in ins.modifiers and _needless_integer_saturation(ins.modifiers):
            self.error("Illegal modifier '.sat' for instruction 'cvt'", ins)
        if ins.opcode in ("ld", "st") and ".mmio" in ins.modifiers and self.version < (9, 3):
            for m in (".acquire", ".release"):
                if m in ins.modifiers:
                    self.error(f"Feature '{m}' requires PTX ISA .version 9.3 or later", ins)
        if ins.opcode == "mbarrier" and self.version < (7, 8) and ins.operands \
                and isinstance(ins.operands[0], ast.Name) and ins.operands[0].name == "_":
            self.fatal(f"Result discard mode is not allowed for instruction "
                       f"'mbarrier{ins.modifiers[0] if ins.modifiers else ''}'", ins)
        if ins.opcode == "mbarrier" and self.target_sm < 90 and len(ins.operands) == 3 \
                and ins.modifiers[:1] in ((".arrive",), (".arrive_drop",)) \
                and not {".noComplete", ".expect_tx"} & set(ins.modifiers):
            # ptxas names no feature here ("Feature '(null)' requires ..."): we name it
            self.error(f"Feature 'mbarrier{ins.modifiers[0]} with a count' requires .target sm_90 "
                       "or higher", ins)
        if ins.opcode == "mma" and mma_narrow.involved(ins.modifiers):
            self.check_narrow_mma(ins)
        if ins.opcode == "mma" and ".m8n8k4" in ins.modifiers:
            floats = [m for m in ins.modifiers if m in (".f16", ".f32")]
            if len(floats) == 4 and floats[0] == ".f16" and floats[3] == ".f32":
                self.error(".dtype must be '.f32' when .ctype is '.f32' for 'mma' instruction with shape "
                           "'.m8n8k4'", ins)
        pair = ins.modifiers[-2:]
        if ins.opcode == "cvt" and 80 <= self.target_sm < 90 and tuple(pair) == (".f32", ".bf16") \
                and ".ftz" in ins.modifiers:
            self.error("Feature 'cvt with .f32.bf16.ftz' requires .target sm_90 or higher", ins)
        if ins.opcode == "cvt" and self.target_sm < 80 and pair[:1] == (".bf16",) and len(pair) == 2 \
                and pair[1] in set(isa.TYPE_BITS) - {".f32", ".bf16", ".bf16x2", ".u8", ".s8", ".b8"}:
            self.error(f"Feature 'cvt.bf16{pair[1]}' requires .target sm_80 or higher", ins)
        if ins.opcode == "cvt" and pair == (".f32", ".bf16") and ".ftz" in ins.modifiers \
                and self.version < (7, 8):
            self.error("Feature 'cvt with .f32.bf16.ftz' requires PTX ISA .version 7.8 or later", ins)
        if ins.opcode == "cvt" and self.target_sm < 90 and ".bf16" in pair and len(pair) == 2 \
                and (set(pair) - {".bf16"}) <= set(isa.TYPE_BITS) - {".f32", ".bf16x2", ".u8", ".s8", ".b8"}:
            # bf16 from or to anything but f32 (integers, f16, f64, bf16 itself) is sm_90 PTX
            # (below sm_80 '.bf16' itself is refused first)
            self.error(f"Feature 'cvt with {pair[0]}{pair[1]}' requires .target sm_90 or higher", ins)
        if ins.opcode == "cvt" and ".bf16" in pair and len(pair) == 2 \
                and set(pair) <= set(isa.TYPE_BITS) - {".bf16x2", ".f16x2", ".u8", ".s8", ".b8"}:
            # ptxas 13.5.37: f32 from bf16 is PTX 7.1, the others but bf16 from f32 7.8
            need = (7, 1) if tuple(pair) == (".f32", ".bf16") else \
                None if tuple(pair) == (".bf16", ".f32") else (7, 8)
            if need and self.version < need and self.target_sm >= 80:
                self.error(f"Feature 'cvt with {pair[0]}{pair[1]}' requires PTX ISA .version "
                           f"{need[0]}.{need[1]} or later", ins)
        if ins.opcode == "cvt" and self.target_sm < 90 and tuple(pair) == (".tf32", ".f32"):
            rounding = next((m for m in ins.modifiers if m in (".rn", ".rz")), None)
            if rounding:         # sm_8x has .rna only (F2FP.TF32 is sm_90's)
                self.error(f"Feature 'cvt with .tf32.f32{rounding}' requires .target sm_90 or higher", ins)
        if ins.opcode == "cvt" and self.target_sm < 100 and tuple(pair) == (".tf32", ".f32") \
                and ".satfinite" in ins.modifiers:
            rounding = next((m for m in ins.modifiers if m in (".rn", ".rz")), None)
            if rounding:         # (F2FP.SATFINITE.TF32 is sm_100's; branch cvt31)
                self.error(f"Modifier '.satfinite' on 'cvt.tf32.f32{rounding}' requires .target "
                           "sm_100 or higher", ins)

    def check_st_bulk(self, ins: ast.Instruction, scope: _Scope) -> None:
        """ptxas's rules for `st.bulk [a], size, initval`: shared::cta (or generic)
        addresses, a size in whole 8-byte words, an initial value of immediate zero. A size
        register is a 64-bit or 32-bit integer (.b32/.u32 from PTX 9.0; ptxas takes .s32 at
        any version)."""
        spaces = [m for m in ins.modifiers if m in _STATE_SPACE_MODIFIERS]
        if spaces and spaces != [".shared::cta"]:
            self.error("State space incorrect for instruction 'st.bulk'"
                       + (", expected '.shared::cta'" if spaces[0].startswith(".shared") else ""), ins)
            return
        if len(ins.operands) != 3:
            return
        if self.st_bulk_size_register_problem(ins, scope):
            return
        size, init = (_constant_value(op) for op in ins.operands[1:])
        if size is not None and size % 8:
            self.error(f"Argument 1 of instruction 'st.bulk': unexpected value '{size}', expected "
                       "to be multiple of 8", ins)
        elif init is None:
            self.error("Arguments mismatch for instruction 'st.bulk'", ins)
        elif init != 0:
            self.error(f"Argument 2 of instruction 'st.bulk': unexpected value '{init}', expected "
                       "to be zero", ins)

    def check_setmaxnreg(self, ins: ast.Instruction) -> None:
        """ptxas's rules for `setmaxnreg.{inc,dec}.sync.aligned.u32 n`: `.aligned` written,
        `n` an immediate multiple of 8 in [24, 256] (both problems reported)."""
        name = "setmaxnreg" + next((m for m in ins.modifiers if m in (".inc", ".dec")), "")
        if ".aligned" not in ins.modifiers:
            self.error(f".aligned modifier required for instruction '{name}'", ins)
            return
        count = _constant_value(ins.operands[0]) if len(ins.operands) == 1 else None
        if count is None:
            self.error(f"Arguments mismatch for instruction '{name}'", ins)
            return
        if count % 8:
            self.error(f"Argument 1 of instruction '{name}': unexpected value '{count}', expected "
                       "to be multiple of 8", ins)
        if not 24 <= count <= 256:
            self.error(f"Argument 1 of instruction '{name}': value '{count}' out of range, "
                       "expected to be in range [24..256]", ins)

    def st_bulk_size_register_problem(self, ins: ast.Instruction, scope: _Scope) -> bool:
        """Report a size register of a type st.bulk does not take; True if reported."""
        size = ins.operands[1]
        sym = self.lookup(size, scope) if isinstance(size, ast.Name) else None
        if sym is None or sym.kind != "reg" or sym.vector:
            return False
        bits = isa.TYPE_BITS.get(sym.type, 0)
        if bits == 32 and sym.type in (".b32", ".u32"):
            if self.version < (9, 0):
                self.error("Feature 'st.bulk with 32-bit size argument' requires PTX ISA "
                           ".version 9.0 or later", ins)
                return True
            return False
        if (bits == 64 and sym.type != ".f64") or sym.type == ".s32":
            return False
        self.error("Arguments mismatch for instruction 'st.bulk'", ins)
        return True

    def _feature_problems(self, ins: ast.Instruction) -> list[str]:
        """The messages check_features reports for this spelling (a function of the spelling
        and the module's .version/.target, so check_features caches it)."""
        problems = []
        op = ins.opcode
        if async_store.is_st_async(op, ins.modifiers):
            return []           # all of st.async's messages come from async_store, in order
        if op == "mma" and mma_narrow.involved(ins.modifiers):
            return []       # check_opcode_features (the operand count matters)
        if op == "mma" and (".e4m3" in ins.modifiers or ".e5m2" in ins.modifiers):
            return self._fp8_mma_problems(ins)
        # the longest dotted prefix that names a feature (`cp.async.bulk` over `cp.async`),
        # then single modifiers anywhere (`ld` ... `.v8`)
        prefix = None
        name = op
        for m in (None,) + ins.modifiers:
            name = name if m is None else name + m
            if name in isa.FEATURES:
                prefix = name
        keys = ([prefix] if prefix else []) + [op + m for m in ins.modifiers[1:]
                                               if op + m != prefix
                                               and not (prefix and prefix.endswith(m))]
        first_type = next((m for m in ins.modifiers if m in isa.TYPE_MODIFIERS), None)
        for ops, types, needs, feat in isa.TYPE_FEATURES:
            if op in ops and first_type in types and (needs is None or needs in ins.modifiers) \
                    and self.version < feat.min_version:
                problems.append(f"Feature '{feat.name}' requires PTX ISA .version "
                                f"{feat.min_version[0]}.{feat.min_version[1]} or later")
        if op == "ldu" and (".v8" in ins.modifiers or _is_256_bit_access("ld", ins.modifiers)
                            or _vector_bits(ins.modifiers) > 128):
            if ".v8" in ins.modifiers:
                problems.append("Illegal vector size: 8")
            if _is_256_bit_access("ld", ins.modifiers) or _vector_bits(ins.modifiers) > 128:
                problems.append("Vector type too large, exceeds 128 bit limit")
        if op in ("ld", "st") and _vector_bits(ins.modifiers) > 256:
            problems.append("Vector type too large, exceeds 128 bit limit")
        wide256 = _is_256_bit_access(op, ins.modifiers)
        if op in ("ld", "st") and _vector_bits(ins.modifiers) > 256:
            keys = [k for k in keys if k != op + ".v8"]
        if wide256 and op + ".v8" not in keys:
            keys.append(op + ".v8")     # `.v4` of 64-bit elements is the same feature
        bulk = bulk_copy_checks.in_family(op, ins.modifiers)
        if bulk:        # (their own order: the target first, then the version)
            problems += bulk_copy_checks.feature_problems(ins.modifiers, self.version, self.target_sm)
            keys = []
        for key in keys:
            feat = isa.FEATURES.get(key)
            if feat is None:
                continue
            if key in ("ld.v8", "st.v8") and isa.TYPE_BITS.get(ins.modifiers[-1], 32) < 32:
                continue        # eight 8/16-bit elements are 128 bits: any target
            if feat.min_version and self.version < feat.min_version:
                problems.append(f"Feature '{feat.name}' requires PTX ISA .version "
                                f"{feat.min_version[0]}.{feat.min_version[1]} or later")
            if feat.min_sm and self.target_sm < feat.min_sm:
                problems.append(f"Feature '{feat.name}' requires .target sm_{feat.min_sm} or "
                                "higher")
        if op == "lop3" and {".and", ".or", ".xor"} & set(ins.modifiers) and self.version < (8, 2):
            problems.append("Feature 'lop3.<BoolOp>' requires PTX ISA .version 8.2 or later")
        if op == "ld" and ".L2::256B" in ins.modifiers:
            # (beyond 'cache prefetching': ptxas 13.5.37, reject28)
            if self.target_sm < 80:
                problems.append("Modifier '.L2::256B' requires .target sm_80 or higher")
            if self.version < (7, 4):
                problems.append("Feature '256B cache prefetching' requires PTX ISA .version 7.4 or later")
        if wide256 and not {".global", ".generic"} >= (set(ins.modifiers) & _STATE_SPACE_MODIFIERS):
            problems.append("global state space expected for feature '256 bit wide load/store'")
        if self.version < (7, 8) and any(m.endswith("::cta") for m in ins.modifiers) and not bulk:
            problems.append("Feature '::cta' requires PTX ISA .version 7.8 or later")
        if op in ("ld", "st") and ".mmio" in ins.modifiers and self.version < (8, 2):
            problems.append("Feature '.mmio' requires PTX ISA .version 8.2 or later")
        if op in ("ld", "st") and self.version < (7, 4):
            problems += [f"Modifier '.{m.split('::')[1]}' on '{op}' requires PTX ISA .version 7.4 "
                         "or later" for m in ins.modifiers if m.startswith(".L1::")]
        if op in ("atom", "red") and ".noftz" in ins.modifiers and ins.modifiers[-1:] == (".f32",) \
                and self.version < (9, 4):
            problems.append(f"Feature '{op} with .noftz and .f32' requires PTX ISA .version 9.4 or later")
        if op in ("ld", "st") and ".volatile" in ins.modifiers and ".local" in ins.modifiers \
                and self.version < (9, 1):
            problems.append("Feature 'ld/st with .local.volatile' requires PTX ISA .version 9.1 "
                            "or later")
        if any(m.endswith("::cluster") for m in ins.modifiers) and op != "mbarrier" and not bulk:
            # (ptxas 13.5.37: the version, then the target)
            if self.version < (7, 8):
                problems.append("Feature '::cluster' requires PTX ISA .version 7.8 or later")
            if self.target_sm < 90:
                problems.append("Feature '::cluster' requires .target sm_90 or higher")
        if op == "red" and ins.modifiers[:1] == (".async",) and async_store.MECHANISM in ins.modifiers:
            if self.target_sm < 90:
                problems.append(f"Feature '{async_store.MECHANISM}' requires .target sm_90 or higher")
            if self.version < (8, 0):
                problems.append(f"Feature '{async_store.MECHANISM}' requires PTX ISA .version 8.0 or later")
        if ".cluster" in ins.modifiers and op in _SCOPED_MEMORY_OPCODES:
            # (the target, then the version)
            if self.target_sm < 90:
                problems.append("Feature '.cluster scope' requires .target sm_90 or higher")
            if self.version < (7, 8):
                problems.append("Feature '.cluster scope' requires PTX ISA .version 7.8 or later")
        if self.version < (8, 3):
            for m in ins.modifiers:
                if m in (".param::func", ".param::entry"):
                    problems.append(f"Feature '::{m.split('::')[1]}' requires PTX ISA .version 8.3 or later")
        if op == "wgmma" and ".sp" in ins.modifiers:
            kind = sparse_wgmma_types(ins.modifiers)
            need = (8, 4) if kind == "mixed integer types" else (8, 2)
            if self.version < need:
                problems.append(f"Feature 'Sparse WGMMA with {kind}' requires PTX ISA .version "
                                f"{need[0]}.{need[1]} or later")
        if op == "mbarrier" and self.version < (8, 0):
            for m in ins.modifiers:
                if m in (".release", ".acquire", ".relaxed"):
                    problems.append(f"Modifier '{m}' on 'mbarrier{ins.modifiers[0]}' requires PTX ISA "
                                    ".version 8.0 or later")
        if op == "cp" and ins.modifiers[:2] == (".async", ".bulk") and ".multicast::cluster" in ins.modifiers:
            spaces = [m for m in ins.modifiers if m in (".shared::cta", ".shared::cluster", ".global")]
            if spaces[:1] == [".shared::cta"]:     # (ptxas 13.5.37: a multicast lands in shared::cluster)
                name = "cp.async.bulk.tensor" if ".tensor" in ins.modifiers else "cp.async.bulk"
                problems.append(f"Illegal modifier '.multicast::cluster' for instruction '{name}' with "
                                f"'{''.join(spaces[:2])}'")
        if op == "cp" and ".tensor" in ins.modifiers:
            from ptx2sass.frontend import tensor_copy_checks
            problems += tensor_copy_checks.target_problems(ins.modifiers, self.target_name, self.target_sm)
        if op in ("cp", "multimem") and ".cp_mask" in ins.modifiers and self.target_sm < 100:
            problems.append("Feature '.cp_mask' requires .target sm_100 or higher")
        if op == "tcgen05" and not tcgen05.supported(ins, self.target_name, self.target_sm):
            return [p for p in problems if "requires .target" not in p] + \
                tcgen05.target_problems(ins, self.target_name, self.version)
        if op == "tcgen05":
            problems += tcgen05.kind_target_problems(ins, self.target_name, self.version)
        if (op in isa.ARCH_SPECIFIC_OPCODES or op == "tensormap" and ins.modifiers[:1] == (".replace",)) \
                and self.target_name[-1:] not in ("a", "f"):
            variant = _variant(op, ins.modifiers)
            problems.append(f"Instruction '{variant}' not supported on .target "
                            f"'{self.target_name}'")
        if op == "clusterlaunchcontrol" and ".multicast::cluster::all" in ins.modifiers \
                and self.target_sm >= 100 and self.target_name[-1:] not in ("a", "f"):
            # try_cancel's multicast form is arch-specific (ptxas 13.5: sm_100a/f, sm_120a)
            problems.append(f"Feature '.multicast::cluster::all' not supported on .target "
                            f"'{self.target_name}'")
        if op == "wgmma" and self.target_sm != 90:
            # the warpgroup MMA is sm_90a's alone: sm_100[a] and later refuse it twice
            variant = _variant(op, ins.modifiers)
            if self.target_name[-1:] in ("a", "f"):
                problems.append(f"Instruction '{variant}' not supported on .target '{self.target_name}'")
            problems.append(f"Instruction '{variant}' cannot be compiled for architecture "
                            f"'{isa.real_target(self.target_name)}'")
        for form, targets in isa.TARGET_LIMITED_FORMS.items():
            name, _, kind = form.partition(".")
            if op == name and "." + kind in ins.modifiers and \
                    isa.real_target(self.target_name) not in targets:
                problems.append(f"Instruction '{form}' not supported on .target '{self.target_name}'")
        fp8 = {".e4m3x2", ".e5m2x2"}
        if op == "cvt" and fp8 & set(ins.modifiers[-2:]) and self.target_sm < 90:
            # fp8 pairs: sm_90 PTX, and sm_89 from PTX 8.1 (ptxas's two messages)
            name = "cvt" + "".join(ins.modifiers[-2:])
            if self.target_sm < 89:
                problems.append(f"Feature '{name}' requires .target "
                                f"sm_{89 if self.version >= (8, 1) else 90} or higher")
            elif self.version < (8, 1):
                problems.append(f"Feature '{name}' requires .target sm_90 or higher")
                problems.append(f"Feature '{name} on sm_89' requires PTX ISA .version 8.1 or later")
        if op == "cvt" and len(ins.modifiers) >= 2:
            problems += cvt_packed.target_problems(*ins.modifiers[-2:], ins.modifiers, self.version,
                                                   self.target_name, self.target_sm)
        if op == "cvt" and ".satfinite" in ins.modifiers and list(ins.modifiers[-1:]) == [".f32"]:
            dst = ins.modifiers[-2] if len(ins.modifiers) > 1 else ""
            rounding = next((m for m in ins.modifiers if m in (".rna", ".rn", ".rz")), "")
            # tf32's .rn/.rz forms (sm_90) are newer than its .rna; ptxas names the rounding
            needed = {".f16": (8, 1), ".bf16": (8, 1), ".f16x2": (8, 1), ".bf16x2": (8, 1),
                      ".tf32": (8, 1) if rounding == ".rna" else (8, 6)}.get(dst)
            if needed and self.version < needed:
                name = f"cvt{dst}.f32" + (rounding if dst == ".tf32" else "")
                problems.append(f"Modifier '.satfinite' on '{name}' requires PTX ISA "
                                f".version {needed[0]}.{needed[1]} or later")

        if op == "set" and self.version < (6, 5) and ins.modifiers[-1:] in ((".f16",), (".f16x2",)) \
                and ins.modifiers[-2:-1] not in ((".f16",), (".f16x2",)):
            problems.append("Feature 'half precision floating point set instruction with integer "
                            "result' requires PTX ISA .version 6.5 or later")
        if op in ("min", "max"):
            problems += _minmax_modifier_problems(op, ins.modifiers, self.version, self.target_sm)
        if op == "fma" and ".oob" in ins.modifiers:
            # sm_90 and PTX 8.1, before sm_80's `.relu` (ptxas 13.5.37's order)
            if self.target_sm < 90:
                problems.append("Modifier '.oob' requires .target sm_90 or higher")
            if self.version < (8, 1):
                problems.append("Feature '.oob' requires PTX ISA .version 8.1 or later")
        problems += [p for p in sm80_features.problems(op, ins.modifiers, self.target_sm)
                     if p not in problems]
        if self.target_sm < 80 and op in ("abs", "fma", "max", "min", "neg"):
            # ptxas 13.5.37 names the bf16 type twice here, after `.abs`/`.oob` (reject28)
            bf16 = [p for p in problems if p.startswith(("Feature '.bf16'", "Feature '.bf16x2'"))]
            if bf16:
                rest = [p for p in problems if p not in bf16]
                at = next((i for i, p in enumerate(rest) if "'.abs'" not in p and "'.oob'" not in p),
                          len(rest))
                problems = rest[:at] + [bf16[0], bf16[0]] + rest[at:]
        if self.target_sm < 80 and op not in _BF16_RULED:
            # below sm_80 ptxas names the bf16 type itself first (13.5.37: `set.bf16`,
            # `add.bf16`, `red.add.bf16`, `ld.bf16`; sm80_features has the other opcodes')
            problems = [f"Feature '{m}' requires .target sm_80 or higher" for m in ins.modifiers
                        if m in (".bf16", ".bf16x2")][:1] + problems
        if op == "ld" and any(m in (".L2::64B", ".L2::128B", ".L2::256B") for m in ins.modifiers) \
                and any(m in _STATE_SPACE_MODIFIERS and m != ".global" for m in ins.modifiers):
            problems.append("State space incorrect for feature 'cache prefetching'")
        if ".L2::cache_hint" in ins.modifiers and op in _CACHE_POLICY_OPCODES \
                and self.version < (7, 4):
            problems.append("Modifier '.L2::cache_hint' requires PTX ISA .version 7.4 or later")
        if op == "createpolicy":
            problems += createpolicy_problems(ins.modifiers, self.version, self.target_sm)
        problems += self._atomic_version_problems(ins)
        problems += self._vector_atomic_problems(ins)
        if op == "set":     # (ptxas 13.5.37 names set.bf16's feature once: reject28)
            problems = list(dict.fromkeys(problems))
        return problems

    # (operation, type) of atom/red -> the PTX ISA version ptxas 13.5.37 names for it (probed
    # version by version on branch reject28, each in the generic, .global and .shared spaces)
    _ATOMIC_VERSIONS = {
        **{(op, t): (3, 1) for op in (".min", ".max") for t in (".s64", ".u64")},
        **{(op, ".b64"): (3, 1) for op in (".and", ".or", ".xor")},
        (".add", ".f64"): (5, 0), (".add", ".f16x2"): (6, 2), (".add", ".f16"): (6, 3),
        (".add", ".bf16"): (7, 8), (".add", ".bf16x2"): (7, 8), (".cas", ".b16"): (6, 3),
        (".cas", ".b128"): (8, 3), (".exch", ".b128"): (8, 3),
    }

    def _atomic_version_problems(self, ins: ast.Instruction) -> list[str]:
        """atom/red forms newer than PTX 2.0: "Instruction 'atom.add.f16.shared' requires PTX
        ISA .version 6.3 or later" ('... with generic state space' without a space)."""
        if ins.opcode not in ("atom", "red"):
            return []
        mods = ins.modifiers
        op = next((m for m in mods if m in _ATOMIC_OPERATIONS), None)
        ty = next((m for m in mods if m in isa.TYPE_MODIFIERS), None)
        need = self._ATOMIC_VERSIONS.get((op, ty))
        out = []
        space = next((m for m in mods if m in _STATE_SPACE_MODIFIERS), None)
        name = f"{ins.opcode}{op}{ty}" + (space or " with generic state space")
        if ty == ".b128" and op in (".cas", ".exch") and self.target_sm < 90:
            out.append(f"Instruction '{name}' requires .target sm_90 or higher")
        if need is not None and self.version < need:
            out.append(f"Instruction '{name}' requires PTX ISA .version {need[0]}.{need[1]} or later")
        if ty == ".b128" and ".sys" in mods and self.version < (8, 4):
            out.append("Feature '.b128 with .sys' requires PTX ISA .version 8.4 or later")
        return out

    def _vector_atomic_problems(self, ins: ast.Instruction) -> list[str]:
        """atom/red of f16/bf16(x2) and vector ones (PTX ISA: bf16 and half min/max sm_90;
        min/max of halves only in a vector; `.v2/.v4/.v8` PTX 8.1, sm_90, global or generic
        addresses, 16-bit elements up to .v8, f32/f16x2/bf16x2 .v2/.v4), in ptxas 13.5's
        words and order."""
        mods = ins.modifiers
        vec = next((m for m in mods if m in (".v2", ".v4", ".v8")), None)
        ty = next((m for m in mods if m in (".f32", ".f16", ".bf16", ".f16x2", ".bf16x2")), None)
        op = next((m for m in mods if m in (".add", ".min", ".max")), None)
        if ins.opcode not in ("atom", "red") or ty is None:
            return []
        problems = []
        if ty != ".f32" and ".noftz" not in mods and ".cas" not in mods \
                and set(mods) & _ATOMIC_OPERATIONS:
            problems.append(f"'.noftz' modifier required for instruction '{ins.opcode}' with type '{ty}'")
        if op is None:
            return problems
        if ty != ".f32":
            space = next((m for m in mods if m in _STATE_SPACE_MODIFIERS), None)
            instr = f"{ins.opcode}{op}{ty}" + (space or " with generic state space")
            if self.target_sm < 90 and (ty.startswith(".bf16") or op != ".add"):
                problems.append(f"Instruction '{instr}' requires .target sm_90 or higher")
            if op != ".add" and vec is None:
                problems.append(f"Vector modifier required for instruction '{instr}'")
        if vec is None:
            return problems
        name = f"{ins.opcode} instruction with vector types"
        if self.target_sm < 90:
            problems.append(f"Feature '{name}' requires .target sm_90 or higher")
        if self.version < (8, 1):
            problems.append(f"Feature '{name}' requires PTX ISA .version 8.1 or later")
        if set(mods) & _STATE_SPACE_MODIFIERS - {".global"}:
            problems.append(f"State space incorrect for feature '{name}'")
        if vec == ".v8" and isa.TYPE_BITS.get(ty, 32) == 32:
            problems.append(f"Only .v2 or .v4 vector modifier supported with type {ty} on {op} "
                            f"operation for {name}")
            problems.append("Vector type too large, exceeds 128 bit limit")
        return problems

    def check_narrow_mma(self, ins: ast.Instruction) -> None:
        """kind::f8f6f4 fp6/fp4 and block-scaled `mma` (frontend/mma_narrow.py): the spelling's
        lines, then the selector pairs' values."""
        sizes = [len(op.elements) if type(op) is ast.VectorOperand else 1 for op in ins.operands]
        # the sparse kinds: metadata and sparsity selector after C, the scale operands two later
        sparse = any(m.startswith(".sp") for m in ins.modifiers)
        skip = 2 if sparse else 0
        sparsity = _constant_value(ins.operands[5]) if sparse and len(ins.operands) > 5 else None
        problems = mma_narrow.problems(ins.modifiers, len(ins.operands), self.version,
                                       self.target_name, lambda: self._fp8_mma_problems(ins), sizes)
        if len(ins.operands) == 8 + skip and mma_narrow.selectors_checked(ins.modifiers, problems):
            pairs = []
            for operand in (ins.operands[5 + skip], ins.operands[7 + skip]):
                elements = list(operand.elements) if type(operand) is ast.VectorOperand else []
                values = [_constant_value(e) for e in elements]
                pairs.append(values if len(values) == 2 else [None, None])
            # scale data in registers, selectors as two immediates each (ptxas: a register
            # selector or an immediate scale is an "Arguments mismatch")
            shaped = all(type(ins.operands[i + skip]) is ast.Name for i in (4, 6)) \
                and all(None not in pair for pair in pairs)
            if not shaped:
                problems = problems + ["Arguments mismatch for instruction 'mma'"]
            else:
                name = "Sparse mma" if sparse and any(m in mma_narrow.BLOCK_KINDS for m in ins.modifiers) \
                    else "mma"
                problems = problems + mma_narrow.selector_problems(ins.modifiers, pairs, 5 + skip, name)
        if sparse and mma_narrow.sync_target(self.target_name):
            problems = problems + mma_narrow.sparse_tail(ins.modifiers, sparsity, problems)
        for message in problems:
            self.error(message, ins)

    def _fp8_mma_problems(self, ins: ast.Instruction) -> list[str]:
        """fp8 `mma` (sm_89, PTX 8.4; its m16n8k16 shape and f16 accumulators PTX 8.7), in
        ptxas's order; the generic shape features (`.m16n8k32` of 7.0/sm_80) are not
        reported for it, as ptxas does not."""
        name = "mma with FP8 floating point type"
        problems = []
        if self.version < (8, 4):
            problems.append(f"Feature '{name}' requires PTX ISA .version 8.4 or later")
        if self.target_sm < 89:
            problems.append(f"Feature '{name}' requires .target sm_89 or higher")
        if self.version < (8, 7):
            if ".m16n8k16" in ins.modifiers:
                problems.append(f"Feature '{name} and .m16n8k16 shape' requires PTX ISA "
                                ".version 8.7 or later")
            if ".f16" in ins.modifiers:
                problems.append(f"Feature '{name} and FP16 accumulation' requires PTX ISA "
                                ".version 8.7 or later")
        return problems

    # ------------------------------------------------------------------ operands

    def check_operands(self, ins, form, types, scope, name):
        ops = ins.operands
        if len(ops) < form.optional_from or len(ops) > len(form.operands):
            self.mismatch(name, ins)
            for operand in ops:
                self.resolve_names(operand, scope, self.labels)
            return
        if ins.opcode in ("set", "setp") and len(ops) >= 3:
            # the predicate operand goes with the boolean operation (.and/.or/.xor): one without
            # the other is refused, in ptxas 13.5.37's words
            combines = any(m in (".and", ".or", ".xor") for m in ins.modifiers)
            if combines != (len(ops) == len(form.operands)):
                last = ops[-1] if not combines else None
                sym = self.lookup(last, scope) if type(last) is ast.Name else None
                if combines or (type(last) is ast.Name and (sym is None or sym.type != ".pred")):
                    # an extra operand that is no predicate does not fit at all
                    self.mismatch(name, ins)
                else:
                    if _integer_comparison_mismatch(ins.modifiers):     # (first: reject28)
                        self.error(_COMPARISON_MISMATCH, ins)
                    self.error(f"Boolean operation is required for instruction '{name}'", ins)
                for operand in ops:
                    self.resolve_names(operand, scope, self.labels)
                return
        choices, relaxed, spaces, memory_operands, vector = _operand_shape(
            ins.opcode, ins.modifiers, form.operands)
        for choice in choices:
            if choice[0] < len(ops):
                value = _constant_value(ops[choice[0]])
                if value is not None and value not in choice[1]:
                    allowed = " or ".join(str(v) for v in choice[1])
                    self.error(f"Argument {choice[0]} of instruction '{name}': unexpected value "
                               f"'{value}', expected to be {allowed}", ins)
                    return
        ok = True
        seen_memory = 0
        codes = list(form.operands)
        if ins.opcode == "cp" and ".L2::cache_hint" in ins.modifiers and len(ops) < len(codes):
            # cp.async's cache policy is the last operand whether or not a source size is given
            codes = codes[:len(ops) - 1] + codes[-1:]
        for index, (code, operand) in enumerate(zip(codes, ops)):
            space = spaces[0] if spaces else None
            if code == "m":
                if len(spaces) == memory_operands > 1:
                    space = spaces[seen_memory]
                seen_memory += 1
            if not self.check_operand(ins, index, code, operand, types, scope, relaxed, space,
                                      vector):
                ok = False
        if not ok:
            self.mismatch(name, ins)


    def reported(self, problems: list[str], ins, scope) -> bool:
        """Report `problems` of `ins` in ptxas's words; where there are any, the instruction's
        names are still resolved (ptxas reports unknown ones too) and its other checks skipped."""
        for problem in problems:
            self.error(problem, ins)
        if problems:
            for operand in ins.operands:
                self.resolve_names(operand, scope, self.labels)
        return bool(problems)
    def mismatch(self, name, ins):
        self.error(f"Arguments mismatch for instruction '{name}'", ins)

    def check_operand(self, ins, index, code, operand, types, scope, relaxed, space, vector):
        """True when the operand fits; specific errors are reported here, the generic
        'Arguments mismatch' by the caller."""
        if code == "*":
            self.resolve_names(operand, scope, self.labels)
            return True
        if code == "l":
            return self.check_label(ins, index, operand, scope)
        if code == "m":
            return self.check_address(ins, operand, scope, space)
        if code in ("V2", "W2"):   # ldmatrix/stmatrix: .x1/.x2/.x4 registers of .b32
            count = next((int(m[2:]) for m in ins.modifiers if m in (".x1", ".x2", ".x4")), 1)
            if type(operand) is not ast.VectorOperand:
                self.error(f"Vector of size {count} is expected for argument {index} of "
                           f"instruction '{ins.opcode}'", ins)
                self.resolve_names(operand, scope, self.labels)
                return True
            if len(operand.elements) != count:
                self.error(f"Argument vector size mismatch for instruction '{ins.opcode}'", ins)
                return True
            good = True
            for element in operand.elements:
                if type(element) is ast.Name and element.name == "_":
                    continue      # (a source's: `sink_vectors`)
                if not self.check_value(ins, index, "d" if code == "V2" else "a", element,
                                        ".b32", scope, relaxed):
                    good = False
            return good
        if code in ("V", "W"):
            if vector is None and type(operand) is ast.VectorOperand:
                if len(operand.elements) != 1:
                    self.error(f"Argument vector size mismatch for instruction "
                               f"'{ins.opcode}'", ins)
                    return True
                operand = operand.elements[0]   # `{ %r2 }`: Triton's one-element braces
            if vector is None:
                return self.check_value(ins, index, "d" if code == "V" else "a", operand,
                                        types[0], scope, relaxed)
            if type(operand) is ast.Name:
                if operand.name == "_" and code == "V" and index == 0:
                    return True     # a whole sink result: check_result_discard's verdict
                sym = self.lookup(operand, scope)
                if sym is None:
                    self.unknown(operand)
                    return False
                if sym.kind == "reg" and sym.vector == vector:
                    return type_compatible(types[0], sym.type, relaxed)
            if type(operand) is not ast.VectorOperand:
                if code == "V":
                    self.error("Result vector expected", ins)
                self.error(f"Argument vector size mismatch for instruction '{ins.opcode}'", ins)
                self.resolve_names(operand, scope, self.labels)
                return True
            count = len(operand.elements)
            if count not in (1, 2, 4, 8):
                self.error(f"Illegal vector size: {count}", ins)
            if count != int(vector[2:]):
                self.error(f"Argument vector size mismatch for instruction '{ins.opcode}'", ins)
            good = True
            for element in operand.elements:
                if type(element) is ast.Name and element.name == "_":
                    continue
                if not self.check_value(ins, index, "d" if code == "V" else "a", element,
                                        types[0], scope, relaxed):
                    good = False
            return good
        if code == "p":
            if type(operand) is ast.PairOperand and ins.opcode == "setp" \
                    and types[:1] in ((".f16",), (".bf16",)):
                self.error("Predicate output not allowed for instruction 'setp'", ins)
                return True
            if type(operand) is ast.PairOperand:
                return self.is_pred(operand.first, scope) & self.is_pred(operand.second, scope)
            if type(operand) is ast.Name and operand.name == "_":
                return True
            if type(operand) is not ast.Name:
                self.error(f"Result register required for instruction '{ins.opcode}'", ins)
                return True
            return self.is_pred(operand, scope)
        if code == "q":
            if type(operand) is ast.Unary and operand.op == "!":
                operand = operand.operand
            if type(operand) is ast.IntLit:
                return True
            if type(operand) is not ast.Name:
                self.resolve_names(operand, scope, self.labels)
                return False
            return self.is_pred(operand, scope)
        if code == "dp":
            if type(operand) is ast.PairOperand:
                return (self.check_value(ins, index, "d", operand.first, types[0], scope,
                                         relaxed)
                        & self.is_pred(operand.second, scope))
            code = "d"
        role = "d" if code[0] == "d" else "a"
        return self.check_value(ins, index, role, operand, operand_type(code, types), scope, relaxed)

    def check_value(self, ins, index, role, operand, want, scope, relaxed) -> bool:
        while type(operand) is ast.ParenList and len(operand.elements) == 1:
            operand = operand.elements[0]   # `(x)` outside a call is grouping
        t = type(operand)
        if t is ast.VectorOperand:
            if ins.opcode == "mov":
                return self.check_packing(ins, role, operand, want, scope)
            self.error(f"Vector operand is not allowed for instruction '{ins.opcode}'", ins)
            return True
        if role == "d":
            if t is not ast.Name:
                if t is ast.VectorOperand:
                    return False
                self.error(f"Result register required for instruction '{ins.opcode}'", ins)
                self.resolve_names(operand, scope, self.labels)
                return True
            if operand.name == "_":
                return True
        if t is ast.Name:
            if operand.name == "WARP_SZ" and scope.lookup("WARP_SZ") is None:
                return isa.type_class(want) in "bus"
            sym = self.lookup(operand, scope)
            if sym is None:
                if operand.name in self.labels:
                    return False
                if isa.SPECIAL_REGISTERS.get(operand.name, "").startswith(".v4"):
                    self.error(f"Argument vector size mismatch for instruction '{ins.opcode}'",
                               ins)
                    return True
                self.unknown(operand)
                return False
            if operand.component is not None and sym.vector is None and \
                    not (sym.kind == "sreg" and operand.name in _VECTOR_SREGS):
                self.error(f"Unknown field '{operand.component}'", ins)
                return True
            if sym.kind == "reg" and sym.vector is not None and operand.component is None \
                    and ins.opcode != "mov":
                self.error(f"Argument vector size mismatch for instruction '{ins.opcode}'", ins)
                return True
            if sym.kind == "reg":
                reg_type = sym.type
                if sym.vector is not None and operand.component is None:
                    # a whole vector register moved as one bit pattern (mov.b64 d, v2u32)
                    if isa.type_class(want) == "b" and int(sym.vector[2:]) * \
                            isa.TYPE_BITS.get(reg_type, 0) == isa.TYPE_BITS.get(want):
                        return True
                    self.error(f"Argument vector size mismatch for instruction "
                               f"'{ins.opcode}'", ins)
                    return True
                return type_compatible(want, reg_type, relaxed)
            if sym.kind == "sreg":
                if sym.type == ".pred" or want == ".pred":      # %is_explicit_cluster
                    return sym.type == want
                if isa.type_class(want) not in "bus":
                    return False
                have, bits = isa.TYPE_BITS[sym.type], isa.TYPE_BITS.get(want, 32)
                return bits <= have and (have != 64 or bits == 64)
            # a variable or function name: its address
            if role == "d":
                return False
            if ins.opcode in _ADDRESS_OF_OPCODES:
                return isa.TYPE_BITS.get(want) in (32, 64) and isa.type_class(want) in "bus"
            self.error(f"Argument {index} of instruction '{ins.opcode}': must be register",
                       ins)
            return True
        if role == "d":
            return False
        value = _constant_value(operand)
        cls = isa.type_class(want)
        if value is not None:
            return cls in "busp" or want == ".pred"
        if t is ast.FloatLit:
            if want in (".f32", ".f64"):
                return True
            return operand.bits is not None and operand.width == isa.TYPE_BITS.get(want) \
                and cls == "b"
        if t is ast.Binary and operand.op in ("+", "-") and type(operand.left) is ast.Name \
                and _constant_value(operand.right) is not None:
            sym = self.lookup(operand.left, scope)
            if sym is not None and sym.kind == "reg":
                return type_compatible(want, sym.type, relaxed)
        if t is ast.Index:
            self.resolve_names(operand, scope, self.labels)
            return ins.opcode in _ADDRESS_OF_OPCODES
        if t is ast.Unary and operand.op == "!" and want == ".pred":
            return self.is_pred(operand.operand, scope)
        if t is ast.Binary or t is ast.Unary:
            # symbol+offset address arithmetic (mov/cvta only) or a bad expression
            self.resolve_names(operand, scope, self.labels)
            return ins.opcode in _ADDRESS_OF_OPCODES
        self.resolve_names(operand, scope, self.labels)
        return False

    def check_packing(self, ins, role, vector: ast.VectorOperand, want: str, scope) -> bool:
        """`mov.b64 {lo, hi}, d` / `mov.b32 r, {h0, h1}`: the pieces fill the type exactly; a
        sink only among the results."""
        total = 0
        immediates = 0
        sinks = 0
        for element in vector.elements:
            if _constant_value(element) is not None:
                immediates += 1
                continue
            if type(element) is not ast.Name:
                return False
            if element.name == "_":
                sinks += 1
                continue
            sym = self.lookup(element, scope)
            if sym is None:
                self.unknown(element)
                return False
            if sym.kind != "reg":
                return False
            total += isa.TYPE_BITS.get(sym.type, 0)
        if isa.type_class(want) != "b":
            return False
        # a sink is as wide as the registers beside it (32 bits beside immediates only)
        total += sinks * (total // max(len(vector.elements) - immediates - sinks, 1) or 32)
        bits = isa.TYPE_BITS.get(want, 0)
        fits = total == bits if not immediates else total < bits
        if fits and sinks and role == "a":
            self.error(SINK_SOURCE, ins)
        return fits

    def is_pred(self, name, scope) -> bool:
        if type(name) is not ast.Name:
            return False
        if name.name == "_":
            return True
        sym = self.lookup(name, scope)
        if sym is None:
            self.unknown(name)
            return False
        return sym.type == ".pred"

    def check_label(self, ins, index, operand, scope) -> bool:
        if type(operand) is ast.Name:
            if operand.name in self.labels:
                return True
            sym = self.lookup(operand, scope)
            if sym is None:
                self.unknown(operand)
                return True
        self.error(f"Label expected for argument {index} of instruction '{ins.opcode}'", ins)
        return True

    def check_address(self, ins, operand, scope, space) -> bool:
        if type(operand) is not ast.Address:
            self.resolve_names(operand, scope, self.labels)
            return False
        if any(type(e) is ast.FloatLit for e in _leaves(operand)):
            self.error("Integer constant expression expected", ins)
            return True
        base = operand.base
        if base is None:
            for element in operand.elements:
                self.resolve_names(element, scope, self.labels)
            return True
        sym = self.lookup(base, scope)
        if sym is None:
            self.unknown(base)
            return True
        if sym.kind == "var":
            want = _SPACE_ALIASES.get(space, space)
            have = _SPACE_ALIASES.get(sym.space, sym.space)
            if (want is None and have == ".param") or (want is not None and want != have):
                self.error("State space mismatch between instruction and address in "
                           f"instruction '{ins.opcode}'", ins)
            return True
        if sym.kind == "reg":
            if isa.type_class(sym.type) not in "bus":
                self.error(f"Illegal to use symbol '{base.name}' of type {sym.type} as address "
                           "operand. Use integer or bit only.", ins)
            return True
        return sym.kind != "label"

    # ------------------------------------------------------------------ names

    def lookup(self, name: ast.Name, scope: _Scope) -> Symbol | None:
        sym = scope.lookup(name.name)
        if sym is None and name.name.startswith("%"):
            sreg = isa.SPECIAL_REGISTERS.get(name.name)
            if sreg is not None:
                if sreg.startswith(".v4"):
                    if name.component not in (".x", ".y", ".z", ".w"):
                        return None
                    return Symbol("sreg", sreg[3:])
                return Symbol("sreg", sreg)
        return sym

    def resolve_names(self, node, scope: _Scope, labels):
        """Report every name in an operand tree that is neither declared nor a label."""
        t = type(node)
        if t is ast.Name:
            if node.name == "_" or node.name == "WARP_SZ":
                return
            if labels is not None and node.name in labels:
                return
            if self.lookup(node, scope) is None:
                self.unknown(node)
        elif t is ast.Binary:
            self.resolve_names(node.left, scope, labels)
            self.resolve_names(node.right, scope, labels)
        elif t is ast.Unary:
            self.resolve_names(node.operand, scope, labels)
        elif t is ast.PairOperand:
            self.resolve_names(node.first, scope, labels)
            self.resolve_names(node.second, scope, labels)
        elif t is ast.Address or t is ast.VectorOperand or t is ast.ParenList:
            for e in node.elements:
                self.resolve_names(e, scope, labels)
        elif t is ast.Index:
            self.resolve_names(node.base, scope, labels)
            self.resolve_names(node.index, scope, labels)
        elif t is ast.Call:
            for e in node.args:
                self.resolve_names(e, scope, labels)


_LIST_DIRECTIVES = frozenset((".maxntid", ".reqntid", ".reqnctapercluster"))
_VECTOR_SREGS = frozenset(n for n, t in isa.SPECIAL_REGISTERS.items() if t.startswith(".v4"))
_POSITIVE_DIRECTIVES = frozenset((".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm",
                                  ".maxnreg", ".reqnctapercluster", ".maxclusterrank"))


# integer compares a source type allows (PTX ISA, setp): bit types only test equality, signed
# types have no unsigned orderings; ptxas checks this after the operands
_UNSIGNED_ORDERINGS = frozenset((".lo", ".ls", ".hi", ".hs"))
_ORDERINGS = frozenset((".lt", ".le", ".gt", ".ge")) | _UNSIGNED_ORDERINGS


_COMPARISON_MISMATCH = "Mismatch between instruction type and comparison qualifier"


def _integer_comparison_mismatch(modifiers) -> bool:
    """`setp`/`set` whose comparison (the later of two: ptxas checks that one) its (last,
    source) integer type does not allow."""
    source = modifiers[-1] if modifiers else ""
    comparisons = [m for m in modifiers if m in _REPEAT_CLASSES[1][0]][-1:]
    if source in (".b16", ".b32", ".b64"):
        return any(m in _ORDERINGS for m in comparisons)
    if source in (".s16", ".s32", ".s64"):
        return any(m in _UNSIGNED_ORDERINGS for m in comparisons)
    return False


def _reported_at(fn: ast.Function, i: int) -> ast.Node:
    """Where ptxas reports a problem with directive i: on its own line, or, for a directive
    that takes a list (`.maxntid 1, 2, 3`), at the next token, which it had to read."""
    d = fn.directives[i]
    if d.name in _LIST_DIRECTIVES:
        return fn.directives[i + 1] if i + 1 < len(fn.directives) else fn.body
    return d


def _alignment(decl: ast.VariableDecl) -> int:
    if decl.align is not None:
        return decl.align
    bits = isa.TYPE_BITS.get(decl.type, 8) * (int(decl.vector[2:]) if decl.vector else 1)
    return max(1, bits // 8)


def _too_many_elements(init, dims: list) -> bool:
    """An initializer list longer than its array dimension (at any nesting level)."""
    if type(init) is not list:
        return False
    if dims and dims[0] is not None and len(init) > dims[0]:
        return True
    return any(_too_many_elements(x, dims[1:]) for x in init)


def _leaves(node):
    """Every name and literal in an operand tree."""
    t = type(node)
    if t is ast.Binary:
        yield from _leaves(node.left)
        yield from _leaves(node.right)
    elif t is ast.Unary:
        yield from _leaves(node.operand)
    elif t in (ast.Address, ast.VectorOperand, ast.ParenList):
        for e in node.elements:
            yield from _leaves(e)
    else:
        yield node


def _literals(node):
    t = type(node)
    if t is ast.IntLit:
        yield node
    elif t is ast.Unary:
        yield from _literals(node.operand)
    elif t is ast.Binary:
        yield from _literals(node.left)
        yield from _literals(node.right)
    elif t is ast.Call:
        for a in node.args:
            yield from _literals(a)


def _initializer_names(node, wrapped: bool = False):
    """(Name, inside generic()/mask()) for every symbol an initializer refers to."""
    t = type(node)
    if t is ast.FieldInit:   # sampler fields hold keywords, not symbols
        return
    if t is ast.Name:
        yield node, wrapped
    elif t is ast.Call:
        for a in node.args:
            yield from _initializer_names(a, True)
    elif t is ast.Binary:
        yield from _initializer_names(node.left, wrapped)
        yield from _initializer_names(node.right, wrapped)
    elif t is ast.Unary:
        yield from _initializer_names(node.operand, wrapped)
    elif t is ast.ParenList:
        for e in node.elements:
            yield from _initializer_names(e, wrapped)


_INSTRUCTION_ONLY_TYPES = frozenset((".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2", ".e2m1x2",
                                     ".e2m3x2", ".e3m2x2", ".ue8m0x2", ".e4m3x4", ".e5m2x4",
                                     ".e2m3x4", ".e3m2x4", ".e2m1x4"))
_STATE_SPACE_MODIFIERS = frozenset((".global", ".shared", ".shared::cta", ".shared::cluster",
                                    ".local", ".const", ".param", ".param::entry",
                                    ".param::func"))


def _has_overflow(node) -> bool:
    """Any literal in an operand tree that ptxas calls a 'Constant overflow'."""
    t = type(node)
    if t is ast.IntLit:
        return node.overflow
    if t is ast.Unary:
        return _has_overflow(node.operand)
    if t is ast.Binary:
        return _has_overflow(node.left) or _has_overflow(node.right)
    if t is ast.Address or t is ast.VectorOperand or t is ast.ParenList:
        return any(_has_overflow(e) for e in node.elements)
    if t is ast.Index:
        return _has_overflow(node.index)
    return False


def _constant_value(node) -> int | None:
    while type(node) is ast.ParenList and len(node.elements) == 1:
        node = node.elements[0]
    t = type(node)
    if t is ast.IntLit:
        return node.value
    if t is ast.Unary:
        v = _constant_value(node.operand)
        if v is None:
            return None
        return -v if node.op == "-" else (~v if node.op == "~" else int(not v))
    if t is ast.Binary:
        a, b = _constant_value(node.left), _constant_value(node.right)
        if a is None or b is None:
            return None
        try:
            return _BINARY[node.op](a, b)
        except (ZeroDivisionError, KeyError, ValueError, OverflowError):
            return None
    return None


_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b), "%": lambda a, b: a % b,
    "<<": lambda a, b: a << min(b, 128), ">>": lambda a, b: a >> b, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "&&": lambda a, b: int(bool(a and b)),
    "||": lambda a, b: int(bool(a or b)), "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
}


SINK_SOURCE = "Sink '_' not allowed as a source operand"
_BRACKETED = frozenset((ast.VectorOperand, ast.Address))     # where a vector may stand


def _minmax_modifier_problems(op: str, modifiers, version: tuple[int, int], sm: int) -> list[str]:
    """min/max `.abs` and `.xorsign` (PTX ISA 7.2, sm_86), `.NaN` (7.0, sm_80) and the half
    types (sm_80), in ptxas 13.5.37's words and order: `.abs` (target, then version), `.NaN`,
    `.xorsign` (version, then a `Modifier` for its target), the type last."""
    out = []
    if ".abs" in modifiers:
        if sm < 86:
            out.append("Feature '.abs' requires .target sm_86 or higher")
        if version < (7, 2):
            out.append("Feature '.abs' requires PTX ISA .version 7.2 or later")
    if ".NaN" in modifiers:
        if version < (7, 0):
            out.append("Feature '.NaN' requires PTX ISA .version 7.0 or later")
        if sm < 80:
            out.append("Modifier '.NaN' requires .target sm_80 or higher")
    if ".xorsign" in modifiers:
        if version < (7, 2):
            out.append("Feature '.xorsign' requires PTX ISA .version 7.2 or later")
        if sm < 86:
            out.append("Modifier '.xorsign' requires .target sm_86 or higher")
    if sm < 80 and modifiers[-1:] in ((".f16",), (".f16x2",)):
        out.append(f"Feature '{op}.f16 or {op}.f16x2' requires .target sm_80 or higher")
    if version < (7, 0) and modifiers[-1:] in ((".f16",), (".f16x2",)):
        out.append(f"Feature '{op}.f16 or {op}.f16x2' requires PTX ISA .version 7.0 or later")
    return out


def _vector_bits(modifiers) -> int:
    """The width of a vector access (`.v8.u64`: 512), 0 for a scalar one; a vector of
    `.b128` counts as too wide whatever its length (ptxas 13.5.37: 'Vector type too large'
    for `.v2.b128`, reject28)."""
    vec = next((int(m[2:]) for m in modifiers if m in (".v2", ".v4", ".v8")), 0)
    bits = isa.TYPE_BITS.get(modifiers[-1] if modifiers else "", 0)
    return vec * bits * (2 if bits == 128 else 1)


def _is_256_bit_access(opcode: str, modifiers) -> bool:
    """`ld/st` of 256 bits (`.v8` of 32-bit or `.v4` of 64-bit elements: sm_100+, PTX 8.8,
    global or generic addresses only)."""
    if opcode not in ("ld", "st"):
        return False
    bits = isa.TYPE_BITS.get(modifiers[-1] if modifiers else "", 0)
    return (".v8" in modifiers and bits == 32) or (".v4" in modifiers and bits == 64)


def _explain_modifiers(candidates: list, modifiers: list[str], opcode: str, name: str,
                       types=()) -> str:
    """ptxas's wording when no form fits: a modifier no form of these types knows is
    illegal; a missing required one has its own message; known ones in a combination no
    single form takes are 'unexpected types'."""
    vocabulary = {m for f in candidates for g, _ in f.groups for m in g}
    spaces = [m for m in modifiers if m in _STATE_SPACE_MODIFIERS]
    if len(spaces) > 1:
        # (ptxas 13.5.37 then checks ld/st's rules with the first space: reject28)
        first = [m for m in modifiers if m not in _STATE_SPACE_MODIFIERS or m == spaces[0]]
        rest = _ordering_problem(opcode, first) if opcode in ("ld", "st") else None
        return f"Unexpected number of state spaces specified in instruction '{name}'" + (
            "\n" + rest if rest else "")
    subs = isa.SUBOPCODES.get(opcode, ())
    if opcode == "dp2a" and not {".lo", ".hi"} & set(modifiers):
        return "'.hi/.lo' modifier required for instruction 'dp2a'"
    if name == opcode and subs and all(any(g <= subs for g, req in f.groups if req)
                                       for f in candidates):
        # `mul.rn.u32`: without .lo/.hi/.wide it is the float instruction, of a wrong type
        return f"Unexpected instruction types specified for '{name}'"
    illegal = [m for m in modifiers if m not in vocabulary]
    vector = next((m for m in illegal if m in (".v2", ".v4", ".v8")), None)
    if vector:
        return f"Illegal vector size: {vector[2:]}"
    # a float-only comparison on an integer setp/set is ptxas's "Mismatch between instruction
    # type and comparison qualifier", after the illegal modifiers
    bad_comparisons = [m for m in illegal if opcode in ("set", "setp") and m in _FLOAT_ONLY_COMPARISONS]
    illegal = [m for m in illegal if m not in bad_comparisons]
    stray = [m for m in illegal if m in _ALL_COMPARISONS and opcode not in ("set", "setp")]
    if stray:
        # ptxas reads `.lo`, `.equ`, ... on other instructions as comparisons (13.5.37:
        # 'Comparison qualifier is not allowed for instruction 'add'', then the type mismatch
        # an unsigned-only comparison on a float type or a float-only one on an integer makes)
        illegal = [m for m in illegal if m not in stray]
        rest = [m for m in modifiers if m not in stray]
        problem = _explain_modifiers(candidates, rest, opcode, name, types) if \
            all(_modifier_problem(f, rest, name) for f in candidates) else None
        kinds = {isa.type_class(t) for t in types}
        float_type = "f" in kinds
        out = [f"Comparison qualifier is not allowed for instruction '{name}'"]
        if any((m in _UNSIGNED_COMPARISONS and float_type) or
               (m in _FLOAT_ONLY_COMPARISONS and m not in _UNSIGNED_COMPARISONS and not float_type)
               for m in stray):
            out.append("Mismatch between instruction type and comparison qualifier")
        return "\n".join(([problem] if problem else []) + out)
    if illegal or bad_comparisons:
        # every illegal modifier, in ptxas 13.5.37's order (probed: .sat, .ftz, .NaN, the
        # others, a rounding modifier last), named with the instruction's sub-opcode
        # ('mul.lo'); then what the rest still lacks ("Clamp modifier required")
        illegal.sort(key=lambda m: _ILLEGAL_ORDER.get(m, 4 if m in isa.ROUNDING_MODIFIERS else 3))
        out = [f"Illegal rounding modifier for instruction '{name}'" if m in isa.ROUNDING_MODIFIERS
               else f"Illegal modifier '{m}' for instruction '{name}'" for m in illegal]
        if opcode == "st" and ".async" in illegal:       # (said twice: ptxas 13.5.37, reject28)
            at = out.index("Illegal modifier '.async' for instruction 'st'")
            out.insert(at, out[at])
        rest = [m for m in modifiers if m not in illegal]
        problems = [_modifier_problem(f, rest, name) for f in candidates]
        if all(problems) and not bad_comparisons \
                and not any(m in isa.ROUNDING_MODIFIERS for m in illegal):
            missing = [p for p in problems if not p.startswith(("Illegal", _UNEXPECTED_TYPES))]
            out += missing[:1]
        if bad_comparisons:
            out.append("Mismatch between instruction type and comparison qualifier")
        return "\n".join(out)
    problems = [_modifier_problem(f, modifiers, name) for f in candidates]
    missing = [p for p in problems if not p.startswith(("Illegal", _UNEXPECTED_TYPES))]
    if len(candidates) == 1 and not problems[0].startswith(_UNEXPECTED_TYPES):
        return problems[0]
    if missing:
        return missing[0]
    return f"Unexpected instruction types specified for '{name}'"


_ILLEGAL_ORDER = {".sat": 0, ".ftz": 1, ".NaN": 2}
_FLOAT_ONLY_COMPARISONS = frozenset((".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan",
                                     ".lo", ".ls", ".hi", ".hs"))   # and the unsigned-only ones
_UNSIGNED_COMPARISONS = frozenset((".lo", ".ls", ".hi", ".hs"))
_ALL_COMPARISONS = _FLOAT_ONLY_COMPARISONS | frozenset((".eq", ".ne", ".lt", ".le", ".gt", ".ge"))
_UNPLAIN_NAMES = frozenset(("_", "WARP_SZ"))
# instructions ptxas knows only with a sub-opcode (`madc.lo`, `shf.l`): without one, no name
_NAMED_BY_SUBOPCODE = {"madc": frozenset((".lo", ".hi")), "mul24": frozenset((".lo", ".hi")),
                       "mad24": frozenset((".lo", ".hi")), "shf": frozenset((".l", ".r"))}
_BF16_RULED = frozenset(("abs", "cvt", "fma", "max", "min", "mma", "neg", "wmma"))
_ATOMIC_OPERATIONS = frozenset((".and", ".or", ".xor", ".exch", ".cas", ".add", ".inc", ".dec",
                                ".min", ".max"))
# instructions that take only these state spaces (ptxas 13.5.37's "State space incorrect")
_SPACE_LIMITED = {"ldu": frozenset((".global",)), "createpolicy.range": frozenset((".global",))}
# the opcodes `Checker.check_opcode_features` has rules for
_OPCODE_FEATURE_CHECKS = frozenset(("cvt", "ld", "st", "mbarrier", "mma"))
# special registers newer than some targets below sm_90 (`check_features`' operand rule)
_NEWER_REGISTERS = sm80_features.SPECIAL_REGISTERS | isa.SM90_SPECIAL_REGISTERS
# opcodes with rules of their own in `check_instruction` before or beside the operand
# check (and ld/st, whose `.param::func` rule depends on the function): never in the lane
_OUTSIDE_LANE = frozenset(("ld", "st", "ldmatrix", "stmatrix", "setmaxnreg", "call"))
_OUTSIDE_LANE_NAMES = _UNPLAIN_NAMES | _NEWER_REGISTERS


@functools.lru_cache(maxsize=4096)
def _plain_plan(opcode: str, modifiers: tuple, count: int):
    """For an instruction spelling whose form (as `check_instruction` picks it for `count`
    operands) takes only plain values (`d`, `a`, `a1`, `d:wide`, ...: no addresses,
    predicates, labels, vectors or immediate choices): per operand (role, wanted type,
    whether an integer literal fits), whether the relaxed type rules apply, and the
    instruction's display name. None for anything else, which takes the general walk."""
    if opcode == "call" or opcode == "cp" or opcode == "alloca" or opcode not in isa.FORMS \
            or _is_lenient(opcode, modifiers) or (opcode == "ld" and ".param" in modifiers):
        return None
    form, types, name, problem = select_form(opcode, modifiers)
    if problem or form is None or (opcode == "add" and modifiers[-2:] == (".sat", ".u32")):
        return None
    if opcode == "cvt" and ".bf16" in types and {".u8", ".s8"} & set(types):
        return None         # no form of ptxas's (cvt_operands_mismatch)
    if not form.optional_from <= count <= len(form.operands):
        form = next((f for f in isa.FORMS[opcode] if f.groups == form.groups
                     and f.type_slots == form.type_slots
                     and f.optional_from <= count <= len(f.operands)), None)
        if form is None:
            return None
    if opcode in ("set", "setp") and any(m in (".and", ".or", ".xor") for m in modifiers) \
            != (count == len(form.operands)):
        return None         # a boolean operation without its predicate, or the reverse
    choices, relaxed, _spaces, _memory, vector = _operand_shape(opcode, modifiers, form.operands)
    if choices or vector is not None:
        return None
    wants = []
    for code in form.operands[:count]:
        if code[0] not in "dabce" or code == "dp":
            return None
        want = operand_type(code, types)
        wants.append(("d" if code[0] == "d" else "a", want,
                      isa.type_class(want) in "busp" or want == ".pred"))
    return tuple(wants), relaxed, name


def operand_type(code: str, types) -> str:
    """The type an operand code of a form wants (instructions.py): slot 0 (`d`, `a`), slot N
    (`a1`), twice slot 0's width (`d:wide`) or a fixed type (`a:u32`)."""
    rest = code[1:]
    if not rest:
        return types[0]
    if rest.isdigit():
        return types[int(rest)]
    if rest == ":wide":
        return types[0][:2] + str(isa.TYPE_BITS[types[0]] * 2)
    return "." + rest[1:]


@functools.lru_cache(maxsize=4096)
def select_form(opcode: str, modifiers: tuple[str, ...]):
    """(form, type modifiers, display name, problem) for an instruction spelling; problem is
    ptxas's message when the modifiers and types fit no form. A pure function of the
    spelling, so it is cached: kernels repeat the same few spellings many times."""
    forms = isa.FORMS[opcode]
    for m in modifiers:
        if m not in isa.KNOWN_MODIFIERS:
            return None, [], opcode, f"Unknown modifier '{m}'"
    repeats, kept = _repeated_modifiers(opcode, modifiers)
    if kept != modifiers:   # ptxas then checks the instruction with the later of each class
        form, types, name, problem = select_form(opcode, kept)
        return form, types, name, "\n".join(repeats + ([problem] if problem else [])) or None
    types = [m for m in modifiers if m in isa.TYPE_MODIFIERS]
    others = [m for m in modifiers if m not in isa.TYPE_MODIFIERS]
    if opcode == "redux" and not {".add", ".min", ".max", ".and", ".or", ".xor"} & set(others):
        return None, types, opcode, "Reduction operation is required for instruction 'redux'"
    if opcode == "slct" and ".ftz" in others and types[-1:] == [".s32"]:
        # (.ftz goes with an f32 selector: ptxas 13.5.37, reject28)
        return None, types, opcode, "Illegal modifier '.ftz' for instruction 'slct'"
    if opcode == "setp" and ".ftz" in others and types[-1:] in ([".f64"], [".bf16"], [".bf16x2"]):
        return None, types, opcode, "Illegal modifier '.ftz' for instruction 'setp'"
    if opcode == "mad" and types == [".f32"] and not set(others) & isa.ROUNDING_MODIFIERS \
            and not set(others) & {".lo", ".hi", ".wide"}:
        # (mad.f32 without a rounding is sm_1x's: ptxas 13.5.37 refuses it)
        return None, types, opcode, "Rounding modifier required for instruction 'mad'"
    if opcode == "ex2" and ".approx" in others and types[-1:] in ([".bf16"], [".bf16x2"]) \
            and ".ftz" not in others:
        return None, types, opcode, f".ftz modifier required for instruction 'ex2{types[-1]}'"
    if opcode == "fma" and ".relu" in others and types[-1:] in ([".f32"], [".f64"]):
        return None, types, opcode, "Unexpected instruction types specified for 'fma'"
    if opcode in ("min", "max") and ".relu" in others and len(types) == 1 \
            and types[0] not in (".s32", ".s16x2"):
        # (ptxas 13.5.37, reject28: .relu is s32/s16x2's; a float type is unexpected)
        if isa.type_class(types[0]) in ("f", "b") or types[0] in (".f16x2", ".bf16x2"):
            return None, types, opcode, f"Unexpected instruction types specified for '{opcode}'"
        return None, types, opcode, f"Illegal modifier '.relu' for instruction '{opcode}' with type '{types[0]}'"
    if opcode == "set" and len(types) == 2:
        # packed halves go with their own type (or a 32-bit integer result); f16 results
        # from bf16 are not taken (ptxas 13.5.37, reject28; bf16 from f16 is)
        dst, src = types
        pairs_ok = (src not in (".f16x2", ".bf16x2") or dst in (src, ".u32", ".s32", ".b32")) \
            and (dst not in (".f16x2", ".bf16x2") or src == dst) \
            and (dst, src) != (".f16", ".bf16")
        if not pairs_ok:
            return None, types, opcode, "Unexpected instruction types specified for 'set'"
    if opcode in ("min", "max") and len(types) == 1 and (".abs" in others) != (".xorsign" in others):
        # (`.xorsign.abs` go together, on f32 and the half types: ptxas 13.5.37, reject28)
        have, need = (".abs", ".xorsign") if ".abs" in others else (".xorsign", ".abs")
        illegal = [] if types[0] in (".f32", ".f16", ".f16x2", ".bf16", ".bf16x2") else \
            [f"Illegal modifier '{have}' for instruction '{opcode}'"]
        return None, types, opcode, "\n".join(illegal + [f"Modifier '{have}' requires modifier '{need}'"])
    if opcode in ("min", "max") and types[-1:] in ([".bf16"], [".bf16x2"]) and ".ftz" in others:
        return None, types, opcode, f"Illegal modifier '.ftz' for instruction '{opcode}'"
    if opcode in ("atom", "red") and len(types) == 1 and ".noftz" in others \
            and types[0] not in (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32"):
        # ptxas 13.5.37 (reject28): a type no atomic takes is unexpected; otherwise .noftz
        # is illegal and the rest is checked without it
        if types[0] not in isa.OPERATION_TYPES_BY_OPCODE[opcode]["*"] + ((".b16",) if ".cas" in others else ()):
            return None, types, opcode, f"Unexpected instruction types specified for '{opcode}'"
        form, _, rest_name, rest = select_form(opcode, tuple(m for m in modifiers if m != ".noftz"))
        line = f"Illegal modifier '.noftz' for instruction '{opcode}'"
        return None, types, rest_name, line + ("\n" + rest if rest else "")
    if opcode in ("atom", "red") and len(types) == 1 and set(others) & _ATOMIC_OPERATIONS:
        half = types[0] in (".f16", ".f16x2", ".bf16", ".bf16x2")
        if half and ".noftz" not in others and ".cas" not in others:
            # ptxas 13.5.37 (reject28): a half type's atomic names .noftz first, then the
            # rest of the instruction is checked as if it were written
            at = next(i for i, m in enumerate(modifiers) if m in _ATOMIC_OPERATIONS) + 1
            # (the message itself: _vector_atomic_problems, first among the features)
            return select_form(opcode, modifiers[:at] + (".noftz",) + modifiers[at:])
        if ".cas" in others and types[0] not in (".b16", ".b32", ".b64", ".b128") or \
                ".noftz" in others and types[0] == ".pred":
            return None, types, opcode, f"Unexpected instruction types specified for '{opcode}'"
    if opcode in ("atom", "red") and not set(others) & _ATOMIC_OPERATIONS:
        return None, types, opcode, (f"Illegal operation '' for instruction '{opcode}'\n"
                                     f"Operation  requires  type for instruction '{opcode}'\n"
                                     f"Reduction operation is required for instruction '{opcode}'")
    spaces = [m for m in others if m in _STATE_SPACE_MODIFIERS]
    where = _SPACE_LIMITED.get(opcode + next((m for m in others if m in (".range",)), ""))
    if where is not None and any(m not in where for m in spaces):
        # (ptxas 13.5.37: a `::` qualifier is an illegal modifier of its own)
        name = _display_name(opcode, others)
        return None, types, name, "\n".join(
            [f"Illegal modifier '::{m.split('::')[1]}' for instruction '{name}'" for m in spaces
             if "::" in m] + [f"State space incorrect for instruction '{name}'"])
    if opcode in _NAMED_BY_SUBOPCODE and not _NAMED_BY_SUBOPCODE[opcode] & set(others):
        # ptxas 13.5.37 knows only madc.lo/madc.hi (mul24.lo, ...): modifiers neither takes
        # are unknown
        vocabulary = {m for f in forms for g, _ in f.groups for m in g}
        return None, types, opcode, "\n".join(
            [f"Unknown modifier '{m}'" for m in others if m not in vocabulary]
            + [f"{_NO_INSTRUCTION}'{opcode}'"])
    name = _display_name(opcode, others)
    problem = _operation_type_problem(opcode, others, types) or \
        _type_rule_problem(opcode, others, types, name)
    if problem and problem.startswith("Modifier '.sat' does not apply") and len(others) > 1:
        # the other modifiers' problems around it: illegal ones before, a rounding one after
        _, _, _, rest = select_form(opcode, tuple(m for m in modifiers if m != ".sat"))
        lines = rest.split("\n") if rest else []
        rounding = [l for l in lines if l.startswith("Illegal rounding")]
        problem = "\n".join([l for l in lines if l not in rounding] + [problem] + rounding)
    if problem:
        return None, types, name, problem
    candidates = [f for f in forms if len(f.type_slots) == len(types)
                  and all(t in slot for t, slot in zip(types, f.type_slots))]
    if name != opcode:   # `mul.wide.u64`: the named variant has no form of these types
        candidates = [f for f in candidates if any(name[len(opcode):] in g for g, _ in f.groups)]
    if not candidates:
        return None, types, name, f"Unexpected instruction types specified for '{name}'"
    if opcode == "cvt" and len(types) == 2 and cvt_packed.types_problem(*types):
        return None, types, name, cvt_packed.types_problem(*types)
    if opcode == "cvt" and len(types) == 2 and cvt_packed.involved(*types):
        rounding = cvt_packed.modifier_problem(*types, others)
        if rounding and rounding.startswith("Illegal rounding"):
            return None, types, name, "\n".join(cvt_packed.illegal_modifiers(*types, others) + [rounding])
    chosen = next((f for f in candidates if _modifier_problem(f, others, opcode) is None), None)
    if chosen is None:
        return None, types, name, _explain_modifiers(candidates, others, opcode, name, types)
    problem = _ordering_problem(opcode, others) or _space_problem(opcode, others) or \
        _required_companion(opcode, others, types)
    if not problem and opcode == "cvt":
        problem = _cvt_rounding_problem(types, others)
    return chosen, tuple(types), name, problem


# Modifier classes of which an instruction takes one, and ptxas 13.5.37's message for a
# second one (probed on branch reject27); the later one is the one it then checks.
_REPEAT_CLASSES: tuple[tuple[frozenset, str], ...] = (
    (isa.ROUNDING_MODIFIERS, "Multiple rounding modifiers specified"),
    (frozenset((".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs", ".equ",
                ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan")), "Multiple comparisons set"),
    # (a `.lo`/`.hi` that names mul.lo or mad.hi is no comparison: see _repeated_modifiers)
    (frozenset((".v2", ".v4", ".v8")), "Multiple vector modifiers specified"),
)
_REPEAT_OPCODE_CLASSES: dict[str, tuple[tuple[frozenset, str], ...]] = {
    **{op: ((frozenset((".and", ".or", ".xor")), "Multiple instruction post-operation flags set"),)
       for op in ("set", "setp")},
    "ld": ((frozenset((".ca", ".cg", ".cs", ".lu", ".cv")), "Multiple cache operation modifiers specified"),
           (frozenset((".weak", ".volatile", ".relaxed", ".acquire")), "Duplicate")),
    "st": ((frozenset((".wb", ".cg", ".cs", ".wt")), "Multiple cache operation modifiers specified"),
           (frozenset((".weak", ".volatile", ".relaxed", ".release")), "Duplicate")),
    **{op: ((frozenset((".any", ".all")), "Multiple .any/.all modifiers specified"),)
       for op in ("match", "vote")},
    **{op: ((frozenset((".and", ".or", ".xor", ".exch", ".cas", ".add", ".inc", ".dec", ".min",
                        ".max")), "Multiple instruction post-operation flags set"),
            (frozenset((".cta", ".cluster", ".gpu", ".sys")), "Multiple scope modifiers specified"))
       for op in ("atom", "red")},
    "testp": ((frozenset((".finite", ".infinite", ".number", ".notanumber", ".normal",
                          ".subnormal")), "Multiple testp operation modifiers specified"),),
    "shfl": ((frozenset((".up", ".down", ".bfly", ".idx")), "Multiple shuffle modifiers specified"),),
    "prmt": ((frozenset((".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16")),
              "Multiple permute modifiers specified"),),
    "redux": ((frozenset((".and", ".or", ".xor", ".add", ".min", ".max")),
               "Multiple instruction post-operation flags set"),),
}
for _op in ("ld", "st"):
    _REPEAT_OPCODE_CLASSES[_op] += ((frozenset((".cta", ".cluster", ".gpu", ".sys")),
                                     "Multiple scope modifiers specified"),)


# written twice: taken as once (ptxas 13.5.37 accepts `add.sat.sat.s32`, `sin.approx.approx`)
_REPEAT_MESSAGES = ("Multiple ", "Duplicate ")
_SILENT_REPEATS = frozenset((".sat", ".approx", ".cc", ".sync", ".relu", ".satfinite"))


def _repeated_modifiers(opcode: str, modifiers: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    """ptxas's messages for a second modifier of a class an instruction takes one of (two
    roundings, comparisons, vector sizes, ...; 'Duplicate .X modifier' for the same one
    twice, or a second memory order), and the modifiers with the later of each kept."""
    classes = _REPEAT_CLASSES + _REPEAT_OPCODE_CLASSES.get(opcode, ())
    out, kept = [], list(modifiers)
    seen: dict[object, int] = {}
    sub = next((m for m in modifiers if m in isa.SUBOPCODES.get(opcode, ())), None)
    for i, m in enumerate(modifiers):
        if m in isa.TYPE_MODIFIERS or m in _STATE_SPACE_MODIFIERS:
            continue
        if m == sub and modifiers.index(m) == i:
            continue
        cls = next(((members, message) for members, message in classes if m in members), None)
        if cls is None and m not in _SILENT_REPEATS and m != ".ftz":
            continue
        key = cls[0] if cls else m
        if key in seen:
            if m not in _SILENT_REPEATS:
                out.append(cls[1] if cls and cls[1] != "Duplicate" else f"Duplicate {m} modifier")
            if opcode in ("atom", "red", "redux") and cls and cls[1].startswith("Multiple instruction"):
                kept[i] = None          # (an atomic's first operation is the one it checks)
                continue
            kept[seen[key]] = None
        seen[key] = i
    if len(kept) == len(modifiers) and None not in kept:
        return [], modifiers
    return out, tuple(m for m in kept if m is not None)


def _is_lenient(opcode: str, modifiers) -> bool:
    """Whether any dotted prefix of the instruction (`cp.async.bulk`) is checked leniently."""
    name = opcode
    if name in isa.LENIENT_OPCODES:
        return True
    for m in modifiers:
        name += m
        if name in isa.LENIENT_OPCODES:
            return True
    return False


def _is_sink(node) -> bool:
    return type(node) is ast.Name and node.name == "_"


def _display_name(opcode: str, modifiers: list[str]) -> str:
    """`mul.wide`, `bar.red`, `cvta.to`: how ptxas names the instruction in messages."""
    subs = isa.SUBOPCODES.get(opcode)
    if subs:
        for m in modifiers:
            if m in subs:
                return opcode + m
    return opcode


def _operation_type_problem(opcode: str, modifiers: list[str], types: list[str]) -> str | None:
    """atom/red/redux/vote: the operation modifier decides which types are allowed."""
    rules = isa.OPERATION_TYPES_BY_OPCODE.get(opcode)
    if not rules or len(types) != 1:
        return None
    t = types[0]
    if opcode == "redux" and t != ".f32":
        # (ptxas 13.5.37, reject28: the float modifiers name their type, then are illegal)
        floats = [m for m in modifiers if m in (".abs", ".NaN")]
        if floats:
            return "\n".join([f"Instruction 'redux' requires '.f32' type with '{m}' modifier."
                              for m in floats]
                             + [f"Illegal modifier '{m}' for instruction 'redux'" for m in floats])
    for m in modifiers:
        allowed = rules.get(m)
        if allowed is not None and t not in allowed and t in rules["*"]:
            return isa.OPERATION_TYPE_MESSAGES[opcode].format(
                op=opcode, mod=m, type=t, allowed=" or ".join(allowed),
                first=allowed[0])
    return None


def _type_rule_problem(opcode: str, modifiers: list[str], types: list[str], name: str) -> str | None:
    """`.cc` on a type other than a 32/64-bit integer, and abs/neg of an unsigned type, in
    ptxas 13.5.37's words (isa.CC_OPCODES, isa.SIGNED_ONLY_OPCODES)."""
    if len(types) != 1:
        return None
    kind = isa.type_class(types[0])
    if opcode in ("atom", "red") and ".noftz" in modifiers \
            and types[0] not in (".f16", ".f16x2", ".bf16", ".bf16x2", ".f32"):
        return f"Illegal modifier '.noftz' for instruction '{opcode}'"
    if ".sat" in modifiers and opcode in isa.CC_OPCODES and kind in "us" \
            and isa.TYPE_BITS.get(types[0], 0) >= 16 \
            and (opcode not in ("mad", "madc") or ".hi" in modifiers):
        # integer saturation: s32 alone, never with .cc (add.sat.u32 is a feature no target
        # of ptxas 13.5.37 has: check_features)
        if ".cc" in modifiers:
            return "Modifier '.cc' cannot be combined with modifier '.sat'"
        if types[0] != ".s32" and (opcode, types[0]) != ("add", ".u32"):
            return f"Modifier '.sat' does not apply to '{types[0]}' type"
    if opcode in isa.SIGNED_ONLY_OPCODES and kind == "u":
        # a float modifier on it is illegal first (`abs.ftz.u32`)
        return "\n".join([f"Illegal modifier '{m}' for instruction '{name}'" for m in modifiers
                          if m == ".ftz"]
                          + [f"Instruction '{opcode}' applies only to signed numeric types"])
    if ".cc" in modifiers and opcode in isa.CC_OPCODES and types[0] not in isa.CC_TYPES \
            and kind in "usf":
        if kind == "f" or types[0] in (".u16x2", ".s16x2"):
            if opcode not in ("add", "sub"):
                return None         # `mad.lo.cc.f32`, `subc.cc.f16`: unexpected types first
            return (f"Illegal modifier '.cc' for instruction '{name}'\n"
                    f"Modifier '.cc' applies only to {name} integer types")
        return f"Modifier '.cc' applies only to {name} integer types"
    return None


def createpolicy_problems(modifiers, version: tuple[int, int], sm: int) -> list[str]:
    """createpolicy.fractional/.range/.cvt: sm_80 and PTX ISA 7.4, then each eviction priority
    as written (twice if written twice), its version before its target; a secondary
    priority other than evict_first/evict_unchanged is refused: ptxas 13.5.37's order."""
    kind = modifiers[0] if modifiers and modifiers[0] in (".fractional", ".range", ".cvt") else None
    if kind is None:
        return []
    name = "createpolicy" + kind
    out = []
    if sm < 80:
        out.append(f"Feature '{name}' requires .target sm_80 or higher")
    if version < (7, 4):
        out.append(f"Feature '{name}' requires PTX ISA .version 7.4 or later")
    if kind == ".cvt":        # createpolicy.cvt.L2: no priorities (ptxas 13.5.37)
        return out + ([] if ".L2" in modifiers else [f".L2 modifier required for instruction '{name}'"])
    priorities = [m for m in modifiers if m.startswith(".L2::evict_")]
    if not priorities:        # (ptxas 13.5.37, reject28)
        out.append(f"cache eviction priority modifier required for instruction '{name}'")
        if ".L2" not in modifiers:
            out.append(f".L2 modifier required for instruction '{name}'")
    if len(priorities) > 1 and priorities[1] not in (".L2::evict_first", ".L2::evict_unchanged"):
        out.append(f"Unsupported modifier '.{priorities[1][5:]}' as secondary_priority for "
                   f"instruction '{name}'")
    for p in priorities:
        if version < (7, 4):
            out.append(f"Modifier '{p}' on '{name}' requires PTX ISA .version 7.4 or later")
        if sm < 80:
            out.append(f"Modifier '{p}' on '{name}' requires .target sm_80 or higher")
    return out


def _lenient_shape_problem(opcode: str, modifiers, count: int) -> str | None:
    """A leniently checked instruction of `isa.LENIENT_SHAPES` with a type or an operand
    count it does not take, in ptxas's words."""
    shape = isa.LENIENT_SHAPES.get(opcode)
    name = opcode
    if shape is None and modifiers:
        name = opcode + modifiers[0]
        shape = isa.LENIENT_SHAPES.get(name)
    if shape is None:
        return None
    types, operands = shape
    found = [m for m in modifiers if m in isa.TYPE_MODIFIERS]
    if len(found) != 1 or found[0] not in types:
        return f"Unexpected instruction types specified for '{name}'"
    if count != operands:
        return f"Arguments mismatch for instruction '{name}'"
    return None


def _surface_reduction_problem(opcode: str, modifiers) -> str | None:
    """sured.b: one type, the one its operation allows (ptxas's words; sured is otherwise
    checked leniently)."""
    if opcode != "sured" or list(modifiers[:1]) != [".b"]:
        return None
    types = [m for m in modifiers if m in isa.TYPE_MODIFIERS]
    if len(types) != 1 or types[0] not in isa.OPERATION_TYPES_BY_OPCODE["sured"]["*"]:
        return "Unexpected instruction types specified for 'sured.b'"
    return _operation_type_problem(opcode, [m for m in modifiers if m not in isa.TYPE_MODIFIERS], types)


def _space_problem(opcode: str, modifiers: list[str]) -> str | None:
    illegal = isa.ILLEGAL_SPACES.get(opcode)
    space = next((m for m in modifiers if illegal and m in illegal), None)
    if space is None:
        return None
    lines = [f"State space incorrect for instruction '{opcode}'"]
    if opcode in ("atom", "red"):
        # (ptxas 13.5.37, reject28: then the memory order on that space)
        lines += [f"Modifier '{m}' cannot be applied to '{space}' space" for m in modifiers
                  if m in (".relaxed", ".acquire", ".release", ".acq_rel")]
    return "\n".join(lines)


def _required_companion(opcode: str, modifiers: list[str], types: list[str]) -> str | None:
    """`rcp.approx.f64` needs `.ftz` (ptxas names the variant in its message)."""
    for (op, mod, typ), need in isa.REQUIRED_COMPANIONS.items():
        if op == opcode and mod in modifiers and typ in types and need not in modifiers:
            return f"'{need}' modifier required for instruction '{op}{mod}{typ}'"
    return None


def _ordering_problem(opcode: str, modifiers: list[str]) -> str | None:
    """ld/st's rules on memory order, cache operators, state space and cache hints: every
    problem, one a line, in ptxas 13.5.37's order (probed on branch reject27): a cache
    operator with a memory order, `.nc`, an eviction hint with a cache operator, a space the
    instruction cannot use, a memory order or `.volatile` on a space it does not apply to,
    `.mmio`'s rules, a missing scope or memory order, a cache hint on a non-global space."""
    if opcode in ("atom", "red") and ".L2::cache_hint" in modifiers:
        return "\n".join(([_space_problem(opcode, modifiers)] if _space_problem(opcode, modifiers)
                          else []) + [_hint_space_problem(opcode, m) for m in modifiers
                                      if m in _STATE_SPACE_MODIFIERS and m != ".global"]) or None
    if opcode not in ("ld", "st"):
        return None
    out = []
    for order in (".relaxed", ".acquire", ".release", ".volatile"):
        if order in modifiers:
            out += [f"Modifier '{order}' cannot be combined with modifier '{m}'"
                    for m in modifiers if m in _CACHE_OPERATORS]
    if opcode == "ld" and ".nc" in modifiers and ".weak" in modifiers:
        out.append("Modifier '.weak' cannot be combined with modifier '.nc'")
    nc_space = opcode == "ld" and ".nc" in modifiers and ".global" not in modifiers
    if opcode == "ld" and ".nc" in modifiers and not nc_space:
        if ".lu" in modifiers or ".cv" in modifiers:
            out.append("Illegal cache operation for instruction 'ld.nc'")
    cache = next((m for m in modifiers if m in _CACHE_OPERATORS and m != ".nc"), None)
    evict = next((m for m in modifiers if m.startswith(".L1::")), None)
    spaces = [m for m in modifiers if m in _STATE_SPACE_MODIFIERS]
    space = _space_problem(opcode, modifiers)
    if space and evict:     # (a space the instruction cannot use first: reject28)
        out.append(space)
        space = None
    if evict:       # (the space first, then the rest: ptxas 13.5.37, reject28)
        out += [f"Modifier '.{evict.split('::')[1]}' cannot be applied to '{m}' space for "
                f"instruction '{opcode}'" for m in spaces if m != ".global"]
    if cache and evict:
        out.append(f"Modifier '.{evict.split('::')[1]}' cannot be combined with modifier '{cache}'")
    if evict and ".volatile" in modifiers:
        out.append(f"Modifier '.{evict.split('::')[1]}' cannot be combined with modifier '.volatile'")
    if space:
        out.append(space)
    for order in (".relaxed", ".acquire", ".release", ".volatile"):
        if order in modifiers:
            out += [f"Modifier '{order}' cannot be applied to '{m}' space" for m in spaces
                    if m.startswith((".const", ".param")) or m == ".local" and order != ".volatile"]
    mmio = ".mmio" in modifiers
    if mmio:
        out += _mmio_problems(opcode, modifiers)
    if not any(m in _SCOPES for m in modifiers):
        if mmio:
            out.append(f"Modifier '.mmio' requires scope with '{opcode}' instruction")
        else:
            out += [f"Modifier '{sem}' requires scope with '{opcode}' instruction"
                    for sem in (".relaxed", ".acquire", ".release") if sem in modifiers][:1]
    else:
        for scope in _SCOPES:
            if scope in modifiers and not any(m in _ORDERS for m in modifiers):
                plain = next((m for m in modifiers if m in (".weak", ".volatile")), None)
                out.append(f"Modifier '{plain}' cannot be combined with modifier '{scope}'" if plain
                           else f"Modifier '{scope}' requires memory order with '{opcode}' instruction")
                break
    if nc_space:            # (after the eviction hint's space: ptxas 13.5.37, reject28)
        out.append("Modifier '.nc' requires .global space")
    if ".L2::cache_hint" in modifiers:
        out += [_hint_space_problem(opcode, m) for m in spaces if m != ".global"]
    out += [f"Instruction '{opcode}' requires '.v8.b32/.v4.b64' type with '{m}' modifier."
            for m in modifiers if m.startswith(".L2::evict_") and not _is_256_bit_access(opcode, modifiers)]
    return "\n".join(out) or None


def _hint_space_problem(opcode: str, space: str) -> str:
    return f"Modifier '.L2::cache_hint' cannot be applied to '{space}' space for instruction '{opcode}'"


_ORDERS = frozenset((".relaxed", ".acquire", ".release", ".mmio"))
_INTEGER_RANGES = {f".{k}{b}": ((-(1 << (b - 1)), (1 << (b - 1)) - 1) if k == "s" else (0, (1 << b) - 1))
                   for k in "us" for b in (8, 16, 32, 64)}


def _needless_integer_saturation(modifiers) -> bool:
    """cvt.sat from one integer type to another that holds all its values: ptxas calls the
    `.sat` illegal."""
    types = [m for m in modifiers if m in _INTEGER_RANGES]
    if len(types) != 2 or types[0] == types[1]:
        return False            # the same type: the form table refuses it already
    (dmin, dmax), (smin, smax) = _INTEGER_RANGES[types[0]], _INTEGER_RANGES[types[1]]
    return dmin <= smin and smax <= dmax


_CACHE_OPERATORS = frozenset((".ca", ".cg", ".cs", ".lu", ".cv", ".nc", ".wb", ".wt"))


def _mmio_problems(opcode: str, modifiers: list[str]) -> list[str]:
    """`.mmio` ld/st: with `.relaxed` (or ld's `.acquire`, st's `.release`) at `.sys` scope,
    on global (or generic) memory, scalar, no cache or eviction hint; in ptxas's words and
    order (the order, a vector, the space, the scope, then the hints)."""
    order = (".relaxed", ".acquire") if opcode == "ld" else (".relaxed", ".release")
    out = [f"Modifier '.mmio' cannot be applied to '{m}' space" for m in modifiers
           if m.startswith((".shared", ".local", ".const", ".param"))]
    out += [f"Modifier '.mmio' cannot be combined with modifier '{m}'" for m in modifiers
            if m in (".v2", ".v4", ".v8")]
    if not any(m in order for m in modifiers):
        out.append(f"Modifier '.mmio' requires modifier '{' or '.join(order)}' for instruction "
                   f"'{opcode}'")
    out += [f"Modifier '.mmio' cannot be combined with modifier '{m}'" for m in modifiers
            if m in _SCOPES and m != ".sys"]
    out += [f"Modifier '.{m.split('::')[1]}' cannot be combined with modifier '.mmio'"
            for m in modifiers if m.startswith((".L1::", ".L2::evict"))]
    return out


_SCOPES = frozenset((".cta", ".cluster", ".gpu", ".sys"))
# instructions whose last operand may be an L2 cache policy (with `.L2::cache_hint`)
_CACHE_POLICY_OPCODES = ("ld", "st", "atom", "red")
_SCOPED_MEMORY_OPCODES = frozenset(_CACHE_POLICY_OPCODES)


def _modifier_problem(form: isa.Form, modifiers: list[str], opcode: str) -> str | None:
    """Why these (non-type) modifiers do not fit the form, in ptxas's words; None if they do."""
    used: set[int] = set()
    for m in modifiers:
        for gi, (group, _) in enumerate(form.groups):
            if m in group and gi not in used:
                used.add(gi)
                break
        else:
            if m in isa.ROUNDING_MODIFIERS:
                return f"Illegal rounding modifier for instruction '{opcode}'"
            if m in _ALL_COMPARISONS and form.opcode not in ("set", "setp"):
                # (`mul.lo.lo`: the second `.lo` is read as a comparison)
                return f"Comparison qualifier is not allowed for instruction '{opcode}'"
            return f"Illegal modifier '{m}' for instruction '{opcode}'"
    for gi, (group, required) in enumerate(form.groups):
        if required and gi not in used:
            for trigger, message in isa.MISSING_GROUP_MESSAGES:
                if trigger <= group:
                    return message.format(op=opcode)
            return f"Unexpected instruction types specified for '{opcode}'"
    return None


_UNEXPECTED_TYPES = "Unexpected instruction types specified for"
_SCALAR_VIDEO = frozenset(("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset"))
_NO_INSTRUCTION = "Not a name of any known instruction: "


_FLOAT_ROUNDING = frozenset((".rn", ".rz", ".rm", ".rp", ".rna", ".rs"))
_INT_ROUNDING = frozenset((".rni", ".rzi", ".rmi", ".rpi"))


_CLAMPED_CONVERSIONS = frozenset(((".f16", ".f32"), (".bf16", ".f32"), (".tf32", ".f32")))


def _cvt_rounding_problem(types: list[str], modifiers: list[str]) -> str | None:
    """cvt's rounding rule depends on its two types (PTX ISA, cvt: 'Rounding modifiers')."""
    dst, src = types
    if cvt_packed.involved(dst, src):
        # (a packed type: .sat and .ftz are illegal, cvt_packed says in which words)
        lines = cvt_packed.illegal_modifiers(dst, src, modifiers)
        rest = cvt_packed.modifier_problem(dst, src, modifiers)
        return "\n".join(lines + ([rest] if rest else [])) or None
    clamp = next((m for m in modifiers if m in (".relu", ".satfinite")), None)
    lines = []
    if clamp and ".sat" in modifiers:
        lines.append(f"Modifier '{clamp}' cannot be combined with modifier '.sat'")
    if clamp and dst in isa.TYPE_SETS["cvt"] and src in isa.TYPE_SETS["cvt"] \
            and (dst, src) not in _CLAMPED_CONVERSIONS \
            and not (lines and isa.type_class(dst) != "f" and clamp == ".relu"):   # (reject28)
        # (ptxas 13.5.37: a scalar .relu/.satfinite narrows f32 to f16/bf16/tf32 only)
        lines.append("Unexpected instruction types specified for 'cvt'")
    if lines:
        return "\n".join(lines)
    scalar = dst in isa.TYPE_SETS["cvt"] and src in isa.TYPE_SETS["cvt"]
    clamps = [m for m in modifiers if m in (".relu", ".satfinite")]
    if ".ftz" in modifiers and clamps:
        # ptxas 13.5.37, whatever the order written (branch cvt31): into bf16 (which takes
        # .ftz) each clamp "cannot be combined", .relu's line first; into f16 .ftz is illegal
        # with a clamp, after .satfinite's "cannot be combined"
        if dst == ".bf16":
            return "\n".join(f"Modifier '{c}' cannot be combined with modifier '.ftz'"
                              for c in (".relu", ".satfinite") if c in modifiers)
        return "\n".join(["Modifier '.satfinite' cannot be combined with modifier '.ftz'"]
                         * (".satfinite" in modifiers) + ["Illegal modifier '.ftz' for instruction 'cvt'"])
    if not scalar:
        return cvt_packed.modifier_problem(dst, src, modifiers)
    rounding = [m for m in modifiers if m in isa.ROUNDING_MODIFIERS]
    clamp_lines = []
    if clamps and rounding and rounding[-1] not in (".rn", ".rz"):
        # (ptxas 13.5.37, branch cvt31: a clamp narrows f32 with .rn/.rz only; .satfinite
        # "cannot be combined" with another rounding, .relu makes it illegal once more)
        if ".satfinite" in modifiers:
            clamp_lines.append(f"Modifier '.satfinite' cannot be combined with modifier '{rounding[-1]}'")
        if ".relu" in modifiers:
            clamp_lines.append("Illegal rounding modifier for instruction 'cvt'")
        rest = _cvt_rounding_problem(types, [m for m in modifiers if m not in (".relu", ".satfinite")])
        return "\n".join(clamp_lines[:1] + ([rest] if rest else []) + clamp_lines[1:]) or None
    dst_float = isa.type_class(dst) == "f"
    src_float = isa.type_class(src) == "f"
    ieee = {dst, src} <= {".f16", ".bf16", ".f32", ".f64"}
    if ieee and ".rs" in modifiers:
        return f"Illegal modifier '.rs' for instruction 'cvt' with type '{dst}{src}'"
    if dst_float and not src_float:
        # (ptxas 13.5.37: .rna is tf32's alone, and .rs sm_100a's from f32)
        allowed, required = _FLOAT_ROUNDING - {".rna", ".rs"}, True
    elif dst_float and src_float:
        db, sb = isa.TYPE_BITS[dst], isa.TYPE_BITS[src]
        plain = _FLOAT_ROUNDING - {".rna", ".rs"} if ieee else _FLOAT_ROUNDING
        if db < sb:
            allowed, required = plain, True
        elif (db == sb and dst != src) or (src == ".bf16" and db > sb):
            # f16 <-> bf16 (sm_90), and ptxas 13.5 takes one on the bf16 widenings too: a
            # float rounding, none required
            allowed, required = plain, False
        elif db == sb:
            allowed, required = _INT_ROUNDING, False
        else:
            allowed, required = frozenset(), False
    elif src_float:
        allowed, required = _INT_ROUNDING, True
    else:
        allowed, required = frozenset(), False
    lines = []
    if ".ftz" in modifiers and ".f32" not in (dst, src):
        # ptxas 13.5.37: between integers, or with bf16, .ftz is illegal too; the rounding's
        # problem follows (branch reject28)
        if not (dst_float or src_float) or ".bf16" in (dst, src):
            lines.append("Illegal modifier '.ftz' for instruction 'cvt'")
        lines.append("Modifier '.ftz' does not apply to this type of convert operation")
    if ".sat" in modifiers and ((dst == src and not dst_float) or ".bf16" in (dst, src)):
        # (ptxas 13.5.37: no bf16 conversion takes .sat, either direction; branch cvt31)
        lines.append("Illegal modifier '.sat' for instruction 'cvt'")
    if any(m not in allowed for m in rounding):
        lines.append("Illegal rounding modifier for instruction 'cvt'")
    elif required and not rounding:
        lines.append("Rounding modifier required for instruction 'cvt'")
    return "\n".join(lines) or None


def _no_return(fn: ast.Function) -> bool:
    return any(d.name == ".noreturn" for d in fn.directives)


def _linkage(fn: ast.Function) -> str | None:
    """A function's linkage directive (`.extern`, `.visible`, `.weak`), None without."""
    return next((l for l in fn.linkage if l in (".extern", ".visible", ".weak")), None)


def run_checks(module: ast.Module | list, arch: str | None = None,
               whole_program: bool = True, double_use: bool | None = None, debug: bool = False,
               werror: bool = False) -> list[CompileError]:
    """All diagnostics (a fatal header problem raises instead, as ptxas stops there).
    A list of modules is several input files of one run: one program, each file with its
    own header, checked in turn and its diagnostics in that order; an entry of the list
    may be the CompileError its file's parse ended with (ptxas reports it in its place and
    goes on with the next file).

    Deeply nested blocks and expressions are walked recursively (`frontend.depth`)."""
    modules = module if isinstance(module, list) else [module]
    with deep_walks():
        checkers: list[Checker] = []
        per_file: list[list[CompileError]] = []
        debug_missing = False
        for m in modules:
            if isinstance(m, CompileError):
                per_file.append([m])
                continue
            c = Checker(m, arch, whole_program, checkers[-1] if checkers else None)
            c.double_use = double_use
            try:
                c.check_items()
            except CompileError as fatal:
                if len(modules) == 1:
                    # the errors of earlier lines come first (unknown symbols are reported
                    # at the end, which a fatal never reaches)
                    fatal.diagnostics = c.errors + [fatal]
                    raise
                per_file.append(c.errors + c.symbol_errors + [fatal])
                continue
            checkers.append(c)
            # ptxas's flag: once a file has `.target debug` without DWARF, the end of it
            # and of every later file says so
            debug_missing |= c.debug_missing
            per_file.append(c.errors + c.symbol_errors + (
                [CompileError("Debug information not found in presence of .target debug")]
                if debug_missing else []))
        return _program_diagnostics(checkers, whole_program, per_file,
                                    len(checkers) < len(modules), debug, werror)


def _program_diagnostics(checkers: list[Checker], whole_program: bool,
                         per_file: list[list[CompileError]], failed: bool, debug: bool = False,
                         werror: bool = False) -> list[CompileError]:
    """The checks of the whole program, once every file's own are done, and all
    diagnostics in ptxas's order: each file's (errors, a function's unknown symbols after
    its other errors), then the `.version`/`.target` mismatch, worded from the last file's
    header whichever file had it; warnings last."""
    late = []
    if any(c.version_too_old for c in checkers):
        source = checkers[-1] if checkers[-1].header[1] is not None else \
            next(c for c in checkers if c.version_too_old)
        v, tgt, target = source.header
        late.append(CompileError(f"PTX .version {v.major}.{v.minor} does not support "
                                 f".target {tgt}", source.file, target.line, target.column))
    diagnostics = [d for group in per_file for d in group] + late
    abi_off = []
    if not failed and all(getattr(d, "among_errors", False) for d in diagnostics):
        # no errors (the double-precision warnings among them are the caller's to report)
        for c in checkers:
            c.check_arch()
        if whole_program:
            late += _unified_function_errors([c.module for c in checkers])
        multiple = _multiple_return_function(checkers)
        if multiple is not None:
            if debug:          # -g compiles with the ABI only
                return late + [CompileError("Function with multiple return values is not "
                                            "allowed with ABI")]
            w = CompileError(f"Function '{multiple}' with multiple return values found, "
                             "disabling ABI", severity="warning")
            w.among_errors = True
            abi_off = [w]
            if not whole_program:
                fatal = CompileError("'Compile only(-c)' requires ABI", severity="fatal")
                fatal.diagnostics = [w, fatal]
                raise fatal
            if werror:         # the warning, an error now, ends the run before the rest
                return late + abi_off
        try:
            _check_resolved(checkers, whole_program)
            problem = next((c.call_sequence_problem for c in checkers
                            if c.call_sequence_problem), None)
            if problem and not late:
                raise CompileError(problem, severity="fatal")
        except CompileError as fatal:
            fatal.diagnostics = abi_off + [fatal]
            raise
        diagnostics = late
    warnings = abi_off + [d for c in checkers for d in c.warnings]
    return sorted(diagnostics + warnings, key=lambda d: d.severity == "warning"
                  and not getattr(d, "among_errors", False))


def _multiple_return_function(checkers: list[Checker]) -> str | None:
    """The first function returning several values, which makes ptxas compile the module
    without the ABI (refused with -g and -c; a warning naming it otherwise)."""
    for c in checkers:
        for f in c.module.functions():
            if len(f.return_params) > 1:
                return f.name
    return None


def _unified_function_errors(modules: list[ast.Module]) -> list[CompileError]:
    for m in modules:
        for item in m.items:
            if type(item) is ast.VariableDecl and any(
                    a[0] == ".attribute" and any(type(x) is tuple and x[0] == ".unified"
                                                 for x in a[1])
                    for a in item.attributes if type(a) is tuple):
                return [CompileError("Feature 'unified Functions' requires command line "
                                     "option '--compile-only'.")]
    return []


def _check_resolved(checkers: list[Checker], whole_program: bool) -> None:
    """Every declared function must be defined: one without linkage in its own file, the
    others anywhere in the program (`exported`). Only an `.extern` one may stay undefined:
    with -c always, in whole-program mode while nothing calls it (ptxas links nothing in
    bar its own system calls)."""
    exported = checkers[0].exported
    called = checkers[0].called
    for c in checkers:
        own = {f.name for f in c.module.functions() if f.body is not None}
        aliases = {a.alias for a in c.module.items if type(a) is ast.Alias}
        for fn in c.module.functions():
            linkage = _linkage(fn)
            if fn.name in own or fn.name in aliases or fn.name in isa.SYSTEM_FUNCTIONS:
                continue
            if linkage is not None and fn.name in exported:
                continue
            if linkage == ".extern" and (not whole_program or fn.name not in called):
                continue
            raise CompileError(f"Unresolved extern function '{fn.name}'", None, None, None,
                               severity="fatal")


def raise_if_errors(module: ast.Module | list[ast.Module], arch: str | None = None,
                    whole_program: bool = True, double_use: bool | None = None,
                    debug: bool = False, werror: bool = False) -> list[CompileError]:
    try:
        diags = run_checks(module, arch, whole_program, double_use, debug, werror)
    except CompileError as fatal:
        if fatal not in fatal.diagnostics:
            fatal.diagnostics = [fatal]
        raise
    errors = [d for d in diags if d.severity in ("error", "fatal")]
    if errors:
        first = errors[0]
        first.diagnostics = [d for d in diags if d.severity in ("error", "fatal")
                             or getattr(d, "among_errors", False)]
        raise first
    return diags
