"""Non-aligned `barrier[.cta].red` reached by a diverged warp (ptx2sass/barrier_routine.py).

The PTX ISA: each thread waits for the non-exited threads of its warp and the warp's arrival
is marked; the count is a multiple of the warp size. Here the first warp's even and odd
lanes reach the reduction at two places, the second warp at a third; every thread stores
its result. ptxas 13.5 on sm_90+ tests the warp (`BRA.DIV`) and runs the BAR.RED and its
B2R.RESULT in a `WARPSYNC.COLLECTIVE.ALL` ... `ENDCOLLECTIVE` section; before, ours wrote
the BAR.RED alone, the first warp's halves counted it twice (the emulator's warp-arrival
model for a counted barrier, emu/ops_control.py `op_bar`) and the second warp deadlocked.
On sm_7x/8x ptxas calls `$__cuda_sm70_barrier_red_<op>_count` (the predicate as 0/1, the
id and count in registers, the result back in a register: WARPSYNC 0xffffffff, BAR.RED,
B2R.RESULT, RET) where the warp may be diverged; ours now does the same (its own argument
registers)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 64


def _kernel(sm: int, op: str, operands: str) -> str:
    if op == "popc":
        line, result = f"barrier.red.popc.u32 %r5, {operands}, %p2;", ""
    else:
        line, result = f"barrier.red.{op}.pred %p3, {operands}, %p2;", "selp.u32 %r5, 1, 0, %p3;"
    return f""".version {"8.7" if sm >= 100 else "8.0"}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<12>;
.reg .pred %p<4>;
ld.param.u64 %rd0, [out];
ld.param.u64 %rd3, [in];
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd1, %r0, 4;
add.s64 %rd2, %rd3, %rd1;
ld.global.u32 %r6, [%rd2];
ld.global.u32 %r8, [%rd3+256];
ld.global.u32 %r9, [%rd3+260];
add.s64 %rd2, %rd0, %rd1;
and.b32 %r7, %r6, 4;
setp.ne.u32 %p2, %r7, 0;
mov.u32 %r5, 0;
setp.ge.u32 %p0, %r0, 32;
@%p0 bra L_other;
and.b32 %r3, %r0, 1;
setp.ne.u32 %p1, %r3, 0;
@%p1 bra L_odd;
{line}
{result}
bra.uni L_out;
L_odd:
{line}
{result}
bra.uni L_out;
L_other:
{line}
{result}
L_out:
st.global.u32 [%rd2], %r5;
ret;
}}
"""


def _launch(cubin: bytes, hazards: bool) -> np.ndarray:
    data = np.zeros(THREADS + 2, dtype=np.uint32)
    data[:THREADS] = np.arange(THREADS, dtype=np.uint32) * 7 + 5     # bit 2: the predicate
    data[THREADS:] = (1, THREADS)              # a barrier id and a count in registers
    out = np.zeros(THREADS, dtype=np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data], hazard_check=hazards)
    assert not res.hazards, res.hazards[:1]
    return out


def _check(sm: int, op: str, operands: str) -> str:
    src = _kernel(sm, op, operands)
    arch = f"sm_{sm}"
    theirs = oracle.ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    expected = _launch(theirs.output, False)
    cubin, _ = codegen.generate_module(codegen.lower_ptx(src, arch, "k.ptx"), arch, filename="k.ptx")
    assert (_launch(cubin, True) == expected).all()
    return oracle.nvdisasm(cubin)


CASES = [(sm, op, ops) for sm in (89, 90) for op in ("popc", "and", "or") for ops in ("1, 64", "%r8, %r9", "1")] + \
        [(75, "popc", "1, 64"), (80, "and", "%r8, %r9"), (120, "popc", "1, 64"), (120, "and", "%r8, %r9")]


@pytest.mark.parametrize("sm,op,operands", CASES)
def test_diverged_warp_reduces_once_as_ptxas(sm, op, operands):
    listing = _check(sm, op, operands)
    if sm < 90:
        assert f"__cuda_sm70_barrier_red_{op}" in listing and "WARPSYNC 0xffffffff" in listing
        return
    assert "WARPSYNC.COLLECTIVE.ALL" in listing and "ENDCOLLECTIVE" in listing
    section = listing[listing.index("WARPSYNC.COLLECTIVE.ALL"):listing.index("ENDCOLLECTIVE")]
    assert "BAR.RED" in section and "B2R.RESULT" in section
