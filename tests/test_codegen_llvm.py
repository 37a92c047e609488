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


def test_an_empty_initializer_is_all_zeros():
    """LLVM writes `= {}` for empty aggregates (Zig's Debug builds); ptxas takes it."""
    ptx = """.version 7.8
.target sm_89
.address_size 64
.global .align 4 .b8 z[16] = {};
.global .align 4 .u32 w[2] = {7, 9};
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [z+8];
  ld.global.u32 %r2, [w+4];
  add.s32 %r3, %r1, %r2;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""
    outs = []
    for cubin in (oracle.ptxas(ptx).output, codegen.compile_ptx(ptx)):
        out = np.full(1, 0xFFFFFFFF, np.uint32)
        run(cubin, "k", 1, 1, [out], hazard_check=True)
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[0])
    assert outs[0][0] == 9


def _panic_loop(checks: int) -> str:
    """A loop with a lane-dependent trip count and `checks` safety checks in its body, each
    calling a `.noreturn` handler that stays out of line (it calls itself, as Zig's Debug
    handlers do through `unreachable`)."""
    body = "\n".join(f"  setp.gt.u32 %p2, %r3, {100000 + k}; @%p2 bra PANIC{k};\n"
                     f"  add.s32 %r3, %r3, {k + 1};" for k in range(checks))
    panics = "\n".join(f"PANIC{k}:\n  {{ .param .b32 c; st.param.b32 [c], {k};\n"
                       f"    call.uni fail, (c); }}\n  exit;" for k in range(checks))
    return f""".version 7.8
.target sm_89
.address_size 64
.func fail(.param .b32 c) .noreturn
{{
  trap;
  {{ .param .b32 d; st.param.b32 [d], 0; call.uni fail, (d); }}
  exit;
}}
.visible .entry k(.param .u64 out, .param .u64 in)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  and.b32 %r2, %r2, 7;
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
LOOP:
  setp.ge.u32 %p1, %r4, %r2;
  @%p1 bra DONE;
{body}
  add.s32 %r4, %r4, 1;
  bra.uni LOOP;
DONE:
  add.s64 %rd5, %rd1, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
{panics}
}}
"""


def test_panic_checks_in_a_divergent_loop_get_no_barriers_of_their_own():
    """Each check's panic side leaves for good; the loop's back edge makes its EXIT
    reachable from the other side, which once made every check a region of its own (more
    than 16 nested: refused)."""
    ptx = _panic_loop(20)
    data = np.arange(64, dtype=np.uint32) * 2654435761 % 1000
    outs, listings = [], []
    for cubin in (oracle.ptxas(ptx).output, codegen.compile_ptx(ptx)):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out, data.astype(np.uint32)], hazard_check=True)
        outs.append(out)
        listings.append(oracle.nvdisasm(cubin))
    assert res.hazards == []
    np.testing.assert_array_equal(outs[1], outs[0])
    # ptxas: one around the loop and one around its rotated guard, none per check
    assert 1 <= listings[1].count("BSSY") <= listings[0].count("BSSY") == 2
