"""ptxas's cubins of the CUDA corpus (optimised, `-lineinfo` and `-G` builds; sm_89 and
sm_90) produce the NumPy reference outputs in the emulator, with zero hazards, under
explicit reconvergence (diverged lanes meet only at BSYNC/WARPSYNC/BAR) with zero
convergence hazards; so do ours for sm_90 (a sample; bench/cuda_corpus.py runs them all,
for either arch)."""
import pytest

from codegen_harness import with_hopper
from ptx2sass import codegen
from tools.emu_testing import CUDA_DIR, cuda_reference_module, run_cuda_launch

REF = cuda_reference_module() if (CUDA_DIR / "manifest.json").is_file() else None
LAUNCHES = REF.load_manifest() if REF else []


def _cases():
    for arch in ("sm_89", "sm_90"):
        for e in LAUNCHES:
            yield pytest.param(e, arch, id=f"{e['name']}-{arch}")


@pytest.mark.parametrize("entry, arch", _cases())
def test_cuda_launch_matches_reference(entry, arch):
    outcome = run_cuda_launch(entry, REF, reconverge="explicit", arch=arch)
    assert outcome.passed, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards]
    assert not outcome.result.convergence_hazards, [str(h) for h in outcome.result.convergence_hazards]


@pytest.mark.parametrize("entry", [e for e, arch in with_hopper([e for e in LAUNCHES
                                                                 if not e["name"].endswith(".G")])
                                   if arch == "sm_90"], ids=lambda e: e["name"])
def test_our_sm90_cubin_matches_reference(entry):
    outcome = run_cuda_launch(entry, REF, reconverge="explicit",
                              compiler=lambda text, name: codegen.compile_ptx(text, "sm_90", name))
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
