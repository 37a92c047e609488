"""sm_120a's FP6/FP4 and block-scaled `mma.sync` (branch mma120_31): kind::f8f6f4 with
e2m1/e2m3/e3m2 operands (QMMA.16832.<A>.<B>), kind::mxf8f6f4 (QMMA.SF.16832 ... .E8) and
kind::mxf4 / mxf4nvf4 (OMMA.SF.16864 ... .E8|.UE4M3[.4X]) with `scale-a, {byte-id-a,
thread-id-a}, scale-b, {byte-id-b, thread-id-b}` (the selectors in one uniform register, as
ptxas 13.5.37 writes them), and ptxas's refusals (frontend/mma_narrow.py).

Expected values: NumPy's A·B + C from the PTX ISA's m16n8k32 8-bit fragment layout and the
OCP MX element definitions written out here (each element in a byte: e2m1 in bits 2-5, fp6 in
the low six bits), with ptxas's cubin and ours run in the emulator; ptxas's SASS line and
error lines. Block-scaled values are not modelled (the emulator faults naming it): the
scale-factor layout of the selectors was not read from the PTX ISA."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from tests.mma_sm120_values import element_codes as _codes, element_value as _value, mma_lines as _lines, \
    run_both as _run_both
from tools import mma_sm120_sweep as sweep

G, T = np.arange(32) // 4, np.arange(32) % 4
KERNEL = """.version 9.2
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b64 %rd<8>; .reg .b32 %r<24>; .reg .f32 %f<8>;
    ld.param.u64 %rd2, [out]; ld.param.u64 %rd1, [in];
    mov.u32 %r20, %laneid; mul.wide.u32 %rd3, %r20, 64; add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r20, 16; add.s64 %rd5, %rd2, %rd3;
    ld.global.v4.b32 {{%r0, %r1, %r2, %r3}}, [%rd4];
    ld.global.v2.b32 {{%r4, %r5}}, [%rd4+16];
    ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [%rd4+32];
    ld.global.v2.b32 {{%r6, %r7}}, [%rd4+32];
    ld.global.v2.b32 {{%r10, %r11}}, [%rd4+48];
{body}
    ret;
}}
"""
F32_BODY = """    mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.{a}.{b}.f32 {{%f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, {{%f0, %f1, %f2, %f3}};
    st.global.v4.f32 [%rd5], {{%f4, %f5, %f6, %f7}};"""
F16_BODY = """    mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f16.{a}.{b}.f16 {{%r8, %r9}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, {{%r6, %r7}};
    st.global.v2.b32 [%rd5], {{%r8, %r9}};"""


def _fragments(rng, a_kind, b_kind, acc):
    """Per-lane input words (A 4, B 2, C 4 f32 or 2 f16x2) and the expected D words."""
    A = _codes(rng, a_kind, 16 * 32).reshape(16, 32)
    B = _codes(rng, b_kind, 32 * 8).reshape(32, 8)
    C = rng.normal(0, 4, (16, 8)).astype(np.float32 if acc == "f32" else np.float16).astype(np.float64)
    words = np.zeros((32, 16), dtype=np.uint32)
    for i in range(4):           # A register i: row g (+8 for odd i), k 4t + 16 (i // 2) + byte
        row, k0 = G + 8 * (i % 2), 4 * T + 16 * (i // 2)
        words[:, i] = sum(A[row, k0 + j].astype(np.uint32) << (8 * j) for j in range(4))
    for i in range(2):           # B register i: column g, k 4t + 16 i + byte
        words[:, 4 + i] = sum(B[4 * T + 16 * i + j, G].astype(np.uint32) << (8 * j) for j in range(4))
    Av = np.vectorize(lambda c: _value(int(c), a_kind))(A)
    Bv = np.vectorize(lambda c: _value(int(c), b_kind))(B)
    D = Av @ Bv + C              # exact in FP64 for these inputs
    if acc == "f32":
        for h in range(2):
            for e in range(2):
                words[:, 8 + 2 * h + e] = C[G + 8 * h, 2 * T + e].astype(np.float32).view(np.uint32)
        expect = np.stack([D[G + 8 * h, 2 * T + e].astype(np.float32).view(np.uint32)
                           for h in range(2) for e in range(2)], axis=1)
    else:
        def pack(M, h):
            lo = M[G + 8 * h, 2 * T].astype(np.float16).view(np.uint16).astype(np.uint32)
            hi = M[G + 8 * h, 2 * T + 1].astype(np.float16).view(np.uint16).astype(np.uint32)
            return lo | hi << 16
        words[:, 8], words[:, 9] = pack(C, 0), pack(C, 1)
        expect = np.stack([pack(D, 0), pack(D, 1)], axis=1)
    return words.reshape(-1), expect


PAIRS = [("e2m1", "e2m1"), ("e2m3", "e3m2"), ("e3m2", "e4m3"), ("e5m2", "e2m1"), ("e4m3", "e2m3")]


@pytest.mark.parametrize("a,b", PAIRS)
def test_f8f6f4_values_f32(a, b):
    """QMMA.16832.F32.<A>.<B> on sm_120a: ours and ptxas's cubin = NumPy."""
    data, expect = _fragments(np.random.default_rng(hash((a, b)) % 1000), a, b, "f32")
    ptx = KERNEL.format(target="sm_120a", body=F32_BODY.format(a=a, b=b))
    for out in _run_both(ptx, "sm_120a", data, 4):
        np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("a,b,target", [("e2m1", "e3m2", "sm_120a"), ("e2m3", "e2m3", "sm_121a")])
def test_f8f6f4_values_f16(a, b, target):
    """F16 accumulators (QMMA.16832.F16.<A>.<B>), also on sm_121a."""
    data, expect = _fragments(np.random.default_rng(7), a, b, "f16")
    ptx = KERNEL.format(target=target, body=F16_BODY.format(a=a, b=b))
    for out in _run_both(ptx, target, data, 2):
        np.testing.assert_array_equal(out, expect)


SCALED = [
    ("m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e2m1.e3m2.f32.ue8m0", "{0, 0}", "{0, 0}", "sm_120a"),
    ("m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m3.f32.ue8m0", "{3, 1}", "{2, 3}", "sm_120a"),
    ("m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", "{2, 1}", "{0, 0}", "sm_120a"),
    ("m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", "{0, 0}", "{2, 1}", "sm_121a"),
    ("m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3", "{0, 1}", "{0, 3}", "sm_120f"),
    ("m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0", "{0, 0}", "{0, 0}", "sm_121f"),
]


def _scaled_kernel(form, sel_a, sel_b, target):
    body = (f"    mma.sync.aligned.{form} {{%f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, "
            f"{{%f0, %f1, %f2, %f3}}, %r10, {sel_a}, %r11, {sel_b};\n"
            "    st.global.v4.f32 [%rd5], {%f4, %f5, %f6, %f7};")
    return KERNEL.format(target=target, body=body)


@pytest.mark.parametrize("form,sel_a,sel_b,target", SCALED)
def test_block_scaled_instruction(form, sel_a, sel_b, target):
    """QMMA.SF / OMMA.SF line = ptxas's (the selector UMOV's value too)."""
    ptx = _scaled_kernel(form, sel_a, sel_b, target)
    theirs = _lines(oracle.ptxas(ptx, arch=target).output)
    assert any("MMA.SF" in line for line in theirs)
    assert _lines(codegen.compile_ptx(ptx, target, "k.ptx")) == theirs


@pytest.mark.parametrize("fp6", [("e2m1", "e3m2"), ("e2m3", "e5m2")])
def test_f8f6f4_instruction(fp6):
    ptx = KERNEL.format(target="sm_120a", body=F32_BODY.format(a=fp6[0], b=fp6[1]))
    assert _lines(codegen.compile_ptx(ptx, "sm_120a", "k.ptx")) == \
        _lines(oracle.ptxas(ptx, arch="sm_120a").output)


@pytest.mark.parametrize("index", [0, 2, 4])
def test_block_scaled_emulator_faults(index):
    """Block scaling is not modelled: ptxas's cubin and ours fault naming it."""
    form, sel_a, sel_b, target = SCALED[index]
    ptx = _scaled_kernel(form, sel_a, sel_b, target)
    data = np.zeros(32 * 16, dtype=np.uint32)
    for cubin in (codegen.compile_ptx(ptx, target, "k.ptx"), oracle.ptxas(ptx, arch=target).output):
        with pytest.raises(EmuFault, match="block-scaled"):
            run(cubin, "k", (1, 1, 1), (32, 1, 1), [np.zeros(128, dtype=np.uint32), data])


REFUSALS = [
    # (instruction, target, version)
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {4, 0}, s1, {0, 0};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {0, 2}, s1, {0, 4};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {1, 0}, s1, {0, 0};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e2m1.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {4, 2}, s1, {4, 4};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
     + sweep.OPERANDS + ", s0, {4, 2}, s1, {4, 4};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
     + sweep.OPERANDS + ", s0, {0, 0}, s1, {2, 0};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {0, 0}, s1, {0, 0};", "sm_120a", "9.0"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e2m1.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {s1, 0}, s1, {0, 0};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e2m1.f32.ue8m0 "
     + sweep.OPERANDS + ", 3, {0, 0}, s1, {0, 0};", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 " + sweep.OPERANDS + ";", "sm_120", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 " + sweep.OPERANDS + ";", "sm_100a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e2m1.e3m2.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {0, 0}, s1, {0, 0};", "sm_100f", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e2m1.e3m2.f32.ue8m0 "
     + sweep.OPERANDS + ", s0, {0, 0}, s1, {0, 0};", "sm_90a", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e3m2.f32 " + sweep.OPERANDS + ";", "sm_80", "9.2"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e2m1.e2m1.f32 " + sweep.OPERANDS + ";", "sm_120a", "9.2"),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue4m3 "
     + sweep.OPERANDS + ", s0, {0, 0}, s1, {0, 0};", "sm_120a", "9.2"),
]


@pytest.mark.parametrize("mma,target,version", REFUSALS)
def test_refusals(mma, target, version):
    """Our error lines (line and text, in order) = ptxas's."""
    same, theirs, ours = sweep.compare(sweep.module(mma, target, version), target)
    assert theirs != "ok"
    assert same, (theirs, ours)


@pytest.mark.parametrize("start", range(0, 1410, 141))
def test_sweep_sample(start):
    """Every 47th form of tools/mma_sm120_sweep.py's modifier sweep (30 forms)."""
    forms = list(sweep.forms())
    for mma in forms[start:start + 141:47]:
        same, theirs, ours = sweep.compare(sweep.module(mma), "sm_120a")
        assert same, (mma, theirs, ours)


@pytest.mark.parametrize("start", range(0, 2808, 702))
def test_held_out_sample(start):
    """Every 53rd form of the `--held-out` sweep (sm_121f, PTX 9.1: mixed types, f16
    accumulators, m16n8k16, selector values; 53 forms)."""
    forms = list(sweep.held_out_forms())
    for mma in forms[start:start + 702:53]:
        same, theirs, ours = sweep.compare(sweep.module(mma, "sm_121f", "9.1"), "sm_121f")
        assert same, (mma, theirs, ours)
