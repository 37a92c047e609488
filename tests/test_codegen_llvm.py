"""What the LLVM corpus (tests/corpus/llvm, LLVM's NVPTX back end through Zig) found in our
code generator, reduced to single operations: our cubin against ptxas's in the emulator, bit
for bit (tests/codegen_harness.py)."""
import numpy as np
import pytest

from codegen_harness import run_both
from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

EDGES16 = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0xFFFE, 0x1234]


@pytest.mark.parametrize("body", [
    "mul.wide.u16 %x0, %a0, 2; mov.b32 {_, %o}, %x0;",        # Zig's u8 saturating multiply
    "mul.wide.s16 %x0, %a0, %a1; mov.b32 {_, %o}, %x0;",
    "mul.wide.s16 %x0, %a0, %a1; mov.b32 {%o, _}, %x0;",
])
def test_a_sink_in_a_vector_destination_is_as_wide_as_its_sibling(body):
    """`mov.b32 {_, %rs}, %r` keeps the HIGH half: the sink takes 16 bits, not 32."""
    ours, theirs, _ = run_both(body, 16, 2, 16, values=EDGES16)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["mul.hi.s16", "mul.hi.u16"])
def test_mul_hi_16(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 16, 2, 16, values=EDGES16)
    assert (ours == theirs).all()


@pytest.mark.parametrize("body", ["abs.f64 %o, %a0;", "copysign.f64 %o, %a0, %a1;"])
def test_f64_sign_operations(body):
    ours, theirs, _ = run_both(body, 64, 2, 64)
    assert (ours == theirs).all()


def test_mul_hi_by_a_special_register_in_the_constant_bank():
    """ReleaseSafe's overflow check of ctaid * ntid: IMAD.HI.U32 R, R, c[0x0][0x0], RZ."""
    ours, theirs, _ = run_both("mov.u32 %x1, %ntid.x; mul.hi.u32 %o, %a0, %x1;", 32, 1, 32)
    assert (ours == theirs).all()


# LLVM keeps a switch of a noinline function in that function: the `.branchtargets` table
# lives in a `.func` we inline, once per call.
SWITCH_IN_FUNC = """.version 7.8
.target sm_89
.address_size 64
.func (.param .b32 r) apply(.param .b32 op, .param .b32 a)
{
  .reg .b32 %r<6>;
  .reg .pred %p;
  ld.param.b32 %r1, [op];
  ld.param.b32 %r2, [a];
  setp.gt.u32 %p, %r1, 2;
  @%p bra DEFAULT;
  tbl: .branchtargets C0, C1, C2;
  brx.idx %r1, tbl;
C0: add.s32 %r3, %r2, 11; bra.uni DONE;
C1: mul.lo.s32 %r3, %r2, 3; bra.uni DONE;
C2: xor.b32 %r3, %r2, 0x55; bra.uni DONE;
DEFAULT: mov.b32 %r3, 7;
DONE:
  st.param.b32 [r], %r3;
  ret;
}
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  rem.u32 %r3, %r2, 5;
  { .param .b32 p0; .param .b32 p1; .param .b32 r0;
    st.param.b32 [p0], %r3; st.param.b32 [p1], %r2;
    call.uni (r0), apply, (p0, p1);
    ld.param.b32 %r4, [r0]; }
  and.b32 %r5, %r2, 3;
  { .param .b32 p0; .param .b32 p1; .param .b32 r0;
    st.param.b32 [p0], %r5; st.param.b32 [p1], %r4;
    call.uni (r0), apply, (p0, p1);
    ld.param.b32 %r6, [r0]; }
  add.s64 %rd5, %rd1, %rd3;
  st.global.u32 [%rd5], %r6;
  ret;
}
"""


def test_jump_table_in_an_inlined_function_runs_like_ptxas():
    data = np.random.default_rng(1).integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    outs = []
    for cubin in (oracle.ptxas(SWITCH_IN_FUNC).output, codegen.compile_ptx(SWITCH_IN_FUNC)):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out, data.copy()], hazard_check=True)
        outs.append((out, res))
    (theirs, _), (ours, res) = outs
    assert res.hazards == []
    np.testing.assert_array_equal(ours, theirs)
