"""cvt.{rn,rz}[.relu|.satfinite].{f16,bf16}.f32 (scalar) as ptxas writes them from sm_80:
the packing convert F2FP into the low half (F2FP.PACK_AB d, RZ, a; F2FP.RELU/SATFINITE …
MERGE_C d, a, RZ), not F2F: a NaN becomes the canonical one (F2F keeps its payload, so a
signalling NaN 0x7f800001 gave 0x7e00 where ptxas's code gives 0x7fff), and .relu/.satfinite
were refused 'not supported yet'. Ours and ptxas's cubin run in the emulator on edge values."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program

FORMS = ["rz.ftz.f16", "rn.f16", "rm.f16", "rp.f16", "rn.bf16", "rz.bf16", "rn.relu.f16",
         "rn.satfinite.f16", "rn.relu.bf16"]
RZ_CLAMPS = ["rz.relu.f16", "rz.satfinite.f16", "rz.relu.satfinite.f16", "rz.relu.bf16",
             "rz.satfinite.bf16", "rz.relu.satfinite.bf16"]
FORMS += RZ_CLAMPS + ["rz.ftz.bf16", "rn.ftz.bf16", "rm.ftz.bf16"]
EDGES = [0x7F800001, 0xFFC00001, 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0x477FF000, 0x477FE000,
         0xC77FF000, 0x7F7FFFFF, 0xFF7FFFFF, 0x33800000, 0x33000001, 0x80000001, 0x00800000,
         0xBF800000, 0x80000000, 0x3F800001, 0x3F808000, 0x3F818000, 0xC2F6E979]
THREADS = 64


def _kernel(arch: str) -> str:
    body = "\n".join(f"cvt.{f}.f32 %h{k}, %r1;\nst.global.u16 [%rd3+{2 * k}], %h{k};"
                     for k, f in enumerate(FORMS))
    return (f".version 8.8\n.target {arch}\n.address_size 64\n"
            ".visible .entry k(.param .u64 pout, .param .u64 pin)\n{\n"
            ".reg .b16 %h<32>; .reg .b32 %r<3>; .reg .b64 %rd<6>;\n"
            "ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [pin];\n"
            "cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;\n"
            "mov.u32 %r2, %tid.x; mul.wide.u32 %rd4, %r2, 4; add.s64 %rd2, %rd2, %rd4;\n"
            f"mul.wide.u32 %rd4, %r2, {2 * len(FORMS)}; add.s64 %rd3, %rd1, %rd4;\n"
            "ld.global.u32 %r1, [%rd2];\n" + body + "\nret;\n}\n")


def _kinds(cubin):
    return sorted({" ".join((i.opcode,) + tuple(i.modifiers)) for _, i in load_program(cubin).instructions
                   if i.opcode in ("F2F", "F2FP")})


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_120"])
def test_scalar_half_converts_equal_ptxas(arch):
    ptx = _kernel(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    assert _kinds(ours) == _kinds(theirs.output)
    rng = np.random.default_rng(9)
    inputs = np.array(EDGES + [int(x) for x in rng.integers(0, 1 << 32, THREADS - len(EDGES))], np.uint32)
    outs = []
    for cubin, hazards in ((theirs.output, False), (ours, True)):
        out = np.zeros(THREADS * len(FORMS), np.uint16)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, inputs.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards), res.hazards[:2]
        outs.append(out.reshape(THREADS, len(FORMS)))
    assert (outs[0] == outs[1]).all()
    assert outs[1][0, 1] == 0x7FFF           # the signalling NaN: canonical
    for form in RZ_CLAMPS:                   # and the values are the manual's
        got = outs[1][:, FORMS.index(form)]
        assert [int(x) for x in got] == [_rz_clamped(int(x), form) for x in inputs], form


def _rz_clamped(bits: int, form: str) -> int:
    """cvt.rz{.relu}{.satfinite}.{f16,bf16}.f32 of f32 `bits` by exact arithmetic: rounded
    toward zero (a finite value never becomes infinite), .relu: negatives (and -0) to +0,
    .satfinite: infinities to the largest finite value; NaN: the canonical NaN."""
    x = float(np.uint32(bits).view(np.float32))
    if x != x:
        return 0x7FFF
    if "relu" in form and (x < 0 or (x == 0 and bits >> 31)):
        return 0
    sign = bits >> 31
    if "bf16" in form:
        out = bits >> 16                     # truncation is rounding toward zero
        largest = 0x7F7F
    else:
        h = np.float16(x)                    # rounded to nearest; step back if it grew
        if abs(float(h)) > abs(x):
            h = np.frombuffer(np.array([h.view(np.uint16) - 1], np.uint16).tobytes(), np.float16)[0]
        out = int(np.array([h], np.float16).view(np.uint16)[0])
        largest = 0x7BFF
    if "satfinite" in form and out & 0x7FFF == (0x7F80 if "bf16" in form else 0x7C00):
        out = (sign << 15) | largest
    return out


def test_sm75_keeps_f2f():
    ptx = _kernel("sm_75")
    # (sm_75's ptxas writes cvt.rz.f16.f32 as HADD2 R, R.F32, -RZ: not compared here)
    ptx = "\n".join(l for l in ptx.splitlines() if "relu" not in l and "satfinite" not in l
                    and "bf16" not in l and ".rz." not in l and "[%rd3+0]" not in l)
    theirs = oracle.ptxas(ptx, "sm_75")
    assert theirs.ok, theirs.stderr
    assert _kinds(ptx2sass.compile(ptx, "sm_75", "k.ptx")) == _kinds(theirs.output)


@pytest.mark.parametrize("use", [
    "st.global.u16 [%rd1], %h1;",
    "cvt.u32.u16 %r2, %h1; st.global.u32 [%rd1], %r2;",
    "cvt.u64.u16 %rd2, %h1; st.global.u64 [%rd1], %rd2;",
    "add.f16 %h2, %h1, %h1; st.global.u16 [%rd1], %h2;",
    "mov.b32 %r2, {%h1, %h1}; st.global.u32 [%rd1], %r2;",
    "cvt.s32.s16 %r2, %h1; st.global.u32 [%rd1], %r2;",
])
def test_f2f_where_ptxas_folds_a_zero_extension(use):
    """ptxas keeps F2F.F16.F32 where every reader zero-extends the half (cvt.u32/u64.u16),
    F2FP elsewhere; the same choice, so NaNs come out the same."""
    ptx = (".version 7.8\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
           ".reg .b16 %h<4>; .reg .b32 %r<4>; .reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\n"
           f"ld.global.u32 %r1, [%rd1];\ncvt.rn.f16.f32 %h1, %r1;\n{use}\nret;\n}}\n")
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok
    assert _kinds(ptx2sass.compile(ptx, "sm_89", "k.ptx")) == _kinds(theirs.output)
