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


def _drop_first_used_definition(real_optimise):
    """An optimise that removes the first instruction whose result something reads: the
    kind of bug fuzz 33000385 was."""
    def broken(fn, *args, **kwargs):
        real_optimise(fn, *args, **kwargs)
        read = {op.id for b in fn.blocks for ins in b.instrs for op in ins.srcs if hasattr(op, "id")}
        for b in fn.blocks:
            for ins in b.instrs:
                if any(d.id in read for d in ins.dests):
                    b.instrs.remove(ins)
                    return
    return broken


KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mad.lo.s32 %r3, %r2, %r1, 7;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def test_the_fuzzers_compile_reports_broken_ssa_as_an_internal_error(monkeypatch):
    import ptx2sass
    from ptx2sass import codegen
    from ptx2sass.errors import CompileError
    monkeypatch.setattr(codegen, "optimise", _drop_first_used_definition(codegen.optimise))
    ptx2sass.compile(KERNEL, "sm_89")               # without the check the break goes unseen
    with pytest.raises(CompileError, match="internal error: IR check after optimise"):
        ptx2sass.compile(KERNEL, "sm_89", verify_ir=True)
