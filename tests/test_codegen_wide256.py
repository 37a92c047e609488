"""256-bit loads and stores (PTX 8.8, sm_100+: `ld/st.v8` of 32-bit and `.v4` of 64-bit
elements, global or generic addresses): one `LDG/STG.E.ENL2.256` with two register quads, as
ptxas 13.5 writes them on sm_100 and sm_120 (was refused: 'vector `ld` of 8 x f32 not supported
yet'). Expected values: NumPy (the words moved as the PTX says) and ptxas's cubin for the same
arch in the emulator; ptxas's refusals in its words."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

THREADS = 32
WORDS = 64          # per thread, in and out

R8 = "{%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}"
F8 = "{%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}"
D4 = "{%rd4,%rd5,%rd6,%rd7}"
FD4 = "{%fd0,%fd1,%fd2,%fd3}"
BODY = f"""
ld.global.v8.f32 {F8}, [%rd2];
st.global.v8.f32 [%rd1], {F8};
ld.global.nc.L1::evict_last.L2::256B.v4.b64 {D4}, [%rd2+32];
st.global.cs.v4.b64 [%rd1+32], {D4};
ld.relaxed.gpu.global.v8.b32 {R8}, [%rd2+64];
st.release.gpu.global.v8.b32 [%rd1+64], {R8};
ld.volatile.global.v4.f64 {FD4}, [%rd2+96];
st.global.L1::no_allocate.v4.f64 [%rd1+96], {FD4};
ld.v8.u32 {R8}, [%rd2+128];
st.v8.s32 [%rd1+128], {R8};
ld.global.L2::256B.v8.b32 {R8}, [%rd2+160];
st.global.f32 [%rd1+160], %f0;
st.global.u32 [%rd1+164], %r5;
st.global.u32 [%rd1+168], %r2;
st.global.v8.b32 [%rd1+192], {{%r7,0,0,%r1,0,0,0,7}};
setp.ne.u32 %p1, %r4, 0;
mov.b64 %rd8, 1234;
@%p1 ld.global.v4.u64 {{%rd8,%rd9,%rd10,%rd11}}, [%rd2+224];
st.global.u64 [%rd1+224], %rd8;
"""


def _ptx(arch, body=BODY, words=WORDS):
    """The kernel around `body`: %rd1/%rd2 = this thread's `words` words out/in."""
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<16>; .reg .b32 %r<12>; .reg .f32 %f<8>; .reg .f64 %fd<4>; .reg .pred %p<2>;
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
mov.u32 %r10, %tid.x; mul.wide.u32 %rd3, %r10, {4 * words};
add.s64 %rd1, %rd1, %rd3; add.s64 %rd2, %rd2, %rd3;
{body}
ret;
}}"""


def _inputs():
    v = np.random.default_rng(256).integers(0, 2**32, THREADS * WORDS, dtype=np.uint64).astype(np.uint32)
    v.reshape(THREADS, WORDS)[::3, 44] = 0       # %r4 of the guarded load's condition
    return v


def _expected(data):
    i = data.reshape(THREADS, WORDS)
    o = np.zeros_like(i)
    o[:, :40] = i[:, :40]
    o[:, 40], o[:, 41], o[:, 42] = i[:, 0], i[:, 45], i[:, 42]
    o[:, 48], o[:, 51], o[:, 55] = i[:, 47], i[:, 41], 7
    on = i[:, 44] != 0
    o[:, 56] = np.where(on, i[:, 56], 1234)
    o[:, 57] = np.where(on, i[:, 57], 0)
    return o


def _run(cubin, data):
    out = np.zeros(THREADS * WORDS, np.uint32)
    res = run(cubin, "k", 1, THREADS, [out, data.copy()], hazard_check=True)
    return out.reshape(THREADS, WORDS), res.hazards


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_wide_vectors_equal_numpy_and_ptxas(arch):
    data = _inputs()
    want = _expected(data)
    theirs, _ = _run(oracle.ptxas(_ptx(arch), arch).output, data)
    np.testing.assert_array_equal(theirs, want)      # ptxas's (word-masked loads too) = the model
    cubin = codegen.compile_ptx(_ptx(arch), arch)
    ours, hazards = _run(cubin, data)
    assert not hazards, hazards[:3]
    np.testing.assert_array_equal(ours, want)


def test_wide_vector_modifiers_as_ptxas():
    """Every 256-bit access is one LDG/STG with ptxas's modifiers (`.ENL2` between the L1
    hint and the L2 prefetch size)."""
    ours = codegen.compile_ptx(_ptx("sm_100"), "sm_100")
    theirs = oracle.ptxas(_ptx("sm_100"), "sm_100").output

    def accesses(cubin):
        return sorted(re.findall(r"\b(?:LDG|STG)\.[A-Z0-9.]*\.256[A-Z.]*", oracle.cuobjdump_sass(cubin)))
    assert accesses(ours) == accesses(theirs)


REFUSALS = [
    ("sm_100", "8.8", f"ld.shared.v8.b32 {R8}, [%rd2];",
     ["global state space expected for feature '256 bit wide load/store'"]),
    ("sm_120", "8.8", f"st.local.v4.b64 [%rd2], {D4};",
     ["global state space expected for feature '256 bit wide load/store'"]),
    ("sm_90", "8.8", f"ld.global.v4.s64 {D4}, [%rd2];",
     ["Feature '256 bit wide load/store' requires .target sm_100 or higher"]),
    ("sm_100", "8.8", f"ldu.global.v8.b32 {R8}, [%rd2];",
     ["Illegal vector size: 8", "Vector type too large, exceeds 128 bit limit"]),
    ("sm_120", "8.8", f"ldu.global.v4.b64 {D4}, [%rd2];", ["Vector type too large, exceeds 128 bit limit"]),
    ("sm_100", "8.7", f"ld.shared.v8.f32 {F8}, [%rd2];",
     ["Feature '256 bit wide load/store' requires PTX ISA .version 8.8 or later",
      "global state space expected for feature '256 bit wide load/store'"]),
]


@pytest.mark.parametrize("arch,version,line,messages", REFUSALS)
def test_wide_vector_refusals_as_ptxas(arch, version, line, messages):
    ptx = _ptx(arch).replace(".version 8.8", f".version {version}").replace(BODY, f"\n{line}\n")
    theirs = oracle.ptxas(ptx, arch)
    assert not theirs.ok
    for m in messages:
        assert m in theirs.stderr
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, arch)
    got = "\n".join(str(d) for d in e.value.diagnostics)
    for m in messages:
        assert f"line 11; error   : {m}" in got, got


def _guarded(arch, body):
    return _ptx(arch).replace(BODY, "\nld.global.u32 %r10, [%rd2];\nsetp.ne.u32 %p1, %r10, 0;\n" + body)


GUARDED = {
    "load_store": f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32];\n@%p1 st.global.v8.b32 [%rd1], {R8};",
    "load_used": f"@%p1 ld.global.v8.b32 {R8}, [%rd2+32];\nadd.s32 %r0, %r0, %r7;\n"
                 "st.global.u32 [%rd1], %r0;",
    "load_sinks": "@%p1 ld.global.v8.b32 {%r0,_,_,_,_,_,_,%r7}, [%rd2+32];\nadd.s32 %r0, %r0, %r7;\n"
                  "st.global.u32 [%rd1], %r0;",
}


def _moves(cubin):
    text = oracle.cuobjdump_sass(cubin)
    body = [i for i in re.findall(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", text) if not i.startswith("NOP")]
    copies = r"\bMOV R\d+, R\d+$|IMAD\.MOV\.U32 R\d+, RZ, RZ, R\d+$"     # register to register
    return len(body), sum(1 for i in body if re.search(copies, i.strip()))


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
@pytest.mark.parametrize("shape", sorted(GUARDED))
def test_guarded_load_of_unwritten_registers_copies_nothing(arch, shape):
    """A guarded vector load whose destinations PTX never wrote (or sinks) needs no
    else-values in its register quads: no register copy, as in ptxas's code (which branches
    around the load); before, every element's undefined old value was copied in (load_store: 19
    instructions, ptxas 11 by that count)."""
    ptx = _guarded(arch, GUARDED[shape])
    ours, theirs = _moves(codegen.compile_ptx(ptx, arch)), _moves(oracle.ptxas(ptx, arch).output)
    assert ours[1] <= theirs[1]
    if shape == "load_store":
        assert ours[0] <= theirs[0]


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_guarded_load_and_store_equal_numpy(arch):
    """Both guard outcomes (in[0] == 0 on every third thread): stored where true, memory
    untouched where false; ptxas's cubin and ours."""
    data = _inputs()
    i = data.reshape(THREADS, WORDS)
    i[::3, 0] = 0
    want = np.zeros_like(i)
    on = i[:, 0] != 0
    want[on, :8] = i[on, 8:16]
    ptx = _guarded(arch, GUARDED["load_store"])
    for cubin in (oracle.ptxas(ptx, arch).output, codegen.compile_ptx(ptx, arch)):
        got, hazards = _run(cubin, data)
        assert not hazards, hazards[:3]
        np.testing.assert_array_equal(got, want)
