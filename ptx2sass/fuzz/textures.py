"""Texture and surface statements for the fuzzer, and the objects a launch binds for them.

The forms are the PTX ISA inventory's texture/surface chapter (tex, tld4, suld, sust, sured,
txq/suq of the dimensions, istypep), swept like the other inventory families. Handles are
bindless: `.u64` kernel parameters (`p_<name>`) the launcher binds to emulator objects
(`ptx2sass.emu.textures`) built from a descriptor the program carries, so a reduced case
runs without the generator. Everything a statement does is defined and deterministic:

* textures (float `tx?`, integer `ty?`, one per geometry) are read-only; coordinates are
  pool registers brought into a small range (floats in 1/16 steps over [-4, 12), integers
  over [-3, 13)), so filtering, address modes and clamping are exercised, never NaN/Inf;
* read-only surfaces (`sr?`) take any coordinates with `.clamp`/`.zero`, in-range ones
  with `.trap`;
* read-write surfaces (`sw?`): every thread owns one 16-byte cell (by its global thread
  id), so stores and reductions never race; the statement reads the cell back with a
  `suld.b.v4.b32`, which is how its effect reaches the compared outputs.

Geometry letters: a 1d, b 2d, c 3d, d a1d, e a2d, f cube, g acube.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np

GEOS = ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube")
LETTER = dict(zip(GEOS, "abcdefg"))
SURFACE_GEOS = GEOS[:5]
# object name -> (kind, geometry); kinds: float/int texture, read-only/read-write surface
OBJECTS = {**{f"tx{LETTER[g]}": ("texture_float", g) for g in GEOS},
           **{f"ty{LETTER[g]}": ("texture_int", g) for g in GEOS},
           **{f"sr{LETTER[g]}": ("surface_read", g) for g in SURFACE_GEOS},
           **{f"sw{LETTER[g]}": ("surface_rw", g) for g in SURFACE_GEOS}}
TEXTURE_SHAPES = {"1d": (13,), "2d": (5, 7), "3d": (3, 4, 5), "a1d": (3, 6), "a2d": (3, 4, 5),
                  "cube": (6, 4, 4), "acube": (12, 4, 4)}
# read-only surfaces: u32 words, rows of 64 bytes (1d: 256 bytes)
READ_SHAPES = {"1d": (64,), "2d": (8, 16), "3d": (4, 4, 16), "a1d": (4, 16), "a2d": (3, 4, 16)}
# read-write surfaces: 16-byte cells, 64 to a row (1d: 512), cell c = the global thread id
RW_SHAPES = {"1d": (2048,), "2d": (8, 256), "3d": (2, 4, 256), "a1d": (8, 256), "a2d": (2, 4, 256)}
CELLS_PER_ROW = 64
# cells of each read-write surface: a launch has at most this many threads (one cell each)
RW_CELLS = 512
COORDS = {"1d": 1, "2d": 2, "3d": 3, "a1d": 1, "a2d": 2, "cube": 3, "acube": 3}
ARRAY = {"a1d", "a2d", "acube"}
VECTOR = {"1d": 1, "2d": 2, "3d": 4, "a1d": 2, "a2d": 4, "cube": 4, "acube": 4}
SIZE_QUERIES = ("width", "height", "depth")


# ------------------------------------------------------------------ objects
def describe(name: str, rng) -> dict:
    """A descriptor for object `name` (options drawn with the generator's rng)."""
    kind, geo = OBJECTS[name]
    d = {"name": name, "kind": kind, "geometry": geo}
    if kind == "texture_float":
        normalized = geo in ("cube", "acube") or rng.random() < 0.4
        modes = ("clamp", "border") + (("wrap", "mirror") if normalized else ())
        d.update(filter=rng.choice(("point", "linear")), normalized=normalized,
                 address=[rng.choice(modes) for _ in range(3)],
                 read_mode=rng.choice(("element", "element", "normalized_float")),
                 channels=rng.choice((1, 2, 4, 4)))
    elif kind == "texture_int":
        d.update(filter="point", normalized=False, address=[rng.choice(("clamp", "border")) for _ in range(3)],
                 read_mode="element", channels=rng.choice((1, 4, 4)), signed=rng.random() < 0.5)
    return d


def _data_rng(seed: int, name: str) -> np.random.Generator:
    h = int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "little")
    return np.random.default_rng(h)


def build(desc: dict, seed: int):
    """The emulator object a descriptor stands for, its contents a function of (seed, name)."""
    from ptx2sass.emu.textures import Surface, Texture
    rng = _data_rng(seed, desc["name"])
    kind, geo = desc["kind"], desc["geometry"]
    if kind.startswith("surface"):
        shape = (READ_SHAPES if kind == "surface_read" else RW_SHAPES)[geo]
        return Surface(rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32), geo)
    shape = TEXTURE_SHAPES[geo] + ((desc["channels"],) if desc["channels"] > 1 else ())
    if kind == "texture_int":
        dt = np.int32 if desc.get("signed") else np.uint32
        data = rng.integers(-2**31 if desc.get("signed") else 0, 2**31 if desc.get("signed") else 2**32,
                            size=shape, dtype=np.int64).astype(dt)
    elif desc["read_mode"] == "normalized_float":
        data = rng.integers(0, 256, size=shape).astype(np.uint8)
    else:
        data = (rng.integers(-512, 512, size=shape) / 4).astype(np.float32)
    return Texture(data, geo, address=tuple(desc["address"]), filter=desc["filter"],
                   normalized=desc["normalized"], read_mode=desc["read_mode"])


# ------------------------------------------------------------------ forms
@functools.cache
def forms() -> list[str]:
    """The chapter's inventory spellings this generator writes (sm_89), in inventory order."""
    from ptx2sass.fuzz.coverage import inventory_forms
    out = []
    for f in inventory_forms()[1]:
        s = f.get("spelling", "")
        op = s.split(".")[0]
        if op in ("tex", "tld4", "suld", "sust", "sured", "istypep") or \
                (op in ("txq", "suq") and s.split(".")[1] in SIZE_QUERIES):
            out.append(s)
    return out


def _draw(g) -> str:
    from ptx2sass.fuzz.forms import SWEEP_SEEDS, SWEEP_SHARE
    fs = forms()
    n = g.isa_draws.get("texture", 0)
    g.isa_draws["texture"] = n + 1
    if g.rng.random() < SWEEP_SHARE:
        form = fs[((g.seed % SWEEP_SEEDS) * len(fs) // SWEEP_SEEDS + n) % len(fs)]
    else:
        form = g.rng.choice(fs)
    has = getattr(g, "has", None)       # (one the program's target lacks: drawn again)
    if has is None or has(form):
        return form
    kept = [f for f in fs if has(f)]
    return g.rng.choice(kept) if kept else form


def _use(g, name: str) -> str:
    if name not in g.texture_objects:
        g.texture_objects[name] = describe(name, g.rng)
    return f"${name}"


def _float_coord(b, lines: list) -> str:
    t = b.tmp("b32")
    lines += [f"and.b32 {t}, {b.src('b32')}, 255;", f"sub.s32 {t}, {t}, 64;",
              f"cvt.rn.f32.s32 {t}, {t};", f"mul.f32 {t}, {t}, 0f3D800000;"]
    return t


def _int_coord(b, lines: list, mask: int, minus: int) -> str:
    t = b.tmp("b32")
    lines += [f"and.b32 {t}, {b.src('b32')}, {mask};"] + ([f"sub.s32 {t}, {t}, {minus};"] if minus else [])
    return t


def _tex(g, b, s: str) -> tuple[str, bool]:
    parts = s.split(".")
    level = parts[1] == "level"
    geo, dt, ct = parts[2 if level else 1], parts[-2], parts[-1]
    if parts[0] == "tld4":
        geo = parts[2]
    lines: list[str] = []
    handle = _use(g, ("tx" if dt == "f32" else "ty") + LETTER[geo])
    coords = [(_float_coord(b, lines) if ct == "f32" else _int_coord(b, lines, 15, 3)) for _ in range(COORDS[geo])]
    if geo in ARRAY:
        coords.insert(0, _int_coord(b, lines, 7, 0))
    while len(coords) < VECTOR[geo]:
        coords.append(coords[-1])
    view = dt
    d = [b.dst("b32", view) for _ in range(4)]
    extra = f", {_float_coord(b, lines)}" if level else ""
    lines.append(f"{s} {{{', '.join(d)}}}, [{handle}, {{{', '.join(coords)}}}]{extra};")
    return "\n".join(lines), True


def _surface_coords(b, geo: str, trap: bool, size: int, lines: list) -> list[str]:
    """Read-only surface coordinates (x in bytes, aligned to the access size)."""
    shape = READ_SHAPES[geo]
    row = shape[-1] * 4
    per = row // size
    x = b.tmp("b32")
    if trap:
        lines += [f"and.b32 {x}, {b.src('b32')}, {per - 1};"]
    else:
        lines += [f"and.b32 {x}, {b.src('b32')}, {2 * per - 1};", f"sub.s32 {x}, {x}, {per // 2};"]
    lines.append(f"mul.lo.s32 {x}, {x}, {size};")
    out = [x]
    axes = list(shape[:-1])[::-1]           # y, then z or the layer
    for n in axes:
        out.append(_int_coord(b, lines, n - 1, 0) if trap else _int_coord(b, lines, 2 * n - 1, n // 2))
    return _surface_vector(geo, out)


def _surface_vector(geo: str, c: list[str]) -> list[str]:
    """PTX order: x[, y[, z, _]]; arrays start with the layer."""
    if geo == "a1d":
        return [c[1], c[0]]
    if geo == "a2d":
        return [c[2], c[0], c[1], c[0]]
    if geo == "3d":
        return c + [c[0]]
    return c


def _cell_coords(b, geo: str, offset: int, lines: list, samples: bool = False) -> list[str]:
    """The thread's own cell of a read-write surface, `offset` bytes (samples: 4-byte
    samples) into it."""
    x = b.tmp("b32")
    if geo == "1d":
        lines += [f"mad.lo.u32 {x}, $gtid, {16 // (4 if samples else 1)}, {offset};"]
        return [x]
    lines += [f"and.b32 {x}, $gtid, {CELLS_PER_ROW - 1};",
              f"mad.lo.u32 {x}, {x}, {16 // (4 if samples else 1)}, {offset};"]
    y = b.tmp("b32")
    if geo in ("2d", "a1d"):
        lines.append(f"shr.u32 {y}, $gtid, 6;")
        return _surface_vector(geo, [x, y])
    z = b.tmp("b32")
    lines += [f"shr.u32 {y}, $gtid, 6;", f"and.b32 {y}, {y}, 3;", f"shr.u32 {z}, $gtid, 8;"]
    return _surface_vector(geo, [x, y, z])


SIZE_OF = {"b8": 1, "b16": 2, "b32": 4, "b64": 8}
REG_OF = {"b8": "b16", "b16": "b16", "b32": "b32", "b64": "b64"}


def _vec(parts: list) -> int:
    return 4 if "v4" in parts else 2 if "v2" in parts else 1


def _readback(b, g, geo: str, lines: list) -> None:
    """suld.b.<geo>.v4.b32 of the thread's cell into four results."""
    c = _cell_coords(b, geo, 0, lines)
    d = [b.dst("b32", "u32") for _ in range(4)]
    lines.append(f"suld.b.{geo}.v4.b32.trap {{{', '.join(d)}}}, [{_use(g, 'sw' + LETTER[geo])}, {{{', '.join(c)}}}];")


def _suld(g, b, s: str) -> tuple[str, bool]:
    parts = s.split(".")
    geo, bt, clamp = parts[2], parts[-2], parts[-1]
    n = _vec(parts)
    size = n * SIZE_OF[bt]
    lines: list[str] = []
    c = _surface_coords(b, geo, clamp == "trap", size, lines)
    d = [b.dst(REG_OF[bt], "u16" if REG_OF[bt] == "b16" else ("u32" if bt == "b32" else "u64")) for _ in range(n)]
    dv = d[0] if n == 1 else "{" + ", ".join(d) + "}"
    lines.append(f"{s} {dv}, [{_use(g, 'sr' + LETTER[geo])}, {{{', '.join(c)}}}];")
    return "\n".join(lines), True


def _sust(g, b, s: str) -> tuple[str, bool]:
    parts = s.split(".")
    geo, bt = parts[2], parts[-2]
    n = _vec(parts)
    lines: list[str] = []
    formatted = parts[1] == "p"
    size = 4 * n if formatted else n * SIZE_OF[bt]
    offset = g.rng.randrange(4) if formatted else g.rng.randrange(16 // size) * size
    c = _cell_coords(b, geo, offset, lines, samples=formatted)
    src = [b.src(REG_OF[bt]) for _ in range(n)]
    if bt == "b8" and not formatted:
        # ptxas 13.5.37 stores a 16-bit register it takes for a float (an f16 a cvt or a
        # bf16 max computed) as F2I.U8.F16 of its value, not its low byte
        # (tests/test_fuzz_campaign7_float.py): an integer op in between keeps the bits
        masked = []
        for x in src:
            t = b.tmp("b16")
            lines.append(f"and.b16 {t}, {x}, 255;")
            masked.append(t)
        src = masked
    sv = src[0] if n == 1 and not formatted else "{" + ", ".join(src) + "}"
    lines.append(f"{s} [{_use(g, 'sw' + LETTER[geo])}, {{{', '.join(c)}}}], {sv};")
    _readback(b, g, geo, lines)
    return "\n".join(lines), False


def _sured(g, b, s: str) -> tuple[str, bool]:
    parts = s.split(".")
    geo, ty = parts[3], parts[4]
    size = 8 if ty.endswith("64") else 4
    lines: list[str] = []
    c = _cell_coords(b, geo, g.rng.randrange(16 // size) * size, lines)
    lines.append(f"{s} [{_use(g, 'sw' + LETTER[geo])}, {{{', '.join(c)}}}], {b.src('b64' if size == 8 else 'b32')};")
    _readback(b, g, geo, lines)
    return "\n".join(lines), False


def _query(g, b, s: str) -> tuple[str, bool]:
    parts = s.split(".")
    geo = g.rng.choice(GEOS if parts[0] == "txq" else SURFACE_GEOS)
    name = (g.rng.choice(("tx", "ty")) if parts[0] == "txq" else g.rng.choice(("sr", "sw"))) + LETTER[geo]
    return f"{s} {b.dst('b32', 'u32')}, [{_use(g, name)}];", True


def _istypep(g, b, s: str) -> tuple[str, bool]:
    name = g.rng.choice(list(OBJECTS))
    return f"{s} {b.dst('pred')}, {_use(g, name)};", True


WRITERS = {"tex": _tex, "tld4": _tex, "suld": _suld, "sust": _sust, "sured": _sured, "txq": _query,
           "suq": _query, "istypep": _istypep}


def op_texture(g, ctx):
    """One texture/surface statement of a swept inventory form (kernel body only: the
    handles are kernel parameters)."""
    from ptx2sass.fuzz.generator import Builder
    if ctx.func is not None:
        return None
    # two forms a statement: the chapter has 517 of them, and a statement's budget is shared
    # with every other family
    forms_drawn = [_draw(g), _draw(g)]
    b = Builder(g, ctx)
    texts, uniform_ok = [], True
    for s in forms_drawn:
        text, ok = WRITERS[s.split(".")[0]](g, b, s)
        texts.append(text)
        uniform_ok &= ok
    spaces = tuple(sorted({"surface" if s.startswith("su") else "texture" for s in forms_drawn}))
    return b.build("\n".join(texts), forms_drawn[0], uniform_ok=uniform_ok, spaces=spaces,
                   also=tuple(forms_drawn[1:]))
