"""The shared ZLUDA corpus is present, its manifest is complete, and the pinned ptxas gives
the verdict the manifest records for every test."""
import json

import pytest

from ptx2sass import oracle
from tools.corpora import corpus_dirs, entry_names

ZLUDA = corpus_dirs()["zluda"]
MANIFEST = json.loads((ZLUDA / "manifest.json").read_text()) if ZLUDA.is_dir() else []
DTYPE_BYTES = {"u8": 1, "s8": 1, "u16": 2, "s16": 2, "f16": 2, "u32": 4, "s32": 4, "f32": 4,
               "u64": 8, "s64": 8, "f64": 8}


def test_corpus_is_beside_the_clone():
    assert ZLUDA.is_dir(), f"{ZLUDA} missing: CI must have ../shared beside the clone"
    assert len(MANIFEST) >= 180


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["name"])
def test_manifest_entry_is_complete(entry):
    text = (ZLUDA / entry["ptx"]).read_text()
    assert entry["kernel"] in entry_names(text)
    assert len(entry["params"]) >= 1 and set(entry["params"]) <= {"input", "output"}
    for side in ("input", "output"):
        buf = entry[side]
        if buf is None:
            assert side == "input"
            continue
        assert len(bytes.fromhex(buf["hex"])) == entry[f"{side}_bytes"] == buf["count"] * DTYPE_BYTES[buf["dtype"]]
    assert entry["output_alloc_bytes"] >= entry["output_bytes"]


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["name"])
def test_pinned_ptxas_verdict_matches_manifest(entry):
    run = oracle.ptxas((ZLUDA / entry["ptx"]).read_text(), "sm_89", name=entry["ptx"])
    assert run.ok == entry["ptxas_sm89"], run.stderr
    if not run.ok:
        # The reason is the recorded one (13.0 wrote the same first message).
        assert entry["ptxas_error"].split(":")[-1].strip()[:30] in run.stderr
