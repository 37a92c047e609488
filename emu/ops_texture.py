"""The texture unit: TEX, TLD, TLD4, TXD, TXQ and the surface instructions SULD, SUST,
SURED, SUATOM, over the objects a launch binds (emu.textures, which also says what a
handle is).

Operand layout (sm_8x, as ptxas and ptx2sass.isel.texture write them): a texture fetch
writes its results in two register pairs, printed high pair first (`TEX hi, lo, Ra, Rb`):
the components of the optional mask (all four without one) packed in order, two in `lo`,
the rest in `hi`. Its sources are one list of 32-bit values in ptxas's order: the array
index, x[, y[, z]], then the handle (`.B` forms), then the level (`.LL`/`.LB`); with `.SCR`
the first half (rounded up) sits in Ra's group and the rest in Rb's, else the coordinates
in Ra and the rest in Rb. TXD: Ra = [handle,] coordinates[, array index], Rb the gradients.
The bound forms end in `0x0, slot`: the handle is c[0x0][4 * slot] (sm_90: `URn, 0x0`, the
handle in a uniform register; sm_100+: `URn` alone, but for TXQ). `.AOFFI` adds one last
source value, texel offsets of 4 bits each.
"""
from __future__ import annotations

import numpy as np

from ptx2sass.encoder.model import Imm, Mem, Reg, SpecialReg

from . import textures as T
from .errors import EmuFault
from .lanes import reg
from .registry import semantics

U32 = np.uint32
# SASS geometry -> (array index first, coordinates)
TEX_GEOMETRY = {"1D": (False, 1), "2D": (False, 2), "3D": (False, 3), "CUBE": (False, 3),
                "ARRAY_1D": (True, 1), "ARRAY_2D": (True, 2), "ARRAY_3D": (True, 3),
                "ARRAY_CUBE": (True, 3)}
SURFACE_GEOMETRY = {"1D": 1, "2D": 2, "3D": 3, "1D_ARRAY": 2, "2D_ARRAY": 3}
GATHER = {"R": 0, "G": 1, "B": 2, "A": 3}


def _bindings(w) -> T.Bindings:
    b = getattr(w.launch, "bindings", None)
    if b is None:
        raise EmuFault("a texture/surface instruction, but the launch binds no textures or surfaces")
    return b


def _parts(ins):
    """(registers before the handle immediates, bound slot or None, geometry, mask or None)."""
    ops = list(ins.operands)
    geo = next((o.name for o in ops if isinstance(o, SpecialReg)), None)
    at = next((k for k, o in enumerate(ops) if isinstance(o, SpecialReg)), len(ops))
    before, after = ops[:at], ops[at + 1:]
    slot = None
    if len(before) >= 2 and isinstance(before[-1], Imm) and isinstance(before[-2], Imm):
        slot = before[-1].value
        before = before[:-2]
    elif len(before) >= 2 and isinstance(before[-1], Imm) and isinstance(before[-2], Reg) \
            and before[-2].file == "UR":
        slot = before[-2]           # sm_90: the handle in a uniform register, `UR4, 0x0`
        before = before[:-2]
    elif before and isinstance(before[-1], Reg) and before[-1].file == "UR":
        _one_uniform(ins, before)
        slot = before[-1]           # sm_100+: `UR4` alone
        before = before[:-1]
    mask = after[-1].value if after and isinstance(after[-1], Imm) else None
    return before, slot, geo, mask


def _one_uniform(ins, operands) -> None:
    """Fault on a second uniform register after the handle (sm_120's bits 48-55 when not URZ:
    `TEX ..., UR4, UR6, 2D`, `SULD ... [R8], UR4, UR6`): ptxas 13.5 writes none, sm_100/103/110's
    nvdisasm prints none, and what the unit reads from it is not known; the handle alone was
    taken before, so the second register was silently dropped (or taken as the handle)."""
    urs = [o for o in operands if isinstance(o, Reg) and o.file == "UR"]
    if len(urs) > 1:
        raise EmuFault(f"{ins.mnemonic}: a second uniform register ({urs[1].file}{urs[1].index}) "
                       "after the handle is not modelled")


def _group(w, op, count: int) -> list[np.ndarray]:
    """`count` consecutive registers from `op` (zeros from RZ), each (width,)."""
    if count == 0:
        return []
    if not isinstance(op, Reg) or op.is_zero:
        return [np.zeros(w.width, U32)] * count
    return [np.broadcast_to(w.r(reg(op.file, op.index + k)), (w.width,)) for k in range(count)]


def _slot_handle(w, slot) -> np.ndarray:
    """The handle of a bound form: c[0x0][4 * slot], or sm_90's uniform register."""
    if isinstance(slot, Reg):
        return np.broadcast_to(w.r(slot), (w.width,))
    return np.full(w.width, w.launch.const.read(0, 4 * slot, 4), dtype=U32)


def _write_results(w, hi, lo, words: np.ndarray, mask_bits, mask) -> None:
    """words: (width, 4) uint32; the masked components packed into lo then hi."""
    used = [k for k in range(4) if mask_bits is None or mask_bits >> k & 1]
    for at, k in enumerate(used):
        dst = lo if at < 2 else hi
        if isinstance(dst, Reg) and not dst.is_zero:
            w.w(reg("R", dst.index + at % 2), words[:, k], mask)


def _f32(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v, dtype=U32).view(np.float32)


def _nibble(v: int) -> int:
    """A 4-bit signed texel offset (`.AOFFI`: x, y, z in bits 0-3, 4-7, 8-11 of the last
    source value; ptxas folds `tex` of `{x - 3, y - 3}` into offsets 0xdd)."""
    v &= 0xF
    return v - 16 if v & 8 else v


def _component_and_bindless(ins) -> tuple[int, bool]:
    """TLD4's gathered component and whether the handle is in a register: TLD4 spells the
    component first (`TLD4.SCR.B.B`: blue, bindless), every other opcode has `.B` alone."""
    mods = [m for m in ins.modifiers if m != "SCR"]
    if ins.opcode == "TLD4" and mods and mods[0] in GATHER:
        return GATHER[mods[0]], "B" in mods[1:]
    return 0, "B" in mods


@semantics("TEX", "TLD", "TLD4", "TXD", vector=True)
def op_texture(w, s, active, mask):
    ins = s.ins
    regs, slot, geo, mask_bits = _parts(ins)
    if geo not in TEX_GEOMETRY or len(regs) not in (3, 4):
        raise EmuFault(f"{ins.opcode} form not modelled: {ins.modifiers} {geo}")
    hi, lo, ra, rb = regs if len(regs) == 4 else (*regs, None)     # one source value: no Rb
    mods = set(ins.modifiers)
    array, n = TEX_GEOMETRY[geo]
    comp, bindless = _component_and_bindless(ins)
    ncoord = n + array
    offsets = None
    if ins.opcode == "TXD":
        a = _group(w, ra, bindless + ncoord)
        handle = a[0] if bindless else _slot_handle(w, slot)
        coords = a[bindless:bindless + n]
        index = a[bindless + n] if array else None
    else:
        rest = bindless + (1 if ({"LL", "LB"} & mods) else 0) + ("AOFFI" in mods)
        total = ncoord + rest
        split = (total + 1) // 2 if "SCR" in mods else ncoord
        values = _group(w, ra, split) + _group(w, rb, total - split)
        index = values[0] if array else None
        coords = values[array:ncoord]
        handle = values[ncoord] if bindless else _slot_handle(w, slot)
        if "AOFFI" in mods:
            offsets = values[-1]
    bindings = _bindings(w)
    fetch = ins.opcode == "TLD"
    words = np.zeros((w.width, 4), dtype=U32)
    for lane in np.flatnonzero(mask):
        tex = bindings.lookup(int(handle[lane]), T.Texture)
        layer = int(index[lane]) if index is not None else 0
        shift = [0, 0, 0] if offsets is None else [_nibble(int(offsets[lane]) >> (4 * k)) for k in range(3)]
        if fetch:
            c = [int(np.int32(U32(v[lane]))) + shift[k] for k, v in enumerate(coords)]
            out = T.fetch(tex, c, layer)
        else:
            c = [T.finite(float(_f32(v[lane:lane + 1])[0])) for v in coords]
            if tex.geometry == "1d":
                c = c[:1]
            if offsets is not None:
                c = T.offset_coordinates(tex, c, shift)
            out = T.gather(tex, c, comp, layer) if ins.opcode == "TLD4" else T.sample(tex, c, layer)
        words[lane] = T.result_words(out)
    _write_results(w, hi, lo, words, mask_bits, mask)


@semantics("TXQ", vector=True)
def op_txq(w, s, active, mask):
    ins = s.ins
    regs, _, query, _ = _parts(ins)
    tail = ins.operands[len(regs) + 1:]      # [0x0, slot | UR, 0x0,] mask
    slot = tail[0] if tail and isinstance(tail[0], Reg) else \
        tail[1].value if len(tail) == 3 else None
    mask_bits = tail[-1].value if tail else None
    if query != "TEX_HEADER_DIMENSION" or len(regs) != 3:
        raise EmuFault(f"TXQ {query} not modelled")
    hi, lo, ra = regs
    if "B" in ins.modifiers:
        handle = _group(w, ra, 2)[0]
    else:
        handle = _slot_handle(w, slot)
        _group(w, ra, 1)                   # the level (one level: unused)
    bindings = _bindings(w)
    words = np.zeros((w.width, 4), dtype=U32)
    for lane in np.flatnonzero(mask):
        obj = bindings.lookup(int(handle[lane]), (T.Texture, T.Surface))
        words[lane] = T.dimensions(obj)
    _write_results(w, hi, lo, words, mask_bits, mask)


# ---------------------------------------------------------------- surfaces
_ACCESS = {"U8": 1, "U16": 2, "64": 8, "128": 16}
_CLAMP = {"TRAP": "trap", "IGN": "zero"}


def _surface_parts(w, ins, addr_at: int):
    """(coordinates x, y, z/layer per lane, the operands after the address, clamp mode,
    whether x counts bytes)."""
    ops = list(ins.operands)
    geo = next(m for m in ins.modifiers if m in SURFACE_GEOMETRY)
    mem = ops[addr_at]
    if not isinstance(mem, Mem):
        raise EmuFault(f"{ins.opcode}: no coordinate address")
    tail = ops[addr_at + 1:]
    count = SURFACE_GEOMETRY[geo]
    coords = _group(w, mem.base, count)
    # x, y[, z]; arrays end with the layer: (x, layer) / (x, y, layer)
    if geo == "1D_ARRAY":
        coords = [coords[0], np.zeros(w.width, U32), coords[1]]
    coords = coords + [np.zeros(w.width, U32)] * (3 - len(coords))
    return coords, tail, next((_CLAMP[m] for m in ins.modifiers if m in _CLAMP), "clamp"), \
        "BA" in ins.modifiers


def _handle_of(w, tail, ins) -> np.ndarray:
    """The handle operand after the data: `0x0, slot` or a register."""
    imms = [o for o in tail if isinstance(o, Imm)]
    if len(imms) >= 2:
        return _slot_handle(w, imms[-1].value)
    _one_uniform(ins, tail)
    r = next(o for o in tail if isinstance(o, Reg))
    return np.broadcast_to(w.r(r), (w.width,))


def _access_size(ins, surf: T.Surface) -> int:
    if "P" in ins.modifiers:
        return surf.sample_bytes
    return next((_ACCESS[m] for m in ins.modifiers if m in _ACCESS), 4)


def _location(surf, coords, lane, size, byte_x, clamp):
    x, y, z = (int(np.int32(U32(c[lane]))) for c in coords)
    return T.surface_location(surf, x, y, z, size, byte_x, clamp)


@semantics("SULD", vector=True)
def op_suld(w, s, active, mask):
    ins = s.ins
    if "P" in ins.modifiers:
        raise EmuFault("SULD.P (formatted surface load) not modelled")
    coords, tail, clamp, byte_x = _surface_parts(w, ins, 1)
    handle = _handle_of(w, tail, ins)
    bindings = _bindings(w)
    dst = ins.operands[0]
    size = next((_ACCESS[m] for m in ins.modifiers if m in _ACCESS), 4)
    words = np.zeros((w.width, max(1, size // 4)), dtype=U32)
    for lane in np.flatnonzero(mask):
        surf = bindings.lookup(int(handle[lane]), T.Surface)
        raw = T.surface_read(surf, _location(surf, coords, lane, size, byte_x, clamp), size)
        if size < 4:
            words[lane, 0] = int.from_bytes(raw, "little")
        else:
            words[lane] = np.frombuffer(raw, U32)
    for k in range(words.shape[1]):
        w.w(reg(dst.file, dst.index + k), words[:, k], mask)


def _formatted(surf: T.Surface, words: list[int]) -> bytes:
    """sust.p: 32-bit components (R, G, B, A) converted to the sample's format: f32 data
    for float and normalized formats, integers (truncated to the width) otherwise."""
    dt = surf.data.dtype
    out = []
    for k in range(surf.channels):
        v = words[k] if k < len(words) else 0
        if dt.kind == "f":
            out.append(np.array([np.uint32(v).view(np.float32)]).astype(dt).tobytes())
        else:
            out.append((v & ((1 << 8 * dt.itemsize) - 1)).to_bytes(dt.itemsize, "little"))
    return b"".join(out)


@semantics("SUST", vector=True)
def op_sust(w, s, active, mask):
    ins = s.ins
    coords, tail, clamp, byte_x = _surface_parts(w, ins, 0)
    data_op = tail[0]
    handle = _handle_of(w, tail[1:], ins)
    bindings = _bindings(w)
    formatted = "P" in ins.modifiers
    nwords = (1 if "R" in ins.modifiers else 4) if formatted else \
        max(1, next((_ACCESS[m] for m in ins.modifiers if m in _ACCESS), 4) // 4)
    data = _group(w, data_op, nwords)
    for lane in np.flatnonzero(mask):
        surf = bindings.lookup(int(handle[lane]), T.Surface)
        size = _access_size(ins, surf)
        at = _location(surf, coords, lane, size, byte_x, clamp)
        vals = [int(d[lane]) for d in data]
        if formatted:
            raw = _formatted(surf, vals)
        else:
            raw = b"".join(v.to_bytes(4, "little") for v in vals)[:size] if size >= 4 else \
                (vals[0] & ((1 << 8 * size) - 1)).to_bytes(size, "little")
        T.surface_write(surf, at, raw)


_RED = {"ADD": lambda a, b: a + b, "MIN": min, "MAX": max, "AND": lambda a, b: a & b,
        "OR": lambda a, b: a | b, "XOR": lambda a, b: a ^ b, "EXCH": lambda a, b: b,
        "INC": lambda a, b: 0 if a >= b else a + 1,
        "DEC": lambda a, b: b if a == 0 or a > b else a - 1}


@semantics("SURED", "SUATOM", vector=True)
def op_sured(w, s, active, mask):
    """Surface reductions, lane by lane in lane order (an atomic per lane)."""
    ins = s.ins
    if "P" in ins.modifiers or "CAS" in ins.modifiers:
        raise EmuFault(f"{ins.opcode}.{'.'.join(ins.modifiers)} not modelled")
    dst = ins.operands[0] if ins.opcode == "SUATOM" else None
    coords, tail, clamp, byte_x = _surface_parts(w, ins, 1 if dst is not None else 0)
    op = next(m for m in ins.modifiers if m in _RED)
    wide = "U64" in ins.modifiers or "S64" in ins.modifiers or "64" in ins.modifiers
    signed = "S32" in ins.modifiers or "S64" in ins.modifiers
    size = 8 if wide else 4
    data = _group(w, tail[0], size // 4)
    handle = _handle_of(w, tail[1:], ins)
    bindings = _bindings(w)
    old = np.zeros((w.width, size // 4), dtype=U32)
    bits = 8 * size
    for lane in np.flatnonzero(mask):
        surf = bindings.lookup(int(handle[lane]), T.Surface)
        at = _location(surf, coords, lane, size, byte_x, clamp)
        if at is None:
            continue
        a = int.from_bytes(T.surface_read(surf, at, size), "little")
        b = sum(int(d[lane]) << (32 * k) for k, d in enumerate(data))
        if signed:
            a, b = (v - (1 << bits) if v >> (bits - 1) else v for v in (a, b))
        r = _RED[op](a, b) & ((1 << bits) - 1)
        old[lane] = np.frombuffer((a & ((1 << bits) - 1)).to_bytes(size, "little"), U32)
        T.surface_write(surf, at, r.to_bytes(size, "little"))
    if dst is not None and isinstance(dst, Reg):
        for k in range(old.shape[1]):
            w.w(reg(dst.file, dst.index + k), old[:, k], mask)
