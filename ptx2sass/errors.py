"""Diagnostics in ptxas's form, shared by every stage so the command line prints one style."""
from __future__ import annotations


class CompileError(Exception):
    """A user-facing compile error: where it is and what is wrong, never a traceback."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 column: int | None = None, severity: str = "error"):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.severity = severity
        # Every diagnostic of the run, this one first, where a stage reports several.
        self.diagnostics: list[CompileError] = [self]

    def __str__(self) -> str:
        return format_diagnostic(self.message, self.file, self.line, self.severity)


def format_diagnostic(message: str, file: str | None, line: int | None,
                      severity: str = "error") -> str:
    """ptxas writes `file.ptx, line 12; error   : msg` (the label padded to 8 columns);
    the command line prefixes the tool name, as in `ptxas fatal   : ...`."""
    label = f"{severity:<8}: "
    if file is not None and line is not None:
        return f"{file}, line {line}; {label}{message}"
    if file is not None:
        return f"{file}; {label}{message}"
    return f"{label}{message}"
