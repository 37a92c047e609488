"""Parameters of out-of-line (recursive) functions beyond scalars, as ptxas passes them:
structs (`.param .align N .b8 x[K]`) as their bytes in consecutive 32-bit argument
registers, an 8-aligned one from an even register (ptx2sass/inline.py packs them; ptxas
reads bytes back with PRMT, we with BFE); 8- and 16-bit `.param`s in a full register that
the callee extends. Our cubin and ptxas's run in the emulator (explicit reconvergence) and
must both give NumPy's result, ours with zero hazards."""
import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

# A 12-byte struct in and out (ptxas: a in R4..R6, n in R7, the result in R4..R6).
ROTATE = HEADER + """
.func (.param .align 4 .b8 r[12]) s(.param .align 4 .b8 a[12], .param .u32 n)
{
  .reg .pred %p; .reg .b32 %t<6>;
  ld.param.u32 %t1, [a];
  ld.param.u32 %t2, [a+4];
  ld.param.u32 %t3, [a+8];
  ld.param.u32 %t0, [n];
  setp.eq.u32 %p, %t0, 0;
  @%p bra BASE;
  { .param .align 4 .b8 b[12]; .param .u32 m; .param .align 4 .b8 q[12];
  add.u32 %t4, %t1, %t3;
  st.param.b32 [b], %t2; st.param.b32 [b+4], %t4; st.param.b32 [b+8], %t1;
  sub.u32 %t5, %t0, 1;
  st.param.u32 [m], %t5;
  call (q), s, (b, m);
  ld.param.b32 %t1, [q]; ld.param.b32 %t2, [q+4]; ld.param.b32 %t3, [q+8]; }
BASE:
  st.param.b32 [r], %t3; st.param.b32 [r+4], %t1; st.param.b32 [r+8], %t2;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<9>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 12;
  add.u64 %a2, %a0, %a1;
  add.u32 %r2, %r1, 100;
  and.b32 %r3, %r1, 7;
  { .param .align 4 .b8 b[12]; .param .u32 m; .param .align 4 .b8 q[12];
  st.param.b32 [b], %r1; st.param.b32 [b+4], %r2; st.param.b32 [b+8], 7;
  st.param.u32 [m], %r3;
  call (q), s, (b, m);
  ld.param.b32 %r4, [q]; ld.param.b32 %r5, [q+4]; ld.param.b32 %r6, [q+8]; }
  st.global.u32 [%a2], %r4; st.global.u32 [%a2+4], %r5; st.global.u32 [%a2+8], %r6;
  ret;
}
"""


def _rotate():
    def s(a, n):
        if n:
            a = s([a[1], (a[0] + a[2]) & 0xFFFFFFFF, a[0]], n - 1)
        return [a[2], a[0], a[1]]
    return np.array([s([t, t + 100, 7], t & 7) for t in range(32)], np.uint32)


# An 8-aligned struct of two 64-bit fields after a 32-bit parameter (ptxas: n in R4, the
# struct in R6..R9, R5 unused).
ALIGNED = HEADER + """
.func (.param .b32 r) s(.param .u32 n, .param .align 8 .b8 a[16])
{
  .reg .pred %p; .reg .b32 %t<6>; .reg .b64 %d<4>;
  mov.u32 %t4, 0;
  ld.param.u32 %t0, [n];
  ld.param.u64 %d1, [a];
  ld.param.u64 %d2, [a+8];
  setp.eq.u32 %p, %t0, 0;
  @%p bra END;
  { .param .u32 n2; .param .align 8 .b8 a2[16]; .param .b32 rr;
  sub.u32 %t1, %t0, 1;
  st.param.u32 [n2], %t1; st.param.b64 [a2], %d2; st.param.b64 [a2+8], %d1;
  call (rr), s, (n2, a2);
  ld.param.b32 %t4, [rr]; }
END:
  add.u64 %d3, %d1, %d2;
  cvt.u32.u64 %t2, %d3;
  shr.u64 %d3, %d1, 40;
  cvt.u32.u64 %t3, %d3;
  add.u32 %t2, %t2, %t3;
  add.u32 %t2, %t2, %t4;
  st.param.b32 [r], %t2;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<6>; .reg .b64 %e<3>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  mul.wide.u32 %e1, %r1, 0x3000000;
  mul.wide.u32 %e2, %r1, 0x80000000;
  and.b32 %r2, %r1, 7;
  { .param .u32 n; .param .align 8 .b8 a[16]; .param .b32 rv;
  st.param.u32 [n], %r2; st.param.b64 [a], %e1; st.param.b64 [a+8], %e2;
  call (rv), s, (n, a);
  ld.param.b32 %r3, [rv]; }
  st.global.u32 [%a2], %r3;
  ret;
}
"""


def _aligned():
    m = 0xFFFFFFFF

    def s(n, d1, d2):
        inner = s(n - 1, d2, d1) if n else 0
        return ((d1 + d2) + (d1 >> 40) + inner) & m
    return np.array([s(t & 7, t * 0x3000000, t * 0x80000000) for t in range(32)], np.uint32)


# A 6-byte struct of two bytes and two half-words (ptxas: bytes 0..3 in R4, 4..5 in R5).
BYTES = HEADER + """
.func (.param .b32 r) s(.param .align 2 .b8 a[6], .param .u32 n)
{
  .reg .pred %p; .reg .b32 %t<8>; .reg .b16 %h<3>;
  mov.u32 %t7, 0;
  ld.param.u8 %t1, [a];
  ld.param.s8 %t2, [a+1];
  ld.param.u16 %t3, [a+2];
  ld.param.b16 %h1, [a+4];
  cvt.u32.u16 %t4, %h1;
  ld.param.u32 %t0, [n];
  setp.eq.u32 %p, %t0, 0;
  @%p bra END;
  { .param .align 2 .b8 a2[6]; .param .u32 n2; .param .b32 rr;
  sub.u32 %t5, %t0, 1;
  st.param.u32 [n2], %t5;
  st.param.u8 [a2], %t2; st.param.u8 [a2+1], %t1;
  st.param.b16 [a2+2], %h1; st.param.b16 [a2+4], %t3;
  call (rr), s, (a2, n2);
  ld.param.b32 %t7, [rr]; }
END:
  mul.lo.u32 %t1, %t1, 3;
  add.u32 %t1, %t1, %t2;
  mul.lo.u32 %t3, %t3, 5;
  add.u32 %t1, %t1, %t3;
  add.u32 %t1, %t1, %t4;
  add.u32 %t1, %t1, %t7;
  st.param.b32 [r], %t1;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<6>; .reg .b16 %g;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  mul.lo.u32 %r2, %r1, 9;
  and.b32 %r3, %r1, 7;
  cvt.u16.u32 %g, %r1;
  { .param .align 2 .b8 a[6]; .param .u32 n; .param .b32 rv;
  st.param.u8 [a], %r2; st.param.u8 [a+1], 0xF0;
  st.param.b16 [a+2], %g; st.param.b16 [a+4], 300;
  st.param.u32 [n], %r3;
  call (rv), s, (a, n);
  ld.param.b32 %r4, [rv]; }
  st.global.u32 [%a2], %r4;
  ret;
}
"""


def _bytes():
    def sx8(v):
        return v - 256 if v & 0x80 else v

    def s(b0, b1, h2, h4, n):
        inner = s(b1, b0, h4, h2, n - 1) if n else 0
        return (b0 * 3 + sx8(b1) + h2 * 5 + h4 + inner) & 0xFFFFFFFF
    return np.array([s((9 * t) & 0xFF, 0xF0, t, 300, t & 7) for t in range(32)], np.uint32)


# 8- and 16-bit `.param`s: the caller passes the whole register, the callee extends it.
def _narrow(ptype, store, load):
    return HEADER + f"""
.func (.param .b32 r) s(.param {ptype} g, .param .u32 n)
{{
  .reg .pred %p; .reg .b32 %t<6>; .reg .b16 %h<3>;
  ld.param.u32 %t0, [n];
  {load}
  setp.eq.u32 %p, %t0, 0;
  mov.u32 %t3, 0;
  @%p bra END;
  {{ .param {ptype} g2; .param .u32 n2; .param .b32 rr;
  sub.u32 %t4, %t0, 1; st.param.u32 [n2], %t4;
  {store.replace('[g]', '[g2]').replace('%r2', '%t2')}
  call (rr), s, (g2, n2); ld.param.b32 %t3, [rr]; }}
END:
  add.u32 %t3, %t3, %t2;
  st.param.b32 [r], %t3;
  ret;
}}
.visible .entry k(.param .u64 p)
{{
  .reg .u64 %a<4>; .reg .u32 %r<6>; .reg .b16 %h<3>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 4;
  add.u64 %a2, %a0, %a1;
  sub.u32 %r2, %r1, 16;
  and.b32 %r3, %r1, 7;
  {{ .param {ptype} g; .param .u32 n; .param .b32 rv;
  st.param.u32 [n], %r3; {store}
  call (rv), s, (g, n); ld.param.b32 %r4, [rv]; }}
  st.global.u32 [%a2], %r4;
  ret;
}}
"""


def _narrow_reference():
    t = np.arange(32)
    return ((t - 16) * ((t & 7) + 1)).astype(np.uint32)


CASES = {
    "struct_in_and_out": (ROTATE, _rotate, (32, 3)),
    "aligned_struct_after_a_scalar": (ALIGNED, _aligned, 32),
    "struct_of_bytes_and_halves": (BYTES, _bytes, 32),
    "b8_param": (_narrow(".b8", "st.param.b8 [g], %r2;", "ld.param.s8 %t2, [g];"), _narrow_reference, 32),
    "b16_param": (_narrow(".b16", "cvt.u16.u32 %h1, %r2; st.param.b16 [g], %h1;",
                          "ld.param.b16 %h1, [g]; cvt.s32.s16 %t2, %h1;"), _narrow_reference, 32),
    "b16_param_from_b32": (_narrow(".b16", "st.param.b16 [g], %r2;", "ld.param.s16 %t2, [g];"),
                           _narrow_reference, 32),
}


def _ptxas_cubin(ptx: str) -> bytes:
    r = oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


@pytest.mark.parametrize("name", CASES)
def test_parameters_of_out_of_line_functions_run_like_ptxas(name):
    ptx, reference, shape = CASES[name]
    want = reference()
    for cubin, ours in ((_ptxas_cubin(ptx), False), (codegen.compile_ptx(ptx), True)):
        out = np.zeros(shape, np.uint32)
        res = run(cubin, "k", 1, 32, [out], hazard_check=ours, reconverge="explicit")
        np.testing.assert_array_equal(out, want, err_msg="ours" if ours else "ptxas")
        assert res.convergence_hazards == []
        if ours:
            assert res.hazards == [], [str(h) for h in res.hazards[:3]]


def _written_before_the_call(cubin: bytes) -> set[int]:
    kernel = oracle.nvdisasm(cubin, ()).split("CALL.REL.NOINC")[0]
    return {int(r) for r in re.findall(r"\*/\s+(?:@!?P\d\s+)?[A-Z][A-Z0-9.]*\s+R(\d+)", kernel)}


def test_aligned_struct_skips_a_register_as_ptxas():
    """The kernel sets n in R4 and the 8-aligned struct from R6, never R5, in both cubins."""
    for cubin in (_ptxas_cubin(ALIGNED), codegen.compile_ptx(ALIGNED)):
        written = _written_before_the_call(cubin)
        assert {4, 6} <= written and 5 not in written


def test_predicate_parameter_is_refused_like_ptxas():
    ptx = _narrow(".b32", "st.param.b32 [g], %r2;", "ld.param.b32 %t2, [g];")
    ptx = ptx.replace("(.param .b32 g, .param .u32 n)", "(.reg .pred g, .param .u32 n)")
    ptx = ptx.replace("ld.param.b32 %t2, [g];", "selp.u32 %t2, 1, 2, g;")
    ptx = ptx.replace(".param .b32 g2;", ".reg .pred g2;").replace("st.param.b32 [g2], %t2;", "setp.ne.u32 g2, %t2, 0;")
    ptx = ptx.replace("{ .param .b32 g;", "{ .reg .pred g;").replace("st.param.b32 [g], %r2;", "setp.ne.u32 g, %r2, 0;")
    r = oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert not r.ok and "passing predicate" in r.stderr
    with pytest.raises(CompileError) as refused:     # in ptxas's words (it said "not supported yet")
        codegen.compile_ptx(ptx)
    assert refused.value.message in r.stderr and refused.value.severity == "fatal"


# A function returning two doubles in a `.param` array (libdevice's double-double helpers
# such as __internal_accurate_pow return one), written and read with vector accesses.
VECTOR_STRUCT = HEADER + """
.func (.param .align 16 .b8 r[16]) twice(.param .align 8 .b8 a[16])
{
  .reg .f64 %d<4>;
  ld.param.v2.f64 {%d0, %d1}, [a];
  add.f64 %d2, %d0, %d0;
  add.f64 %d3, %d1, %d1;
  st.param.v2.f64 [r], {%d2, %d3};
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<3>; .reg .u32 %r1; .reg .f64 %f<4>;
  ld.param.u64 %a0, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %a1, %r1, 16;
  add.u64 %a2, %a0, %a1;
  ld.global.v2.f64 {%f0, %f1}, [%a2];
  { .param .align 8 .b8 b[16]; .param .align 16 .b8 q[16];
  st.param.v2.f64 [b], {%f0, %f1};
  call.uni (q), twice, (b);
  ld.param.f64 %f2, [q]; ld.param.f64 %f3, [q+8]; }
  st.global.v2.f64 [%a2], {%f2, %f3};
  ret;
}
"""


def test_vector_accesses_of_struct_parameters():
    """`ld/st.param.v2` of `.param` arrays (arguments and results) were refused as vector
    accesses of a struct parameter: one access per element."""
    data = np.arange(64, dtype=np.float64) * 1.25
    outs = []
    for cubin in (codegen.compile_ptx(VECTOR_STRUCT, "sm_89"), oracle.ptxas(VECTOR_STRUCT).output):
        buf = data.copy()
        res = run(cubin, "k", 1, 32, [buf])
        outs.append(buf)
    np.testing.assert_array_equal(outs[0], data * 2)
    np.testing.assert_array_equal(outs[1], data * 2)
