"""alloca / stacksave / stackrestore: values computed through dynamically allocated local
memory equal ptxas's code and the PTX meaning (NumPy) in the emulator, the pointers'
alignment and reuse follow the PTX ISA, and the cubin's stack records are ptxas's
(MIN_STACK_SIZE and CRS_STACK_SIZE unknown, 0xffffffff; FRAME_SIZE the static frame)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

THREADS = 32


def _both(ptx: str):
    theirs = oracle.ptxas(ptx)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    return ours, theirs.output


# Each thread: n = 1 + tid % 7 words; a (n*4 bytes, aligned `align`) filled with tid*i,
# summed back; stacksave, a 40-byte b, stackrestore, c of 40 bytes must reuse b's address;
# a static local array indexed at run time must survive all of it.
# out[tid] = {sum, (a % align == 0), (b == c), (a - b >= 40), static word, (b % 8 == 0)}
SUMS = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<16>;
.reg .pred %p<4>;
.local .align 4 .b8 arr[32];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 24;
add.s64 %rd1, %rd1, %rd2;
and.b32 %r9, %r1, 7;
mul.wide.u32 %rd12, %r9, 4;
mov.u64 %rd13, arr;
add.s64 %rd13, %rd13, %rd12;
xor.b32 %r10, %r1, 0x5a5a;
st.local.u32 [%rd13], %r10;
rem.u32 %r2, %r1, 7;
add.u32 %r2, %r2, 1;
mul.wide.u32 %rd3, %r2, 4;
alloca.{ty} {a}, {size}, {align};
{a_to_64}
mov.u32 %r3, 0;
L_fill:
mul.wide.u32 %rd5, %r3, 4;
add.s64 %rd6, %rd4, %rd5;
mul.lo.u32 %r4, %r1, %r3;
st.local.u32 [%rd6], %r4;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p1, %r3, %r2;
@%p1 bra L_fill;
mov.u32 %r3, 0;
mov.u32 %r5, 0;
L_sum:
mul.wide.u32 %rd5, %r3, 4;
add.s64 %rd6, %rd4, %rd5;
ld.local.u32 %r4, [%rd6];
add.u32 %r5, %r5, %r4;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p1, %r3, %r2;
@%p1 bra L_sum;
st.global.u32 [%rd1], %r5;
cvt.u32.u64 %r6, %rd4;
rem.u32 %r7, %r6, {align};
setp.eq.u32 %p2, %r7, 0;
selp.u32 %r7, 1, 0, %p2;
st.global.u32 [%rd1+4], %r7;
stacksave.u64 %rd7;
alloca.u64 %rd8, 40;
st.local.u32 [%rd8+36], %r1;
stackrestore.u64 %rd7;
alloca.u64 %rd9, 40;
setp.eq.u64 %p2, %rd8, %rd9;
selp.u32 %r7, 1, 0, %p2;
st.global.u32 [%rd1+8], %r7;
sub.s64 %rd10, %rd4, %rd8;
setp.ge.s64 %p2, %rd10, 40;
selp.u32 %r7, 1, 0, %p2;
st.global.u32 [%rd1+12], %r7;
ld.local.u32 %r8, [%rd13];
st.global.u32 [%rd1+16], %r8;
cvt.u32.u64 %r6, %rd8;
and.b32 %r7, %r6, 7;
setp.eq.u32 %p2, %r7, 0;
selp.u32 %r7, 1, 0, %p2;
st.global.u32 [%rd1+20], %r7;
ret;
}}
"""


def _sums_kernel(ty: str, align: int) -> str:
    if ty == "u64":
        return SUMS.format(ty=ty, a="%rd4", size="%rd3", align=align, a_to_64="")
    return SUMS.format(ty=ty, a="%r11", size="%r12", align=align,
                       a_to_64="cvt.u64.u32 %rd4, %r11;").replace(
        "alloca.u32", "cvt.u32.u64 %r12, %rd3;\nalloca.u32")


@pytest.mark.parametrize("ty,align", [("u64", 8), ("u64", 16), ("u64", 128), ("u32", 4),
                                      ("u32", 32)])
def test_alloca_values_and_pointers(ty, align):
    ptx = _sums_kernel(ty, align)
    tid = np.arange(THREADS)
    n = 1 + tid % 7
    want = np.stack([tid * (n * (n - 1) // 2), np.ones(THREADS), np.ones(THREADS),
                     np.ones(THREADS), tid ^ 0x5A5A, np.ones(THREADS)], axis=1).astype(np.uint32)
    for cubin, check in zip(_both(ptx), (True, False)):
        out = np.zeros((THREADS, 6), dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out], hazard_check=check)
        assert not (check and res.hazards), res.hazards[:1]
        np.testing.assert_array_equal(out, want)


def test_stack_records_are_ptxas():
    ours, theirs = _both(_sums_kernel("u64", 16))
    a, b = read_cubin(ours).kernels[0], read_cubin(theirs).kernels[0]
    assert a.min_stack_size == b.min_stack_size == 0xFFFFFFFF
    assert a.crs_stack_size == b.crs_stack_size == 0xFFFFFFFF


GUARDED = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
.reg .b64 %rd<8>;
.reg .b32 %r<8>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd1, %rd1, %rd2;
stacksave.u64 %rd3;
mov.u64 %rd4, %rd3;
setp.lt.u32 %p1, %r1, 10;
@%p1 alloca.u64 %rd4, 64, 16;
sub.s64 %rd5, %rd3, %rd4;
cvt.u32.u64 %r2, %rd5;
st.global.u32 [%rd1], %r2;
ret;
}
"""


def test_guarded_alloca():
    """`@p alloca`: threads whose guard is false keep the old register (distance 0), the
    others get 64 bytes below the saved pointer, rounded down to 16 (64 to 79 bytes)."""
    for cubin, check in zip(_both(GUARDED), (True, False)):
        out = np.zeros(THREADS, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out], hazard_check=check)
        assert not (check and res.hazards)
        assert (out[10:] == 0).all()
        assert ((out[:10] >= 64) & (out[:10] < 80)).all()


INLINED = """.version 8.5
.target sm_89
.address_size 64
.func (.reg .b32 r) f(.reg .b32 n)
{
.reg .b64 %rd<4>;
.reg .b32 %t;
mul.wide.u32 %rd1, n, 4;
alloca.u64 %rd2, %rd1, 16;
st.local.u32 [%rd2], n;
ld.local.u32 %t, [%rd2];
add.u32 r, %t, 1;
ret;
}
.visible .entry k(.param .u64 out, .param .u32 n)
{
.reg .b64 %rd<10>;
.reg .b32 %r<10>;
.reg .pred %p;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd4, %rd1;
mov.u32 %r3, 0;
mov.u32 %r4, 0;
L:
call (%r2), f, (%r1);
add.u32 %r3, %r3, %r2;
add.u32 %r4, %r4, 1;
setp.lt.u32 %p, %r4, 200;
@%p bra L;
st.global.u32 [%rd4], %r3;
ret;
}
"""


def test_callee_alloca_is_freed_at_return():
    """A called function's alloca memory ends with the call (ptxas restores the stack
    pointer on return): 200 calls of 64 bytes each fit in the 1 KB stack."""
    for cubin, check in zip(_both(INLINED), (True, False)):
        out = np.zeros(1, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out, np.uint32(16)], hazard_check=check)
        assert not (check and res.hazards)
        assert out[0] == 200 * 17


@pytest.mark.parametrize("body", ["alloca.u32 %r2, %r1;", "stacksave.u32 %r2;",
                                  "stackrestore.u32 %r1;", "stacksave.u64 %rd2;\nalloca.u64 %rd3, 16;"])
def test_records_of_dead_or_partial_uses(body):
    """ptxas calls the stack unknown wherever an alloca or stackrestore is written, even
    with its result unused; a stacksave alone leaves the records as they were."""
    ptx = f""".version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<4>;
ld.param.u32 %r1, [out];
{body}
ret;
}}
"""
    ours, theirs = _both(ptx)
    a, b = read_cubin(ours).kernels[0], read_cubin(theirs).kernels[0]
    assert (a.min_stack_size, a.crs_stack_size, a.frame_size) == \
        (b.min_stack_size, b.crs_stack_size, b.frame_size)
