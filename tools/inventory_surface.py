"""Value kernels of the per-form checker for surface instructions (`suld`, `sust`, `sured`
on the module `.surfref surf0`): a surface of the form's geometry (4 layers/slices of 8
rows of 2,048 bytes, random words) is bound for each run; every thread accesses its own
location (so the stores' outcome does not depend on the order the warps run in), the
clamp/zero forms with some threads out of range (sust.clamp excepted: clamped stores of
two threads would land on one sample), and the coordinates come in the thread's input
row. suld writes its registers out; after sust/sured the surface's bytes are compared.
The reference is ptxas's cubin in the same emulator (the texture unit's semantics are
emu/textures.py's, checked against NumPy models in tests/test_emu_texture.py)."""
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
