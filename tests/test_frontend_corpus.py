"""Every corpus file gets the verdict ptxas gives it (sm_89): accepted files parse and check
clean, rejected ones are rejected. Also records how fast the frontend is per file."""
import statistics
import time

import pytest

from frontend_cases import ptxas_diagnostics
from ptx2sass import CompileError, oracle
from ptx2sass.frontend import check, parse
from tools.corpora import corpus_dirs, ptx_files

FILES = [(name, path) for name in corpus_dirs() for path in ptx_files(name)]


def frontend_verdict(text: str, filename: str) -> CompileError | None:
    try:
        check(parse(text, filename), "sm_89")
    except CompileError as e:
        return e
    return None


@pytest.mark.parametrize("corpus,path", FILES,
                         ids=[f"{c}/{p.relative_to(corpus_dirs()[c])}" for c, p in FILES])
def test_verdict_matches_ptxas(corpus, path):
    text = path.read_text()
    ref = oracle.ptxas(text, "sm_89", name=path.name)
    ours = frontend_verdict(text, path.name)
    if ref.ok:
        assert ours is None, f"ptxas accepts {path.name}, we said: {ours}"
    else:
        assert ours is not None, f"ptxas rejects {path.name}: {ref.stderr}"
        theirs = [d for d in ptxas_diagnostics(ref.stderr) if d[1] != "warning"]
        assert ours.line == theirs[0][0], f"ptxas: {theirs}\nours: {ours}"


def test_corpora_are_present():
    assert len(FILES) >= 150


def test_frontend_is_fast_on_the_median_file():
    """The median corpus file parses and checks in well under ptxas's own start-up."""
    times = []
    for _, path in FILES[::7]:
        text = path.read_text()
        start = time.perf_counter()
        frontend_verdict(text, path.name)
        times.append(time.perf_counter() - start)
    assert statistics.median(times) < 0.05
