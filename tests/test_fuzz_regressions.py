"""Programs the differential fuzzer found failing, reduced (tests/fuzz_regressions/*.ptx).

Each file's `// fuzz-case:` header holds its launch and how its inputs are made; the test
compiles it with the pinned ptxas and with ptx2sass, runs both cubins in the emulator and
expects ptx2sass's outputs to equal ptxas's (NaN = NaN; approximate instructions within
their bound) with no hazard, and the emulator to run ptxas's cubin cleanly. A file with an
`// xfail: <bug>` line is a known failure, marked xfail(strict=True): when the bug is fixed
the test passes, strict xfail fails the suite, and the fixer deletes the line.
`ptx2sass diff FILE.ptx` shows any of them side by side.
"""
from pathlib import Path

import pytest

from ptx2sass.fuzz.inputs import read_case
from ptx2sass.fuzz.runner import run_case

DIR = Path(__file__).parent / "fuzz_regressions"
FILES = sorted(DIR.glob("*.ptx"))


def _param(path: Path):
    reason = next((line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
                   if line.startswith("// xfail:")), None)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_fuzz_regression(path):
    case = read_case(path.read_text())
    assert case is not None, f"{path.name} has no fuzz-case header"
    out = run_case(case)
    assert out.cls == "pass" and not out.findings, f"{out.sig}: {out.detail}"


def test_regressions_are_readable_and_small():
    """Reduced tests stay small enough to read (the reducer's job)."""
    for path in FILES:
        body = [line for line in path.read_text().splitlines() if not line.startswith("//")]
        assert len(body) <= 120, f"{path.name}: {len(body)} lines"
