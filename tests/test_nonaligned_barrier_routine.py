"""Non-aligned `barrier[.cta].arrive/.sync` reached by a diverged warp (ptx2sass/barrier_routine.py).

The PTX ISA: each thread waits for the non-exited threads of its warp and the warp's arrival
is marked. A BAR counts the warp each time it runs (the emulator's model, emu/ops_control.py
`op_bar`), so ptxas 13.5 makes a diverged warp meet first: on sm_7x/8x a call of
`$__cuda_sm70_barrier_<arrive|sync>[_<id>][_count]` (WARPSYNC 0xffffffff; BAR; RET) after a
`BRA.CONV ~URZ` test, on sm_90+ a `WARPSYNC.COLLECTIVE.ALL` ... `ENDCOLLECTIVE` section after
`BRA.DIV`. Here the first warp's even and odd lanes reach the barrier at two places, the
second warp last; ours and ptxas's cubins in the emulator must give the same values (before:
ours counted the first warp twice, completed the barrier without the second warp and then
deadlocked) and ours must call the routine / run the section as ptxas does."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 64


def _kernel(kind: str, sm: int, bar_id: str, count: str | None) -> str:
    ops = bar_id + ("" if count is None else f", {count}")
    line = f"barrier.{kind} {ops};"
    after = "bra.uni L_end;" if kind == "arrive" else "bra.uni L_read;"
    cons = f"barrier.sync {ops};"
    return f""".version {"8.7" if sm >= 100 else "8.0"}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<12>;
.reg .pred %p<3>;
.shared .align 4 .b32 sbuf[64];
ld.param.u64 %rd0, [out];
ld.param.u64 %rd3, [in];
mov.u32 %r0, %tid.x;
mul.wide.u32 %rd1, %r0, 4;
add.s64 %rd2, %rd3, %rd1;
ld.global.u32 %r6, [%rd2];
ld.global.u32 %r8, [%rd3+256];
ld.global.u32 %r9, [%rd3+260];
add.s64 %rd2, %rd0, %rd1;
mov.u32 %r1, sbuf;
mad.lo.u32 %r2, %r0, 4, %r1;
setp.ge.u32 %p0, %r0, 32;
@%p0 bra L_cons;
st.shared.u32 [%r2], %r6;
and.b32 %r3, %r0, 1;
setp.ne.u32 %p1, %r3, 0;
@%p1 bra L_odd;
{line}
{after}
L_odd:
{line}
{after}
L_cons:
mov.u32 %r7, 60;
L_spin:
mad.lo.u32 %r6, %r6, 3, 1;
sub.u32 %r7, %r7, 1;
setp.ne.u32 %p2, %r7, 0;
@%p2 bra L_spin;
st.shared.u32 [%r2], %r6;
{cons}
L_read:
xor.b32 %r4, %r0, 32;
mad.lo.u32 %r4, %r4, 4, %r1;
ld.shared.u32 %r5, [%r4];
st.global.u32 [%rd2], %r5;
L_end:
ret;
}}
"""


def _launch(cubin: bytes, hazards: bool) -> np.ndarray:
    data = np.zeros(THREADS + 2, dtype=np.uint32)
    data[:THREADS] = np.arange(THREADS, dtype=np.uint32) * 7 + 5
    data[THREADS:] = (1, THREADS)              # a barrier id and a count in registers
    out = np.zeros(THREADS, dtype=np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data], hazard_check=hazards)
    assert not res.hazards, res.hazards[:1]
    return out


OPERANDS = [("1", "64"), ("%r8", "64"), ("%r8", "%r9"), ("2", "%r9"), ("1", None)]
# (barrier.arrive takes a count always)
FORMS = [(kind, bar_id, count) for bar_id, count in OPERANDS for kind in ("arrive", "sync")
         if not (kind == "arrive" and count is None)]


@pytest.mark.parametrize("sm", [75, 80, 89, 90, 120])
@pytest.mark.parametrize("kind,bar_id,count", FORMS)
def test_diverged_warp_counts_once_as_ptxas(sm, kind, bar_id, count):
    src = _kernel(kind, sm, bar_id, count)
    arch = f"sm_{sm}"
    theirs = oracle.ptxas(src, arch)
    assert theirs.ok, theirs.stderr
    cubin, _ = codegen.generate_module(codegen.lower_ptx(src, arch, "k.ptx"), arch, filename="k.ptx")
    expected = _launch(theirs.output, False)
    assert (_launch(cubin, True) == expected).all()
    listing = oracle.nvdisasm(cubin)
    if sm < 90:
        assert f"__cuda_sm70_barrier_{kind}" in listing and "WARPSYNC 0xffffffff" in listing
    else:
        assert "WARPSYNC.COLLECTIVE.ALL" in listing and "ENDCOLLECTIVE" in listing


@pytest.mark.parametrize("sm", [89, 90])
def test_straight_line_barrier_has_no_routine(sm):
    """Control (right before too): where no divergent branch precedes it, the barrier is the
    BAR alone, as ptxas writes it."""
    src = f""".version 8.0
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<2>;
.reg .b32 %r<2>;
ld.param.u64 %rd0, [out];
mov.u32 %r0, %tid.x;
barrier.arrive 1, 64;
barrier.sync 2;
st.global.u32 [%rd0], %r0;
ret;
}}
"""
    arch = f"sm_{sm}"
    cubin, _ = codegen.generate_module(codegen.lower_ptx(src, arch, "k.ptx"), arch, filename="k.ptx")
    for listing in (oracle.nvdisasm(cubin), oracle.nvdisasm(oracle.ptxas(src, arch).output)):
        assert "CALL." not in listing and "COLLECTIVE" not in listing and "BRA.CONV" not in listing
