"""What the PTX says about source positions, read off the syntax tree once per compile.

Per function: its opening brace's line (ptxas's line for the prologue), and the `.loc`s in
effect at each of its lines (a `.loc` holds until the next one; every function starts with
none). An inlined `.loc` (`function_name`, `inlined_at`) extends the chain of the latest
`.loc` before it at its `inlined_at` position (LLVM writes the call site's `.loc` first, then
one per level of inlining), so each line has a chain, outermost call site first. Per module: the `.file` table and the debug `.section`s (`.debug_str` names inlined
functions for the line table; with `-g` the sections themselves go into the cubin).
"""
from __future__ import annotations

from ptx2sass.records import dataclass
from ptx2sass.frontend import ast

DATA_WIDTH = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}


@dataclass(frozen=True)
class SourceLoc:
    """A `.loc`: file index, line, column; an inlined one also names its function (a label in
    `.debug_str`) and where it was inlined (file, line, column). `ptx_line` tells two
    `.loc`s of the same position apart: ptxas makes a call-site row per directive."""
    file: int
    line: int
    column: int = 0
    function_name: str | None = None
    inlined_at: tuple[int, int, int] | None = None
    ptx_line: int = 0


class SourceMap:
    """Lines, `.loc`s, files and debug sections of one program (one or several input files)."""

    def __init__(self, module: ast.Module):
        self.body_line: dict[str, int] = {}
        self.first_loc: dict[str, Chain | None] = {}
        self.function_file: dict[str, str | None] = {}
        self.code_labels: dict[str, tuple[str, int]] = {}   # label -> (function, its line)
        self._loc_at: dict[str | None, dict[int, Chain]] = {}
        self.files: dict[int, ast.FileDirective] = {}
        self.sections: list[ast.Section] = []
        self.has_loc = False
        for item in module.items:
            if isinstance(item, ast.Function) and item.body is not None:
                self._read_function(item)
            elif isinstance(item, ast.FileDirective):
                self.files.setdefault(item.index, item)
            elif isinstance(item, ast.Section):
                self.sections.append(item)

    def _read_function(self, fn: ast.Function) -> None:
        self.body_line[fn.name] = fn.body.line
        self.function_file[fn.name] = fn.file
        at = self._loc_at.setdefault(fn.file, {})
        current = first = None
        latest: dict[tuple, Chain] = {}          # (file, line, column) -> the last chain there
        stack = [iter(fn.body.statements)]
        while stack:                      # nested blocks, without recursion
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
            elif isinstance(node, ast.Block):
                stack.append(iter(node.statements))
            elif isinstance(node, ast.Loc):
                loc = SourceLoc(node.file_index, node.source_line, node.source_column,
                                node.function_name, node.inlined_at, node.line)
                if loc.inlined_at is None:
                    current = (loc,)
                else:
                    current = latest.get(loc.inlined_at) or (SourceLoc(*loc.inlined_at, ptx_line=node.line),)
                    current += (loc,)
                latest[(loc.file, loc.line, loc.column)] = current
                first = first or current
            else:
                if isinstance(node, ast.Label):
                    self.code_labels.setdefault(node.name, (fn.name, node.line))
                if current is not None and isinstance(node, (ast.Instruction, ast.Label)):
                    at[node.line] = current
        self.first_loc[fn.name] = first
        self.has_loc = self.has_loc or first is not None

    def loc(self, function: str, line: int | None) -> Chain | None:
        """The `.loc` chain in effect at PTX `line` of `function`'s input file (None: none yet)."""
        return self._loc_at.get(self.function_file.get(function), {}).get(line)

    def section(self, name: str) -> ast.Section | None:
        return next((s for s in self.sections if s.name == name), None)


Chain = tuple  # of SourceLoc: the outermost call site first, the `.loc` itself last


def section_labels(section: ast.Section) -> dict[str, int]:
    """Each label's byte offset inside a debug section."""
    out, at = {}, 0
    for entry in section.entries:
        if entry.label is not None:
            out[entry.label] = at
        else:
            at += DATA_WIDTH.get(entry.type, 1) * len(entry.values)
    return out
