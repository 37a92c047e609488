"""Instruction selection for textures and surfaces, as ptxas 13.5 writes them for sm_8x.

A handle is a 64-bit register (the `.B` forms, its low word an operand) or a module
`.texref`/`.surfref` variable (the bound forms `…, 0x0, slot`: the kernel's constant-bank-0
slot, `ptx2sass.variables.handle_slots`; in independent mode a texture and its sampler share
one), or a kernel parameter's own slot (`ld.param.u64` of a handle). On sm_90+ every
instruction names its handle in a uniform register (`Target.texture_slot_handles` False):
the slot's word loaded by ULDC, a texture's pair with URZ above it (`TEX … UR6, 0x0, 2D`;
sm_100+ without the `0x0`), a handle read from a uniform address by one R2UR, and any
other per-lane handle through ptxas's R2UR loop over the lanes' distinct values.

* `suld.b` → `SULD.D.BA.<geometry>[.size].STRONG.SM[.TRAP|.IGN] R, [coords], handle`
* `sust.b` / `sust.p` → `SUST.D.BA…` / `SUST.P…[.R]` `[coords], data, handle`
* `sured.b` → `SURED.D.BA.<geometry>.<op>[.type].STRONG.SYS[.TRAP|.IGN] [coords], data, handle`
* `suq`/`txq` width/height/depth → `TXQ[.B] RZ, R, {[handle,] level 0}, TEX_HEADER_DIMENSION, mask`
* the other `txq`/`suq` fields → `LDG.E.CONSTANT` of a word of the driver's descriptor
  table (`descriptor_query`)
* `tex` → `TEX[.SCR][.B].LL` (lod -32.0 without `.level`), `TLD[.SCR][.B].LZ` (integer
  coordinates), `TXD[.B]` (`.grad`); `tld4` → `TLD4[.SCR].<R|G|B|A>[.B]`: results in two
  register pairs (a component mask when the code reads fewer than four), sources in two
  register groups (`texture_sources`); cube coordinates scaled by 1/max|component|.

Surface coordinates sit in one aligned register group in ptxas's order (x[, y[, z]], then
the array index: `a1d {i, x}` → (x, i), `a2d {i, x, y, _}` → (x, y, i)). Sub-word vectors
are one access of the whole width, split afterwards (`suld.b.v4.b8` → a 32-bit SULD), as
ptxas does. `tex.grad` on 3d/cube runs once per quad lane with the quad's coordinates
built from the gradients (`quad_gradient_texture`).
`istypep` tests the handle's kind bit."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ptx2sass import ir
from ptx2sass.errors import CompileError
from ptx2sass.encoder.model import ConstRef, Imm, Reg, SpecialReg
from ptx2sass.isel.common import NOT_PT, PT, RZ, URZ, _bits
from ptx2sass.mir import IMPLICIT_DEF, VMem, VOp
from ptx2sass.variables import handle_key

# PTX geometry -> (SASS geometry token, PTX coordinate index of each register in the group,
# group width)
SURFACE_GEOMETRY = {
    "1d": ("1D", (0,), 1),
    "2d": ("2D", (0, 1), 2),
    "3d": ("3D", (0, 1, 2), 4),
    "a1d": ("1D_ARRAY", (1, 0), 2),
    "a2d": ("2D_ARRAY", (1, 2, 0), 4),
}
CLAMP = {"trap": ("TRAP",), "clamp": (), "zero": ("IGN",)}
ACCESS_SIZE = {8: ("U8",), 16: ("U16",), 32: (), 64: ("64",), 128: ("128",)}
SURED_OP = {"add": "ADD", "min": "MIN", "max": "MAX", "and": "AND", "or": "OR", "xor": "XOR",
            "inc": "INC", "dec": "DEC", "exch": "EXCH"}
SURED_TYPE = {"u32": (), "b32": (), "s32": ("S32",), "u64": ("U64",), "b64": ("U64",),
              "s64": ("S64",)}
# tex/tld4 geometry -> (SASS geometry, whether the first PTX coordinate is an array index,
# the coordinates after it). A 1D sample is a 2D one at y = 0 (ptxas); a texel fetch
# (integer coordinates, TLD) stays 1D.
TEXTURE_GEOMETRY = {
    "1d": ("2D", False, 1), "2d": ("2D", False, 2), "3d": ("3D", False, 3),
    "a1d": ("ARRAY_1D", True, 1), "a2d": ("ARRAY_2D", True, 2),
    "cube": ("CUBE", False, 3), "acube": ("ARRAY_CUBE", True, 3),
}
CUBES = ("cube", "acube")   # direction vectors: ptxas divides them by their largest |component|
FETCH_GEOMETRY = {"1D": "1D"}           # TLD's own spelling where it differs from TEX's
GATHER_COMPONENT = {"r": "R", "g": "G", "b": "B", "a": "A"}
LOD_NONE = Imm(0xc2000000)              # -32.0: the level ptxas passes to TEX.LL without .level
ARRAY_INDEX_LIMIT = Imm(0xffff)         # ptxas clamps an array index to 16 bits (IMNMX.U32)
# istypep: the bit of a 64-bit handle that marks its kind (ptxas tests the high word)
HANDLE_KIND_BIT = {"texref": 0x20000000, "samplerref": 0x40000000, "surfref": 0x80000000}
# txq/suq queries answered by the texture header's dimensions, and the component mask
HEADER_DIMENSION = {"width": 0x1, "height": 0x2, "depth": 0x4}
# the other queries: the field's byte offset in the driver's per-handle descriptor (read off
# ptxas 13.5's sm_75/80/89/90 code), and the constant-bank-0 word holding the table's
# address (`Target.driver_cbank`)
DESCRIPTOR_FIELDS = {
    "txq": {"normalized_coords": 0x1c, "channel_data_type": 0x20, "channel_order": 0x24,
            "array_size": 0x28, "num_mipmap_levels": 0x2c, "num_samples": 0x30},
    "suq": {"channel_data_type": 0xc, "channel_order": 0x10, "memory_layout": 0x14,
            "array_size": 0x1c},
}
DESCRIPTOR_TABLE = {"txq": "texture_descriptors", "suq": "surface_descriptors"}
# sm_90+: the uniform registers a handle is named in (a texture's pair: the low word, URZ)
HANDLE_UR, HANDLE_HI_UR = Reg("UR", 6), Reg("UR", 7)


# a `.B` instruction (the handle's low word in a register) per PTX opcode, to ask the
# target's table whether it has such forms at all (sm_75's has only the bound ones)
REGISTER_HANDLE_PROBES = {
    "suld": "SULD.D.BA.1D.STRONG.SM.TRAP R0, [R2], R4",
    "sust": "SUST.D.BA.1D.STRONG.SM.TRAP [R2], R0, R4",
    "sured": "SURED.D.BA.1D.ADD.STRONG.SYS.TRAP [R2], R0, R4",
    "suq": "TXQ.B RZ, R0, R4, TEX_HEADER_DIMENSION, 0x1",
    "txq": "TXQ.B RZ, R0, R4, TEX_HEADER_DIMENSION, 0x1",
}


@functools.lru_cache(maxsize=None)
def _register_handle_encodable(arch: str, opcode: str) -> bool:
    """Whether `arch`'s table encodes `opcode`'s `.B` form (True where no probe is known)."""
    from ptx2sass.encoder import codec
    text = REGISTER_HANDLE_PROBES.get(opcode)
    if text is None:
        return True
    try:
        codec.encode_text(text, arch)
    except codec.EncodeError:
        return False
    return True


# a surface or texture instruction on a handle named by a uniform register alone (sm_100+), to
# ask the target's table whether it encodes a modifier combination (the blackwell table lacks
# SUST.P, the 3D/2D_ARRAY surface accesses without a clamp suffix and TEX.LL; a texture's
# geometry is an operand)
UNIFORM_HANDLE_OPERANDS = {"SULD": "R0, [R2], UR4", "SUST": "[R2], R0, UR4", "SURED": "[R2], R0, UR4",
                           "TEX": "R0, R2, R4, R6, UR4, {}, 0x1"}


@functools.lru_cache(maxsize=None)
def _uniform_handle_encodable(arch: str, opcode: str, mods: tuple, geometry: str = "") -> bool:
    """Whether `arch`'s table encodes `opcode.mods` with a uniform-register handle."""
    from ptx2sass.encoder import codec
    try:
        codec.encode_text(f"{'.'.join((opcode,) + mods)} {UNIFORM_HANDLE_OPERANDS[opcode].format(geometry)}", arch)
    except codec.EncodeError:
        return False
    return True


@dataclass
class Handle:
    """How an instruction names its handle: `register`, a source register holding the low
    word (the `.B` forms), and/or `operands` after the sources (`0x0, slot`; `UR6, 0x0`;
    `UR6`); `lane`: the per-lane low word the instruction loops over (R2UR into UR6)."""
    register: list
    operands: list
    lane: VOp | None = None


class TextureSelection:
    def require_unit(self, ins: ir.Instr, opcode: str) -> None:
        """Refuse at the line where the target's encoding table has no such instruction yet."""
        from ptx2sass.encoder import codec
        if not self.arch.texture_unit or not codec.table_for(self.arch.name).forms_of(opcode, self.arch.name):
            raise self.unsupported(f"`{ins.opcode}` on {self.arch.name}")

    def surface_parts(self, ins: ir.Instr):
        """(handle, SASS geometry, coordinate group, clamp modifiers) of a surface access."""
        self.require_unit(ins, {"suld": "SULD", "sust": "SUST"}.get(ins.opcode, "SURED"))
        n = ins.attrs.get("coords", 0)
        handle, coords = ins.srcs[0], ins.srcs[1:1 + n]
        geo = next((m for m in ins.modifiers if m in SURFACE_GEOMETRY), None)
        clamp = next((m for m in ins.modifiers if m in CLAMP), None)
        if geo is None or clamp is None or "b" not in ins.modifiers[:1] and "p" not in ins.modifiers[:1]:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}`")
        name, order, width = SURFACE_GEOMETRY[geo]
        if len(coords) < len(order):
            raise self.unsupported(f"`{ins.opcode}` with {len(coords)} coordinates")
        return self.handle_word(ins, handle, pair=False), name, self.coordinate_group(
            [coords[k] for k in order], width), CLAMP[clamp]

    def handle_word(self, ins: ir.Instr, handle, pair: bool = True, bank: bool | None = None) -> Handle:
        """The handle's operands: the 64-bit handle's low word in a register (`.B` forms),
        or, for a module `.texref`/`.surfref` variable, the bound form's bank 0 and the
        kernel's constant-bank slot (its byte offset / 4) as two immediates; on sm_90+ a
        uniform register (`pair`: a texture's UR pair; `bank`: with the `0x0` after it)."""
        slot = None
        if isinstance(handle, ir.Symbol):
            p = self.placements.get(handle_key(handle.name, ins.attrs.get("sampler")))
            if p is None or p.space not in ("texref", "surfref", "samplerref"):
                raise self.unsupported(f"`{ins.opcode}` of `{handle.name}`")
            slot = self.arch.param_base + p.value
        elif not isinstance(handle, ir.Value) or _bits(handle.type) != 64:
            raise self.unsupported(f"`{ins.opcode}` with this handle")
        else:
            low = (self.param_values.get(handle.id) or [None])[0]
            if isinstance(low, ConstRef) and low.bank == 0 and low.ureg is None and not low.offset % 4:
                slot = low.offset                   # a kernel parameter: its own slot
        if self.arch.texture_slot_handles:
            if slot is None:
                if not _register_handle_encodable(self.arch.name, ins.opcode):
                    raise self.unsupported(f"`{ins.opcode}` with a handle in a register on {self.arch.name}")
                return Handle([self.reg_part(handle, 0)], [])
            return Handle([], [Imm(0), Imm(slot // 4)])
        if pair:
            self.emit("UMOV", (), [HANDLE_HI_UR, URZ], guarded=False)
        ops = [HANDLE_UR] + [Imm(0)] * (self.arch.texture_handle_bank if bank is None else bank)
        if slot is not None:
            self.emit("ULDC", (), [HANDLE_UR, ConstRef(0, slot)], guarded=False)
        elif handle.id in self.uniform_handles():
            # the same in every lane (a load from a uniform address, as ptxas judges it)
            self.emit("R2UR", (), [HANDLE_UR, self.reg_part(handle, 0)], guarded=False)
        else:
            return Handle([], ops, self.reg_part(handle, 0))
        return Handle([], ops)

    def uniform_handles(self) -> set[int]:
        """Ids of the 64-bit values the same in every lane, loads from uniform global or
        shared addresses included (ptxas moves such a handle with one R2UR, no loop)."""
        if getattr(self, "_uniform_handles", None) is None:
            from ptx2sass.divergence import divergent_values
            divergent = divergent_values(self.fn, loads_by_address=True)
            self._uniform_handles = {v.id for b in self.fn.blocks for ins in b.instrs
                                     for v in ins.dests if v.id not in divergent}
        return self._uniform_handles

    def emit_handled(self, handle: Handle, body) -> None:
        """`body()` emits the instruction: once, or in the R2UR loop of a per-lane handle."""
        if handle.lane is None:
            body()
        else:
            self.uniform_loop_values([(handle.lane, HANDLE_UR)], body)

    def coordinate_group(self, values, width: int) -> VOp:
        if width == 1:
            return self.reg_part(values[0])
        group = VOp(self.mf.new_vreg("R", width))
        self.emit(IMPLICIT_DEF, (), [group], guarded=False)
        for k, v in enumerate(values):
            if not (isinstance(v, ir.Value) and v.id in self.undefined):
                self.move(VOp(group.reg, k), self.part_of(v, 0))
        return group

    def emit_surface(self, opcode: str, mods, ops: list, ndefs: int, coords: VOp, handle: Handle):
        """The instruction, with the whole coordinate group as a hidden read (the address
        prints its first register only)."""
        if not self.arch.texture_handle_bank and not _uniform_handle_encodable(self.arch.name, opcode, tuple(mods)):
            raise self.unsupported(f"`{'.'.join((opcode,) + tuple(mods))}` on {self.arch.name}")
        ops = ops + handle.register + handle.operands

        def body():
            mi = self.emit(opcode, mods, ops + [coords], ndefs=ndefs)
            mi.shown = tuple(range(len(ops)))
        self.emit_handled(handle, body)

    def sel_suld(self, ins: ir.Instr) -> None:
        handle, geo, coords, clamp = self.surface_parts(ins)
        bits = _bits(ins.type)
        total = bits * len(ins.dests)
        if total not in ACCESS_SIZE:
            raise self.unsupported(f"`suld` of {len(ins.dests)} x {ins.type}")
        words = max(1, total // 32)
        t = self.mf.new_vreg("R", words)
        mods = ("D", "BA", geo) + ACCESS_SIZE[total] + ("STRONG", "SM") + clamp
        self.emit_surface("SULD", mods, [VOp(t), VMem(coords, 0, wide=False)], 1, coords, handle)
        whole = VOp(t)
        if bits >= 32:
            per = bits // 32
            for k, d in enumerate(ins.dests):
                if per == 1:
                    self.copy_reg(VOp(self.vreg(d)), VOp(t, k) if words > 1 else whole)
                else:
                    for w in range(per):
                        self.copy_reg(VOp(self.vreg(d), w), VOp(t, k * per + w))
            return
        if len(ins.dests) == 1:
            self.copy_reg(VOp(self.vreg(ins.dests[0])), whole)
            return
        for k, d in enumerate(ins.dests):
            bit = k * bits
            word = VOp(t, bit // 32) if words > 1 else whole
            self.extract_field(d, word, (bit % 32) // 8, bits, d.type)

    def surface_data(self, values, ty: str) -> tuple[VOp, int]:
        """The data registers of a store (one aligned group) and the access's total bits."""
        bits = _bits(ty)
        total = bits * len(values)
        if total not in ACCESS_SIZE:
            raise self.unsupported(f"`sust` of {len(values)} x {ty}")
        if total <= 32 and len(values) == 1:
            return self.reg_part(values[0]), total
        return self.data_words(values, bits), total

    def sel_sust(self, ins: ir.Instr) -> None:
        handle, geo, coords, clamp = self.surface_parts(ins)
        data, total = self.surface_data(ins.srcs[1 + ins.attrs["coords"]:], ins.type)
        if "p" in ins.modifiers[:1]:
            # formatted store: four components, or the red one alone (`.R`)
            components = {128: (), 32: ("R",)}.get(total)
            if components is None or ins.type != "b32":
                raise self.unsupported(f"`sust.p` of {total // 32} x {ins.type}")
            mods = ("P", geo, "STRONG", "SM") + components + clamp
        else:
            mods = ("D", "BA", geo) + ACCESS_SIZE[total] + ("STRONG", "SM") + clamp
        self.emit_surface("SUST", mods, [VMem(coords, 0, wide=False), data], 0, coords, handle)

    def sel_sured(self, ins: ir.Instr) -> None:
        handle, geo, coords, clamp = self.surface_parts(ins)
        op = next((m for m in ins.modifiers if m in SURED_OP), None)
        if geo not in ("1D", "2D", "3D") or op is None or ins.type not in SURED_TYPE \
                or "p" in ins.modifiers[:1]:
            raise self.unsupported(f"`sured.{'.'.join(ins.modifiers)}.{ins.type}`")
        types = SURED_TYPE[ins.type] if op in ("min", "max") or _bits(ins.type) == 64 else ()
        data, _ = self.surface_data(ins.srcs[1 + ins.attrs["coords"]:], ins.type)
        mods = ("D", "BA", geo, SURED_OP[op]) + types + ("STRONG", "SYS") + clamp
        self.emit_surface("SURED", mods, [VMem(coords, 0, wide=False), data], 0, coords, handle)

    # ------------------------------------------------------------------ texture fetches
    def texture_sources(self, values: list) -> tuple[list, tuple[str, ...]]:
        """The two source register groups (Ra, Rb) of a TEX/TLD/TLD4 and its `.SCR` token:
        up to four 32-bit values go two and two (`.SCR`; the first group takes the odd one
        of three, a lone pair one each); more go coordinates in Ra, the rest in Rb, as do
        all of them on sm_90+ (ptxas writes no `.SCR` with a uniform-register handle).
        `values`: (coordinate values, the rest), in ptxas's order."""
        coords, rest = values
        allv = coords + rest
        if len(allv) <= 4 and self.arch.texture_slot_handles:
            split = (len(allv) + 1) // 2
            groups, scr = [allv[:split], allv[split:]], ("SCR",)
        else:
            groups, scr = [coords, rest], ()
        return [self.value_group(g) for g in groups if g], scr

    def value_group(self, values: list):
        """One source register (one value) or an aligned group holding the values in order."""
        if len(values) == 1:
            v = values[0]
            if isinstance(v, VOp):
                return v
            if isinstance(v, Imm):
                r = VOp(self.mf.new_vreg("R"))
                self.move(r, v)
                return r
            return self.reg_part(v)
        group = VOp(self.mf.new_vreg("R", 4 if len(values) == 3 else len(values)))
        self.emit(IMPLICIT_DEF, (), [group], guarded=False)
        for k, v in enumerate(values):
            if isinstance(v, ir.Value) and v.id in self.undefined:
                continue
            self.move(VOp(group.reg, k), v if isinstance(v, (VOp, Imm)) or v is RZ else self.part_of(v, 0))
        return group

    def texture_results(self, ins: ir.Instr):
        """The vector's four results (the instruction writes them in two pairs)."""
        if len(ins.dests) != 4 or "v4" not in ins.modifiers:
            raise self.unsupported(f"`{ins.opcode}` of {len(ins.dests)} results")
        return None, None

    def read_values(self) -> set[int]:
        """Ids of the values some instruction or phi of the function reads."""
        if getattr(self, "_read_values", None) is None:
            from ptx2sass.opt.uses import use_counts
            self._read_values = {v for v, n in use_counts(self.fn).items() if n}
        return self._read_values

    def finish_texture(self, ins: ir.Instr, opcode: str, mods, lo, hi, sources, handle,
                       geometry: str) -> None:
        """The instruction with its results: the components the code reads (all four, or
        those of a component mask, as ptxas drops the others) packed in order into a pair
        and a second pair (RZ when two or fewer)."""
        read = self.read_values()
        used = [k for k, d in enumerate(ins.dests) if d.id in read]
        if opcode == "TLD4" or not used or len(used) == 4:
            used, mask = [0, 1, 2, 3], []
        else:
            mask = [Imm(sum(1 << k for k in used))]
        lo = VOp(self.mf.new_vreg("R", min(2, len(used))))
        hi = VOp(self.mf.new_vreg("R", len(used) - 2)) if len(used) > 2 else RZ
        self.emit_handled(handle, lambda: self.emit(
            opcode, mods, [hi, lo, *sources, *handle.operands, SpecialReg(geometry), *mask], ndefs=2))
        for at, k in enumerate(used):
            group = lo if at < 2 else hi
            width = min(2, len(used)) if at < 2 else len(used) - 2
            self.copy_reg(VOp(self.vreg(ins.dests[k])), VOp(group.reg, at % 2) if width > 1 else group)

    def texture_coordinates(self, ins: ir.Instr, geo: str, fetch: bool, index_first: bool = True):
        """(SASS geometry, coordinate values in ptxas's order: the clamped array index
        first (last for TXD), then x[, y[, z]])."""
        name, array, n = TEXTURE_GEOMETRY[geo]
        coords = ins.srcs[1:1 + ins.attrs.get("coords", 0)]
        if len(coords) < n + array:
            raise self.unsupported(f"`{ins.opcode}` with {len(coords)} coordinates")
        values = list(coords[array:array + n])
        if geo in CUBES:
            values = self.cube_direction(values)
        if geo == "1d" and not fetch:
            values.append(RZ)
        if array:
            index = VOp(self.mf.new_vreg("R"))
            self.emit("IMNMX", ("U32",), [index, self.reg_part(coords[0]), ARRAY_INDEX_LIMIT, PT])
            values.insert(0 if index_first else len(values), index)
        if fetch and geo == "1d":
            name = "1D"
        return name, values

    def cube_direction(self, values: list) -> list[VOp]:
        """x, y, z scaled by 1 / max(|x|, |y|, |z|) (FMNMX, MUFU.RCP, FMUL), as ptxas does."""
        x, y, z = (v if isinstance(v, VOp) else self.reg_part(v) for v in values)
        m, r = VOp(self.mf.new_vreg("R")), VOp(self.mf.new_vreg("R"))
        self.emit("FMNMX", (), [m, replace(x, abs=True), replace(y, abs=True), NOT_PT])
        self.emit("FMNMX", (), [m, replace(z, abs=True), m, NOT_PT])
        self.emit("MUFU", ("RCP",), [r, m])
        out = []
        for v in (x, y, z):
            d = VOp(self.mf.new_vreg("R"))
            self.emit("FMUL", (), [d, v, r])
            out.append(d)
        return out

    def sel_tex(self, ins: ir.Instr) -> None:
        self.require_unit(ins, "TEX")
        geo = next((m for m in ins.modifiers if m in TEXTURE_GEOMETRY), None)
        mode = next((m for m in ins.modifiers if m in ("level", "grad")), None)
        ctype = ins.types[0] if ins.types else "f32"
        if geo is None or len(ins.srcs) < 1 + ins.attrs.get("coords", 0):
            raise self.unsupported(f"`tex.{'.'.join(ins.modifiers)}`")
        fetch = ctype in ("s32", "u32")
        if fetch and mode == "grad":
            raise self.unsupported(f"`tex.{'.'.join(ins.modifiers)}.{ins.type}.{ctype}`")
        handle = self.handle_word(ins, ins.srcs[0])
        if mode == "grad" and geo in ("3d",) + CUBES:
            self.quad_gradient_texture(ins, geo, handle)
            return
        lo, hi = self.texture_results(ins)
        name, coords = self.texture_coordinates(ins, geo, fetch, index_first=mode != "grad")
        extra = ins.srcs[1 + ins.attrs["coords"]:]
        reg_handle = handle.register
        if mode == "grad":
            # TXD: Ra = [handle,] coordinates[, array index]; Rb = the gradients, x and y
            # interleaved (a 1D one as 2D's, the y gradients 0)
            dx, dy = extra[:len(extra) // 2], extra[len(extra) // 2:]
            grads = [v for pair in zip(dx, dy) for v in pair] + [RZ, RZ] * (geo == "1d")
            sources = [self.value_group([*reg_handle, *coords]), self.value_group(grads)]
            self.finish_texture(ins, "TXD", ("B",) if reg_handle else (), lo, hi, sources, handle, name)
            return
        if fetch:
            # `.level`: TLD.LL.CL with the level after the handle (ptxas), else level zero
            lod = extra[:1] if mode == "level" else []
            sources, scr = self.texture_sources((coords, [*reg_handle, *lod]))
            mods = ("SCR",) * bool(scr) + ("B",) * bool(reg_handle) + (("LL", "CL") if lod else ("LZ",))
            self.finish_texture(ins, "TLD", mods, lo, hi, sources, handle, FETCH_GEOMETRY.get(name, name))
            return
        lod = [LOD_NONE] if mode is None and self.arch.texture_explicit_lod else extra[:1]
        sources, scr = self.texture_sources((coords, [*reg_handle, *lod]))
        mods = scr + ("B",) * bool(reg_handle) + ("LL",) * bool(lod)
        if lod and not self.arch.texture_handle_bank and not _uniform_handle_encodable(self.arch.name, "TEX", mods, name):
            raise self.unsupported(f"`tex.{'.'.join(ins.modifiers)}` on {self.arch.name}")
        self.finish_texture(ins, "TEX", mods, lo, hi, sources, handle, name)

    QUAD_LANES = 0x1c03                 # SHFL.IDX within the lane's quad
    QUAD_BARRIER = Reg("B", 15)         # ptxas keeps the active mask there meanwhile
    # FSWZADD signs (Ra, Rb) per quad lane: c, c+dx, c, c+dx, then + dy in lanes 2 and 3
    WITH_DX, WITH_DY = SpecialReg("ZPPPZPPP"), SpecialReg("ZPZPPPPP")

    def quad_gradient_texture(self, ins: ir.Instr, geo: str, handle: Handle) -> None:
        """`tex.grad` on 3d/cube (TXD takes 1D/2D gradients only), as ptxas 13.5 writes it
        for sm_8x: once for each lane j of a quad, the quad made whole (BMOV.32 B15,
        MACTIVE; BMOV.32.PQUAD MACTIVE, B15: helper lanes), lane j's coordinates and
        gradients to every lane of its quad (SHFL.IDX j), the quad's coordinates c, c+dx,
        c+dy, c+dx+dy (FSWZADD.NDV; cube directions scaled afterwards), TEX.SCR.NDV (the
        level of detail from those derivatives), its result read in quad lane 0 (SHFL.IDX 0;
        for j = 0 lane 0's own), the active lanes back (BMOV.32 MACTIVE, B15) and
        `MOV d, r, 1 << j`, which writes lane j of each quad alone. With a handle in a
        register (TEX.SCR.B.NDV) lane j's handle is shuffled too, and a step runs only
        where lane j of the quad is active (VOTE.ANY >> (laneid & 0x1c), a branch around
        it), as ptxas does. An array cube's layer goes first, lane j's too. Refused on the
        targets without texture slots (sm_90+: ptxas calls a driver routine there)."""
        if not self.arch.texture_slot_handles:
            # ptxas 13.5 calls __cuda_syscall_tex_grad_<geo>_<v4>_<d>_<c> there (CALL.ABS.NOINC
            # through a `.nv.constant4` R_CUDA_64 slot; handle R4:R5, coordinates R8.., dPdx
            # R12.., dPdy on the stack): a routine of the driver the emulator cannot run
            raise CompileError(f"`tex.grad.{geo}` on {self.arch.name}: ptxas calls a driver routine "
                               f"(__cuda_syscall_tex_grad_{geo}_...) that ptx2sass does not generate",
                               self.file, self.line)
        if handle.lane is not None:
            raise self.unsupported(f"`tex.grad.{geo}` on {self.arch.name}")
        self.texture_results(ins)
        present = self.quad_lanes_present() if handle.register else None
        name, array, _ = TEXTURE_GEOMETRY[geo]
        coords = [self.reg_part(v) for v in ins.srcs[1 + array:4 + array]]
        layer = None
        if array:           # the clamped layer, lane j's (quad lane 0 reads its own for j = 0)
            layer = VOp(self.mf.new_vreg("R"))
            self.emit("IMNMX", ("U32",), [layer, self.reg_part(ins.srcs[1]), ARRAY_INDEX_LIMIT, PT])
        extra = ins.srcs[1 + ins.attrs["coords"]:]
        half = len(extra) // 2
        dx, dy = [self.reg_part(v) for v in extra[:3]], [self.reg_part(v) for v in extra[half:half + 3]]
        result = VOp(self.mf.new_vreg("R", 4))
        self.emit(IMPLICIT_DEF, (), [result], guarded=False)
        for j in range(4):
            skip = None
            if present is not None:
                bit, p = VOp(self.mf.new_vreg("R")), VOp(self.mf.new_vreg("P"))
                self.emit("LOP3", ("LUT",), [bit, present, Imm(1 << j), RZ, Imm(0xc0), NOT_PT])
                self.emit("ISETP", ("NE", "AND"), [p, PT, bit, RZ, PT], ndefs=2)
                skip = self.flow_block("quad")
                self.flow_goto(skip, when=replace(p, inv=True))
            self.emit("BMOV", ("32",), [self.QUAD_BARRIER, SpecialReg("MACTIVE")], ndefs=0)
            self.emit("BMOV", ("32", "PQUAD"), [SpecialReg("MACTIVE"), self.QUAD_BARRIER], ndefs=0)
            quad = []
            for c, gx, gy in zip(coords, dx, dy):
                c, gx, gy = (self.from_quad_lane(v, j) for v in (c, gx, gy))
                t = VOp(self.mf.new_vreg("R"))
                self.emit("FSWZADD", ("NDV",), [t, gx, c, self.WITH_DX])
                u = VOp(self.mf.new_vreg("R"))
                self.emit("FSWZADD", ("NDV",), [u, gy, t, self.WITH_DY])
                quad.append(u)
            if geo in CUBES:
                quad = self.cube_direction(quad)
            if layer is not None:
                quad.insert(0, self.from_quad_lane(layer, j) if j else layer)
            own = [self.from_quad_lane(handle.register[0], j)] if handle.register else []
            sources, scr = self.texture_sources((quad, own))
            lo, hi = VOp(self.mf.new_vreg("R", 2)), VOp(self.mf.new_vreg("R", 2))
            self.emit("TEX", scr + ("B",) * bool(own) + ("NDV",),
                      [hi, lo, *sources, *handle.operands, SpecialReg(name)], ndefs=2)
            parts = [VOp(lo.reg, 0), VOp(lo.reg, 1), VOp(hi.reg, 0), VOp(hi.reg, 1)]
            if j:
                parts = [self.from_quad_lane(v, 0) for v in parts]
            self.emit("BMOV", ("32",), [SpecialReg("MACTIVE"), self.QUAD_BARRIER], ndefs=0)
            for k, v in enumerate(parts):
                # the other lanes keep their value: a hidden read of it
                mi = self.emit("MOV", (), [VOp(result.reg, k), v, Imm(1 << j), VOp(result.reg, k)])
                mi.shown = (0, 1, 2)
            if skip is not None:
                self.flow_enter(skip)
        for k, d in enumerate(ins.dests):
            self.copy_reg(VOp(self.vreg(d)), VOp(result.reg, k))

    def quad_lanes_present(self) -> VOp:
        """The active lanes of this lane's quad, as bits 0..3."""
        lane, came, shift, bits = (VOp(self.mf.new_vreg("R")) for _ in range(4))
        self.emit("S2R", (), [lane, SpecialReg("SR_LANEID")])
        self.emit("VOTE", ("ANY",), [came, PT, PT], ndefs=2)
        self.emit("LOP3", ("LUT",), [shift, lane, Imm(0x1c), RZ, Imm(0xc0), NOT_PT])
        self.emit("SHF", ("R", "U32", "HI"), [bits, RZ, shift, came])
        return bits

    def from_quad_lane(self, v: VOp, lane: int) -> VOp:
        """SHFL.IDX of `v` from lane `lane` of this lane's quad."""
        d = VOp(self.mf.new_vreg("R"))
        self.emit("SHFL", ("IDX",), [PT, d, v, Imm(lane) if lane else RZ, Imm(self.QUAD_LANES)], ndefs=2)
        return d

    def sel_tld4(self, ins: ir.Instr) -> None:
        self.require_unit(ins, "TLD4")
        geo = next((m for m in ins.modifiers if m in TEXTURE_GEOMETRY), None)
        comp = next((m for m in ins.modifiers if m in GATHER_COMPONENT), None)
        if geo not in ("2d", "a2d") + CUBES or comp is None or len(ins.srcs) != 1 + ins.attrs.get("coords", 0):
            raise self.unsupported(f"`tld4.{'.'.join(ins.modifiers)}`")
        handle = self.handle_word(ins, ins.srcs[0])
        lo, hi = self.texture_results(ins)
        name, coords = self.texture_coordinates(ins, geo, True)
        reg_handle = handle.register
        sources, scr = self.texture_sources((coords, reg_handle))
        mods = scr + (GATHER_COMPONENT[comp],) + ("B",) * bool(reg_handle)
        self.finish_texture(ins, "TLD4", mods, lo, hi, sources, handle, name)

    def sel_istypep(self, ins: ir.Instr) -> None:
        """p = the handle's kind bit is set (LOP3 of the high word, then a compare)."""
        kind = next((m for m in ins.modifiers if m in HANDLE_KIND_BIT), None)
        if kind is None or not isinstance(ins.srcs[0], ir.Value):
            raise self.unsupported(f"`istypep.{'.'.join(ins.modifiers)}`")
        bit = Imm(HANDLE_KIND_BIT[kind])
        t = VOp(self.mf.new_vreg("R"))
        self.emit("LOP3", ("LUT",), [t, self.reg_part(ins.srcs[0], 1), bit, RZ, Imm(0xc0), NOT_PT])
        self.emit("ISETP", ("EQ", "U32", "AND"), [VOp(self.vreg(ins.dests[0])), PT, t, bit, PT], ndefs=2)

    def sel_suq(self, ins: ir.Instr) -> None:
        self.header_query(ins)

    def sel_txq(self, ins: ir.Instr) -> None:
        self.header_query(ins)

    QUERY_HANDLE = {"txq": "texref", "suq": "surfref"}

    def header_query(self, ins: ir.Instr) -> None:
        handle = ins.srcs[0]
        if isinstance(handle, ir.Symbol):
            p = self.placements.get(handle_key(handle.name, None))
            if p is not None and p.space in ("texref", "surfref", "samplerref") and \
                    p.space != self.QUERY_HANDLE[ins.opcode]:
                raise CompileError(f"Argument 1 of instruction '{ins.opcode}': "
                                   f".{self.QUERY_HANDLE[ins.opcode]} or .u64 register expected",
                                   self.file, self.line)
        query = next((m for m in ins.modifiers if m in HEADER_DIMENSION), None)
        if query is None and not ins.attrs.get("coords") and "level" not in ins.modifiers:
            field = next((m for m in ins.modifiers if m in DESCRIPTOR_FIELDS[ins.opcode]), None)
            if field is not None:
                return self.descriptor_query(ins, DESCRIPTOR_FIELDS[ins.opcode][field])
        if query is None or "level" in ins.modifiers or ins.attrs.get("coords"):
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}`")
        self.require_unit(ins, "TXQ")
        handle = self.handle_word(ins, ins.srcs[0], bank=True)
        query_ops = [SpecialReg("TEX_HEADER_DIMENSION")]
        if not handle.register:                     # bound: the mip level 0 alone
            level = VOp(self.mf.new_vreg("R"))
            self.move(level, RZ)
            self.emit_handled(handle, lambda: self.emit(
                "TXQ", (), [RZ, VOp(self.vreg(ins.dests[0])), level, *query_ops, *handle.operands,
                            Imm(HEADER_DIMENSION[query])], ndefs=2))
            return
        pair = VOp(self.mf.new_vreg("R", 2))       # {handle, mip level 0}
        self.emit(IMPLICIT_DEF, (), [pair], guarded=False)
        self.move(VOp(pair.reg, 0), handle.register[0])
        self.move(VOp(pair.reg, 1), RZ)
        self.emit("TXQ", ("B",), [RZ, VOp(self.vreg(ins.dests[0])), pair, *query_ops,
                                  Imm(HEADER_DIMENSION[query])], ndefs=2)

    def descriptor_query(self, ins: ir.Instr, field: int) -> None:
        """A header field other than the dimensions, as ptxas reads it: the word at
        table + index x descriptor size + field, the table's address the driver's bank-0
        word, the size the loader's weak symbol (a relocated immediate), the index the
        handle's low word (masked to 20 bits where the target does)."""
        from ptx2sass.encoder.model import Reloc
        from ptx2sass.variables import DESCRIPTOR_SIZE_SYMBOLS
        table = dict(self.arch.driver_cbank or ()).get(DESCRIPTOR_TABLE[ins.opcode])
        if table is None or not self.arch.texture_unit:
            raise self.unsupported(f"`{ins.opcode}.{'.'.join(ins.modifiers)}` on {self.arch.name}")
        handle = ins.srcs[0]
        if isinstance(handle, ir.Symbol):
            p = self.placements.get(handle_key(handle.name, None))
            if p is None or p.space != self.QUERY_HANDLE[ins.opcode]:
                raise self.unsupported(f"`{ins.opcode}` of `{handle.name}`")
            word = ConstRef(0, self.arch.param_base + p.value)
        elif isinstance(handle, ir.Value) and _bits(handle.type) == 64:
            word = self.reg_part(handle, 0)
        else:
            raise self.unsupported(f"`{ins.opcode}` with this handle")
        # the index and the size once per handle and block, as ptxas (unguarded: a guarded
        # definition would leave them undefined on the other lanes)
        key = ("descriptor", id(self.current), ins.opcode, repr(word))
        if self.guard is not None or key not in self.const_regs:
            index, size = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            mask = self.arch.descriptor_index_mask
            if mask is None:
                self.emit("MOV", (), [index, word], guarded=False)
            else:
                self.emit("LOP3", ("LUT",), [index, word, Imm(mask), RZ, Imm(0xc0), NOT_PT],
                          guarded=False)
            self.emit("MOV", (), [size, Reloc("abs", DESCRIPTOR_SIZE_SYMBOLS[ins.opcode])],
                      guarded=False)
            if self.guard is None:
                self.const_regs[key] = (index, size)
        else:
            index, size = self.const_regs[key]
        offset = VOp(self.mf.new_vreg())
        self.emit("IMAD", (), [offset, index, size, Imm(field)])
        at = self.new_pair()
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(at.reg, 0), carry, offset, ConstRef(0, table), RZ], ndefs=2)
        self.emit("IADD3", ("X",), [VOp(at.reg, 1), RZ, ConstRef(0, table + 4), RZ, carry, NOT_PT])
        self.emit("LDG", ("E", "CONSTANT"), [VOp(self.vreg(ins.dests[0])), VMem(at)])
