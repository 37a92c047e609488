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


def diagnostics(module, arch: str | None = None):
    """Every semantic error and warning found in the module, in ptxas's order."""
    from ptx2sass.frontend.checks import run_checks
    return run_checks(module, arch)


def check(module, arch: str | None = None):
    """Raise the first error (carrying all of them in `.errors`) if any check fails;
    return the warnings otherwise."""
    from ptx2sass.frontend.checks import raise_if_errors
    return raise_if_errors(module, arch)
