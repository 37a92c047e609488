"""Shared check of the tests that run ptxas's own cubins of fuzz programs under the hazard
checker: ptxas's code runs right on hardware, so a hazard there is our latency table's error."""
from pathlib import Path


def hazards_in_ptxas_cubin(path: Path, arch: str | None = None) -> list:
    """The hazards the checker reports on ptxas's cubin of the fuzz case at `path`, compiled
    for the arch its header names (which must be `arch` where one is given)."""
    from ptx2sass.emu import EmuFault
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ptxas, execute, load, load_from_listing
    case = read_case(path.read_text())
    case.text = "".join(ln for ln in case.text.splitlines(keepends=True) if not ln.startswith("// fuzz-case: "))
    assert arch is None or case.arch == arch
    cubin, why = compile_ptxas(case)
    assert cubin is not None, why
    try:
        prog = load(cubin, case.kernel)
    except EmuFault as e:
        if "cannot decode" not in str(e):
            raise
        prog = load_from_listing(cubin, case.kernel)
    return execute(prog, case, hazard_check=True).hazards
