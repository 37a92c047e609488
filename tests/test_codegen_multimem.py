"""multimem.st / multimem.red (PTX 8.1+, sm_90+). ptxas 13.5 compiles them as the global
store / reduction of the same order and scope (`frontend/multimem.py`): STG/REDG on the
multimem address. In one emulated GPU a multimem address names the local copy only (the
multicast object's one member), so the store writes and the reduction updates that word.
Expected values: NumPy for ours and for ptxas's cubin in the emulator; the memory
instructions ours = ptxas's (text); refusals: every ptxas message for the module."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from ptxas_refusals import assert_refused_as_ptxas

THREADS = 64
# (instruction without operands, element type, elements, the op's NumPy model or None: store)
FORMS = [
    ("multimem.st.global.u32", "u32", 1, None),
    ("multimem.st.weak.global.b64", "u64", 1, None),
    ("multimem.st.relaxed.sys.global.s32", "u32", 1, None),
    ("multimem.st.release.gpu.global.v4.f32", "f32", 4, None),
    ("multimem.st.relaxed.cta.global.v2.f16x2", "u32", 2, None),
    ("multimem.st.release.cluster.global.f64", "u64", 1, None),
    ("multimem.red.global.add.u32", "u32", 1, np.add),
    ("multimem.red.relaxed.gpu.global.min.s32", "s32", 1, np.minimum),
    ("multimem.red.release.sys.global.max.u64", "u64", 1, np.maximum),
    ("multimem.red.relaxed.cta.global.xor.b64", "u64", 1, np.bitwise_xor),
    ("multimem.red.relaxed.sys.global.or.b32", "u32", 1, np.bitwise_or),
    ("multimem.red.global.add.f32", "f32", 1, np.add),
    ("multimem.red.release.gpu.global.add.v4.f32", "f32", 4, np.add),
    ("multimem.red.global.add.f64", "f64", 1, np.add),
]
NP = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}


def _per_thread(reg, param, size):
    """Declarations and the global addresses of `mem` (%rm) and `param` (%<reg>, advanced
    to thread t's `size` bytes); %g = t * size."""
    return f""".reg .b64 %rm, %{reg}, %g;
.reg .b32 %t;
ld.param.u64 %rm, [mem];
ld.param.u64 %{reg}, [{param}];
cvta.to.global.u64 %rm, %rm;
cvta.to.global.u64 %{reg}, %{reg};
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, {size};
add.s64 %{reg}, %{reg}, %g;"""


def _ptx(arch, spelling, ty, n):
    """Thread t applies in[t] to slot t (a store) or t % 4 (a reduction) of `mem`."""
    wide = NP[ty]().itemsize == 8
    reg = ".b64" if wide else ".b32"
    vals = ", ".join(f"%v{k}" for k in range(n))
    vec = f".v{n}" if n > 1 else ""
    ops = f"{{{vals}}}" if n > 1 else vals
    slots = THREADS if ".st." in spelling else 4
    size = n * (8 if wide else 4)
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 in)
{{
.reg .b32 %s;
.reg {reg} {vals};
{_per_thread("ri", "in", size)}
rem.u32 %s, %t, {slots};
mul.wide.u32 %g, %s, {size};
add.s64 %rm, %rm, %g;
ld.global{vec}{reg} {ops}, [%ri];
{spelling} [%rm], {ops};
ret;
}}
""", slots


def _grid_records(cubin):
    """Each kernel's GRID_ATTRIBUTES and 0x5f records (ptx2sass/grid_attributes.py)."""
    return [(r.name, r.value) for k in read_cubin(cubin).kernels for r in k.attributes
            if r.name in ("GRID_ATTRIBUTES", "UNKNOWN_0x5f")]


def _memory_ops(cubin):
    text = oracle.cuobjdump_sass(cubin)
    return [m.group(0) for m in re.finditer(r"\b(?:REDG|STG|ATOMG)\.[^;]*", text)]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("spelling,ty,n,op", FORMS, ids=[f[0] for f in FORMS])
def test_multimem_equals_numpy(arch, spelling, ty, n, op):
    ptx, slots = _ptx(arch, spelling, ty, n)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    rng = np.random.default_rng(len(spelling) * 7 + n)
    dt = NP[ty]
    if ty.startswith("f"):      # small integers: a contended sum is exact in any order
        data = rng.integers(-64, 65, (THREADS, n)).astype(dt)
        mem0 = rng.integers(-64, 65, (slots, n)).astype(dt)
    else:
        info = np.iinfo(dt)
        data = rng.integers(info.min, info.max, (THREADS, n), dtype=dt, endpoint=True)
        mem0 = rng.integers(info.min, info.max, (slots, n), dtype=dt, endpoint=True)
    want = mem0.copy()
    for t in range(THREADS):
        want[t % slots] = data[t] if op is None else op(want[t % slots], data[t])
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        mem = mem0.copy()
        res = run(cubin, "k", 1, THREADS, [mem, data.copy()], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(mem, want, err_msg=name)
    strip = lambda ops: [re.sub(r"R\d+|UR\d+", "R", o) for o in ops]  # noqa: E731
    assert strip(_memory_ops(ours)) == strip(_memory_ops(theirs.output))
    assert _grid_records(ours) == _grid_records(theirs.output)


REFUSALS = [
    ("sm_89", "8.8", "multimem.st.relaxed.sys.global.u32 [%rd1], %r1;"),
    ("sm_89", "8.8", "multimem.red.global.add.u32 [%rd1], %r1;"),
    ("sm_89", "8.8", "multimem.ld_reduce.global.add.u32 %r1, [%rd1];"),
    ("sm_90", "8.0", "multimem.st.global.u32 [%rd1], %r1;"),
    ("sm_90", "8.0", "multimem.red.global.add.u32 [%rd1], %r1;"),
    ("sm_90", "8.0", "multimem.ld_reduce.global.add.u32 %r1, [%rd1];"),
    ("sm_90", "9.0", "multimem.cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r2;"),
    ("sm_100", "9.0", "multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], %r2;"),
    # modifiers and types (ptxas's words; checked before any code is made)
    ("sm_90", "8.8", "multimem.st.global.u32 [%rd1], %rd1;"),
    ("sm_90", "8.8", "multimem.red.global.add.u32 [%rd1], %f1;"),
    ("sm_100", "8.8", "multimem.ld_reduce.global.add.u32 %rd1, [%rd1];"),
    ("sm_90", "8.8", "multimem.red.global.add.s64 [%rd1], %rd3;"),
    ("sm_90", "8.8", "multimem.st.relaxed.global.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.release.global.add.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.ld_reduce.acquire.global.add.u32 %r1, [%rd1];"),
    ("sm_90", "8.8", "multimem.st.global.f16 [%rd1], %h1;"),
    ("sm_90", "8.8", "multimem.st.global.bf16 [%rd1], %h1;"),
    ("sm_90", "8.8", "multimem.red.global.add.f16 [%rd1], %h1;"),
    ("sm_90", "8.8", "multimem.st.shared.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.global.add.v2.f64 [%rd1], {%fd1,%fd2};"),
    ("sm_90", "8.8", "multimem.red.global.and.f32 [%rd1], %f1;"),
    ("sm_90", "8.8", "multimem.red.global.min.f32 [%rd1], %f1;"),
    ("sm_90", "8.8", "multimem.red.global.max.f64 [%rd1], %fd1;"),
    ("sm_90", "8.8", "multimem.red.global.add.v8.f32 [%rd1], {%f1,%f2,%f1,%f2,%f1,%f2,%f1,%f2};"),
    ("sm_90", "8.8", "multimem.red.global.add.v2.u32 [%rd1], {%r1,%r2};"),
    ("sm_90", "8.8", "multimem.st.global.v2.u32 [%rd1], {%r1,%r2};"),
    ("sm_90", "8.8", "multimem.st.global.v8.f32 [%rd1], {%f1,%f2,%f1,%f2,%f1,%f2,%f1,%f2};"),
    ("sm_90", "8.8", "multimem.red.acquire.sys.global.add.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.st.acquire.sys.global.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.weak.global.add.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.st.weak.sys.global.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.st.global.u8 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.global.inc.u32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.global.or.s32 [%rd1], %r1;"),
    ("sm_90", "8.8", "multimem.red.global.add.b32 [%rd1], %r1;"),
    # fp8 lanes (sm_100+ a/f targets; ptxas 13.5's words, order included)
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.acc::f32.e4m3x4 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.min.acc::f32.e4m3x4 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.min.acc::f16.e5m2x4 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.acc::f16.f16x2 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.min.acc::f16.f16x2 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.acc::f16.u32 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.acc::f32.f32 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.acc::f32.acc::f16.e4m3x4 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.and.e4m3x4 %r1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.e4m3x2 %h1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.e4m3 %h1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.add.e4m3x4 %h1, [%rd1];"),
    ("sm_100a", "8.8", "multimem.ld_reduce.global.min.acc::f16.v8.e4m3x4 {%r1,%r2,%r3,%r1,%r2,%r3,%r1,%r2}, [%rd1];"),
    ("sm_100a", "8.8", "multimem.red.global.add.e4m3x4 [%rd1], %r1;"),
    ("sm_100a", "8.8", "multimem.red.global.add.v2.e5m2x2 [%rd1], {%h1, %h2};"),
    ("sm_100a", "8.8", "multimem.st.global.e5m2x2 [%rd1], %h1;"),
    ("sm_100a", "8.8", "multimem.st.global.v2.e4m3x2 [%rd1], {%r1, %r2};"),
    ("sm_100a", "8.8", "multimem.st.global.v8.e4m3x4 [%rd1], {%r1,%r2,%r3,%r1,%r2,%r3,%r1,%r2};"),
    ("sm_120a", "8.8", "multimem.ld_reduce.global.min.acc::f16.e4m3x2 %h1, [%rd1];"),
    ("sm_100", "8.8", "multimem.ld_reduce.global.add.acc::f16.e4m3x4 %r1, [%rd1];"),
    ("sm_100", "8.8", "multimem.ld_reduce.global.min.acc::f16.v2.e4m3x2 {%h1, %h2}, [%rd1];"),
    ("sm_90a", "8.8", "multimem.st.release.sys.global.v4.e4m3x4 [%rd1], {%r1,%r2,%r3,%r1};"),
    ("sm_90a", "8.8", "multimem.ld_reduce.global.add.acc::f16.v8.e4m3x4 {%r1,%r2,%r3,%r1,%r2,%r3,%r1,%r2}, [%rd1];"),
    ("sm_120f", "8.8", "multimem.ld_reduce.global.max.v2.e4m3x4 {%r1, %r2}, [%rd1];"),
]


@pytest.mark.parametrize("arch,version,line", REFUSALS)
def test_multimem_refusals_as_ptxas(arch, version, line):
    ptx = f""".version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .f32 %f<4>; .reg .b16 %h<4>; .reg .f64 %fd<4>;
ld.param.u64 %rd1, [p];
{line}
ret;
}}
"""
    assert_refused_as_ptxas(ptx, arch)


# multimem.ld_reduce: (instruction, register width in bits, registers)
LD_REDUCE = [
    ("multimem.ld_reduce.relaxed.sys.global.add.u32", 32, 1),
    ("multimem.ld_reduce.global.min.s32", 32, 1),
    ("multimem.ld_reduce.weak.global.xor.b32", 32, 1),
    ("multimem.ld_reduce.acquire.gpu.global.max.u64", 64, 1),
    ("multimem.ld_reduce.relaxed.cta.global.min.s64", 64, 1),
    ("multimem.ld_reduce.global.add.f32", 32, 1),
    ("multimem.ld_reduce.global.add.v2.f32", 32, 2),
    ("multimem.ld_reduce.acquire.sys.global.add.v4.f32", 32, 4),
    ("multimem.ld_reduce.global.min.f16x2", 32, 1),
    ("multimem.ld_reduce.global.max.v4.bf16x2", 32, 4),
    ("multimem.ld_reduce.global.add.acc::f32.v2.f16x2", 32, 2),
    ("multimem.ld_reduce.global.add.f64", 64, 1),
    # vectors of single halves (the inventory's multimem forms: an internal KeyError before)
    ("multimem.ld_reduce.global.add.v2.f16", 16, 2),
    ("multimem.ld_reduce.relaxed.gpu.global.min.v4.bf16", 16, 4),
    ("multimem.ld_reduce.global.add.acc::f32.v8.f16", 16, 8),
    ("multimem.ld_reduce.acquire.sys.global.max.v8.bf16", 16, 8),
]


def _store_out(bits, n):
    """The results to out: one vector store, or two v4s for eight halves (ptxas 13.5 stores
    only the first element of st.global.v8.b16)."""
    if n == 8:
        halves = [", ".join(f"%v{k}" for k in range(i, i + 4)) for i in (0, 4)]
        return f"st.global.v4.b16 [%ro], {{{halves[0]}}};\nst.global.v4.b16 [%ro+8], {{{halves[1]}}};"
    regs = ", ".join(f"%v{k}" for k in range(n))
    return f"st.global{f'.v{n}' if n > 1 else ''}.b{bits} [%ro], {{{regs}}};" if n > 1 else \
        f"st.global.b{bits} [%ro], {regs};"


def _ld_reduce_ptx(arch, spelling, bits, n):
    """Thread t reduces slot t of `mem` (its one copy: the value) into out[t]."""
    regs = ", ".join(f"%v{k}" for k in range(n))
    ops = f"{{{regs}}}" if n > 1 else regs
    size = n * bits // 8
    store = _store_out(bits, n)
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 out)
{{
.reg .b{bits} {regs};
{_per_thread("ro", "out", size)}
add.s64 %rm, %rm, %g;
{spelling} {ops}, [%rm];
{store}
ret;
}}
"""


def _ldgmc(cubin):
    return [re.sub(r"R\d+", "R", m.group(0)) for m in
            re.finditer(r"\b(?:LDGMC|CCTL)\.[^;]*", oracle.cuobjdump_sass(cubin))]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("spelling,bits,n", LD_REDUCE, ids=[f[0] for f in LD_REDUCE])
def test_ld_reduce_equals_numpy(arch, spelling, bits, n):
    """One LDGMC as ptxas's (op, type, .RN, .STRONG.SYS; `.acquire`: CCTL.IVALL); in one
    emulated GPU the reduction is over the one local copy: out = mem, NaNs and all."""
    _check_ld_reduce(arch, spelling, bits, n)


# fp8 lanes (PTX 8.6, sm_100+ a/f targets; an internal KeyError before): `.e4m3x4` is a .b32
# of four lanes, `.e4m3x2` a .b16 of two; LDGMC.E.<op>.E4M3x<lanes of the whole access>.RN,
# the `.acc::f16` add HPADD (ptxas 13.5.37 on sm_100a and sm_120a alike)
LD_REDUCE_FP8 = [
    ("multimem.ld_reduce.global.add.acc::f16.v4.e4m3x4", 32, 4),
    ("multimem.ld_reduce.relaxed.sys.global.min.e5m2x4", 32, 1),
    ("multimem.ld_reduce.global.add.v2.e5m2x2", 16, 2),
    ("multimem.ld_reduce.global.max.v4.e4m3x2", 16, 4),
    ("multimem.ld_reduce.acquire.gpu.global.add.v2.e4m3x4", 32, 2),
    ("multimem.ld_reduce.global.add.acc::f16.v8.e5m2x2", 16, 8),
    ("multimem.ld_reduce.weak.global.max.v2.e5m2x4", 32, 2),
    ("multimem.ld_reduce.global.add.acc::f16.e4m3x4", 32, 1),
]


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a"])
@pytest.mark.parametrize("spelling,bits,n", LD_REDUCE_FP8, ids=[f[0] for f in LD_REDUCE_FP8])
def test_ld_reduce_fp8_as_ptxas(arch, spelling, bits, n):
    _check_ld_reduce(arch, spelling, bits, n)


@pytest.mark.parametrize("arch", ["sm_100f", "sm_103a", "sm_110a", "sm_121a"])
@pytest.mark.parametrize("spelling,bits,n", LD_REDUCE_FP8[::2], ids=[f[0] for f in LD_REDUCE_FP8[::2]])
def test_ld_reduce_fp8_other_targets(arch, spelling, bits, n):
    """The other targets ptxas takes fp8 multimem on (PTX 9.0: sm_110a's and sm_121a's
    first): the same LDGMC forms (blackwell table's sm_100/sm_120 ones)."""
    _check_ld_reduce(arch, spelling, bits, n, (9, 0))


def _check_ld_reduce(arch, spelling, bits, n, version=(8, 8)):
    ptx = _ld_reduce_ptx(arch, spelling, bits, n).replace(".version 8.8", ".version %d.%d" % version)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    mem = np.random.default_rng(n * bits + len(spelling)).integers(0, 2 ** 32, THREADS * n * bits // 32,
                                                                   dtype=np.uint32)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros_like(mem)
        res = run(cubin, "k", 1, THREADS, [mem.copy(), out], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(out, mem, err_msg=name)
    assert _ldgmc(ours) == _ldgmc(theirs.output)
    assert _grid_records(ours) == _grid_records(theirs.output)


# multimem.st of fp8 lanes: ptxas's plain STG of the same bits (order and scope as st's)
ST_FP8 = [
    ("multimem.st.release.sys.global.v4.e4m3x4", 32, 4),
    ("multimem.st.global.e5m2x4", 32, 1),
    ("multimem.st.relaxed.gpu.global.v2.e5m2x2", 16, 2),
    ("multimem.st.weak.global.v4.e4m3x2", 16, 4),
    ("multimem.st.relaxed.cta.global.v2.e4m3x4", 32, 2),
]


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a"])
@pytest.mark.parametrize("spelling,bits,n", ST_FP8, ids=[f[0] for f in ST_FP8])
def test_st_fp8_as_ptxas(arch, spelling, bits, n):
    """Thread t stores its `in` values to slot t of `mem`: mem = in, in ours and in ptxas's
    cubin; the store instructions ours = ptxas's."""
    regs = ", ".join(f"%v{k}" for k in range(n))
    ops = f"{{{regs}}}" if n > 1 else regs
    vec = f".v{n}" if n > 1 else ""
    size = n * bits // 8
    ptx = f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 in)
{{
.reg .b{bits} {regs};
{_per_thread("ri", "in", size)}
add.s64 %rm, %rm, %g;
ld.global{vec}.b{bits} {ops}, [%ri];
{spelling} [%rm], {ops};
ret;
}}
"""
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    data = np.random.default_rng(n * bits).integers(0, 2 ** 32, THREADS * size // 4, dtype=np.uint32)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        mem = np.zeros_like(data)
        res = run(cubin, "k", 1, THREADS, [mem, data.copy()], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(mem, data, err_msg=name)
    strip = lambda ops: [re.sub(r"R\d+|UR\d+", "R", o) for o in ops]  # noqa: E731
    assert strip(_memory_ops(ours)) == strip(_memory_ops(theirs.output))
    assert _grid_records(ours) == _grid_records(theirs.output)


def _bulk_ops(cubin):
    """The bulk unit's instructions of a cubin, uniform registers renamed alike."""
    return [re.sub(r"UR\d+", "UR", m.group(0))
            for m in re.finditer(r"\bUBLK\w*\.[^;]*", oracle.cuobjdump_sass(cubin))]


def _bulk_ptx(arch, line):
    return f""".version 9.3
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %ro, %ri, %v;
.reg .b32 %s, %n, %t;
.reg .pred %p;
.shared .align 16 .b8 sb[256];
ld.param.u64 %ro, [out]; ld.param.u64 %ri, [in];
cvta.to.global.u64 %ro, %ro; cvta.to.global.u64 %ri, %ri;
mov.u32 %t, %tid.x; mov.u32 %s, sb;
mul.wide.u32 %v, %t, 8; add.s64 %ri, %ri, %v;
ld.global.u64 %v, [%ri];
shl.b32 %n, %t, 3; add.u32 %n, %s, %n;
st.shared.u64 [%n], %v;
bar.sync 0;
fence.proxy.async.shared::cta;
setp.eq.u32 %p, %t, 0;
mov.u32 %n, 256;
@%p {line}
cp.async.bulk.commit_group;
cp.async.bulk.wait_group 0;
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_multimem_bulk_copy_as_ptxas(arch):
    """multimem.cp.async.bulk (PTX 9.1): ptxas's code is cp.async.bulk's (UBLKCP.G.S); in
    one emulated GPU the multimem destination is the local copy: out = the shared bytes."""
    ptx = _bulk_ptx(arch, "multimem.cp.async.bulk.global.shared::cta.bulk_group [%ro], [%s], %n;")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    data = np.random.default_rng(5).integers(0, 2 ** 63, 32, dtype=np.uint64)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(32, np.uint64)
        run(cubin, "k", 1, 32, [out, data.copy()])
        np.testing.assert_array_equal(out, data, err_msg=name)
    assert _bulk_ops(ours) == _bulk_ops(theirs.output)
    assert _grid_records(ours) == _grid_records(theirs.output)


# every op/type ptxas 13.5 accepts for multimem.cp.reduce.async.bulk (the same on sm_90, sm_100 and
# sm_120; probed over 8 operations x 10 types: the others are refused)
BULK_REDUCE = [("add", t) for t in ("u32", "s32", "u64", "f32", "f64")] \
    + [("add.noftz", "f16"), ("add.noftz", "bf16")] \
    + [(o, t) for o in ("min", "max") for t in ("f16", "bf16", "u32", "s32", "u64", "s64")] \
    + [("inc", "u32"), ("dec", "u32")] + [(o, t) for o in ("and", "or", "xor") for t in ("b32", "b64")]
_NP = {"u32": np.uint32, "b32": np.uint32, "s32": np.int32, "u64": np.uint64, "b64": np.uint64,
       "s64": np.int64, "f32": np.float32, "f64": np.float64, "f16": np.float16}


def _bulk_reduce_want(op, ty, old, new):
    """NumPy of the PTX ISA's element-wise reduction (bf16 through f32: the inputs are chosen
    so that each sum is exact in bf16)."""
    name = op.split(".")[0]
    if ty == "bf16":
        f = lambda b: (b.astype(np.uint32) << 16).view(np.float32)  # noqa: E731
        r = {"add": np.add, "min": np.minimum, "max": np.maximum}[name](f(old), f(new))
        return (r.view(np.uint32) >> 16).astype(np.uint16)
    if name == "inc":
        return np.where(old >= new, 0, old + 1).astype(old.dtype)
    if name == "dec":
        return np.where((old == 0) | (old > new), new, old - 1).astype(old.dtype)
    fn = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
    return fn(old, new)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("op,ty", BULK_REDUCE)
def test_multimem_bulk_reduce_as_ptxas(arch, op, ty):
    """multimem.cp.reduce.async.bulk (PTX 9.1): ptxas writes cp.reduce.async.bulk's UBLKRED
    with .STRONG.SYS (float types .RN); in one emulated GPU the multimem destination is the
    local copy: out = out op the shared bytes, for ours and ptxas's cubin."""
    line = (f"multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.{op}.{ty} "
            "[%ro], [%s], %n;")
    ptx = _bulk_ptx(arch, line)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    rng = np.random.default_rng(len(op) * 31 + len(ty))
    if ty in ("f16", "bf16"):
        # small integers: every sum exact, so the rounding cannot hide a wrong operation
        vals = rng.integers(-64, 64, (2, 128)).astype(np.float32)
        old, new = ((v.view(np.uint32) >> 16).astype(np.uint16) if ty == "bf16"
                    else v.astype(np.float16).view(np.uint16) for v in vals)
        as_np = np.uint16
    elif ty in ("f32", "f64"):
        old, new = rng.standard_normal((2, 256 // (4 if ty == "f32" else 8))).astype(_NP[ty])
        as_np = _NP[ty]
    else:
        dt = np.dtype(_NP[ty])
        n = 256 // dt.itemsize
        hi = 40 if op in ("inc", "dec") else None
        old, new = (rng.integers(0, hi or 2 ** 63, n, dtype=np.uint64).astype(dt) for _ in range(2))
        as_np = dt.type
    if ty == "f16":
        want = _bulk_reduce_want(op, ty, old.view(np.float16), new.view(np.float16)).view(np.uint16)
    else:
        want = _bulk_reduce_want(op, ty, old, new)
    want = np.asarray(want, as_np).view(np.uint64)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = old.view(np.uint64).copy()
        res = run(cubin, "k", 1, 32, [out, new.view(np.uint64).copy()], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(out, want, err_msg=f"{name} {op}.{ty}")
    assert _bulk_ops(ours) == _bulk_ops(theirs.output)
    assert _grid_records(ours) == _grid_records(theirs.output)


def _uniform_ld_reduce_ptx(arch, spelling, bits, n, offset, cvta):
    """Every thread reduces the words at `mem + offset` (a parameter's pointer: the same
    address in every lane) into its slot of out."""
    regs = ", ".join(f"%v{k}" for k in range(n))
    ops = f"{{{regs}}}" if n > 1 else regs
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 out)
{{
.reg .b{bits} {regs};
{_per_thread("ro", "out", n * bits // 8).replace("cvta.to.global.u64 %rm, %rm;", "cvta.to.global.u64 %rm, %rm;" if cvta else "")}
{spelling} {ops}, [%rm+{offset}];
{_store_out(bits, n)}
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("offset,cvta", [(0, False), (16, True)])
@pytest.mark.parametrize("spelling,bits,n", LD_REDUCE[::2], ids=[f[0] for f in LD_REDUCE[::2]])
def test_ld_reduce_of_a_parameter_pointer(arch, spelling, bits, n, offset, cvta):
    """A kernel parameter's pointer (cvta'd or not, + an offset): ptxas's LDGMC reads it
    from its ULDC.64 pair, `[RZ.U32+UR4+imm]`; ours the same (was `[R.64+URZ]` of a vector
    copy). Every lane reads the one address: out[t] = those words."""
    ptx = _uniform_ld_reduce_ptx(arch, spelling, bits, n, offset, cvta)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    words = n * bits // 32
    mem = np.random.default_rng(n * bits + offset).integers(0, 2 ** 32, 16 + words, dtype=np.uint32)
    want = np.tile(mem[offset // 4:offset // 4 + words], THREADS)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = np.zeros(THREADS * words, np.uint32)
        res = run(cubin, "k", 1, THREADS, [mem.copy(), out], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(out, want, err_msg=name)
    assert _ldgmc(ours) == _ldgmc(theirs.output)
    assert _grid_records(ours) == _grid_records(theirs.output)
    assert "RZ.U32+UR" in _ldgmc(ours)[0]
