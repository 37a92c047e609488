"""Textures and surfaces run in the emulator (issue 15): kernels compiled by ptxas and by us,
each run on the same bound objects, and both compared with a NumPy model of the documented
semantics written here (CUDA Programming Guide, texture fetching: nearest point, linear
filtering with 1.8 fixed-point weights, address modes; PTX ISA: tld4's footprint order,
suld/sust/sured byte addressing and clamp modes, txq/suq sizes), never with our own output.

Texel values are small integers and coordinates multiples of 1/64 (1/16 in 3D), so every
filtered value is exact in float32 whatever order the hardware sums in; a few 1D
coordinates fall between 1/256 steps to pin the weight's rounding (to nearest, the
emulator's documented choice: the guide does not say). Handles: a `.u64` kernel parameter
(ptxas's bound form on the parameter's slot), a module `.texref`/`.surfref`, and a
per-thread handle loaded from memory (the `.B` register forms)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.emu.textures import KIND_BIT, Surface, Texture

THREADS = 64
# the arch both compilers target (tests/test_emu_texture_sm90.py runs these tests on sm_90+)
ARCH = "sm_89"


def cubins(ptx: str) -> dict[str, bytes]:
    theirs = oracle.ptxas(ptx, ARCH)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, ARCH, "k.ptx"), ARCH, filename="k.ptx")
    return {"ptxas": theirs.output, "ours": ours}


# ---------------------------------------------------------------- the NumPy model
def _index(i: np.ndarray, n: int, mode: str):
    """(index mapped by the address mode, inside) for an integer index array."""
    inside = (i >= 0) & (i < n)
    if mode == "wrap":
        return np.mod(i, n), np.ones_like(inside)
    if mode == "mirror":
        p = np.mod(i, 2 * n)
        return np.where(p < n, p, 2 * n - 1 - p), np.ones_like(inside)
    return np.clip(i, 0, n - 1), inside if mode == "border" else np.ones_like(inside)


def _scaled(x: np.ndarray, n: int, mode: str, normalized: bool) -> np.ndarray:
    if not normalized:
        return x
    if mode == "wrap":
        x = x - np.floor(x)
    elif mode == "mirror":
        t = x - 2 * np.floor(x / 2)
        x = np.where(t <= 1, t, 2 - t)
    return x * n


def model_sample(data, coords, filt, modes, normalized):
    """data: (..., W, 4) float texels with the spatial axes reversed (z, y, x); coords: a list
    per axis (x first) of float64 arrays. Returns (threads, 4)."""
    dims = len(coords)
    shape = data.shape[:-1][::-1]          # W, H, D
    per_axis = []
    for a in range(dims):
        x = _scaled(coords[a], shape[a], modes[a], normalized)
        if filt == "point":
            per_axis.append([(_index(np.floor(x).astype(np.int64), shape[a], modes[a]), 1.0)])
        else:
            xb = x - 0.5
            i = np.floor(xb).astype(np.int64)
            alpha = np.floor((xb - i) * 256 + 0.5) / 256
            per_axis.append([(_index(i, shape[a], modes[a]), 1 - alpha),
                             (_index(i + 1, shape[a], modes[a]), alpha)])
    total = np.zeros((len(coords[0]), 4))
    def walk(a, idx, inside, weight):
        nonlocal total
        if a == dims:
            v = data[tuple(idx[::-1])]
            total = total + (weight * inside)[:, None] * v
            return
        for (i, ok), wgt in per_axis[a]:
            walk(a + 1, idx + [i], inside & ok, weight * wgt)
    walk(0, [], np.ones(len(coords[0]), bool), np.ones(len(coords[0])))
    return total.astype(np.float32)


# ---------------------------------------------------------------- texture kernels
TEX_KERNEL = """.version 8.5
.target sm_89
.address_size 64
{decl}.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 th)
{{
.reg .b64 %rd<12>;
.reg .f32 %f<20>;
.reg .b32 %r<20>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
{handle_load}mov.u32 %r19, %tid.x;
mul.wide.u32 %rd3, %r19, 32;
add.s64 %rd4, %rd2, %rd3;
ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd4];
ld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd4+16];
{line}
mul.wide.u32 %rd5, %r19, 16;
add.s64 %rd6, %rd1, %rd5;
st.global.v4.b32 [%rd6], {{%r10, %r11, %r12, %r13}};
ret;
}}
"""


def texture_kernel(line: str, handle: str) -> str:
    """`line` uses HANDLE; coordinates f32 in %f1..%f4, integers in %r1..%r4; results %r10..13."""
    decl, load = "", ""
    if handle == "module":
        decl, h = ".global .texref tex0;\n", "tex0"
    elif handle == "param":
        load, h = "ld.param.u64 %rd9, [th];\n", "%rd9"
    else:                                   # per-thread: from memory (in + 24)
        load, h = "", "%rd9"
        line = "ld.global.u64 %rd9, [%rd4+24];\n" + line
    return TEX_KERNEL.format(decl=decl, handle_load=load, line=line.replace("HANDLE", h))


def run_texture(ptx: str, tex: Texture, handle: str, coords: np.ndarray, ints: np.ndarray | None = None):
    """{compiler: (threads, 4) uint32 results}. coords (threads, 4) f32, ints (threads, 4) u32;
    the per-thread handle (in + 24) is the texture's: it is bound first (index 1)."""
    inp = np.zeros((THREADS, 8), np.uint32)
    inp[:, :4] = coords.astype(np.float32).view(np.uint32)
    if ints is not None:
        inp[:, 4:8] = ints
    handle_value = KIND_BIT["texture"] | 1
    inp[:, 6] = handle_value & 0xFFFFFFFF
    inp[:, 7] = handle_value >> 32
    if ints is not None and handle == "reg":
        assert not ints[:, 2:].any()
    out = {}
    for name, cubin in cubins(ptx).items():
        res = np.zeros((THREADS, 4), np.uint32)
        textures = {"tex0": tex} if handle == "module" else None
        r = run(cubin, "k", 1, THREADS, [res, inp.copy(), tex], textures=textures, hazard_check=name == "ours")
        if name == "ours":
            assert not r.hazards, [str(h) for h in r.hazards[:3]]
        out[name] = res
    return out


def texels(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=shape + (4,)).astype(np.float32)


def coordinates(rng, n: int, lo: float, hi: float, step: float) -> np.ndarray:
    return np.round(rng.uniform(lo, hi, n) / step) * step


GEO_DIMS = {"1d": 1, "2d": 2, "3d": 3}


@pytest.mark.parametrize("handle", ["param", "module", "reg"])
@pytest.mark.parametrize("geo", ["1d", "2d", "3d"])
@pytest.mark.parametrize("filt", ["point", "linear"])
def test_tex_filtering_matches_model(geo, filt, handle):
    """tex.{1d,2d,3d}.v4.f32.f32, unnormalized coordinates, clamp (x) and border (y, z)."""
    dims = GEO_DIMS[geo]
    shape = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}[dims]
    data = texels(shape, dims)
    modes = ("clamp", "border", "border")
    tex = Texture(data, geo, address=modes, filter=filt)
    rng = np.random.default_rng(7)
    step = {1: 1 / 64, 2: 1 / 64, 3: 1 / 16}[dims]
    c = np.zeros((THREADS, 4))
    for a in range(dims):
        c[:, a] = coordinates(rng, THREADS, -1.5, shape[::-1][a] + 1.5, step)
    if dims == 1:      # between 1/256 steps: the weight's rounding
        c[:8, 0] = 2.5 + np.array([1, 3, 5, 127, 129, 255, 257, 511]) / 512
    vec = "{" + ", ".join(["%f1", "%f2", "%f3", "%f4"][:{1: 1, 2: 2, 3: 4}[dims]]) + "}"
    line = f"tex.{geo}.v4.f32.f32 {{%r10, %r11, %r12, %r13}}, [HANDLE, {vec}];"
    line = line.replace("{%r10, %r11, %r12, %r13}", "{%f10, %f11, %f12, %f13}")
    line += "\nmov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;"
    ptx = texture_kernel(line, handle).replace(".reg .f32 %f<20>;", ".reg .f32 %f<20>;")
    got = run_texture(ptx, tex, handle, c)
    want = model_sample(data, [c[:, a] for a in range(dims)], filt, modes, False)
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


@pytest.mark.parametrize("mode", ["wrap", "mirror", "clamp", "border"])
def test_tex_normalized_address_modes(mode):
    """tex.2d with normalized coordinates in [-1.5, 2.5): every address mode, linear."""
    data = texels((4, 8), 3)
    tex = Texture(data, "2d", address=(mode, mode), filter="linear", normalized=True)
    rng = np.random.default_rng(11)
    c = np.zeros((THREADS, 4))
    c[:, 0] = coordinates(rng, THREADS, -1.5, 2.5, 1 / 512)
    c[:, 1] = coordinates(rng, THREADS, -1.5, 2.5, 1 / 256)
    line = ("tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    got = run_texture(texture_kernel(line, "param"), tex, "param", c)
    want = model_sample(data, [c[:, 0], c[:, 1]], "linear", (mode, mode), True)
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


def test_tex_normalized_float_read_mode():
    """8-bit unsigned texels read as v / 255, nearest point."""
    data = np.random.default_rng(5).integers(0, 256, size=(6, 6, 4)).astype(np.uint8)
    tex = Texture(data, "2d", read_mode="normalized_float")
    c = np.zeros((THREADS, 4))
    rng = np.random.default_rng(2)
    c[:, 0] = coordinates(rng, THREADS, 0, 6, 1 / 4)
    c[:, 1] = coordinates(rng, THREADS, 0, 6, 1 / 4)
    line = ("tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    got = run_texture(texture_kernel(line, "param"), tex, "param", c)
    i = np.clip(np.floor(c[:, 0]).astype(int), 0, 5)
    j = np.clip(np.floor(c[:, 1]).astype(int), 0, 5)
    want = (data[j, i].astype(np.float64) / 255).astype(np.float32)
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


@pytest.mark.parametrize("handle", ["param", "reg"])
@pytest.mark.parametrize("dt", ["s32", "u32"])
def test_tex_integer_coordinates_fetch(dt, handle):
    """tex.2d.v4.{s32,u32}.s32: texel fetch (TLD), integer texels, clamp."""
    rng = np.random.default_rng(9)
    data = rng.integers(-2**31, 2**31, size=(5, 7, 4)).astype(np.int32 if dt == "s32" else np.uint32)
    tex = Texture(data, "2d")
    ints = np.zeros((THREADS, 4), np.uint32)
    ints[:, 0] = rng.integers(-3, 10, THREADS).astype(np.int32).view(np.uint32)
    ints[:, 1] = rng.integers(-3, 8, THREADS).astype(np.int32).view(np.uint32)
    line = f"tex.2d.v4.{dt}.s32 {{%r10, %r11, %r12, %r13}}, [HANDLE, {{%r1, %r2}}];"
    got = run_texture(texture_kernel(line, handle), tex, handle, np.zeros((THREADS, 4)), ints)
    i = np.clip(ints[:, 0].view(np.int32), 0, 6)
    j = np.clip(ints[:, 1].view(np.int32), 0, 4)
    want = data[j, i].view(np.uint32)
    for name, res in got.items():
        np.testing.assert_array_equal(res, want, err_msg=name)


def test_tex_array_2d_point():
    """tex.a2d: the layer index (u32, clamped to the layers) then x, y."""
    data = texels((3, 4, 5), 4)
    tex = Texture(data, "a2d")
    rng = np.random.default_rng(3)
    c = np.zeros((THREADS, 4))
    c[:, 0] = coordinates(rng, THREADS, -1, 6, 1 / 8)
    c[:, 1] = coordinates(rng, THREADS, -1, 5, 1 / 8)
    ints = np.zeros((THREADS, 4), np.uint32)
    ints[:, 0] = rng.integers(0, 5, THREADS)
    line = ("tex.a2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%r1, %f1, %f2, %f3}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    got = run_texture(texture_kernel(line, "param"), tex, "param", c, ints)
    layer = np.minimum(ints[:, 0], 2)
    i = np.clip(np.floor(c[:, 0]).astype(int), 0, 4)
    j = np.clip(np.floor(c[:, 1]).astype(int), 0, 3)
    want = data[layer, j, i]
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


@pytest.mark.parametrize("comp", "rgba")
def test_tld4_footprint_order(comp):
    """tld4.<comp>.2d: the component of texels (i0,j1), (i1,j1), (i1,j0), (i0,j0)."""
    data = texels((5, 6), 8)
    tex = Texture(data, "2d")
    rng = np.random.default_rng(4)
    c = np.zeros((THREADS, 4))
    c[:, 0] = coordinates(rng, THREADS, -1, 7, 1 / 8)
    c[:, 1] = coordinates(rng, THREADS, -1, 6, 1 / 8)
    line = (f"tld4.{comp}.2d.v4.f32.f32 {{%f10, %f11, %f12, %f13}}, [HANDLE, {{%f1, %f2}}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    got = run_texture(texture_kernel(line, "param"), tex, "param", c)
    i0 = np.floor(c[:, 0] - 0.5).astype(int)
    j0 = np.floor(c[:, 1] - 0.5).astype(int)
    ci = lambda i: np.clip(i, 0, 5)
    cj = lambda j: np.clip(j, 0, 4)
    k = "rgba".index(comp)
    want = np.stack([data[cj(j0 + 1), ci(i0), k], data[cj(j0 + 1), ci(i0 + 1), k],
                     data[cj(j0), ci(i0 + 1), k], data[cj(j0), ci(i0), k]], axis=1)
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


# ---------------------------------------------------------------- queries
@pytest.mark.parametrize("query", ["width", "height", "depth"])
@pytest.mark.parametrize("op", ["txq", "suq"])
def test_size_queries(op, query):
    shape = (3, 5, 7)
    obj = Texture(texels(shape), "3d") if op == "txq" else Surface(np.zeros(shape + (4,), np.uint8), "3d")
    line = f"{op}.{query}.b32 %r10, [HANDLE];\nmov.u32 %r11, 0;\nmov.u32 %r12, 0;\nmov.u32 %r13, 0;"
    for handle in ("param", "reg"):
        ptx = texture_kernel(line, handle)
        inp = np.zeros((THREADS, 8), np.uint32)
        hv = KIND_BIT["texture" if op == "txq" else "surface"] | 1
        inp[:, 6], inp[:, 7] = hv & 0xFFFFFFFF, hv >> 32
        for name, cubin in cubins(ptx).items():
            res = np.zeros((THREADS, 4), np.uint32)
            run(cubin, "k", 1, THREADS, [res, inp, obj])
            want = {"width": 7, "height": 5, "depth": 3}[query]
            assert (res[:, 0] == want).all(), (name, handle, res[:2])


# ---------------------------------------------------------------- surfaces
SURF_KERNEL = """.version 8.5
.target sm_89
.address_size 64
{decl}.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 sh)
{{
.reg .b64 %rd<20>;
.reg .b32 %r<30>;
.reg .b16 %h<20>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
ld.param.u64 %rd9, [sh];
mov.u32 %r19, %tid.x;
mul.wide.u32 %rd3, %r19, 32;
add.s64 %rd4, %rd2, %rd3;
ld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd4];
ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4+16];
mov.b64 %rd5, {{%r5, %r6}};
mov.b64 %rd6, {{%r7, %r8}};
cvt.u16.u32 %h5, %r5;
cvt.u16.u32 %h6, %r6;
cvt.u16.u32 %h7, %r7;
cvt.u16.u32 %h8, %r8;
mul.wide.u32 %rd7, %r19, 16;
add.s64 %rd8, %rd1, %rd7;
{line}
ret;
}}
"""


def run_surface(line: str, surf: Surface, coords: np.ndarray, data: np.ndarray, handle: str = "param"):
    """{compiler: (out (threads, 4) u32, the surface's data after)}."""
    decl = ".global .surfref surf0;\n" if handle == "module" else ""
    ptx = SURF_KERNEL.format(decl=decl, line=line.replace("HANDLE", "surf0" if handle == "module" else "%rd9"))
    inp = np.concatenate([np.asarray(coords, np.int64).astype(np.int32).view(np.uint32),
                          (np.asarray(data, np.int64) & 0xFFFFFFFF).astype(np.uint32)], axis=1)
    out = {}
    for name, cubin in cubins(ptx).items():
        s = Surface(surf.data.copy(), surf.geometry)
        res = np.zeros((THREADS, 4), np.uint32)
        r = run(cubin, "k", 1, THREADS, [res, inp.copy(), s],
                textures={"surf0": s} if handle == "module" else None, hazard_check=name == "ours")
        if name == "ours":
            assert not r.hazards, [str(h) for h in r.hazards[:3]]
        out[name] = (res, s.data)
    return out


def _surface_2d(w=8, h=4, dtype=np.uint32, seed=0):
    return Surface(np.random.default_rng(seed).integers(0, 2**32, size=(h, w), dtype=np.uint64)
                   .astype(dtype), "2d")


STORE_RESULT = "st.global.v4.u32 [%rd8], {%r10, %r11, %r12, %r13};"


@pytest.mark.parametrize("handle", ["param", "module"])
@pytest.mark.parametrize("clamp", ["trap", "clamp", "zero"])
def test_suld_b32_2d(clamp, handle):
    """suld.b.2d.b32: x in bytes; out-of-range x/y (not with .trap) clamp or read zero."""
    surf = _surface_2d()
    rng = np.random.default_rng(1)
    coords = np.zeros((THREADS, 4), np.int64)
    lo, hi = (0, 8) if clamp == "trap" else (-2, 10)
    coords[:, 0] = rng.integers(lo, hi, THREADS) * 4
    coords[:, 1] = rng.integers(0 if clamp == "trap" else -1, 4 if clamp == "trap" else 6, THREADS)
    line = (f"suld.b.2d.b32.{clamp} {{%r10}}, [HANDLE, {{%r1, %r2}}];\nmov.u32 %r11, 0;\n"
            f"mov.u32 %r12, 0;\nmov.u32 %r13, 0;\n" + STORE_RESULT)
    got = run_surface(line, surf, coords, np.zeros((THREADS, 4)), handle)
    x, y = coords[:, 0] // 4, coords[:, 1]
    inside = (x >= 0) & (x < 8) & (y >= 0) & (y < 4)
    v = surf.data[np.clip(y, 0, 3), np.clip(x, 0, 7)]
    want = np.where(inside | (clamp == "clamp"), v, 0)
    for name, (res, _) in got.items():
        np.testing.assert_array_equal(res[:, 0], want, err_msg=name)


def test_suld_trap_out_of_range_faults():
    surf = _surface_2d()
    coords = np.zeros((THREADS, 4), np.int64)
    coords[5, 0] = 32        # one past the row
    line = "suld.b.2d.b32.trap {%r10}, [HANDLE, {%r1, %r2}];\n" + STORE_RESULT.replace("%r11, %r12, %r13", "%r10, %r10, %r10")
    for name in ("ptxas", "ours"):
        with pytest.raises(EmuFault, match="out of range"):
            run_surface(line, surf, coords, np.zeros((THREADS, 4)))


@pytest.mark.parametrize("form,size", [("b8", 1), ("b16", 2), ("v2.b16", 4), ("v4.b8", 4),
                                        ("b32", 4), ("v2.b32", 8), ("b64", 8), ("v4.b32", 16)])
def test_suld_sizes_1d(form, size):
    """suld.b.1d of every access size: the bytes at x .. x + size of the row."""
    raw = np.random.default_rng(2).integers(0, 256, size=256, dtype=np.uint8)
    surf = Surface(raw.copy(), "1d")
    coords = np.zeros((THREADS, 4), np.int64)
    coords[:, 0] = (np.arange(THREADS) * 3 % (256 // size)) * size
    n = 4 if form.startswith("v4") else 2 if form.startswith("v2") else 1
    elem = form.split(".")[-1]
    bits = int(elem[1:])
    reg = {"b8": "%h", "b16": "%h", "b32": "%r", "b64": "%rd"}[elem]
    dests = [f"{reg}{10 + k}" for k in range(n)]
    d = "{" + ", ".join(dests) + "}"
    # results as 32-bit words: 8/16-bit ones widened, 64-bit ones split
    moves = []
    words = []
    for k, r in enumerate(dests):
        if reg == "%h":
            moves.append(f"cvt.u32.u16 %r{20 + k}, {r};")
            words.append(f"%r{20 + k}")
        elif reg == "%rd":
            moves.append(f"mov.b64 {{%r{20 + 2 * k}, %r{21 + 2 * k}}}, {r};")
            words += [f"%r{20 + 2 * k}", f"%r{21 + 2 * k}"]
        else:
            words.append(r)
    words = (words + ["%r19"] * 4)[:4]
    line = f"suld.b.1d.{form}.trap {d}, [HANDLE, {{%r1}}];\n" + \
        "\n".join(moves) + f"\nst.global.v4.u32 [%rd8], {{{', '.join(words)}}};"
    got = run_surface(line, surf, coords, np.zeros((THREADS, 4)))
    width = bits // 8
    expect_words = []
    for t in range(THREADS):
        b = raw[coords[t, 0]:coords[t, 0] + size]
        vals = [int.from_bytes(b[k * width:(k + 1) * width].tobytes(), "little") for k in range(n)]
        if width == 8:
            vals = [v >> s & 0xFFFFFFFF for v in vals for s in (0, 32)]
        vals = (vals + [t] * 4)[:4]     # %r19 is the thread id
        expect_words.append(vals)
    want = np.array(expect_words, np.uint32)
    for name, (res, _) in got.items():
        np.testing.assert_array_equal(res, want, err_msg=name)


@pytest.mark.parametrize("geo,clamp", [("1d", "trap"), ("2d", "zero"), ("3d", "clamp"), ("a1d", "trap"),
                                       ("a2d", "zero")])
def test_sust_b32_geometries(geo, clamp):
    """sust.b.<geo>.b32: each thread stores its word at (x bytes, y, z / layer)."""
    shape = {"1d": (64,), "2d": (8, 8), "3d": (2, 4, 8), "a1d": (8, 8), "a2d": (2, 4, 8)}[geo]
    surf = Surface(np.zeros(shape, np.uint32), geo)
    t = np.arange(THREADS)
    coords = np.zeros((THREADS, 4), np.int64)
    w = shape[-1]
    coords[:, 0] = (t % w) * 4
    if geo in ("2d", "a1d"):
        coords[:, 1] = t // w
    if geo in ("3d", "a2d"):
        coords[:, 1] = (t // w) % 4
        coords[:, 2] = t // (w * 4)
    if clamp != "trap":
        coords[::7, 0] = w * 4 + 8     # out of range: .zero drops, .clamp writes the last word
    vec = {"1d": "{%r1}", "2d": "{%r1, %r2}", "3d": "{%r1, %r2, %r3, %r4}", "a1d": "{%r2, %r1}",
           "a2d": "{%r3, %r1, %r2, %r4}"}[geo]
    data = np.zeros((THREADS, 4), np.int64)
    data[:, 0] = t * 1000 + 1
    line = f"sust.b.{geo}.b32.{clamp} [HANDLE, {vec}], {{%r5}};"
    got = run_surface(line, surf, coords, data)
    want = np.zeros(shape, np.uint32).reshape(-1, w)
    order = ("z", "y")
    for k in range(THREADS):
        x = coords[k, 0] // 4
        row = coords[k, 1] + (coords[k, 2] * 4 if geo in ("3d", "a2d") else 0)
        if x >= w:
            if clamp == "zero":
                continue
            x = w - 1
        want[row, x] = data[k, 0]
    for name, (_, after) in got.items():
        np.testing.assert_array_equal(after.reshape(-1, w), want, err_msg=name)


def test_sust_p_f32_rgba():
    """sust.p.2d.v4.b32 to a 4-channel float surface: x counts samples."""
    surf = Surface(np.zeros((4, 8, 4), np.float32), "2d")
    t = np.arange(32)
    coords = np.zeros((THREADS, 4), np.int64)
    coords[:32, 0] = t % 8
    coords[:32, 1] = t // 8
    coords[32:, 0] = 100      # out of range and .zero: dropped
    vals = np.random.default_rng(0).integers(-100, 100, (THREADS, 4)).astype(np.float32)
    line = "sust.p.2d.v4.b32.zero [HANDLE, {%r1, %r2}], {%r5, %r6, %r7, %r8};"
    got = run_surface(line, surf, coords, vals.view(np.uint32).astype(np.int64))
    want = np.zeros((4, 8, 4), np.float32)
    want[t // 8, t % 8] = vals[:32]
    for name, (_, after) in got.items():
        np.testing.assert_array_equal(after, want, err_msg=name)


@pytest.mark.parametrize("op,ty", [("add", "u32"), ("min", "s32"), ("max", "u32"), ("and", "b32"),
                                   ("or", "b32"), ("add", "u64"), ("max", "s32")])
def test_sured_2d(op, ty):
    """sured.b.<op>.2d: every thread reduces into one of 8 words (contended)."""
    wide = ty.endswith("64")
    dtype = np.uint64 if wide else np.uint32
    init = np.random.default_rng(3).integers(0, 2**(64 if wide else 32), size=(2, 4), dtype=np.uint64).astype(dtype)
    surf = Surface(init.copy(), "2d")
    rng = np.random.default_rng(4)
    t = np.arange(THREADS)
    coords = np.zeros((THREADS, 4), np.int64)
    coords[:, 0] = (t % 4) * (8 if wide else 4)
    coords[:, 1] = (t // 4) % 2
    data = np.zeros((THREADS, 4), np.int64)
    vals = rng.integers(0, 2**32, THREADS, dtype=np.uint64)
    data[:, 0] = vals
    src = "%rd5" if wide else "%r5"
    if wide:
        data[:, 1] = rng.integers(0, 2**32, THREADS, dtype=np.uint64)
    line = f"sured.b.{op}.2d.{ty}.trap [HANDLE, {{%r1, %r2}}], {src};"
    got = run_surface(line, surf, coords, data)
    want = init.copy().astype(object)
    mask = (1 << (64 if wide else 32)) - 1
    for k in range(THREADS):
        v = int(data[k, 0]) | (int(data[k, 1]) << 32 if wide else 0)
        y, x = coords[k, 1], coords[k, 0] // (8 if wide else 4)
        a = int(want[y, x])
        if ty == "s32":
            sa, sv = (q - 2**32 if q >= 2**31 else q for q in (a, v))
            r = {"min": min, "max": max}[op](sa, sv) & mask
        else:
            r = {"add": lambda p, q: p + q, "min": min, "max": max, "and": lambda p, q: p & q,
                 "or": lambda p, q: p | q}[op](a, v) & mask
        want[y, x] = r
    for name, (_, after) in got.items():
        np.testing.assert_array_equal(after.astype(np.uint64), want.astype(np.uint64), err_msg=name)


def test_unbound_module_texture_faults():
    data = texels((4, 4))
    line = ("tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    ptx = texture_kernel(line, "module")
    for cubin in cubins(ptx).values():
        with pytest.raises(EmuFault, match="nothing bound"):
            run(cubin, "k", 1, THREADS, [np.zeros((THREADS, 4), np.uint32), np.zeros((THREADS, 8), np.uint32),
                                         Texture(data, "2d")])


# ---------------------------------------------------------------- found by the fuzzer
def _unit_lines(cubin: bytes) -> list[str]:
    from tools.texture_fetch_forms import unit_lines
    return unit_lines(cubin)


def test_tld_texel_offsets_aoffi():
    """ptxas folds `{x - 3, y - 3}` into TLD.AOFFI's packed 4-bit offsets (0xdd); the
    emulator applies them (fuzz seed 10: ptxas's results were off by 3 texels)."""
    rng = np.random.default_rng(12)
    data = rng.integers(0, 2**31, size=(6, 9, 4)).astype(np.int32)
    tex = Texture(data, "2d", address=("border", "clamp"))
    ints = np.zeros((THREADS, 4), np.uint32)
    ints[:, 0] = rng.integers(0, 2**32, THREADS, dtype=np.uint64)
    ints[:, 1] = rng.integers(0, 2**32, THREADS, dtype=np.uint64)
    line = ("and.b32 %r5, %r1, 15;\nsub.s32 %r5, %r5, 3;\nand.b32 %r6, %r2, 15;\nsub.s32 %r6, %r6, 3;\n"
            "tex.2d.v4.s32.s32 {%r10, %r11, %r12, %r13}, [HANDLE, {%r5, %r6}];")
    ptx = texture_kernel(line, "param")
    assert any("AOFFI" in u for u in _unit_lines(cubins(ptx)["ptxas"]))
    got = run_texture(ptx, tex, "param", np.zeros((THREADS, 4)), ints)
    x = (ints[:, 0] & 15).astype(int) - 3
    y = (ints[:, 1] & 15).astype(int) - 3
    inside = (x >= 0) & (x < 9)
    want = np.where(inside[:, None], data[np.clip(y, 0, 5), np.clip(x, 0, 8)], 0).view(np.uint32)
    for name, res in got.items():
        np.testing.assert_array_equal(res, want, err_msg=name)


@pytest.mark.parametrize("handle", ["param", "reg"])
@pytest.mark.parametrize("geo", ["2d", "3d", "a1d", "a2d"])
def test_tex_level_integer_coordinates(geo, handle):
    """tex.level with integer coordinates: TLD.LL.CL as ptxas writes it (we refused it
    before), the texel at the coordinates (one mip level: the level selects level 0)."""
    shape = {"2d": (5, 7), "3d": (3, 4, 5), "a1d": (3, 6), "a2d": (3, 4, 5)}[geo]
    data = np.random.default_rng(13).integers(0, 2**32, size=shape + (4,), dtype=np.uint64).astype(np.uint32)
    tex = Texture(data, geo)
    rng = np.random.default_rng(14)
    ints = np.zeros((THREADS, 4), np.uint32)
    ints[:, 0] = rng.integers(-2, 9, THREADS).astype(np.int32).view(np.uint32)
    ints[:, 1] = rng.integers(-2, 7, THREADS).astype(np.int32).view(np.uint32)
    vec = {"2d": "{%r1, %r2}", "3d": "{%r1, %r2, %r5, %r5}", "a1d": "{%r5, %r1}", "a2d": "{%r5, %r1, %r2, %r2}"}[geo]
    line = (f"and.b32 %r5, %r19, 1;\n"
            f"tex.level.{geo}.v4.u32.s32 {{%r10, %r11, %r12, %r13}}, [HANDLE, {vec}], %r19;")
    ptx = texture_kernel(line, handle)
    both = cubins(ptx)
    assert _unit_lines(both["ours"]) == _unit_lines(both["ptxas"])
    got = run_texture(ptx, tex, handle, np.zeros((THREADS, 4)), ints)
    t = np.arange(THREADS)
    x, y, k = ints[:, 0].view(np.int32), ints[:, 1].view(np.int32), t & 1
    if geo == "2d":
        want = data[np.clip(y, 0, 4), np.clip(x, 0, 6)]
    elif geo == "3d":
        want = data[np.clip(k, 0, 2), np.clip(y, 0, 3), np.clip(x, 0, 4)]
    elif geo == "a1d":
        want = data[k, np.clip(x, 0, 5)]
    else:
        want = data[k, np.clip(y, 0, 3), np.clip(x, 0, 4)]
    for name, res in got.items():
        np.testing.assert_array_equal(res, want, err_msg=name)


def test_suld_clamp_narrowed_by_ptxas():
    """suld.b.1d.v2.b32.clamp of which only the first word is used: ptxas loads 4 bytes,
    we load 8; out of range both give the word of the nearest sample (fuzz seed 59)."""
    raw = np.random.default_rng(15).integers(0, 2**32, size=64, dtype=np.uint64).astype(np.uint32)
    surf = Surface(raw.copy(), "1d")
    coords = np.zeros((THREADS, 4), np.int64)
    coords[:, 0] = (np.arange(THREADS) * 5 % 56 - 16) * 8       # bytes -128 .. 312 of 256
    line = ("suld.b.1d.v2.b32.clamp {%r10, %r11}, [HANDLE, {%r1}];\nxor.b32 %r11, %r19, 7;\n"
            "mov.u32 %r12, 0;\nmov.u32 %r13, 0;\n" + STORE_RESULT)
    got = run_surface(line, surf, coords, np.zeros((THREADS, 4)))
    want = raw[np.clip(coords[:, 0] // 4, 0, 63)]
    for name, (res, _) in got.items():
        np.testing.assert_array_equal(res[:, 0], want, err_msg=name)


def test_nan_cube_direction_reads_as_zero():
    """A cube direction (0, 0, 0) scaled by 1/max|c| is NaN: the emulator reads NaN
    coordinates as 0 (its documented choice) instead of crashing (fuzz seed 63)."""
    data = texels((6, 4, 4), 16)
    tex = Texture(data, "cube", normalized=True)
    c = np.zeros((THREADS, 4))
    line = ("tex.cube.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2, %f3, %f4}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    got = run_texture(texture_kernel(line, "param"), tex, "param", c)
    # (0, 0, 0): the x-major face 0 at s = t = (0 + 1) / 2, texel (2, 2) of 4 x 4
    for name, res in got.items():
        np.testing.assert_array_equal(res.view(np.float32), np.broadcast_to(data[0, 2, 2], (THREADS, 4)),
                                      err_msg=name)


def test_launch_file_textures(tmp_path):
    """ptx2sass-emu's launch file binds a module texture and a bindless surface; the
    surface comes back as <name>.bin (values from the NumPy model)."""
    from ptx2sass.emu.cli import main
    ptx = """.version 8.5
.target sm_89
.address_size 64
.global .texref tex0;
.visible .entry k(.param .u64 out, .param .u64 sh)
{
.reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<6>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [sh];
mov.u32 %r1, %tid.x;
cvt.rn.f32.u32 %f1, %r1;
add.f32 %f1, %f1, 0f3F000000;
tex.1d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [tex0, {%f1}];
mov.b32 %r2, %f2;
shl.b32 %r3, %r1, 2;
sust.b.1d.b32.trap [%rd2, {%r3}], %r2;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd1, %rd3;
st.global.u32 [%rd4], %r1;
ret;
}
"""
    data = np.arange(8 * 4, dtype=np.float32).reshape(8, 4) * 3
    (tmp_path / "t.bin").write_bytes(data.tobytes())
    spec = {"kernel": "k", "grid": [1], "block": [8], "buffers": {"out": {"size": 32}},
            "textures": {"t": {"kind": "texture", "geometry": "1d", "dtype": "float32", "shape": [8, 4],
                               "file": "t.bin", "bind": "tex0"},
                         "s": {"kind": "surface", "geometry": "1d", "dtype": "uint32", "shape": [8]}},
            "params": [{"buffer": "out"}, {"texture": "s"}]}
    (tmp_path / "launch.json").write_text(__import__("json").dumps(spec))
    for name, cubin in cubins(ptx).items():
        (tmp_path / "k.cubin").write_bytes(cubin)
        assert main([str(tmp_path / "k.cubin"), str(tmp_path / "launch.json"), "--out-dir", str(tmp_path / name)]) == 0
        got = np.frombuffer((tmp_path / name / "s.bin").read_bytes(), np.float32)
        np.testing.assert_array_equal(got, data[:, 0], err_msg=name)


def test_every_surface_form_on_a_parameter_handle_encodes_and_decodes():
    """suld/sust of every geometry x size x clamp mode and sured on a kernel-parameter handle
    (tools/isa_seeds/surf_param.ptx): we encode every one (SULD.D.BA.2D_ARRAY.64 without
    .TRAP and .IGN, SULD.D.BA.2D_ARRAY.U16 were 'cannot encode' crashes of fuzz seeds
    900014/900033) and the emulator decodes ptxas's cubin."""
    from pathlib import Path
    from ptx2sass.emu.loader import load_program
    ptx = (Path(__file__).parent.parent / "tools" / "isa_seeds" / "surf_param.ptx").read_text()
    for cubin in cubins(ptx).values():
        program = load_program(cubin, "surf_param")
        assert sum(ins.opcode in ("SULD", "SUST", "SURED") for _, ins in program.instructions) >= 150


def test_tld4_with_a_component_mask():
    """ptxas gives TLD4 a component mask when the code reads fewer than four results (here
    the first and third: mask 0x5, one register pair); the emulator wrote all four before,
    over registers ptxas had given other values (fuzz campaign 900000-900199: 25 hazard
    and 10 mismatch programs)."""
    data = texels((5, 6), 17)
    tex = Texture(data, "2d")
    rng = np.random.default_rng(18)
    c = np.zeros((THREADS, 4))
    c[:, 0] = coordinates(rng, THREADS, -1, 7, 1 / 8)
    c[:, 1] = coordinates(rng, THREADS, -1, 6, 1 / 8)
    line = ("tld4.g.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2}];\n"
            "mov.b32 %r10, %f10;\nmov.b32 %r11, %f12;\nadd.u32 %r12, %r19, 1;\nadd.u32 %r13, %r19, 2;")
    ptx = texture_kernel(line, "param")
    assert any(u.startswith("TLD4") and u.endswith("0x5") for u in _unit_lines(cubins(ptx)["ptxas"]))
    got = run_texture(ptx, tex, "param", c)
    i0 = np.floor(c[:, 0] - 0.5).astype(int)
    j0 = np.floor(c[:, 1] - 0.5).astype(int)
    ci, cj = (lambda i: np.clip(i, 0, 5)), (lambda j: np.clip(j, 0, 4))
    t = np.arange(THREADS)
    want = np.stack([data[cj(j0 + 1), ci(i0), 1].view(np.uint32), data[cj(j0), ci(i0 + 1), 1].view(np.uint32),
                     t + 1, t + 2], axis=1).astype(np.uint32)
    for name, res in got.items():
        np.testing.assert_array_equal(res, want, err_msg=name)


@pytest.mark.parametrize("filt", ["point", "linear"])
def test_ptxas_sm90_texture_cubin_runs(filt):
    """sm_90: ptxas loads a parameter handle into a uniform register (`TEX.LL ..., UR4, 0x0,
    2D`); the hopper table decodes it (probed from tex_surf_bindless.ptx retargeted) and the
    emulator gives the model's texels; our sm_90 cubin (refused at the line before) too."""
    shape = (5, 6)
    data = texels(shape, 2)
    modes = ("clamp", "border", "border")
    tex = Texture(data, "2d", address=modes, filter=filt)
    rng = np.random.default_rng(9)
    c = np.zeros((THREADS, 4))
    for a in range(2):
        c[:, a] = coordinates(rng, THREADS, -1.5, shape[::-1][a] + 1.5, 1 / 64)
    line = ("tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2}];\nmov.b32 %r10, %f10;\n"
            "mov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
    ptx = texture_kernel(line, "param")
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    inp = np.zeros((THREADS, 8), np.uint32)
    inp[:, :4] = c.astype(np.float32).view(np.uint32)
    want = model_sample(data, [c[:, 0], c[:, 1]], filt, modes, False)
    ours = codegen.compile_ptx(ptx, "sm_90", "k.ptx")
    for name, cubin in (("ptxas", theirs.output), ("ours", ours)):
        res = np.zeros((THREADS, 4), np.uint32)
        r = run(cubin, "k", 1, THREADS, [res, inp.copy(), tex], hazard_check=name == "ours")
        assert not r.hazards
        np.testing.assert_array_equal(res.view(np.float32), want, err_msg=name)


# ---------------------------------------------------------------- header descriptor queries
# The values the PTX ISA names for txq/suq's channel fields (OpenCL's cl_channel_order and
# cl_channel_type enumerations, written out here from the OpenCL specification), and the
# emulator's documented header model for the rest (emu/textures.py: an array geometry's
# layers, else 1; one mip level and sample; linear surfaces), or an object's `descriptor`.
CL_ORDER = {1: 0x10B0, 2: 0x10B2, 4: 0x10B5}
CL_TYPE = {("uint8", False): 0x10DA, ("uint8", True): 0x10D2, ("int16", False): 0x10D8,
           ("int16", True): 0x10D1, ("float32", False): 0x10DE, ("float16", False): 0x10DD,
           ("uint32", False): 0x10DC}
TXQ_FIELDS = ("num_samples", "channel_order", "channel_data_type", "normalized_coords",
              "array_size", "num_mipmap_levels")
SUQ_FIELDS = ("channel_order", "memory_layout", "array_size", "channel_data_type")


def _query_kernel(op: str, fields, handle: str) -> str:
    """Each field of one handle into %r10.. (four per 16-byte row of the thread's output)."""
    var = "tex0" if op == "txq" else "surf0"
    decl = f".global .{'texref' if op == 'txq' else 'surfref'} {var};\n" if handle == "module" else ""
    load = {"param": "ld.param.u64 %rd9, [th];\n", "reg": "ld.global.u64 %rd9, [%rd4+24];\n"}.get(handle, "")
    h = var if handle == "module" else "%rd9"
    lines = "".join(f"{op}.{f}.b32 %r{10 + i}, [{h}];\n" for i, f in enumerate(fields))
    lines += "".join(f"mov.u32 %r{10 + i}, 0;\n" for i in range(len(fields), 8))
    return f""".version 8.5
.target {ARCH}
.address_size 64
{decl}.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 th)
{{
.reg .b64 %rd<12>;
.reg .b32 %r<20>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 32;
add.s64 %rd4, %rd2, %rd3;
{load}{lines}add.s64 %rd6, %rd1, %rd3;
st.global.v4.b32 [%rd6], {{%r10, %r11, %r12, %r13}};
st.global.v4.b32 [%rd6+16], {{%r14, %r15, %r16, %r17}};
ret;
}}
"""


def _texture_fields(data, geo, normalized=False, read_mode="element", layers=1, descriptor=None):
    norm = read_mode == "normalized_float"
    want = {"num_samples": 1, "channel_order": CL_ORDER[data.shape[-1] if data.ndim > {"2d": 2, "a2d": 3, "a1d": 2, "3d": 3}[geo] else 1],
            "channel_data_type": CL_TYPE[(data.dtype.name, norm)], "normalized_coords": int(normalized),
            "array_size": layers, "num_mipmap_levels": 1}
    want.update(descriptor or {})
    return want


@pytest.mark.parametrize("handle", ["param", "module", "reg"])
@pytest.mark.parametrize("case", ["2d_f32_normalized", "a2d_u8_rgba_normfloat", "a1d_s16_rg_described"])
def test_txq_descriptor_fields(case, handle):
    """txq fields read from the driver's descriptor table (ptxas: LDG.E.CONSTANT at
    table + handle x descSize + field): ours and ptxas's cubins give the model's values."""
    rng = np.random.default_rng(3)
    if case == "2d_f32_normalized":
        data = rng.random((4, 8)).astype(np.float32)
        tex, want = Texture(data, "2d", normalized=True), _texture_fields(data, "2d", normalized=True)
    elif case == "a2d_u8_rgba_normfloat":
        data = rng.integers(0, 255, (3, 4, 8, 4)).astype(np.uint8)
        tex = Texture(data, "a2d", read_mode="normalized_float")
        want = _texture_fields(data, "a2d", read_mode="normalized_float", layers=3)
    else:
        data = rng.integers(-9, 9, (5, 8, 2)).astype(np.int16)
        extra = {"num_samples": 4, "num_mipmap_levels": 7}
        tex = Texture(data, "a1d", descriptor=extra)
        want = _texture_fields(data, "a1d", layers=5, descriptor=extra)
    _check_fields("txq", TXQ_FIELDS, tex, want, handle)


@pytest.mark.parametrize("handle", ["param", "module", "reg"])
@pytest.mark.parametrize("case", ["2d_u32", "a1d_f16_rgba", "a2d_u8_rg_described"])
def test_suq_descriptor_fields(case, handle):
    """suq fields read from the driver's surface descriptor table, ours = ptxas's = model."""
    if case == "2d_u32":
        surf, layers, order, ty, extra = Surface(np.zeros((4, 8), np.uint32), "2d"), 1, 1, "uint32", {}
    elif case == "a1d_f16_rgba":
        surf, layers, order, ty, extra = Surface(np.zeros((6, 8, 4), np.float16), "a1d"), 6, 4, "float16", {}
    else:
        extra = {"memory_layout": 0}
        surf = Surface(np.zeros((2, 3, 8, 2), np.uint8), "a2d", descriptor=extra)
        layers, order, ty = 2, 2, "uint8"
    want = {"channel_order": CL_ORDER[order], "memory_layout": 1, "array_size": layers,
            "channel_data_type": CL_TYPE[(ty, False)], **extra}
    _check_fields("suq", SUQ_FIELDS, surf, want, handle)


def _check_fields(op, fields, obj, want, handle):
    """Run the query kernel of both compilers with another object bound first, so that the
    queried handle is index 2 (the table's index x descriptor size is exercised)."""
    from ptx2sass.emu.launch import Param, run_buffers
    from ptx2sass.emu.loader import load_program
    other = Surface(np.zeros((2,), np.uint32), "1d") if op == "txq" else Texture(np.zeros((2,), np.float32), "1d")
    hv = KIND_BIT["texture" if op == "txq" else "surface"] | 2
    inp = np.zeros((THREADS, 8), np.uint32)
    inp[:, 6], inp[:, 7] = hv & 0xFFFFFFFF, hv >> 32
    bound = {"tex0" if op == "txq" else "surf0": obj} if handle == "module" else None
    for name, cubin in cubins(_query_kernel(op, fields, handle)).items():
        r = run_buffers(load_program(cubin, "k"), 1, THREADS,
                        [Param(buffer="out"), Param(buffer="in"), Param(type="u64", value=hv)],
                        {"out": (THREADS * 32, bytes(THREADS * 32)), "in": (inp.nbytes, inp.tobytes())},
                        objects=[other, obj], textures=bound, hazard_check=name == "ours")
        if name == "ours":
            assert not r.hazards, [str(h) for h in r.hazards[:3]]
        res = np.frombuffer(r.buffers["out"], np.uint32).reshape(THREADS, 8)
        for i, f in enumerate(fields):
            assert (res[:, i] == want[f]).all(), (name, handle, f, res[:2, i], want[f])
