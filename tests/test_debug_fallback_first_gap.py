"""Under -g every `.func` stays out of line; where that meets a gap ("not supported yet"), the
module is compiled again with its functions inlined. When the inlined compile meets a gap of its
own, the error reported is the first one, the -g compile's: nvcc -G's cub_device.cu on sm_120
reported a struct field "accessed at two widths" (a gap of the inlined fallback only) where the
-g compile had stopped at `cp.async.bulk ... .ignore_oob` (found by tools/realworld_debug;
compiled since branch isa34). ptxas compiles this module; `copy_oob` now holds sm_120's bulk
multicast (ptxas: a call to a routine of its own; ours: "not supported yet"): the day that
is supported, put another unsupported instruction there."""
import pytest

from ptx2sass import CompileError, codegen, oracle

PTX = """.version 9.5
.target sm_120
.address_size 64

.func (.param .b32 r) low(.param .align 8 .b8 s[8])
{
  .reg .b16 %rs<2>; .reg .b32 %r<2>;
  ld.param.u16 %rs1, [s+0];
  cvt.u32.u16 %r1, %rs1;
  st.param.b32 [r], %r1;
  ret;
}

.weak .func copy_oob(.param .b32 dst, .param .b64 src, .param .b32 bar)
{
  .reg .b32 %r<6>; .reg .b64 %rd<2>; .reg .b16 %h1;
  ld.param.b32 %r4, [dst];
  ld.param.b64 %rd1, [src];
  ld.param.b32 %r5, [bar];
  mov.u32 %r1, 64; mov.u32 %r2, 0; mov.u32 %r3, 0;
  cvt.u16.u32 %h1, %r2;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r4], [%rd1], %r1, [%r5], %h1;
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>; .reg .pred %p9;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  { .param .align 8 .b8 s[8]; .param .b32 pr; st.param.b32 [s+0], %r1; st.param.b32 [s+4], 0;
    call (pr), low, (s); ld.param.b32 %r2, [pr]; }
  setp.eq.u32 %p9, %r1, 99;
  @%p9 bra SKIP;
  { .param .b32 a0; .param .b64 a1; .param .b32 a2; st.param.b32 [a0], 0; st.param.b64 [a1], %rd1; st.param.b32 [a2], 0; call copy_oob, (a0, a1, a2); }
SKIP:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def test_the_g_compile_s_own_gap_is_reported():
    assert oracle.ptxas(PTX, "sm_120", ("-g",), name="k.ptx").ok
    with pytest.raises(CompileError) as err:
        codegen.compile_ptx(PTX, "sm_120", "k.ptx", debug=True, opt_level=0)
    assert "multicast::cluster` on sm_120" in str(err.value) and "two widths" not in str(err.value), str(err.value)
