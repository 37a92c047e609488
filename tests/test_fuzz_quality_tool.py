"""tools/fuzz_quality: geomeans over the programs passing in every run, per half of the fixed
sha256 split (expected values by exact arithmetic on made-up results)."""
from __future__ import annotations

import json

from tools import fuzz_quality


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _row(seed, ours, theirs, cls="pass"):
    stats = lambda c: {"cycles": c, "registers": c, "instructions": c, "executed": c}
    return {"seed": seed, "class": cls, "ours": stats(ours), "theirs": stats(theirs)}


def test_split_and_geomeans(tmp_path, capsys):
    held = [s for s in range(40) if fuzz_quality.held_back(s)][:2]
    tune = [s for s in range(40) if not fuzz_quality.held_back(s)][:3]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(a, [_row(held[0], 2, 1), _row(held[1], 8, 1), _row(tune[0], 1, 4), _row(tune[1], 3, 3),
               _row(tune[2], 5, 1)])
    _write(b, [_row(held[0], 1, 1), _row(held[1], 1, 1), _row(tune[0], 1, 1), _row(tune[1], 1, 1),
               _row(tune[2], 1, 1, cls="mismatch")])                  # tune[2] left out of both
    assert fuzz_quality.main([str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    tuning_a = next(line for line in lines if line.startswith("| tuning") and str(a) in line)
    held_a = next(line for line in lines if line.startswith("| held back") and str(a) in line)
    assert "| 2 |" in tuning_a and "| 0.500 |" in tuning_a            # sqrt(1/4 * 1)
    assert "| 2 |" in held_a and "| 4.000 |" in held_a                # sqrt(2 * 8)
