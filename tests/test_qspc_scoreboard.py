"""QSPC (isspacep, generic atomics' fallbacks) writes its predicate through the memory unit:
ptxas 13.5.37 gives it a write scoreboard and waits on it before the predicate is read, on
sm_90, sm_100 and sm_120. The blackwell tables had QSPC as a fixed-latency result, so our
sm_100/sm_120 code read the predicate a dozen cycles after issue with no wait: on silicon the
predicate may not have landed (campaign 16, seed 28000084)."""
import pytest

from ptx2sass import oracle
from ptx2sass.codegen import compile_ptx
from ptx2sass.emu.loader import load_program

PTX = """
.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 p)
{{
    .reg .pred %p;
    .reg .b32 %r;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [p];
    isspacep.shared %p, %rd2;
    selp.b32 %r, 7, 9, %p;
    st.global.u32 [%rd1], %r;
    ret;
}}
"""


def _qspc_and_its_reader(cubin: bytes):
    """The QSPC's control fields and the control fields of the first instruction that reads its predicate."""
    ins = [i for _, i in load_program(cubin, "k").instructions]
    at = next(n for n, i in enumerate(ins) if i.opcode == "QSPC")
    pred = next(o for o in ins[at].operands if getattr(o, "file", None) == "P" and not o.is_zero)
    for later in ins[at + 1:]:
        if any(getattr(o, "file", None) == "P" and o.index == pred.index for o in later.operands) or \
                (later.guard is not None and later.guard.index == pred.index and later.guard.file == "P"):
            return ins[at].control, later.control
    raise AssertionError("nothing reads the QSPC's predicate")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_ptxas_waits_on_a_scoreboard_for_the_qspc_predicate(arch):
    theirs = oracle.ptxas(PTX.format(arch=arch), arch)
    assert theirs.ok, theirs.stderr
    qspc, reader = _qspc_and_its_reader(theirs.output)
    assert qspc.wr_sb != 7 and reader.wait >> qspc.wr_sb & 1


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_ours_waits_on_a_scoreboard_for_the_qspc_predicate(arch):
    qspc, reader = _qspc_and_its_reader(compile_ptx(PTX.format(arch=arch), arch))
    assert qspc.wr_sb != 7 and reader.wait >> qspc.wr_sb & 1
