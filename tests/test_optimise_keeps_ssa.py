"""The SSA optimisations leave valid SSA (`ir.verify`: every value defined before every use,
guards and guarded writes' else-values included) on generated programs. A pass that drops a
definition some operand still names miscompiles silently (fuzz 33000385: a one-input phi of a
constant dropped under a guarded write's else-value); this checks the IR itself, on programs
of the differential fuzzer's generator, without ptxas or the emulator."""
import pytest

from ptx2sass import ir
from ptx2sass.codegen import lower_ptx
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.program import render
from ptx2sass.opt import optimise

SEEDS = [33000385] + list(range(33100000, 33100120))


@pytest.mark.parametrize("seed", SEEDS)
def test_optimised_functions_verify(seed):
    text = render(make_program(seed, Options())).text
    try:
        module = lower_ptx(text, "sm_89")
    except Exception as e:  # noqa: BLE001 - programs the frontend refuses are not this test's
        pytest.skip(f"not lowered: {type(e).__name__}")
    for fn in module.functions:
        optimise(fn)
        ir.verify(fn)
