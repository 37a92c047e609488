"""If-conversion of branches around loads (ptx2sass/opt/if_convert.py): nvcc's
bounds-checked loads `(i < n) ? p[i] : 0` become predicated loads, as in ptxas's code (no
branch, no BSSY), and the results on lanes inside and outside the bounds are NumPy's and
ptxas's; bodies that must stay branches (a store, a pointer chase) stay correct."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from tools.predicated_bodies import branches, regions

HEAD = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u64 b, .param .u32 n)
{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .f32 %f<16>;
.reg .b64 %rd<16>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [a];
ld.param.u64 %rd3, [b];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd4, %r2, 4;
add.s64 %rd5, %rd2, %rd4;
add.s64 %rd6, %rd3, %rd4;
add.s64 %rd7, %rd1, %rd4;
"""

# two guarded loads (a tiled matmul's tile loads): out = (tid < n ? a : 0) + (tid < n/2 ? b : 1)
TWO_LOADS = HEAD + """setp.ge.u32 %p1, %r2, %r1;
mov.f32 %f1, 0f00000000;
@%p1 bra $L1;
ld.global.f32 %f1, [%rd5];
$L1:
shr.u32 %r3, %r1, 1;
setp.lt.u32 %p2, %r2, %r3;
mov.f32 %f2, 0f3F800000;
@!%p2 bra $L2;
ld.global.f32 %f2, [%rd6];
$L2:
add.f32 %f3, %f1, %f2;
st.global.f32 [%rd7], %f3;
ret;
}
"""

# the same as NVVM writes it with an else arm: `@p bra THEN; bra.uni ELSE;` THEN loads, ELSE
# sets the default; the else block holds nothing once its move is a phi input (ptxas: both
# loads predicated, `@P1 MOV R, RZ` + `@!P1 LDG R`, no branch)
DIAMONDS = HEAD + """setp.lt.u32 %p1, %r2, %r1;
@%p1 bra $T1;
bra.uni $E1;
$T1:
ld.global.f32 %f1, [%rd5];
bra.uni $J1;
$E1:
mov.f32 %f1, 0f00000000;
$J1:
shr.u32 %r3, %r1, 1;
setp.lt.u32 %p2, %r2, %r3;
@%p2 bra $T2;
bra.uni $E2;
$T2:
ld.global.f32 %f2, [%rd6];
bra.uni $J2;
$E2:
mov.f32 %f2, 0f3F800000;
$J2:
add.f32 %f3, %f1, %f2;
st.global.f32 [%rd7], %f3;
ret;
}
"""

# the body computes an address and a value besides the load: the value's phi is a selp
WITH_ARITHMETIC = HEAD + """setp.ge.u32 %p1, %r2, %r1;
mov.f32 %f1, 0f00000000;
mov.u32 %r4, 7;
@%p1 bra $L1;
add.s32 %r5, %r2, 1;
mul.wide.u32 %rd8, %r5, 4;
add.s64 %rd9, %rd2, %rd8;
ld.global.f32 %f1, [%rd9+-4];
mul.lo.s32 %r4, %r2, 3;
$L1:
cvt.rn.f32.u32 %f4, %r4;
add.f32 %f3, %f1, %f4;
st.global.f32 [%rd7], %f3;
ret;
}
"""

# a load whose value the body stores: both guarded (ptxas keeps this one a branch)
STORE_BODY = HEAD + """setp.ge.u32 %p1, %r2, %r1;
mov.f32 %f1, 0f00000000;
@%p1 bra $L1;
ld.global.f32 %f1, [%rd5];
st.global.f32 [%rd6], %f1;
$L1:
st.global.f32 [%rd7], %f1;
ret;
}
"""

# a store of a value computed before the branch (a warp leader's partial sum): guarded
LEADER_STORE = HEAD + """ld.global.f32 %f1, [%rd5];
and.b32 %r8, %r2, 31;
setp.ne.s32 %p1, %r8, 0;
@%p1 bra $L1;
shr.u32 %r9, %r2, 5;
mul.wide.u32 %rd12, %r9, 4;
add.s64 %rd13, %rd6, %rd12;
st.global.f32 [%rd13], %f1;
$L1:
st.global.f32 [%rd7], %f1;
ret;
}
"""

# a load whose address is loaded: both guarded, the address arithmetic between them runs
# on the first load's else-value (zero) where the body did not run
POINTER_CHASE = HEAD + """setp.ge.u32 %p1, %r2, %r1;
mov.f32 %f1, 0f00000000;
@%p1 bra $L1;
ld.global.u32 %r6, [%rd6];
and.b32 %r7, %r6, 31;
mul.wide.u32 %rd10, %r7, 4;
add.s64 %rd11, %rd2, %rd10;
ld.global.f32 %f1, [%rd11];
$L1:
st.global.f32 [%rd7], %f1;
ret;
}
"""

# one step of a shared-memory tree reduction: if (t < 32) s[t] += s[t + 32] (ptxas: @!P LDS,
# LDS, FADD, STS, no branch)
TREE_STEP = HEAD.replace("{\n", "{\n.shared .align 4 .b8 sh[256];\n", 1) + """mov.u32 %r10, sh;
shl.b32 %r11, %r2, 2;
add.s32 %r12, %r10, %r11;
ld.global.f32 %f1, [%rd5];
st.shared.f32 [%r12], %f1;
bar.sync 0;
setp.ge.u32 %p1, %r2, 32;
@%p1 bra $L1;
ld.shared.f32 %f2, [%r12+128];
ld.shared.f32 %f3, [%r12];
add.f32 %f4, %f2, %f3;
st.shared.f32 [%r12], %f4;
$L1:
bar.sync 0;
ld.shared.f32 %f5, [%r12];
st.global.f32 [%rd7], %f5;
ret;
}
"""

# an accumulation of guarded terms, sum += |a[i]| * 0.5 * b[i] under each term's own bound:
# ptxas guards the terms' arithmetic too (`@!P0 FFMA R9, R0, R7, RZ`), so its loads need no
# default value and no FSEL merges the sum
ACCUMULATE = HEAD + """mov.f32 %f1, 0f00000000;
setp.ge.u32 %p1, %r2, %r1;
@%p1 bra $L1;
ld.global.nc.f32 %f2, [%rd5];
ld.global.nc.f32 %f3, [%rd6];
abs.f32 %f4, %f2;
mul.f32 %f5, %f4, 0f3F000000;
fma.rn.f32 %f1, %f5, %f3, 0f00000000;
$L1:
shr.u32 %r3, %r1, 1;
setp.ge.u32 %p2, %r2, %r3;
@%p2 bra $L2;
ld.global.nc.f32 %f7, [%rd5+4];
ld.global.nc.f32 %f8, [%rd6+4];
abs.f32 %f9, %f7;
mul.f32 %f10, %f9, 0f3F000000;
fma.rn.f32 %f1, %f10, %f8, %f1;
$L2:
st.global.f32 [%rd7], %f1;
ret;
}
"""

THREADS, N = 64, 40


def _reference(name, a, b):
    tid = np.arange(THREADS)
    if name in ("TWO_LOADS", "DIAMONDS"):
        return (np.where(tid < N, a, 0) + np.where(tid < N // 2, b, 1)).astype(np.float32)
    if name == "WITH_ARITHMETIC":
        idx = np.minimum(tid, THREADS - 1)
        return np.where(tid < N, a[idx] + (tid * 3).astype(np.float32), np.float32(7)).astype(np.float32)
    if name == "STORE_BODY":
        return np.where(tid < N, a, 0).astype(np.float32)
    if name == "LEADER_STORE":
        return a
    if name == "ACCUMULATE":
        first = np.where(tid < N, np.abs(a) * np.float32(0.5) * b, 0).astype(np.float32)
        a1, b1 = np.append(a[1:], 0), np.append(b[1:], 0)
        return np.where(tid < N // 2, (np.abs(a1) * np.float32(0.5)).astype(np.float32) * b1 + first,
                        first).astype(np.float32)
    if name == "TREE_STEP":
        return np.concatenate([a[:32] + a[32:], a[32:]]).astype(np.float32)
    bits = b.view(np.uint32) & 31
    return np.where(tid < N, a[bits], 0).astype(np.float32)


def _run(cubin, a, b):
    out = np.zeros(THREADS, np.float32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, a.copy(), b.copy(), np.uint32(N)],
              hazard_check=True)
    return out, res


def _leader_out(cubin, a, b):
    """The `b` buffer after a launch (the leaders' stores)."""
    bb = b.copy()
    out = np.zeros(THREADS, np.float32)
    run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, a.copy(), bb, np.uint32(N)])
    return bb


def _ours(ptx):
    return codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]


def _opcodes(cubin):
    text = oracle.nvdisasm(cubin, options=())
    out = []
    for line in text.splitlines():
        if "/*0" in line and "*/" in line and line.rstrip().endswith(";"):
            words = [w for w in line.split("*/", 1)[1].split() if not w.startswith("@")]
            if words and words[0][0].isupper():
                out.append(words[0])
    return out


@pytest.mark.parametrize("name", ["TWO_LOADS", "DIAMONDS", "WITH_ARITHMETIC", "STORE_BODY", "LEADER_STORE",
                                  "POINTER_CHASE", "TREE_STEP", "ACCUMULATE"])
def test_results_are_numpy_s_and_ptxas_s(name):
    ptx = globals()[name]
    rng = np.random.default_rng(1)
    a = rng.standard_normal(THREADS).astype(np.float32)
    b = rng.integers(0, 1 << 30, THREADS).astype(np.uint32).view(np.float32) if name == "POINTER_CHASE" \
        else rng.standard_normal(THREADS).astype(np.float32)
    ours, res = _run(_ours(ptx), a, b)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    theirs, _ = _run(oracle.ptxas(ptx, "sm_89").output, a, b)
    assert ours.tobytes() == theirs.tobytes()
    np.testing.assert_array_equal(ours, _reference(name, a, b))
    if name == "LEADER_STORE":      # b[tid + warp] = a[tid] for each warp's lane 0
        want = b.copy()
        lanes0 = np.arange(0, THREADS, 32)
        want[lanes0 + lanes0 // 32] = a[lanes0]
        np.testing.assert_array_equal(_leader_out(_ours(ptx), a, b), want)
        np.testing.assert_array_equal(_leader_out(oracle.ptxas(ptx, "sm_89").output, a, b), want)


@pytest.mark.parametrize("name", ["TWO_LOADS", "DIAMONDS", "WITH_ARITHMETIC", "LEADER_STORE", "TREE_STEP"])
def test_guarded_loads_take_no_branch_as_in_ptxas(name):
    """ptxas predicates these loads and stores (no BRA, no BSSY before EXIT); so do we."""
    ptx = globals()[name]
    for ops in (_opcodes(oracle.ptxas(ptx, "sm_89").output), _opcodes(_ours(ptx))):
        body = ops[:ops.index("EXIT")]
        assert "BRA" not in body and "BSSY" not in body, body


def _zeroed_then_loaded(cubin) -> int:
    """Guarded loads into a register an unguarded move of zero wrote before them."""
    zeroed, count = set(), 0
    for line in oracle.nvdisasm(cubin, options=()).splitlines():
        if "/*0" not in line or not line.rstrip().endswith(";"):
            continue
        words = line.split("*/", 1)[1].split(";")[0].replace(",", " ").split()
        if not words[0].startswith("@") and words[0] in ("MOV", "IMAD.MOV.U32", "CS2R"):
            if words[-1] in ("RZ", "SRZ"):
                zeroed.add(words[1])
        elif words[0].startswith("@") and words[1].startswith("LDG") and words[2] in zeroed:
            count += 1
    return count


def test_guarded_accumulation_guards_its_arithmetic_as_ptxas():
    """The terms' arithmetic is guarded (no FSEL) and no load is given a default first."""
    theirs, ours = oracle.ptxas(ACCUMULATE, "sm_89").output, _ours(ACCUMULATE)
    for cubin in (theirs, ours):
        assert "FSEL" not in _opcodes(cubin)
        assert _zeroed_then_loaded(cubin) == 0
    assert _opcodes(ours).count("FFMA") == _opcodes(theirs).count("FFMA")


# (loads, fma chain, stores): bodies either side of ptxas's limit of 20 SASS instructions
# (sm_90's ptxas reloads a parameter inside the body: one PTX instruction less there), and one
# of a load and 8 stores (no separate limit on loads and stores)
REGIONS = [(1, 13, 1), (1, 15, 1), (1, 16, 1), (2, 14, 1), (1, 2, 8)]


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("shape", REGIONS, ids=lambda s: "l%d_a%d_s%d" % s)
def test_body_size_limit_is_ptxas_s(arch, shape):
    """A branch body is predicated exactly where ptxas predicates it, and the code runs as
    ptxas's does (lanes on both sides of each guard), with no hazard."""
    ptx = regions(arch, *shape)
    theirs = oracle.ptxas(ptx, arch).output
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]
    assert branches(ours) == branches(theirs)
    a = np.random.default_rng(2).uniform(-1, 1, 16384).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        b = np.zeros(16384, np.float32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [a.copy(), b, np.uint32(40)])
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(b)
    assert outs[0].tobytes() == outs[1].tobytes()
