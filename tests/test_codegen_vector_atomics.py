"""Vector `atom`/`red` (`.v2/.v4/.v8`, PTX 8.1+, sm_90+; PTX ISA "atom"/"red": f32 add in
.v2/.v4, f16/bf16 add/min/max in .v2/.v4/.v8, f16x2/bf16x2 in .v2/.v4; global or generic).
ptxas 13.5 writes one ATOMG/ATOM/REDG typed by the count of 32- or 16-bit lanes (F32x4,
F16x8, BF16x4). Expected values: a NumPy model of each element's atomic operation (the ISA
makes each element atomic), for ours and for ptxas's cubin in the emulator; forms as
ptxas's; refusals: every ptxas message for the module."""
import math
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptxas_refusals import assert_refused_as_ptxas

THREADS = 64
# (type, op, vector) of every form the PTX ISA lists
FORMS = ([("f32", "add", v) for v in (2, 4)]
         + [(t, op, v) for t in ("f16", "bf16") for op in ("add", "min", "max") for v in (2, 4, 8)]
         + [(t, op, v) for t in ("f16x2", "bf16x2") for op in ("add", "min", "max") for v in (2, 4)])
ELEMENT = {"f32": (".f32", 32), "f16": (".b16", 16), "bf16": (".b16", 16), "f16x2": (".b32", 32),
           "bf16x2": (".b32", 32)}


def _words(ty, vec):
    return vec * ELEMENT[ty][1] // 32


def _ptx(arch, ty, op, vec, kind, slots, quals=".global"):
    """Thread t applies its vector (in[t]) to slot t % slots of `mem`; atom stores the old
    values to olds[t]."""
    reg, bits = ELEMENT[ty]
    n = _words(ty, vec)
    w = ", ".join(f"%w{k}" for k in range(n))
    e = ", ".join(f"%e{k}" for k in range(vec))
    o = ", ".join(f"%o{k}" for k in range(vec))
    vw = f".v{n}" if n > 1 else ""
    ww = f"{{{w}}}" if n > 1 else w
    unpack, pack = [], []
    for k in range(n):
        if bits == 16:
            unpack.append(f"mov.b32 {{%e{2 * k}, %e{2 * k + 1}}}, %w{k};")
            pack.append(f"mov.b32 %w{k}, {{%o{2 * k}, %o{2 * k + 1}}};")
        else:
            unpack.append(f"mov.b32 %e{k}, %w{k};")
            pack.append(f"mov.b32 %w{k}, %o{k};")
    noftz = "" if ty == "f32" else ".noftz"
    space = "" if quals.startswith(".generic") else quals
    if kind == "atom":
        body = (f"atom{space}.{op}{noftz}.v{vec}.{ty} {{{o}}}, [%rm], {{{e}}};\n" + "\n".join(pack)
                + f"\nst.global{vw}.b32 [%ro], {ww};")
    else:
        body = f"red{space}.{op}{noftz}.v{vec}.{ty} [%rm], {{{e}}};"
    return f""".version 8.6
.target {arch}
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 in, .param .u64 olds)
{{
.reg .b64 %rm, %ri, %ro, %g;
.reg .b32 %t, %s, {w};
.reg {reg} {e}, {o};
ld.param.u64 %rm, [mem];
ld.param.u64 %ri, [in];
ld.param.u64 %ro, [olds];
cvta.to.global.u64 %rm, %rm;
mov.u32 %t, %tid.x;
mul.wide.u32 %g, %t, {4 * n};
add.s64 %ri, %ri, %g;
add.s64 %ro, %ro, %g;
rem.u32 %s, %t, {slots};
mul.wide.u32 %g, %s, {4 * n};
add.s64 %rm, %rm, %g;
ld.global{vw}.b32 {ww}, [%ri];
{chr(10).join(unpack)}
{body}
ret;
}}
"""


def _round_bf16(x: float) -> int:
    if x == 0:
        return 0x8000 if math.copysign(1, x) < 0 else 0
    m, e = math.frexp(x)
    return int(np.float32(round(m * 256) / 256 * 2.0 ** e).view(np.uint32)) >> 16


def _half_values(ty, bits_array):
    """float64 values of 16-bit patterns (f16 or bf16)."""
    if ty.startswith("bf16"):
        return (bits_array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits_array.astype(np.uint16).view(np.float16).astype(np.float64)


def _half_bits(ty, x: float) -> int:
    if ty.startswith("bf16"):
        return _round_bf16(x)
    return int(np.float16(x).view(np.uint16))      # float64 -> f16 rounds to nearest even


def _apply(ty, op, old: np.ndarray, v: np.ndarray) -> np.ndarray:
    """memory words after one element-wise op (words of uint32)."""
    if ty == "f32":
        return (old.view(np.float32) + v.view(np.float32)).view(np.uint32)
    lanes_old = np.stack([old & 0xFFFF, old >> 16], -1)
    lanes_v = np.stack([v & 0xFFFF, v >> 16], -1)
    a, b = _half_values(ty, lanes_old), _half_values(ty, lanes_v)
    r = a + b if op == "add" else np.minimum(a, b) if op == "min" else np.maximum(a, b)
    out = np.array([_half_bits(ty, x) for x in r.ravel()], np.uint32).reshape(r.shape)
    return (out[..., 0] | out[..., 1] << 16).astype(np.uint32)


def _random_words(ty, rng, shape, exact):
    """Random words: normal numbers of modest exponent; `exact`: small integers, so any
    order of a contended sum gives the same result."""
    if ty == "f32":
        x = rng.integers(-64, 65, shape) if exact else rng.uniform(-100, 100, shape)
        return x.astype(np.float32).view(np.uint32)
    halves = rng.integers(-8, 9, shape + (2,)) if exact else rng.uniform(-50, 50, shape + (2,))
    bits = np.vectorize(lambda x: _half_bits(ty, float(x)))(halves).astype(np.uint32)
    return (bits[..., 0] | bits[..., 1] << 16).astype(np.uint32)


def _check(arch, ty, op, vec, kind, slots, quals=".global"):
    ptx = _ptx(arch, ty, op, vec, kind, slots, quals)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    n = _words(ty, vec)
    rng = np.random.default_rng(hash((ty, op, vec, kind, slots)) & 0xFFFF)
    exact = slots < THREADS and op == "add"
    mem0 = _random_words(ty, rng, (slots, n), exact)
    data = _random_words(ty, rng, (THREADS, n), exact)
    want_mem, want_old = mem0.copy(), np.zeros((THREADS, n), np.uint32)
    for t in range(THREADS):           # lane order; contended adds are exact, so any order
        want_old[t] = want_mem[t % slots]
        want_mem[t % slots] = _apply(ty, op, want_mem[t % slots], data[t])
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        mem, olds = mem0.copy(), np.zeros((THREADS, n), np.uint32)
        res = run(cubin, "k", 1, THREADS, [mem, data.copy(), olds], hazard_check=True)
        assert not res.hazards, (name, res.hazards)
        np.testing.assert_array_equal(mem, want_mem, err_msg=name)
        if kind == "atom" and slots == THREADS:
            np.testing.assert_array_equal(olds, want_old, err_msg=name)
    return ours, theirs.output


def _atomics(cubin, arch):
    text = oracle.cuobjdump_sass(cubin)
    return [m.group(0) for m in re.finditer(r"\b(?:REDG|ATOMG|ATOM)\.[^;]*", text)]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("ty,op,vec", FORMS)
@pytest.mark.parametrize("kind", ["red", "atom"])
def test_vector_atomics_equal_numpy(arch, ty, op, vec, kind):
    """Each thread its own slot (atom: old values checked too), then 4 slots shared by 16
    threads each (final memory); ours and ptxas's = NumPy, hazard-free."""
    _check(arch, ty, op, vec, kind, THREADS)
    _check(arch, ty, op, vec, kind, 4)


def _module(arch, version, line):
    return f""".version {version}
.target {arch}
.address_size 64
.func f(.param .b32 a) {{ ret; }}
.func (.param .b32 r) g(.param .b32 a) {{ st.param.b32 [r], 0; ret; }}
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<4>;
.reg .f32 %f<10>;
.reg .b32 %r<10>;
.reg .b16 %h<10>;
ld.param.u64 %rd1, [out];
{line}
ret;
}}
"""


V8 = "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}"
REFUSALS = [
    ("sm_100", "8.8", f"red.global.add.v8.f32 [%rd1], {V8};"),
    ("sm_90", "8.8", f"atom.global.add.v8.f32 {V8}, [%rd1], {V8};"),
    ("sm_90", "8.8", "red.global.add.noftz.v8.f16x2 [%rd1], {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8};"),
    ("sm_89", "8.8", "atom.global.v2.f32.add {%f3,%f4}, [%rd1], {%f1,%f2};"),
    ("sm_89", "8.8", "atom.global.add.v2.f32 {%f3,%f4}, [%rd1], {%f1,%f2};"),
    ("sm_89", "8.0", "red.global.add.v2.f32 [%rd1], {%f1,%f2};"),
    ("sm_90", "8.0", "red.global.add.v4.f32 [%rd1], {%f1,%f2,%f3,%f4};"),
    ("sm_89", "8.8", "red.global.add.noftz.v2.f16 [%rd1], {%h1,%h2};"),
    ("sm_89", "8.8", "red.global.add.noftz.v2.f16x2 [%rd1], {%r1,%r2};"),
    ("sm_89", "8.8", "atom.global.add.noftz.v4.f16 {%h1,%h2,%h3,%h4}, [%rd1], {%h1,%h2,%h3,%h4};"),
    ("sm_89", "8.8", "red.global.max.noftz.v8.bf16 [%rd1], {%h1,%h2,%h3,%h4,%h5,%h6,%h7,%h8};"),
    ("sm_89", "8.8", "red.global.add.noftz.v2.bf16x2 [%rd1], {%r1,%r2};"),
    ("sm_90", "8.8", "red.shared.add.v2.f32 [%rd1], {%f1,%f2};"),
    ("sm_90", "8.8", "atom.shared::cluster.add.v2.f32 {%f1,%f2}, [%rd1], {%f1,%f2};"),
    ("sm_90", "8.8", "red.global.min.v2.f32 [%rd1], {%f1,%f2};"),
    ("sm_89", "8.8", "red.global.max.noftz.bf16 [%rd1], %h1;"),
    ("sm_89", "8.8", "red.global.add.noftz.bf16x2 [%rd1], %r1;"),
    ("sm_89", "8.8", "atom.add.noftz.bf16 %h1, [%rd1], %h1;"),
    ("sm_89", "8.8", "red.shared.min.noftz.v2.f16 [%rd1], {%h1,%h2};"),
    ("sm_90", "8.8", "red.global.min.noftz.f16x2 [%rd1], %r1;"),
    ("sm_90", "8.8", "atom.shared.max.noftz.bf16 %h1, [%rd1], %h1;"),
    ("sm_90", "8.8", "red.max.noftz.f16 [%rd1], %h1;"),
    # a sink as mov's whole result, as a call argument (a sink call result is fine)
    ("sm_89", "8.8", "mov.b32 _, %r1;"),
    ("sm_89", "8.8", "call f, (_);"),
    ("sm_90", "8.8", "call (_), g, (_);"),
]


@pytest.mark.parametrize("arch,version,line", REFUSALS)
def test_refusals_as_ptxas(arch, version, line):
    """Every message ptxas gives for the module, in its order (ptxas refuses each; ours
    were internal errors, 'not supported yet', compiled, or other words)."""
    ptx = _module(arch, version, line)
    assert_refused_as_ptxas(ptx, arch)
