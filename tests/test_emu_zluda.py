"""The emulator runs ptxas's sm_89 and sm_90 cubins of the ZLUDA conformance suite and reproduces the
hardware-verified output bytes of the manifest, with zero hazards; through nvdisasm's listing
(every word) and through our own decoder (`encoder.codec`, what `emu.run` and the command
use). Each kernel runs with explicit reconvergence (diverged lanes meet only where a
BSYNC/WARPSYNC/BAR says so): ptxas's convergence barriers must make every warp collective
run with all its members (zero convergence hazards)."""
import pytest

from tools.emu_testing import ZLUDA_DIR, run_zluda, zluda_manifest

MANIFEST = zluda_manifest() if (ZLUDA_DIR / "manifest.json").is_file() else []
# ptxas itself rejects these for sm_89 (see the manifest's ptxas_error): nothing to run.
PTXAS_REJECTS = {"vector8", "vector8_extract", "vote_ballot_nosync"}


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["name"])
def test_zluda_output_matches_hardware(entry, arch):
    if entry["name"] in PTXAS_REJECTS:
        pytest.skip(f"the pinned ptxas rejects this PTX for {arch}")
    outcome = run_zluda(entry, hazard_check=True, reconverge="explicit", arch=arch)
    assert outcome.passed, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards[:5]]
    assert not outcome.result.convergence_hazards, [str(h) for h in outcome.result.convergence_hazards]


def test_pass_rate_at_least_95_percent():
    runnable = [e for e in MANIFEST if e["name"] not in PTXAS_REJECTS]
    passed = sum(run_zluda(e).passed for e in runnable)
    assert passed >= 0.95 * len(MANIFEST), f"{passed}/{len(MANIFEST)}"


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_pass_rate_with_our_decoder(arch):
    """The same bar with instructions decoded by `encoder.codec` (sm_90: the hopper table)
    instead of nvdisasm."""
    from ptx2sass.emu.loader import codec_decoder
    runnable = [e for e in MANIFEST if e["name"] not in PTXAS_REJECTS]
    failed = [(e["name"], o.reason) for e in runnable
              if not (o := run_zluda(e, decoder=codec_decoder, arch=arch)).passed]
    assert len(runnable) - len(failed) >= 0.95 * len(MANIFEST), failed
