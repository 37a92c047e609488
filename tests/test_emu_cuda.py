"""ptxas's cubins of the CUDA corpus (optimised, `-lineinfo` and `-G` builds) produce the
NumPy reference outputs in the emulator, with zero hazards, under explicit reconvergence
(diverged lanes meet only at BSYNC/WARPSYNC/BAR) with zero convergence hazards."""
import pytest

from tools.emu_testing import CUDA_DIR, cuda_reference_module, run_cuda_launch

REF = cuda_reference_module() if (CUDA_DIR / "manifest.json").is_file() else None
LAUNCHES = REF.load_manifest() if REF else []


@pytest.mark.parametrize("entry", LAUNCHES, ids=lambda e: e["name"])
def test_cuda_launch_matches_reference(entry):
    outcome = run_cuda_launch(entry, REF, reconverge="explicit")
    assert outcome.passed, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards]
    assert not outcome.result.convergence_hazards, [str(h) for h in outcome.result.convergence_hazards]


def test_debug_builds_carry_no_schedule():
    """The timing model runs `-G` code serialised because ptxas leaves it unscheduled: every
    instruction word of such a cubin has the same control field (no stall, scoreboard or
    wait). Checked here on ptxas's own output, so the assumption cannot silently rot."""
    from ptx2sass import oracle
    from ptx2sass.encoder.cubin import read_cubin
    debug = sorted({e["ptx"] for e in LAUNCHES if e["name"].endswith(".G")})
    assert debug, "the corpus has -G builds"
    for ptx in debug:
        cubin = read_cubin(oracle.ptxas((CUDA_DIR / ptx).read_text(), "sm_89", name=ptx).output)
        assert any(s.name == ".debug_info" for s in cubin.sections)
        controls = {int.from_bytes(k.text[o:o + 16], "little") >> 105
                    for k in cubin.kernels for o in range(0, len(k.text), 16)}
        assert controls == {0x7E0}, (ptx, sorted(map(hex, controls))[:5])
