"""sm_120a's sparse `mma.sp::ordered_metadata` with `.kind::*` (branch sparse120): kind::f8f6f4
(QMMA.SP.16864.<F32|F16>.<A>.<B> D, A, B, C, E, 0x0), kind::mxf8f6f4 (QMMA.SF.SP.16864 ... .E8)
and kind::mxf4 / mxf4nvf4 (OMMA.SF.SP.168128 ... .E8|.UE4M3[.4X] D, A, B, C, {E, scale-a},
scale-b, URsel, 0x0), as ptxas 13.5.37 writes them.

Expected values: the sparse m16n8k64 product from the PTX ISA's definitions written out here
(sparse matrix storage: each chunk of four A elements holds two, their 2-bit positions in the
metadata; the sparse m16n8k64 8-bit fragments: register i of lane 4g+t holds the four kept
elements of row g + 8 (i % 2), columns 8t + 32 (i // 2) .. +7; metadata thread i of the quad
(sparsity selector 0) holds register i's positions, thread t's at bits 8t..8t+7; B register i
holds k 16i + 4t .. +3 of column g), the OCP element definitions of the dense test; ptxas's
cubin and ours run in the emulator. Block-scaled values are not modelled (the emulator
faults, as for the dense block-scaled forms). SASS lines, nv.info's SPARSE_MMA_MASK and the
refusals come from ptxas."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from tests.mma_sm120_values import element_codes as _codes, element_value as _value, mma_lines, \
    run_both as _run_both
from tools.mma_sparse_sm120_forms import KERNEL as FORMS_KERNEL

G, T = np.arange(32) // 4, np.arange(32) % 4
# the forms tool's kernel (fragments loaded per lane), the mma and its store as one body
KERNEL = FORMS_KERNEL.replace("    {mma}\n    {store}\n", "{body}\n")
SP = "mma.sp::ordered_metadata.sync.aligned"
F32_BODY = f"""    {SP}.m16n8k64.row.col.kind::f8f6f4.f32.{{a}}.{{b}}.f32 {{{{%f4, %f5, %f6, %f7}}}}, {{{{%r0, %r1, %r2, %r3}}}}, {{{{%r4, %r5, %r6, %r7}}}}, {{{{%f0, %f1, %f2, %f3}}}}, %r12, 0;
    st.global.v4.f32 [%rd5], {{{{%f4, %f5, %f6, %f7}}}};"""
F16_BODY = f"""    {SP}.m16n8k64.row.col.kind::f8f6f4.f16.{{a}}.{{b}}.f16 {{{{%r14, %r15}}}}, {{{{%r0, %r1, %r2, %r3}}}}, {{{{%r4, %r5, %r6, %r7}}}}, {{{{%r8, %r9}}}}, %r12, 0;
    st.global.v2.b32 [%rd5], {{{{%r14, %r15}}}};"""


# the six ordered position pairs of a 2:4 chunk (`.sp::ordered_metadata`: increasing)
PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def _fragments(rng, a_kind, b_kind, acc):
    """Per-lane input words (A 4, B 4, C 4 f32 or 2 f16x2, metadata 1) and the expected D."""
    kept = _codes(rng, a_kind, 16 * 32).reshape(16, 32)       # the compressed 16 x 32 A
    where = rng.integers(0, 6, (16, 16))                       # each chunk's position pair
    dense = np.zeros((16, 64))
    for r in range(16):
        for c in range(16):
            for j, p in enumerate(PAIRS[where[r, c]]):
                dense[r, 4 * c + p] = _value(int(kept[r, 2 * c + j]), a_kind)
    B = _codes(rng, b_kind, 64 * 8).reshape(64, 8)
    C = rng.normal(0, 4, (16, 8)).astype(np.float32 if acc == "f32" else np.float16).astype(np.float64)
    words = np.zeros((32, 16), dtype=np.uint32)
    for i in range(4):
        row, k0 = G + 8 * (i % 2), 16 * (i // 2) + 4 * T       # compressed columns k0..k0+3
        words[:, i] = sum(kept[row, k0 + j].astype(np.uint32) << (8 * j) for j in range(4))
        words[:, 4 + i] = sum(B[16 * i + 4 * T + j, G].astype(np.uint32) << (8 * j) for j in range(4))
    # metadata: lane 4g + i holds register i's positions, thread t's four at bits 8t..8t+7
    for lane in range(32):
        g, i = lane // 4, lane % 4
        row, meta = g + 8 * (i % 2), 0
        for t in range(4):
            for c in range(2):                               # the two chunks of this thread
                chunk = 2 * t + 8 * (i // 2) + c
                lo, hi = PAIRS[where[row, chunk]]
                meta |= (lo | hi << 2) << (8 * t + 4 * c)
        words[lane, 14] = meta
    Bv = np.vectorize(lambda c: _value(int(c), b_kind))(B)
    D = dense @ Bv + C                # exact in FP64 for these inputs
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


@pytest.mark.parametrize("a,b", [("e4m3", "e2m1"), ("e2m1", "e2m1"), ("e3m2", "e2m3"), ("e5m2", "e4m3")])
def test_sparse_f8f6f4_values_f32(a, b):
    """QMMA.SP.16864.F32.<A>.<B>: ours and ptxas's cubin = the manual's sparse product."""
    data, expect = _fragments(np.random.default_rng(len(a + b) * 31 + ord(a[1])), a, b, "f32")
    ptx = KERNEL.format(target="sm_120a", body=F32_BODY.format(a=a, b=b))
    for out in _run_both(ptx, "sm_120a", data, 4):
        np.testing.assert_array_equal(out, expect)


def test_sparse_f8f6f4_values_f16():
    """F16 accumulators (QMMA.SP.16864.F16), on sm_121a."""
    data, expect = _fragments(np.random.default_rng(5), "e2m3", "e3m2", "f16")
    ptx = KERNEL.format(target="sm_121a", body=F16_BODY.format(a="e2m3", b="e3m2"))
    for out in _run_both(ptx, "sm_121a", data, 2):
        np.testing.assert_array_equal(out, expect)


def _lines(cubin: bytes) -> list[str]:
    """The MMA line and any selector UMOV (register numbers and reuse flags left out) and
    nv.info's SPARSE_MMA_MASK value."""
    mask = re.search(r"\.byte\s+0x03, 0x50\s*\n.*?\.short\s+(0x[0-9a-f]+)", oracle.nvdisasm(cubin))
    return mma_lines(cubin) + [mask.group(1) if mask else None]


SCALED = [
    ("m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e2m1.f32.ue8m0", "{1, 1}", "{2, 3}", "sm_120a"),
    ("m16n8k64.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e5m2.f32.ue8m0", "{0, 0}", "{0, 0}", "sm_121a"),
    ("m16n8k128.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0", "{2, 1}", "{0, 3}", "sm_120a"),
    ("m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", "{0, 1}", "{2, 0}", "sm_121a"),
    ("m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3", "{0, 1}", "{0, 2}", "sm_120a"),
    ("m16n8k128.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0", "{0, 0}", "{0, 0}", "sm_121a"),
]


def _scaled_kernel(form, sel_a, sel_b, target):
    body = (f"    {SP}.{form} {{%f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5, %r6, %r7}}, "
            f"{{%f0, %f1, %f2, %f3}}, %r12, 0, %r10, {sel_a}, %r11, {sel_b};\n"
            "    st.global.v4.f32 [%rd5], {%f4, %f5, %f6, %f7};")
    return KERNEL.format(target=target, body=body)


@pytest.mark.parametrize("form,sel_a,sel_b,target", SCALED)
def test_sparse_block_scaled_instruction(form, sel_a, sel_b, target):
    """QMMA.SF.SP / OMMA.SF.SP line, selector UMOV and SPARSE_MMA_MASK = ptxas's."""
    ptx = _scaled_kernel(form, sel_a, sel_b, target)
    theirs = _lines(oracle.ptxas(ptx, arch=target).output)
    assert any("MMA.SF.SP" in line for line in theirs[:-1])
    assert _lines(codegen.compile_ptx(ptx, target, "k.ptx")) == theirs


PAIR_KERNEL = """.version 9.2
.target sm_120a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 a<4>, b<4>, s<2>, m;
  .reg .f32 c<4>, d<4>;
  .reg .b64 q;
  ld.param.u64 q, [p];
  ld.global.v4.u32 {a0,a1,a2,a3}, [q];
  ld.global.v4.u32 {b0,b1,b2,b3}, [q+16];
  ld.global.v4.f32 {c0,c1,c2,c3}, [q+32];
  ld.global.u32 s0, [q+100];
  ld.global.u32 s1, [q+200];
  ld.global.u32 m, [q+300];
  mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e2m1.f32.ue8m0 {d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}, m, 0, s0, {1,1}, s1, {2,3};
  st.global.v4.f32 [q], {d0,d1,d2,d3};
  ret;
}
"""


def _pair_sources(cubin: bytes) -> tuple[int, int, int]:
    """(E, the load offset E holds, the load offset E+1 holds) of the QMMA.SF.SP."""
    text = oracle.nvdisasm(cubin)
    held = {int(r): int(off, 16) for r, off in re.findall(r"LDG\.E R(\d+), desc\[UR\d+\]\[R\d+\.64\+(0x\w+)\]", text)}
    for dst, src in re.findall(r"\bMOV R(\d+), R(\d+) ;", text):
        held[int(dst)] = held.get(int(src))
    e = int(re.search(r"QMMA\.SF\.SP\S* (?:R\d+, ){4}R(\d+),", text).group(1))
    return e, held.get(e), held.get(e + 1)


def test_sparse_block_scaled_pair():
    """The metadata and scale-a are one aligned pair (E = metadata, E+1 = scale-a), in ptxas's
    cubin and ours."""
    theirs = _pair_sources(oracle.ptxas(PAIR_KERNEL, arch="sm_120a").output)
    ours = _pair_sources(codegen.compile_ptx(PAIR_KERNEL, "sm_120a", "k.ptx"))
    assert theirs[1:] == (300, 100) and theirs[0] % 2 == 0
    assert ours[1:] == (300, 100) and ours[0] % 2 == 0


@pytest.mark.parametrize("types,acc", [(("e4m3", "e2m1"), "f32"), (("e2m1", "e3m2"), "f16"), (("e5m2", "e2m3"), "f32")])
def test_sparse_f8f6f4_instruction(types, acc):
    body = (F32_BODY if acc == "f32" else F16_BODY).format(a=types[0], b=types[1])
    ptx = KERNEL.format(target="sm_120a", body=body)
    theirs = _lines(oracle.ptxas(ptx, arch="sm_120a").output)
    assert any("QMMA.SP.16864" in line for line in theirs[:-1])
    assert _lines(codegen.compile_ptx(ptx, "sm_120a", "k.ptx")) == theirs


@pytest.mark.parametrize("index", [0, 2, 4])
def test_sparse_block_scaled_emulator_faults(index):
    """Block scaling is not modelled: ptxas's cubin and ours fault naming it."""
    ptx = _scaled_kernel(*SCALED[index])
    target = SCALED[index][3]
    data = np.zeros(32 * 16, dtype=np.uint32)
    for cubin in (codegen.compile_ptx(ptx, target, "k.ptx"), oracle.ptxas(ptx, arch=target).output):
        with pytest.raises(EmuFault, match="block-scaled"):
            run(cubin, "k", (1, 1, 1), (32, 1, 1), [np.zeros(128, dtype=np.uint32), data])


REFUSALS = [
    F32_BODY.format(a="e4m3", b="e2m1").replace("%r12, 0;", "%r12, 1;"),
    F32_BODY.format(a="e4m3", b="e2m1").replace("mma.sp::ordered_metadata", "mma.sp"),
    f"    {SP}.{SCALED[2][0]} {{%f4, %f5, %f6, %f7}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5, %r6, %r7}}, "
    "{%f0, %f1, %f2, %f3}, %r12, 2, %r10, {2, 1}, %r11, {0, 3};",
]


@pytest.mark.parametrize("body", REFUSALS)
def test_sparse_refusals(body):
    """Our first error line = ptxas's (a sparsity selector other than 0, plain `.sp`)."""
    ptx = KERNEL.format(target="sm_120a", body=body)
    theirs = oracle.ptxas(ptx, arch="sm_120a")
    assert not theirs.ok
    first = re.search(r"line \d+; error\s*: .*", theirs.stderr).group(0)
    with pytest.raises(CompileError) as err:
        codegen.compile_ptx(ptx, "sm_120a", "k.ptx")
    assert first in str(err.value), (first, str(err.value))


def test_forms_sample():
    """Every 35th form of tools/mma_sparse_sm120_forms.py on sm_120a (3 of 105): SASS line,
    selector UMOV and SPARSE_MMA_MASK = ptxas's; kind::f8f6f4 D of both cubins equal."""
    from tools import mma_sparse_sm120_forms as tool
    assert len(list(tool.forms())) == 105
    assert tool.main(["--targets", "sm_120a", "--every", "35"]) == 0


@pytest.mark.parametrize("start", range(0, 3456, 1152))
def test_refusal_grid_sample(start):
    """Every 7th spelling of two classes of tools/mma_sparse_sm120_forms.py's `--refusals` grid
    that ptxas refuses with one line whatever else is wrong: a scale type with f16
    accumulators ("Unexpected instruction types"), `.block_scale` with f32 and no scale type
    ("Arguments mismatch"): ptxas's lines = ours."""
    from tools import mma_sm120_sweep as sweep
    from tools import mma_sparse_sm120_forms as tool
    body = sweep.BODY.replace(".reg .b32 a<4>, b<2>, s<2>;", ".reg .b32 a<4>, b<4>, s<2>, m;")
    chosen = [mma for mma in list(tool.refusal_forms())[start:start + 1152]
              if (".f16." in mma and ".ue" in mma)
              or (".block_scale" in mma and ".f32." in mma and ".ue" not in mma)][::7]
    assert len(chosen) >= 10
    for mma in chosen:
        same, theirs, ours = sweep.compare(body.format(mma=mma, target="sm_120a", version="9.2"), "sm_120a")
        assert same, (mma, theirs, ours)


@pytest.mark.parametrize("sparse", [False, True])
def test_omma_scale_b_reuse_bit(sparse):
    """OMMA.SF's scale-b `.reuse` is instruction bit 51 (ptxas sets it when the next OMMA
    reads that register again); a lone OMMA.SF[.SP] of ours has no such reader, so nvdisasm
    must print no `.reuse` after C (the probe's bit-51 forms, dropped, made the encoder set it)."""
    if sparse:
        ptx = _scaled_kernel(*SCALED[2])
    else:
        body = ("    mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0 "
                "{%f4, %f5, %f6, %f7}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3}, "
                "%r10, {2, 1}, %r11, {0, 3};\n    st.global.v4.f32 [%rd5], {%f4, %f5, %f6, %f7};")
        ptx = KERNEL.format(target="sm_120a", body=body)
    assert oracle.ptxas(ptx, arch="sm_120a").ok
    line = next(l for l in oracle.nvdisasm(codegen.compile_ptx(ptx, "sm_120a", "k.ptx")).splitlines()
                if "OMMA" in l)
    after_c = line.split(";")[0].split(",")[4:]
    assert not any(".reuse" in op for op in after_c), line


LINES = [
    "mma.sp.sync.aligned.m16n8k32.row.col.kind::mxf4.scale_vec::2X.f32.e4m3.e2m1.f32 "
    "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}, m, 0;",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::f8f6f4.f16.e4m3.e2m1.f16 "
    "{h0,h1}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {e0,e1}, m, 1;",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0 "
    "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}, m, 0, s0, {0, 1}, s1, {2, 0};",
    "mma.sp.sync.aligned.m16n8k64.row.col.kind::f8f6f4.scale_vec::2X.f32.e4m3.e2m1.f32.ue8m0 "
    "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}, m, 0, s0, {0, 1}, s1, {2, 0};",
    "mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0 "
    "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1,b2,b3}, {c0,c1,c2,c3}, m, 1, s0, {0, 1}, s1, {2, 0};",
]


@pytest.mark.parametrize("mma", LINES)
def test_refusal_lines(mma):
    """Multi-line refusals (the unscaled k32/k128 lines, mxf4's wrong shape, the dense rules
    without their operand-count line, the scale selectors before the sparsity selector and
    `.sp`): every line and its order = ptxas's."""
    from tools import mma_sm120_sweep as sweep
    body = sweep.BODY.replace(".reg .b32 a<4>, b<2>, s<2>;", ".reg .b32 a<4>, b<4>, s<2>, m;")
    same, theirs, ours = sweep.compare(body.format(mma=mma, target="sm_120a", version="9.2"), "sm_120a")
    assert theirs != "ok" and len(theirs) >= 2
    assert same, (theirs, ours)
