"""Mutated real PTX (tests/corpus/invalid/, made by tools/make_invalid_corpus.py): our verdict
and first error line against the ones the pinned ptxas gave for each file (recorded in the
manifest when the corpus was made; the slow test re-asks ptxas for a sample)."""
import json
import os
import random
from pathlib import Path

import pytest

from frontend_cases import ptxas_diagnostics
from ptx2sass import CompileError, oracle
from ptx2sass.frontend import check, parse

ROOT = Path(__file__).resolve().parent / "corpus" / "invalid"
MANIFEST = json.loads((ROOT / "manifest.json").read_text()) if ROOT.is_dir() else {}
VARIANTS = MANIFEST.get("variants", [])


def frontend(entry) -> list[CompileError]:
    text = (ROOT / entry["file"]).read_bytes().decode(MANIFEST["encoding"])
    try:
        check(parse(text, entry["file"]), MANIFEST["arch"])
    except CompileError as e:
        return getattr(e, "diagnostics", [e])
    return []


def test_corpus_is_big_and_mostly_invalid():
    assert len(VARIANTS) >= 100
    assert sum(not v["ptxas_ok"] for v in VARIANTS) >= 100
    assert len({v["mutation"] for v in VARIANTS}) >= 10


@pytest.mark.parametrize("entry", VARIANTS, ids=lambda v: v["file"])
def test_verdict_and_first_line_match_ptxas(entry):
    ours = frontend(entry)
    theirs = entry["ptxas_diagnostics"]
    assert (not ours) == entry["ptxas_ok"], f"ptxas: {theirs}\nours: {[str(d) for d in ours]}"
    if ours:
        assert ours[0].line == theirs[0]["line"], f"ptxas: {theirs}\nours: {ours[0]}"


@pytest.mark.slow
def test_recorded_verdicts_are_still_ptxas_verdicts():
    sample = random.Random(0).sample(VARIANTS, min(len(VARIANTS),
                                                   int(os.environ.get("PTX2SASS_SAMPLE", 10))))
    for entry in sample:
        run = oracle.ptxas((ROOT / entry["file"]).read_bytes(), MANIFEST["arch"],
                           name=entry["file"])
        assert run.ok == entry["ptxas_ok"]
        got = [{"line": line, "severity": sev, "message": msg}
               for line, sev, msg in ptxas_diagnostics(run.stderr)]
        assert got == entry["ptxas_diagnostics"]
