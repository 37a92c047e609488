"""The option audit (tools/ptxas_options_audit.py) on a fixed sample of its rows: every
option of the pinned ptxas's --help, in its spellings and value forms, through both tools.
A sampled row must match ptxas (exit code, messages, output written, our cubin readable,
the option's effect, `.note.nv.tkinfo`'s command line) unless it is listed in KNOWN with
the reason; the full table is `python -m tools.ptxas_options_audit`."""
from __future__ import annotations

import pytest

from tools import ptxas_options_audit as audit

# Rows that differ on purpose or for want of a feature (docs/STATUS.md, branches cli35, cli36).
KNOWN = {
    "--sanitize=memcheck": "no instrumentation",
}


def _table():
    return audit.rows(audit.help_options(audit.ptxas_help()))


def test_every_help_option_has_rows():
    labels = " ".join(r.label for r in _table())
    for o in audit.help_options(audit.ptxas_help()):
        assert f"--{o.long}" in labels or f"-{o.alias}" in labels or o.long == "gpu-name", o.long


def test_known_rows_exist():
    labels = {r.label for r in _table()}
    assert set(KNOWN) <= labels


SAMPLE = [r for i, r in enumerate(_table()) if i % 4 == 0 or r.label in KNOWN]


@pytest.mark.parametrize("row", SAMPLE, ids=[r.label[:60] for r in SAMPLE])
def test_option_row_as_ptxas(row):
    checked = audit.check(row, {})
    if row.label in KNOWN:
        assert not checked.ok, f"now matches ptxas: drop it from KNOWN ({KNOWN[row.label]})"
    else:
        assert checked.ok, {k: v for k, v in checked.checks.items() if v}
