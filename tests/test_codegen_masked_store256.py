"""Sinks `_` in a 256-bit vector store (PTX 8.8, sm_100+: `st.v8` of 32-bit, `.v4` of
64-bit elements): ptxas 13.5 writes a word-masked `STG.E.ENL2.256 [a], lo, hi, mask` (bit k:
word k is stored; each quad's stored words packed into its first registers, a quad with none
RZ) and leaves the sinks' words of memory as they were. Sinks anywhere else are refused in
ptxas's words (a source vector: 'Sink '_' not allowed ...'; a vector of sinks only: 'Unable
to infer type ...'; a bare sink past the first operand: a syntax error). Expected values:
NumPy and ptxas's cubin for the same arch in the emulator; refusals: ptxas's messages for
the same module."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from test_codegen_wide256 import _ptx as wide_ptx
from ptxas_refusals import assert_refused_as_ptxas

THREADS = 32
WORDS = 80          # per thread, in and out

R8 = "{%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}"
F8 = "{%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}"
D4 = "{%rd4,%rd5,%rd6,%rd7}"
BODY = f"""
ld.global.v8.b32 {R8}, [%rd2];
st.global.v8.b32 [%rd1], {{%r0, _, %r2, %r3, _, _, %r6, %r7}};
ld.global.v4.b64 {D4}, [%rd2+32];
st.global.v4.b64 [%rd1+32], {{%rd4, _, _, %rd7}};
ld.global.v8.f32 {F8}, [%rd2+64];
st.global.cs.v8.f32 [%rd1+64], {{%f0, _, 0f3F800000, _, _, _, _, _}};
st.v8.b32 [%rd1+96], {{_, _, _, _, %r1, _, _, _}};
st.global.v4.b64 [%rd1+128], {{_, 0, _, 0}};
st.global.v8.b32 [%rd1+160], {{5, _, 0, 7, _, _, 0, %r1}};
setp.ne.u32 %p1, %r4, 0;
@%p1 st.global.v8.b32 [%rd1+192], {{%r1, %r2, %r3, %r5, _, _, _, _}};
ld.global.f64 %fd1, [%rd2+224];
st.release.gpu.global.v4.f64 [%rd1+224], {{_, %fd1, %fd1, _}};
st.global.L1::no_allocate.v8.b32 [%rd1+256], {{_, %r6, _, %r6, _, %r2, _, %r7}};
"""


def _ptx(arch, body=BODY):
    return wide_ptx(arch, body, WORDS)


def _inputs():
    rng = np.random.default_rng(1024)
    data = rng.integers(0, 2**32, THREADS * WORDS, dtype=np.uint64).astype(np.uint32)
    data.reshape(THREADS, WORDS)[::3, 4] = 0       # %r4: the guarded store's condition
    old = rng.integers(0, 2**32, THREADS * WORDS, dtype=np.uint64).astype(np.uint32)
    return data, old


def _model(data, old):
    i = data.reshape(THREADS, WORDS)
    o = old.reshape(THREADS, WORDS).copy()
    for k in (0, 2, 3, 6, 7):                       # v8.b32 {r0,_,r2,r3,_,_,r6,r7}
        o[:, k] = i[:, k]
    o[:, [8, 9, 14, 15]] = i[:, [8, 9, 14, 15]]     # v4.b64 {rd4,_,_,rd7}
    o[:, 16], o[:, 18] = i[:, 16], 0x3F800000        # v8.f32 {f0,_,1.0,_...}
    o[:, 24 + 4] = i[:, 1]                          # {_,_,_,_,r1,_,_,_}
    o[:, [34, 35, 38, 39]] = 0                      # v4.b64 {_,0,_,0}
    o[:, 40], o[:, 42], o[:, 43], o[:, 46], o[:, 47] = 5, 0, 7, 0, i[:, 1]
    on = i[:, 4] != 0                               # @p v8.b32 {r1,r2,r3,r5,_,_,_,_}
    for k, src in zip(range(48, 52), (1, 2, 3, 5)):
        o[:, k] = np.where(on, i[:, src], o[:, k])
    o[:, [58, 59, 60, 61]] = i[:, [56, 57, 56, 57]]  # v4.f64 {_,fd1,fd1,_}
    for k, src in ((65, 6), (67, 6), (69, 2), (71, 7)):
        o[:, k] = i[:, src]
    return o


def _run(cubin, data, old):
    out = old.copy()
    res = run(cubin, "k", 1, THREADS, [out, data.copy()], hazard_check=True)
    return out.reshape(THREADS, WORDS), res.hazards


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_masked_wide_stores_equal_numpy_and_ptxas(arch):
    data, old = _inputs()
    want = _model(data, old)
    theirs, _ = _run(oracle.ptxas(_ptx(arch), arch).output, data, old)
    np.testing.assert_array_equal(theirs, want)      # ptxas's masked stores = the model
    ours, hazards = _run(codegen.compile_ptx(_ptx(arch), arch), data, old)
    assert not hazards, hazards[:3]
    np.testing.assert_array_equal(ours, want)


def _stores(cubin):
    """Each 256-bit store's modifiers, offset, which of its quads is RZ, and its mask."""
    text = oracle.cuobjdump_sass(cubin)
    return sorted((m[0], m[1], m[2] == "RZ", m[3] == "RZ", m[4]) for m in re.findall(
        r"\b(STG\.[A-Z0-9._]*\.256[A-Z0-9._]*) desc\[UR\d+\]\[R\d+\.64([+0-9a-fx]*)\], "
        r"(R\d+|RZ), (R\d+|RZ)(?:, (0x[0-9a-f]+))? ;", text))


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_masked_wide_store_forms_as_ptxas(arch):
    """The same STG modifiers, RZ quads and word masks as ptxas's (in address order: the
    schedules differ)."""
    ours = _stores(codegen.compile_ptx(_ptx(arch), arch))
    theirs = _stores(oracle.ptxas(_ptx(arch), arch).output)
    assert len(theirs) == 9 and all(t[4] for t in theirs)
    assert ours == theirs


SINKS = [
    ("sm_100", "st.global.v8.b32 [%rd1], {_, _, _, _, _, _, _, _};"),
    ("sm_100", "st.global.v4.b64 [%rd1], {_, _, _, _};"),
    ("sm_90", "st.global.v8.b32 [%rd1], {_, _, _, _, _, _, _, _};"),
    ("sm_100", "st.shared.v8.b32 [%rd1], {_, _, _, _, _, _, _, _};"),
    ("sm_100", "st.shared.v8.b32 [%rd1], {%r1, _, %r1, %r1, _, _, %r1, %r1};"),
    ("sm_100", "st.local.v4.b64 [%rd1], {%rd1, _, _, %rd1};"),
    ("sm_90", "st.global.v8.b32 [%rd1], {%r1, _, %r1, %r1, _, _, %r1, %r1};"),
    ("sm_100", "st.global.v4.b64 [%rd1], {%r1, _, _, %r1};"),
    ("sm_100", "st.global.b32 [%rd1], _;"),
    ("sm_100", "st.global.b32 [%rd1], {_};"),
    ("sm_100", "st.local.b64 [%rd1], {_};"),
    ("sm_100", "st.global.v2.b32 [%rd1], {%r1, _};"),
    ("sm_100", "st.global.v2.b32 [%rd1], {_, _};"),
    ("sm_100", "st.global.v2.f64 [%rd1], {_, %fd1};"),
    ("sm_100", "st.global.v4.b32 [%rd1], {1, _, 2, 3};"),
    ("sm_100", "st.global.v4.b16 [%rd1], {%r1, _, %r1, %r1};"),
    ("sm_100", "st.shared.v4.b32 [%rd1], {%r1, _, %r1, %r1};"),
    ("sm_100", "st.shared.v2.f32 [%rd1], {%f1, _};"),
    ("sm_100", "st.param.v2.b32 [%rd1], {%r1, _};"),
    ("sm_100", "st.const.v2.f32 [%rd1], {%f1, _};"),
    ("sm_100", "st.global.v8.b32 [_], {%r1, _, %r1, %r1, _, _, %r1, %r1};"),
    ("sm_100", "st.global.v8.b32 [%rd1+_], {%r1, %r1, %r1, %r1, %r1, %r1, %r1, %r1};"),
    ("sm_100", "ld.global.v2.b32 {_, _}, [%rd2];"),
    ("sm_100", "ld.global.v4.u32 {_, %r1, _, %r2}, [%rd2+_];"),
    ("sm_100", "mov.b32 %r2, _;"),
    ("sm_100", "add.s32 %r2, %r1, _;"),
    ("sm_100", "selp.b32 %r2, %r1, %r1, _;"),
    ("sm_100", "@_ add.s32 %r2, %r1, 1;"),
    ("sm_100", "setp.eq.s32 _|%p1, %r1, _;"),
    ("sm_100", "shfl.sync.idx.b32 %r2|%p1, %r1, _, 31, -1;"),
    ("sm_100", "atom.global.add.u32 %r2, [%rd1], _;"),
    ("sm_100", "red.global.add.u32 [%rd1], _;"),
    ("sm_100", "red.global.add.v2.f32 [%rd1], {%f1, _};"),
    ("sm_90", "atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f1, _};"),
    ("sm_100", "mov.b64 %rd4, {%r1, _};"),
    ("sm_100", "mov.b64 %rd4, {_, _};"),
    ("sm_100", "mov.b64 {_, _}, %rd3;"),
    ("sm_100", "mov.b32 %r3, {%r1, _};"),
    ("sm_100", "mov.b64 %rd4, {1, _};"),
    ("sm_100", "mov.b32 %r3, {_, 1};"),
    ("sm_89", "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f1, _}];"),
    ("sm_89", "sust.b.1d.v2.b32.trap [%rd2, {%r1}], {%r1, _};"),
    ("sm_89", "sust.b.1d.v2.b32.trap [%rd2, {_}], {%r1, %r1};"),
    ("sm_89", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1, _}, "
              "{%r1}, {%f1,%f2,%f3,%f4};"),
    ("sm_100", "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%rd1], {%r1, _};"),
    ("sm_100", "wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], "
               "{%f1,%f1,%f1,%f1,%f1,%f1,%f1,_};"),
]


@pytest.mark.parametrize("arch,line", SINKS)
def test_sink_refusals_as_ptxas(arch, line):
    """Every message ptxas gives for the module, in its order (ptxas refuses each)."""
    ptx = _ptx(arch, line)
    assert_refused_as_ptxas(ptx, arch)


def test_sinks_among_results_still_compile():
    """Sinks in a load's or an unpacking mov's results, a `d|_` pair (ptxas accepts them)."""
    body = """ld.global.v4.u32 {_, %r1, _, %r2}, [%rd2];
mov.b64 {_, %r3}, %rd2;
setp.eq.s32 %p1|_, %r1, 0;
st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r3};"""
    ptx = _ptx("sm_100", body)
    assert oracle.ptxas(ptx, "sm_100").ok
    codegen.compile_ptx(ptx, "sm_100")
