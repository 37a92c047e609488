"""`.nv_debug_ptx_txt`: the PTX text the SASS-to-PTX line table (`.nv_debug_line_sass`) counts
lines in, as ptxas 13.5 stores it.

Line N of the input is the Nth NUL-terminated string. Each line loses its leading blanks
and a CR before its newline; a line that is only a `//` comment, a `.loc` or `.file`
directive, or a row of data inside a debug `.section` (`.b8 ...`) becomes empty; other
comments stay (a trailing `//` comment, block comments). Empty lines at the end are
dropped. With several input files ptxas stores the last one only.
"""
from __future__ import annotations

import re

_EMPTIED = re.compile(r"(//|\.(loc|file|b8|b16|b32|b64)(?![\w$]))")


def ptx_text_section(text: str) -> bytes:
    lines = text.split("\n")
    out = []
    for line in lines:
        if line.endswith("\r"):
            line = line[:-1]
        line = line.lstrip(" \t")
        if _EMPTIED.match(line):
            line = ""
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return b"".join(_bytes(line) + b"\0" for line in out)


def _bytes(line: str) -> bytes:
    """The line's bytes as read (the command line decodes input as Latin-1; text given to
    the API as str may hold other characters, stored as UTF-8)."""
    try:
        return line.encode("latin-1")
    except UnicodeEncodeError:
        return line.encode("utf-8")
