"""Value kernels of the per-form checker for the texture/surface chapter. Surfaces (`suld`, `sust`, `sured`
on the module `.surfref surf0`): a surface of the form's geometry (4 layers/slices of 8
rows of 2,048 bytes, random words) is bound for each run; every thread accesses its own
location (so the stores' outcome does not depend on the order the warps run in), the
clamp/zero forms with some threads out of range (sust.clamp excepted: clamped stores of
two threads would land on one sample), and the coordinates come in the thread's input
row. suld writes its registers out; after sust/sured the surface's bytes are compared.
The reference is ptxas's cubin in the same emulator (the texture unit's semantics are
emu/textures.py's, checked against NumPy models in tests/test_emu_texture.py).

Textures (`tex`, `tex.level`, `tld4`) read a module `.texref tex0` bound to a texture of
the form's geometry (point sampling, clamped; float texels small integers, integer texels
random words) at coordinates from the thread's input row (floats on a 1/64 grid a texel
beyond each edge, integers likewise, array layers one past the last); the four result
registers are written out. `txq`/`suq` query the bound texture's / surface's fields."""
from __future__ import annotations

import random

import numpy as np

from ptx2sass.frontend.inventory import Form
from tools.inventory_kernels import WIDTH

THREADS = 64
ROW = 2048            # bytes a row holds (128 samples of 4 x u32)
ROWS, SLICES = 8, 4
IN_SLOTS, OUT_SLOTS = 16, 8
GEOMETRY = {".1d": "1d", ".2d": "2d", ".3d": "3d", ".a1d": "a1d", ".a2d": "a2d"}


def is_surface_form(form: Form) -> bool:
    if form.opcode not in ("suld", "sust", "sured") or len(form.types) != 1:
        return False
    geometry = [m for m in form.modifiers if m in GEOMETRY]
    return len(geometry) == 1 and WIDTH.get(form.types[0], 0) in (8, 16, 32, 64)


def _count(form: Form) -> int:
    return next((int(m[2:]) for m in form.modifiers if m in (".v2", ".v4")), 1)


def _coordinates(geometry: str, t: int, unit: int) -> list[int]:
    """The thread's own location: (x in bytes or samples, y, z/layer) as the instruction's
    coordinate vector orders them (arrays: the layer first)."""
    if geometry == "1d":
        return [t * unit]
    if geometry == "a1d":
        return [t % 4, (t // 4) * unit]
    if geometry == "2d":
        return [(t // 8) * unit, t % 8]
    if geometry == "a2d":
        return [t % 4, (t // 16) * unit, (t // 4) % 4, 0]
    return [(t // 16) * unit, (t // 4) % 4, t % 4, 0]             # 3d: x, y, z, (unused)


def _out_of_range(geometry: str, coords: list[int], t: int) -> list[int]:
    """coords moved past the surface's end (x beyond the row, or y beyond the rows)."""
    c = list(coords)
    x = 1 if geometry.startswith("a") else 0
    if t % 2 or geometry in ("1d", "a1d"):
        c[x] += ROW + 16 * (t % 3)
    else:
        c[x + 1] += ROWS + t % 3
    return c


def surface_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 89):
    """(PTX text, input rows, output slots, a function making the bound objects)."""
    from ptx2sass.emu.textures import Surface
    geometry = GEOMETRY[next(m for m in form.modifiers if m in GEOMETRY)]
    bits = WIDTH[form.types[0]]
    n = _count(form)
    size = n * bits // 8
    formatted = ".p" in form.modifiers
    unit = 1 if formatted else max(size, 1)
    clamp = next((m[1:] for m in form.modifiers if m in (".trap", ".clamp", ".zero")), "trap")
    ncoords = {"1d": 1, "a1d": 2, "2d": 2, "a2d": 4, "3d": 4}[geometry]
    outside = clamp != "trap" and not (form.opcode == "sust" and clamp == "clamp")
    data = np.zeros((THREADS, IN_SLOTS), dtype=np.uint64)
    for t in range(THREADS):
        coords = _coordinates(geometry, t, unit)
        if outside and t % 5 == 4:
            coords = _out_of_range(geometry, coords, t)
        for k, c in enumerate(coords):
            data[t, k] = c & 0xFFFFFFFF
        for k in range(4):
            data[t, 4 + k] = rng.getrandbits(bits)
    rb = max(16, bits)
    regs = [f"%v{k}" for k in range(n)]
    vec = regs[0] if n == 1 else "{" + ", ".join(regs) + "}"
    coords = "{" + ", ".join(f"%c{k}" for k in range(ncoords)) + "}"
    address = f"[surf0, {coords}]"
    body = [f"ld.global.b32 %c{k}, [%rdi+{8 * k}];" for k in range(ncoords)]
    if form.opcode == "suld":
        body.append(f"{form.spelling} {vec}, {address};")
        body += [f"st.global.b{rb} [%rdo+{8 * k}], {r};" for k, r in enumerate(regs)]
    else:
        kind = "u8" if bits == 8 else f"b{bits}"
        body += [f"ld.global.{kind} {r}, [%rdi+{8 * (4 + k)}];" for k, r in enumerate(regs)]
        body.append(f"{form.spelling} {address}, {vec};")
    text = (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n.global .surfref surf0;\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            f".reg .b64 %rdi, %rdo, %rdt;\n.reg .b32 %tx, %c<4>;\n.reg .b{rb} {', '.join(regs)};\n"
            "ld.param.u64 %rdo, [out];\nld.param.u64 %rdi, [in];\nmov.u32 %tx, %tid.x;\n"
            f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};\nadd.s64 %rdi, %rdi, %rdt;\n"
            f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};\nadd.s64 %rdo, %rdo, %rdt;\n"
            + "\n".join(body) + "\nret;\n}\n")
    axes = {"1d": (), "2d": (ROWS,), "a1d": (SLICES,), "a2d": (SLICES, ROWS), "3d": (SLICES, ROWS)}[geometry]
    initial = np.random.default_rng(rng.getrandbits(32)).integers(
        0, 2**32, size=axes + (ROW // 16, 4), dtype=np.uint64).astype(np.uint32)

    def objects() -> dict:
        return {"surf0": Surface(initial.copy(), geometry)}
    return text, data, OUT_SLOTS, objects


TEX_GEOMETRY = {".1d": "1d", ".2d": "2d", ".3d": "3d", ".a1d": "a1d", ".a2d": "a2d", ".cube": "cube",
                ".acube": "acube"}
# texel axes (layers/faces, depth, height, width) per geometry
TEX_SHAPES = {"1d": (16,), "2d": (6, 8), "3d": (3, 4, 5), "a1d": (3, 8), "a2d": (3, 5, 6),
              "cube": (6, 4, 4), "acube": (12, 4, 4)}


def is_texture_form(form: Form) -> bool:
    kinds = tuple(op.kind for op in form.operands)
    if form.opcode in ("txq", "suq"):
        return kinds in (("d", "T"), ("d", "U"))
    if form.opcode not in ("tex", "tld4") or kinds[:1] != ("v4",) or len(kinds) < 2 or kinds[1][0] != "t":
        return False
    return len([m for m in form.modifiers if m in TEX_GEOMETRY]) == 1 and \
        all(k == "r" for k in kinds[2:]) and len(form.types) == 2


def texture_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 89):
    """(PTX text, input rows, output slots, a function making the bound objects)."""
    from ptx2sass.emu.textures import Surface, Texture
    nprng = np.random.default_rng(rng.getrandbits(32))
    head = f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
    prologue = (".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
                ".reg .b64 %rdi, %rdo, %rdt;\n.reg .b32 %tx, %c<4>, %v<4>, %lod;\n.reg .f32 %f<4>;\n"
                "ld.param.u64 %rdo, [out];\nld.param.u64 %rdi, [in];\nmov.u32 %tx, %tid.x;\n"
                f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};\nadd.s64 %rdi, %rdi, %rdt;\n"
                f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};\nadd.s64 %rdo, %rdo, %rdt;\n")
    data = np.zeros((THREADS, IN_SLOTS), dtype=np.uint64)
    if form.opcode in ("txq", "suq"):
        surface = form.opcode == "suq"
        decl = ".global .surfref surf0;\n" if surface else ".global .texref tex0;\n"
        text = (head + decl + prologue + f"{form.spelling} %v0, [{'surf0' if surface else 'tex0'}];\n"
                "st.global.b32 [%rdo], %v0;\nret;\n}\n")
        initial = nprng.integers(0, 2**32, size=(SLICES, ROWS, 16, 4), dtype=np.uint64).astype(np.uint32)

        def objects() -> dict:
            if surface:
                return {"surf0": Surface(initial.copy(), "a2d")}
            return {"tex0": Texture(initial.astype(np.float32), "a2d")}
        return text, data, OUT_SLOTS, objects
    geometry = TEX_GEOMETRY[next(m for m in form.modifiers if m in TEX_GEOMETRY)]
    result, ctype = form.types
    shape = TEX_SHAPES[geometry]
    if result == ".f32":
        texels = nprng.integers(-64, 64, size=shape + (4,)).astype(np.float32)
    else:
        texels = nprng.integers(0, 2**32, size=shape + (4,), dtype=np.uint64).astype(
            np.uint32 if result == ".u32" else np.uint32).view(np.int32 if result == ".s32" else np.uint32)
    layered = geometry in ("a1d", "a2d", "acube")
    spatial = {"1d": 1, "2d": 2, "3d": 3, "a1d": 1, "a2d": 2, "cube": 3, "acube": 3}[geometry]
    sizes = shape[::-1][:spatial] if not geometry.endswith("cube") else (1.0,) * 3
    layers = shape[0] // (6 if geometry == "acube" else 1) if layered else 0
    nvec = int(form.operands[1].kind[1:])
    floats = ctype == ".f32"
    for t in range(THREADS):
        row = []
        if layered:
            row.append(int(nprng.integers(0, layers + 1)))
        for n in sizes:
            if geometry.endswith("cube"):
                v = float(np.round(nprng.uniform(-1, 1) * 64) / 64)
            elif floats:
                v = float(np.round(nprng.uniform(-1, n + 1) * 64) / 64)
            else:
                v = int(nprng.integers(-1, n + 1))
            row.append(v)
        for k, v in enumerate(row):
            is_float = floats and not (layered and k == 0)
            data[t, k] = int(np.float32(v).view(np.uint32)) if is_float else v & 0xFFFFFFFF
        data[t, 4] = int(np.float32(nprng.integers(0, 3)).view(np.uint32))      # a level of detail
    regs = []
    for k in range(nvec):
        is_float = floats and not (layered and k == 0)
        regs.append(f"%f{k}" if is_float else f"%c{k}")
    loads = [f"ld.global.b32 {r}, [%rdi+{8 * k}];" for k, r in enumerate(regs)]
    extra = ""
    if len(form.operands) > 2:
        loads.append("ld.global.b32 %lod, [%rdi+32];")
        extra = ", %lod"
    text = (head + ".global .texref tex0;\n" + prologue + "\n".join(loads) + f"\n{form.spelling} {{%v0, %v1, %v2, %v3}}, [tex0, {{{', '.join(regs)}}}]{extra};\n"
            + "\n".join(f"st.global.b32 [%rdo+{8 * k}], %v{k};" for k in range(4)) + "\nret;\n}\n")

    def objects() -> dict:
        return {"tex0": Texture(texels.copy(), geometry)}
    return text, data, OUT_SLOTS, objects
