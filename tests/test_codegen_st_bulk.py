"""`st.bulk [a], size, 0` (sm_100+: zero `size` bytes of shared::cta memory; was refused at
the line): UMEMSETS.64 [UR], URZ, UR(size / 8) as ptxas 13.5 writes it, once per distinct
(address, size) of the lanes (an R2UR loop where they differ or a guard applies); ptxas's
refusals of a bad size, initial value or state space in its words. Expected values: NumPy
(the bytes zeroed) and ptxas's cubin for the same arch in the emulator."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

THREADS = 64
WORDS = 256         # the shared array, 32-bit words
SIZE_PARAM = 40     # bytes, the kernel parameter `n`


def _ptx(arch, body=None):
    body = body or """
mov.u32 %r5, sh;
st.bulk.weak.shared::cta [%r5+64], 128, 0;
cvta.shared.u64 %rd5, sh;
st.bulk [%rd5+512], %rd2, 0;
and.b32 %r6, %r1, 3;
shl.b32 %r7, %r6, 5;
add.s32 %r7, %r7, 768;
add.s32 %r8, %r6, 1;
shl.b32 %r8, %r8, 3;
cvt.u64.u32 %rd6, %r8;
add.s32 %r9, %r5, %r7;
st.bulk.shared::cta [%r9], %rd6, 0;
setp.eq.u32 %p1, %r1, 5;
@%p1 st.bulk.shared::cta [%r5+320], 16, 0;
"""
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 n)
{{
.reg .b64 %rd<12>; .reg .b32 %r<16>; .reg .pred %p<2>;
.shared .align 16 .b32 sh[{WORDS}];
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [n];
mov.u32 %r1, %tid.x;
mov.u32 %r2, sh;
shl.b32 %r3, %r1, 4;
add.s32 %r3, %r2, %r3;
add.s32 %r4, %r1, 1;
st.shared.v4.u32 [%r3], {{%r4, %r4, %r4, %r4}};
bar.sync 0;
{body}
bar.sync 0;
ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r3];
mul.wide.u32 %rd7, %r1, 16;
add.s64 %rd8, %rd1, %rd7;
st.global.v4.u32 [%rd8], {{%r10, %r11, %r12, %r13}};
ret;
}}"""


def _expected():
    b = np.repeat(np.arange(1, THREADS + 1, dtype=np.uint32), 4).view(np.uint8).copy()
    b[64:64 + 128] = 0
    b[512:512 + SIZE_PARAM] = 0
    for lane in range(4):
        b[768 + 32 * lane:768 + 32 * lane + 8 * (lane + 1)] = 0
    b[320:336] = 0
    return b.view(np.uint32)


def _run(cubin):
    out = np.zeros(WORDS, np.uint32)
    res = run(cubin, "k", 1, THREADS, [out, np.uint64(SIZE_PARAM)], hazard_check=True)
    return out, res.hazards


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_st_bulk_zeroes_as_numpy_and_ptxas(arch):
    want = _expected()
    theirs, _ = _run(oracle.ptxas(_ptx(arch), arch).output)
    np.testing.assert_array_equal(theirs, want)
    ours, hazards = _run(codegen.compile_ptx(_ptx(arch), arch))
    assert not hazards, hazards[:3]
    np.testing.assert_array_equal(ours, want)


REFUSALS = [
    ("st.bulk [%rd1], 64, 1;", "Argument 2 of instruction 'st.bulk': unexpected value '1', expected to be zero"),
    ("st.bulk [%rd1], 60, 0;", "Argument 1 of instruction 'st.bulk': unexpected value '60', expected to be multiple of 8"),
    ("st.bulk [%rd1], %rd2, %rd2;", "Arguments mismatch for instruction 'st.bulk'"),
    ("st.bulk.shared::cluster [%rd1], 64, 0;", "State space incorrect for instruction 'st.bulk', expected '.shared::cta'"),
    ("st.bulk.global [%rd1], 64, 0;", "State space incorrect for instruction 'st.bulk'"),
]


@pytest.mark.parametrize("line,message", REFUSALS)
def test_st_bulk_refusals_as_ptxas(line, message):
    ptx = _ptx("sm_100", line)
    theirs = oracle.ptxas(ptx, "sm_100")
    assert not theirs.ok and f"line 16; error   : {message}\n" in theirs.stderr
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, "sm_100")
    assert any(d.line == 16 and d.message == message for d in e.value.diagnostics), str(e.value)


def _size_register_ptx(version, reg_type):
    return f""".version {version}
.target sm_100
.address_size 64
.visible .entry k(.param .u64 n)
{{
.reg .b64 %rd<2>; .reg .{reg_type} %s;
.shared .align 8 .b8 buf[1024];
ld.param.{reg_type} %s, [n];
mov.u64 %rd1, buf;
st.bulk.shared::cta [%rd1], %s, 0;
ret;
}}"""


@pytest.mark.parametrize("version", ["8.6", "9.0"])
@pytest.mark.parametrize("reg_type", ["b32", "u32", "s32", "f32", "b16", "u16", "s16", "u8",
                                      "b64", "u64", "s64", "f64"])
def test_st_bulk_size_register_types_as_ptxas(version, reg_type):
    """A size register must be a 64- or 32-bit integer, and .b32/.u32 need PTX 9.0 (ptxas
    takes .s32 at any version): accepted or refused with ptxas's message, as the
    oracle decides for the same module."""
    ptx = _size_register_ptx(version, reg_type)
    theirs = oracle.ptxas(ptx, "sm_100")
    errors = [ln.split("error   : ", 1)[1] for ln in theirs.stderr.splitlines() if "error   : " in ln]
    if theirs.ok:
        codegen.compile_ptx(ptx, "sm_100")
        return
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, "sm_100")
    assert [d.message for d in e.value.diagnostics if d.line == 10] == errors, str(e.value)
