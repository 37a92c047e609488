"""Control instructions outside plain branches (`nanosleep`, `trap`): our cubin and ptxas's
run in the emulator on the same inputs and must agree, with zero hazards in ours; a trap
must fault in both."""
import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

SLEEP_THEN_TRAP = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .u32 %r<4>; .reg .u64 %rd<3>; .reg .pred %p;
  ld.param.u32 %r1, [n];
  nanosleep.u32 100;
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p, %r1, 7;
  @%p trap;
  add.u32 %r3, %r1, %r2;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def _ptxas_cubin(ptx: str) -> bytes:
    r = oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _launch(cubin: bytes, n: int, hazard_check: bool) -> np.ndarray:
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", 1, 32, [out, np.uint32(n)], hazard_check=hazard_check)
    if hazard_check:
        assert res.hazards == []
    return out


def test_nanosleep_runs_like_ptxas():
    ours = codegen.compile_ptx(SLEEP_THEN_TRAP)
    want = _launch(_ptxas_cubin(SLEEP_THEN_TRAP), 3, False)
    got = _launch(ours, 3, True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, 3 + np.arange(32))


@pytest.mark.parametrize("opcode", ["trap", "brkpt"])
def test_trap_faults_like_ptxas(opcode):
    """`trap`, and `brkpt` (ptxas: the same BPT.TRAP 0x1; ours refused it)."""
    ptx = SLEEP_THEN_TRAP.replace("trap;", f"{opcode};")
    ours = codegen.compile_ptx(ptx)
    for cubin in (_ptxas_cubin(ptx), ours):
        with pytest.raises(EmuFault, match="BPT.TRAP"):
            _launch(cubin, 7, False)
    np.testing.assert_array_equal(_launch(ours, 3, True), _launch(_ptxas_cubin(ptx), 3, False))


# Calls: a .func with two `ret`s (one guarded), called in a loop, calling another .func;
# `.param` and `.reg` parameters.
CALLS_IN_LOOP = HEADER + """
.func (.param .u32 r) clamp(.param .u32 x, .param .u32 hi)
{
  .reg .u32 %a<3>; .reg .pred %p;
  ld.param.u32 %a0, [x];
  ld.param.u32 %a1, [hi];
  setp.gt.u32 %p, %a0, %a1;
  @%p bra BIG;
  st.param.u32 [r], %a0;
  ret;
BIG:
  st.param.u32 [r], %a1;
  ret;
}
.func (.reg .u32 s, .reg .pred odd) step(.reg .u32 acc, .reg .u32 i)
{
  .reg .u32 %t<3>;
  mul.lo.u32 %t0, i, 7;
  .param .u32 cx; .param .u32 chi; .param .u32 cr;
  st.param.u32 [cx], %t0;
  st.param.u32 [chi], 40;
  call (cr), clamp, (cx, chi);
  ld.param.u32 %t1, [cr];
  add.u32 s, acc, %t1;
  and.b32 %t2, %t1, 1;
  setp.ne.u32 odd, %t2, 0;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r<6>; .reg .u64 %rd<3>; .reg .pred %q;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
  mov.u32 %r5, 0;
LOOP:
  add.u32 %r4, %r1, %r3;
  setp.ne.u32 %q, %r4, 9;
  @%q call (%r2, %q), step, (%r2, %r4);
  @%q add.u32 %r5, %r5, 1;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %q, %r3, 5;
  @%q bra LOOP;
  add.u32 %r2, %r2, %r5;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def _calls_reference() -> np.ndarray:
    want = np.zeros(32, np.uint32)
    for t in range(32):
        acc = odd = 0
        for i in range(5):
            if t + i == 9:
                continue      # `@%q call` skipped: %q keeps setp's false
            c = min(7 * (t + i), 40)
            acc += c
            odd += c & 1
        want[t] = acc + odd
    return want


def test_calls_in_a_loop_run_like_ptxas():
    out = np.zeros(32, np.uint32)
    run(_ptxas_cubin(CALLS_IN_LOOP), "k", 1, 32, [out], hazard_check=False)
    np.testing.assert_array_equal(out, _calls_reference())
    ours = np.zeros(32, np.uint32)
    res = run(codegen.compile_ptx(CALLS_IN_LOOP), "k", 1, 32, [ours], hazard_check=True)
    assert res.hazards == []
    np.testing.assert_array_equal(ours, out)


INDIRECT = HEADER + """
.func (.param .u32 r) f(.param .u32 x)
{
  .reg .u32 %a;
  ld.param.u32 %a, [x];
  st.param.u32 [r], %a;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r; .reg .u64 %fp; .param .u32 a; .param .u32 b;
  mov.u64 %fp, f;
  st.param.u32 [a], 1;
  proto: .callprototype (.param .u32 _) _ (.param .u32 _);
  call (b), %fp, (a), proto;
  ret;
}
"""


@pytest.mark.parametrize("ptx, message", [
    # (a struct through a pointer is passed since branch cli29, tests/test_pointer_call_structs.py;
    # one that no function the pointer may reach takes is still refused)
    (INDIRECT.replace(".param .u32 a;", ".param .align 4 .b8 a[4];")
     .replace("(.param .u32 _);", "(.param .align 4 .b8 _[4]);"),
     "struct (.param array) argument of the out-of-line function `called indirectly` not supported yet"),
    (CALLS_IN_LOOP.replace(".param .u32 cx;", ".param .align 4 .b8 cx[4];"),
     "a .param array passed for the scalar parameter `x` not supported yet"),
])
def test_unsupported_calls_are_reported(ptx, message):
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx)
    assert message in e.value.message


# Two jump tables (a divergent index, then a uniform one from a parameter) in a loop.
SWITCHES = HEADER + """
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .u32 %r<8>; .reg .u64 %rd<3>; .reg .pred %p;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r6, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
LOOP:
  add.u32 %r4, %r1, %r3;
  rem.u32 %r4, %r4, 3;
  t1: .branchtargets A, B, C;
  brx.idx %r4, t1;
A: add.u32 %r2, %r2, 11; bra D;
B: mul.lo.u32 %r2, %r2, 3; bra D;
C: xor.b32 %r2, %r2, 0x55;
D:
  t2: .branchtargets E, F;
  brx.idx %r6, t2;
E: add.u32 %r2, %r2, 1000; bra G;
F: sub.u32 %r2, %r2, 7;
G:
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p, %r3, 4;
  @%p bra LOOP;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def _switches_reference(n: int) -> np.ndarray:
    want = np.zeros(32, np.uint32)
    for t in range(32):
        acc = 0
        for i in range(4):
            acc = [acc + 11, acc * 3, acc ^ 0x55][(t + i) % 3] & 0xFFFFFFFF
            acc = (acc + 1000 if n == 0 else acc - 7) & 0xFFFFFFFF
        want[t] = acc
    return want


@pytest.mark.parametrize("n", [0, 1])
def test_brx_jump_tables_run_like_the_reference(n):
    # (ptxas's cubin uses BRXU and ULDC c[0x2][UR+imm], which neither our decoder nor the
    # listing parser reads yet: the reference is the PTX's meaning, computed above)
    _ptxas_cubin(SWITCHES)             # the PTX is valid
    theirs = _switches_reference(n)
    ours = np.zeros(32, np.uint32)
    res = run(codegen.compile_ptx(SWITCHES), "k", 1, 32, [ours, np.uint32(n)], hazard_check=True,
              reconverge="explicit")
    assert res.hazards == [] and res.convergence_hazards == []
    np.testing.assert_array_equal(ours, theirs)


def test_divergent_switch_in_a_convergence_barrier_as_ptxas():
    """BSSY/BSYNC around the switch on a lane-varying index, none around the uniform one."""
    def barriers(cubin):
        return re.findall(r"\b(BSSY|BSYNC|BRXU?) ", oracle.nvdisasm(cubin))
    theirs = barriers(_ptxas_cubin(SWITCHES))
    assert theirs == ["BSSY", "BRX", "BSYNC", "BRXU"]
    assert barriers(codegen.compile_ptx(SWITCHES)) == ["BSSY", "BRX", "BSYNC", "BRX"]


def test_brx_tables_in_the_cubin_as_nvdisasm_reads_them():
    """nvdisasm names every BRX's targets from INDIRECT_BRANCH_TARGETS: they must be the
    labels of the table's entries, in order."""
    import re
    listing = oracle.nvdisasm(codegen.compile_ptx(SWITCHES), ())
    labels = {m.group(1): int(m.group(2), 16) for m in
              re.finditer(r"^(\.L_x_\d+):\n\s+/\*([0-9a-f]{4})\*/", listing, re.M)}
    notes = re.findall(r"/\*([0-9a-f]{4})\*/\s+BRX R\d+ -0x([0-9a-f]+)\s+\(\*\"BRANCH_TARGETS ([^\"]*)\"\*\)", listing)
    assert len(notes) == 2
    for at, minus, names in notes:
        assert int(minus, 16) == int(at, 16) + 16
        assert len(names.split(",")) in (2, 3)
        assert all(n.strip() in labels for n in names.split(","))


# nvcc's call sequence: parameters declared in a brace scope, `[p+0]` addresses, call.uni.
NVCC_STYLE = HEADER + """
.func (.param .b32 func_retval0) mix3(.param .b32 mix3_param_0, .param .b32 mix3_param_1,
                                      .param .b32 mix3_param_2)
{
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [mix3_param_0];
  ld.param.u32 %r2, [mix3_param_1];
  ld.param.u32 %r3, [mix3_param_2];
  mad.lo.s32 %r4, %r1, 31, %r2;
  shl.b32 %r5, %r3, 3;
  xor.b32 %r6, %r4, %r5;
  st.param.b32 [func_retval0+0], %r6;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  {
  .reg .b32 temp_param_reg;
  .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .b32 param1;
  st.param.b32 [param1+0], 5;
  .param .b32 param2;
  st.param.b32 [param2+0], %r1;
  .param .b32 retval0;
  call.uni (retval0), mix3, (param0, param1, param2);
  ld.param.b32 %r2, [retval0+0];
  }
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_nvcc_call_sequence_runs_like_ptxas():
    theirs = np.zeros(32, np.int32)
    run(_ptxas_cubin(NVCC_STYLE), "k", 1, 32, [theirs], hazard_check=False)
    t = np.arange(32)
    np.testing.assert_array_equal(theirs, (t * 31 + 5) ^ (t << 3))
    ours = np.zeros(32, np.int32)
    res = run(codegen.compile_ptx(NVCC_STYLE), "k", 1, 32, [ours], hazard_check=True)
    assert res.hazards == []
    np.testing.assert_array_equal(ours, theirs)


def test_narrow_parameter_accesses_extend_like_ptxas():
    """nvcc passes a short as `st.param.b16` into a `.b32` parameter and reads it back with
    `ld.param.s16`: the callee must see it sign-extended from 16 bits."""
    ptx = (NVCC_STYLE.replace("ld.param.u32 %r3, [mix3_param_2];", "ld.param.s16 %r3, [mix3_param_2];")
           .replace("st.param.b32 [param2+0], %r1;",
                    ".reg .b16 %h; sub.u32 %r7, %r1, 16; cvt.u16.u32 %h, %r7; st.param.b16 [param2+0], %h;"))
    theirs = np.zeros(32, np.int32)
    run(_ptxas_cubin(ptx), "k", 1, 32, [theirs], hazard_check=False)
    t = np.arange(32)
    np.testing.assert_array_equal(theirs, (t * 31 + 5) ^ ((t - 16) << 3))
    ours = np.zeros(32, np.int32)
    res = run(codegen.compile_ptx(ptx), "k", 1, 32, [ours], hazard_check=True)
    assert res.hazards == []
    np.testing.assert_array_equal(ours, theirs)


def test_wider_parameter_access_is_reported():
    ptx = NVCC_STYLE.replace("ld.param.u32 %r3, [mix3_param_2];", "ld.param.u64 %rd3, [mix3_param_2];")
    ptx = ptx.replace(".reg .b32 %r<8>;\n  ld.param.u32 %r1", ".reg .b32 %r<8>; .reg .b64 %rd3;\n  ld.param.u32 %r1")
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx)
    assert "`ld.param.u64` of a parameter of another width in a call not supported yet" in e.value.message


# Structs by value, as nvcc passes them: `.param .align 4 .b8 p[12]`, fields at offsets.
STRUCTS = HEADER + """
.func (.param .align 4 .b8 ret[12]) cross(.param .align 4 .b8 a[12], .param .align 4 .b8 b[12])
{
  .reg .b32 %r<16>;
  ld.param.u32 %r1, [a];
  ld.param.u32 %r2, [a+4];
  ld.param.u32 %r3, [a+8];
  ld.param.u32 %r4, [b];
  ld.param.u32 %r5, [b+4];
  ld.param.u32 %r6, [b+8];
  mul.lo.s32 %r7, %r2, %r6;
  mul.lo.s32 %r8, %r3, %r5;
  sub.s32 %r9, %r7, %r8;
  mul.lo.s32 %r10, %r3, %r4;
  mul.lo.s32 %r11, %r1, %r6;
  sub.s32 %r12, %r10, %r11;
  mul.lo.s32 %r13, %r1, %r5;
  mul.lo.s32 %r14, %r2, %r4;
  sub.s32 %r15, %r13, %r14;
  st.param.b32 [ret+0], %r9;
  st.param.b32 [ret+4], %r12;
  st.param.b32 [ret+8], %r15;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 3;
  sub.u32 %r3, 10, %r1;
  {
  .param .align 4 .b8 param0[12];
  st.param.b32 [param0+0], %r1;
  st.param.b32 [param0+4], %r2;
  st.param.b32 [param0+8], 7;
  .param .align 4 .b8 param1[12];
  st.param.b32 [param1+0], %r3;
  st.param.b32 [param1+4], 2;
  st.param.b32 [param1+8], %r1;
  .param .align 4 .b8 retval0[12];
  call.uni (retval0), cross, (param0, param1);
  ld.param.b32 %r4, [retval0+0];
  ld.param.b32 %r5, [retval0+4];
  ld.param.b32 %r6, [retval0+8];
  }
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 12;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  st.global.u32 [%rd3+4], %r5;
  st.global.u32 [%rd3+8], %r6;
  ret;
}
"""


def test_struct_parameters_run_like_ptxas():
    t = np.arange(32)
    a = np.stack([t, t + 3, np.full(32, 7)], 1)
    b = np.stack([10 - t, np.full(32, 2), t], 1)
    want = np.cross(a, b).astype(np.int32)
    theirs = np.zeros((32, 3), np.int32)
    run(_ptxas_cubin(STRUCTS), "k", 1, 32, [theirs], hazard_check=False)
    np.testing.assert_array_equal(theirs, want)
    ours = np.zeros((32, 3), np.int32)
    res = run(codegen.compile_ptx(STRUCTS), "k", 1, 32, [ours], hazard_check=True)
    assert res.hazards == []
    np.testing.assert_array_equal(ours, want)


# nvcc names every call sequence's result `retval0`: a struct in one block, a scalar in the
# next (libdevice's pow after its trig reduction). A block's `.param`s end with the block.
REUSED_RETVAL = HEADER + """
.func (.param .align 4 .b8 func_retval0[8]) pair(.param .b32 pair_param_0)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [pair_param_0];
  add.s32 %r2, %r1, 5;
  st.param.b32 [func_retval0+0], %r1;
  st.param.b32 [func_retval0+4], %r2;
  ret;
}
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [twice_param_0];
  shl.b32 %r2, %r1, 1;
  st.param.b32 [func_retval0+0], %r2;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .align 4 .b8 retval0[8];
  call.uni (retval0), pair, (param0);
  ld.param.b32 %r2, [retval0+0];
  ld.param.b32 %r3, [retval0+4];
  }
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %r3;
  .param .b32 retval0;
  call.uni (retval0), twice, (param0);
  ld.param.b32 %r4, [retval0+0];
  }
  mul.lo.s32 %r5, %r2, %r4;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def test_result_name_reused_for_a_scalar_after_a_struct():
    ours, theirs = _run_both(REUSED_RETVAL, [], np.int32)
    t = np.arange(32)
    np.testing.assert_array_equal(theirs, t * 2 * (t + 5))
    np.testing.assert_array_equal(ours, theirs)


# Recursion: a function that can reach itself stays out of line and is called with the
# calling convention of ptx2sass.abi. The kernels keep values (64-bit pointers, the thread
# index, a predicate) live across the calls, so callee-saved registers and the clobbered
# predicates both matter.
FIB = HEADER + """
.func (.param .b32 func_retval0) fib(.param .b32 fib_param_0)
{
  .reg .pred %p<2>; .reg .b32 %r<8>;
  ld.param.u32 %r1, [fib_param_0];
  setp.lt.s32 %p1, %r1, 2;
  mov.u32 %r7, %r1;
  @%p1 bra DONE;
  add.s32 %r2, %r1, -1;
  { .param .b32 param0; st.param.b32 [param0+0], %r2;
    .param .b32 retval0;
    call.uni (retval0), fib, (param0);
    ld.param.b32 %r3, [retval0+0]; }
  add.s32 %r4, %r1, -2;
  { .param .b32 param0; st.param.b32 [param0+0], %r4;
    .param .b32 retval0;
    call.uni (retval0), fib, (param0);
    ld.param.b32 %r5, [retval0+0]; }
  add.s32 %r7, %r5, %r3;
DONE:
  st.param.b32 [func_retval0+0], %r7;
  ret;
}
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .pred %p; .reg .b32 %r<6>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p, %r1, 16;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  { .param .b32 param0; st.param.b32 [param0+0], %r2;
    .param .b32 retval0;
    call.uni (retval0), fib, (param0);
    ld.param.b32 %r3, [retval0+0]; }
  @%p add.u32 %r3, %r3, 1000;
  add.u32 %r3, %r3, %r1;
  add.s64 %rd5, %rd1, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
}
"""


def _fib(n: int) -> int:
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _run_both(ptx: str, args, out_dtype, threads: int = 32):
    """(ours, ptxas's) outputs of kernel `k` on the same inputs; ours with zero hazards."""
    results = []
    for cubin, check in ((codegen.compile_ptx(ptx), True), (_ptxas_cubin(ptx), False)):
        out = np.zeros(threads, out_dtype)
        res = run(cubin, "k", 1, threads, [out] + [a.copy() if isinstance(a, np.ndarray) else a for a in args],
                  hazard_check=check)
        if check:
            assert res.hazards == [], [str(h) for h in res.hazards[:3]]
        results.append(out)
    return results


def test_recursive_fib_runs_like_ptxas():
    n = np.array([i % 13 for i in range(32)], np.uint32)
    ours, theirs = _run_both(FIB, [n], np.uint32)
    t = np.arange(32)
    want = np.array([_fib(int(v)) for v in n]) + np.where(t < 16, 1000, 0) + t
    np.testing.assert_array_equal(theirs, want)
    np.testing.assert_array_equal(ours, theirs)


# Several arguments of mixed widths (64-bit ones in register pairs), a 64-bit result, a
# float argument, and a guarded `ret`.
WALK = HEADER + """
.func (.param .b64 r) walk(.param .b64 acc, .param .b32 n, .param .b64 mul, .param .f32 s, .param .b32 step)
{
  .reg .pred %p; .reg .b32 %r<6>; .reg .b64 %rd<9>; .reg .f32 %f<3>;
  ld.param.u64 %rd1, [acc];
  ld.param.u32 %r1, [n];
  ld.param.u64 %rd2, [mul];
  ld.param.f32 %f1, [s];
  ld.param.u32 %r2, [step];
  setp.eq.u32 %p, %r1, 0;
  st.param.b64 [r], %rd1;
  @%p ret;
  mul.lo.u64 %rd3, %rd1, %rd2;
  cvt.u64.u32 %rd4, %r1;
  add.u64 %rd3, %rd3, %rd4;
  sub.u32 %r3, %r1, 1;
  cvt.u64.u32 %rd5, %r2;
  xor.b64 %rd6, %rd2, %rd5;
  add.f32 %f2, %f1, 0f3F000000;
  { .param .b64 a0; .param .b32 a1; .param .b64 a2; .param .f32 a3; .param .b32 a4; .param .b64 rv;
    st.param.b64 [a0], %rd3; st.param.b32 [a1], %r3; st.param.b64 [a2], %rd6;
    st.param.f32 [a3], %f2; st.param.b32 [a4], %r2;
    call.uni (rv), walk, (a0, a1, a2, a3, a4);
    ld.param.b64 %rd7, [rv]; }
  cvt.rzi.u32.f32 %r4, %f1;
  mul.wide.u32 %rd8, %r4, %r2;
  add.u64 %rd7, %rd7, %rd8;
  st.param.b64 [r], %rd7;
  ret;
}
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .pred %q; .reg .b32 %r<6>; .reg .b64 %rd<9>; .reg .f32 %f1;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u64 %rd5, [%rd4];
  and.b32 %r2, %r1, 7;
  cvt.rn.f32.u32 %f1, %r1;
  setp.gt.u32 %q, %r1, 20;
  { .param .b64 a0; .param .b32 a1; .param .b64 a2; .param .f32 a3; .param .b32 a4; .param .b64 rv;
    st.param.b64 [a0], %rd5; st.param.b32 [a1], %r2; st.param.b64 [a2], 0x100000001b3;
    st.param.f32 [a3], %f1; st.param.b32 [a4], %r1;
    call.uni (rv), walk, (a0, a1, a2, a3, a4);
    ld.param.b64 %rd6, [rv]; }
  @%q xor.b64 %rd6, %rd6, %rd4;
  add.s64 %rd7, %rd1, %rd3;
  st.global.u64 [%rd7], %rd6;
  ret;
}
"""


def _walk(acc: int, n: int, mul: int, s: float, step: int) -> int:
    m = (1 << 64) - 1
    if n == 0:
        return acc
    inner = _walk((acc * mul + n) & m, n - 1, mul ^ step, s + 0.5, step)
    return (inner + int(s) * step) & m


def test_recursion_with_wide_arguments_and_result_runs_like_ptxas():
    rng = np.random.default_rng(5)
    acc = rng.integers(0, 1 << 63, 32, dtype=np.uint64)
    ours, theirs = _run_both(WALK, [acc], np.uint64)
    want = [_walk(int(a), t & 7, 0x100000001b3, float(t), t) for t, a in enumerate(acc)]
    np.testing.assert_array_equal(theirs[:21], np.array(want[:21], np.uint64))
    np.testing.assert_array_equal(ours, theirs)


# Mutual recursion (even/odd), a guarded call of it, and a helper that is inlined both into
# the kernel and into the out-of-line function.
MUTUAL = HEADER + """
.func (.param .b32 r) mix(.param .b32 x)
{
  .reg .b32 %a<3>;
  ld.param.u32 %a0, [x];
  mul.lo.u32 %a1, %a0, 2654435761;
  shr.u32 %a2, %a1, 7;
  xor.b32 %a2, %a2, %a0;
  st.param.u32 [r], %a2;
  ret;
}
.func (.param .b32 r) odd(.param .b32 n, .param .b32 h);
.func (.param .b32 r) even(.param .b32 n, .param .b32 h)
{
  .reg .pred %p; .reg .b32 %a<6>; .param .b32 x; .param .b32 y; .param .b32 z; .param .b32 w;
  ld.param.u32 %a0, [n];
  ld.param.u32 %a1, [h];
  setp.eq.u32 %p, %a0, 0;
  @%p bra BASE;
  sub.u32 %a2, %a0, 1;
  st.param.u32 [x], %a1;
  call (y), mix, (x);
  ld.param.u32 %a3, [y];
  st.param.u32 [x], %a2;
  st.param.u32 [w], %a3;
  call (z), odd, (x, w);
  ld.param.u32 %a4, [z];
  st.param.u32 [r], %a4;
  ret;
BASE:
  st.param.u32 [r], %a1;
  ret;
}
.func (.param .b32 r) odd(.param .b32 n, .param .b32 h)
{
  .reg .pred %p; .reg .b32 %a<5>; .param .b32 x; .param .b32 w; .param .b32 z;
  ld.param.u32 %a0, [n];
  ld.param.u32 %a1, [h];
  setp.eq.u32 %p, %a0, 0;
  @%p bra BASE;
  sub.u32 %a2, %a0, 1;
  add.u32 %a3, %a1, 17;
  st.param.u32 [x], %a2;
  st.param.u32 [w], %a3;
  call (z), even, (x, w);
  ld.param.u32 %a4, [z];
  st.param.u32 [r], %a4;
  ret;
BASE:
  not.b32 %a1, %a1;
  st.param.u32 [r], %a1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .pred %q; .reg .b32 %r<6>; .reg .b64 %rd<3>;
  .param .b32 x; .param .b32 y; .param .b32 n; .param .b32 h; .param .b32 z;
  mov.u32 %r1, %tid.x;
  st.param.u32 [x], %r1;
  call (y), mix, (x);
  ld.param.u32 %r2, [y];
  mov.u32 %r3, 5;
  setp.ne.u32 %q, %r1, 3;
  st.param.u32 [n], %r1;
  st.param.u32 [h], %r2;
  @%q call (z), even, (n, h);
  ld.param.u32 %r4, [z];
  selp.u32 %r3, %r4, %r3, %q;
  add.u32 %r3, %r3, %r1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def test_mutual_recursion_with_inlined_helper_runs_like_ptxas():
    m = 0xFFFFFFFF

    def mix(x):
        return (((x * 2654435761) & m) >> 7) ^ x

    def even(n, h):
        return h if n == 0 else odd(n - 1, mix(h))

    def odd(n, h):
        return (~h & m) if n == 0 else even(n - 1, (h + 17) & m)
    ours, theirs = _run_both(MUTUAL, [], np.uint32)
    want = [(5 if t == 3 else even(t, mix(t))) + t for t in range(32)]
    np.testing.assert_array_equal(theirs, np.array(want, np.uint32))
    np.testing.assert_array_equal(ours, theirs)


def test_out_of_line_function_in_the_cubin_as_ptxas_lays_it_out():
    """A private copy `$k$fib` after the kernel's code in `.text.k`, reached by
    CALL.REL.NOINC, leaving by RET.REL.NODEC; its frame size in `.nv.info`, the kernel's
    stack size unknown (recursion) — the records ptxas writes, as cuobjdump reads them."""
    import re
    ours, theirs = codegen.compile_ptx(FIB), _ptxas_cubin(FIB)
    listing = oracle.nvdisasm(ours, ())
    assert re.search(r"^\$k\$fib:", listing, re.M)
    assert "CALL.REL.NOINC `($k$fib)" in listing and "RET.REL.NODEC R2 `(k)" in listing

    def records(cubin):
        elf = oracle.cuobjdump_elf(cubin)
        module = elf.split(".nv.info\n", 1)[1].split("\n\n.nv.info.k", 1)[0]
        names = re.findall(r"Attribute:\s+(\S+)\s+Format:\s+\S+\s+Value:\s+function: (\S+)\(", module)
        stack = re.search(r"min stack size: (0x[0-9a-f]+)", module).group(1)
        symbols = re.findall(r"FUNC\s+(LOCAL|GLOBAL)\s+\S+\s+(?:ENTRY|-)\s+\S+\s+(\S+)\n", elf)
        return names, stack, symbols, "EIATTR_CRS_STACK_SIZE" in elf
    assert records(ours) == records(theirs)


def _corpus_launches(ptx: str):
    from tools.emu_testing import CUDA_DIR, cuda_reference_module
    if not (CUDA_DIR / "manifest.json").is_file():
        return None, []
    ref = cuda_reference_module()
    return ref, [e for e in ref.load_manifest() if e["ptx"] == ptx]


_REF, _CALL_LAUNCHES = _corpus_launches("calls.ptx")


@pytest.mark.parametrize("entry", _CALL_LAUNCHES, ids=lambda e: e["name"])
def test_cuda_corpus_calls_run_with_our_cubin(entry):
    """nvcc's calls.cu (noinline, many arguments, recursion, a table of function pointers,
    struct returns) compiled by ptx2sass gives the NumPy reference, with zero hazards."""
    from tools.emu_testing import run_cuda_launch
    outcome = run_cuda_launch(entry, _REF, compiler=lambda text, name: codegen.compile_ptx(text, filename=name))
    assert outcome.passed, outcome.reason
    assert not outcome.result.hazards, [str(h) for h in outcome.result.hazards[:3]]


# Calls through function pointers: a table of two functions in `.global` memory, one
# pointer taken with `mov`, a prototype at the call.
POINTERS = HEADER + """.func (.param .b32 r) add(.param .b32 x, .param .b32 y)
{
  .reg .b32 %a<3>;
  ld.param.u32 %a0, [x]; ld.param.u32 %a1, [y];
  add.u32 %a2, %a0, %a1;
  st.param.u32 [r], %a2;
  ret;
}
.func (.param .b32 r) sub(.param .b32 x, .param .b32 y)
{
  .reg .b32 %a<3>;
  ld.param.u32 %a0, [x]; ld.param.u32 %a1, [y];
  sub.u32 %a2, %a0, %a1;
  st.param.u32 [r], %a2;
  ret;
}
.global .align 8 .u64 table[2] = {add, sub};
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r<4>; .reg .u64 %rd<6>; .reg .pred %p;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd1, %r2, 8;
  mov.u64 %rd2, table;
  add.u64 %rd2, %rd2, %rd1;
  ld.global.u64 %rd3, [%rd2];
  setp.eq.u32 %p, %r1, 5;
  @%p mov.u64 %rd3, sub;
  { .param .b32 a; .param .b32 b; .param .b32 c;
  st.param.b32 [a], %r1;
  st.param.b32 [b], 100;
  proto: .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _);
  call (c), %rd3, (a, b), proto;
  ld.param.b32 %r3, [c];
  .param .b32 d; .param .b32 e; .param .b32 f;
  st.param.b32 [d], %r1;
  st.param.b32 [e], 100;
  call (f), add, (d, e);
  ld.param.b32 %r2, [f]; }
  xor.b32 %r3, %r3, %r2;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r3;
  ret;
}
"""


def test_calls_through_function_pointers_run_like_ptxas():
    """`add` is also called by name: that call is inlined, only the pointer call remains."""
    ours, theirs = _run_both(POINTERS, [], np.uint32)
    t = np.arange(32, dtype=np.int64)
    want = (np.where((t & 1) | (t == 5), t - 100, t + 100) ^ (t + 100)).astype(np.uint32)
    np.testing.assert_array_equal(theirs, want)
    np.testing.assert_array_equal(ours, theirs)
    listing = oracle.nvdisasm(codegen.compile_ptx(POINTERS), ())
    assert listing.count("CALL.REL.NOINC") == 1 and "$k$add:" in listing and "$k$sub:" in listing


# Calls inside divergent regions (the caller's convergence barrier kept across a recursive
# callee's own regions, BMOV.32.CLEAR / BMOV.32 as ptxas): tests/test_emu_calls.py, which runs
# ptxas's cubins and ours in explicit reconvergence and compares the barrier layouts.
