"""The command line as `.note.nv.tkinfo` records it ("Tool Command Line Arguments").

ptxas 13.5.37 writes each option given (by itself or from an options file) as
`-<alias> <value> ` (a flag: `-<alias>  `, its value empty), in one fixed order of its
own, not the command line's (measured with sets of up to 45 options at once, see
tests/test_tool_arguments.py). A repeated option keeps its last value; a list option
(`-e`, `-maxntid`) its items joined by commas. Under -g the first input file comes
first and an output file given with -o is recorded too. Options it does not record:
`-ias`, `-optf` itself, `-apply-controls`, `--regAllocOptLevel`, and ours
(`--uniform-datapath`, `--dump-ir`). Nothing given: an empty string (no `-arch` either).
The input and output are recorded by their base names.
"""
from __future__ import annotations

import os

# ptxas's order, by alias; "<input>" and "o" are recorded only under -g.
ORDER = (
    "<input>", "suppress-stack-size-warning", "e", "v", "v2", "warn-lmem-usage",
    "warn-spills", "warn-double-usage", "no-bb-merge", "ret-end", "disable-optimizer-consts",
    "maxrregcount", "minnctapersm", "maxntid", "override-directive-values", "func-maxrregcount",
    "regUsageLevel", "g", "suppress-debug-info", "lineinfo", "sp-bounds-check",
    "device-stack-protector", "O", "Ofc", "o", "arch", "suppress-double-demote-warning",
    "dlcm", "dscm", "flcm", "fscm", "m", "Werror", "w", "c", "enable-func-clone-sc",
    "astoolspatch", "opt-fp-atomics", "preserve-relocs", "make-errors-visible-at-exit",
    "legacy-bar-warp-wide-behavior", "suppress-async-bulk-multicast-advisory-warning",
    "suppress-sparse-mma-advisory-info", "sanitize", "split-compile", "jobserver", "fmad",
    "allow-expensive-optimizations", "ewp", "pic", "suppress-position-independent-code-warning",
    "annotate", "g-tmem-access-check", "gno-tmem-access-check", "gno-fabric-access-check",
)
RANK = {alias: i for i, alias in enumerate(ORDER)}
DEBUG_ONLY = ("<input>", "o")


def tool_arguments(given: dict[str, str], debug: bool) -> str:
    """`given`: alias -> the value as it will be recorded ("" for a flag), for each option
    the command line set. Aliases outside ptxas's order are left out."""
    parts = []
    for alias in sorted((a for a in given if a in RANK), key=RANK.__getitem__):
        if alias in DEBUG_ONLY and not debug:
            continue
        value = os.path.basename(given[alias]) if alias in DEBUG_ONLY else given[alias]
        parts.append(value + " " if alias == "<input>" else f"-{alias} {value} ")
    return "".join(parts)
