"""PTX frontend: PLY lexer and parser, AST, semantic checks (ptxas-style diagnostics).

    module = parse(text, "kernel.ptx")     # raises CompileError on a syntax error
    check(module, arch="sm_89")            # raises CompileError (all errors) if any

Every CompileError raised here carries `.diagnostics`: all errors of the run, in ptxas's
order, itself first (ptxas reports several semantic errors at once, but stops at the
first syntax error).
"""
from __future__ import annotations

from ptx2sass.frontend.parser import parse

__all__ = ["parse", "check", "diagnostics"]


def diagnostics(module, arch: str | None = None, whole_program: bool = True):
    """Every semantic error found in the module, in ptxas's order (a fatal one raises)."""
    from ptx2sass.frontend.checks import run_checks
    return run_checks(module, arch, whole_program)


def check(module, arch: str | None = None, whole_program: bool = True,
          double_use: bool | None = None, debug: bool = False, werror: bool = False):
    """Raise the first error (carrying all of them in `.diagnostics`) if any check fails.
    `module` may be a list: the input files of one run, checked as one program.
    `arch` is ptxas's -arch (a `.target` above it is fatal); `whole_program=False` is
    ptxas's -c (functions may stay unresolved externs). `double_use` (not None: ptxas's
    --warn-on-double-precision-use, True with -Werror): where the checks fail, the
    double-precision warnings come among the errors, in ptxas's order (where they pass,
    the caller reports them). `debug` (-g or `.target debug`) and `werror` (-Werror) decide
    how a function returning several values (no ABI) is refused."""
    from ptx2sass.frontend.checks import raise_if_errors
    return raise_if_errors(module, arch, whole_program, double_use, debug, werror)
