"""Floating-point code generation: our cubin and ptxas's run in the emulator on special and
random inputs must agree bit for bit (the operations here are exact, not approximations)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.emu import run
from ptx2sass import codegen, oracle

N = 64

# One thread per element: out[i] = OP(a[i], b[i]).
BINARY_KERNEL = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po){{
.reg .f32 %f<4>; .reg .b32 %r<2>; .reg .b64 %rd<8>;
ld.param.u64 %rd1,[pa]; ld.param.u64 %rd2,[pb]; ld.param.u64 %rd3,[po];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 4;
add.s64 %rd5, %rd1, %rd4; add.s64 %rd6, %rd2, %rd4; add.s64 %rd7, %rd3, %rd4;
ld.global.f32 %f1,[%rd5]; ld.global.f32 %f2,[%rd6];
{op} %f3, %f1, {b};
st.global.f32 [%rd7], %f3;
ret;}}
"""


def _special_f32(rng) -> tuple[np.ndarray, np.ndarray]:
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-39,
                         -1e-39, 3.4e38, -3.4e38, 1.17549435e-38], dtype=np.float32)
    a = np.concatenate([np.repeat(specials, len(specials)), rng.standard_normal(N)]).astype(np.float32)
    b = np.concatenate([np.tile(specials, len(specials)), rng.standard_normal(N)]).astype(np.float32)
    # NaN with a payload, to see which NaN comes out.
    a[-1] = np.frombuffer(np.uint32(0x7FC01234).tobytes(), np.float32)[0]
    return a[:256], b[:256]


def _run_both(ptx: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "t.ptx"), "sm_89", filename="t.ptx")
    theirs = oracle.ptxas(ptx).output
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros_like(a)
        res = run(cubin, "k", 1, len(a), [a.copy(), b.copy(), out])
        assert not res.hazards, [str(h) for h in res.hazards[:5]]
        outs.append(out.view(np.uint32))
    return outs[0], outs[1]


@pytest.mark.parametrize("op", ["max.f32", "min.f32", "max.ftz.f32", "min.ftz.f32",
                                "max.NaN.f32", "min.NaN.f32"])
@pytest.mark.parametrize("b", ["%f2", "0f3F800000"])
def test_min_max_f32_matches_ptxas(op, b):
    a, bb = _special_f32(np.random.default_rng(1))
    ours, theirs = _run_both(BINARY_KERNEL.format(op=op, b=b), a, bb)
    np.testing.assert_array_equal(ours, theirs)


def test_min_max_nan_keeps_the_nan_modifier():
    """The emulator's FMNMX ignores .NAN, so the run above cannot see it: read our cubin back."""
    ptx = BINARY_KERNEL.format(op="min.NaN.f32", b="%f2")
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "t.ptx"), "sm_89", filename="t.ptx")
    assert "FMNMX.NAN" in oracle.nvdisasm(ours)


@pytest.mark.parametrize("mods", ["sat", "ftz.sat", "rni.sat", "rmi.ftz.sat", "rzi.sat", "rpi.sat"])
def test_cvt_saturate_f32(mods):
    """Clamp to [0, 1], NaN to zero, after rounding to an integer when asked."""
    from codegen_harness import SPECIAL, run_both
    ours, theirs, _ = run_both(f"cvt.{mods}.f32.f32 %o, %a0;", 32, 1, 32,
                               values=SPECIAL[32] + [0x3F000000, 0x3F7FFFFF, 0x3FC00000, 0xBF000000])
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["abs.f64", "neg.f64", "abs.f32", "neg.f32", "abs.ftz.f32", "neg.ftz.f32"])
def test_abs_neg_match_ptxas(op):
    """Sign operations, NaN payloads and subnormals included (f64: DADD -RZ, |x| / -x)."""
    from codegen_harness import run_both
    bits = 64 if op.endswith("f64") else 32
    ours, theirs, _ = run_both(f"{op} %o, %a0;", bits, 1, bits)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("bits,const", [(32, "0f7FF00000"), (32, "0fFF812345"), (64, "0d7FF0000100000000")])
def test_nan_payload_constants_keep_their_bits(bits, const):
    """selp of a NaN constant returns its exact bits (PTX moves bits; ptxas writes FSEL with a
    `+QNAN` immediate whose payload nvdisasm's text hides, and the emulator must use the
    word's bits, not the text's default NaN)."""
    from codegen_harness import run_both
    body = f"setp.ne.b{bits} %p0, %a0, 0; selp.f{bits} %o, %a0, {const}, %p0;"
    ours, theirs, data = run_both(body, bits, 1, bits)
    value = int(const[2:], 16)
    want = np.where(data != 0, data, value).astype(ours.dtype)
    np.testing.assert_array_equal(theirs, want)
    np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("mods", ["", ".rn", ".rz", ".rm", ".rp", ".ftz", ".sat", ".rz.ftz.sat"])
@pytest.mark.parametrize("imm", ["0f3F800000", "0fBFC00001", "0f80000000", "0f7F800000", "0f00000001"])
def test_sub_of_an_immediate_subtracts(mods, imm):
    """`sub.f32 d, a, IMM` is a + (-IMM): the immediate's sign must flip in the word (an
    immediate's negation is not a modifier of FADD), in every rounding mode."""
    from codegen_harness import run_both
    ours, theirs, data = run_both(f"sub{mods}.f32 %o, %a0, {imm};", 32, 1, 32)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("body", ["mul.f32 %x0, %a0, %a1; sub.f32 %o, %x0, 0f3FC00000;",
                                  "mul.f32 %x0, %a0, 0f40400000; sub.f32 %o, %a1, %x0;",
                                  "neg.f32 %x1, %a1; fma.rn.f32 %o, %a0, %x1, 0fC0000000;"])
def test_contracted_subtraction_of_an_immediate(body):
    from codegen_harness import run_both
    ours, theirs, data = run_both(body, 32, 2, 32)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("body", ["div.approx.ftz.f32 %o, %a0, %a1;", "div.approx.f32 %o, %a0, %a1;",
                                  "div.approx.ftz.f32 %o, %a0, 0f00000000;", "div.approx.f32 %o, %a0, 0f00000000;",
                                  "div.approx.ftz.f32 %o, 0f40000000, %a0;", "div.approx.ftz.f32 %o, %a0, 0f40800000;",
                                  "div.approx.ftz.f32 %o, 0f00000000, %a0;"])
def test_approximate_division(body):
    """div.approx: a * MUFU.RCP(b), with .ftz flushing subnormal inputs and result (without
    .ftz, ptxas scales tiny divisors first); a zero immediate is a valid operand."""
    from codegen_harness import run_both
    n = body.count("%a")
    ours, theirs, data = run_both(body, 32, n, 32)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[n * i]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("body", ["add.sat.s32 %o, %a0, 0;", "add.sat.s32 %o, 0, %a0;",
                                  "add.sat.s32 %o, %a0, -5;", "add.sat.s32 %o, %a0, 0x7FFFFFFF;",
                                  # 0 - a: an internal error; ptxas's words for a - imm did not
                                  # decode (PLOP3 of a uniform register's .SIGN)
                                  "sub.sat.s32 %o, 0, %a0;", "sub.sat.s32 %o, %a0, 0;",
                                  "sub.sat.s32 %o, %a0, -2147483648;", "sub.sat.s32 %o, 77, %a0;"])
def test_saturating_add_of_an_immediate(body):
    from codegen_harness import run_both
    ours, theirs, data = run_both(body, 32, 1, 32, values=[0, 1, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x80000004])
    assert (ours == theirs).all()


def test_approximate_f64_reciprocal_with_ftz():
    """rcp.approx.ftz.f64 (was refused): MUFU.RCP64H of the high word, the low word zero."""
    from codegen_harness import run_both
    ours, theirs, data = run_both("rcp.approx.ftz.f64 %o, %a0;", 64, 1, 64)
    assert (ours == theirs).all()
