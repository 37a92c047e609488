"""ptxas's internal compiler errors on valid PTX, and the fuzzer's class for them.

Campaign 28's seed 40001997 (sm_90) made ptxas 13.5.37 stop with `(C7907) Internal compiler
error`; the fuzzer called that `invalid` (a generator bug). The program is valid (sm_89's ptxas
compiles it), so it is now `ptxas_ice`: ptxas's own failure, with ours compiled and run alone.
The reduced program (tests/ptxas_ice/) pins the failure: when a ptxas update compiles it, the
pinned test says so; ptx2sass compiles it and its kernel computes the manual's value."""
from pathlib import Path

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.fuzz.runner import CLASSES, PRIORITY

ROOT = Path(__file__).resolve().parents[1]
PREFETCH = (ROOT / "tests/ptxas_ice/prefetch_local_without_abi_s40001997.ptx").read_text()


def _ice(text: str, arch: str) -> bool:
    run = oracle.ptxas(text, arch)
    return not run.ok and "(C7907) Internal compiler error" in run.stderr


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_ptxas_fails_on_a_local_prefetch_without_abi(arch):
    """ptxas 13.5.37: a two-result `.func` (it warns "disabling ABI") and `prefetch.local`
    (.L1 or .L2) in the kernel. With one result, without the prefetch, or with a generic or
    global prefetch, it compiles; and sm_89 compiles the whole."""
    assert _ice(PREFETCH, arch)
    assert _ice(PREFETCH.replace("prefetch.local.L1", "prefetch.local.L2"), arch)
    one_result = PREFETCH.replace("(.reg .b32 r0, .reg .b32 r1) two()", "(.reg .b32 r0) two()") \
        .replace("    mov.b32 r1, 2;\n", "")
    without = PREFETCH.replace("    prefetch.local.L1 [%d0];\n", "")
    generic = PREFETCH.replace("prefetch.local.L1 [%d0];", "prefetch.L1 [%d0];")
    global_ = PREFETCH.replace("prefetch.local.L1 [%d0];", "prefetch.global.L1 [%d1];")
    for variant in (one_result, without, generic, global_):
        assert variant != PREFETCH
        assert oracle.ptxas(variant, arch).ok
    assert oracle.ptxas(PREFETCH, "sm_89").ok


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100", "sm_120"])
def test_ptx2sass_compiles_the_program_ptxas_fails_on(arch):
    """Ours compiles it and the kernel stores the local word back: 1013904242 (the prefetch
    changes nothing), with no hazard."""
    from ptx2sass.emu.launch import run
    out = np.zeros(1, np.uint32)
    res = run(ptx2sass.compile(PREFETCH, arch), "k", (1,), (1,), [out], hazard_check=True)
    assert int(out[0]) == 1013904242
    assert not res.hazards


def test_ptxas_ice_is_its_own_class_after_ours():
    """Not `invalid` (ptxas rejected nothing); ranked below every class that is ours, so a
    refusal, crash, fault or hazard of ours on the same program is what the report shows."""
    assert "ptxas_ice" in CLASSES
    assert PRIORITY.index("ptxas_ice") > max(PRIORITY.index(c) for c in
                                             ("crash", "refuse", "timeout", "mismatch", "hazard"))


def test_campaign_seed_is_a_ptxas_ice():
    """Campaign 28's seed 40001997 on sm_90, the whole program."""
    from ptx2sass.fuzz.campaign import Options, case_from_program, make_program
    from ptx2sass.fuzz.runner import run_case
    case = case_from_program(make_program(40001997, Options(arch="sm_90")))
    case.arch = "sm_90"
    out = run_case(case)
    assert out.cls == "ptxas_ice", (out.sig, out.detail)
    assert out.sig == "ptxas_ice: ptxas fatal : (C7907) Internal compiler error."
    assert out.ours.get("instructions") and not out.ours.get("hazards")
