"""Texture and surface objects a launch binds, and what the texture unit does with them.

The driver's texture/surface header format is not public, so the emulator defines its own
handles, the same for ptxas's cubins and ours:

* every object bound for a launch gets an index, 1, 2, … in binding order (0: nothing);
* a module `.texref`/`.surfref` slot (the constant-bank word the cubin's
  R_CUDA_TEX/SURF_HEADER_INDEX relocation names) holds the index of the object bound to the
  variable's name;
* a bindless handle (a `.u64` kernel parameter) is the index in the low word with the kind
  bit that `istypep` tests in the high word (texref bit 61, surfref bit 63);
* an instruction's bound form `…, 0x0, slot` reads its handle from c[0x0][4 * slot], the
  `.B` forms from a register; both use the low word.

Sampling follows the CUDA Programming Guide's texture-fetching appendix: nearest-point
sampling takes texel floor(x); linear filtering takes xB = x - 0.5, i = floor(xB) and the
weight alpha = frac(xB) in 9-bit fixed point with 8 fractional bits (rounded to nearest:
the guide does not say how; not verified on hardware), blending neighbours in float32.
Address modes clamp, border (texels outside read the border colour, 0), and, with
normalized coordinates, wrap and mirror. Cube maps select the face by the major axis
(the guide's table) and sample that face with clamped coordinates. One mip level: a level
or gradient selects level 0. `tld4` returns one component of the four texels of the
bilinear footprint, counter-clockwise from the lower left: (i0, j1), (i1, j1), (i1, j0),
(i0, j0).

Surfaces are arrays of samples; `.b` accesses address x in bytes, `.p` (formatted) ones in
samples; out of range (by the sample the access starts in): `.trap` faults, `.clamp` uses
the nearest sample, `.zero` reads zero and drops stores (PTX ISA, suld/sust); bytes of an
access past the row's end read as zero (see surface_location).

txq/suq header fields other than the dimensions come from the driver's descriptor tables
(descriptor_table: their addresses in constant bank 0, the per-handle size a loader-defined
symbol): OpenCL's channel order/type values, array size, normalized coordinates, one mip
level and sample, linear surface layout, or what an object's `descriptor` sets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import EmuFault

# geometry -> (data axes before the channels, coordinate count, has layers)
GEOMETRIES = {"1d": (1, 1, False), "2d": (2, 2, False), "3d": (3, 3, False),
              "a1d": (2, 1, True), "a2d": (3, 2, True), "cube": (3, 3, False),
              "acube": (3, 3, True)}
ADDRESS_MODES = ("clamp", "wrap", "mirror", "border")
_SURFACE_ONLY = {np.dtype(np.uint64), np.dtype(np.int64)}     # 64-bit words (sured .u64)
KIND_BIT = {"texture": 1 << 61, "sampler": 1 << 62, "surface": 1 << 63}
_FORMATS = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                                  np.float16, np.float32)}


def _check_descriptor(values: dict, fields: dict) -> None:
    for name, value in values.items():
        if name not in fields or not isinstance(value, int) or not 0 <= value < 1 << 32:
            raise ValueError(f"descriptor field {name!r}={value!r}: one of {', '.join(fields)}, "
                             "a 32-bit unsigned value")


def _channels(data: np.ndarray, axes: int, channels: int | None) -> int:
    if channels is None:
        channels = data.shape[-1] if data.ndim == axes + 1 else 1
    if channels not in (1, 2, 4) or data.ndim not in (axes, axes + 1) or \
            (data.ndim == axes + 1 and data.shape[-1] != channels) or (data.ndim == axes and channels != 1):
        raise ValueError(f"data of shape {data.shape}: {axes} axes and 1, 2 or 4 channels expected")
    return channels


@dataclass(eq=False)
class Texture:
    """A texture object. `data`: the texels, axes (layers/faces, depth, height, width) as the
    geometry has them, then an optional channel axis of 1, 2 or 4 (cube maps: 6 faces first,
    cube arrays 6 * layers). `read_mode` "element" returns texels as they are (floats as
    f32, integers as 32-bit integers), "normalized_float" maps 8/16-bit integers to [0, 1]
    or [-1, 1]."""
    data: np.ndarray
    geometry: str = "2d"
    address: tuple = ("clamp", "clamp", "clamp")
    filter: str = "point"
    normalized: bool = False
    read_mode: str = "element"
    channels: int | None = None
    # txq header fields that differ from those the object implies (descriptor_fields)
    descriptor: dict = field(default_factory=dict)

    def __post_init__(self):
        _check_descriptor(self.descriptor, TEXTURE_FIELDS)
        if self.geometry not in GEOMETRIES:
            raise ValueError(f"geometry {self.geometry!r}: one of {', '.join(GEOMETRIES)}")
        self.data = np.ascontiguousarray(self.data)
        if self.data.dtype not in _FORMATS:
            raise ValueError(f"element type {self.data.dtype} not a texture format")
        axes = GEOMETRIES[self.geometry][0]
        self.channels = _channels(self.data, axes, self.channels)
        if isinstance(self.address, str):
            self.address = (self.address,) * 3
        self.address = tuple(self.address) + ("clamp",) * (3 - len(self.address))
        if any(a not in ADDRESS_MODES for a in self.address):
            raise ValueError(f"address modes {self.address}: each one of {', '.join(ADDRESS_MODES)}")
        if not self.normalized and self.geometry not in ("cube", "acube") and \
                any(a in ("wrap", "mirror") for a in self.address):
            raise ValueError("wrap and mirror need normalized coordinates (CUDA Programming Guide)")
        if self.filter not in ("point", "linear"):
            raise ValueError(f"filter {self.filter!r}: point or linear")
        if self.read_mode not in ("element", "normalized_float"):
            raise ValueError(f"read mode {self.read_mode!r}: element or normalized_float")
        kind = self.data.dtype.kind
        if self.filter == "linear" and kind in "iu" and self.read_mode == "element":
            raise ValueError("linear filtering of integer texels needs read_mode normalized_float")
        if self.read_mode == "normalized_float" and not (kind in "iu" and self.data.dtype.itemsize <= 2):
            raise ValueError("normalized_float reads 8- and 16-bit integer texels only")
        if self.geometry in ("cube", "acube") and (self.data.shape[0] % 6 or self.data.shape[1] != self.data.shape[2]):
            raise ValueError("a cube map has 6 square faces per layer")

    # ------------------------------------------------------------ shape
    @property
    def size(self) -> tuple[int, int, int]:
        """(width, height, depth) in texels; depth is the layer count of arrays."""
        s = self.data.shape
        g = self.geometry
        if g == "1d":
            return s[0], 1, 1
        if g == "2d":
            return s[1], s[0], 1
        if g == "3d":
            return s[2], s[1], s[0]
        if g == "a1d":
            return s[1], 1, s[0]
        if g == "a2d":
            return s[2], s[1], s[0]
        return s[2], s[1], s[0] // 6 if g == "acube" else 1

    def texel(self, layer: int, k: int, j: int, i: int) -> np.ndarray:
        """The 4 components (float64 or int64) of texel (i, j, k) of a layer; missing
        channels read 0, alpha 1."""
        g = self.geometry
        if g == "1d":
            v = self.data[i]
        elif g == "2d":
            v = self.data[j, i]
        elif g == "3d":
            v = self.data[k, j, i]
        elif g == "a1d":
            v = self.data[layer, i]
        else:
            v = self.data[layer, j, i]
        v = np.atleast_1d(v)
        if self.read_mode == "normalized_float":
            info = np.iinfo(self.data.dtype)
            v = np.maximum(v.astype(np.float64) / info.max, -1.0)
        elif self.data.dtype.kind == "f":
            v = v.astype(np.float32).astype(np.float64)
        else:
            v = v.astype(np.int64)
        out = np.zeros(4, dtype=v.dtype)
        out[:len(v)] = v
        if len(v) < 4:
            out[3] = 1
        return out


@dataclass(eq=False)
class Surface:
    """A surface object: `data` the samples (axes as a Texture's, then 1, 2 or 4 channels);
    kernels read and write it in place."""
    data: np.ndarray
    geometry: str = "2d"
    channels: int | None = None
    descriptor: dict = field(default_factory=dict)      # suq header fields, as a Texture's

    def __post_init__(self):
        _check_descriptor(self.descriptor, SURFACE_FIELDS)
        if self.geometry not in ("1d", "2d", "3d", "a1d", "a2d"):
            raise ValueError(f"surface geometry {self.geometry!r}: 1d, 2d, 3d, a1d or a2d")
        if not self.data.flags.c_contiguous:
            raise ValueError("surface data must be C-contiguous (it is written in place)")
        if self.data.dtype not in _FORMATS | _SURFACE_ONLY:
            raise ValueError(f"element type {self.data.dtype} not a surface format")
        self.channels = _channels(self.data, GEOMETRIES[self.geometry][0], self.channels)

    @property
    def sample_bytes(self) -> int:
        return self.data.dtype.itemsize * self.channels

    @property
    def size(self) -> tuple[int, int, int]:
        """(width in samples, height, depth or layers)."""
        return Texture.size.fget(self)

    def rows(self) -> np.ndarray:
        """The bytes as (layer/depth, row, bytes of a row)."""
        w, h, d = self.size
        return self.data.reshape(-1).view(np.uint8).reshape(d, h, w * self.sample_bytes)


@dataclass
class Bindings:
    """The objects of one launch: index -> object, module variable name -> index."""
    objects: list = field(default_factory=list)
    names: dict = field(default_factory=dict)

    def add(self, obj) -> int:
        for k, o in enumerate(self.objects):
            if o is obj:
                return k + 1
        self.objects.append(obj)
        return len(self.objects)

    def handle(self, obj) -> int:
        """The 64-bit bindless handle of `obj`."""
        kind = "surface" if isinstance(obj, Surface) else "texture"
        return KIND_BIT[kind] | self.add(obj)

    def lookup(self, handle: int, kind: type):
        index = int(handle) & 0xFFFFFFFF
        name = kind.__name__.lower() if isinstance(kind, type) else "texture or surface"
        if not 1 <= index <= len(self.objects):
            raise EmuFault(f"{name} handle {index:#x}: nothing bound there")
        obj = self.objects[index - 1]
        if not isinstance(obj, kind):
            raise EmuFault(f"handle {index:#x} is a {type(obj).__name__.lower()}, used as a {name}")
        return obj


# ---------------------------------------------------------------- texture sampling
def finite(x: float) -> float:
    """A coordinate as the unit takes it: NaN reads as 0 and infinities as +-2^30 (the
    emulator's choice: the guide leaves them open; a cube direction of (0, 0, 0) scaled by
    1/max|c| is NaN)."""
    if x != x:
        return 0.0
    return max(min(x, 2.0 ** 30), -2.0 ** 30)


def _address(i: int, n: int, mode: str) -> int | None:
    """A texel index mapped into [0, n) by the address mode; None: the border."""
    if 0 <= i < n:
        return i
    if mode == "border":
        return None
    if mode == "wrap":
        return i % n
    if mode == "mirror":
        p = i % (2 * n)
        return p if p < n else 2 * n - 1 - p
    return min(max(i, 0), n - 1)


def _unnormalize(x: float, n: int, mode: str, normalized: bool) -> float:
    if not normalized:
        return x
    if mode == "wrap":
        x = x - math.floor(x)
    elif mode == "mirror":
        t = x - 2 * math.floor(x / 2)
        x = t if t <= 1 else 2 - t
    return x * n


def _fixed_weight(f: float) -> float:
    """alpha in 1.8 fixed point (the guide's 9-bit format with 8 fractional bits)."""
    return math.floor(f * 256 + 0.5) / 256


def cube_face(x: float, y: float, z: float) -> tuple[int, float, float]:
    """(face, s, t) of a direction, s and t in [0, 1] (CUDA Programming Guide, cubemap fetch)."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, m, s, t = (0, ax, -z, -y) if x >= 0 else (1, ax, z, -y)
    elif ay >= az:
        face, m, s, t = (2, ay, x, z) if y >= 0 else (3, ay, x, -z)
    else:
        face, m, s, t = (4, az, x, -y) if z >= 0 else (5, az, -x, -y)
    if m == 0:
        return 0, 0.5, 0.5
    return face, (s / m + 1) / 2, (t / m + 1) / 2


def _footprint(tex: Texture, coords: list[float], dims: int, sizes, modes, normalized: bool):
    """Per axis: [(index or None, weight), …] of the texels a sample reads."""
    axes = []
    for a in range(dims):
        n, mode = sizes[a], modes[a]
        x = _unnormalize(coords[a], n, mode, normalized)
        if tex.filter == "point":
            axes.append([(_address(math.floor(x), n, mode), 1.0)])
        else:
            xb = x - 0.5
            i = math.floor(xb)
            alpha = _fixed_weight(xb - i)
            axes.append([(_address(i, n, mode), 1.0 - alpha), (_address(i + 1, n, mode), alpha)])
    return axes


def _surface_of(tex: Texture, coords: list[float], layer: int):
    """(dims, texel coordinates, sizes, address modes, normalized, layer) of a sample;
    cube maps resolve the face here."""
    w, h, d = tex.size
    g = tex.geometry
    if g in ("cube", "acube"):
        face, s, t = cube_face(*coords[:3])
        return 2, [s, t], (w, h), ("clamp", "clamp"), True, layer * 6 + face
    dims = GEOMETRIES[g][1]
    return dims, coords[:dims], (w, h, d)[:dims], tex.address[:dims], tex.normalized, layer


def _layer(tex: Texture, index: int) -> int:
    if not GEOMETRIES[tex.geometry][2]:
        return 0
    layers = tex.size[2]
    return min(max(int(index), 0), layers - 1)


def _read(tex: Texture, layer: int, idx: list) -> np.ndarray | None:
    if any(i is None for i in idx):
        return None
    i, j, k = (idx + [0, 0])[:3]
    return tex.texel(layer, k, j, i)


def sample(tex: Texture, coords: list[float], layer_index: int = 0) -> np.ndarray:
    """tex: the 4 components (float64, or int64 for integer texels read as elements)."""
    dims, c, sizes, modes, normalized, layer = _surface_of(tex, coords, _layer(tex, layer_index))
    axes = _footprint(tex, c, dims, sizes, modes, normalized)
    integer = tex.read_mode == "element" and tex.data.dtype.kind in "iu"
    total = np.zeros(4, dtype=np.int64 if integer else np.float64)
    for combo in _combinations(axes):
        weight = 1.0
        for _, wgt in combo:
            weight *= wgt
        v = _read(tex, layer, [i for i, _ in combo])
        if v is None:
            v = np.zeros(4, dtype=total.dtype)      # the border colour
        if integer:
            return v
        total = (np.float32(total) + np.float32(weight) * np.float32(v)).astype(np.float64) \
            if tex.filter == "linear" else v
    return total


def _combinations(axes):
    out = [[]]
    for choices in axes:
        out = [prev + [c] for prev in out for c in choices]
    return out


def gather(tex: Texture, coords: list[float], component: int, layer_index: int = 0) -> np.ndarray:
    """tld4: `component` of the 2x2 footprint's texels in the order (i0, j1), (i1, j1),
    (i1, j0), (i0, j0)."""
    dims, c, sizes, modes, normalized, layer = _surface_of(tex, coords, _layer(tex, layer_index))
    if dims != 2:
        raise EmuFault(f"tld4 of a {tex.geometry} texture")
    idx = []
    for a in range(2):
        x = _unnormalize(c[a], sizes[a], modes[a], normalized) - 0.5
        i = math.floor(x)
        idx.append((_address(i, sizes[a], modes[a]), _address(i + 1, sizes[a], modes[a])))
    (i0, i1), (j0, j1) = idx
    integer = tex.read_mode == "element" and tex.data.dtype.kind in "iu"
    out = np.zeros(4, dtype=np.int64 if integer else np.float64)
    for k, (i, j) in enumerate(((i0, j1), (i1, j1), (i1, j0), (i0, j0))):
        v = _read(tex, layer, [i, j])
        out[k] = 0 if v is None else v[component]
    return out


def fetch(tex: Texture, coords: list[int], layer_index: int = 0) -> np.ndarray:
    """tex with integer coordinates (TLD): texel (x, y, z) itself, no filtering; the
    address mode maps indices outside the texture (wrap/mirror on the texel index)."""
    layer = _layer(tex, layer_index)
    dims = GEOMETRIES[tex.geometry][1]
    sizes = tex.size[:dims]
    idx = [_address(int(coords[a]), sizes[a], tex.address[a]) for a in range(dims)]
    v = _read(tex, layer, idx)
    integer = tex.read_mode == "element" and tex.data.dtype.kind in "iu"
    return np.zeros(4, dtype=np.int64 if integer else np.float64) if v is None else v


def offset_coordinates(tex: Texture, coords: list[float], shift: list[int]) -> list[float]:
    """Float coordinates moved by whole texels (normalized ones by texels / size)."""
    sizes = tex.size
    return [c + (s / sizes[k] if tex.normalized else s) for k, (c, s) in enumerate(zip(coords, shift))]


def result_words(values: np.ndarray) -> list[int]:
    """The four 32-bit result registers: floats as f32 bits, integers as their low word."""
    if values.dtype.kind == "f":
        return [int(np.float32(v).view(np.uint32)) for v in values]
    return [int(v) & 0xFFFFFFFF for v in values]


def dimensions(obj) -> list[int]:
    """TXQ TEX_HEADER_DIMENSION: width, height, depth (layers of arrays), mip levels."""
    w, h, d = obj.size
    return [w, h, d, 1]


# ---------------------------------------------------------------- descriptor tables
# txq/suq fields other than the dimensions: ptxas's code reads them from a table of
# per-handle descriptors the driver keeps in global memory, at table + index x size + field
# (the table's address a constant-bank-0 word, `Target.driver_cbank` texture_descriptors /
# surface_descriptors; the size the loader's value of the weak symbols below, relocated
# into the code). The layout past the fields ptxas reads and the size are this model's.
DESCRIPTOR_BYTES = {".nv.unified.texrefDescSize": 0x40, ".nv.surfrefDescSize": 0x40}
DESCRIPTOR_SIZE = 0x40
TEXTURE_FIELDS = {"normalized_coords": 0x1c, "channel_data_type": 0x20, "channel_order": 0x24,
                  "array_size": 0x28, "num_mipmap_levels": 0x2c, "num_samples": 0x30}
SURFACE_FIELDS = {"channel_data_type": 0xc, "channel_order": 0x10, "memory_layout": 0x14,
                  "array_size": 0x1c}
# the values: OpenCL's cl_channel_order / cl_channel_type enumerations, which the PTX ISA
# names for txq/suq (64-bit surface words have none: 0)
CHANNEL_ORDER = {1: 0x10B0, 2: 0x10B2, 4: 0x10B5}          # CL_R, CL_RG, CL_RGBA
CHANNEL_TYPE = {  # dtype -> (element read, normalized_float read)
    "uint8": (0x10DA, 0x10D2), "int8": (0x10D7, 0x10D0), "uint16": (0x10DB, 0x10D3),
    "int16": (0x10D8, 0x10D1), "uint32": (0x10DC, 0x10DC), "int32": (0x10D9, 0x10D9),
    "float16": (0x10DD, 0x10DD), "float32": (0x10DE, 0x10DE)}


def descriptor_fields(obj) -> dict[str, int]:
    """The header fields txq (a Texture) or suq (a Surface) reads: channel type and order,
    array size (the layers of an array geometry, cubes of a cube array; 1 otherwise),
    normalized coordinates (1/0), one mip level, one sample, and a surface's memory layout
    (1: linear rows, as this model stores them); the object's `descriptor` overrides them."""
    w, h, d = obj.size
    layered = GEOMETRIES[obj.geometry][2]
    types = CHANNEL_TYPE.get(obj.data.dtype.name, (0, 0))
    out = {"channel_order": CHANNEL_ORDER[obj.channels], "array_size": d if layered else 1}
    if isinstance(obj, Surface):
        return {**out, "channel_data_type": types[0], "memory_layout": 1, **obj.descriptor}
    return {**out, "channel_data_type": types[obj.read_mode == "normalized_float"],
            "normalized_coords": int(obj.normalized), "num_mipmap_levels": 1, "num_samples": 1,
            **obj.descriptor}


def descriptor_table(objects: list, kind: type) -> bytes:
    """The driver's table for handles 0..len(objects): DESCRIPTOR_SIZE bytes each, the
    fields of the objects of `kind` at their offsets (index 0 and other kinds: zeros)."""
    fields = TEXTURE_FIELDS if kind is Texture else SURFACE_FIELDS
    table = bytearray(DESCRIPTOR_SIZE * (len(objects) + 1))
    for k, obj in enumerate(objects, 1):
        if isinstance(obj, kind):
            for name, value in descriptor_fields(obj).items():
                at = DESCRIPTOR_SIZE * k + fields[name]
                table[at:at + 4] = value.to_bytes(4, "little")
    return bytes(table)


# ---------------------------------------------------------------- surfaces
def surface_location(surf: Surface, x: int, y: int, z: int, size: int, byte_x: bool, clamp: str):
    """(layer/depth, row, byte offset, bytes inside the row) of an access of `size` bytes,
    or None where `.zero` drops it; `.trap` faults out of range. Range and clamping go by
    the sample the access starts in (x clamped to the nearest sample), and the bytes of a
    wider access past the row's end read as zero and are not stored: so an access keeps
    its first words when narrowed, as ptxas narrows an 8-byte `suld.b.v2.b32.clamp` of
    which one word is used to a 4-byte SULD (fuzz seed 59, --features int32,texture)."""
    w, h, d = surf.size
    sample = surf.sample_bytes
    row_bytes = w * sample
    bx = x if byte_x else x * sample
    dims = GEOMETRIES[surf.geometry][1]
    y = y if dims >= 2 else 0
    z = z if dims >= 3 or GEOMETRIES[surf.geometry][2] else 0
    inside = 0 <= bx < row_bytes and 0 <= y < h and 0 <= z < d
    if not inside:
        if clamp == "trap":
            raise EmuFault(f"surface access out of range: byte {bx} of row {y}, layer {z} "
                           f"({row_bytes} bytes x {h} rows x {d})")
        if clamp == "zero":
            return None
        bx = min(max(bx, 0), row_bytes - sample) // sample * sample
        y = min(max(y, 0), h - 1)
        z = min(max(z, 0), d - 1)
    if bx % min(size, sample):
        raise EmuFault(f"misaligned {size}-byte surface access at byte {bx}")
    return z, y, bx, min(size, row_bytes - bx)


def surface_read(surf: Surface, at, size: int) -> bytes:
    """The `size` bytes at a surface_location (zeros where None or past the row)."""
    if at is None:
        return bytes(size)
    z, y, bx, n = at
    return surf.rows()[z, y, bx:bx + n].tobytes() + bytes(size - n)


def surface_write(surf: Surface, at, raw: bytes) -> None:
    if at is None:
        return
    z, y, bx, n = at
    surf.rows()[z, y, bx:bx + n] = np.frombuffer(raw[:n], np.uint8)
