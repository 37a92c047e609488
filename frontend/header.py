"""The module header (`.version`, `.target`) as ptxas 13.5 reads it: directive by
directive, each judged when read, so a bad header item is reported before any later
syntax error. Shared by the parser (after a syntax error) and the semantic checks."""
from __future__ import annotations

from ptx2sass.errors import CompileError
from ptx2sass.frontend import ast
from ptx2sass.frontend import instructions as isa

# a name that makes `.target` name an architecture (checked against KNOWN_TARGETS after)
_ARCH_PREFIXES = isa.ARCH_PREFIXES


def _fatal(message: str, file: str, node) -> CompileError:
    return CompileError(message, file, node.line if node is not None else None, None,
                        severity="fatal")


def header_problem(items: list, end: ast.Node, file: str) -> CompileError | None:
    """ptxas's fatal for the header of `items` (Version, Target or any other node, in file
    order; `end` stands for the end of input), or None. Rules measured on ptxas 13.5.37:
    an unsupported `.version` is fatal when read; the first `.target` whose first name is
    no architecture is "Target architecture not defined", an unknown later name "Unsupported
    .target"; several `.target`s may follow one another (judged until the header is
    complete, `.version` and `.target` read); a missing `.version` is noticed at the first
    item after them, a missing `.target` at the item after `.version` (a second `.version`
    included)."""
    version = target = False
    for item in items:
        kind = type(item)
        if version and target:     # later `.target`s are not judged
            return None
        if kind is ast.Version:
            if version:
                return _fatal(f"Missing .target directive at start of file '{file}'", file, item)
            if target:
                return _fatal(f"Missing .version directive at start of file '{file}'", file, item)
            if (item.major, item.minor) not in isa.SUPPORTED_VERSIONS:
                newest = "%d.%d" % isa.NEWEST_VERSION
                return _fatal(f"Unsupported .version {item.major}.{item.minor}; current "
                              f"version is '{newest}'", file, item)
            version = True
        elif kind is ast.Target:
            if not item.names:     # an unfinished `.target`: its syntax error stands
                return None
            if not target and not item.names[0].startswith(_ARCH_PREFIXES):
                return _fatal(f"Target architecture not defined at start of file '{file}'",
                              file, item)
            for name in item.names:
                arch = name.startswith(_ARCH_PREFIXES)
                if arch and isa.real_target(name) not in isa.KNOWN_TARGETS or \
                        not arch and name not in isa.TARGET_OPTIONS:
                    return _fatal(f"Unsupported .target '{name}'", file, item)
            target = True
        else:
            what = ".target" if version else ".version"
            return _fatal(f"Missing {what} directive at start of file '{file}'", file, item)
    if not (version and target):
        what = ".target" if version else ".version"
        return _fatal(f"Missing {what} directive at start of file '{file}'", file, end)
    return None
