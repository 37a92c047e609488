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


CNOT_SHIFT = (ROOT / "tests/ptxas_ice/cnot_shift_of_shr16_s48100373.ptx").read_text()


def _segfaults(text: str, arch: str) -> bool:
    try:
        oracle.ptxas(text, arch)
    except oracle.OracleFailed as e:
        return "crashed with signal" in str(e)
    return False


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_ptxas_crashes_on_a_cnot_shift_of_a_16bit_shr(arch):
    """ptxas 13.5.37 (fuzz36, sm_80 seed 48100373): `cnot.b32` as the shift amount of a
    logical `shr.b16`/`shr.u16` whose result is read only where a `bra.uni` skips. It compiles
    with `shr.s16`, with `not.b32` or an immediate shift, or with a plain `bra`."""
    assert _segfaults(CNOT_SHIFT, arch)
    assert _segfaults(CNOT_SHIFT.replace("shr.b16 %h0", "shr.u16 %h0"), arch)
    for old, new in (("shr.b16 %h0", "shr.s16 %h0"), ("cnot.b32", "not.b32"),
                     ("shr.b16 %h0, %h0, %r2;", "shr.b16 %h0, %h0, 1;"), ("bra.uni $L", "bra $L")):
        variant = CNOT_SHIFT.replace(old, new)
        assert variant != CNOT_SHIFT
        assert oracle.ptxas(variant, arch).ok, (old, new)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90", "sm_120"])
def test_ptx2sass_compiles_the_cnot_shift_program(arch):
    """Ours compiles it and computes the manual's values: cnot(0) = 1 shifts 0x8001 to 0x4000,
    cnot(5) = 0 keeps it; a taken branch leaves the 7."""
    from ptx2sass.emu.launch import run
    cubin = ptx2sass.compile(CNOT_SHIFT, arch)
    for a, b, c, want in ((0, 0, 0x8001, 0x4000), (5, 0, 0x8001, 0x8001), (0, 1, 0x8001, 7)):
        out = np.zeros(1, np.uint32)
        res = run(cubin, "k", (1,), (1,), [out, np.uint32(a), np.uint32(b), np.uint16(c)], hazard_check=True)
        assert int(out[0]) == want and not res.hazards
